//! `baton gate set|show` (SET_GATE).

use std::process::ExitCode;

use clap::Subcommand;

use super::Ctx;
use crate::error::{Error, Result};
use baton_store::model::{Gate, Status};

#[derive(Debug, Subcommand)]
#[command(defer = true)] // arguments built only for the subcommand that runs
pub enum GateCmd {
    /// Stop the task for human approval (SET_GATE); every phase must be ended first
    #[command(
        after_help = "Examples:\n  baton gate set design --prompt \"Approve the design?\" --artifacts architect.md\n  \
baton gate set investigation --prompt \"Full, lite, shelf or cancel?\"\n\n\
Gates: design (before the spec), investigation (after the design audit: choose the path),\n\
final (before marking complete)."
    )]
    Set {
        #[arg(value_parser = ["design", "investigation", "final"])]
        gate: String,
        /// What the human is asked
        #[arg(long, default_value = "")]
        prompt: String,
        /// Files to look at, comma-separated
        #[arg(long, value_delimiter = ',')]
        artifacts: Vec<String>,
    },
    /// The open gate: its prompt, its artifacts and the decisions it takes
    #[command(after_help = "Examples:\n  baton gate show\n  baton gate show --json")]
    Show,
}

pub fn run(ctx: &Ctx, cmd: GateCmd) -> Result<ExitCode> {
    let store = ctx.store();
    let slug = ctx.slug(&store)?;
    match cmd {
        GateCmd::Set {
            gate,
            prompt,
            artifacts,
        } => {
            let gate: Gate = gate.parse()?;
            let o = store.set_gate(&slug, gate, &prompt, artifacts)?;
            ctx.out.emit(&o.manifest, |w| {
                writeln!(w, "{slug}: waiting at the {gate} gate")?;
                writeln!(
                    w,
                    "  decide with: baton resume --decision {}",
                    decisions(gate)
                )
            });
        }
        GateCmd::Show => {
            let m = store.manifest(&slug)?;
            let g = match (&m.status, &m.gate_context) {
                (Status::WaitingGate, Some(g)) => g.clone(),
                _ => {
                    return Err(Error::state(format!(
                        "task `{slug}` is {}, not waiting at a gate",
                        m.status
                    ))
                    .hint("see `baton task summary` for where it stands"));
                }
            };
            let value = serde_json::json!({"task": slug, "gate": g, "decisions": decisions(g.gate).split('|').collect::<Vec<_>>()});
            ctx.out.emit(&value, |w| {
                writeln!(w, "{slug}: {} gate (since {})", g.gate, g.set_at)?;
                if !g.prompt.is_empty() {
                    writeln!(w, "  {}", g.prompt)?;
                }
                for a in &g.artifacts {
                    writeln!(w, "  artifact: {a}")?;
                }
                writeln!(
                    w,
                    "  decide with: baton resume --task {slug} --decision {}",
                    decisions(g.gate)
                )
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn decisions(g: Gate) -> &'static str {
    match g {
        Gate::Design | Gate::Final => "approve|reject",
        Gate::Investigation => "full|lite|shelf|cancel|reject",
    }
}
