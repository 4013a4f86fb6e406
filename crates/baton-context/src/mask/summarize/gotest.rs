//! `go test` (plain and `-v`). `--- PASS/FAIL/SKIP: Name` lines are counted at any depth
//! (subtests count as tests, as `go test -json` does); package lines (`ok`, `FAIL`, `?`) close a
//! package and qualify the first failure's name (`pkg.TestName`). A package that fails without
//! a failing test (build failure, init panic) is one error.
//!
//! Without `-v`, go prints only failing tests: passed and skipped are then unknown (`None`), and
//! the summary says so instead of guessing.

use std::sync::LazyLock;

use regex::Regex;

use super::{Counts, Failure, Kind, Summarizer, Summary, clip};

static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*--- (PASS|FAIL|SKIP): (\S+)(?: \([\d.]+s\))?").expect("regex")
});
static PACKAGE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(ok|FAIL|\?)\s+(\S+)(?:\s+(\[[^\]]*\]|[\d.]+s|\(cached\)).*)?$").expect("regex")
});
static OUTPUT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(\S+\.go):(\d+): (.*)$").expect("regex"));
/// A compiler's or vet's error: `./z.go:3:2: undefined: y` (vet may say `vet: ` first).
static BUILD_ERROR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:vet: )?(\S+\.go):(\d+):(\d+:)? (.*)$").expect("regex"));

/// A goroutine frame's location in a test file: `\t/p/calc_test.go:20 +0x1d`.
static PANIC_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\t(\S+_test\.go):(\d+)(?: \+0x[0-9a-f]+)?$").expect("regex"));

#[derive(Debug, Default)]
pub struct GoTest {
    verbose: bool,
    passed: u64,
    failed: u64,
    skipped: u64,
    errors: u64,
    /// `--- FAIL` lines since the last package line.
    pkg_failures: u64,
    /// Last `=== RUN/CONT` name and the first `file.go:N: msg` logged under it (verbose mode
    /// prints a test's log before its result line).
    running: Option<String>,
    run_output: Option<(String, u64, String)>,
    first: Option<Failure>,
    /// First failure's name is still unqualified (waiting for its package line).
    first_pending_pkg: bool,
    /// Reading the lines after the first failure's `--- FAIL` (plain mode prints them after).
    after_first: bool,
    /// `# pkg` header of a build failure, waiting for its first `file.go:l:c:` line.
    build_pkg: Option<String>,
    build_pending: Option<(String, u64, String)>,
    first_build: Option<Failure>,
}

impl GoTest {
    fn got_want(f: &mut Failure, t: &str) {
        if let Some(v) = t.strip_prefix("got:") {
            f.received.get_or_insert_with(|| clip(v));
        } else if let Some(v) = t.strip_prefix("want:") {
            f.expected.get_or_insert_with(|| clip(v));
        }
    }
}

impl Summarizer for GoTest {
    fn line(&mut self, line: &str) {
        if let Some(rest) = line
            .strip_prefix("=== RUN")
            .or_else(|| line.strip_prefix("=== CONT"))
        {
            self.verbose = true;
            self.after_first = false;
            self.running = Some(rest.trim().to_string());
            self.run_output = None;
            return;
        }
        if line.starts_with("=== ") {
            self.verbose = true;
            return;
        }
        if let Some(c) = RESULT.captures(line) {
            let name = c[2].to_string();
            self.after_first = false;
            match &c[1] {
                "PASS" => self.passed += 1,
                "SKIP" => self.skipped += 1,
                _ => {
                    self.failed += 1;
                    self.pkg_failures += 1;
                    if self.first.is_none() {
                        let mut f = Failure {
                            test: Some(name.clone()),
                            ..Failure::default()
                        };
                        if let (Some(run), Some((file, l, msg))) = (&self.running, &self.run_output)
                            && (run == &name || run.starts_with(&format!("{name}/")))
                        {
                            f.file = Some(file.clone());
                            f.line = Some(*l);
                            f.message = Some(msg.clone());
                        }
                        self.first = Some(f);
                        self.first_pending_pkg = true;
                        self.after_first = true;
                    }
                }
            }
            return;
        }
        if let Some(c) = PACKAGE.captures(line) {
            let failed_pkg = &c[1] == "FAIL";
            let pkg = c[2].to_string();
            if failed_pkg && self.pkg_failures == 0 {
                self.errors += 1;
                if self.first_build.is_none() {
                    self.first_build = Some(Failure {
                        test: Some(pkg.clone()),
                        message: c.get(3).map(|m| m.as_str().to_string()),
                        ..Failure::default()
                    });
                }
            }
            if self.first_pending_pkg
                && let Some(f) = self.first.as_mut()
                && let Some(t) = f.test.as_mut()
            {
                *t = format!("{pkg}.{t}");
                self.first_pending_pkg = false;
            }
            if let Some(f) = self.first_build.as_mut()
                && f.test.as_deref() == Some(pkg.as_str())
                && f.file.is_none()
                && let Some((file, l, msg)) = self.build_pending.take()
            {
                f.file = Some(file);
                f.line = Some(l);
                f.message = Some(msg);
            }
            self.pkg_failures = 0;
            self.after_first = false;
            self.running = None;
            self.run_output = None;
            self.build_pkg = None;
            return;
        }
        if let Some(pkg) = line.strip_prefix("# ") {
            self.build_pkg = Some(pkg.trim().to_string());
            self.build_pending = None;
            return;
        }
        // The first compile error, under a `# pkg` header or (with its column: a test's log
        // line has none, and is indented) anywhere before the package's `FAIL … [build
        // failed]`: go prints a build's errors before any test runs, other packages' results
        // between them at times.
        if self.build_pending.is_none()
            && self.running.is_none()
            && let Some(c) = BUILD_ERROR.captures(line)
            && (self.build_pkg.is_some() || c.get(3).is_some())
        {
            self.build_pending = Some((c[1].to_string(), c[2].parse().unwrap_or(0), clip(&c[4])));
            return;
        }
        let t = line.trim();
        if self.after_first
            && let Some(f) = self.first.as_mut()
        {
            if let Some(p) = t.strip_prefix("panic: ") {
                // A test that panicked: the panic is why (go adds " [recovered]" when its
                // runner caught it first).
                let p = p.trim_end_matches(" [recovered]");
                f.message
                    .get_or_insert_with(|| clip(&format!("panic: {p}")));
            } else if let Some(c) = PANIC_FRAME.captures(line) {
                // The goroutine's frames: the first in a test file is where the test was.
                if f.file.is_none() {
                    f.file = Some(c[1].to_string());
                    f.line = c[2].parse().ok();
                }
            } else if let Some(c) = OUTPUT.captures(line) {
                if f.file.is_none() {
                    f.file = Some(c[1].to_string());
                    f.line = c[2].parse().ok();
                    f.message = Some(clip(&c[3]));
                }
            } else {
                Self::got_want(f, t);
            }
            return;
        }
        if self.running.is_some()
            && self.run_output.is_none()
            && let Some(c) = OUTPUT.captures(line)
        {
            self.run_output = Some((c[1].to_string(), c[2].parse().unwrap_or(0), clip(&c[3])));
        }
    }

    fn finish(&mut self) -> Summary {
        let counts = Counts {
            passed: self.verbose.then_some(self.passed),
            failed: Some(self.failed),
            skipped: self.verbose.then_some(self.skipped),
            errors: Some(self.errors),
            ..Counts::default()
        };
        let first = self.first.clone().or_else(|| self.first_build.clone());
        let mut s = Summary::tests(Kind::GoTest, counts, first);
        if !self.verbose {
            s.summary
                .push_str(" (passing and skipped tests are not listed without -v)");
            s.notes.push(
                "go test without -v prints only failing tests: passed/skipped counts are unknown"
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
    fn verbose_counts_subtests_and_takes_log_before_result() {
        let log = "=== RUN   TestA
--- PASS: TestA (0.00s)
=== RUN   TestB
=== RUN   TestB/one
    b_test.go:12: expected 2, got 3
--- FAIL: TestB (0.00s)
    --- FAIL: TestB/one (0.00s)
=== RUN   TestC
    c_test.go:5: skipping
--- SKIP: TestC (0.00s)
FAIL
FAIL\texample.com/m\t0.01s
ok  \texample.com/m/other\t0.02s
";
        let s = run(Kind::GoTest, log);
        let c = s.counts.unwrap();
        assert_eq!(
            (c.passed, c.failed, c.skipped, c.errors),
            (Some(1), Some(2), Some(1), Some(0))
        );
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("example.com/m.TestB"));
        assert_eq!((f.file.as_deref(), f.line), (Some("b_test.go"), Some(12)));
        assert_eq!(f.message.as_deref(), Some("expected 2, got 3"));
    }

    #[test]
    fn plain_mode_does_not_invent_passes() {
        let log = "--- FAIL: TestX (0.00s)
    x_test.go:9: boom
         got: 1
        want: 2
FAIL
FAIL\texample.com/x\t0.01s
ok  \texample.com/y\t0.01s
";
        let s = run(Kind::GoTest, log);
        let c = s.counts.unwrap();
        assert_eq!((c.passed, c.failed, c.skipped), (None, Some(1), None));
        assert!(s.summary.contains("not listed without -v"), "{}", s.summary);
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("example.com/x.TestX"));
        assert_eq!((f.file.as_deref(), f.line), (Some("x_test.go"), Some(9)));
        assert_eq!(
            (f.expected.as_deref(), f.received.as_deref()),
            (Some("2"), Some("1"))
        );
    }

    #[test]
    fn a_panicking_test_keeps_the_panic_and_its_test_files_frame() {
        let log = "=== RUN   TestIndex
--- FAIL: TestIndex (0.00s)
panic: runtime error: index out of range [5] with length 3 [recovered]
\tpanic: runtime error: index out of range [5] with length 3

goroutine 7 [running]:
testing.tRunner.func1.2({0x5d8e40, 0xc000018180})
\t/usr/local/go/src/testing/testing.go:1631 +0x24a
example.com/calc.Index(...)
\t/p/calc.go:12
example.com/calc.TestIndex(0xc000007a00)
\t/p/calc_test.go:20 +0x1d
FAIL\texample.com/calc\t0.004s
FAIL
";
        let f = run(Kind::GoTest, log).first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("example.com/calc.TestIndex"));
        assert_eq!(
            f.message.as_deref(),
            Some("panic: runtime error: index out of range [5] with length 3")
        );
        assert_eq!(
            (f.file.as_deref(), f.line),
            (Some("/p/calc_test.go"), Some(20))
        );
    }

    /// Real shapes of a build that failed: go 1.20+'s `# pkg [pkg.test]` header, vet's
    /// errors, another package's result between the error and its package's `FAIL` line.
    #[test]
    fn a_build_failure_names_its_first_error_in_every_shape() {
        for log in [
            "# example.com/a [example.com/a.test]\n./a_test.go:8:9: cannot use \"x\" (untyped string constant) as int value in assignment\n./a_test.go:9:2: undefined: y\nFAIL\texample.com/a [build failed]\nFAIL\n",
            "# example.com/a\n# [example.com/a]\nvet: ./a_test.go:8:9: cannot use \"x\" (untyped string constant) as int value in assignment\nFAIL\texample.com/a [build failed]\nFAIL\n",
            "# example.com/a [example.com/a.test]\na/a_test.go:8:9: cannot use \"x\" (untyped string constant) as int value in assignment\nok  \texample.com/b\t0.002s\nFAIL\texample.com/a [build failed]\nFAIL\n",
            "go: downloading example.com/dep v1.0.0\na/a_test.go:8:9: cannot use \"x\" (untyped string constant) as int value in assignment\nFAIL\texample.com/a [setup failed]\nFAIL\n",
        ] {
            let s = run(Kind::GoTest, log);
            let f = s.first_failure.unwrap();
            assert_eq!(f.test.as_deref(), Some("example.com/a"), "{log}");
            assert_eq!(f.line, Some(8), "{log}");
            assert_eq!(
                f.message.as_deref(),
                Some("cannot use \"x\" (untyped string constant) as int value in assignment"),
                "{log}"
            );
            assert_eq!(s.counts.unwrap().errors, Some(1));
        }
    }

    #[test]
    fn build_failure_is_an_error() {
        let log =
            "# example.com/z\n./z.go:3:2: undefined: y\nFAIL\texample.com/z [build failed]\nFAIL\n";
        let s = run(Kind::GoTest, log);
        assert_eq!(s.counts.unwrap().errors, Some(1));
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("example.com/z"));
        assert_eq!((f.file.as_deref(), f.line), (Some("./z.go"), Some(3)));
    }
}
