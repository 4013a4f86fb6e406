//! Shared helpers: a real temp git repository and the real `baton` binary run inside it.

mod project;
mod runner;

pub use project::{Proj, assert_manifest_is_replay};
pub use runner::{bin, text};
