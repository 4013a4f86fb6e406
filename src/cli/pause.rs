//! `baton pause` (PAUSE).

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton pause --reason \"tests fail on CI\" --recommend \"fix fixture,rerun\"\n\n\
Every phase must be ended first. Continue with `baton resume --decision retry` (or reject)."
)]
pub struct Args {
    /// Why the task stops
    #[arg(long)]
    reason: String,
    /// Recommendations for the human, comma-separated
    #[arg(long, value_delimiter = ',')]
    recommend: Vec<String>,
    #[command(flatten)]
    pub scope: super::Scope,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let store = ctx.store();
    let slug = ctx.slug(&store)?;
    let recs: Vec<String> = a
        .recommend
        .into_iter()
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
        .collect();
    let o = store.pause(&slug, &a.reason, recs)?;
    ctx.out.emit(&o.manifest, |w| {
        writeln!(w, "{slug}: paused ({})", a.reason)?;
        writeln!(
            w,
            "  continue with: baton resume --decision retry   (or --decision reject)"
        )
    });
    Ok(ExitCode::SUCCESS)
}
