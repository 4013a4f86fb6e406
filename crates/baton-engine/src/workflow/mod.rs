//! The run engines, one folder each with its definition: `epic` (epic-execute, epic-chain,
//! parallel stories, BMAD projects), `task` (orchestrate, poc, graduate: gates and waves) and
//! `verify` (queues of items through a pipeline of sub-agents). What they share is in
//! `crate`.

pub mod epic;
pub mod task;
pub mod verify;

use std::path::Path;

use crate::error::Result;

/// A workflow definition's source and text as written, whatever its kind, not parsed: what
/// `baton workflow show` prints, so a broken override can still be read to be fixed.
pub fn definition_text(name: &str, override_dir: &Path) -> Result<(String, String)> {
    let builtins: &[(&str, &str)] = if task::def::is_builtin(name) {
        task::def::BUILTIN
    } else if name == "verify" {
        &[("verify", verify::pipeline::BUILTIN)]
    } else {
        epic::def::BUILTIN
    };
    crate::definition::source_text(name, builtins, override_dir)
}
