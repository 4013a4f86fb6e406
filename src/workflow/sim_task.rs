//! The simulated agent for task workflows (orchestrate, poc, graduate): architect, design audit, spec,
//! implementation, tests, audits — recognised by the prompt's own marker lines.

use std::path::Path;

use super::sim::Scenario;
use crate::error::Result;

/// Act on `prompt` if it is one of ours; `None` when it is not.
pub fn run(_prompt: &str, _cwd: &Path, _scenario: &Scenario) -> Result<Option<u8>> {
    Ok(None)
}
