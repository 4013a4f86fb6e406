//! vitest (default and verbose reporters): `Tests  2 failed | 483 passed (485)` totals, the
//! `Failed Tests` section's ` FAIL  file > suite > test` blocks, `Failed Suites` for files that
//! could not load (each one error).

use std::sync::LazyLock;

use regex::Regex;

use super::{Counts, Failure, Kind, Summarizer, Summary, add, clip, num};

static TOTALS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\d+) (failed|passed|skipped|todo|expected fail)").expect("regex")
});
static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*❯ (\S+?):(\d+):(\d+)\s*$").expect("regex"));

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Section {
    #[default]
    Run,
    FailedTests,
    FailedSuites,
    Other,
}

#[derive(Debug, Default)]
pub struct Vitest {
    counts: Option<Counts>,
    section: Section,
    failed_suites: u64,
    first: Option<Failure>,
    capturing: bool,
    /// First `×` line of the run listing: a fallback when the Failed Tests section is missing.
    first_cross: Option<String>,
}

impl Vitest {
    fn capture(&mut self, line: &str) {
        let Some(f) = self.first.as_mut() else {
            return;
        };
        let t = line.trim();
        if let Some(c) = LOCATION.captures(line) {
            if f.line.is_none() {
                f.line = c[2].parse().ok();
            }
            self.capturing = false;
        } else if let Some(v) = t.strip_prefix("Expected:") {
            f.expected.get_or_insert_with(|| clip(v));
        } else if let Some(v) = t.strip_prefix("Received:") {
            f.received.get_or_insert_with(|| clip(v));
        } else if f.message.is_none() && !t.is_empty() {
            f.message = Some(clip(t));
        }
    }
}

impl Summarizer for Vitest {
    fn line(&mut self, line: &str) {
        let t = line.trim_start();
        if t.starts_with('⎯') {
            self.capturing = false;
            if line.contains(" Failed Tests ") {
                self.section = Section::FailedTests;
            } else if line.contains(" Failed Suites ") {
                self.section = Section::FailedSuites;
            } else if line.contains(" Unhandled ") {
                self.section = Section::Other;
            }
            return;
        }
        if let Some(rest) = t.strip_prefix("Tests  ") {
            let mut c = Counts {
                passed: Some(0),
                failed: Some(0),
                skipped: Some(0),
                ..Counts::default()
            };
            for p in TOTALS.captures_iter(rest) {
                let n = num(&p[1]);
                match &p[2] {
                    "passed" => add(&mut c.passed, n),
                    "failed" => add(&mut c.failed, n),
                    _ => add(&mut c.skipped, n),
                }
            }
            self.counts = Some(c);
            self.section = Section::Other;
            return;
        }
        if let Some(rest) = t.strip_prefix("FAIL  ") {
            self.capturing = false;
            match self.section {
                Section::FailedSuites => {
                    self.failed_suites += 1;
                    if self.first.is_none() {
                        let file = rest.split_whitespace().next().map(str::to_string);
                        self.first = Some(Failure {
                            test: file.clone(),
                            file,
                            ..Failure::default()
                        });
                        self.capturing = true;
                    }
                }
                Section::FailedTests if self.first.is_none() => {
                    let (file, test) = match rest.split_once(" > ") {
                        Some((f, t)) => (Some(f.to_string()), t.replace(" > ", " ")),
                        None => (None, rest.to_string()),
                    };
                    self.first = Some(Failure {
                        test: Some(test.trim().to_string()),
                        file,
                        ..Failure::default()
                    });
                    self.capturing = true;
                }
                _ => {}
            }
            return;
        }
        if self.section == Section::Run && self.first_cross.is_none() {
            if let Some(rest) = t.strip_prefix("× ") {
                self.first_cross = Some(rest.to_string());
            }
            return;
        }
        if self.capturing {
            self.capture(line);
        }
    }

    fn finish(&mut self) -> Summary {
        let first = self.first.clone().or_else(|| {
            self.first_cross.as_ref().map(|x| {
                // `× file > suite > test 6ms` (verbose) or `× test 6ms` (default, nested).
                let x = x.trim_end_matches(|c: char| c.is_ascii_digit() || c == 'm' || c == 's');
                let (file, test) = match x.split_once(" > ") {
                    Some((f, t)) => (Some(f.to_string()), t.replace(" > ", " ")),
                    None => (None, x.to_string()),
                };
                Failure {
                    test: Some(test.trim().to_string()),
                    file,
                    ..Failure::default()
                }
            })
        });
        match self.counts.clone() {
            Some(mut c) => {
                c.errors = Some(self.failed_suites);
                Summary::tests(Kind::Vitest, c, first)
            }
            None => {
                let mut s = Summary::new(Kind::Vitest, "no vitest totals line found".into());
                s.first_failure = first;
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::*;

    #[test]
    fn failed_tests_and_failed_suites() {
        let log = " RUN  v4.1.12 /p

 ❯ test/a.test.ts (2 tests | 1 failed) 5ms
     × adds 2ms

⎯⎯⎯⎯⎯⎯ Failed Suites 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/broken.test.ts [ test/broken.test.ts ]
Error: Cannot find module './x'

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/a.test.ts > math > adds
AssertionError: expected 3 to be 4

Expected: 4
Received: 3

 ❯ test/a.test.ts:7:17

 Test Files  2 failed (2)
      Tests  1 failed | 1 passed (2)
";
        let s = run(Kind::Vitest, log);
        let c = s.counts.unwrap();
        assert_eq!((c.passed, c.failed, c.errors), (Some(1), Some(1), Some(1)));
        // The suite that could not load is listed first, so it is the first failure.
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("test/broken.test.ts"));
        assert_eq!(
            f.message.as_deref(),
            Some("Error: Cannot find module './x'")
        );
    }

    #[test]
    fn first_failed_test_details() {
        let log = "⎯⎯ Failed Tests 1 ⎯⎯\n\n FAIL  test/a.test.ts > math > adds\nAssertionError: no\n\n\
Expected: 4\nReceived: 3\n\n ❯ test/a.test.ts:7:17\n\n      Tests  1 failed | 1 passed (2)\n";
        let f = run(Kind::Vitest, log).first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("math adds"));
        assert_eq!(f.file.as_deref(), Some("test/a.test.ts"));
        assert_eq!((f.line, f.expected.as_deref()), (Some(7), Some("4")));
    }
}
