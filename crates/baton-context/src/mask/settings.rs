//! `[mask]` of baton.toml: the hooks' threshold and routes, scratch redaction and retention.

use super::retention;

/// `[mask]` of baton.toml.
#[derive(Debug, Clone, Default, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MaskConfig {
    /// Redact secrets in the scratch file too (`--redact-scratch`); by default it keeps the
    /// full text (mode 0600, gitignored).
    pub redact_scratch: bool,
    /// Threshold of the hooks and the MCP server (`baton mask` takes `--threshold`).
    pub threshold: Option<usize>,
    /// Commands a pre-tool hook runs through `baton mask` first, for a CLI that cuts output
    /// before its post-tool hooks (codex): an entry matches a command starting with its words.
    /// Unset: test runners, builds, linters, diffs, logs and `cat` (cargo test/nextest/build/
    /// check/clippy, go test/build/vet, pytest, npm/yarn/pnpm test, jest, vitest, make, mvn,
    /// gradle, tsc, eslint, ruff, mypy, git diff/log, docker/kubectl logs, journalctl);
    /// empty: none.
    pub route: Option<Vec<String>>,
    /// Scratch files older than this many days are removed by `baton gc` (and after each
    /// `baton run`); unset: 7.
    pub keep_days: Option<u64>,
    /// Then the oldest go until `.baton/scratch` holds at most this many MB; unset: 1024.
    pub keep_mb: Option<u64>,
    /// A whole-file read by an agent (Claude's Read, gemini's read_file, `cat FILE`) of more
    /// tokens than this is answered with the file's first lines and its outline, and how to
    /// read more; a read with a line range, or the same file read whole again, gets all of
    /// it. Unset: 6000; 0: reads are never outlined.
    pub read_threshold: Option<usize>,
}

/// [`MaskConfig::read_threshold`] when unset.
pub const DEFAULT_READ_THRESHOLD: usize = 6000;

impl MaskConfig {
    /// The read threshold in effect; `None`: reads are never outlined.
    pub fn read_threshold(&self) -> Option<usize> {
        match self.read_threshold {
            Some(0) => None,
            Some(n) => Some(n),
            None => Some(DEFAULT_READ_THRESHOLD),
        }
    }

    /// The scratch retention these settings ask for.
    pub fn retention(&self) -> retention::Retention {
        retention::Retention {
            max_age: std::time::Duration::from_secs(
                self.keep_days.unwrap_or(7).saturating_mul(86_400),
            ),
            max_bytes: self.keep_mb.unwrap_or(1024).saturating_mul(1024 * 1024),
        }
    }
}
