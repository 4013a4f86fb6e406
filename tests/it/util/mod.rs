//! Shared helpers: a real temp git repository, the real `baton` binary run inside it, and the
//! shared corpus.

mod corpus;
mod project;
mod runner;

pub use corpus::corpus;
pub(crate) use corpus::corpus_or_skip;
pub use project::{Proj, assert_manifest_is_replay};
pub use runner::{bin, text};
