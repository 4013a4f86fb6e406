//! `baton doctor`: verify the store, repair what can be repaired.

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;
use crate::store::doctor::{self, Level};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  baton doctor\n  baton doctor --json\n\n\
Checks every task: each event line parses and replays, each stored artifact exists, the\n\
manifest equals the replay of the events. Repairs without losing anything: a torn last event\n\
line (a crash mid-write) moves to events.jsonl.torn, a stale or missing manifest is rebuilt,\n\
temp files of interrupted writes are removed. Exit code 5 if damage remains.")]
pub struct Args {}

pub fn run(ctx: &Ctx, _a: Args) -> Result<ExitCode> {
    let report = doctor::run(&ctx.store())?;
    ctx.out.emit(&report, |w| {
        writeln!(w, "store {}: {} task(s)", report.root, report.tasks)?;
        for f in &report.findings {
            let tag = match f.level {
                Level::Ok => "ok      ",
                Level::Repaired => "repaired",
                Level::Warning => "warning ",
                Level::Error => "ERROR   ",
            };
            writeln!(w, "  {tag} {}: {}", f.path, f.message)?;
        }
        writeln!(
            w,
            "{}",
            if report.healthy() {
                "store is healthy"
            } else {
                "store has damage that needs a human"
            }
        )
    });
    Ok(if report.healthy() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(5)
    })
}
