//! `baton queue add|show|list`: queues of items for `baton run verify` (or, on the postgres
//! backend, for `baton worker`).

use std::process::ExitCode;

use clap::Subcommand;

use super::Ctx;
use crate::error::Result;
use baton_engine::workflow::verify::backend::{Backend, BackendKind};
use baton_engine::workflow::verify::pg::Claim;
use baton_engine::workflow::verify::state::{ItemProgress, ItemStatus};

#[derive(Debug, Subcommand)]
#[command(defer = true)] // arguments built only for the subcommand that runs
pub enum QueueCmd {
    /// Append items to a queue (created if missing); all of them or, on an error, none
    #[command(after_help = "Examples:\n  baton queue add dat-q1 BMNR MARA XXI\n  \
baton run verify --queue dat-q1\n\nQueue names: lowercase letters, digits, `-`, `_`. Items: ids like BMNR \
(letters, digits, `.`, `-`, `_`).\nAn item already in the queue is refused (nothing is added).\n\
Stored machine-local in .baton/queues/<name>/ (queue.json, items/<ITEM>/), or in PostgreSQL\n\
with `[queue] backend = \"postgres\"` in baton.toml (then drained by `baton worker`).")]
    Add {
        name: String,
        #[arg(required = true)]
        items: Vec<String>,
    },
    /// The items of a queue and where each is: pending, in progress at a phase, complete, failed
    #[command(
        after_help = "Examples:\n  baton queue show dat-q1\n  baton queue show dat-q1 --json\n  \
baton state show BMNR          # one item in detail\n\n\
On the postgres backend it also lists the claims: the phase each worker runs, the worker and\n\
its host, how long ago it claimed, and the lease left (an expired one is taken over)."
    )]
    Show {
        #[arg(add = super::complete::queue_names())]
        name: String,
    },
    /// Put failed items back in a postgres queue: workers rerun each from its failed phase
    #[command(
        after_help = "Examples:\n  baton queue retry dat-q1          # every failed item\n  \
baton queue retry dat-q1 BMNR     # only these\n\n\
On the postgres backend only: on files, rerunning `baton run verify --queue NAME` retries\n\
failed items by itself."
    )]
    Retry { name: String, items: Vec<String> },
    /// Every queue with its counts
    #[command(after_help = "Examples:\n  baton queue list\n  baton queue list --json")]
    List,
}

#[derive(serde::Serialize)]
pub(crate) struct QueueSummary {
    pub name: String,
    pub items: usize,
    pub complete: usize,
    pub failed: usize,
    pub in_progress: usize,
    pub pending: usize,
    /// What the queue waits for, in one line.
    pub next: String,
}

/// Counts and "what it waits for" of one queue, from its items' states.
pub(crate) fn summarize(
    queues: &mut Backend,
    name: &str,
) -> Result<(QueueSummary, Vec<ItemStatus>)> {
    let rows = queues.statuses(name)?;
    let count = |s: ItemProgress| rows.iter().filter(|r| r.status == s).count();
    let running = queues.running(name)?;
    let cmd = queues.work_command(name);
    let next = if let Some(r) = rows.iter().find(|r| r.status == ItemProgress::InProgress) {
        let at = r.phase.clone().unwrap_or_else(|| "?".into());
        if running {
            format!("running: {} at phase {at}", r.item)
        } else {
            format!(
                "interrupted: {} at phase {at} — continue with: {cmd}",
                r.item
            )
        }
    } else if let Some(r) = rows.iter().find(|r| r.status == ItemProgress::Failed) {
        format!(
            "{} failed ({}) — fix it, then: {cmd}",
            r.item,
            r.reason.clone().unwrap_or_default()
        )
    } else if count(ItemProgress::Pending) > 0 {
        format!(
            "{} pending — start with: {cmd}",
            count(ItemProgress::Pending)
        )
    } else {
        "all complete".into()
    };
    Ok((
        QueueSummary {
            name: name.to_string(),
            items: rows.len(),
            complete: count(ItemProgress::Complete),
            failed: count(ItemProgress::Failed),
            in_progress: count(ItemProgress::InProgress),
            pending: count(ItemProgress::Pending),
            next,
        },
        rows,
    ))
}

/// One claim, for humans: `BMNR  phase 1b (attempt 1) — w1@host-a, 12s ago, lease 48s left`.
fn claim_line(c: &Claim) -> String {
    let lease = if c.lease_left_secs > 0.0 {
        format!("lease {:.0}s left", c.lease_left_secs)
    } else {
        format!(
            "lease expired {:.0}s ago: the next worker takes it over",
            -c.lease_left_secs
        )
    };
    format!(
        "{:<12} phase {} (attempt {}) — {}@{}, claimed {:.0}s ago, {lease}",
        c.item,
        c.phase.as_deref().unwrap_or("?"),
        c.attempt,
        c.worker,
        c.host,
        c.age_secs
    )
}

pub fn run(ctx: &Ctx, cmd: QueueCmd) -> Result<ExitCode> {
    let mut queues = Backend::open(&ctx.project.config.queue, &ctx.project.local_dir())?;
    match cmd {
        QueueCmd::Add { name, items } => {
            let ids = queues.add(&name, &items)?;
            let work = queues.work_command(&name);
            ctx.out.emit(
                &serde_json::json!({"queue": name, "added": items, "items": ids}),
                |w| {
                    writeln!(
                        w,
                        "queue {name}: added {} ({} items now)\nrun it: {work}",
                        items.join(", "),
                        ids.len()
                    )
                },
            );
        }
        QueueCmd::Show { name } => {
            let (sum, rows) = summarize(&mut queues, &name)?;
            let claims = queues.claims(&name)?;
            let mut v = serde_json::json!({"queue": sum, "items": rows});
            // Claims exist on the postgres backend only (the file backend has one run per queue).
            if queues.kind() == BackendKind::Postgres {
                v["claims"] = serde_json::json!(claims);
            }
            ctx.out.emit(&v, |w| {
                writeln!(
                    w,
                    "queue {name}: {} items — {} complete, {} failed, {} in progress, {} pending",
                    sum.items, sum.complete, sum.failed, sum.in_progress, sum.pending
                )?;
                for r in &rows {
                    let what = match r.status {
                        ItemProgress::InProgress => format!(
                            "in progress at phase {} ({}/{} phases done)",
                            r.phase.as_deref().unwrap_or("?"),
                            r.phases_done,
                            r.phases
                        ),
                        ItemProgress::Failed => {
                            format!("failed: {}", r.reason.as_deref().unwrap_or(""))
                        }
                        s => s.as_str().to_string(),
                    };
                    writeln!(w, "  {:<12} {what}", r.item)?;
                }
                if !claims.is_empty() {
                    writeln!(w, "claims:")?;
                    for c in &claims {
                        writeln!(w, "  {}", claim_line(c))?;
                    }
                }
                writeln!(w, "next: {}", sum.next)
            });
        }
        QueueCmd::Retry { name, items } => {
            let Backend::Postgres(db) = &mut queues else {
                return Err(crate::Error::invalid(
                    "`baton queue retry` is for queues in PostgreSQL; this project keeps its queues in files",
                )
                .hint(format!(
                    "rerun the queue: baton run verify --queue {name} (failed items resume at their failed phase)"
                )));
            };
            db.items(&name)?;
            let ids = db.retry(&name, &items)?;
            let work = queues.work_command(&name);
            ctx.out.emit(
                &serde_json::json!({"queue": name, "retried": ids}),
                |w| {
                    if ids.is_empty() {
                        writeln!(w, "queue {name}: no failed items")
                    } else {
                        writeln!(
                            w,
                            "queue {name}: {} back in the queue, each at its failed phase\nrun it: {work}",
                            ids.join(", ")
                        )
                    }
                },
            );
        }
        QueueCmd::List => {
            let mut all = Vec::new();
            for n in queues.names()? {
                all.push(summarize(&mut queues, &n)?.0);
            }
            ctx.out.emit(&all, |w| {
                if all.is_empty() {
                    return writeln!(w, "no queues yet (baton queue add NAME ITEM…)");
                }
                for s in &all {
                    writeln!(
                        w,
                        "{:<16} {} items: {} complete, {} failed, {} pending  — {}",
                        s.name,
                        s.items,
                        s.complete,
                        s.failed,
                        s.pending + s.in_progress,
                        s.next
                    )?;
                }
                Ok(())
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}
