//! What every engine shares: the one phase pipeline (`call`), the run journal, typed run
//! events and their reporters, prompt templates, definitions, agent assignment, the
//! conductor session, git steps, and small helpers (locks, run ids).

pub mod agents;
pub mod call;
pub mod cli_agents;
pub mod conductor;
pub mod definition;
pub mod events;
pub mod git;
pub mod interrupt;
pub mod journal;
pub mod progress;
pub mod prompt;

use std::sync::{Mutex, MutexGuard, PoisonError};

/// A lock that a panicking thread poisoned still guards valid data here (every update is a
/// single push or field change), so carry on with it rather than panic in turn.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
