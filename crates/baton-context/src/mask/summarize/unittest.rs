//! Python's `unittest` (`python -m unittest`, `-v`): `Ran 12 tests in 0.01s`, then `OK` or
//! `FAILED (failures=1, errors=1, skipped=2)`. The first failure is the first `FAIL:`/`ERROR:`
//! block: its test id (the parenthesised `module.Class.test`), the traceback's frame in a test
//! file (else its last frame), and the exception line that ends the traceback — the last
//! exception of a chain, which is the one the test failed with.

use std::sync::LazyLock;

use regex::Regex;

use super::{Counts, Failure, Kind, Summarizer, Summary, add, clip, num};

static RAN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Ran (\d+) tests? in ").expect("regex"));
static VERDICT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(OK|FAILED)(?: \((.*)\))?\s*$").expect("regex"));
static PART: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"([a-z_ ]+)=(\d+)").expect("regex"));
static HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(FAIL|ERROR): (\S+)(?: \(([^)]+)\))?").expect("regex"));
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s+File "([^"]+)", line (\d+)"#).expect("regex"));

#[derive(Debug, Default)]
pub struct Unittest {
    ran: Option<u64>,
    verdict: Option<Counts>,
    first: Option<Failure>,
    /// Inside the first failure's block (until the next `=====`/`-----` rule after it).
    in_first: bool,
    /// The first block's traceback frames: `(file, line)`, oldest first (bounded).
    frames: Vec<(String, u64)>,
    /// The traceback's frames are being read; the next unindented line is the exception.
    in_traceback: bool,
    /// The rule line (`====…`) just seen: a `FAIL:`/`ERROR:` header may follow.
    after_rule: bool,
    /// A rule closed the first block's traceback part: `-----` opens it, the next ends it.
    rules_in_first: u32,
}

/// Frames remembered of the first failure's traceback.
const MAX_FRAMES: usize = 64;

impl Summarizer for Unittest {
    fn line(&mut self, line: &str) {
        let rule = line.len() >= 20
            && (line.bytes().all(|b| b == b'=') || line.bytes().all(|b| b == b'-'));
        if rule {
            if self.in_first {
                self.rules_in_first += 1;
                // `FAIL: x` / `-----` / traceback / (`=====` next block | `-----` the end).
                if self.rules_in_first >= 2 {
                    self.in_first = false;
                }
            }
            self.after_rule = line.starts_with('=');
            return;
        }
        let after_rule = std::mem::take(&mut self.after_rule);
        if after_rule
            && self.first.is_none()
            && let Some(c) = HEADER.captures(line)
        {
            let id = c.get(3).map_or(&c[2], |m| m.as_str());
            self.first = Some(Failure {
                test: Some(id.to_string()),
                ..Failure::default()
            });
            self.in_first = true;
            return;
        }
        if let Some(c) = RAN.captures(line) {
            self.ran = Some(num(&c[1]));
            self.in_first = false;
            return;
        }
        if let Some(c) = VERDICT.captures(line)
            && self.ran.is_some()
        {
            let mut counts = Counts {
                failed: Some(0),
                errors: Some(0),
                skipped: Some(0),
                ..Counts::default()
            };
            for p in PART.captures_iter(c.get(2).map_or("", |m| m.as_str())) {
                let n = num(&p[2]);
                match p[1].trim() {
                    "failures" => add(&mut counts.failed, n),
                    "errors" => add(&mut counts.errors, n),
                    "skipped" => add(&mut counts.skipped, n),
                    "expected failures" => add(&mut counts.xfailed, n),
                    "unexpected successes" => add(&mut counts.xpassed, n),
                    _ => {}
                }
            }
            self.verdict = Some(counts);
            return;
        }
        if !self.in_first {
            return;
        }
        let Some(f) = self.first.as_mut() else {
            return;
        };
        if line.starts_with("Traceback (most recent call last)") {
            self.in_traceback = true;
            self.frames.clear();
            // A chained exception: the one the test failed with is the last of the chain.
            f.message = None;
            return;
        }
        if self.in_traceback {
            if let Some(c) = FRAME.captures(line) {
                if self.frames.len() < MAX_FRAMES {
                    self.frames.push((c[1].to_string(), num(&c[2])));
                }
            } else if !line.starts_with(' ') && !line.trim().is_empty() {
                self.in_traceback = false;
                f.message = Some(clip(line));
            }
        }
    }

    fn finish(&mut self) -> Summary {
        let mut first = self.first.clone();
        if let Some(f) = first.as_mut() {
            let in_test = |file: &str| {
                file.rsplit('/')
                    .next()
                    .is_some_and(|b| b.starts_with("test"))
            };
            let frame = self
                .frames
                .iter()
                .rev()
                .find(|(file, _)| in_test(file))
                .or(self.frames.last());
            if let Some((file, line)) = frame {
                f.file = Some(file.clone());
                f.line = Some(*line);
            }
        }
        match (self.ran, self.verdict.clone()) {
            (Some(ran), Some(mut c)) => {
                let not_passed = [c.failed, c.errors, c.skipped, c.xfailed]
                    .iter()
                    .map(|n| n.unwrap_or(0))
                    .sum::<u64>();
                c.passed = Some(ran.saturating_sub(not_passed));
                Summary::tests(Kind::Unittest, c, first)
            }
            _ => {
                let mut s = Summary::new(Kind::Unittest, "no unittest result line found".into());
                s.first_failure = first;
                s.notes
                    .push("the run did not print its closing counts (interrupted?)".into());
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::*;

    const RED: &str = "test_add (test_calc.TestCalc.test_add) ... ok
test_answer (test_calc.TestCalc.test_answer) ... FAIL
test_div (test_calc.TestCalc.test_div) ... ERROR

======================================================================
ERROR: test_div (test_calc.TestCalc.test_div)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/p/calc.py\", line 5, in div
    return a / b
ZeroDivisionError: division by zero

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File \"/p/tests/test_calc.py\", line 14, in test_div
    self.assertEqual(div(1, 0), 0)
  File \"/p/calc.py\", line 7, in div
    raise ValueError(\"cannot divide by zero\")
ValueError: cannot divide by zero

======================================================================
FAIL: test_answer (test_calc.TestCalc.test_answer)
----------------------------------------------------------------------
Traceback (most recent call last):
  File \"/p/tests/test_calc.py\", line 10, in test_answer
    self.assertEqual(compute(), 42)
AssertionError: 41 != 42

----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=1, errors=1, skipped=1)
";

    #[test]
    fn the_first_block_its_last_exception_and_the_test_files_frame() {
        let s = run(Kind::Unittest, RED);
        let c = s.counts.clone().unwrap();
        assert_eq!(
            (c.passed, c.failed, c.errors, c.skipped),
            (Some(1), Some(1), Some(1), Some(1))
        );
        assert_eq!(s.summary, "1 passed, 1 failed, 1 skipped, 1 error");
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("test_calc.TestCalc.test_div"));
        assert_eq!(
            f.message.as_deref(),
            Some("ValueError: cannot divide by zero")
        );
        assert_eq!(f.file.as_deref(), Some("/p/tests/test_calc.py"));
        assert_eq!(f.line, Some(14));
    }

    #[test]
    fn a_green_run_and_a_run_cut_short() {
        let s = run(
            Kind::Unittest,
            "..\n----------------------------------------------------------------------\nRan 2 tests in 0.000s\n\nOK\n",
        );
        assert_eq!(s.summary, "2 passed, 0 failed");
        assert!(s.first_failure.is_none());
        let cut = run(Kind::Unittest, &RED[..RED.find("Ran 4").unwrap()]);
        assert_eq!(cut.summary, "no unittest result line found");
        assert_eq!(
            cut.first_failure.unwrap().message.as_deref(),
            Some("ValueError: cannot divide by zero")
        );
    }
}
