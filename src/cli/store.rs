//! `baton store PHASE` (STORE).

use std::path::PathBuf;
use std::process::ExitCode;

use super::{Ctx, read_content};
use crate::error::Result;
use baton_store::Content;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  baton store architect --file design.md\n  \
echo '## Task 2' | baton store implementation --task-id 2\n  baton store architect-revision --iteration 2 --file rev.md\n\n\
Phases and files: architect → architect.md, spec → spec.md, implementation → implementations/task-<id>.md,\n\
tests → tests/task-<id>.md, test-results, impl-audit, design-audit → <phase>.md,\n\
architect-revision → architect-revision-<n>.md, implementation-fix → implementation-fix-<n>.md,\n\
debt → debt.md (poc mode only), graduate-complete → graduate-complete.md.\n\
Nothing is rewritten: storing again writes the next version (spec.v2.md).")]
pub struct Args {
    phase: String,
    #[arg(long)]
    task_id: Option<String>,
    #[arg(long)]
    iteration: Option<u32>,
    /// Read the content from this file instead of stdin
    #[arg(long)]
    file: Option<PathBuf>,
    #[command(flatten)]
    pub scope: super::Scope,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let store = ctx.store();
    let slug = ctx.slug(&store)?;
    let text = read_content(a.file.as_deref())?;
    let o = store.store(
        &slug,
        &a.phase,
        Content {
            task_id: a.task_id,
            iteration: a.iteration,
            text,
        },
    )?;
    let path = o.stored.first().cloned().unwrap_or_default();
    let full = store.task_dir(&slug).join(&path);
    ctx.out.emit(
        &serde_json::json!({"task": slug, "phase": a.phase, "path": full}),
        |w| writeln!(w, "{slug}: stored {}", full.display()),
    );
    Ok(ExitCode::SUCCESS)
}
