//! `baton gc`: scratch retention. Masked outputs' full text piles up in `.baton/scratch`;
//! this removes files older than `[mask] keep_days`, then the oldest until the folder fits
//! `[mask] keep_mb`, never one a running or resumable run recorded, one the current task
//! names, or one written in the last ten minutes. `--dry-run` lists what it would remove.

use std::io::Write;
use std::process::ExitCode;
use std::time::SystemTime;

use super::Ctx;
use crate::error::Result;
use baton_context::mask::retention::{self, Plan, Reason};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton gc --dry-run            # what would go, and why\n  \
baton gc\n  baton gc --older-than 2d --max-mb 200\n\n\
Defaults from baton.toml: [mask] keep_days (7) and keep_mb (1024). `baton run` collects the\n\
same way when it finishes."
)]
pub struct Args {
    /// List what would be removed; remove nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Remove files older than this (30m, 12h, 7d, 2w) instead of [mask] keep_days
    #[arg(long, value_name = "AGE")]
    pub older_than: Option<String>,
    /// Then keep at most this many MB instead of [mask] keep_mb
    #[arg(long, value_name = "MB")]
    pub max_mb: Option<u64>,
    #[command(flatten)]
    pub store: super::StoreRoot,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let mut keep = ctx.project.config.mask.retention();
    if let Some(age) = &a.older_than {
        keep.max_age = baton_context::session::parse_duration(age)?;
    }
    if let Some(mb) = a.max_mb {
        keep.max_bytes = mb.saturating_mul(1024 * 1024);
    }
    let plan = collect(ctx, keep, a.dry_run)?;
    let v = serde_json::json!({"dry_run": a.dry_run, "plan": plan});
    ctx.out.emit(&v, |w| render(w, ctx, &plan, a.dry_run));
    Ok(ExitCode::SUCCESS)
}

/// Plan, and unless `dry_run`, remove.
pub fn collect(ctx: &Ctx, keep: retention::Retention, dry_run: bool) -> Result<Plan> {
    let plan = baton_engine::gc::scratch_plan(&ctx.project, &ctx.store(), keep, SystemTime::now())?;
    if !dry_run {
        retention::apply(&plan)?;
    }
    Ok(plan)
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
}

fn render(w: &mut dyn Write, ctx: &Ctx, p: &Plan, dry_run: bool) -> std::io::Result<()> {
    let rel = |path: &std::path::Path| super::shown(&ctx.project.dir, path);
    let removed: u64 = p.remove.iter().map(|r| r.bytes).sum();
    let verb = if dry_run { "would remove" } else { "removed" };
    writeln!(
        w,
        "{verb} {} of {} scratch files, {} of {}",
        p.remove.len(),
        p.files,
        mb(removed),
        mb(p.bytes)
    )?;
    for r in &p.remove {
        let why = match r.reason {
            Reason::Age => "older than the age limit",
            Reason::Size => "oldest over the size limit",
        };
        writeln!(w, "  {}  {}  {why}", rel(&r.path), mb(r.bytes))?;
    }
    for path in &p.in_use {
        writeln!(w, "  kept {}: a run or the current task uses it", rel(path))?;
    }
    for path in &p.recent {
        writeln!(w, "  kept {}: written in the last 10 minutes", rel(path))?;
    }
    Ok(())
}
