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

// The counts are what a CLI printed: any u64 a stream holds. Sums saturate instead of
// overflowing (a panic in a debug build, a wrapped count in a release one; found by fuzzing).
impl Usage {
    pub fn prompt_tokens(&self) -> u64 {
        self.input
            .saturating_add(self.cache_creation)
            .saturating_add(self.cache_read)
    }
    /// Prompt and output together.
    pub fn total(&self) -> u64 {
        self.prompt_tokens().saturating_add(self.output)
    }
    pub fn add(&mut self, other: &Usage) {
        self.input = self.input.saturating_add(other.input);
        self.cache_creation = self.cache_creation.saturating_add(other.cache_creation);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.output = self.output.saturating_add(other.output);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `agent_streams` fuzz target: a claude `assistant` line with
    /// `"input_tokens": 18446744073709551615` and a cache count overflowed the prompt's sum.
    #[test]
    fn counts_a_stream_makes_up_saturate_instead_of_overflowing() {
        let mut u = Usage {
            input: u64::MAX,
            cache_creation: 7,
            cache_read: 1,
            output: 2,
        };
        assert_eq!(u.prompt_tokens(), u64::MAX);
        assert_eq!(u.total(), u64::MAX);
        u.add(&Usage {
            input: 1,
            cache_creation: u64::MAX,
            cache_read: 0,
            output: 1,
        });
        assert_eq!(
            (u.input, u.cache_creation, u.output),
            (u64::MAX, u64::MAX, 3)
        );
    }
}
