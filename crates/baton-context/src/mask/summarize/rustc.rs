//! rustc / cargo build diagnostics: `error[E0277]: …` followed by `  --> file:line:col`.
//! Shared by the cargo test and nextest summarizers, whose builds can fail the same way.

use std::sync::LazyLock;

use regex::Regex;

use super::{Counts, Failure, Kind, Summarizer, Summary, clip};

static COULD_NOT_COMPILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"could not compile `([^`]+)`(?: \(([\w-]+)(?: "([^"]+)")?\))?"#).expect("regex")
});
static ARROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--> (.+?):(\d+):(\d+)\s*$").expect("regex"));

/// Bounded state of the diagnostics seen so far.
#[derive(Debug, Default)]
pub struct Rustc {
    pub errors: u64,
    pub warnings: u64,
    pub first: Option<Failure>,
    /// Waiting for the `-->` line of the first error.
    want_location: bool,
    /// `could not compile` seen: the build failed.
    pub build_failed: bool,
}

impl Rustc {
    /// Feed one line; returns true when the line was a diagnostic line this state consumed.
    pub fn line(&mut self, line: &str) -> bool {
        if let Some(rest) = line.strip_prefix("error") {
            let (is_code, msg) = match rest.strip_prefix('[') {
                Some(r) => match r.split_once("]: ") {
                    Some((_, m)) => (true, m),
                    None => return false,
                },
                None => match rest.strip_prefix(": ") {
                    Some(m) => (false, m),
                    None => return false,
                },
            };
            if !is_code && self.is_cargo_summary(msg) {
                return true;
            }
            self.errors += 1;
            if self.first.is_none() {
                self.first = Some(Failure {
                    message: Some(clip(line)),
                    ..Failure::default()
                });
                self.want_location = true;
            } else {
                self.want_location = false;
            }
            return true;
        }
        if let Some(rest) = line.strip_prefix("warning") {
            if (rest.starts_with(": ") || rest.starts_with('['))
                && !rest.contains("generated ")
                && !rest.contains("build failed, waiting")
            {
                self.warnings += 1;
                self.want_location = false;
                return true;
            }
            return false;
        }
        if self.want_location
            && line.contains("--> ")
            && let Some(c) = ARROW.captures(line)
        {
            self.want_location = false;
            if let Some(f) = self.first.as_mut() {
                f.file = Some(c[1].to_string());
                f.line = c[2].parse().ok();
            }
            return true;
        }
        false
    }

    /// cargo's own closing lines are not diagnostics, but `could not compile` names the target
    /// whose build failed, which stands in for the "test" of a compile error.
    fn is_cargo_summary(&mut self, msg: &str) -> bool {
        if let Some(c) = msg
            .contains("could not compile")
            .then(|| COULD_NOT_COMPILE.captures(msg))
            .flatten()
        {
            self.build_failed = true;
            if let Some(f) = self.first.as_mut()
                && f.test.is_none()
            {
                let name = c.get(3).or(c.get(1)).map(|m| m.as_str().to_string());
                f.test = name;
            }
            return true;
        }
        msg.starts_with("aborting due to")
            || msg.starts_with("test failed, to rerun")
            || msg.contains(" target failed")
            || msg.contains(" targets failed")
            || msg.starts_with("command `")
            || msg.starts_with("test run failed")
            || msg.starts_with("build failed")
            || msg.starts_with("Recipe `")
    }

    pub fn counts(&self) -> Counts {
        Counts {
            errors: Some(self.errors),
            warnings: Some(self.warnings),
            ..Counts::default()
        }
    }
}

/// `--kind rustc`: a build, not a test run, so only errors and warnings are counted.
#[derive(Debug, Default)]
pub struct RustcOnly {
    state: Rustc,
}

impl Summarizer for RustcOnly {
    fn line(&mut self, line: &str) {
        self.state.line(line);
    }

    fn finish(&mut self) -> Summary {
        let s = &self.state;
        let phrase = if s.errors > 0 || s.build_failed {
            format!(
                "build failed: {} error{}, {} warning{}",
                s.errors,
                if s.errors == 1 { "" } else { "s" },
                s.warnings,
                if s.warnings == 1 { "" } else { "s" }
            )
        } else {
            format!(
                "no errors, {} warning{}",
                s.warnings,
                if s.warnings == 1 { "" } else { "s" }
            )
        };
        let mut sum = Summary::new(Kind::Rustc, phrase);
        sum.counts = Some(s.counts());
        sum.first_failure = s.first.clone();
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::*;

    #[test]
    fn first_error_with_location_and_target() {
        let log = "   Compiling foo v0.1.0\nwarning: unused variable: `x`\n --> src/lib.rs:3:9\n\
error[E0308]: mismatched types\n  --> src/main.rs:10:5\n   |\nerror: cannot find value `y`\n  --> src/main.rs:12:1\n\
warning: `foo` (bin \"foo\") generated 1 warning\n\
error: could not compile `foo` (bin \"foo\") due to 2 previous errors\n";
        let s = run(Kind::Rustc, log);
        let c = s.counts.unwrap();
        assert_eq!((c.errors, c.warnings), (Some(2), Some(1)));
        let f = s.first_failure.unwrap();
        assert_eq!(f.file.as_deref(), Some("src/main.rs"));
        assert_eq!(f.line, Some(10));
        assert_eq!(f.test.as_deref(), Some("foo"));
        assert_eq!(f.message.as_deref(), Some("error[E0308]: mismatched types"));
        assert_eq!(s.summary, "build failed: 2 errors, 1 warning");
    }

    #[test]
    fn clean_build() {
        let s = run(
            Kind::Rustc,
            "   Compiling foo\n    Finished `dev` profile\n",
        );
        assert_eq!(s.summary, "no errors, 0 warnings");
        assert!(s.first_failure.is_none());
    }
}
