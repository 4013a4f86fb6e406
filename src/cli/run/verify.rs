//! `baton run verify --queue NAME`: every item of a queue through the verify pipeline. The
//! run, from its checks to its journal's last record, is baton-engine's
//! (`workflow::verify::start`); this builds its options from the flags and renders the report.

use std::io::Write;
use std::process::ExitCode;

use super::VerifyArgs;
use crate::cli::Ctx;
use crate::cli::progress::Progress;
use crate::error::{Error, Result};
use baton_engine::events::{Reporter, RunEvent};
use baton_engine::journal::Journal;
use baton_engine::workflow::verify::Options;
use baton_engine::workflow::verify::start::{Start as EngineStart, VerifyOutcome, VerifyRun};

/// A new run (or the continuation of the queue's unfinished one), or a run continued by id.
pub enum Start {
    Fresh(VerifyArgs),
    Resume(Journal),
}

pub fn run(ctx: &Ctx, start: Start) -> Result<ExitCode> {
    let (start, given) = match start {
        Start::Resume(j) => (EngineStart::Resume(j), None),
        Start::Fresh(a) => (EngineStart::Fresh(Box::new(fresh(ctx, &a)?)), Some(a)),
    };
    let run = VerifyRun::prepare(&ctx.project, start)?;
    if let Some(a) = &given
        && run.continues_an_unfinished_run()
    {
        if !ctx.out.json {
            eprintln!(
                "continuing the unfinished run {} of this queue",
                run.run_id()
            );
        }
        super::note_kept_options(&a.agent, None);
    }
    let run_id = run.run_id().to_string();
    let progress = Progress::new(ctx.out.json, false);
    let notifier = crate::cli::notify::Notifier::new(&ctx.project);
    let outcome = run.run(
        &ctx.project,
        &crate::cli::notify::Notifying {
            inner: &progress,
            notifier: &notifier,
            run_id: &run_id,
        },
    );
    progress.finish();
    let VerifyOutcome {
        report,
        run_dir: dir,
        run_log: run_dir,
    } = match outcome {
        Ok(o) => o,
        Err(e) => {
            let resume = format!("baton run --resume {run_id}");
            notifier.stopped("run_paused", &run_id, &format!("paused: {e}"), &resume);
            return Err(e.into());
        }
    };
    let html = super::at_run_end(ctx, &dir, None);
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
    notifier.ended(
        &run_id,
        &format!(
            "run {run_id} ended: queue {}: {} complete, {} failed",
            report.queue, report.done, report.failed
        ),
        serde_json::json!({"queue": report.queue, "done": report.done, "failed": report.failed,
            "already_complete": report.already_complete, "report": html}),
    );
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
        writeln!(
            w,
            "run log: {} (events.jsonl, prompts/, logs/)",
            crate::cli::shown(&ctx.project.dir, &dir)
        )
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
        wait_for_quota: a.wait_for_quota || cfg.run.wait_for_quota,
    })
}
