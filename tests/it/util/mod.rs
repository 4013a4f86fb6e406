//! Shared helpers: a real temp git repository (`Proj`), the real `baton` binary run inside it,
//! `Test` (one run and its exact expected output), checked-in fixtures and the shared corpus.

mod agent_cli;
pub mod bmad_installer;
mod corpus;
mod fixtures;
pub mod model_double;
pub mod pg;
mod project;
pub mod real_agent;
mod runner;
pub mod scripted_agent;
mod test;
pub mod turn;

pub use agent_cli::{agent_cli, path_with};
pub use corpus::corpus;
pub(crate) use corpus::corpus_or_skip;
pub use fixtures::{copy_dir, fixture};
pub use project::{Proj, assert_manifest_is_replay, snapshot};
pub use runner::{
    NOTIFY_TO_FILE, assert_exit, bin, demo_epic_2, demo_repo, demo_story_path, git, heard,
    json_lines, neutral_env, no_backoff, run_in, text,
};
pub use test::Test;

/// `baton run epic-execute 1` with the simulated agent: the run most tests start.
pub const EPIC_SIM: [&str; 5] = ["run", "epic-execute", "1", "--agent", "sim"];

/// Whether git succeeds in `dir`.
pub fn git_ok(dir: &std::path::Path, args: &[&str]) -> bool {
    std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The file in which the simulated agent's hanging call writes its pid, under `.baton/` of
/// its working directory: the project's, or a run's own worktree's. None until written.
pub fn sim_hang_pid(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let name = ".baton/sim-hang.pid";
    let mut places = vec![dir.join(name)];
    if let Ok(runs) = std::fs::read_dir(dir.join(".baton/worktrees")) {
        places.extend(runs.flatten().map(|r| r.path().join("@run").join(name)));
    }
    places.into_iter().find(|p| p.is_file())
}

/// Where a run in `dir` works: the newest run's own worktree (`.baton/worktrees/<id>/@run`)
/// while it exists, else `dir` itself.
pub fn work_dir(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir.join(".baton/worktrees"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("@run"))
        .filter(|t| t.join(".git").is_file())
        .max()
        .unwrap_or_else(|| dir.to_path_buf())
}

/// The demo project (see [`demo_repo`]) in a temporary folder of its own, with `scenario`.
pub fn temp_demo(scenario: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("p");
    demo_repo(&dir, scenario);
    (t, dir)
}

/// The id of the newest run in the project at `dir`.
pub fn newest_run_id(dir: &std::path::Path) -> String {
    std::fs::read_dir(dir.join(".baton/runs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .max()
        .unwrap()
}
