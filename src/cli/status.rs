//! `baton status`: every run and task, and what each waits for.

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;
use crate::run::journal::{Entry, Journal};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  baton status\n  baton status --json")]
pub struct Args {}

#[derive(serde::Serialize)]
struct RunRow {
    run_id: String,
    workflow: String,
    epics: Vec<String>,
    state: String,
    /// The step an interrupted run stopped in, and the command that continues it.
    next: Option<String>,
    agent_calls: usize,
    done: usize,
    failed: usize,
    started_at: String,
    updated_at: String,
}

pub fn run(ctx: &Ctx, _a: Args) -> Result<ExitCode> {
    let local = ctx.project.local_dir();
    let mut runs = Vec::new();
    if let Ok(rd) = std::fs::read_dir(Journal::runs_dir(&local)) {
        let mut ids: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        ids.sort();
        for id in ids {
            // A run whose journal cannot be read is shown as damaged, not hidden.
            let damaged = |why: String| RunRow {
                run_id: id.clone(),
                workflow: String::new(),
                epics: vec![],
                state: "damaged".into(),
                next: Some(why),
                agent_calls: 0,
                done: 0,
                failed: 0,
                started_at: String::new(),
                updated_at: String::new(),
            };
            let j = match Journal::open(&local, &id) {
                Ok(j) => j,
                Err(e) => {
                    runs.push(damaged(e.to_string()));
                    continue;
                }
            };
            let Some((_, wf, epics, _)) = j.started() else {
                runs.push(damaged(
                    "the journal does not start with run_started".into(),
                ));
                continue;
            };
            let count = |r: &str| {
                j.records
                    .iter()
                    .filter(
                        |x| matches!(&x.entry, Entry::SubjectFinished { result, .. } if result == r),
                    )
                    .count()
            };
            let last_started = j.records.iter().rev().find_map(|r| match &r.entry {
                Entry::PhaseStarted {
                    subject,
                    phase,
                    attempt,
                } => Some(format!("{} {phase} (attempt {attempt})", subject.label())),
                _ => None,
            });
            let task_state = crate::workflow::task::run_state(&ctx.store(), wf, epics, &id);
            let (state, next) = if let Some(s) = task_state {
                s
            } else if j.run_finished() {
                ("finished".to_string(), None)
            } else {
                (
                    "interrupted".to_string(),
                    Some(format!(
                        "{} — continue with: baton run --resume {id}",
                        last_started.unwrap_or_else(|| "before its first phase".into())
                    )),
                )
            };
            runs.push(RunRow {
                run_id: id.clone(),
                workflow: wf.to_string(),
                epics: epics.to_vec(),
                state,
                next,
                agent_calls: j.agent_calls(),
                done: count("done"),
                failed: count("failed"),
                started_at: j.records.first().map(|r| r.ts.clone()).unwrap_or_default(),
                updated_at: j.records.last().map(|r| r.ts.clone()).unwrap_or_default(),
            });
        }
    }
    let store = ctx.store();
    let tasks: Vec<crate::store::view::Summary> = store
        .list()
        .unwrap_or_default()
        .iter()
        .map(crate::store::view::summary)
        .collect();
    // Verify queues: counts and what each waits for.
    let vq = crate::workflow::verify::queue::Queues::new(&local);
    let queues: Vec<super::queue::QueueSummary> = vq
        .names()
        .iter()
        .filter_map(|n| super::queue::summarize(&vq, n).ok().map(|s| s.0))
        .collect();
    let value = serde_json::json!({"runs": runs, "tasks": tasks, "queues": queues});
    ctx.out.emit(&value, |w| {
        if runs.is_empty() && tasks.is_empty() && queues.is_empty() {
            return writeln!(w, "no runs and no tasks yet (try `baton demo`)");
        }
        for r in &runs {
            writeln!(
                w,
                "run {}  {} {} {}  {}  {} done, {} failed, {} agent calls",
                r.run_id,
                r.workflow,
                crate::run::definition::WorkflowKind::parse(&r.workflow)
                    .map_or("epic", |k| k.subject_word()),
                r.epics.join(","),
                r.state,
                r.done,
                r.failed,
                r.agent_calls
            )?;
            if let Some(n) = &r.next {
                let verb = if r.state == "damaged" {
                    "journal"
                } else if crate::run::definition::WorkflowKind::parse(&r.workflow)
                    .map_or("epic", |k| k.subject_word())
                    == "task"
                {
                    "next"
                } else {
                    "stopped in"
                };
                writeln!(w, "    {verb}: {n}")?;
            }
        }
        for q in &queues {
            writeln!(
                w,
                "queue {}  {} complete, {} failed, {} pending of {}  — {}",
                q.name,
                q.complete,
                q.failed,
                q.pending + q.in_progress,
                q.items,
                q.next
            )?;
        }
        for t in &tasks {
            writeln!(
                w,
                "task {}  {}{}  next: {}",
                t.task,
                t.status,
                // One line a task: the gate's prompt and artifacts are for `baton gate show`.
                t.waiting_for
                    .as_ref()
                    .map(|x| {
                        let short: String = x.chars().take(80).collect();
                        let more = if short.len() < x.len() { "…" } else { "" };
                        format!(" ({short}{more})")
                    })
                    .unwrap_or_default(),
                t.next
            )?;
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}
