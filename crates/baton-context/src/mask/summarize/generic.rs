//! Fallback for any output: line count, the first and last lines, and error-looking lines.
//!
//! This is the summarizer a 1 GB log meets, so it works on whole blocks: the error pattern runs
//! once over the block (the regex engine's literal prefilter skips clean text at memory speed),
//! the tail is taken from the block's end, and lines are only decoded when kept.

use std::collections::VecDeque;
use std::sync::LazyLock;

use regex::bytes::Regex;

use super::{Kind, NumberedLine, Summarizer, Summary, clip, for_each_line};

const HEAD: usize = 10;
const TAIL: usize = 10;
const MAX_ERROR_LINES: usize = 20;

/// Error words in lower, Capitalized and UPPER case. Spelled out rather than `(?i)`: case
/// folding multiplies the literal prefixes the prefilter must track and halves its speed.
static ERRORISH: LazyLock<Regex> = LazyLock::new(|| {
    let words = [
        "error",
        "errors",
        "fail",
        "failed",
        "failure",
        "fatal",
        "panic",
        "panicked",
        "exception",
        "traceback",
        "assertion",
        "segmentation fault",
    ];
    let mut alts = Vec::new();
    for w in words {
        let mut cap = w.to_string();
        cap[..1].make_ascii_uppercase();
        alts.extend([w.to_string(), cap, w.to_ascii_uppercase()]);
    }
    Regex::new(&format!(r"(?-u)\b(?:{})\b", alts.join("|"))).expect("regex")
});

#[derive(Debug, Default)]
pub struct Generic {
    lines: u64,
    head: Vec<String>,
    /// Last lines seen; strings are reused so the ring does not allocate per line.
    tail: VecDeque<String>,
    errors: Vec<NumberedLine>,
    errors_total: u64,
}

fn text(raw: &[u8]) -> String {
    let mut out = String::new();
    for_each_line(raw, |l| out.push_str(l));
    clip(&out)
}

impl Generic {
    fn push_tail(&mut self, raw: &[u8]) {
        let t = text(raw);
        if self.tail.len() == TAIL {
            self.tail.pop_front();
        }
        self.tail.push_back(t);
    }
}

impl Summarizer for Generic {
    fn line(&mut self, line: &str) {
        let mut b = Vec::with_capacity(line.len() + 1);
        b.extend_from_slice(line.as_bytes());
        b.push(b'\n');
        let n = self.lines + 1;
        self.block(&b, n, 1);
    }

    fn block(&mut self, block: &[u8], first_line: u64, n_lines: u64) {
        if block.is_empty() {
            return;
        }
        // Head: only while it is filling.
        if self.head.len() < HEAD {
            let mut start = 0;
            while self.head.len() < HEAD && start < block.len() {
                let end = memchr::memchr(b'\n', &block[start..]).map_or(block.len(), |i| start + i);
                self.head.push(text(&block[start..end]));
                start = end + 1;
            }
        }
        // Tail: the block's last TAIL lines, found from the end.
        let body = block.strip_suffix(b"\n").unwrap_or(block);
        let mut ends = Vec::with_capacity(TAIL);
        let mut end = body.len();
        for _ in 0..TAIL {
            match memchr::memrchr(b'\n', &body[..end]) {
                Some(i) => {
                    ends.push((i + 1, end));
                    end = i;
                }
                None => {
                    ends.push((0, end));
                    break;
                }
            }
        }
        for &(s, e) in ends.iter().rev() {
            self.push_tail(&body[s..e]);
        }
        // Error-looking lines: one regex pass; count each line once.
        let mut pos = 0;
        let mut counted_to = 0;
        let mut line_no = first_line;
        while let Some(m) = ERRORISH.find_at(block, pos) {
            let ls = memchr::memrchr(b'\n', &block[..m.start()]).map_or(0, |i| i + 1);
            let le = memchr::memchr(b'\n', &block[m.end()..]).map_or(block.len(), |i| m.end() + i);
            self.errors_total += 1;
            if self.errors.len() < MAX_ERROR_LINES {
                line_no += memchr::memchr_iter(b'\n', &block[counted_to..ls]).count() as u64;
                counted_to = ls;
                self.errors.push(NumberedLine {
                    line: line_no,
                    text: text(&block[ls..le]),
                });
            }
            pos = le + 1;
            if pos >= block.len() {
                break;
            }
        }
        self.lines = first_line - 1 + n_lines;
    }

    fn finish(&mut self) -> Summary {
        let mut phrase = format!(
            "{} line{}",
            self.lines,
            if self.lines == 1 { "" } else { "s" }
        );
        if self.errors_total > 0 {
            phrase.push_str(&format!(
                ", {} error-looking line{}",
                self.errors_total,
                if self.errors_total == 1 { "" } else { "s" }
            ));
            if let Some(first) = self.errors.first() {
                phrase.push_str(&format!(" (first at line {}: {})", first.line, first.text));
            }
        }
        let mut s = Summary::new(Kind::Generic, phrase);
        s.head = self.head.clone();
        // Lines already in the head are not repeated in the tail.
        let skip = (self.lines as usize).saturating_sub(self.tail.len());
        let overlap = self.head.len().saturating_sub(skip);
        s.tail = self.tail.iter().skip(overlap).cloned().collect();
        s.error_lines = self.errors.clone();
        s.error_lines_total = Some(self.errors_total);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_in_blocks(text: &str, split_every: usize) -> Summary {
        let mut g = Generic::default();
        let mut line_no = 1;
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for chunk in lines.chunks(split_every) {
            let block = chunk.concat();
            g.block(block.as_bytes(), line_no, chunk.len() as u64);
            line_no += chunk.len() as u64;
        }
        g.finish()
    }

    #[test]
    fn head_tail_and_errors_independent_of_blocking() {
        let mut text = String::new();
        for i in 1..=100 {
            if i % 30 == 0 {
                text.push_str(&format!("line {i}: ERROR something broke\n"));
            } else {
                text.push_str(&format!("line {i}: fine, no errorless words\n"));
            }
        }
        let whole = feed_in_blocks(&text, 1000);
        for split in [1, 3, 7, 50] {
            let s = feed_in_blocks(&text, split);
            assert_eq!(s.head, whole.head, "split {split}");
            assert_eq!(s.tail, whole.tail, "split {split}");
            assert_eq!(s.error_lines, whole.error_lines, "split {split}");
            assert_eq!(s.summary, whole.summary, "split {split}");
        }
        assert_eq!(whole.head.len(), HEAD);
        assert_eq!(whole.head[0], "line 1: fine, no errorless words");
        assert_eq!(
            whole.tail.last().unwrap(),
            "line 100: fine, no errorless words"
        );
        let nums: Vec<u64> = whole.error_lines.iter().map(|l| l.line).collect();
        assert_eq!(nums, vec![30, 60, 90]);
        assert!(
            whole
                .summary
                .starts_with("100 lines, 3 error-looking lines")
        );
    }

    #[test]
    fn short_output_is_not_repeated_in_tail() {
        let s = feed_in_blocks("a\nb\nc\n", 1);
        assert_eq!(s.head, vec!["a", "b", "c"]);
        assert!(s.tail.is_empty());
    }
}
