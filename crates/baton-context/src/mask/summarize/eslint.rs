//! ESLint's default `stylish` format: a file's path on a line of its own, then one
//! `  line:col  error|warning  message  rule-id` line per problem, closed by
//! `✖ 3 problems (2 errors, 1 warning)`. The first error (else the first warning) is the first
//! failure: its file, line, and message with its rule.

use std::sync::LazyLock;

use regex::Regex;

use super::{Counts, Failure, Kind, Summarizer, Summary, clip, num};

static PROBLEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(\d+):(\d+)\s+(error|warning)\s+(.+?)(?:\s{2,}(\S+))?\s*$").expect("regex")
});
static TOTAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^✖ (\d+) problems? \((\d+) errors?, (\d+) warnings?\)").expect("regex")
});

#[derive(Debug, Default)]
pub struct Eslint {
    file: Option<String>,
    errors: u64,
    warnings: u64,
    total: Option<(u64, u64)>,
    first_error: Option<Failure>,
    first_warning: Option<Failure>,
}

impl Summarizer for Eslint {
    fn line(&mut self, line: &str) {
        if let Some(c) = TOTAL.captures(line) {
            self.total = Some((num(&c[2]), num(&c[3])));
            return;
        }
        if let Some(c) = PROBLEM.captures(line) {
            let error = &c[3] == "error";
            if error {
                self.errors += 1;
            } else {
                self.warnings += 1;
            }
            let slot = if error {
                &mut self.first_error
            } else {
                &mut self.first_warning
            };
            if slot.is_none() {
                let message = match c.get(5) {
                    Some(rule) => format!("{} ({})", c[4].trim(), rule.as_str()),
                    None => c[4].trim().to_string(),
                };
                *slot = Some(Failure {
                    file: self.file.clone(),
                    line: c[1].parse().ok(),
                    message: Some(clip(&message)),
                    ..Failure::default()
                });
            }
            return;
        }
        // A file's path: a line of its own, not indented.
        let t = line.trim_end();
        if !t.is_empty() && !line.starts_with(char::is_whitespace) && !t.starts_with('✖') {
            self.file = Some(t.to_string());
        }
    }

    fn finish(&mut self) -> Summary {
        let (errors, warnings) = self.total.unwrap_or((self.errors, self.warnings));
        let mut phrase = format!("{errors} error{}", if errors == 1 { "" } else { "s" });
        if warnings > 0 {
            phrase.push_str(&format!(
                ", {warnings} warning{}",
                if warnings == 1 { "" } else { "s" }
            ));
        }
        let mut s = Summary::new(Kind::Eslint, phrase);
        s.counts = Some(Counts {
            errors: Some(errors),
            warnings: Some(warnings),
            ..Counts::default()
        });
        s.first_failure = self
            .first_error
            .clone()
            .or_else(|| self.first_warning.clone());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::*;

    #[test]
    fn the_first_error_with_its_file_line_and_rule() {
        let log = "
/p/src/a.js
  1:1  warning  Unexpected console statement  no-console

/p/src/index.js
  3:7   error  'unused' is assigned a value but never used  no-unused-vars
  9:1   error  Expected indentation of 2 spaces but found 4  indent

✖ 3 problems (2 errors, 1 warning)
  1 error and 0 warnings potentially fixable with the `--fix` option.
";
        let s = run(Kind::Eslint, log);
        assert_eq!(s.summary, "2 errors, 1 warning");
        let f = s.first_failure.unwrap();
        assert_eq!(f.file.as_deref(), Some("/p/src/index.js"));
        assert_eq!(f.line, Some(3));
        assert_eq!(
            f.message.as_deref(),
            Some("'unused' is assigned a value but never used (no-unused-vars)")
        );
        let clean = run(Kind::Eslint, "");
        assert_eq!(clean.summary, "0 errors");
        assert!(clean.first_failure.is_none());
    }
}
