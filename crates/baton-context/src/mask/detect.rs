//! `--kind auto`: buffer the first lines (≤ 64 KB), score every format by its marker lines,
//! pick the best, then replay the buffer into that summarizer and stream the rest straight in.
//! The command name is a tie-breaker (and decides when the text is ambiguous).

use std::sync::LazyLock;

use regex::Regex;

use super::Kind;
use super::summarize::{Summarizer, Summary, for_each_line, for_kind};

/// Bytes of output looked at before deciding.
pub const DETECT_BYTES: usize = 64 * 1024;

static PYTEST_FINAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^=*\s*(?:\d+ [a-z]+(?: [a-z]+)?, )*\d+ (?:passed|failed|errors?|skipped)\b.* in \d+(?:\.\d+)?s")
        .expect("regex")
});
static PYTEST_PROGRESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:\S+\.py )?[.FEsxX]+\s+\[\s*\d+%\]$").expect("regex"));
static GO_PACKAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:ok|FAIL|\?)\s+\S+\t").expect("regex"));
static VITEST_FILE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ [✓❯×] \S+ \(\d+ tests?").expect("regex"));
static STAT_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ \S.* \| +(?:\d+ ?[+-]*|Bin )").expect("regex"));
static STAT_TOTAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ \d+ files? changed").expect("regex"));
static TSC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\S.*(?:\(\d+,\d+\): |:\d+:\d+ - )error TS\d+:").expect("regex"));

static UNITTEST_RAN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Ran \d+ tests? in \d").expect("regex"));
static UNITTEST_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:FAIL|ERROR): \S+ \([\w.]+\)").expect("regex"));
static UNITTEST_VERBOSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\w+ \([\w.]+\) \.\.\. (?:ok|FAIL|ERROR|skipped)").expect("regex")
});
static ESLINT_TOTAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^✖ \d+ problems? \(\d+ errors?, \d+ warnings?\)").expect("regex")
});
static ESLINT_PROBLEM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+\d+:\d+\s+(?:error|warning)\s{2,}\S").expect("regex"));

const KINDS: [Kind; 14] = [
    Kind::CargoTest,
    Kind::Nextest,
    Kind::Pytest,
    Kind::Jest,
    Kind::Vitest,
    Kind::NodeTest,
    Kind::GoTest,
    Kind::GitDiff,
    Kind::GitDiffStat,
    Kind::Rustc,
    Kind::Tsc,
    Kind::Unittest,
    Kind::Eslint,
    Kind::Generic,
];

fn idx(k: Kind) -> usize {
    KINDS
        .iter()
        .position(|&x| x == k)
        .unwrap_or(KINDS.len() - 1)
}

/// Score one line for every format. Each regex is tried only on a line that holds a literal
/// its match must hold: most outputs then compile none of them (a hook is a process a call).
fn score_line(line: &str, s: &mut [u32; KINDS.len()]) {
    let t = line.trim_start();
    let mut add = |k: Kind, n: u32| s[idx(k)] += n;
    if line.starts_with("TAP version") || t.starts_with("# Subtest: ") {
        add(Kind::NodeTest, 5);
    }
    if line.starts_with("ℹ tests ") || line.starts_with("ℹ pass ") || line.starts_with("ℹ fail ")
    {
        add(Kind::NodeTest, 5);
    }
    if t.starts_with("▶ ") || t.starts_with("✔ ") || t.starts_with("✖ ") {
        add(Kind::NodeTest, 1);
    }
    if line.contains("Nextest run ID")
        || (t.starts_with("Starting ") && line.contains(" across "))
        || (t.starts_with("Summary [") && line.contains("tests run:"))
        || t.starts_with("PASS [")
        || t.starts_with("FAIL [")
    {
        add(Kind::Nextest, 5);
    }
    if line.starts_with("test result: ")
        || (line.starts_with("running ") && (line.ends_with(" tests") || line.ends_with(" test")))
        || (line.starts_with("test ")
            && (line.ends_with(" ... ok")
                || line.ends_with(" ... FAILED")
                || line.ends_with(" ... ignored")))
    {
        add(Kind::CargoTest, 3);
    }
    if line.contains("test session starts")
        || line.starts_with("collected ")
        || line.starts_with("collecting ...")
        || line.starts_with("INTERNALERROR>")
        || ((line.starts_with("FAILED ") || line.starts_with("ERROR ")) && line.contains(".py"))
        || (line.ends_with("%]") && PYTEST_PROGRESS.is_match(line))
        || (line.contains(" in ")
            && line
                .trim_start_matches(['=', ' '])
                .starts_with(|c: char| c.is_ascii_digit())
            && PYTEST_FINAL.is_match(line))
    {
        add(Kind::Pytest, 3);
    }
    if line.starts_with("Test Suites: ") || line.starts_with("Tests:       ") {
        add(Kind::Jest, 5);
    }
    if (line.starts_with("PASS ") || line.starts_with("FAIL ")) && !line.contains('\t') {
        add(Kind::Jest, 2);
    }
    if line.starts_with(" RUN  v")
        || t.starts_with("Test Files  ")
        || line.contains("⎯ Failed Tests ")
        || (line.contains(" test") && VITEST_FILE.is_match(line))
    {
        add(Kind::Vitest, 5);
    }
    if line.starts_with("=== RUN ")
        || t.starts_with("--- PASS: ")
        || t.starts_with("--- FAIL: ")
        || t.starts_with("--- SKIP: ")
        || (line.contains('\t') && GO_PACKAGE.is_match(line))
    {
        add(Kind::GoTest, 3);
    }
    if line.starts_with("diff --git ") {
        add(Kind::GitDiff, 5);
    } else if line.starts_with("@@ -") {
        add(Kind::GitDiff, 1);
    }
    if line.contains(" changed") && STAT_TOTAL.is_match(line) {
        add(Kind::GitDiffStat, 5);
    } else if line.contains(" | ") && STAT_LINE.is_match(line) {
        add(Kind::GitDiffStat, 1);
    }
    if line.contains("error TS") && TSC.is_match(line) {
        add(Kind::Tsc, 5);
    }
    if line.starts_with("Ran ") && UNITTEST_RAN.is_match(line) {
        add(Kind::Unittest, 5);
    } else if (line.starts_with("FAIL: ") || line.starts_with("ERROR: ") || line.contains(") ... "))
        && (UNITTEST_HEADER.is_match(line) || UNITTEST_VERBOSE.is_match(line))
    {
        add(Kind::Unittest, 2);
    }
    if line.starts_with("✖ ") && ESLINT_TOTAL.is_match(line) {
        add(Kind::Eslint, 6);
    } else if (line.contains("error") || line.contains("warning")) && ESLINT_PROBLEM.is_match(line)
    {
        add(Kind::Eslint, 2);
    }
    if line.starts_with("error[E")
        || (line.starts_with("error: ") && line.contains("could not compile"))
    {
        add(Kind::Rustc, 3);
    } else if t.starts_with("--> ") || t.starts_with("Compiling ") || line.starts_with("warning: ")
    {
        add(Kind::Rustc, 1);
    }
}

/// The kind a command line suggests (`cargo nextest run` → nextest, `npx jest` → jest, …).
pub fn kind_from_command(argv: &[String]) -> Option<Kind> {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let words: Vec<String> = argv.iter().map(|a| base(a)).collect();
    let has = |w: &str| words.iter().any(|x| x == w);
    let first = words.first()?.as_str();
    Some(match first {
        "pytest" | "py.test" => Kind::Pytest,
        "python" | "python3" if has("pytest") => Kind::Pytest,
        "cargo" if has("nextest") => Kind::Nextest,
        "cargo" if has("test") => Kind::CargoTest,
        "cargo" if has("build") || has("check") || has("clippy") || has("rustc") => Kind::Rustc,
        "rustc" => Kind::Rustc,
        "go" if has("test") => Kind::GoTest,
        "jest" => Kind::Jest,
        "vitest" => Kind::Vitest,
        "tsc" => Kind::Tsc,
        "eslint" => Kind::Eslint,
        "python" | "python3" if has("unittest") => Kind::Unittest,
        "npx" | "pnpm" | "yarn" | "bunx" if has("eslint") => Kind::Eslint,
        "npx" | "pnpm" | "yarn" | "bunx" if has("jest") => Kind::Jest,
        "npx" | "pnpm" | "yarn" | "bunx" if has("vitest") => Kind::Vitest,
        "npx" | "pnpm" | "yarn" | "bunx" if has("tsc") => Kind::Tsc,
        "node" if has("--test") => Kind::NodeTest,
        "git" if has("diff") || has("show") || has("log") => {
            if argv.iter().any(|a| a == "--stat" || a == "--shortstat") {
                Kind::GitDiffStat
            } else {
                Kind::GitDiff
            }
        }
        _ => return None,
    })
}

/// Decide the kind from the first lines of output and an optional command hint.
pub fn detect(text: &[u8], hint: Option<Kind>) -> Kind {
    let mut scores = [0u32; KINDS.len()];
    for_each_line(text, |l| score_line(l, &mut scores));
    let mut best = Kind::Generic;
    let mut best_score = 0;
    for (i, &sc) in scores.iter().enumerate() {
        if sc > best_score {
            best_score = sc;
            best = KINDS[i];
        }
    }
    match hint {
        Some(h)
            if scores[idx(h)] > 0
                || best_score == 0
                // A test run whose build failed reads like plain rustc output.
                || (best == Kind::Rustc && matches!(h, Kind::CargoTest | Kind::Nextest)) =>
        {
            h
        }
        _ => best,
    }
}

/// The `--kind auto` summarizer: buffers, detects, then delegates.
pub struct Detector {
    hint: Option<Kind>,
    buf: Vec<u8>,
    inner: Option<Box<dyn Summarizer + Send>>,
}

impl Detector {
    pub fn new(hint: Option<Kind>) -> Detector {
        Detector {
            hint,
            buf: Vec::new(),
            inner: None,
        }
    }

    fn decide(&mut self) -> &mut Box<dyn Summarizer + Send> {
        if self.inner.is_none() {
            let kind = detect(&self.buf, self.hint);
            let mut s = for_kind(kind);
            let buf = std::mem::take(&mut self.buf);
            let n = memchr::memchr_iter(b'\n', &buf).count() as u64;
            s.block(&buf, 1, n);
            self.inner = Some(s);
        }
        self.inner.get_or_insert_with(|| for_kind(Kind::Generic))
    }
}

impl Summarizer for Detector {
    fn line(&mut self, line: &str) {
        let mut b = Vec::with_capacity(line.len() + 1);
        b.extend_from_slice(line.as_bytes());
        b.push(b'\n');
        let n = 1 + memchr::memchr_iter(b'\n', &self.buf).count() as u64;
        self.block(&b, n, 1);
    }

    fn block(&mut self, block: &[u8], first_line: u64, n_lines: u64) {
        if let Some(s) = self.inner.as_mut() {
            s.block(block, first_line, n_lines);
            return;
        }
        self.buf.extend_from_slice(block);
        if self.buf.len() >= DETECT_BYTES {
            self.decide();
        }
    }

    fn finish(&mut self) -> Summary {
        self.decide().finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_hints() {
        let k = |s: &str| kind_from_command(&s.split(' ').map(String::from).collect::<Vec<_>>());
        assert_eq!(k("cargo nextest run"), Some(Kind::Nextest));
        assert_eq!(k("cargo test -q"), Some(Kind::CargoTest));
        assert_eq!(k("/usr/bin/python3 -m pytest -x"), Some(Kind::Pytest));
        assert_eq!(k("npx jest --ci"), Some(Kind::Jest));
        assert_eq!(k("git diff --stat HEAD~1"), Some(Kind::GitDiffStat));
        assert_eq!(k("git diff"), Some(Kind::GitDiff));
        assert_eq!(k("ls -l"), None);
    }

    #[test]
    fn build_failure_under_cargo_test_stays_cargo_test() {
        let text = b"   Compiling x v0.1.0\nerror[E0308]: mismatched types\n  --> src/a.rs:1:1\n";
        assert_eq!(detect(text, None), Kind::Rustc);
        assert_eq!(detect(text, Some(Kind::CargoTest)), Kind::CargoTest);
    }

    #[test]
    fn unittest_and_eslint_are_told_from_their_own_lines() {
        let unittest = b"test_a (t.T.test_a) ... ok\ntest_b (t.T.test_b) ... FAIL\n\n=====\nFAIL: test_b (t.T.test_b)\n-----\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n";
        assert_eq!(detect(unittest, None), Kind::Unittest);
        // Its ✖ line is not node --test's.
        let eslint = "\n/p/a.js\n  3:7  error  'x' is defined but never used  no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)\n";
        assert_eq!(detect(eslint.as_bytes(), None), Kind::Eslint);
        let k = |s: &str| kind_from_command(&s.split(' ').map(String::from).collect::<Vec<_>>());
        assert_eq!(k("python3 -m unittest -v"), Some(Kind::Unittest));
        assert_eq!(k("npx eslint src"), Some(Kind::Eslint));
        assert_eq!(k("eslint ."), Some(Kind::Eslint));
    }

    #[test]
    fn unknown_text_is_generic() {
        assert_eq!(detect(b"hello\nworld\n", None), Kind::Generic);
        assert_eq!(detect(b"", None), Kind::Generic);
    }
}
