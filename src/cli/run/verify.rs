//! `baton run verify --queue NAME`: every item of a queue through the verify pipeline.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Mutex;

use super::VerifyArgs;
use crate::cli::Ctx;
use crate::cli::progress::Progress;
use baton_core::error::{Error, Result};
use baton_engine::cli_agents::CliAgents;
use baton_engine::events::{Reporter, RunEvent};
use baton_engine::journal::{Entry, Journal};
use baton_engine::lock;
use baton_engine::workflow::verify::backend::BackendKind;
use baton_engine::workflow::verify::queue::Queues;
use baton_engine::workflow::verify::{Engine, Options, pipeline};

/// A new run (or the continuation of the queue's unfinished one), or a run continued by id.
pub enum Start {
    Fresh(VerifyArgs),
    Resume(Journal),
}

pub fn run(ctx: &Ctx, start: Start) -> Result<ExitCode> {
    if ctx.project.config.queue.backend == BackendKind::Postgres {
        let q = match &start {
            Start::Fresh(a) => a.queue.clone(),
            Start::Resume(_) => "NAME".into(),
        };
        return Err(Error::invalid(
            "the queues are in PostgreSQL (`[queue] backend = \"postgres\"`): workers drain them, not `baton run verify`",
        )
        .hint(format!("start one or more workers: baton worker --queue {q}")));
    }
    let local = ctx.project.local_dir();
    let queues = Queues::new(&local);
    let journal = match start {
        Start::Resume(j) => Some(j),
        // `baton run verify --queue Q` again continues Q's unfinished run (a crash, a kill),
        // so one queue has one run to look at until it finishes.
        Start::Fresh(a) => match Journal::unfinished(&local, &["verify"], &a.queue) {
            Some(j) => {
                if !ctx.out.json {
                    let id = j
                        .started()
                        .map(|s| s.run_id.to_string())
                        .unwrap_or_default();
                    eprintln!("continuing the unfinished run {id} of this queue");
                }
                super::note_kept_options(&a.agent, None);
                Some(j)
            }
            None => {
                let opts = fresh(ctx, &a)?;
                return start_run(ctx, queues, opts, None);
            }
        },
    };
    let Some(j) = journal else {
        return Err(Error::internal("no journal for a continued verify run"));
    };
    if j.run_finished() {
        let id = j
            .started()
            .map(|s| s.run_id.to_string())
            .unwrap_or_default();
        return Err(Error::state(format!("run {id} already finished")).hint(
            "to work on the queue again: baton run verify --queue NAME (complete items are skipped)",
        ));
    }
    let opts: Options = j
        .started()
        .and_then(|s| serde_json::from_value(s.options.clone()).ok())
        .ok_or_else(|| {
            Error::corrupt(
                j.dir.join("events.jsonl"),
                Some(1),
                "does not start with a verify run_started",
            )
        })?;
    start_run(ctx, queues, opts, Some(j))
}

fn start_run(
    ctx: &Ctx,
    queues: Queues,
    opts: Options,
    journal: Option<Journal>,
) -> Result<ExitCode> {
    let local = ctx.project.local_dir();
    queues.load(&opts.queue)?;
    let pipeline = preflight(ctx, &opts)?;
    let _run_lock = queues.lock_run(&opts.queue)?;
    // Writes to the queue's files (items, states) a killed baton cut short.
    baton_core::fs::clear_cut_short_writes(&queues.queue_dir(&opts.queue), &ctx.project.dir);
    let resumed = journal.is_some();
    if let Some(j) = &journal {
        j.clean_up_after_a_killed_baton();
    }
    let journal = match journal {
        Some(j) => j,
        None => {
            let id = baton_core::ids::new_id();
            let first = Entry::RunStarted {
                run_id: id.clone(),
                workflow: "verify".into(),
                subjects: vec![opts.queue.clone()],
                options: serde_json::to_value(&opts).map_err(|e| Error::internal(e.to_string()))?,
            };
            Journal::start(&local, &id, first)?.0
        }
    };
    let run_id = journal
        .started()
        .map(|s| s.run_id.to_string())
        .unwrap_or_default();
    let progress = Progress::new(ctx.out.json, false);
    progress.report(&RunEvent::RunStarted {
        run_id: &run_id,
        workflow: "verify",
        subjects: std::slice::from_ref(&opts.queue),
        resumed,
    });
    let agents =
        CliAgents::new(&ctx.project.dir, opts.scenario.clone()).configured(&ctx.project.config);
    let opts_queue = opts.queue.clone();
    let mut engine = Engine {
        project_dir: ctx.project.dir.clone(),
        queues,
        pipeline,
        prompts_dir: local.join("prompts"),
        agents: &agents,
        opts,
        journal: Mutex::new(journal),
        run_id: run_id.clone(),
        reporter: &progress,
        complete: Default::default(),
        work_command: format!("baton run verify --queue {}", opts_queue),
    };
    let report = engine.run()?;
    let mut journal = lock(&engine.journal);
    journal.log(Entry::RunFinished {
        done: report.done,
        failed: report.failed,
        skipped: report.already_complete,
    })?;
    let run_dir = journal.dir_in(&ctx.project.dir);
    let html = crate::report::at_run_end(&journal.dir, None);
    drop(journal);
    progress.finish();
    let value = serde_json::json!({"run_id": run_id, "run_dir": run_dir, "report": report, "report_html": html});
    progress.report(&RunEvent::RunFinished {
        run_id: &run_id,
        result: if report.failed > 0 {
            "failed"
        } else {
            "completed"
        },
        next: None,
        summary: Some(&value),
    });
    // --json: the run_finished event above carried the report.
    let human = |w: &mut dyn Write| -> std::io::Result<()> {
        writeln!(
            w,
            "queue {}: {} complete, {} failed, {} already complete · {} agent calls · {} rotations",
            report.queue,
            report.done,
            report.failed,
            report.already_complete,
            report.agent_calls,
            report.rotations
        )?;
        for (item, why) in &report.failures {
            writeln!(w, "  {item} failed: {why}")?;
        }
        if report.failed > 0 {
            writeln!(
                w,
                "fix the cause, then rerun: baton run verify --queue {} (failed items resume at their failed phase)",
                report.queue
            )?;
        }
        writeln!(w, "run log: {run_dir} (events.jsonl, prompts/, logs/)")
    };
    if !ctx.out.json {
        human(&mut std::io::stdout().lock()).map_err(|e| Error::io("stdout", e))?;
        super::print_report(html.as_deref(), &ctx.project.dir);
    }
    Ok(if report.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Everything checked before a queue is worked on (`baton run verify`, `baton worker`): the
/// pipeline, its prompts and every role's agent. Returns the pipeline.
pub(crate) fn preflight(ctx: &Ctx, opts: &Options) -> Result<pipeline::Pipeline> {
    let local = ctx.project.local_dir();
    let (pipeline, _) = pipeline::load(&local.join("workflows"))?;
    let prompts = local.join("prompts");
    baton_engine::prompt::template("verify-reminder", &prompts)?;
    for ph in &pipeline.phases {
        baton_engine::prompt::template(&ph.template, &prompts)?;
        let who = baton_engine::definition::assign(
            &ph.role,
            opts.agent.as_ref(),
            &opts.roles,
            &pipeline.roles,
            &opts.default_agent,
        );
        baton_engine::cli_agents::runnable(&who, &ctx.project.config.agents)?;
    }
    Ok(pipeline)
}

pub(crate) fn fresh(ctx: &Ctx, a: &VerifyArgs) -> Result<Options> {
    let queue = a.queue.clone();
    let cfg = &ctx.project.config;
    let scenario = super::scenario(ctx, &a.agent)?;
    Ok(Options {
        queue,
        agent: a.agent.agent.clone(),
        default_agent: cfg.run.default_agent.clone(),
        roles: cfg.run.roles.clone(),
        scenario,
        config: cfg.verify.clone(),
    })
}
