//! Who runs a run's phases (`--agent`, `--scenario`): the flags every workflow of `baton run`
//! and `baton plan` share.

use std::path::PathBuf;

use super::Ctx;
use crate::error::{Error, Result};
use baton_agent::settings::AgentId;

// Who runs the phases, for every workflow. (A plain comment: a doc comment on a flattened
// struct would become the `about` of every command that flattens it.)
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AgentArgs {
    /// Run every phase with this agent: claude, codex, gemini, sim (the built-in simulated
    /// agent: deterministic, no LLM, no network), or a name of [agents.<name>] in baton.toml
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<AgentId>,
    /// Scenario of the simulated agent (TOML; default .baton/sim.toml)
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
}

/// The simulated agent's scenario: `--scenario`, else `.baton/sim.toml`; made absolute, since
/// agents run in other directories (worktrees).
pub(super) fn scenario(ctx: &Ctx, a: &AgentArgs) -> Result<Option<PathBuf>> {
    let scenario = a.scenario.clone().or_else(|| {
        let p = ctx.project.local_dir().join("sim.toml");
        p.is_file().then_some(p)
    });
    let scenario = match scenario {
        Some(p) if p.is_relative() => Some(
            std::env::current_dir()
                .map_err(|e| Error::io(".", e))?
                .join(p),
        ),
        other => other,
    };
    // A broken scenario is found now, not as every phase of the run failing.
    if let Some(p) = &scenario {
        baton_agent::sim::Scenario::load(Some(p)).map_err(|e| {
            e.hint(format!(
                "fix the simulated agent's scenario {} (or remove it)",
                p.display()
            ))
        })?;
    }
    Ok(scenario)
}
