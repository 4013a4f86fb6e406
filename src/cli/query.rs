//! `baton query TEXT` (QUERY).

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;
use baton_store::query;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton query \"rate limit\"\n  baton query bcrypt --json --limit 20\n\n\
Searches (case-insensitive) every task's artifacts, memory/*.md and history.md.\n\
Exit code 1 when nothing matches, like grep."
)]
pub struct Args {
    /// Text to look for
    text: String,
    /// At most this many hits
    #[arg(long, default_value_t = 100)]
    limit: usize,
    #[command(flatten)]
    pub store: super::StoreRoot,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let store = ctx.store();
    let (hits, truncated) = query::search(&store, &a.text, a.limit)?;
    let value = serde_json::json!({"query": a.text, "hits": hits, "truncated": truncated});
    ctx.out.emit(&value, |w| {
        for h in &hits {
            writeln!(w, "{}:{}: {}", h.path, h.line, h.text)?;
        }
        if truncated {
            writeln!(w, "… more hits; raise --limit")?;
        }
        Ok(())
    });
    Ok(if hits.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
