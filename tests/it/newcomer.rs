//! What a newcomer trips on: a mistyped story, flag or folder is refused (exit 2) with the
//! value named and nothing run, changed or committed; a missing agent CLI stops the run before
//! its first phase (exit 7); `--dry-run` shows the same pre-flight.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::assert_exit;
use crate::util::{EPIC_SIM, bin, git, text};

struct Repo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

/// The demo's epic 1 (4 stories) on branch epic-1, and an epic 2 of one story.
fn repo() -> Repo {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    crate::util::demo_repo(&dir, "");
    crate::util::demo_epic_2(&dir);
    Repo { _tmp: tmp, dir }
}

impl Repo {
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        crate::util::run_in(&self.dir, args, env)
    }

    /// The work tree's files (git's own folder aside), HEAD and git's status.
    fn state(&self) -> (BTreeMap<PathBuf, Vec<u8>>, String, String) {
        let files = crate::util::snapshot(&self.dir)
            .into_iter()
            .filter(|(p, _)| !p.starts_with(self.dir.join(".git")))
            .collect();
        (
            files,
            git(&self.dir, &["rev-parse", "HEAD"]),
            git(&self.dir, &["status", "--porcelain"]),
        )
    }

    /// Run, require exit `code` and an error naming `says`, and require nothing changed.
    fn refused(&self, args: &[&str], env: &[(&str, &str)], code: i32, says: &str) -> String {
        let before = self.state();
        let o = self.run(args, env);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains(says), "{args:?} should say {says:?}: {err}");
        assert!(err.contains("hint: "), "and what to do next: {err}");
        assert!(
            before == self.state(),
            "{args:?} changed the project although refused"
        );
        let runs = std::fs::read_dir(self.dir.join(".baton/runs")).map_or(0, |d| d.count());
        assert_eq!(runs, 0, "no run was started");
        err
    }

    fn commits(&self) -> Vec<String> {
        git(&self.dir, &["log", "--format=%s", "main..HEAD"])
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

#[test]
fn a_story_that_is_not_there_is_refused_naming_it_and_the_real_ones() {
    let r = repo();
    let err = r.refused(
        &with(&EPIC_SIM, &["--start-from", "1.9"]),
        &[],
        2,
        "--start-from 1.9: no story `1.9` in epic 1 (its stories: 1.1, 1.2, 1.3, 1.4)",
    );
    assert!(err.contains("baton stories 1"), "{err}");
    r.refused(
        &with(&EPIC_SIM, &["--only", "1.2,2.1"]),
        &[],
        2,
        "--only 2.1: no story `2.1` in epic 1",
    );
    // The dry run refuses the same: it shows what a run would do.
    r.refused(
        &with(&EPIC_SIM, &["--start-from", "1.9", "--dry-run"]),
        &[],
        2,
        "no story `1.9`",
    );
}

#[test]
fn only_runs_the_stories_named_and_counts_the_others_as_skipped() {
    let r = repo();
    let o = r.run(&with(&EPIC_SIM, &["--only", "1.2", "--json"]), &[]);
    assert!(o.status.success(), "{}", text(&o));
    let feats: Vec<String> = r
        .commits()
        .into_iter()
        .filter(|s| s.starts_with("feat(story"))
        .collect();
    assert_eq!(feats.len(), 1, "{feats:?}");
    assert!(feats[0].starts_with("feat(story 1.2)"), "{feats:?}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let end = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "run_finished")
        .unwrap();
    let stories = end["summary"]["epics"][0]["stories"].as_array().unwrap();
    let skipped: Vec<(&str, &str)> = stories
        .iter()
        .filter(|s| s["result"] == "skipped")
        .map(|s| (s["id"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        skipped,
        [
            ("1.1", "not in --only"),
            ("1.3", "not in --only"),
            ("1.4", "not in --only")
        ]
    );
}

#[test]
fn start_from_in_a_chain_skips_the_earlier_epic_whole_uat_included() {
    let r = repo();
    let o = r.run(
        &[
            "run",
            "epic-chain",
            "1",
            "2",
            "--agent",
            "sim",
            "--start-from",
            "2.1",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let log = r.commits();
    assert!(
        log.iter().any(|s| s.starts_with("feat(story 2.1)")),
        "{log:?}"
    );
    assert!(
        !log.iter().any(|s| s.contains("1.") || s.contains("epic 1")),
        "nothing of epic 1 ran, not even its UAT: {log:?}"
    );
    assert!(!r.dir.join("docs/uat/epic-1-uat.md").exists());
    assert!(r.dir.join("docs/uat/epic-2-uat.md").exists());
}

#[test]
fn an_unreadable_story_or_epic_file_is_refused_not_dropped() {
    let r = repo();
    let story = crate::util::demo_story_path(&r.dir, "1.3");
    let original = std::fs::read(&story).unwrap();
    let mut bytes = original.clone();
    bytes.extend_from_slice(b"\nCaf\xe9 au lait\n");
    std::fs::write(&story, &bytes).unwrap();
    let name = story.strip_prefix(&r.dir).unwrap().display().to_string();
    r.refused(
        &EPIC_SIM,
        &[],
        2,
        &format!("{name}: not UTF-8 (invalid byte at offset"),
    );
    // Another epic's runs are not held up by it.
    let o = r.run(
        &["run", "epic-execute", "2", "--agent", "sim", "--dry-run"],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    // An empty one (a truncating write): a story lost, not a story skipped.
    std::fs::write(&story, "").unwrap();
    let err = r.refused(
        &EPIC_SIM,
        &[],
        2,
        &format!("{name}: empty file; it is a document of epic 1"),
    );
    assert!(err.contains("git restore"), "{err}");
    // Two files of one story: it would run twice.
    std::fs::write(&story, &original).unwrap();
    let s2 = crate::util::demo_story_path(&r.dir, "1.2");
    std::fs::copy(&s2, r.dir.join("docs/stories/1-2-copy.md")).unwrap();
    r.refused(
        &EPIC_SIM,
        &[],
        3,
        "story 1.2 has 2 story files: docs/stories/1-2-copy.md",
    );
    std::fs::remove_file(r.dir.join("docs/stories/1-2-copy.md")).unwrap();
    // An epic's own file, too.
    std::fs::write(r.dir.join("docs/epics/epic-1.md"), b"# Epic 1: \xff\n").unwrap();
    r.refused(&EPIC_SIM, &[], 2, "docs/epics/epic-1.md: not UTF-8");
}

#[test]
fn a_mistyped_root_is_not_taken_for_an_empty_store() {
    let r = repo();
    r.refused(
        &["status", "--root", "docs/orchestratr"],
        &[],
        2,
        "--root docs/orchestratr: no such folder",
    );
    r.refused(
        &["history", "--root", "README.md"],
        &[],
        2,
        "--root README.md: not a folder",
    );
    // Creating the first task there is what makes a store.
    let o = r.run(&["task", "init", "x", "--root", "elsewhere/store"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(r.dir.join("elsewhere/store").is_dir());
}

/// A PATH without any agent CLI (git is still found through its full path by baton's callers).
fn bare_path(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["git", "sh"] {
        let at = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .unwrap();
        let at = String::from_utf8(at.stdout).unwrap();
        std::os::unix::fs::symlink(at.trim(), bin.join(tool)).unwrap();
    }
    bin.display().to_string()
}

#[test]
fn a_missing_agent_cli_stops_the_run_before_its_first_phase() {
    let r = repo();
    let tmp = tempfile::tempdir().unwrap();
    let path = bare_path(tmp.path());
    let env = [("PATH", path.as_str())];
    let err = r.refused(
        &["run", "epic-execute", "1"],
        &env,
        7,
        "error: agent CLI `claude` is not installed (not found on PATH)",
    );
    assert!(
        err.contains("npm install -g @anthropic-ai/claude-code"),
        "{err}"
    );
    // A verify run checks the same before it starts.
    let o = r.run(&["queue", "add", "q", "A"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    r.refused(
        &["run", "verify", "--queue", "q", "--agent", "codex"],
        &env,
        7,
        "agent CLI `codex` is not installed",
    );
    // So do a task run and a plan run: no phase started, no journal, the task as it was.
    std::fs::write(r.dir.join("req.md"), "# R\n\n## Problem\nslow\n").unwrap();
    for args in [
        &["task", "init", "Add login"][..],
        &[
            "store",
            "discovery",
            "--task-id",
            "REQUIREMENTS",
            "--file",
            "req.md",
        ],
        &[
            "store",
            "discovery",
            "--task-id",
            "TECHNICAL_DESIGN",
            "--file",
            "req.md",
        ],
    ] {
        let o = r.run(args, &[]);
        assert!(o.status.success(), "{}", text(&o));
    }
    r.refused(
        &["run", "orchestrate", "add-login", "--agent", "gemini"],
        &env,
        7,
        "agent CLI `gemini` is not installed",
    );
    r.refused(
        &["plan", "add-login", "--agent", "gemini"],
        &env,
        7,
        "agent CLI `gemini` is not installed",
    );
    // The dry run shows it, with each agent it would call, and what a real run would refuse.
    git(&r.dir, &["switch", "-q", "main"]);
    let o = r.run(&["run", "epic-execute", "1", "--dry-run"], &env);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("pre-flight:\n  agent claude: NOT RUNNABLE, a run would stop (exit 7): agent CLI `claude` is not installed (not found on PATH): install it (npm install -g @anthropic-ai/claude-code)"),
        "{out}"
    );
    assert!(
        out.contains("  works: in a worktree of its own; its commits stay on its branch (`main` is protected)"),
        "{out}"
    );
    // In place, it would be refused.
    let o = r.run(
        &["run", "epic-execute", "1", "--dry-run", "--in-place"],
        &env,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("  a run would refuse: refusing to commit on the protected branch `main`"),
        "{out}"
    );
}

#[test]
fn the_dry_run_names_each_agent_cli_it_found_with_its_version() {
    let r = repo();
    let tmp = tempfile::tempdir().unwrap();
    let path = bare_path(tmp.path());
    let claude = tmp.path().join("bin/claude");
    std::fs::write(&claude, "#!/bin/sh\necho '2.1.197 (Claude Code)'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = r.run(
        &["run", "epic-execute", "1", "--dry-run", "--json"],
        &[("PATH", &path), ("ANTHROPIC_API_KEY", "sk-test")],
    );
    assert!(o.status.success(), "{}", text(&o));
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["event"], "preflight");
    assert_eq!(first["agents"][0]["agent"], "claude");
    assert_eq!(first["agents"][0]["found"], claude.display().to_string());
    assert_eq!(first["agents"][0]["version"], "2.1.197 (Claude Code)");
    assert_eq!(
        first["agents"][0]["credentials"],
        "found ($ANTHROPIC_API_KEY)"
    );
    assert_eq!(first["refusals"], serde_json::json!([]));
    // An agent command of the user's own is found, never started: a dry run runs no agent.
    let mine = tmp.path().join("bin/mine");
    let called = tmp.path().join("called");
    std::fs::write(&mine, format!("#!/bin/sh\n: > '{}'\n", called.display())).unwrap();
    std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        r.dir.join("baton.toml"),
        format!("[agents.mine]\nprogram = \"{}\"\n", mine.display()),
    )
    .unwrap();
    let o = r.run(
        &[
            "run",
            "epic-execute",
            "1",
            "--agent",
            "mine",
            "--dry-run",
            "--json",
        ],
        &[("PATH", &path)],
    );
    assert!(o.status.success(), "{}", text(&o));
    let first: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(first["agents"][0]["found"], mine.display().to_string());
    assert!(first["agents"][0]["version"].is_null(), "{first}");
    assert!(!called.exists(), "the dry run started the agent command");
}

#[test]
fn a_baton_toml_above_the_repository_does_not_move_the_store_out_of_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("baton.toml"),
        "[paths]\nroot = \"store-outside\"\n",
    )
    .unwrap();
    let dir = tmp.path().join("p");
    crate::util::demo_repo(&dir, "");
    let r = Repo { _tmp: tmp, dir };
    let o = r.run(&["task", "init", "Add login"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "warning: ignoring {}: it is outside this repository",
            r.dir.parent().unwrap().join("baton.toml").display()
        )),
        "{err}"
    );
    assert!(
        r.dir
            .join("docs/orchestrator/context/tasks/add-login")
            .is_dir()
    );
    assert!(!r.dir.parent().unwrap().join("store-outside").exists());
    let o = r.run(&["stories", "1"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("1.4"),
        "{}",
        text(&o)
    );
}

#[test]
fn the_users_config_lies_under_the_projects_and_config_says_which_set_what() {
    let r = repo();
    let xdg = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(xdg.path().join("baton")).unwrap();
    let user = xdg.path().join("baton/config.toml");
    std::fs::write(&user, "[budget]\nwindow = 100000\ntarget = 0.6\n").unwrap();
    std::fs::write(r.dir.join("baton.toml"), "[budget]\nwindow = 150000\n").unwrap();
    let env = [("XDG_CONFIG_HOME", xdg.path().to_str().unwrap())];
    let o = r.run(&["config", "--json"], &env);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let value = |k: &str| {
        v["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"] == k)
            .map(|e| (e["value"].as_str().unwrap().to_string(), e["from"].clone()))
            .unwrap()
    };
    assert_eq!(value("budget.window"), ("150000".into(), "project".into()));
    assert_eq!(value("budget.target"), ("0.6".into(), "user".into()));
    assert_eq!(
        value("budget.warning"),
        ("0.4".into(), serde_json::Value::Null)
    );
    assert_eq!(v["files"][0]["path"], user.display().to_string());
    assert_eq!(v["files"][1]["level"], "project");
    // Keys left unset (baton decides their default) are listed too, not left out.
    assert_eq!(
        value("mask.threshold"),
        ("unset".into(), serde_json::Value::Null)
    );
    let human = String::from_utf8(r.run(&["config"], &env).stdout).unwrap();
    assert!(human.contains("\nbudget.target = 0.6 "), "{human}");
    assert!(human.contains("# user\n"), "{human}");
    for key in [
        "mask.threshold",
        "mask.keep_days",
        "mask.keep_mb",
        "mask.read_threshold",
    ] {
        assert!(
            human.contains(&format!("\n{key} = unset ")),
            "{key} not listed: {human}"
        );
    }
    let reference = String::from_utf8(r.run(&["config", "--reference"], &env).stdout).unwrap();
    assert!(
        !reference.contains("super::"),
        "a Rust path in the reference"
    );
    // A mistake in the user's file is named as the user's, with the line and where the keys are.
    std::fs::write(&user, "[budget]\nwindow = 100000\nwindw = 3\n").unwrap();
    let err = r.refused(
        &["status"],
        &env,
        5,
        &format!("{} line 3: unknown field `windw`", user.display()),
    );
    assert!(err.contains("baton config --reference"), "{err}");
}

#[test]
fn the_key_reference_in_docs_is_the_one_the_code_generates() {
    let o = Command::new(bin())
        .args(["config", "--reference"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/CONFIG.md");
    assert!(
        std::fs::read(&file).unwrap() == o.stdout,
        "docs/CONFIG.md is out of date: baton config --reference > docs/CONFIG.md"
    );
}

/// A scratch file `name` of `bytes`, last written `days` ago.
fn scratch(dir: &Path, name: &str, bytes: usize, days: u64) -> PathBuf {
    let p = dir.join(".baton/scratch").join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, vec![b'x'; bytes]).unwrap();
    let ago = std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86_400);
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(ago)
        .unwrap();
    p
}

#[test]
fn gc_removes_old_scratch_but_never_what_a_run_or_the_current_task_uses() {
    let r = repo();
    let old = scratch(&r.dir, "20260101T000000-1-cargo.log", 1000, 30);
    let run_uses = scratch(&r.dir, "20260101T000000-2-pytest.log", 1000, 30);
    let task_uses = scratch(&r.dir, "20260101T000000-3-make.log", 1000, 30);
    let fresh = scratch(&r.dir, "20260101T000000-4-npm.log", 1000, 1);
    // A run that has not finished recorded one; the current task's architecture names another.
    let run = r.dir.join(".baton/runs/20990101T000000-abcdef");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("events.jsonl"), "{\"v\":2,\"seq\":1,\"ts\":\"2099-01-01T00:00:00Z\",\"event\":\"run_started\",\"run_id\":\"20990101T000000-abcdef\",\"workflow\":\"epic-execute\",\"subjects\":[\"1\"],\"options\":{}}\n").unwrap();
    std::fs::write(run.join("masks.jsonl"), format!("{{\"v\":1,\"ts\":\"2099-01-01T00:00:00Z\",\"phase\":\"1-1.1-dev-1\",\"command\":\"pytest\",\"scratch\":\"{}\",\"tokens\":300,\"masked_tokens\":50}}\n", run_uses.display())).unwrap();
    // Today's records are in the project's mask log, with the run's id.
    let log_uses = scratch(&r.dir, "20260101T000000-6-jest.log", 1000, 30);
    std::fs::write(r.dir.join(".baton/masks.jsonl"), format!("{{\"v\":2,\"ts\":\"2099-01-01T00:00:00Z\",\"source\":\"cli\",\"run\":\"20990101T000000-abcdef\",\"command\":\"jest\",\"scratch\":\"{}\",\"tokens\":300,\"masked_tokens\":50}}\n", log_uses.display())).unwrap();
    std::fs::write(
        r.dir.join("a.md"),
        format!(
            "# Architecture\n\nThe failure is in {}\n",
            task_uses.display()
        ),
    )
    .unwrap();
    for args in [
        &["task", "init", "Add login"][..],
        &["store", "architect", "--file", "a.md"],
    ] {
        let o = r.run(args, &[]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = r.run(&["gc", "--dry-run"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("would remove 1 of 5 scratch files"),
        "{out}"
    );
    assert!(
        out.contains(
            ".baton/scratch/20260101T000000-1-cargo.log  0.0 MB  older than the age limit"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "kept .baton/scratch/20260101T000000-2-pytest.log: a run or the current task uses it"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "kept .baton/scratch/20260101T000000-3-make.log: a run or the current task uses it"
        ),
        "{out}"
    );
    assert!(old.exists(), "a dry run removes nothing");
    let o = r.run(&["gc", "--json"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["plan"]["remove"][0]["reason"], "age");
    assert!(!old.exists() && run_uses.exists() && task_uses.exists() && fresh.exists());
    assert!(
        log_uses.exists(),
        "recorded in the project's log for the unfinished run"
    );
    let o = r.run(&["gc", "--older-than", "12h"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!fresh.exists(), "a day old, over --older-than 12h");
    assert!(run_uses.exists() && task_uses.exists());
    // A finished run collects the same way. It is a new run of the unfinished run's epic: it
    // closes that one (no longer resumable), whose old files then go too; the task's stay.
    let old = scratch(&r.dir, "20260101T000000-5-go.log", 10, 30);
    let o = r.run(&with(&EPIC_SIM, &["--only", "1.1"]), &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("note: removed 3 old scratch files"),
        "{}",
        text(&o)
    );
    assert!(!old.exists() && !run_uses.exists() && !log_uses.exists());
    assert!(task_uses.exists());
    let o = r.run(&["gc", "--older-than", "soon"], &[]);
    assert_exit(&o, 2);
    assert!(text(&o).contains("bad duration \"soon\""), "{}", text(&o));
}

#[test]
fn a_repository_owned_by_another_user_is_said_to_be_so() {
    let r = repo();
    // git's own switch for this case: the repository seems another user's.
    let err = r.refused(
        &EPIC_SIM,
        &[("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")],
        2,
        "is owned by another user: git refuses to work in it",
    );
    assert!(
        err.contains("git config --global --add safe.directory"),
        "{err}"
    );
}

/// `baton ARGS` in a pseudo-terminal, with `env`: everything it wrote.
fn in_terminal(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        // A terminal says what it is.
        .env("TERM", "xterm-256color");
    for (k, v) in env {
        c.env(k, v);
    }
    let mut s = rexpect::session::spawn_command(c, Some(20_000)).unwrap();
    s.exp_eof().unwrap()
}

/// A file's escape sequences reach a terminal visible, never acted on (a title set, the screen
/// cleared); through a pipe, `extract` gives the bytes as they are (`outline` and `retrieve`
/// print through the same function).
#[test]
fn a_files_escape_sequences_never_reach_the_terminal_raw() {
    let r = repo();
    let doc = "# Spec\n\n## Data Model\n\nA table.\x1b]0;owned\x07 and \x1b[2J cleared.\n";
    std::fs::write(r.dir.join("spec.md"), doc).unwrap();
    let args = ["extract", "spec.md", "--section", "Data Model"];
    let shown = in_terminal(&r.dir, &args, &[]);
    assert!(!shown.contains('\x1b'), "{shown:?}");
    assert!(
        shown.contains("A table.\\x1B]0;owned\\x07 and \\x1B[2J cleared."),
        "{shown:?}"
    );
    let piped = r.run(&args, &[]);
    assert!(String::from_utf8_lossy(&piped.stdout).contains("A table.\x1b]0;owned\x07"));
    std::fs::write(r.dir.join("notes.md"), "# Notes \x1b]0;owned\x07\n\ntext\n").unwrap();
    let listed = in_terminal(&r.dir, &["outline", "notes.md"], &[]);
    assert!(!listed.contains('\x1b'), "{listed:?}");
    assert!(listed.contains("Notes \\x1B]0;owned\\x07"), "{listed:?}");
}

#[test]
fn failures_are_red_on_a_terminal_and_plain_elsewhere_or_with_no_color() {
    let r = repo();
    let args = ["status", "--root", "nowhere"];
    let red = "\x1b[1m\x1b[31merror:\x1b[0m --root nowhere: no such folder";
    assert!(in_terminal(&r.dir, &args, &[]).contains(red));
    let plain = in_terminal(&r.dir, &args, &[("NO_COLOR", "1")]);
    assert!(plain.starts_with("error: --root nowhere"), "{plain:?}");
    assert!(!plain.contains('\x1b'), "{plain:?}");
    // Not a terminal: plain, unless forced.
    let o = r.run(&args, &[]);
    assert!(
        String::from_utf8_lossy(&o.stderr).starts_with("error: --root"),
        "{}",
        text(&o)
    );
    let o = r.run(&args, &[("CLICOLOR_FORCE", "1")]);
    assert!(
        String::from_utf8_lossy(&o.stderr).starts_with(red),
        "{}",
        text(&o)
    );
    // A run's summary: each story's result in its colour.
    let o = r.run(
        &with(&EPIC_SIM, &["--only", "1.1"]),
        &[("CLICOLOR_FORCE", "1")],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("\x1b[32mdone    \x1b[0m"), "{out:?}");
    assert!(out.contains("\x1b[33mskipped \x1b[0m"), "{out:?}");
    // Only baton's own words are painted: text it passes on is never filtered, codes and all.
    std::fs::write(
        r.dir.join("spec.md"),
        "# Spec\n\n## Log\n\nred \x1b[31mFAIL\x1b[0m here\n",
    )
    .unwrap();
    for env in [&[][..], &[("NO_COLOR", "1")][..]] {
        let o = r.run(&["extract", "spec.md", "--section", "Log"], env);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("red \x1b[31mFAIL\x1b[0m here"),
            "{}",
            text(&o)
        );
    }
}

#[test]
fn a_detached_head_is_refused_and_a_repository_without_commits_keeps_the_users_files_out() {
    let r = repo();
    git(&r.dir, &["checkout", "-q", "--detach"]);
    r.refused(
        &with(&EPIC_SIM, &["--in-place"]),
        &[],
        3,
        "refusing to commit on a detached HEAD",
    );
    // In its own worktree the run commits on its own branch, and a detached HEAD stays put.
    let head = git(&r.dir, &["rev-parse", "HEAD"]);
    let o = r.run(&with(&EPIC_SIM, &["--only", "1.1"]), &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("the run started on a detached HEAD"),
        "{}",
        text(&o)
    );
    assert_eq!(git(&r.dir, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&r.dir, &["status", "--porcelain"]), "");
    // No commit yet: the files the user has not committed stay theirs, out of the story's commit.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    crate::util::demo_repo(&dir, "");
    std::fs::remove_dir_all(dir.join(".git")).unwrap();
    git(&dir, &["init", "-q", "-b", "epic-1"]);
    git(&dir, &["config", "user.name", "t"]);
    git(&dir, &["config", "user.email", "t@t.invalid"]);
    let fresh = Repo { _tmp: tmp, dir };
    let o = fresh.run(&with(&EPIC_SIM, &["--only", "1.1"]), &[]);
    assert!(o.status.success(), "{}", text(&o));
    let files = git(&fresh.dir, &["show", "--name-only", "--format=", "HEAD~1"]);
    assert_eq!(
        files,
        "docs/stories/1.1.project-skeleton.md\nsrc/story_1_1.txt\n"
    );
    let status = git(&fresh.dir, &["status", "--porcelain"]);
    assert!(status.contains("?? README.md\n"), "{status}");
}

#[test]
fn a_mistyped_phase_or_task_is_refused_with_what_was_meant() {
    let r = repo();
    let o = r.run(&["task", "init", "Add login"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let store = r.dir.join("docs/orchestrator");
    let before = crate::util::snapshot(&store);
    let o = r.run(&["phase", "begin", "archtect"], &[]);
    assert_exit(&o, 2);
    assert!(
        text(&o).starts_with(
            "error: `archtect` is not a phase of the task store (did you mean `architect`?)"
        ),
        "{}",
        text(&o)
    );
    assert!(
        before == crate::util::snapshot(&store),
        "no phase was started"
    );
    let o = r.run(&["run", "orchestrate", "add-logn", "--agent", "sim"], &[]);
    assert_exit(&o, 4);
    assert!(
        text(&o).starts_with("error: no task `add-logn` (did you mean `add-login`?)"),
        "{}",
        text(&o)
    );
}

/// One agent's part of `baton doctor --json`.
fn agent_of(doctor: &serde_json::Value, name: &str) -> serde_json::Value {
    doctor["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["agent"] == name)
        .unwrap()
        .clone()
}

/// `baton doctor` says, per agent CLI, whether it would use baton's wiring in this project:
/// installed (its version), wired by `baton init`, the folder trusted by the CLI, credentials;
/// and what to do when not.
#[test]
fn doctor_says_whether_each_cli_would_use_batons_wiring_here_and_what_to_do() {
    let r = repo();
    let tmp = tempfile::tempdir().unwrap();
    let path = bare_path(tmp.path());
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    use std::os::unix::fs::PermissionsExt;
    for (cli, version) in [
        ("claude", "2.1.197 (Claude Code)"),
        ("codex", "codex-cli 0.171.0"),
    ] {
        let f = tmp.path().join("bin").join(cli);
        std::fs::write(&f, format!("#!/bin/sh\necho '{version}'\n")).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let dir = r.dir.canonicalize().unwrap();
    // claude: wired and trusted; codex: neither; gemini: not installed.
    let o = r.run(&["init", "claude"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(
        home.join(".claude.json"),
        serde_json::json!({"projects": {dir.display().to_string(): {"hasTrustDialogAccepted": true}}}).to_string(),
    )
    .unwrap();
    let env = [
        ("PATH", path.as_str()),
        ("HOME", home.to_str().unwrap()),
        ("ANTHROPIC_API_KEY", "sk-test"),
        ("SHELL", "/bin/sh"),
    ];
    let o = r.run(&["doctor", "--agents", "--json"], &env);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let agent = |name: &str| agent_of(&v, name);
    let claude = agent("claude");
    assert_eq!(claude["version"], "2.1.197 (Claude Code)");
    assert_eq!(claude["unwired"], serde_json::json!([]));
    assert_eq!(claude["trust"]["trust"], "trusted");
    assert_eq!(claude["todo"], serde_json::json!([]), "{claude}");
    let codex = agent("codex");
    assert_eq!(codex["version"], "codex-cli 0.171.0");
    assert_eq!(codex["trust"]["trust"], "not_trusted");
    let todo: Vec<&str> = codex["todo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        todo.contains(
            &"wire baton: baton init codex (this project) or baton init codex --global (every project)"
        ),
        "{todo:?}"
    );
    assert_eq!(codex["wired_at"], serde_json::json!([]));
    assert_eq!(claude["wired_at"], serde_json::json!(["project"]));
    assert!(
        todo.iter()
            .any(|t| t.starts_with("run `codex` in this folder once and trust it")),
        "{todo:?}"
    );
    assert!(
        todo.iter()
            .any(|t| t.starts_with("no credentials found: run `codex login`")),
        "{todo:?}"
    );
    let gemini = agent("gemini");
    assert!(gemini["installed"].is_null());
    assert_eq!(gemini["trust"]["trust"], "not_trusted");
    assert!(
        gemini["todo"][0]
            .as_str()
            .unwrap()
            .contains("npm install -g @google/gemini-cli")
    );
    let login = &v["baton_on_login_path"];
    assert!(
        login.is_null() || login.as_str().unwrap().ends_with("baton"),
        "{login}"
    );
    // For people: the store section, then the agents.
    let o = r.run(&["doctor"], &env);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("agents:\n  claude  "), "{out}");
    assert!(
        out.contains(": uses baton's hooks and MCP server here\n"),
        "{out}"
    );
    assert!(
        out.contains("  codex   ") && out.contains(": does not use baton's wiring here\n"),
        "{out}"
    );
    let o = r.run(&["doctor", "--store"], &env);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("agents:"));
    // codex wired for the user, claude's plugin installed and enabled: no folder trust needed.
    let o = r.run(&["init", "codex", "--global"], &env);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::create_dir_all(home.join(".claude/plugins")).unwrap();
    std::fs::write(
        home.join(".claude/plugins/installed_plugins.json"),
        r#"{"version": 2, "plugins": {"baton@baton": [{"scope": "user"}]}}"#,
    )
    .unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        r#"{"enabledPlugins": {"baton@baton": true}}"#,
    )
    .unwrap();
    let o = r.run(&["doctor", "--agents", "--json"], &env);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let by = |name: &str| agent_of(&v, name);
    assert_eq!(by("codex")["wired_at"], serde_json::json!(["user"]));
    let todo = by("codex")["todo"].to_string();
    assert!(
        !todo.contains("wire baton") && !todo.contains("trust it"),
        "{todo}"
    );
    assert_eq!(
        by("claude")["wired_at"],
        serde_json::json!(["project", "plugin"])
    );
    let o = r.run(&["doctor", "--agents"], &env);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("wired: yes (user)"), "{out}");
    assert!(out.contains("wired: yes (project, plugin)"), "{out}");
    // Settings that cannot be read are not taken for wired.
    let settings = r.dir.join(".claude/settings.json");
    let kept = std::fs::read(&settings).unwrap();
    std::fs::write(&settings, "{not json").unwrap();
    let o = r.run(&["doctor", "--agents", "--json"], &env);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let claude = v["agents"][0].clone();
    assert!(
        claude["wiring_error"]
            .as_str()
            .unwrap()
            .contains("settings.json"),
        "{claude}"
    );
    assert!(
        claude["todo"][0]
            .as_str()
            .unwrap()
            .ends_with("fix it, then run baton init claude"),
        "{claude}"
    );
    std::fs::write(&settings, kept).unwrap();
    // gemini with folder trust turned off: every folder is trusted.
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"security": {"folderTrust": {"enabled": false}}}"#,
    )
    .unwrap();
    let o = r.run(&["doctor", "--agents", "--json"], &env);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let gemini = agent_of(&v, "gemini");
    assert_eq!(gemini["trust"]["trust"], "trusted", "{gemini}");
}

/// Paths baton prints work from where the user stands: run from a subfolder of the project,
/// the run log, the report and init's files are named relative to that folder.
#[test]
fn printed_paths_work_from_a_subfolder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    crate::util::demo_repo(&dir, "");
    let sub = dir.join("docs/stories");
    let o = crate::util::run_in(&sub, &EPIC_SIM, &[]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let named = |label: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_else(|| panic!("no {label} in {out}"))
            .split(' ')
            .next()
            .unwrap()
            .to_string()
    };
    let log = named("run log: ");
    let report = named("report: ");
    assert!(log.starts_with("../../.baton/runs/"), "{log}");
    assert!(sub.join(&log).join("events.jsonl").is_file(), "{log}");
    assert!(sub.join(&report).is_file(), "{report}");
    // From the top, as before: project-relative.
    let o = crate::util::run_in(&dir, &["report"], &[]);
    assert!(text(&o).contains(": .baton/runs/"), "{}", text(&o));
    let o = crate::util::run_in(&sub, &["init", "claude"], &[]);
    assert!(text(&o).contains("created ../../.mcp.json"), "{}", text(&o));
}

/// `--root` and `--task` are options of the commands that use a task store, not of every
/// command: elsewhere they are refused as unknown, and `--help` does not offer them.
#[test]
fn store_options_are_offered_only_where_they_mean_something() {
    let r = repo();
    for args in [
        &["tokens", "--root", "x", "README.md"][..],
        &["gain", "--task", "t"][..],
        &["--root", "x", "status"][..],
    ] {
        let o = r.run(args, &[]);
        assert_exit(&o, 2);
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("unexpected argument"),
            "{args:?}: {}",
            text(&o)
        );
    }
    let help = |args: &[&str]| {
        let o = r.run(args, &[]);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    for cmd in [
        "tokens", "extract", "mask", "outline", "gain", "demo", "worker",
    ] {
        let h = help(&[cmd, "--help"]);
        assert!(
            !h.contains("--root") && !h.contains("--task <SLUG>"),
            "{cmd}: {h}"
        );
    }
    for cmd in [
        &["phase", "start"][..],
        &["retrieve"],
        &["task", "show"],
        &["history"],
    ] {
        let mut args = cmd.to_vec();
        args.push("--help");
        let h = help(&args);
        assert!(
            h.contains("--root <DIR>") && h.contains("--task <SLUG>"),
            "{cmd:?}: {h}"
        );
    }
    for cmd in [&["status"][..], &["doctor"], &["run"], &["query"]] {
        let mut args = cmd.to_vec();
        args.push("--help");
        let h = help(&args);
        assert!(
            h.contains("--root <DIR>") && !h.contains("--task <SLUG>"),
            "{cmd:?}: {h}"
        );
    }
    // The options work after the subcommand, in a group on its leaves too.
    let o = r.run(&["task", "init", "x", "--root", "s"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let o = r.run(
        &["task", "show", "--root", "s", "--task", "x", "--json"],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
}
