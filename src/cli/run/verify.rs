//! `baton run verify --queue NAME`: every item of a queue through the verify pipeline.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Mutex;

use super::Args;
use crate::cli::Ctx;
use crate::error::{Error, Result};
use crate::run::cli_agents::CliAgents;
use crate::run::events::{Reporter, RunEvent};
use crate::run::journal::{Entry, Journal};
use crate::run::lock;
use crate::run::progress::Progress;
use crate::workflow::verify::queue::Queues;
use crate::workflow::verify::{Engine, Options, pipeline};

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    // The tokenizer's tables load while the queue is read.
    std::thread::spawn(|| crate::context::tokens::Encoding::O200kBase.count(""));
    let local = ctx.project.local_dir();
    let queues = Queues::new(&local);
    // `baton run verify --queue Q` again continues Q's unfinished run (a crash, a kill), so
    // one queue has one run to look at until it finishes.
    let continued = match (&a.resume, &a.queue) {
        (None, Some(q)) => Journal::unfinished(&local, &["verify"], q)
            .and_then(|j| j.started().map(|s| s.0.to_string())),
        _ => None,
    };
    if let Some(id) = &continued
        && !ctx.out.json
    {
        eprintln!("continuing the unfinished run {id} of this queue");
    }
    if a.resume.is_some() || continued.is_some() {
        super::note_kept_options(&a);
    }
    let (opts, journal) = match a.resume.as_ref().or(continued.as_ref()) {
        Some(id) => {
            let j = Journal::open(&local, id)?;
            if j.run_finished() {
                return Err(Error::state(format!("run {id} already finished")).hint(
                    "to work on the queue again: baton run verify --queue NAME (complete items are skipped)",
                ));
            }
            let opts: Options = j
                .started()
                .and_then(|s| serde_json::from_value(s.3.clone()).ok())
                .ok_or_else(|| {
                    Error::corrupt(
                        j.dir.join("events.jsonl"),
                        Some(1),
                        "does not start with a verify run_started",
                    )
                })?;
            (opts, Some(j))
        }
        None => (fresh(ctx, &a)?, None),
    };
    // Everything is checked before the run starts: the queue, the pipeline, its prompts and
    // agents, the lock.
    queues.load(&opts.queue)?;
    let (pipeline, _) = pipeline::load(&local.join("workflows"))?;
    let prompts = local.join("prompts");
    crate::run::prompt::template("verify-reminder", &prompts)?;
    for ph in &pipeline.phases {
        crate::run::prompt::template(&ph.template, &prompts)?;
        let who = crate::run::definition::assign(
            &ph.role,
            opts.agent.as_deref(),
            &opts.roles,
            &pipeline.roles,
            &opts.default_agent,
        );
        crate::run::cli_agents::check_agent(&who.agent)?;
    }
    let _run_lock = queues.lock_run(&opts.queue)?;
    let resumed = journal.is_some();
    let journal = match journal {
        Some(j) => j,
        None => {
            let id = crate::context::session::new_id();
            let mut j = Journal::create(&local, &id)?;
            j.log(Entry::RunStarted {
                run_id: id,
                workflow: "verify".into(),
                subjects: vec![opts.queue.clone()],
                options: serde_json::to_value(&opts).map_err(|e| Error::internal(e.to_string()))?,
            })?;
            j
        }
    };
    let run_id = journal
        .started()
        .map(|s| s.0.to_string())
        .unwrap_or_default();
    let progress = Progress::new(ctx.out.json, false);
    progress.report(&RunEvent::RunStarted {
        run_id: &run_id,
        workflow: "verify",
        subjects: std::slice::from_ref(&opts.queue),
        resumed,
    });
    let agents = CliAgents::new(&ctx.project.dir, opts.scenario.clone())
        .skip_permissions(ctx.project.config.run.skip_permissions);
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
    };
    let report = engine.run()?;
    let mut journal = lock(&engine.journal);
    journal.log(Entry::RunFinished {
        done: report.done,
        failed: report.failed,
        skipped: report.already_complete,
    })?;
    let run_dir = journal
        .dir
        .strip_prefix(&ctx.project.dir)
        .unwrap_or(&journal.dir)
        .display()
        .to_string();
    drop(journal);
    progress.finish();
    let value = serde_json::json!({"run_id": run_id, "run_dir": run_dir, "report": report});
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
    }
    Ok(if report.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn fresh(ctx: &Ctx, a: &Args) -> Result<Options> {
    let queue = a.queue.clone().ok_or_else(|| {
        Error::invalid("verify needs a queue: --queue NAME").hint(
            "create one with `baton queue add NAME ITEM…`, then `baton run verify --queue NAME`",
        )
    })?;
    if !a.epics.is_empty() {
        return Err(Error::invalid(format!(
            "verify takes its items from the queue, not the command line (got: {})",
            a.epics.join(" ")
        ))
        .hint(format!(
            "add them: baton queue add {queue} {}",
            a.epics.join(" ")
        )));
    }
    super::refuse_epic_flags(a, "verify")?;
    if a.parallel.is_some() || a.no_wait {
        return Err(Error::invalid(
            "verify runs one phase at a time and has no gates: no --parallel or --no-wait",
        ));
    }
    let cfg = &ctx.project.config;
    let scenario = super::scenario(ctx, a)?;
    Ok(Options {
        queue,
        agent: a.agent.clone(),
        default_agent: cfg.run.default_agent.clone(),
        roles: cfg.run.roles.clone(),
        scenario,
        config: cfg.verify.clone(),
    })
}
