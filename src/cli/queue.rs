//! `baton queue add|show|list`: queues of items for `baton run verify`.

use std::process::ExitCode;

use clap::Subcommand;

use super::Ctx;
use crate::error::Result;
use crate::workflow::verify::queue::{ItemStatus, Queues};

#[derive(Debug, Subcommand)]
#[command(defer = true)] // arguments built only for the subcommand that runs
pub enum QueueCmd {
    /// Append items to a queue (created if missing); all of them or, on an error, none
    #[command(after_help = "Examples:\n  baton queue add dat-q1 BMNR MARA XXI\n  \
baton run verify --queue dat-q1\n\nQueue names: lowercase letters, digits, `-`, `_`. Items: ids like BMNR \
(letters, digits, `.`, `-`, `_`).\nAn item already in the queue is refused (nothing is added).\n\
Stored machine-local in .baton/queues/<name>/ (queue.json, items/<ITEM>/).")]
    Add {
        name: String,
        #[arg(required = true)]
        items: Vec<String>,
    },
    /// The items of a queue and where each is: pending, in progress at a phase, complete, failed
    #[command(
        after_help = "Examples:\n  baton queue show dat-q1\n  baton queue show dat-q1 --json\n  \
baton state show BMNR          # one item in detail"
    )]
    Show { name: String },
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

/// Counts and "what it waits for" of one queue, from its items' state files.
pub(crate) fn summarize(queues: &Queues, name: &str) -> Result<(QueueSummary, Vec<ItemStatus>)> {
    let q = queues.load(name)?;
    let rows: Vec<ItemStatus> = q
        .items
        .iter()
        .map(|i| queues.status(name, &i.id))
        .collect::<Result<_>>()?;
    let count = |s: &str| rows.iter().filter(|r| r.status == s).count();
    let running = queues.running(name);
    let cmd = format!("baton run verify --queue {name}");
    let next = if let Some(r) = rows.iter().find(|r| r.status == "in-progress") {
        let at = r.phase.clone().unwrap_or_else(|| "?".into());
        if running {
            format!("running: {} at phase {at}", r.item)
        } else {
            format!(
                "interrupted: {} at phase {at} — continue with: {cmd}",
                r.item
            )
        }
    } else if let Some(r) = rows.iter().find(|r| r.status == "failed") {
        format!(
            "{} failed ({}) — fix it, then: {cmd}",
            r.item,
            r.reason.clone().unwrap_or_default()
        )
    } else if count("pending") > 0 {
        format!("{} pending — start with: {cmd}", count("pending"))
    } else {
        "all complete".into()
    };
    Ok((
        QueueSummary {
            name: name.to_string(),
            items: rows.len(),
            complete: count("complete"),
            failed: count("failed"),
            in_progress: count("in-progress"),
            pending: count("pending"),
            next,
        },
        rows,
    ))
}

pub fn run(ctx: &Ctx, cmd: QueueCmd) -> Result<ExitCode> {
    let queues = Queues::new(&ctx.project.local_dir());
    match cmd {
        QueueCmd::Add { name, items } => {
            let q = queues.add(&name, &items)?;
            let ids: Vec<&str> = q.items.iter().map(|i| i.id.as_str()).collect();
            ctx.out.emit(
                &serde_json::json!({"queue": name, "added": items, "items": ids}),
                |w| {
                    writeln!(
                        w,
                        "queue {name}: added {} ({} items now)\nrun it: baton run verify --queue {name}",
                        items.join(", "),
                        ids.len()
                    )
                },
            );
        }
        QueueCmd::Show { name } => {
            let (sum, rows) = summarize(&queues, &name)?;
            ctx.out.emit(
                &serde_json::json!({"queue": sum, "items": rows}),
                |w| {
                    writeln!(
                        w,
                        "queue {name}: {} items — {} complete, {} failed, {} in progress, {} pending",
                        sum.items, sum.complete, sum.failed, sum.in_progress, sum.pending
                    )?;
                    for r in &rows {
                        let what = match r.status.as_str() {
                            "in-progress" => format!(
                                "in progress at phase {} ({}/{} phases done)",
                                r.phase.as_deref().unwrap_or("?"),
                                r.phases_done,
                                r.phases
                            ),
                            "failed" => format!("failed: {}", r.reason.as_deref().unwrap_or("")),
                            s => s.to_string(),
                        };
                        writeln!(w, "  {:<12} {what}", r.item)?;
                    }
                    writeln!(w, "next: {}", sum.next)
                },
            );
        }
        QueueCmd::List => {
            let mut all = Vec::new();
            for n in queues.names() {
                all.push(summarize(&queues, &n)?.0);
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
