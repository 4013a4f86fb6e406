//! `baton history` (HISTORY). Reads from the end of the file: fast on any size.

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton history\n  baton history --tail 200 --json\n  baton history --task add-login"
)]
pub struct Args {
    /// How many entries, newest last
    #[arg(long, default_value_t = 20)]
    tail: usize,
    #[command(flatten)]
    pub scope: super::Scope,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let store = ctx.store();
    let entries = match &ctx.task {
        // One task's entries: filter while reading from the end, so a small task in a huge
        // history still reads only what it needs.
        Some(slug) => {
            baton_store::names::check_slug(slug)?;
            let want = format!("[{slug}] ");
            let mut n = a.tail.max(1) * 4;
            loop {
                let all = store.history_tail(n)?;
                let mine: Vec<String> = all.iter().filter(|l| l.contains(&want)).cloned().collect();
                if mine.len() >= a.tail || all.len() < n {
                    let skip = mine.len().saturating_sub(a.tail);
                    break mine[skip..].to_vec();
                }
                n *= 4;
            }
        }
        None => store.history_tail(a.tail)?,
    };
    ctx.out.emit(&entries, |w| {
        for e in &entries {
            writeln!(w, "{e}")?;
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}
