//! Streaming summarizers, one file per output format.
//!
//! Every summarizer is a line-based state machine: it sees each line once, keeps only bounded
//! state (counts, the first failure, a few short rings) and builds its [`Summary`] at the end, so
//! a 1 GB log costs no more memory than a 1 KB one.

use serde::Serialize;

use super::Kind;

mod cargo;
mod diff;
mod eslint;
mod generic;
mod gotest;
mod jest;
mod node;
mod pytest;
mod rustc;
mod tsc;
mod unittest;
mod vitest;

/// Longest text kept from any one line in a summary field (messages, expected/received).
pub(crate) const MAX_FIELD: usize = 400;

/// Test/diagnostic counts. `None` means the output never said (not zero).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub passed: Option<u64>,
    pub failed: Option<u64>,
    pub skipped: Option<u64>,
    pub errors: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xfailed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xpassed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<u64>,
}

/// The first failing test (or first error) as far as the output shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Failure {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub received: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A line of the output with its 1-based number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NumberedLine {
    pub line: u64,
    pub text: String,
}

/// Per-file change counts of a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    pub file: String,
    pub insertions: u64,
    pub deletions: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DiffStat {
    pub files_changed: u64,
    pub insertions: u64,
    pub deletions: u64,
    /// The first files (bounded); `files_changed` is the full count.
    pub files: Vec<FileChange>,
}

/// What a summarizer learned from the whole output.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub kind: Kind,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<Failure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<DiffStat>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub head: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tail: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub error_lines: Vec<NumberedLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_lines_total: Option<u64>,
    /// What the summary cannot know, said plainly (e.g. go without -v hides passing tests).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Summary {
    pub fn new(kind: Kind, summary: String) -> Summary {
        Summary {
            kind,
            summary,
            counts: None,
            first_failure: None,
            diff: None,
            head: Vec::new(),
            tail: Vec::new(),
            error_lines: Vec::new(),
            error_lines_total: None,
            notes: Vec::new(),
        }
    }

    /// A test-run summary: the phrase is built from the counts.
    pub fn tests(kind: Kind, counts: Counts, first_failure: Option<Failure>) -> Summary {
        let mut s = Summary::new(kind, counts_phrase(&counts));
        s.counts = Some(counts);
        s.first_failure = first_failure;
        s
    }
}

/// "54 passed, 1 failed" (+ skipped/errors/xfailed when non-zero): a masked output's summary phrase.
pub fn counts_phrase(c: &Counts) -> String {
    let mut parts = Vec::new();
    if let Some(n) = c.passed {
        parts.push(format!("{n} passed"));
    }
    if let Some(n) = c.failed {
        parts.push(format!("{n} failed"));
    }
    for (n, word) in [
        (c.skipped, "skipped"),
        (c.xfailed, "xfailed"),
        (c.xpassed, "xpassed"),
    ] {
        if let Some(n) = n.filter(|&n| n > 0) {
            parts.push(format!("{n} {word}"));
        }
    }
    if let Some(n) = c.errors.filter(|&n| n > 0) {
        parts.push(format!("{n} error{}", if n == 1 { "" } else { "s" }));
    }
    if let Some(n) = c.warnings.filter(|&n| n > 0) {
        parts.push(format!("{n} warning{}", if n == 1 { "" } else { "s" }));
    }
    if parts.is_empty() {
        "no test results found".into()
    } else {
        parts.join(", ")
    }
}

/// A streaming summarizer. Lines arrive without their newline, lossily decoded and with ANSI
/// colour codes removed.
pub trait Summarizer {
    fn line(&mut self, line: &str);

    /// A block of `n_lines` complete lines, each ending in `\n`; `first_line` is the 1-based
    /// number of its first line. Summarizers that can work on whole blocks (generic) override
    /// this for speed.
    fn block(&mut self, block: &[u8], _first_line: u64, _n_lines: u64) {
        for_each_line(block, |l| self.line(l));
    }

    fn finish(&mut self) -> Summary;
}

/// The summarizer for an explicit kind (`Auto` is handled by the detector).
pub fn for_kind(kind: Kind) -> Box<dyn Summarizer + Send> {
    match kind {
        Kind::CargoTest => Box::new(cargo::CargoTest::new(false)),
        Kind::Nextest => Box::new(cargo::CargoTest::new(true)),
        Kind::Pytest => Box::new(pytest::Pytest::default()),
        Kind::Jest => Box::new(jest::Jest::default()),
        Kind::Vitest => Box::new(vitest::Vitest::default()),
        Kind::NodeTest => Box::new(node::NodeTest::default()),
        Kind::GoTest => Box::new(gotest::GoTest::default()),
        Kind::GitDiff => Box::new(diff::GitDiff::default()),
        Kind::GitDiffStat => Box::new(diff::GitDiffStat::default()),
        Kind::Rustc => Box::new(rustc::RustcOnly::default()),
        Kind::Tsc => Box::new(tsc::Tsc::default()),
        Kind::Unittest => Box::new(unittest::Unittest::default()),
        Kind::Eslint => Box::new(eslint::Eslint::default()),
        Kind::Generic | Kind::Auto => Box::new(generic::Generic::default()),
    }
}

/// Split a block into lines and hand each to `f` as text.
pub fn for_each_line(block: &[u8], mut f: impl FnMut(&str)) {
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', block) {
        with_text(&block[start..nl], &mut f);
        start = nl + 1;
    }
    if start < block.len() {
        with_text(&block[start..], &mut f);
    }
}

fn with_text(raw: &[u8], f: &mut impl FnMut(&str)) {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    if memchr::memchr(0x1b, raw).is_some() {
        let text = String::from_utf8_lossy(raw);
        f(&strip_ansi(&text));
        return;
    }
    match std::str::from_utf8(raw) {
        Ok(s) => f(s),
        Err(_) => f(&String::from_utf8_lossy(raw)),
    }
}

/// Remove ANSI CSI sequences (colours, cursor moves): runners colour output on a TTY or when
/// forced, and the escape codes would defeat every pattern below.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Cut `s` to at most `MAX_FIELD` bytes on a char boundary.
pub(crate) fn clip(s: &str) -> String {
    let s = s.trim();
    if s.len() <= MAX_FIELD {
        // Whole: the masked document is redacted as a whole (`Outcome::to_json`). This runs
        // on many lines of a large output, where redacting each would cost.
        return s.to_string();
    }
    // Redacted before it is cut: a long token (a JWT, a PEM's base64) cut first would no
    // longer be recognised, and its first 400 characters shown.
    let redacted = super::redact::redact(s);
    let s = redacted.as_ref();
    if s.len() <= MAX_FIELD {
        return s.to_string();
    }
    let mut end = MAX_FIELD;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Leading spaces of a line (tabs count as one).
pub(crate) fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Parse "12" style numbers from a regex capture, ignoring garbage.
pub(crate) fn num(s: &str) -> u64 {
    s.trim().parse().unwrap_or(0)
}

pub(crate) fn add(slot: &mut Option<u64>, n: u64) {
    *slot = Some(slot.unwrap_or(0) + n);
}

#[cfg(test)]
pub(crate) fn run(kind: Kind, text: &str) -> Summary {
    let mut s = for_kind(kind);
    let n = text.bytes().filter(|&b| b == b'\n').count() as u64;
    s.block(text.as_bytes(), 1, n);
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_is_stripped_and_lines_split() {
        let mut got = Vec::new();
        for_each_line(b"\x1b[32mok\x1b[0m\r\nplain\n\xff\xfe\n", |l| {
            got.push(l.to_string())
        });
        assert_eq!(got, vec!["ok", "plain", "\u{fffd}\u{fffd}"]);
    }

    #[test]
    fn phrase_lists_known_counts() {
        let c = Counts {
            passed: Some(54),
            failed: Some(1),
            skipped: Some(0),
            errors: Some(2),
            ..Counts::default()
        };
        assert_eq!(counts_phrase(&c), "54 passed, 1 failed, 2 errors");
        assert_eq!(counts_phrase(&Counts::default()), "no test results found");
    }

    #[test]
    fn a_long_secret_is_redacted_before_the_line_is_cut() {
        let jwt = format!(
            "eyJhbGciOiJIUzI1NiJ9.eyJ{}.sig{}",
            "a".repeat(600),
            "b".repeat(50)
        );
        let c = clip(&format!("AssertionError: bad auth header Bearer {jwt}"));
        assert!(c.contains("[REDACTED]"), "{c}");
        assert!(!c.contains("eyJ"), "{c}");
    }

    #[test]
    fn clip_respects_char_boundaries() {
        let long = "é".repeat(MAX_FIELD);
        let c = clip(&long);
        assert!(c.len() <= MAX_FIELD + 3);
    }
}
