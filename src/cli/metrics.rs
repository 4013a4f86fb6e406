//! `baton metrics` (METRICS).

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;
use baton_store::metrics;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton metrics\n  baton metrics --format detailed\n  baton metrics --format json"
)]
pub struct Args {
    #[arg(long, default_value = "summary", value_parser = ["summary", "detailed", "json"])]
    format: String,
    #[command(flatten)]
    pub scope: super::Scope,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let store = ctx.store();
    let slug = ctx.slug(&store)?;
    let r = metrics::report(&store.manifest(&slug)?);
    let json = ctx.out.json || a.format == "json";
    super::Out { json }.emit(&r, |w| write!(w, "{}", r.render(a.format == "detailed")));
    Ok(ExitCode::SUCCESS)
}
