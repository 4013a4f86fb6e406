//! `baton resume --decision …` (RESUME and its decision routing table).

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;
use baton_store::model::Decision;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton resume --decision approve\n  baton resume --decision lite\n\n\
Routing:\n  design gate + approve        → continue at spec\n  \
investigation gate + full    → continue at spec\n  \
investigation gate + lite    → workflow becomes poc, continue at implementation\n  \
investigation gate + shelf   → shelved, shelf_context filled\n  \
investigation gate + cancel  → cancelled\n  final gate + approve         → completed\n  \
paused + retry               → continue from the failure point\n  reject                       → failed"
)]
pub struct Args {
    #[arg(long, value_parser = ["approve", "reject", "retry", "full", "lite", "shelf", "cancel"])]
    decision: String,
    #[command(flatten)]
    pub scope: super::Scope,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let store = ctx.store();
    let slug = ctx.slug(&store)?;
    let decision: Decision = a.decision.parse()?;
    let o = store.resume(&slug, decision)?;
    let at = o.effects.first().and_then(|e| e.continue_at.clone());
    #[derive(serde::Serialize)]
    struct Resumed<'a> {
        task: &'a str,
        decision: Decision,
        status: baton_store::model::Status,
        continue_at: Option<&'a str>,
        manifest: &'a baton_store::model::Manifest,
    }
    let value = Resumed {
        task: &slug,
        decision,
        status: o.manifest.status,
        continue_at: at.as_deref(),
        manifest: &o.manifest,
    };
    ctx.out.emit(&value, |w| match &at {
        Some(p) => writeln!(
            w,
            "{slug}: {decision} → {}; continue at: {p}",
            o.manifest.status
        ),
        None => writeln!(w, "{slug}: {decision} → {}", o.manifest.status),
    });
    Ok(ExitCode::SUCCESS)
}
