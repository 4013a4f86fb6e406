//! `Test`: one run of the real binary and its exact expected output, in the style of the `just`
//! project's integration tests.
//!
//! ```text
//! Test::new()                                   // a fresh temp git repository
//!     .args(["task", "init", "Add login"])
//!     .stdout("created task add-login …\n")     // exact; "" unless said otherwise
//!     .stderr("")                               // exact; "" unless said otherwise
//!     .status(0)                                // 0 unless said otherwise
//!     .run();                                   // → Ran: the project, stdout, stderr
//! ```
//!
//! Parts that carry timestamps or ids take `stdout_contains`/`stdout_regex` (and the `stderr_`
//! pair) instead of the exact text, `stdout_json` compares a JSON answer as JSON, `any_stdout`
//! leaves it to the caller; any of those replaces the exact check of that stream. The
//! project's directory is written `[PROJECT]` in both streams before they are compared, so
//! messages naming a temp path can still be exact. For exit codes 2, 3 and 4 (bad input, not
//! allowed, not found) the run must also leave the task store byte-identical. On a mismatch the
//! panic shows the command, and expected against actual stdout, stderr and status.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write as _;
use std::ops::Deref;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::{Proj, bin, snapshot};

/// Environment variables of the binary's own test hooks: never inherited from the caller.
const HOOKS: &[&str] = &[
    "BATON_AGENT_SIM",
    "BATON_CRASH_AFTER_EVENT",
    "BATON_CRASH_AFTER_STATE_WRITE",
    "BATON_RUN_DIR",
    "BATON_RUN_PHASE",
    "BATON_SIM_SCENARIO",
    "BATON_SIM_VERIFY_SNAPSHOTS",
];

enum Project<'a> {
    Owned(Proj),
    Borrowed(&'a Proj),
}

impl Deref for Project<'_> {
    type Target = Proj;
    fn deref(&self) -> &Proj {
        match self {
            Project::Owned(p) => p,
            Project::Borrowed(p) => p,
        }
    }
}

enum Check {
    Contains(String),
    Regex(regex::Regex),
    Json(serde_json::Value),
}

impl Check {
    fn holds(&self, actual: &str) -> bool {
        match self {
            Check::Contains(s) => actual.contains(s.as_str()),
            Check::Regex(r) => r.is_match(actual),
            Check::Json(v) => {
                serde_json::from_str::<serde_json::Value>(actual).ok() == Some(v.clone())
            }
        }
    }
    fn describe(&self) -> String {
        match self {
            Check::Contains(s) => format!("containing:\n{}", block(s)),
            Check::Regex(r) => format!("matching /{}/\n", r.as_str()),
            Check::Json(v) => format!(
                "the JSON:\n{}",
                block(&serde_json::to_string_pretty(v).unwrap())
            ),
        }
    }
}

/// What a stream must be: `exact` if given; "" if nothing at all is given.
#[derive(Default)]
struct Expect {
    exact: Option<String>,
    checks: Vec<Check>,
}

impl Expect {
    /// The exact text required, if any.
    fn exact(&self) -> Option<&str> {
        match &self.exact {
            Some(s) => Some(s),
            None if self.checks.is_empty() => Some(""),
            None => None,
        }
    }
    /// Each unmet expectation, described, with the first differing line for an exact one.
    fn failed(&self, actual: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(want) = self.exact()
            && want != actual
        {
            out.push(format!(
                "exactly:\n{}{}",
                block(want),
                first_difference(want, actual)
            ));
        }
        out.extend(
            self.checks
                .iter()
                .filter(|c| !c.holds(actual))
                .map(Check::describe),
        );
        out
    }
}

/// One run of `baton`, what it is given and what it must answer.
pub struct Test<'a> {
    project: Project<'a>,
    args: Vec<OsString>,
    current_dir: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    stdin: Option<Vec<u8>>,
    stdout: Expect,
    stderr: Expect,
    status: i32,
}

impl Test<'static> {
    /// In a fresh temp git repository.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Test<'static> {
        Test::with(Proj::new())
    }

    /// In `project`, which the run hands back (`Ran::proj`).
    pub fn with(project: Proj) -> Test<'static> {
        Test::in_project(Project::Owned(project))
    }
}

impl Proj {
    /// A `Test` in this project, borrowed: run it as many times as needed.
    pub fn test(&self) -> Test<'_> {
        Test::in_project(Project::Borrowed(self))
    }
}

impl<'a> Test<'a> {
    fn in_project(project: Project<'a>) -> Test<'a> {
        Test {
            project,
            args: Vec::new(),
            current_dir: None,
            env: Vec::new(),
            stdin: None,
            stdout: Expect::default(),
            stderr: Expect::default(),
            status: 0,
        }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Write a file of the project before running (`rel` from its root; parents created).
    pub fn write(self, rel: &str, text: &str) -> Self {
        self.project.write(rel, text);
        self
    }

    /// Run in this directory, relative to the project's root (default: the root).
    pub fn current_dir(mut self, rel: impl Into<PathBuf>) -> Self {
        self.current_dir = Some(rel.into());
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Bytes on stdin (default: none, stdin is /dev/null).
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(input.into());
        self
    }

    /// stdout, exactly (the default is "").
    pub fn stdout(mut self, exact: &str) -> Self {
        self.stdout.exact = Some(exact.to_string());
        self
    }

    pub fn stdout_contains(mut self, part: &str) -> Self {
        self.stdout.checks.push(Check::Contains(part.to_string()));
        self
    }

    pub fn stdout_regex(mut self, re: &str) -> Self {
        self.stdout.checks.push(Check::Regex(regex(re)));
        self
    }

    /// stdout is this JSON document (any layout, any key order).
    pub fn stdout_json(mut self, value: serde_json::Value) -> Self {
        self.stdout.checks.push(Check::Json(value));
        self
    }

    /// stdout is anything (read it from `Ran::stdout` or `Ran::json`).
    pub fn any_stdout(mut self) -> Self {
        self.stdout.checks.push(Check::Regex(regex("")));
        self
    }

    /// stderr, exactly (the default is "").
    pub fn stderr(mut self, exact: &str) -> Self {
        self.stderr.exact = Some(exact.to_string());
        self
    }

    pub fn stderr_contains(mut self, part: &str) -> Self {
        self.stderr.checks.push(Check::Contains(part.to_string()));
        self
    }

    pub fn stderr_regex(mut self, re: &str) -> Self {
        self.stderr.checks.push(Check::Regex(regex(re)));
        self
    }

    /// The exit code (the default is 0).
    pub fn status(mut self, code: i32) -> Self {
        self.status = code;
        self
    }

    /// Run and check; panics with expected against actual on any mismatch.
    #[track_caller]
    pub fn run(self) -> Ran<'a> {
        let proj = &*self.project;
        let cwd = match &self.current_dir {
            Some(rel) => proj.path().join(rel),
            None => proj.path().to_path_buf(),
        };
        let mut c = Command::new(bin());
        c.args(&self.args).current_dir(&cwd);
        for k in HOOKS {
            c.env_remove(k);
        }
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let guarded = matches!(self.status, 2..=4);
        let before = guarded.then(|| proj.snapshot());
        let mut child = c
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin().display()));
        if let Some(input) = &self.stdin {
            // The command may exit before reading everything (an early error): that is fine.
            let _ = child.stdin.take().unwrap().write_all(input);
        }
        let o = child.wait_with_output().unwrap();
        let stdout = normalize(proj, &String::from_utf8_lossy(&o.stdout));
        let stderr = normalize(proj, &String::from_utf8_lossy(&o.stderr));
        let status = o.status.code();

        let mut report = String::new();
        let mut context = String::new();
        for (name, expect, actual) in [
            ("stdout", &self.stdout, &stdout),
            ("stderr", &self.stderr, &stderr),
        ] {
            let failed = expect.failed(actual);
            for want in &failed {
                let _ = write!(report, "\n{name} mismatch\n  expected {want}");
            }
            if failed.is_empty() {
                let _ = write!(context, "\n{name} (as expected):\n{}", block(actual));
            } else {
                let _ = write!(report, "  actual {name}:\n{}", block(actual));
            }
        }
        if status != Some(self.status) {
            let _ = write!(
                report,
                "\nstatus mismatch\n  expected: {}\n  actual:   {}",
                self.status,
                status.map_or("killed by a signal".to_string(), |c| c.to_string())
            );
        }
        if let Some(before) = before
            && before != snapshot(&proj.store())
        {
            let _ = write!(
                report,
                "\nthe command failed with {} but changed the task store",
                self.status
            );
        }
        if !report.is_empty() {
            let args: Vec<_> = self.args.iter().map(|a| a.to_string_lossy()).collect();
            panic!("baton {args:?} (in {}){report}{context}", cwd.display());
        }
        Ran {
            project: self.project,
            stdout,
            stderr,
        }
    }
}

/// A run that passed its checks: the project (to go on in) and what it printed.
pub struct Ran<'a> {
    project: Project<'a>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran<'_> {
    /// stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// The project, to continue in; only for a `Test::new()`/`Test::with()` run.
    pub fn proj(self) -> Proj {
        match self.project {
            Project::Owned(p) => p,
            Project::Borrowed(_) => panic!("a borrowed project stays with its owner"),
        }
    }
}

impl Deref for Ran<'_> {
    type Target = Proj;
    fn deref(&self) -> &Proj {
        &self.project
    }
}

fn regex(re: &str) -> regex::Regex {
    regex::Regex::new(re).unwrap_or_else(|e| panic!("bad regex /{re}/: {e}"))
}

/// The project's directory (as given and canonical: macOS's /var → /private/var) → `[PROJECT]`.
fn normalize(proj: &Proj, text: &str) -> String {
    let mut out = text.to_string();
    let given = proj.path().to_path_buf();
    let canonical = given.canonicalize().unwrap_or_else(|_| given.clone());
    for p in [canonical, given] {
        let p = p.to_string_lossy().into_owned();
        if !p.is_empty() {
            out = out.replace(&p, "[PROJECT]");
        }
    }
    out
}

/// The text indented, with its end made visible.
fn block(s: &str) -> String {
    if s.is_empty() {
        return "    (empty)\n".to_string();
    }
    let mut out = String::new();
    for line in s.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, ""),
            None => (line, "  ⟵ no newline at the end"),
        };
        let _ = writeln!(out, "    |{body}{nl}");
    }
    out
}

/// The first line where `actual` differs from `want`.
fn first_difference(want: &str, actual: &str) -> String {
    let (w, a): (Vec<&str>, Vec<&str>) = (want.lines().collect(), actual.lines().collect());
    for i in 0..w.len().max(a.len()) {
        let (x, y) = (w.get(i), a.get(i));
        if x != y {
            return format!(
                "  first difference, line {}:\n    expected {:?}\n    actual   {:?}\n",
                i + 1,
                x.copied().unwrap_or("(no line)"),
                y.copied().unwrap_or("(no line)")
            );
        }
    }
    "  (the difference is the final newline)\n".to_string()
}
