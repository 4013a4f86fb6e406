//! TypeScript `tsc`: `file.ts(12,5): error TS2322: …` (plain) or `file.ts:12:5 - error TS2322: …`
//! (pretty), closed by `Found N errors in M files.`

use std::sync::LazyLock;

use regex::Regex;

use super::{Counts, Failure, Kind, Summarizer, Summary, clip, num};

static PLAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$").expect("regex")
});
static PRETTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.+?):(\d+):(\d+) - (error|warning) (TS\d+): (.*)$").expect("regex")
});
static FOUND: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Found (\d+) errors?").expect("regex"));

#[derive(Debug, Default)]
pub struct Tsc {
    errors: u64,
    found: Option<u64>,
    first: Option<Failure>,
}

impl Summarizer for Tsc {
    fn line(&mut self, line: &str) {
        if let Some(c) = FOUND.captures(line) {
            self.found = Some(num(&c[1]));
            return;
        }
        let Some(c) = PLAIN.captures(line).or_else(|| PRETTY.captures(line)) else {
            return;
        };
        if &c[4] != "error" {
            return;
        }
        self.errors += 1;
        if self.first.is_none() {
            self.first = Some(Failure {
                file: Some(c[1].trim().to_string()),
                line: c[2].parse().ok(),
                message: Some(clip(&format!("error {}: {}", &c[5], &c[6]))),
                ..Failure::default()
            });
        }
    }

    fn finish(&mut self) -> Summary {
        let errors = self.found.unwrap_or(self.errors);
        let phrase = if errors == 0 {
            "no errors".to_string()
        } else {
            format!("{errors} error{}", if errors == 1 { "" } else { "s" })
        };
        let mut s = Summary::new(Kind::Tsc, phrase);
        s.counts = Some(Counts {
            errors: Some(errors),
            ..Counts::default()
        });
        s.first_failure = self.first.clone();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::*;

    #[test]
    fn plain_and_pretty() {
        let log = "src/a.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.\n\
src/b.ts:3:1 - error TS2304: Cannot find name 'x'.\n\nFound 2 errors in 2 files.\n";
        let s = run(Kind::Tsc, log);
        assert_eq!(s.summary, "2 errors");
        let f = s.first_failure.unwrap();
        assert_eq!((f.file.as_deref(), f.line), (Some("src/a.ts"), Some(12)));
        assert!(f.message.unwrap().starts_with("error TS2322: Type"));
    }
}
