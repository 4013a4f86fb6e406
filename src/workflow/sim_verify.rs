//! The simulated agent for verify-queue phases: writes its output file incrementally and ends with
//! the summary block (or omits it, or dies mid-phase, as the scenario says).

use std::path::Path;

use super::sim::Scenario;
use crate::error::Result;

/// Act on `prompt` if it is one of ours; `None` when it is not.
pub fn run(_prompt: &str, _cwd: &Path, _scenario: &Scenario) -> Result<Option<u8>> {
    Ok(None)
}
