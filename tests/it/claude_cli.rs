//! Conformance with the real `claude` CLI, when it is installed: it loads the settings and MCP
//! configuration baton writes (by `baton init` and for the runs baton launches) without a
//! configuration error. It cannot reach its API here: "Not logged in" is the expected end.

use std::process::Command;

use crate::util::{Proj, bin};

fn claude(p: &Proj, home: &std::path::Path, extra: &[String]) -> String {
    let o = Command::new("claude")
        .args(["-p", "hello", "--output-format", "json"])
        .args(extra)
        .current_dir(p.path())
        .env("HOME", home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("CLAUDECODE")
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn claude_loads_batons_settings_and_mcp_config() {
    if Command::new("claude").arg("--version").output().is_err() {
        println!(
            "skipped: the claude CLI is not installed (npm install -g @anthropic-ai/claude-code)"
        );
        return;
    }
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    let st = Command::new(bin())
        .args(["init", "claude"])
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(st.status.success());
    // A broken configuration is reported as such: the check below can fail.
    let bad = claude(
        &p,
        home.path(),
        &["--mcp-config".into(), r#"{"mcpServers": 5}"#.into()],
    );
    assert!(bad.contains("Invalid MCP configuration"), "{bad}");
    // The project files of `baton init`.
    let files = [
        "--settings".to_string(),
        ".claude/settings.json".into(),
        "--mcp-config".into(),
        ".mcp.json".into(),
    ];
    // The flags of a run baton launches.
    // Named explicitly: this test binary must never be the MCP server claude starts.
    let run = baton_agent::wiring::claude_run_args_with(&bin().display().to_string());
    for extra in [&files[..], &run[..]] {
        let out = claude(&p, home.path(), extra);
        assert!(!out.contains("Invalid"), "{out}");
        assert!(!out.to_lowercase().contains("error:"), "{out}");
        assert!(out.contains("Not logged in"), "{out}");
    }
}
