//! baton: context management for multi-agent LLM coding workflows.
//!
//! The library holds every operation; `cli` only parses arguments and renders results.
//! See `docs/ARCHITECTURE.md` for the module map.

pub mod agent;
pub mod cli;
pub mod config;
pub mod context;
pub mod error;
pub mod fs;
pub mod hooks;
pub mod ids;
pub mod markdown;
pub mod init;
pub mod mcp;
pub mod process;
pub mod report;
pub mod run;
pub mod store;
pub mod workflow;

pub use error::{Error, Result};
