//! The real BMAD installer, `bmad-method` from the npm registry at the version `.ci/run`
//! pins, for tests that need a project exactly as `npx bmad-method install` leaves it (its
//! `_bmad/` configuration, the skills under `.claude/skills/` and `.agents/skills/`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The version `.ci/run` installs.
pub const VERSION: &str = "6.12.0";

/// The installer (`BATON_BMAD_METHOD`: its executable), or `None` after printing why the test
/// skips (a failure instead with `BATON_REQUIRE_BMAD_METHOD=1`, as CI sets it).
pub fn installer() -> Option<PathBuf> {
    let found = std::env::var_os("BATON_BMAD_METHOD")
        .map(PathBuf::from)
        .filter(|p| {
            Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == VERSION)
        });
    if found.is_none() {
        let why = format!(
            "the BMAD installer {VERSION} is not installed (npm install bmad-method@{VERSION}, then BATON_BMAD_METHOD=…/node_modules/.bin/bmad-method)"
        );
        if std::env::var("BATON_REQUIRE_BMAD_METHOD").as_deref() == Ok("1") {
            panic!("BATON_REQUIRE_BMAD_METHOD=1 but {why}");
        }
        println!("skipped: {why}");
    }
    found
}

/// BMAD's bmm module installed into `dir` for claude and codex, non-interactively; false
/// (the test skips) without the installer.
pub fn install(dir: &Path) -> bool {
    let Some(bin) = installer() else {
        return false;
    };
    let o = Command::new(bin)
        .args(["install", "--directory"])
        .arg(dir)
        .args([
            "--modules",
            "bmm",
            "--tools",
            "claude-code,codex",
            "--user-name",
            "Tester",
            "--yes",
        ])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "bmad-method install failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    for installed in [
        "_bmad/bmm/config.yaml",
        ".claude/skills/bmad-build-auto/SKILL.md",
        ".agents/skills/bmad-build-auto/SKILL.md",
    ] {
        assert!(
            dir.join(installed).is_file(),
            "the installer wrote no {installed}"
        );
    }
    true
}
