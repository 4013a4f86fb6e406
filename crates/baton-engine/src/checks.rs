//! The project's own checks (tests, linters, type checks) run by baton itself before a story's
//! work is committed: an agent's "COMPLETE" is a claim, the project's test command is the
//! verdict. `[checks] commands` in baton.toml names them; without it they are found from the
//! project ([`found`]): a Makefile `test` target, else `cargo test`, `go test ./...`, the
//! package.json `test` script and pytest's configuration, each where the project has it.
//!
//! Each command runs in the story's tree (its worktree under `--parallel`) with `sh -c`, stdin
//! closed, its output masked to a scratch file (the summary, the first failure and its
//! message, the file's path), stopped after its timeout. A red result is a failed phase: the
//! next attempt's prompt carries it, and a story never ends green with red checks.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use baton_context::mask::{self, capture};

/// `[checks]` in baton.toml.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ChecksConfig {
    /// The project's test, lint and type-check commands, each a shell command line or
    /// `{ command = "…", timeout_secs = N }`; run in order before every story commit. Unset:
    /// found from the project (a Makefile `test` target, Cargo.toml, go.mod, package.json's
    /// `test` script, pytest's configuration). `[]`: none.
    pub commands: Option<Vec<CheckSpec>>,
    /// Seconds a command may run when it gives no `timeout_secs` of its own (default 1800).
    pub timeout_secs: Option<u64>,
}

/// One command of `[checks] commands`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum CheckSpec {
    Line(String),
    Full {
        command: String,
        #[serde(default)]
        timeout_secs: Option<u64>,
    },
}

/// Default time a check may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// A check to run: its command line and how long it may take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub command: String,
    #[serde(with = "secs")]
    pub timeout: Duration,
}

/// A duration as whole seconds (as baton.toml gives it; a run's journal keeps it so).
mod secs {
    use std::time::Duration;

    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_secs())
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        <u64 as serde::Deserialize>::deserialize(d).map(Duration::from_secs)
    }
}

/// Where a run's checks came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// `[checks] commands` in baton.toml.
    Configured,
    /// Found from the project's files.
    Found,
    /// Turned off for this run (`--no-checks`).
    Off,
}

/// The checks of a run, and where they came from (`found_in` names the file of each found one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checks {
    pub origin: Origin,
    pub commands: Vec<Check>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub found_in: Vec<String>,
}

impl ChecksConfig {
    /// `over`'s keys where it sets them, else these.
    pub fn overlaid(&self, over: Option<&ChecksConfig>) -> ChecksConfig {
        let Some(o) = over else {
            return self.clone();
        };
        ChecksConfig {
            commands: o.commands.clone().or_else(|| self.commands.clone()),
            timeout_secs: o.timeout_secs.or(self.timeout_secs),
        }
    }
}

impl Checks {
    /// The checks for the project in `dir`: configured, else found; none with `off`.
    pub fn resolve(config: &ChecksConfig, dir: &Path, off: bool) -> Checks {
        let timeout = config
            .timeout_secs
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
        if off {
            return Checks {
                origin: Origin::Off,
                commands: Vec::new(),
                found_in: Vec::new(),
            };
        }
        match &config.commands {
            Some(list) => Checks {
                origin: Origin::Configured,
                commands: list
                    .iter()
                    .filter_map(|c| {
                        let (command, t) = match c {
                            CheckSpec::Line(l) => (l.clone(), None),
                            CheckSpec::Full {
                                command,
                                timeout_secs,
                            } => (command.clone(), *timeout_secs),
                        };
                        (!command.trim().is_empty()).then(|| Check {
                            command,
                            timeout: t.map_or(timeout, Duration::from_secs),
                        })
                    })
                    .collect(),
                found_in: Vec::new(),
            },
            None => {
                let found = found(dir);
                Checks {
                    origin: Origin::Found,
                    commands: found
                        .iter()
                        .map(|(c, _)| Check {
                            command: c.clone(),
                            timeout,
                        })
                        .collect(),
                    found_in: found.into_iter().map(|(_, f)| f).collect(),
                }
            }
        }
    }

    /// One line for people: what runs before each commit.
    pub fn describe(&self) -> String {
        let list = || {
            self.commands
                .iter()
                .map(|c| format!("`{}`", c.command))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match (self.origin, self.commands.is_empty()) {
            (Origin::Off, _) => "checks: off for this run (--no-checks)".into(),
            (Origin::Configured, true) => "checks: none ([checks] commands = [])".into(),
            (Origin::Found, true) => "checks: none found (no Makefile test target, Cargo.toml, \
                 go.mod, package.json test script or pytest configuration): stories are \
                 committed on the agents' word; name the project's tests in baton.toml: \
                 [checks] commands = [\"…\"]"
                .into(),
            (Origin::Configured, false) => {
                format!("checks before each commit: {} (baton.toml)", list())
            }
            (Origin::Found, false) => format!(
                "checks before each commit: {} (found: {})",
                list(),
                self.found_in.join(", ")
            ),
        }
    }
}

/// The project's own test commands, from its files: a Makefile `test` target stands for the
/// project (it usually runs everything); otherwise each language's own where its file is.
/// `(command, the file it was found from)`.
pub fn found(dir: &Path) -> Vec<(String, String)> {
    for name in ["GNUmakefile", "makefile", "Makefile"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(name))
            && text.lines().any(|l| {
                l.strip_prefix("test")
                    .is_some_and(|r| r.starts_with(':') && !r.starts_with(":="))
            })
        {
            return vec![("make test".into(), name.into())];
        }
    }
    let mut out = Vec::new();
    if dir.join("Cargo.toml").is_file() {
        out.push(("cargo test".into(), "Cargo.toml".into()));
    }
    if dir.join("go.mod").is_file() {
        out.push(("go test ./...".into(), "go.mod".into()));
    }
    if let Ok(text) = std::fs::read_to_string(dir.join("package.json"))
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(script) = v.pointer("/scripts/test").and_then(|s| s.as_str())
        // npm init's placeholder fails on purpose: it is no test suite.
        && !script.contains("no test specified")
    {
        out.push(("npm test".into(), "package.json".into()));
    }
    let pytest = ["pytest.ini", "conftest.py"]
        .iter()
        .find(|f| dir.join(f).is_file())
        .map(|f| f.to_string())
        .or_else(|| {
            [
                ("pyproject.toml", "[tool.pytest"),
                ("tox.ini", "[pytest]"),
                ("setup.cfg", "[tool:pytest]"),
            ]
            .iter()
            .find(|(f, marker)| {
                std::fs::read_to_string(dir.join(f)).is_ok_and(|t| t.contains(marker))
            })
            .map(|(f, _)| f.to_string())
        });
    if let Some(f) = pytest {
        out.push(("python3 -m pytest".into(), f));
    }
    out
}

/// How one check ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub command: String,
    pub passed: bool,
    /// The command's exit code (None: killed by a signal, or it could not start).
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    pub duration_ms: u64,
    /// The masked output's summary ("41 passed, 1 failed").
    pub summary: String,
    /// Failed tests and errors, where the output counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<u64>,
    /// The first failure as the summarizer read it: test, file, line, message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<serde_json::Value>,
    /// The whole output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<PathBuf>,
}

impl CheckResult {
    /// The failing test as one phrase: `tests/x.py::test_y (tests/x.py:12): AssertionError: …`.
    pub fn failing(&self) -> Option<String> {
        let f = self.first_failure.as_ref()?;
        let s = |k: &str| f.get(k).and_then(|v| v.as_str());
        let name = s("test").or(s("file"))?;
        let at = match (s("file"), f.get("line").and_then(|l| l.as_u64())) {
            (Some(file), Some(line)) => format!(" ({file}:{line})"),
            (Some(file), None) if Some(file) != s("test") => format!(" ({file})"),
            _ => String::new(),
        };
        let msg = s("message").map(|m| format!(": {m}")).unwrap_or_default();
        Some(format!("{name}{at}{msg}"))
    }

    /// Whether this red result is one the starting commit had already (`before`, the same
    /// command's result there): the same first failing test (or, where the output names
    /// none, the same summary) and no more failures. Such a story added no failure of its own.
    pub fn fails_as(&self, before: &CheckResult) -> bool {
        let test = |r: &CheckResult| {
            r.first_failure
                .as_ref()
                .and_then(|f| f.get("test").and_then(|t| t.as_str()).map(String::from))
        };
        if before.passed || self.command != before.command || self.timed_out {
            return false;
        }
        let same = match (test(self), test(before)) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.summary == before.summary,
            _ => false,
        };
        let no_more = match (self.failures, before.failures) {
            (Some(now), Some(then)) => now <= then,
            (None, None) => true,
            _ => false,
        };
        same && no_more
    }

    /// What the next attempt's prompt is told (`checks_failure` in the templates).
    pub fn for_prompt(&self) -> serde_json::Value {
        serde_json::json!({
            "command": self.command,
            "line": self.describe(),
            "failing": self.failing(),
            "output": self.output,
        })
    }

    /// One line: what failed, and why, for the terminal, the journal and the report.
    pub fn describe(&self) -> String {
        let how = if self.timed_out {
            "timed out".to_string()
        } else {
            match self.exit_code {
                Some(c) => format!("exit {c}"),
                None => "killed".to_string(),
            }
        };
        let mut line = format!("`{}` failed ({how}): {}", self.command, self.summary);
        if let Some(f) = self.failing() {
            line.push_str(&format!("; first failure: {f}"));
        }
        line
    }
}

/// Run `checks` one after another in `dir`, their outputs masked under `local_dir`; stops at
/// the first red one (its output is what the next attempt needs). `started` hears each
/// command before it runs. A command runs in a process group of its own (so a timeout stops
/// all it started): when `cancel` fires (Ctrl-C), the group is stopped and no further command
/// runs; the caller then treats the results as no verdict.
pub fn run(
    checks: &[Check],
    dir: &Path,
    local_dir: &Path,
    cancel: &baton_agent::CancelToken,
    started: &dyn Fn(&Check),
) -> Vec<CheckResult> {
    let mut out = Vec::new();
    for c in checks {
        if cancel.is_cancelled() {
            break;
        }
        started(c);
        let r = run_one(c, dir, local_dir, cancel);
        let red = !r.passed;
        out.push(r);
        if red {
            break;
        }
    }
    out
}

/// Every one of `checks`, red or not (the starting commit's record: each command's own
/// verdict is needed).
pub fn run_all(
    checks: &[Check],
    dir: &Path,
    local_dir: &Path,
    cancel: &baton_agent::CancelToken,
) -> Vec<CheckResult> {
    let mut out = Vec::new();
    for c in checks {
        if cancel.is_cancelled() {
            break;
        }
        out.push(run_one(c, dir, local_dir, cancel));
    }
    out
}

/// Stops the process group `pgid` (TERM, then KILL after a grace) once `cancel` fires, until
/// `done` is set.
fn stop_on_cancel(
    pgid: &std::sync::atomic::AtomicI32,
    done: &std::sync::atomic::AtomicBool,
    cancel: &baton_agent::CancelToken,
) {
    use std::sync::atomic::Ordering;
    while !done.load(Ordering::SeqCst) {
        if cancel.is_cancelled() {
            let g = pgid.load(Ordering::SeqCst);
            if g > 0 {
                baton_core::process::signal_group(g, libc::SIGTERM);
                let deadline = Instant::now() + mask::timeout::GRACE;
                while !done.load(Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(50));
                }
                if !done.load(Ordering::SeqCst) {
                    baton_core::process::signal_group(g, libc::SIGKILL);
                }
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn run_one(
    c: &Check,
    dir: &Path,
    local_dir: &Path,
    cancel: &baton_agent::CancelToken,
) -> CheckResult {
    let started = Instant::now();
    let opts = capture::Options {
        local_dir,
        // Always kept: the whole output is what a failure's reader needs.
        threshold: 0,
        kind: mask::Kind::Auto,
        redact_scratch: false,
    };
    let argv = ["sh".to_string(), "-c".to_string(), c.command.clone()];
    let words: Vec<String> = c.command.split_whitespace().map(String::from).collect();
    let pgid = std::sync::atomic::AtomicI32::new(0);
    let done = std::sync::atomic::AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| stop_on_cancel(&pgid, &done, cancel));
        let o = capture::mask_command_in(&opts, &argv, &words, dir, c.timeout, &|g| {
            pgid.store(g, std::sync::atomic::Ordering::SeqCst)
        });
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        o
    });
    let duration_ms = started.elapsed().as_millis() as u64;
    match outcome {
        Ok(o) => {
            let exit_code = o.exit.and_then(|e| e.code);
            CheckResult {
                command: c.command.clone(),
                passed: exit_code == Some(0) && o.timed_out.is_none(),
                exit_code,
                timed_out: o.timed_out.is_some(),
                duration_ms,
                summary: o.summary.summary.clone(),
                failures: o
                    .summary
                    .counts
                    .as_ref()
                    .and_then(|c| match (c.failed, c.errors) {
                        (None, None) => None,
                        (f, e) => Some(f.unwrap_or(0) + e.unwrap_or(0)),
                    }),
                first_failure: o
                    .summary
                    .first_failure
                    .as_ref()
                    .and_then(|f| serde_json::to_value(f).ok()),
                output: o.masked.then(|| o.scratch.clone()),
            }
        }
        Err(e) => CheckResult {
            command: c.command.clone(),
            passed: false,
            exit_code: None,
            timed_out: false,
            duration_ms,
            summary: format!("could not run: {e}"),
            failures: None,
            first_failure: None,
            output: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (f, t) in files {
            std::fs::write(d.path().join(f), t).unwrap();
        }
        d
    }

    #[test]
    fn a_makefile_test_target_stands_for_the_project() {
        let d = dir_with(&[
            (
                "Makefile",
                "build:\n\tcc x.c\n\ntest: build\n\t./run-tests\n",
            ),
            ("Cargo.toml", "[package]\n"),
        ]);
        assert_eq!(found(d.path()), [("make test".into(), "Makefile".into())]);
        // `test :=` is a variable, `tests:` another target: no test target.
        let d = dir_with(&[
            ("Makefile", "test := 1\ntests:\n\tx\n"),
            ("go.mod", "module x\n"),
        ]);
        assert_eq!(found(d.path()), [("go test ./...".into(), "go.mod".into())]);
    }

    #[test]
    fn each_languages_own_test_command_where_its_file_is() {
        let d = dir_with(&[
            ("Cargo.toml", "[package]\n"),
            ("package.json", r#"{"scripts": {"test": "vitest run"}}"#),
            ("pyproject.toml", "[tool.pytest.ini_options]\n"),
        ]);
        let cmds: Vec<String> = found(d.path()).into_iter().map(|(c, _)| c).collect();
        assert_eq!(cmds, ["cargo test", "npm test", "python3 -m pytest"]);
        // npm init's placeholder and a pyproject without pytest are no test suites.
        let d = dir_with(&[
            (
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            ),
            ("pyproject.toml", "[project]\nname = \"x\"\n"),
        ]);
        assert!(found(d.path()).is_empty());
    }

    #[test]
    fn configured_commands_win_and_an_empty_list_means_none() {
        let d = dir_with(&[("Cargo.toml", "[package]\n")]);
        let cfg: ChecksConfig = toml::from_str(
            "timeout_secs = 60\ncommands = [\"make lint\", { command = \"make test\", timeout_secs = 5 }]\n",
        )
        .unwrap();
        let c = Checks::resolve(&cfg, d.path(), false);
        assert_eq!(c.origin, Origin::Configured);
        assert_eq!(
            c.commands,
            [
                Check {
                    command: "make lint".into(),
                    timeout: Duration::from_secs(60)
                },
                Check {
                    command: "make test".into(),
                    timeout: Duration::from_secs(5)
                }
            ]
        );
        let none: ChecksConfig = toml::from_str("commands = []\n").unwrap();
        assert!(Checks::resolve(&none, d.path(), false).commands.is_empty());
        let found = Checks::resolve(&ChecksConfig::default(), d.path(), false);
        assert_eq!(found.origin, Origin::Found);
        assert_eq!(found.commands[0].command, "cargo test");
        assert!(
            found.describe().contains("(found: Cargo.toml)"),
            "{}",
            found.describe()
        );
        let off = Checks::resolve(&cfg, d.path(), true);
        assert!(off.commands.is_empty() && off.origin == Origin::Off);
    }

    #[test]
    fn a_red_check_is_named_with_its_first_failure_and_stops_the_rest() {
        let d = tempfile::tempdir().unwrap();
        let local = d.path().join(".baton");
        std::fs::write(
            d.path().join("red.sh"),
            "printf 'running 2 tests\\ntest a ... ok\\ntest b ... FAILED\\n\\nfailures:\\n\\n---- b stdout ----\\nthread '\"'\"'b'\"'\"' panicked at src/lib.rs:9:5:\\nassertion `left == right` failed\\n  left: 1\\n right: 2\\n\\nfailures:\\n    b\\n\\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n'\nexit 101\n",
        )
        .unwrap();
        let checks = [
            Check {
                command: "true".into(),
                timeout: DEFAULT_TIMEOUT,
            },
            Check {
                command: "sh red.sh".into(),
                timeout: DEFAULT_TIMEOUT,
            },
            Check {
                command: "touch never-run".into(),
                timeout: DEFAULT_TIMEOUT,
            },
        ];
        let seen = std::sync::Mutex::new(Vec::new());
        let none = baton_agent::CancelToken::new();
        let r = run(&checks, d.path(), &local, &none, &|c| {
            seen.lock().unwrap().push(c.command.clone())
        });
        assert_eq!(r.len(), 2);
        assert!(r[0].passed);
        let red = &r[1];
        assert!(!red.passed);
        assert_eq!(red.exit_code, Some(101));
        assert_eq!(red.summary, "1 passed, 1 failed");
        assert_eq!(
            red.failing().as_deref(),
            Some("b (src/lib.rs:9): assertion `left == right` failed")
        );
        assert!(
            red.describe()
                .starts_with("`sh red.sh` failed (exit 101): 1 passed, 1 failed")
        );
        assert!(red.output.as_ref().is_some_and(|p| p.starts_with(&local)));
        assert!(!d.path().join("never-run").exists());
        assert_eq!(seen.lock().unwrap().len(), 2);
        // A command that runs too long is stopped and named so.
        let slow = Check {
            command: "sleep 30".into(),
            timeout: Duration::from_millis(300),
        };
        let r = run(&[slow], d.path(), &local, &none, &|_| {});
        assert!(!r[0].passed && r[0].timed_out, "{:?}", r[0]);
        assert!(r[0].describe().contains("(timed out)"));
    }
}
