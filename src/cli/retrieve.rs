//! `baton retrieve --needs … --for PHASE` (RETRIEVE).

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  baton retrieve --for implementation\n  \
baton retrieve --needs investigation-summary --for checkpoint\n  baton retrieve --needs memory --for architect\n\n\
What each target phase gets:\n  design-audit    architect.md (latest revision), previous audit feedback\n  \
checkpoint      investigation summary: decision/file/pattern/risk sections of architect.md\n  \
spec            architect decisions, placement, constraints (sections)\n  \
implementation  spec signatures, types, edge cases, files (sections)\n  \
testing         spec signatures, types, edge cases (sections)\n  \
impl-audit      architect, spec, implementations, tests, test results (whole)\n  \
revision        original architect.md, the design audit\n  \
fix             implementations, impl-audit feedback, tests to verify\n  \
graduate        architect.md, implementations, debt.md\n  resume          manifest.json\n\
`--needs memory` adds memory/decisions.md and patterns.md. For a phase without a row,\n\
needs name what to get: architect-output, spec, spec-signatures, investigation-summary,\n\
audit-feedback, implementations, manifest.")]
pub struct Args {
    /// What to retrieve, comma-separated
    #[arg(long, value_delimiter = ',')]
    needs: Vec<String>,
    /// The phase the context is for
    #[arg(long = "for", value_name = "PHASE")]
    for_phase: String,
    #[command(flatten)]
    pub scope: super::Scope,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let store = ctx.store();
    let slug = ctx.slug(&store)?;
    let got = store.retrieve(&slug, &a.needs, &a.for_phase)?;
    ctx.out.emit(&got, |w| {
        write!(w, "{}", super::style::for_stdout(&got.render()))
    });
    Ok(ExitCode::SUCCESS)
}
