//! `baton mcp`: serve baton's tools over MCP (stdio) to the agent that started it.

use std::process::ExitCode;

use clap::Args as ClapArgs;

use super::Ctx;
use crate::error::Result;

#[derive(Debug, ClapArgs)]
#[command(after_help = "\
Started by an agent CLI, not by hand: it speaks MCP (JSON-RPC) on stdin/stdout and logs to
stderr. Tools (12): task_init, phase_begin, phase_complete, gate, store, retrieve, status,
query (the task store), mask, extract, outline, budget (the context tools). Answers are short
STATUS/TASK/DATA text; a large one keeps its start and names the scratch file with the rest.

Examples:
  baton init claude            writes .mcp.json: {\"mcpServers\": {\"baton\": {\"command\": \"baton\", \"args\": [\"mcp\"]}}}
  claude mcp add baton -- baton mcp
  codex mcp add baton -- baton mcp")]
pub struct Args {
    #[command(flatten)]
    pub store: super::StoreRoot,
}

pub fn run(ctx: &Ctx, _a: Args) -> Result<ExitCode> {
    baton_mcp::serve(baton_mcp::tools::Ctx {
        project: ctx.project.clone(),
        store: ctx.store(),
        log: |tool| eprintln!("baton mcp: {tool}"),
    })?;
    Ok(ExitCode::SUCCESS)
}
