//! The real `baton` binary, run inside a project.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use super::Proj;

pub fn bin() -> PathBuf {
    neutral_env();
    PathBuf::from(env!("CARGO_BIN_EXE_baton"))
}

/// The caller's colour, terminal, language and time-zone settings (`NO_COLOR=1`,
/// `CLICOLOR_FORCE`, `TERM=dumb`, a Turkish locale, a zone a day ahead) are not what the tests
/// are about: they are removed from this process once, before its first baton or git runs,
/// so every child sees the machine's defaults. A test about one of them sets it on its own
/// command. (CI runs the suite with all of them set.)
///
/// Every test passes here before its first child process, so this is also where it takes its
/// turn on the machine beside the other tests (`turn::share`).
pub fn neutral_env() {
    super::turn::share();
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for var in [
            "NO_COLOR",
            "CLICOLOR",
            "CLICOLOR_FORCE",
            "FORCE_COLOR",
            "COLORTERM",
            "TERM",
            "LANG",
            "LANGUAGE",
            "LC_ALL",
            "LC_MESSAGES",
            "LC_CTYPE",
            "LC_TIME",
            "TZ",
        ] {
            // SAFETY: the tests read the environment through std only, which takes its
            // environment lock for every read and for every child's spawn.
            unsafe { std::env::remove_var(var) };
        }
    });
}

/// `git ARGS` in `dir`, which must succeed; its stdout.
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    neutral_env();
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The file of story `id` (`1.2` → `docs/stories/1.2.<slug>.md`) in a demo repository.
pub fn demo_story_path(dir: &std::path::Path, id: &str) -> std::path::PathBuf {
    std::fs::read_dir(dir.join("docs/stories"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{id}."))
        })
        .unwrap_or_else(|| panic!("no story {id}"))
}

/// The demo's BMAD project (4 stories) at `dir`, committed on `main` (with an identity of its
/// own), then on branch `epic-1`; `scenario` for the simulated agent.
pub fn demo_repo(dir: &std::path::Path, scenario: &str) {
    baton::cli::demo_project(dir).unwrap();
    std::fs::write(dir.join(".baton/sim.toml"), scenario).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "t"]);
    git(dir, &["config", "user.email", "t@t.invalid"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "init"]);
    git(dir, &["switch", "-q", "-c", "epic-1"]);
}

/// `baton ARGS` in `dir` with `env` added (and the sim switch of the test's own environment
/// removed): its output.
pub fn run_in(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(bin());
    c.args(args).current_dir(dir).env_remove("BATON_AGENT_SIM");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// A second epic of one story (2.1) added to the demo repository at `dir`, committed.
pub fn demo_epic_2(dir: &std::path::Path) {
    std::fs::write(dir.join("docs/epics/epic-2.md"), "# Epic 2: Sharing\n").unwrap();
    std::fs::write(
        dir.join("docs/stories/2.1.share-notes.md"),
        "# Story 2.1: Share notes\n\nStatus: ready-for-dev\n\n## Acceptance Criteria\n\n1. Shared.\n",
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "epic 2"]);
}

/// Require the run to have exited with `code`, showing its output when it did not.
#[track_caller]
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "{}", text(o));
}

/// stdout then stderr, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

impl Proj {
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args).current_dir(self.path()).stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut c = self.cmd(args);
        match stdin {
            None => c.output().unwrap(),
            Some(input) => {
                use std::io::Write;
                c.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = c.spawn().unwrap();
                // The command may exit before reading everything (an early error): that is fine.
                let _ = child.stdin.take().unwrap().write_all(input);
                child.wait_with_output().unwrap()
            }
        }
    }

    /// Run and require success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.ok_in(args, None)
    }

    pub fn ok_in(&self, args: &[&str], stdin: Option<&str>) -> String {
        let o = self.run(args, stdin.map(str::as_bytes));
        assert!(
            o.status.success(),
            "baton {args:?} failed ({:?}):\n{}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }

    /// Run, require exit `code`, require state unchanged; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        self.fails_in(args, None, code)
    }

    pub fn fails_in(&self, args: &[&str], stdin: Option<&[u8]>, code: i32) -> String {
        let before = self.snapshot();
        let o = self.run(args, stdin);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(
            o.status.code(),
            Some(code),
            "baton {args:?}: stdout {} stderr {err}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(err.starts_with("error: "), "errors say so: {err}");
        assert_eq!(
            before,
            self.snapshot(),
            "baton {args:?} changed the store although it failed"
        );
        err
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut a = args.to_vec();
        a.push("--json");
        serde_json::from_str(&self.ok(&a)).unwrap()
    }
}

/// A project override of `workflow`: its built-in TOML (`baton workflow show`) with the
/// rate-limit backoff at 0 s, so a test waits out a 429 without sleeping.
pub fn no_backoff(dir: &std::path::Path, workflow: &str) {
    let o = std::process::Command::new(bin())
        .args(["workflow", "show", workflow])
        .current_dir(dir)
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("backoff_secs = 30"), "{text}");
    std::fs::create_dir_all(dir.join(".baton/workflows")).unwrap();
    std::fs::write(
        dir.join(format!(".baton/workflows/{workflow}.toml")),
        text.replace("backoff_secs = 30", "backoff_secs = 0"),
    )
    .unwrap();
}

/// `--json` output: one JSON value per line (a line that is not JSON fails the test).
pub fn json_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// baton.toml's `[notify]` with a command that appends each event to `.baton/heard.jsonl`.
pub const NOTIFY_TO_FILE: &str =
    "[notify]\ncommand = \"cat >> .baton/heard.jsonl; echo >> .baton/heard.jsonl\"\n";

/// The events the `NOTIFY_TO_FILE` command heard, in order (none when it heard nothing).
pub fn heard(project: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(project.join(".baton/heard.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
