//! pytest: plain, `-q`, `-v`, xdist, `--tb=line|short|long`, collection errors, INTERNALERROR.
//!
//! Counts come from the closing line (`== 2 failed, 1399 passed, 10 skipped in 10.31s ==`, or
//! bare under `-q`). The first failure is the first section header under `ERRORS`/`FAILURES`
//! (log order: collection errors come first), resolved to its full node id through the
//! `short test summary info` lines; without headers (`--tb=line`) the first summary entry is used.

use std::sync::LazyLock;

use regex::Regex;

use super::{Counts, Failure, Kind, Summarizer, Summary, add, clip, num};

static FINAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^=*\s*((?:\d+ [a-z]+(?: [a-z]+)?, )*\d+ [a-z]+(?: [a-z]+)?) in \d+(?:\.\d+)?s(?: \([0-9:.]+\))?\s*=*$")
        .expect("regex")
});
static PART: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d+) ([a-z]+(?: [a-z]+)?)").expect("regex"));
static SECTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^=+ (FAILURES|ERRORS|[^=]+?) =+$").expect("regex"));
static HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^_{3,} (.+?) _{3,}$").expect("regex"));
static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([^\s:]+\.py):(\d+): ").expect("regex"));
/// A `--tb=line` entry: `path/to/file.py:26: UserWarning: I/O error(2)`.
static LINE_TB: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\S+\.py:\d+: (\S.*)$").expect("regex"));

/// The lines between the exceptions of a chain (`raise … from …`, or raised while handling).
fn is_chained(line: &str) -> bool {
    line == "During handling of the above exception, another exception occurred:"
        || line == "The above exception was the direct cause of the following exception:"
}

static PROGRESS_FAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:\[gw\d+\] \[\s*\d+%\] (?:FAILED|ERROR) (\S+::\S+)|(\S+::\S+) (?:FAILED|ERROR)\b)",
    )
    .expect("regex")
});

/// How many distinct file locations of the first failure's traceback are remembered.
const MAX_LOCATIONS: usize = 32;

#[derive(Debug, Default)]
pub struct Pytest {
    counts: Option<Counts>,
    in_sections: bool,
    /// First `___ name ___` header under FAILURES/ERRORS, and whether we are still inside it.
    header: Option<String>,
    in_first_section: bool,
    /// `(file, last line)` of the traceback entries in the first section.
    locations: Vec<(String, u64)>,
    message: Option<String>,
    /// `--tb=line`: the first failure's `path:line: message`.
    line_message: Option<String>,
    /// Full node id matching `header`, found in the short summary.
    resolved: Option<String>,
    first_summary_entry: Option<String>,
    first_progress_failure: Option<String>,
    internal_error: bool,
    internal_last: Option<String>,
}

impl Pytest {
    fn matches_header(header: &str, nodeid: &str) -> bool {
        if let Some(path) = header.strip_prefix("ERROR collecting ") {
            return nodeid == path;
        }
        let header = header
            .strip_prefix("ERROR at setup of ")
            .or_else(|| header.strip_prefix("ERROR at teardown of "))
            .unwrap_or(header);
        match nodeid.split_once("::") {
            Some((_, tail)) => tail.replace("::", ".") == header || tail == header,
            None => false,
        }
    }

    fn final_counts(&mut self, parts: &str) {
        let mut c = Counts {
            passed: Some(0),
            failed: Some(0),
            skipped: Some(0),
            errors: Some(0),
            xfailed: Some(0),
            xpassed: Some(0),
            ..Counts::default()
        };
        for p in PART.captures_iter(parts) {
            let n = num(&p[1]);
            match &p[2] {
                "passed" => add(&mut c.passed, n),
                "failed" => add(&mut c.failed, n),
                "skipped" => add(&mut c.skipped, n),
                "error" | "errors" => add(&mut c.errors, n),
                "xfailed" => add(&mut c.xfailed, n),
                "xpassed" => add(&mut c.xpassed, n),
                "warning" | "warnings" => add(&mut c.warnings, n),
                // deselected, "subtests passed" (not junit testcases), rerun: not test outcomes.
                _ => {}
            }
        }
        self.counts = Some(c);
    }
}

impl Summarizer for Pytest {
    fn line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("INTERNALERROR> ") {
            self.internal_error = true;
            let rest = rest.trim();
            if !rest.is_empty() && !rest.starts_with('^') {
                self.internal_last = Some(clip(rest));
            }
            return;
        }
        if line.starts_with('=') || line.starts_with(|c: char| c.is_ascii_digit()) {
            if let Some(c) = FINAL.captures(line) {
                self.final_counts(&c[1]);
                self.in_sections = false;
                self.in_first_section = false;
                return;
            }
            if line
                .trim_matches(|c| c == '=' || c == ' ')
                .starts_with("no tests ran in ")
            {
                self.final_counts("");
                return;
            }
        }
        if line.starts_with('=')
            && let Some(c) = SECTION.captures(line)
        {
            self.in_first_section = false;
            self.in_sections = matches!(&c[1], "FAILURES" | "ERRORS");
            return;
        }
        if self.in_sections
            && line.starts_with("___")
            && let Some(c) = HEADER.captures(line)
        {
            if self.header.is_none() {
                self.header = Some(c[1].to_string());
                self.in_first_section = true;
            } else {
                self.in_first_section = false;
            }
            return;
        }
        if self.in_first_section {
            if let Some(c) = LOCATION.captures(line) {
                let n = num(&c[2]);
                let full = self.locations.len() >= MAX_LOCATIONS;
                match self.locations.iter_mut().find(|(f, _)| f == &c[1]) {
                    Some(slot) => slot.1 = n,
                    None if !full => self.locations.push((c[1].to_string(), n)),
                    None => {}
                }
            } else if is_chained(line) {
                // A chained exception: the one that failed the test is the last of the chain.
                self.message = None;
            } else if self.message.is_none()
                && let Some(m) = line.strip_prefix("E ")
                && !m.trim().is_empty()
            {
                self.message = Some(clip(m));
            }
            return;
        }
        // `--tb=line`: no section headers, one `path:line: message` per failure; the first is
        // the first failure's.
        if self.in_sections
            && self.header.is_none()
            && self.line_message.is_none()
            && let Some(c) = LINE_TB.captures(line)
        {
            self.line_message = Some(clip(&c[1]));
            return;
        }
        if let Some(rest) = line
            .strip_prefix("FAILED ")
            .or_else(|| line.strip_prefix("ERROR "))
        {
            let nodeid = rest.split(" - ").next().unwrap_or(rest).trim();
            if nodeid.is_empty() {
                return;
            }
            if self.first_summary_entry.is_none() {
                self.first_summary_entry = Some(nodeid.to_string());
            }
            if self.resolved.is_none()
                && let Some(h) = &self.header
                && Self::matches_header(h, nodeid)
            {
                self.resolved = Some(nodeid.to_string());
            }
            return;
        }
        if self.first_progress_failure.is_none()
            && line.contains("::")
            && let Some(c) = PROGRESS_FAIL.captures(line)
        {
            let id = c.get(1).or(c.get(2)).map(|m| m.as_str().to_string());
            self.first_progress_failure = id;
        }
    }

    fn finish(&mut self) -> Summary {
        let mut counts = self.counts.clone();
        if self.internal_error {
            // pytest's junit records an INTERNALERROR as an error testcase of its own
            // (`pytest::internal`) while the terminal line does not count it.
            let c = counts.get_or_insert_with(Counts::default);
            add(&mut c.errors, 1);
        }
        let id = match (&self.header, &self.resolved) {
            (_, Some(id)) => Some(id.clone()),
            (Some(h), None) => Some(h.strip_prefix("ERROR collecting ").unwrap_or(h).to_string()),
            (None, None) => self
                .first_summary_entry
                .clone()
                .or_else(|| self.first_progress_failure.clone()),
        };
        let first = match id {
            Some(id) => {
                let file = match id.split_once("::") {
                    Some((f, _)) => Some(f.to_string()),
                    None if id.ends_with(".py") => Some(id.clone()),
                    // Only a short name: take the traceback's test-file entry as the file.
                    None => self
                        .locations
                        .iter()
                        .find(|(f, _)| f.rsplit('/').next().is_some_and(|b| b.starts_with("test")))
                        .map(|(f, _)| f.clone()),
                };
                let line = file.as_ref().and_then(|f| {
                    self.locations
                        .iter()
                        .find(|(lf, _)| lf == f)
                        .map(|(_, l)| *l)
                });
                Some(Failure {
                    test: Some(id),
                    file,
                    line,
                    message: self.message.clone().or_else(|| self.line_message.clone()),
                    ..Failure::default()
                })
            }
            None if self.internal_error => Some(Failure {
                // The id pytest's own junit report gives an INTERNALERROR.
                test: Some("pytest::internal".into()),
                message: self.internal_last.clone(),
                ..Failure::default()
            }),
            None => None,
        };
        let mut s = match counts {
            Some(c) => Summary::tests(Kind::Pytest, c, first),
            None => {
                let mut s = Summary::new(Kind::Pytest, "no pytest result line found".into());
                s.first_failure = first;
                s.notes
                    .push("the run did not print its closing counts (interrupted?)".into());
                s
            }
        };
        if self.internal_error {
            s.summary.push_str(" (INTERNALERROR)");
            s.notes.push(
                "pytest hit an INTERNALERROR; it is counted as one error, as pytest's junit does"
                    .into(),
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::*;

    #[test]
    fn header_resolved_through_short_summary() {
        let log = "collected 3 items

t/test_a.py .F.                                                   [100%]

=================================== FAILURES ===================================
_________________________________ TestX.test_b _________________________________
t/test_a.py:12: in test_b
    helper()
t/helpers.py:3: in helper
    assert 1 == 2
E   assert 1 == 2
t/test_a.py:14: AssertionError
=========================== short test summary info ============================
FAILED t/test_a.py::TestX::test_b - assert 1 == 2
========================= 1 failed, 2 passed in 0.10s =========================
";
        let s = run(Kind::Pytest, log);
        assert_eq!(s.summary, "2 passed, 1 failed");
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("t/test_a.py::TestX::test_b"));
        assert_eq!(f.file.as_deref(), Some("t/test_a.py"));
        assert_eq!(f.line, Some(14));
        assert_eq!(f.message.as_deref(), Some("assert 1 == 2"));
    }

    #[test]
    fn quiet_final_line_without_equals() {
        let s = run(
            Kind::Pytest,
            "..F\nFAILED a.py::t - x\n1 failed, 2 passed, 3 deselected, 2 warnings in 1.5s\n",
        );
        let c = s.counts.unwrap();
        assert_eq!(
            (c.passed, c.failed, c.warnings),
            (Some(2), Some(1), Some(2))
        );
        assert_eq!(s.first_failure.unwrap().test.as_deref(), Some("a.py::t"));
    }

    #[test]
    fn collection_error_first() {
        let log = "==================================== ERRORS ====================================
___________________ ERROR collecting tests/test_x.py ___________________
E   ImportError: nope
=========================== short test summary info ============================
ERROR tests/test_x.py
=============================== 1 error in 0.5s ===============================
";
        let s = run(Kind::Pytest, log);
        assert_eq!(s.counts.as_ref().unwrap().errors, Some(1));
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("tests/test_x.py"));
        assert_eq!(f.file.as_deref(), Some("tests/test_x.py"));
    }

    #[test]
    fn no_closing_line_is_reported_not_guessed() {
        let s = run(Kind::Pytest, "collected 3 items\nt.py ..\n");
        assert!(s.counts.is_none());
        assert_eq!(s.summary, "no pytest result line found");
    }
}
