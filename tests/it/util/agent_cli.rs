//! The real agent CLIs (npm: `@anthropic-ai/claude-code`, `@openai/codex`,
//! `@google/gemini-cli`) for the tests that drive them against the model double: found in
//! `BATON_AGENT_CLIS` (a folder of their executables, as `.ci/run` installs them), else on PATH.
//! Absent, a test prints why it skips, or fails when `BATON_REQUIRE_AGENT_CLIS=1` (CI).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The CLI's executable, or `None` after printing why the test is skipped.
pub fn agent_cli(name: &str) -> Option<PathBuf> {
    super::neutral_env();
    let found = match std::env::var_os("BATON_AGENT_CLIS") {
        Some(dir) => Some(Path::new(&dir).join(name)).filter(|p| p.is_file()),
        None => std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        }),
    };
    let runs = found.as_ref().is_some_and(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if runs {
        return found;
    }
    let why = format!(
        "the {name} CLI is not installed (npm install -g of its package, or BATON_AGENT_CLIS=DIR)"
    );
    if std::env::var("BATON_REQUIRE_AGENT_CLIS").as_deref() == Ok("1") {
        panic!("BATON_REQUIRE_AGENT_CLIS=1 but {why}");
    }
    println!("skipped: {why}");
    None
}

/// PATH with `first` before the caller's: the folders of the baton under test and of the agent
/// CLI, as a user who installed them has it.
pub fn path_with(first: &[&Path]) -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> = first.iter().map(|p| p.to_path_buf()).collect();
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).expect("PATH entries")
}
