//! jest: `PASS/FAIL file` lines, `● Suite › test` failure blocks, `Tests:` totals.

use std::sync::LazyLock;

use regex::Regex;

use super::{Counts, Failure, Kind, Summarizer, Summary, add, clip, num};

static TOTALS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\d+) (failed|passed|skipped|todo|pending|total)").expect("regex")
});
static AT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*at .*?\(?([^\s()]+):(\d+):(\d+)\)?$").expect("regex"));

#[derive(Debug, Default)]
pub struct Jest {
    counts: Option<Counts>,
    suites_failed_to_run: u64,
    current_file: Option<String>,
    first: Option<Failure>,
    /// Inside the first failure's block: lines after its `●` header.
    capturing: bool,
}

impl Jest {
    fn capture(&mut self, line: &str) {
        let t = line.trim();
        let Some(f) = self.first.as_mut() else {
            return;
        };
        if let Some(v) = t.strip_prefix("Expected:") {
            f.expected.get_or_insert_with(|| clip(v));
        } else if let Some(v) = t.strip_prefix("Received:") {
            f.received.get_or_insert_with(|| clip(v));
        } else if let Some(c) = AT.captures(line) {
            let file = &c[1];
            let matches_test_file = f
                .file
                .as_deref()
                .is_none_or(|tf| file == tf || file.ends_with(&format!("/{tf}")));
            if f.line.is_none() && matches_test_file {
                f.line = c[2].parse().ok();
                self.capturing = false;
            }
        } else if f.message.is_none() && !t.is_empty() {
            f.message = Some(clip(t));
        }
    }
}

impl Summarizer for Jest {
    fn line(&mut self, line: &str) {
        // On a terminal jest prints the badge with a space each side (` FAIL  file`): the
        // colours stripped, the spaces stay.
        let badge = line.strip_prefix(' ').unwrap_or(line);
        if let Some(rest) = badge
            .strip_prefix("FAIL ")
            .or_else(|| badge.strip_prefix("PASS "))
        {
            self.capturing = false;
            self.current_file = rest.split_whitespace().next().map(str::to_string);
            return;
        }
        if let Some(rest) = line.strip_prefix("Tests:") {
            let mut c = Counts {
                passed: Some(0),
                failed: Some(0),
                skipped: Some(0),
                errors: Some(self.suites_failed_to_run),
                ..Counts::default()
            };
            for p in TOTALS.captures_iter(rest) {
                let n = num(&p[1]);
                match &p[2] {
                    "passed" => add(&mut c.passed, n),
                    "failed" => add(&mut c.failed, n),
                    "skipped" | "todo" | "pending" => add(&mut c.skipped, n),
                    _ => {}
                }
            }
            self.counts = Some(c);
            self.capturing = false;
            return;
        }
        let t = line.trim_start();
        if let Some(title) = t.strip_prefix("● ") {
            self.capturing = false;
            let suite_error = title.starts_with("Test suite failed to run");
            if suite_error {
                self.suites_failed_to_run += 1;
            }
            if self.first.is_none() {
                let test = if suite_error {
                    self.current_file.clone()
                } else {
                    Some(title.replace(" › ", " "))
                };
                self.first = Some(Failure {
                    test,
                    file: self.current_file.clone(),
                    ..Failure::default()
                });
                self.capturing = true;
            }
            return;
        }
        if self.capturing {
            self.capture(line);
        }
    }

    fn finish(&mut self) -> Summary {
        match self.counts.clone() {
            Some(mut c) => {
                c.errors = Some(self.suites_failed_to_run);
                Summary::tests(Kind::Jest, c, self.first.clone())
            }
            None => {
                let mut s = Summary::new(Kind::Jest, "no jest totals line found".into());
                s.first_failure = self.first.clone();
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
    fn one_failing_test_among_many() {
        let log = "PASS src/models/user.test.ts
FAIL src/services/auth.test.ts
  Auth Service
    ✓ should login with valid credentials (5ms)
    ✕ should reject invalid password (3ms)

  ● Auth Service › should reject invalid password

    expect(received).toBe(expected)

      Expected: 401
      Received: 200

      at Object.<anonymous> (src/services/auth.test.ts:45:21)
      at processTicksAndRejections (node:internal/process/task_queues:95:5)

Test Suites: 1 failed, 5 passed, 6 total
Tests:       1 failed, 54 passed, 55 total
";
        let s = run(Kind::Jest, log);
        assert_eq!(s.summary, "54 passed, 1 failed");
        let f = s.first_failure.unwrap();
        assert_eq!(
            f.test.as_deref(),
            Some("Auth Service should reject invalid password")
        );
        assert_eq!(f.file.as_deref(), Some("src/services/auth.test.ts"));
        assert_eq!(f.line, Some(45));
        assert_eq!(f.expected.as_deref(), Some("401"));
        assert_eq!(f.received.as_deref(), Some("200"));
        assert_eq!(
            f.message.as_deref(),
            Some("expect(received).toBe(expected)")
        );
    }

    #[test]
    fn a_terminals_badge_names_the_file_too() {
        let log = " FAIL  src/calc.test.js
  calc
    ✕ answers 42 (3 ms)

  ● calc › answers 42

    expect(received).toBe(expected) // Object.is equality

    Expected: 42
    Received: 41

      at Object.toBe (src/calc.test.js:6:22)

Tests:       1 failed, 1 total
";
        let f = run(Kind::Jest, log).first_failure.unwrap();
        assert_eq!(f.file.as_deref(), Some("src/calc.test.js"));
        assert_eq!(f.line, Some(6));
        assert_eq!(
            (f.expected.as_deref(), f.received.as_deref()),
            (Some("42"), Some("41"))
        );
        assert_eq!(
            f.message.as_deref(),
            Some("expect(received).toBe(expected) // Object.is equality")
        );
    }

    #[test]
    fn suite_that_fails_to_run_is_an_error() {
        let log = "FAIL tests/broken.test.js\n  ● Test suite failed to run\n\n    SyntaxError: x\n\n\
Test Suites: 1 failed, 1 total\nTests:       0 total\n";
        let s = run(Kind::Jest, log);
        assert_eq!(s.counts.unwrap().errors, Some(1));
        assert_eq!(
            s.first_failure.unwrap().test.as_deref(),
            Some("tests/broken.test.js")
        );
    }
}
