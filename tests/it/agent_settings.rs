//! `[agents.*]` in baton.toml: each CLI gets its own model names, flags and environment, and
//! a setting the CLI has no flag for is refused before anything runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::assert_exit;
use crate::util::{EPIC_SIM, bin, fixture, text};

/// The demo project on a branch of its own, with `baton_toml` as its baton.toml (written after
/// the commit: the user's own file, dirty before the run).
fn project(tmp: &Path, baton_toml: &str) -> PathBuf {
    let dir = tmp.join("p");
    crate::util::demo_repo(&dir, "");
    std::fs::write(dir.join("baton.toml"), baton_toml).unwrap();
    dir
}

/// A `codex` on PATH that records its argv (one argument a line, calls separated by `--end--`)
/// and `$FOO`, then answers as real codex does to a model it does not know.
fn recording_codex(tmp: &Path) -> PathBuf {
    let bin_dir = tmp.join("fake-bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let script = bin_dir.join("codex");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat >/dev/null\nfor a in \"$@\"; do echo \"$a\" >> \"{dir}/argv\"; done\n\
             echo \"FOO=$FOO\" >> \"{dir}/argv\"\necho \"DB=$BATON_DATABASE_URL\" >> \"{dir}/argv\"\n\
             echo --end-- >> \"{dir}/argv\"\ncat \"{fx}\"\n",
            dir = bin_dir.display(),
            fx = fixture("agents/codex/model_not_found.jsonl").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin_dir
}

fn run(dir: &Path, fake: &Path, args: &[&str]) -> (Output, Vec<String>) {
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let o = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("BATON_AGENT_SIM")
        // A worker's database password: never handed to an agent.
        .env("BATON_DATABASE_URL", "postgres://u:secret@db/q")
        .output()
        .unwrap();
    let argv = std::fs::read_to_string(fake.join("argv")).unwrap_or_default();
    (o, argv.lines().map(str::to_string).collect())
}

#[test]
fn claude_model_names_never_reach_codex() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(tmp.path(), "");
    let fake = recording_codex(tmp.path());
    let (o, argv) = run(
        &dir,
        &fake,
        &["run", "epic-execute", "1", "--agent", "codex"],
    );
    // The dev role's tier is `standard`; codex has no model mapped for it: its own default.
    assert!(!argv.iter().any(|a| a == "--model"), "{argv:?}");
    assert!(
        !argv
            .iter()
            .any(|a| ["opus", "sonnet", "haiku"].contains(&a.as_str()))
    );
    assert_eq!(
        argv[..4],
        ["exec", "--json", "--sandbox", "workspace-write"]
    );
    // The fake still says the model is unknown: the run stops at once and says what to change.
    assert_exit(&o, 7);
    assert_eq!(argv.iter().filter(|a| *a == "--end--").count(), 1);
}

#[test]
fn a_tier_becomes_the_agent_s_mapped_model_and_its_flags_and_env_are_passed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = project(
        tmp.path(),
        "[agents.codex]\nargs = [\"-c\", \"model_reasoning_effort=high\"]\nenv = { FOO = \"bar\" }\n\
         sandbox = \"danger-full-access\"\n\
         [agents.codex.models]\nstandard = \"gpt-5-codex\"\n",
    );
    let fake = recording_codex(tmp.path());
    let (o, argv) = run(
        &dir,
        &fake,
        &["run", "epic-execute", "1", "--agent", "codex"],
    );
    assert_exit(&o, 7);
    assert_eq!(
        argv,
        [
            "exec",
            "--json",
            "--model",
            "gpt-5-codex",
            "--sandbox",
            "danger-full-access",
            "-c",
            &format!(
                "mcp_servers.baton={{command=\"{}\",args=[\"mcp\"],default_tools_approval_mode=\"approve\"}}",
                bin().display()
            ),
            "-c",
            "model_reasoning_effort=high",
            "-",
            "FOO=bar",
            "DB=",
            "--end--"
        ]
    );
}

#[test]
fn a_named_agent_runs_a_role_with_its_own_settings() {
    let tmp = tempfile::tempdir().unwrap();
    // `--agent` is not given: the dev role goes to a second configuration of codex (the
    // others to the simulated agent: no other CLI needs to be installed).
    let dir = project(
        tmp.path(),
        "[run]\ndefault_agent = \"sim\"\n[agents.codex-deep]\nkind = \"codex\"\n[agents.codex-deep.models]\nstandard = \"o3\"\n\
         [run.roles.dev]\nagent = \"codex-deep\"\n",
    );
    let fake = recording_codex(tmp.path());
    let (o, argv) = run(&dir, &fake, &["run", "epic-execute", "1"]);
    let out = text(&o);
    assert_exit(&o, 7);
    assert_eq!(argv[..4], ["exec", "--json", "--model", "o3"], "{argv:?}");
    assert!(
        out.contains("codex-deep cannot run the dev phase of story 1.1"),
        "{out}"
    );
}

#[test]
fn agent_settings_a_cli_has_no_flag_for_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    for (toml, says) in [
        (
            "[agents.codex]\npermission_mode = \"plan\"\n",
            "[agents.codex] has `permission_mode`, which the codex agent has no flag for",
        ),
        (
            "[agents.gemini]\nsandbox = \"on\"\n",
            "[agents.gemini] has `sandbox`, which the gemini agent has no flag for",
        ),
        (
            "[agents.mine]\nargs = [\"x\"]\n",
            "[agents.mine] has a `command` agent without `program`",
        ),
        (
            "[agents.claude]\nmodels = { huge = \"x\" }\n",
            "unknown variant `huge`",
        ),
    ] {
        let dir = tmp.path().join(format!("p{}", says.len()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("baton.toml"), toml).unwrap();
        let o = Command::new(bin())
            .args(EPIC_SIM)
            .current_dir(&dir)
            .output()
            .unwrap();
        let out = text(&o);
        assert_exit(&o, 5);
        assert!(out.contains("baton.toml") && out.contains(says), "{out}");
        assert!(!dir.join(".baton").exists(), "nothing was created: {out}");
    }
}

/// `baton demo --no-run`: the project to try a real agent on (the conformance check's).
#[test]
fn demo_no_run_creates_the_project_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("try");
    let o = Command::new(bin())
        .args(["demo", "--no-run", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(
        text(&o),
        format!(
            "demo project: {0} (branch epic-1)\nrun it: cd {0} && baton run epic-execute 1 --agent claude|codex|gemini|sim\n",
            dir.display()
        )
    );
    let head = Command::new("git")
        .args(["log", "--oneline"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&head.stdout).lines().count(), 1);
    assert!(!dir.join(".baton/runs").exists());
    let listed = Command::new(bin())
        .args(["stories", "1"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(text(&listed).contains("1.4"), "{}", text(&listed));
}
