//! baton: context management for multi-agent LLM coding workflows.
//!
//! The binary's crate: the command line (`cli`), the agent CLIs' hooks (`hooks`), `baton
//! init` (`init`) and the run reports (`report`). Every operation lives in the library crates
//! below it (baton-core, baton-store, baton-context, baton-agent, baton-engine, and
//! baton-mcp, the MCP server); `cli` only parses arguments, calls them and renders results.
//! See `docs/ARCHITECTURE.md` for the crate graph.

// stdout is written without panicking on a closed pipe: `outln!`, `Out::emit`.
#![deny(clippy::print_stdout)]

pub mod cli;
pub mod error;
pub mod hooks;
pub mod init;
pub mod report;

pub use error::{Error, Result};
