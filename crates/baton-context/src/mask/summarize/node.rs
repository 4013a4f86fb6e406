//! `node --test` with the spec reporter (`▶ suite`, `✔/✖ test`, `ℹ pass 12`) or the TAP reporter
//! (`# Subtest: name`, `not ok 2 - name`, YAML diagnostics, `# pass 12`). The format is told
//! apart by the lines themselves. Test names are the suite path joined with ` > `.

use std::sync::LazyLock;

use regex::Regex;

use super::{Counts, Failure, Kind, Summarizer, Summary, add, clip, indent, num};

static FILE_URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:file://)?(/[^\s():']+):(\d+):(\d+)").expect("regex"));
static TAP_RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\s*)(not ok|ok) \d+ - (.*?)(?: # (?:SKIP|TODO)\b.*)?$").expect("regex")
});
static SPEC_RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\s*)(✔|✖|﹣|↓) (.*?)(?: \([\d.]+m?s\))?(?: # (?:SKIP|TODO)\b.*)?$")
        .expect("regex")
});

/// Deepest suite nesting remembered (deeper levels are still counted, just not named).
const MAX_DEPTH: usize = 64;

#[derive(Debug, Default)]
struct Frame {
    indent: usize,
    name: String,
    has_children: bool,
}

#[derive(Debug, Default)]
pub struct NodeTest {
    tap: bool,
    counts: Option<Counts>,
    stack: Vec<Frame>,
    first: Option<Failure>,
    /// Indent of the first failure's result line while its details are being read.
    capture_indent: Option<usize>,
    /// TAP: the next line holds the `stack: |-` / `error: |-` block's first line.
    tap_block: Option<&'static str>,
    /// Spec: the closing `✖ failing tests:` list repeats failures without nesting.
    done: bool,
    /// TAP: the first failure's error `name:` and `code:` (the spec reporter prints them as
    /// `AssertionError [ERR_ASSERTION]: …` before the message; TAP apart from it).
    error_name: Option<String>,
    error_code: Option<String>,
}

impl NodeTest {
    fn path(&self, indent: usize, name: &str) -> String {
        let mut parts: Vec<&str> = self
            .stack
            .iter()
            .filter(|f| f.indent < indent)
            .map(|f| f.name.as_str())
            .collect();
        parts.push(name);
        parts.join(" > ")
    }

    fn push(&mut self, indent: usize, name: &str) {
        self.stack.retain(|f| f.indent < indent);
        if let Some(parent) = self.stack.last_mut() {
            parent.has_children = true;
        }
        if self.stack.len() < MAX_DEPTH {
            self.stack.push(Frame {
                indent,
                name: name.to_string(),
                has_children: false,
            });
        }
    }

    fn total(&mut self, key: &str, value: &str) {
        let n = num(value);
        let c = self.counts.get_or_insert_with(|| Counts {
            passed: Some(0),
            failed: Some(0),
            skipped: Some(0),
            errors: Some(0),
            ..Counts::default()
        });
        match key {
            "pass" => add(&mut c.passed, n),
            // A cancelled test (timeout, parent failed) failed the run too.
            "fail" | "cancelled" => add(&mut c.failed, n),
            "skipped" | "todo" => add(&mut c.skipped, n),
            _ => {}
        }
    }

    fn detail(&mut self, line: &str) {
        let t = line.trim();
        let Some(f) = self.first.as_mut() else {
            return;
        };
        if let Some(field) = self.tap_block.take() {
            match field {
                "stack" => {
                    if let Some(c) = FILE_URL.captures(t) {
                        f.file = Some(c[1].to_string());
                        f.line = c[2].parse().ok();
                    }
                }
                _ => {
                    f.message.get_or_insert_with(|| clip(t));
                }
            }
            return;
        }
        if self.tap {
            if t == "stack: |-" {
                self.tap_block = Some("stack");
            } else if t == "error: |-" {
                self.tap_block = Some("error");
            } else if let Some(v) = t.strip_prefix("error: ") {
                f.message
                    .get_or_insert_with(|| clip(v.trim_matches(['\'', '"'])));
            } else if let Some(v) = t.strip_prefix("name: ") {
                let v = v.trim_matches(['\'', '"']);
                self.error_name.get_or_insert_with(|| clip(v));
            } else if let Some(v) = t.strip_prefix("code: ") {
                let v = v.trim_matches(['\'', '"']);
                self.error_code.get_or_insert_with(|| clip(v));
            } else if let Some(v) = t.strip_prefix("expected: ") {
                f.expected.get_or_insert_with(|| clip(v));
            } else if let Some(v) = t.strip_prefix("actual: ") {
                f.received.get_or_insert_with(|| clip(v));
            } else if let Some(v) = t.strip_prefix("location: ")
                && f.file.is_none()
                && let Some(c) = FILE_URL.captures(v)
            {
                // The test's declaration; the stack (read later) gives the failing line.
                f.file = Some(c[1].to_string());
                f.line = c[2].parse().ok();
            }
            return;
        }
        if let Some(v) = t.strip_prefix("expected: ") {
            f.expected
                .get_or_insert_with(|| clip(v.trim_end_matches(',')));
        } else if let Some(v) = t.strip_prefix("actual: ") {
            f.received
                .get_or_insert_with(|| clip(v.trim_end_matches(',')));
        } else if t.starts_with("at ") {
            if f.line.is_none()
                && !t.contains("node:")
                && let Some(c) = FILE_URL.captures(t)
            {
                f.file = Some(c[1].to_string());
                f.line = c[2].parse().ok();
            }
        } else if f.message.is_none() && !t.is_empty() {
            f.message = Some(clip(t));
        }
    }

    fn result(&mut self, ind: usize, ok: bool, name: &str) {
        self.stack.retain(|f| f.indent <= ind);
        let own = self
            .stack
            .last()
            .filter(|f| f.indent == ind && f.name == name)
            .map(|f| f.has_children);
        let is_suite = own == Some(true);
        if own.is_some() {
            self.stack.pop();
        }
        if let Some(parent) = self.stack.last_mut() {
            parent.has_children = true;
        }
        if !ok && !is_suite && self.first.is_none() {
            self.first = Some(Failure {
                test: Some(self.path(ind, name)),
                ..Failure::default()
            });
            self.capture_indent = Some(ind);
        }
    }
}

impl Summarizer for NodeTest {
    fn line(&mut self, line: &str) {
        if self.done {
            return;
        }
        let ind = indent(line);
        if let Some(ci) = self.capture_indent {
            if line.trim().is_empty() || ind > ci || self.tap_block.is_some() {
                self.detail(line);
                return;
            }
            self.capture_indent = None;
        }
        let t = &line[ind..];
        if line.starts_with("TAP version") {
            self.tap = true;
            return;
        }
        if let Some(name) = t.strip_prefix("# Subtest: ") {
            self.tap = true;
            self.push(ind, name);
            return;
        }
        if let Some(rest) = t.strip_prefix("# ").or_else(|| t.strip_prefix("ℹ "))
            && ind == 0
        {
            if let Some((k, v)) = rest.split_once(' ')
                && matches!(
                    k,
                    "tests" | "pass" | "fail" | "cancelled" | "skipped" | "todo"
                )
                && v.trim().chars().all(|c| c.is_ascii_digit())
            {
                self.total(k, v);
            }
            return;
        }
        if let Some(name) = t.strip_prefix("▶ ") {
            self.push(ind, name);
            return;
        }
        if t.starts_with("✖ failing tests:") {
            self.done = true;
            return;
        }
        if t.starts_with("ok ") || t.starts_with("not ok ") {
            if let Some(c) = TAP_RESULT.captures(line) {
                let name = c[3].to_string();
                self.result(ind, &c[2] == "ok", &name);
            }
            return;
        }
        if let Some(c) = SPEC_RESULT.captures(line) {
            let name = c[3].to_string();
            self.result(ind, &c[2] != "✖", &name);
        }
    }

    fn finish(&mut self) -> Summary {
        // TAP: the error's name and code before its message, as node itself prints an error
        // (`AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:`).
        if let (Some(f), Some(name)) = (self.first.as_mut(), &self.error_name)
            && let Some(m) = &f.message
            && !m.starts_with(name.as_str())
        {
            let code = self
                .error_code
                .as_ref()
                .map(|c| format!(" [{c}]"))
                .unwrap_or_default();
            f.message = Some(clip(&format!("{name}{code}: {m}")));
        }
        match self.counts.clone() {
            Some(c) => Summary::tests(Kind::NodeTest, c, self.first.clone()),
            None => {
                let mut s = Summary::new(Kind::NodeTest, "no node --test totals found".into());
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
    fn spec_nesting_and_totals() {
        let log = "▶ outer
  ✔ fine (1ms)
  ▶ inner
    ✖ breaks (2ms)
      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

          at TestContext.<anonymous> (file:///p/t.test.js:9:7)
          at Test.run (node:internal/test_runner/test:1:1)
        expected: 2,
        actual: 1,
  ✖ inner (3ms)
✖ outer (4ms)
ℹ tests 2
ℹ pass 1
ℹ fail 1
ℹ cancelled 0
ℹ skipped 0
ℹ todo 0

✖ failing tests:

✖ breaks (2ms)
";
        let s = run(Kind::NodeTest, log);
        assert_eq!(s.summary, "1 passed, 1 failed");
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("outer > inner > breaks"));
        assert_eq!((f.file.as_deref(), f.line), (Some("/p/t.test.js"), Some(9)));
        assert_eq!(
            (f.expected.as_deref(), f.received.as_deref()),
            (Some("2"), Some("1"))
        );
    }

    #[test]
    fn tap_nesting_and_totals() {
        let log = "TAP version 13
# Subtest: outer
    # Subtest: ok one
    ok 1 - ok one
      ---
      duration_ms: 1
      ...
    # Subtest: bad one
    not ok 2 - bad one
      ---
      location: '/p/t.test.js:3:5'
      error: |-
        boom
      expected: 2
      actual: 1
      stack: |-
        TestContext.<anonymous> (file:///p/t.test.js:5:9)
      ...
    1..2
not ok 1 - outer
  ---
  type: 'suite'
  ...
# tests 2
# pass 1
# fail 1
# skipped 0
";
        let s = run(Kind::NodeTest, log);
        let c = s.counts.unwrap();
        assert_eq!((c.passed, c.failed), (Some(1), Some(1)));
        let f = s.first_failure.unwrap();
        assert_eq!(f.test.as_deref(), Some("outer > bad one"));
        assert_eq!((f.file.as_deref(), f.line), (Some("/p/t.test.js"), Some(5)));
        assert_eq!(f.message.as_deref(), Some("boom"));
    }
}
