//! Command-line front end: one file per command. Each parses its arguments, calls the library
//! and renders the result for people (short lines) or machines (`--json`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::Project;
use crate::error::{Error, Result};

mod budget;
mod extract;
mod output;
mod session;
mod summary;
mod tokens;
pub use output::Out;

#[derive(Debug, Parser)]
#[command(
    name = "baton",
    version,
    about = "Context management for multi-agent LLM coding workflows",
    long_about = "baton keeps durable task state, masks large tool output, extracts only the spec \
sections a phase needs and budgets tokens: every bookkeeping operation costs zero tokens.",
    after_help = "Examples:\n  baton task init \"Add login\" --mode standard --workflow orchestrate\n  \
baton phase begin architect --needs memory\n  baton exec 'BEGIN_PHASE phase: architect needs: memory'\n  \
baton history --tail 20\n\nExit codes: 0 ok, 2 bad input, 3 not allowed in the task's state, \
4 not found, 5 damaged store, 6 file system error."
)]
pub struct Cli {
    /// Store root (default: `paths.root` of baton.toml, i.e. docs/orchestrator)
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Operate on this task instead of the current one
    #[arg(long, global = true, value_name = "SLUG")]
    pub task: Option<String>,
    /// Print machine-readable JSON
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count tokens exactly (o200k_base, cl100k_base; Claude estimated)
    Tokens(tokens::Args),
    /// Check a context against its window or phase budget: ok, warn or rotate
    Budget(budget::Args),
    /// Print only the spec section or ADR decision a task needs
    Extract(extract::Args),
    /// Validate or extract a sub-agent's summary block
    Summary(summary::Args),
    /// Create, list and clean session directories for shared context files
    Session(session::Args),
}

/// Everything a command needs from the environment.
pub struct Ctx {
    pub project: Project,
    pub root: Option<PathBuf>,
    pub task: Option<String>,
    pub out: Out,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            report(&e, json);
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    let project = Project::discover(&cwd)?;
    let ctx = Ctx {
        project,
        root: cli.root,
        task: cli.task,
        out: Out { json: cli.json },
    };
    let code: ExitCode = match cli.command {
        Command::Tokens(a) => tokens::run(&ctx, a)?,
        Command::Budget(a) => budget::run(&ctx, a)?,
        Command::Extract(a) => extract::run(&ctx, a)?,
        Command::Summary(a) => summary::run(&ctx, a)?,
        Command::Session(a) => session::run(&ctx, a)?,
    };
    Ok(code)
}

fn report(e: &Error, json: bool) {
    let mut err = std::io::stderr().lock();
    if json {
        let v = serde_json::json!({"error": {"kind": e.kind(), "message": e.to_string(), "hint": e.hint_text()}});
        let _ = writeln!(err, "{v}");
    } else {
        let _ = writeln!(err, "error: {e}");
        if let Some(h) = e.hint_text() {
            let _ = writeln!(err, "  hint: {h}");
        }
    }
}
