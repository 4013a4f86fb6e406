//! baton-context: the context toolkit, what keeps every agent context small and faithful.
//!
//! - [`tokens`]: exact token counts (o200k_base, cl100k_base) and estimates.
//! - [`mask`]: a command's large output goes to a scratch file and is replaced by a summary
//!   that keeps what matters (failures, error lines, the tail), with secrets redacted.
//! - [`extract`] and [`outline`]: the sections of a spec a phase needs, the skeleton of a
//!   source file.
//! - [`budget`], [`session`], [`signals`], [`summary`]: phase budgets, session rotation,
//!   the signal lines agents end with, summary blocks.
//! - [`Error`]: the shared faults, and a section a query does not find or finds twice.
//!
//! ```
//! use baton_context::tokens::Encoding;
//! let n = Encoding::O200kBase.count("fn main() {}");
//! assert!(n > 0 && n < 10);
//! ```
//!
//! Depends on baton-core only: usable by any tool without baton's store, agents or engines,
//! and it must stay so.

#![cfg_attr(test, allow(clippy::print_stdout, clippy::print_stderr))]

pub mod budget;
pub mod error;
pub mod extract;
pub mod input;
pub mod mask;
pub mod outline;
pub mod session;
pub mod signals;
pub mod summary;
pub mod tokens;

pub use error::{Error, Result};

/// The cores this process may use, asked once: std reads the cgroup's files on every call
/// (3.5 % of an outline of a 400-file tree when each file asked).
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}
