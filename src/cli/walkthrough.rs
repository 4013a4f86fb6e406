//! `baton walkthrough`: a whole task through the store, command by command, in a scratch
//! directory — the quickest way to see what baton records and what each phase gets back.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::Ctx;
use crate::error::{Error, Result};
use baton_store::Store;
use baton_store::lang;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton walkthrough\n  baton walkthrough --dir /tmp/bt --full\n\n\
Runs INIT → architect → design audit → investigation gate → spec → two parallel\n\
implementations (one fails and is retried) → tests → final gate, through the context-manager command
\
language, and shows each command with its answer. Nothing outside the scratch directory changes."
)]
pub struct Args {
    /// Where to put the scratch store (default: a new temporary directory, kept)
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print every answer whole instead of its first lines
    #[arg(long)]
    full: bool,
}

const ARCHITECT: &str = "# Architecture: rate limiting
## Summary
Token bucket per API key, in the existing middleware chain.
## Decisions
- Token bucket over fixed window: smooth bursts.
- State in Redis, shared by all instances.
## Files
- src/middleware/ratelimit.rs (new)
- src/app.rs (wire the middleware)
## Risks
- Redis outage: fail open, log loudly.";

const SPEC: &str = "# Spec: rate limiting
## Overview
Limit each API key to 100 requests a minute.
## Function Signatures
- `fn check(key: &ApiKey, now: Instant) -> Decision`
## Types
- `enum Decision { Allow, Deny { retry_after: Duration } }`
## Edge Cases
- Clock skew between instances; keys with no quota configured.
## Rollout
Behind a feature flag for one week.";

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let dir = match a.dir {
        Some(d) => {
            if d.join("context").exists() {
                return Err(
                    Error::state(format!("{} already holds a store", d.display()))
                        .hint("pick an empty directory, or omit --dir"),
                );
            }
            d
        }
        None => tempfile::Builder::new()
            .prefix("baton-walkthrough-")
            .tempdir()
            .map_err(|e| Error::io(std::env::temp_dir(), e))?
            .keep(),
    };
    let store = Store::new(&dir);
    let steps: Vec<String> = vec![
        "INIT task: Add rate limiting mode: standard workflow: orchestrate".into(),
        "BEGIN_PHASE phase: architect needs: memory".into(),
        format!("COMPLETE_PHASE phase: architect status: success content: {ARCHITECT}"),
        "BEGIN_PHASE phase: design-audit needs: architect-output".into(),
        "COMPLETE_PHASE phase: design-audit status: success content: ## Audit\nSound. Preserve the fail-open decision.".into(),
        "SET_GATE gate: investigation prompt: Full build, lite POC, shelf or cancel? artifacts: architect.md".into(),
        "RETRIEVE needs: investigation-summary for_phase: checkpoint".into(),
        "RESUME decision: full".into(),
        "BEGIN_PHASE phase: spec needs: architect-output".into(),
        format!("COMPLETE_PHASE phase: spec status: success content: {SPEC}"),
        "BEGIN_PHASE phase: implementation task_id: 1 needs: spec-signatures".into(),
        "BEGIN_PHASE phase: implementation task_id: 2 needs: spec-signatures".into(),
        "COMPLETE_PHASE phase: implementation status: success task_id: 1 content: ## Task 1\nAdded check() and Decision.".into(),
        "COMPLETE_PHASE phase: implementation status: failed task_id: 2 content: ## Task 2\nMiddleware wiring broke two routes.".into(),
        "BEGIN_PHASE phase: implementation task_id: 2 needs: spec-signatures".into(),
        "COMPLETE_PHASE phase: implementation status: success task_id: 2 content: ## Task 2\nWired the middleware; routes fixed.".into(),
        "BEGIN_PHASE phase: tests needs: spec".into(),
        "COMPLETE_PHASE phase: tests status: success task_id: 1 content: ## Tests\n- allows 100, denies the 101st".into(),
        "SET_GATE gate: final prompt: Ship it? artifacts: spec.md".into(),
        "RESUME decision: approve".into(),
        "METRICS format: detailed".into(),
        "HISTORY tail: 5".into(),
    ];
    let mut all = Vec::new();
    let mut failed = false;
    for step in &steps {
        let r = lang::run_script(&store, step).remove(0);
        failed |= r.code != 0;
        all.push(serde_json::json!({"command": step, "response": r}));
        if !ctx.out.json {
            let mut out = std::io::stdout().lock();
            let first = step.lines().next().unwrap_or("");
            let more = if step.lines().count() > 1 { " …" } else { "" };
            let _ = writeln!(out, "$ baton exec '{first}{more}'");
            let text = r.render();
            let lines: Vec<&str> = text.lines().collect();
            let keep = if a.full {
                lines.len()
            } else {
                lines.len().min(8)
            };
            for l in &lines[..keep] {
                let _ = writeln!(out, "  {l}");
            }
            if keep < lines.len() {
                let _ = writeln!(
                    out,
                    "  … {} more lines (--full shows all)",
                    lines.len() - keep
                );
            }
            let _ = writeln!(out);
        }
        if failed {
            break;
        }
    }
    let value = serde_json::json!({"store": dir, "steps": all});
    ctx.out.emit(&value, |w| {
        writeln!(w, "store: {}", dir.display())?;
        writeln!(w, "look at: context/tasks/add-rate-limiting/ (events.jsonl, manifest.json, artifacts) and context/history.md")
    });
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
