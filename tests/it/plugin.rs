//! The Claude Code plugin this repository publishes (`.claude-plugin/marketplace.json`,
//! `plugin/`): the committed files are what baton generates, the real CLI validates and
//! installs them into a fresh HOME, and a session with the plugin alone (no `baton init`)
//! masks a large output and offers baton's MCP tools.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::util::model_double::ModelDouble;
use crate::util::real_agent::{CLAUDE, generated, last_tool_result, one_call};
use crate::util::scripted_agent::GEN;
use crate::util::{Proj, text};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `BATON_BLESS=1` writes the generated files instead of comparing.
#[test]
fn the_committed_plugin_is_what_baton_generates() {
    let files = baton::init::plugin_files();
    let bless = std::env::var_os("BATON_BLESS").is_some();
    for (rel, text) in &files {
        let path = repo().join(rel);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (BATON_BLESS=1 cargo test plugin writes it)",
                rel.display()
            )
        });
        assert_eq!(
            &committed,
            text,
            "{} is out of date: BATON_BLESS=1 cargo test plugin",
            rel.display()
        );
    }
    // Nothing else in the plugin's folder.
    let mut on_disk = vec![];
    let mut stack = vec![repo().join("plugin")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                on_disk.push(e.path().strip_prefix(repo()).unwrap().to_path_buf());
            }
        }
    }
    on_disk.sort();
    let mut wanted: Vec<PathBuf> = files
        .iter()
        .map(|(p, _)| p.clone())
        .filter(|p| p.starts_with("plugin"))
        .collect();
    wanted.sort();
    assert_eq!(on_disk, wanted);
}

fn claude(cli: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(cli)
        .args(args)
        .env("HOME", home)
        .env_remove("CLAUDECODE")
        .env_remove("ANTHROPIC_API_KEY")
        .current_dir(home)
        .output()
        .unwrap()
}

#[test]
fn claude_validates_the_marketplace_and_the_plugin() {
    let Some(cli) = CLAUDE.cli() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    for target in [repo(), repo().join("plugin")] {
        let o = claude(
            &cli,
            home.path(),
            &[
                "plugin",
                "validate",
                "--strict",
                &target.display().to_string(),
            ],
        );
        assert!(o.status.success(), "{}: {}", target.display(), text(&o));
    }
}

/// `claude plugin marketplace add <this repository>`, then `claude plugin install baton@baton`,
/// in the fresh HOME `h`.
fn install_plugin(cli: &Path, h: &Path) {
    let repo = repo().display().to_string();
    for args in [
        &["plugin", "marketplace", "add", repo.as_str()][..],
        &["plugin", "install", "baton@baton"],
    ] {
        let o = claude(cli, h, args);
        assert!(o.status.success(), "{}", text(&o));
    }
}

/// A session the user starts in `p` (trusted in `h`'s ~/.claude.json, whatever else it holds)
/// whose model runs `sh gen.sh AT` (a 200 KB test output, the failing test at line AT): what
/// the model was shown is masked by baton, with the failing test; the double, for more checks.
fn masked_session(cli: &Path, h: &Path, p: &Proj, at: usize) -> ModelDouble {
    let cfg = h.join(".claude.json");
    let mut v: serde_json::Value = std::fs::read_to_string(&cfg)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(json!({}));
    v["projects"][p.path().to_string_lossy().as_ref()] = json!({"hasTrustDialogAccepted": true});
    std::fs::write(&cfg, v.to_string()).unwrap();
    let cmd = format!("sh gen.sh {at}");
    let double = CLAUDE.double(one_call(
        "Bash",
        json!({"command": cmd, "description": "run the tests"}),
    ));
    let out = CLAUDE
        .env(Command::new(cli), cli, p.path(), h, &double)
        .args(["-p", "run the tests", "--output-format", "stream-json"])
        .args(["--verbose", "--allowedTools", &format!("Bash({cmd})")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let seen = last_tool_result(&double);
    let chars = seen.chars().count();
    assert!(chars <= 8_000, "{chars} chars: {seen}");
    assert!(seen.contains("tests::the_failing_one"), "{seen}");
    // baton's hook, not Claude's own cut (its head would be 30,000 characters).
    assert!(seen.contains("baton masked this output"), "{seen}");
    assert!(generated(p.path(), at).len() > 200_000);
    double
}

#[test]
fn a_fresh_home_installs_the_plugin_and_a_session_masks_and_offers_batons_tools() {
    let Some(cli) = CLAUDE.cli() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    install_plugin(&cli, home.path());
    // A project with no `baton init`.
    let p = Proj::new();
    std::fs::write(p.path().join("gen.sh"), GEN).unwrap();
    assert!(!p.path().join(".claude").exists() && !p.path().join(".mcp.json").exists());
    let double = masked_session(&cli, home.path(), &p, 3699);
    let tools = double.requests().last().unwrap().tools();
    for t in ["mask", "status", "retrieve"] {
        let name = format!("mcp__plugin_baton_baton__{t}");
        assert!(tools.contains(&name), "{name} not in {tools:?}");
    }
}

/// `baton init claude --global` reaches a project that has no `baton init`; in one that has, an
/// output is masked once (the user-level hook steps aside), and with the plugin installed too.
#[test]
fn user_level_wiring_masks_everywhere_and_never_twice() {
    let Some(cli) = CLAUDE.cli() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let p = Proj::new();
    let global = p
        .cmd(&["init", "claude", "--global"])
        .env("HOME", h)
        .output()
        .unwrap();
    assert!(global.status.success(), "{}", text(&global));
    install_plugin(&cli, h);
    std::fs::write(p.path().join("gen.sh"), GEN).unwrap();
    // User level and plugin, no project init: one mask, the user-level hook's.
    masked_session(&cli, h, &p, 0);
    assert_eq!(p.mask_records(), 1);
    // The project's own init too: still one mask per output.
    let o = p.cmd(&["init", "claude"]).env("HOME", h).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    masked_session(&cli, h, &p, 1850);
    assert_eq!(p.mask_records(), 2);
}
