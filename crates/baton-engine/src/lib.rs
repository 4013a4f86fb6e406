//! baton-engine: the run engines. Each phase runs in a fresh agent process; context passes
//! between phases through files and git; every step is journaled so that a run killed at any
//! instant resumes without repeating anything.
//!
//! What every engine shares is at the top: the one phase pipeline ([`call`]), the run
//! [`journal`], typed run [`events`] sent to a [`events::Reporter`] (engines never print),
//! prompt templates ([`prompt`]), definitions, agent assignment ([`agents`], [`cli_agents`]),
//! the [`conductor`] session, [`git`] steps and the project's [`config`]; [`Error`] keeps the
//! lower crates' errors as they came, beside a run stopped by a signal. The engines
//! themselves are in [`workflow`]: `epic` (epic-execute, BMAD projects), `task` (orchestrate,
//! poc, graduate, plan, discover) and `verify` (queues of items, file or PostgreSQL).
//!
//! Depends on baton-core, baton-store, baton-context and baton-agent. It must never depend on
//! the binary's crate (the CLI, MCP, hooks, reports): those call it and render what it reports.

#![cfg_attr(test, allow(clippy::print_stdout, clippy::print_stderr))]

pub mod agents;
pub mod call;
pub mod checks;
pub mod cli_agents;
pub mod conductor;
pub mod config;
pub mod definition;
pub mod error;
pub mod events;
pub mod gc;
pub mod git;
pub mod interrupt;
pub mod journal;
pub mod prompt;
pub mod subject;
pub mod workflow;

pub use error::{Error, Result};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A lock that a panicking thread poisoned still guards valid data here (every update is a
/// single push or field change), so carry on with it rather than panic in turn.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
