//! Token usage of an agent call, as the CLI reports it.

use serde::{Deserialize, Serialize};

/// Token usage. The four counts do not overlap: the prompt's full size is
/// `input + cache_creation + cache_read` ([`Usage::prompt_tokens`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    pub input: u64,
    pub cache_creation: u64,
    pub cache_read: u64,
    /// Output tokens (gemini: candidates + thoughts).
    pub output: u64,
}

impl Usage {
    pub fn prompt_tokens(&self) -> u64 {
        self.input + self.cache_creation + self.cache_read
    }
    /// Prompt and output together.
    pub fn total(&self) -> u64 {
        self.prompt_tokens() + self.output
    }
    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.cache_creation += other.cache_creation;
        self.cache_read += other.cache_read;
        self.output += other.output;
    }
}
