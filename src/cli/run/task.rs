//! `baton run orchestrate|poc|graduate TASK`: a task of the store through its workflow. The
//! run, from its checks to its journal's last record, is baton-engine's
//! (`workflow::task::start`); this turns the flags into its start and renders the outcome.

use std::process::ExitCode;

use super::TaskArgs;
use crate::cli::Ctx;
use crate::cli::progress::Progress;
use crate::error::Result;
use baton_engine::definition::WorkflowKind;
use baton_engine::events::{Reporter, RunEvent};
use baton_engine::journal::Journal;
use baton_engine::workflow::task::Stop;
use baton_engine::workflow::task::start::{Fresh, Start as EngineStart, TaskOutcome, TaskRun};
use baton_store::metrics::human_ms;

/// A new run (or the continuation of the task's unfinished one), or a run continued by id.
pub enum Start {
    Fresh(WorkflowKind, TaskArgs),
    Resume { journal: Journal, no_wait: bool },
}

pub fn run(ctx: &Ctx, start: Start) -> Result<ExitCode> {
    let store = ctx.store();
    let (start, given) = match start {
        Start::Resume { journal, no_wait } => (EngineStart::Resume { journal, no_wait }, None),
        Start::Fresh(workflow, a) => {
            let fresh = Fresh {
                workflow,
                task: a.task.clone(),
                agent: a.agent.agent.clone(),
                parallel: a.parallel.unwrap_or(0) as usize,
                no_wait: a.no_wait,
                from_plan: a.from == Some(super::StartFrom::Plan),
                scenario: super::scenario(ctx, &a.agent)?,
                wait_for_quota: a.wait_for_quota || ctx.project.config.run.wait_for_quota,
            };
            (EngineStart::Fresh(fresh), Some(a))
        }
    };
    let run = TaskRun::prepare(&ctx.project, &store, start)?;
    if let Some(a) = &given
        && run.continues_an_unfinished_run()
    {
        super::note_kept_options(&a.agent, a.parallel);
    }
    let (run_id, workflow, slug) = (
        run.run_id().to_string(),
        run.workflow().to_string(),
        run.slug().to_string(),
    );
    let progress = Progress::new(ctx.out.json, false);
    let notifier = crate::cli::notify::Notifier::new(&ctx.project);
    let outcome = run.run(&ctx.project, &progress);
    let TaskOutcome {
        stop,
        manifest: m,
        agent_calls: calls,
        run_dir,
        project_dir,
    } = match outcome {
        Ok(o) => o,
        Err(e) => {
            progress.finish();
            let resume = format!("baton run --resume {run_id}");
            notifier.stopped("run_paused", &run_id, &format!("paused: {e}"), &resume);
            return Err(e.into());
        }
    };
    let project_dir = &project_dir;
    let rel = crate::cli::shown(project_dir, &run_dir);
    let (line, code) = match &stop {
        Stop::Completed => ("completed".to_string(), 0),
        Stop::Failed => ("failed".to_string(), 1),
        Stop::Shelved => (
            "shelved (baton task summary shows what was found)".to_string(),
            0,
        ),
        Stop::Cancelled => ("cancelled".to_string(), 0),
        Stop::Paused(why) => (
            format!(
                "paused: {why}\n  continue: baton resume --task {slug} --decision retry, then baton run {workflow} {slug}\n  give up:  baton resume --task {slug} --decision reject"
            ),
            1,
        ),
        Stop::Waiting(g) => (
            format!(
                "waiting at the {g} gate (--no-wait)\n  decide:   baton resume --task {slug} --decision {}\n  continue: baton run --resume {run_id}",
                baton_engine::workflow::task::gate_decisions(*g)
            ),
            0,
        ),
    };
    progress.finish();
    let report = super::at_run_end(ctx, &run_dir, Some(&store));
    let summary = serde_json::json!({"task": slug, "workflow": workflow, "status": m.status, "agent_calls": calls, "run_dir": rel, "report_html": report, "manifest": m});
    let result = match &stop {
        Stop::Completed => "completed",
        Stop::Failed => "failed",
        Stop::Shelved => "shelved",
        Stop::Cancelled => "cancelled",
        Stop::Paused(_) => "paused",
        Stop::Waiting(_) => "waiting",
    };
    let next = line
        .split_once('\n')
        .map(|(_, rest)| rest.trim().to_string());
    tell(
        &notifier,
        &stop,
        &run_id,
        &slug,
        next.as_deref().unwrap_or_default(),
        &summary,
    );
    progress.report(&RunEvent::RunFinished {
        run_id: &run_id,
        result,
        next: next.as_deref(),
        summary: Some(&summary),
    });
    if !ctx.out.json {
        crate::outln!(
            "task {slug}: {line}\n  {} phases · {} busy · {} saved by parallel waves · {calls} agent calls\n  run log: {rel}",
            m.completed_phases.len(),
            human_ms(m.metrics.total_duration_ms.unwrap_or(0)),
            human_ms(m.metrics.parallelization_savings_ms.unwrap_or(0)),
        );
        super::print_report(report.as_deref(), project_dir);
    }
    Ok(ExitCode::from(code))
}

/// What the notifier hears of a task run's stop: a failed task, a pause or a gate that waits
/// for a human (with what to do), and the end.
fn tell(
    notifier: &crate::cli::notify::Notifier,
    stop: &Stop,
    run_id: &str,
    slug: &str,
    next: &str,
    summary: &serde_json::Value,
) {
    match stop {
        Stop::Paused(why) => {
            notifier.stopped("run_paused", run_id, &format!("paused: {why}"), next)
        }
        Stop::Waiting(g) => notifier.stopped(
            "gate_waiting",
            run_id,
            &format!("waits at the {g} gate of task {slug}"),
            next,
        ),
        Stop::Failed | Stop::Completed | Stop::Shelved | Stop::Cancelled => {
            if matches!(stop, Stop::Failed) {
                notifier.send(
                    "task_failed",
                    &format!("task {slug} failed (baton task summary {slug} shows why)"),
                    serde_json::json!({"run_id": run_id, "task": slug}),
                    true,
                );
            }
            let status = &summary["status"];
            notifier.ended(
                run_id,
                &format!("run {run_id} ended: task {slug} {}", status.as_str().unwrap_or("?")),
                serde_json::json!({"task": slug, "status": status, "agent_calls": summary["agent_calls"], "report": summary["report_html"]}),
            );
        }
    }
}
