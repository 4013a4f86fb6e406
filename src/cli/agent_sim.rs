//! `baton agent-sim`: the simulated agent, run by the engine as a separate process exactly as
//! it runs `claude -p`. Hidden from the command list: it is an agent, not a user command.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use super::Ctx;
use crate::error::{Error, Result};
use crate::workflow::sim;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  echo 'Story ID: 1.1 ... IMPLEMENTATION COMPLETE: 1.1' | baton agent-sim --scenario sim.toml\n\n\
A simulated agent for demos and tests: reads the prompt on stdin, acts on the working\n\
directory as the scenario says, prints Claude Code stream-json."
)]
pub struct Args {
    /// Scenario file (TOML); default: $BATON_SIM_SCENARIO, else every phase succeeds
    #[arg(long)]
    scenario: Option<PathBuf>,
}

pub fn run(_ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let scenario = sim::Scenario::load(a.scenario.as_deref())?;
    let mut prompt = String::new();
    std::io::stdin()
        .read_to_string(&mut prompt)
        .map_err(|e| Error::io("<stdin>", e))?;
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    Ok(ExitCode::from(sim::run(&prompt, &cwd, &scenario)?))
}
