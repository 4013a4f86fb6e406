//! baton-core: what every baton crate stands on.
//!
//! - [`error`]: the error kinds, each with its documented exit code (bad input, refused
//!   transition, not found, damaged store, agent unusable, interrupted, file system); the
//!   faults every crate shares; [`error::Fault`], which every crate's own error type
//!   implements.
//! - [`fs`]: atomic whole-file writes, appends, locks, and paths kept inside the project.
//! - [`ids`]: the ids of tasks, runs and sessions.
//! - [`markdown`]: a document's sections, found with a real Markdown parser.
//! - [`process`]: signalling a process group.
//! - [`notice`]: what the crates tell the user while they work (they never print).
//!
//! It depends on no other baton crate, and never will: it is the bottom layer.

#![cfg_attr(test, allow(clippy::print_stdout, clippy::print_stderr))]

pub mod error;
pub mod fs;
pub mod ids;
pub mod markdown;
pub mod notice;
pub mod process;

pub use error::{Error, Result};
