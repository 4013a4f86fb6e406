//! `cargo test` (libtest, plain and `-q`) and `cargo nextest run` (incl. stress mode).
//!
//! Counts come from libtest's `test result:` lines (summed over every test binary) or nextest's
//! `Summary … tests run:` line (per-iteration lines in stress mode). The first failure is the first
//! `FAILED` test; its file and line come from the `panicked at file:line:col:` that follows.
//! Build failures are delegated to the shared rustc state.

use std::sync::LazyLock;

use regex::Regex;

use super::rustc::Rustc;
use super::{Counts, Failure, Kind, Summarizer, Summary, add, clip, num};

static TEST_RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured")
        .expect("regex")
});
static PANIC: LazyLock<Regex> = LazyLock::new(|| {
    // Rust ≥ 1.73: `thread 'name' (id) panicked at file:line:col:`; older: `… panicked at 'msg', f:l:c`.
    Regex::new(r"^\s*thread '([^']*)'(?: \(\d+\))? panicked at (?:'(.*)', )?(.+?):(\d+):(\d+):?$")
        .expect("regex")
});
static NEXTEST_FAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:TRY \d+ )?(?:FAIL|SIGSEGV|SIGABRT|SIGBUS|SIGILL|ABORT|TIMEOUT|LEAK-FAIL) \[[^\]]*\](?: \[[^\]]*\])? \(\s*\d+/\d+\) (.+?)\s*$",
    )
    .expect("regex")
});
static NEXTEST_COUNTS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d+) (passed|failed|skipped|timed out)").expect("regex"));

#[derive(Debug)]
pub struct CargoTest {
    nextest: bool,
    build: Rustc,
    passed: Option<u64>,
    failed: Option<u64>,
    skipped: Option<u64>,
    /// nextest stress mode: totals come from the per-iteration lines, not the final Summary.
    stress_seen: bool,
    first: Option<Failure>,
    /// Collecting the first failure's panic message (next lines after `panicked at`).
    in_panic: bool,
}

impl CargoTest {
    pub fn new(nextest: bool) -> CargoTest {
        CargoTest {
            nextest,
            build: Rustc::default(),
            passed: None,
            failed: None,
            skipped: None,
            stress_seen: false,
            first: None,
            in_panic: false,
        }
    }

    fn set_first(&mut self, name: &str) {
        if self.first.is_none() {
            self.first = Some(Failure {
                test: Some(name.to_string()),
                ..Failure::default()
            });
        }
    }

    /// The lines after `panicked at`: the message, then `left:`/`right:` of an assert_eq.
    /// Returns false (and stops) at the first line that is neither.
    fn panic_detail(&mut self, line: &str) -> bool {
        let t = line.trim();
        let Some(f) = self.first.as_mut() else {
            self.in_panic = false;
            return false;
        };
        if let Some(v) = t.strip_prefix("left: ") {
            // assert_eq!(actual, expected) is the convention: left is what the code produced.
            f.received = Some(clip(v));
        } else if let Some(v) = t.strip_prefix("right: ") {
            f.expected = Some(clip(v));
        } else if f.message.is_none() && !t.is_empty() {
            f.message = Some(clip(t));
        } else {
            self.in_panic = false;
            return false;
        }
        true
    }

    fn libtest_line(&mut self, line: &str) {
        // Each literal test before a regex is a condition of its match: most lines never
        // need the regex, so most runs never compile it.
        if let Some(c) = line
            .starts_with("test result: ")
            .then(|| TEST_RESULT.captures(line))
            .flatten()
        {
            add(&mut self.passed, num(&c[1]));
            add(&mut self.failed, num(&c[2]));
            add(&mut self.skipped, num(&c[3]));
            return;
        }
        if let Some(name) = line
            .strip_prefix("test ")
            .and_then(|r| r.strip_suffix(" ... FAILED"))
            .or_else(|| line.strip_prefix("---- ")?.strip_suffix(" stdout ----"))
            .or_else(|| line.trim_start_matches('.').strip_suffix(" --- FAILED"))
        {
            self.set_first(name.trim());
        }
    }

    fn nextest_line(&mut self, line: &str) {
        let t = line.trim_start();
        if (t.starts_with("Summary [") || t.starts_with("Stress test ["))
            && let Some((_, tail)) = line.split_once("tests run: ")
        {
            let stress = t.starts_with("Stress test [");
            if stress && !self.stress_seen {
                self.stress_seen = true;
                (self.passed, self.failed, self.skipped) = (None, None, None);
            } else if !stress {
                if self.stress_seen {
                    // The final stress Summary counts iterations, not tests.
                    return;
                }
                (self.passed, self.failed, self.skipped) = (None, None, None);
            }
            for c in NEXTEST_COUNTS.captures_iter(tail) {
                let n = num(&c[1]);
                match &c[2] {
                    "passed" => add(&mut self.passed, n),
                    "skipped" => add(&mut self.skipped, n),
                    _ => add(&mut self.failed, n),
                }
            }
            self.failed.get_or_insert(0);
            self.skipped.get_or_insert(0);
            return;
        }
        if self.first.is_none()
            && t.contains(") ")
            && let Some(c) = NEXTEST_FAIL.captures(line)
        {
            self.set_first(&c[1]);
        }
    }
}

impl Summarizer for CargoTest {
    fn line(&mut self, line: &str) {
        if self.in_panic && self.panic_detail(line) {
            return;
        }
        if self.build.line(line) {
            return;
        }
        if let Some(c) = line
            .contains(" panicked at ")
            .then(|| PANIC.captures(line))
            .flatten()
        {
            if let Some(f) = self.first.as_mut()
                && f.file.is_none()
            {
                let test = f.test.as_deref().unwrap_or("");
                // libtest names each test's thread after the test; nextest's name carries the
                // binary id in front (`bytes::test_bytes from_slice`).
                let thread = &c[1];
                if test == thread || test.ends_with(&format!(" {thread}")) || thread == "main" {
                    f.file = Some(c[3].to_string());
                    f.line = c[4].parse().ok();
                    if let Some(m) = c.get(2) {
                        f.message = Some(clip(m.as_str()));
                    } else {
                        self.in_panic = true;
                    }
                }
            }
            return;
        }
        if self.nextest {
            self.nextest_line(line);
        } else {
            self.libtest_line(line);
        }
    }

    fn finish(&mut self) -> Summary {
        let kind = if self.nextest {
            Kind::Nextest
        } else {
            Kind::CargoTest
        };
        let ran = self.passed.is_some();
        let counts = Counts {
            // A failed build ran no tests: zero is known, not guessed.
            passed: self.passed.or(self.build.build_failed.then_some(0)),
            failed: self.failed.or(self.build.build_failed.then_some(0)),
            skipped: self.skipped.or(self.build.build_failed.then_some(0)),
            errors: Some(self.build.errors),
            warnings: (self.build.warnings > 0).then_some(self.build.warnings),
            ..Counts::default()
        };
        let first = self.first.clone().or_else(|| self.build.first.clone());
        let mut s = Summary::tests(kind, counts, first);
        if self.build.build_failed && !ran {
            s.summary = format!("build failed, no tests ran: {}", s.summary);
        } else if !ran {
            s.notes
                .push("no test totals line found (run interrupted or not a test run?)".into());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::*;

    const LIBTEST: &str = "running 3 tests
test a ... ok
test b::c ... FAILED
test d ... ignored

failures:

---- b::c stdout ----

thread 'b::c' (123) panicked at src/lib.rs:9:5:
assertion `left == right` failed
  left: 1
 right: 2
note: run with `RUST_BACKTRACE=1`

failures:
    b::c

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

running 2 tests
test e ... ok
test f ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    #[test]
    fn libtest_counts_are_summed_and_first_failure_found() {
        let s = run(Kind::CargoTest, LIBTEST);
        let c = s.counts.unwrap();
        assert_eq!(
            (c.passed, c.failed, c.skipped, c.errors),
            (Some(3), Some(1), Some(1), Some(0))
        );
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("b::c"));
        assert_eq!(f.file.as_deref(), Some("src/lib.rs"));
        assert_eq!(f.line, Some(9));
        assert_eq!(f.expected.as_deref(), Some("2"));
        assert_eq!(f.received.as_deref(), Some("1"));
        assert_eq!(
            f.message.as_deref(),
            Some("assertion `left == right` failed")
        );
        assert_eq!(s.summary, "3 passed, 1 failed, 1 skipped");
    }

    #[test]
    fn old_panic_format() {
        let log = "test t ... FAILED\nthread 't' panicked at 'boom', src/x.rs:4:9\n\
test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
        let f = run(Kind::CargoTest, log).first_failure.unwrap();
        assert_eq!((f.file.as_deref(), f.line), (Some("src/x.rs"), Some(4)));
        assert_eq!(f.message.as_deref(), Some("boom"));
    }

    #[test]
    fn nextest_summary_and_failure() {
        let log = "    Starting 3 tests across 1 binary
        PASS [   0.01s] (1/3) k::t a
        FAIL [   0.02s] (2/3) k::t b
  stderr ───
    thread 'b' (9) panicked at tests/t.rs:7:5:
    boom
        SKIP [   0.00s] (3/3) k::t c
────────────
     Summary [   0.05s] 2 tests run: 1 passed, 1 failed, 1 skipped
        FAIL [   0.02s] (2/3) k::t b
";
        let s = run(Kind::Nextest, log);
        let c = s.counts.unwrap();
        assert_eq!((c.passed, c.failed, c.skipped), (Some(1), Some(1), Some(1)));
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("k::t b"));
        assert_eq!((f.file.as_deref(), f.line), (Some("tests/t.rs"), Some(7)));
        assert_eq!(f.message.as_deref(), Some("boom"));
    }

    #[test]
    fn no_totals_is_noted_not_invented() {
        let s = run(Kind::CargoTest, "test a ... ok\n");
        assert_eq!(s.counts.unwrap().passed, None);
        assert!(!s.notes.is_empty());
    }
}
