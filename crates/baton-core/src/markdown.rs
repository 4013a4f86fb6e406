//! Markdown sections as CommonMark defines them (pulldown-cmark): ATX and setext headings,
//! `#` lines inside code fences are not headings, YAML front matter is skipped.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// One section: a heading and everything up to the next heading of the same or higher level.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Section {
    pub level: u8,
    pub title: String,
    /// 1-based line of the heading's first line.
    pub start_line: usize,
    /// 1-based last line of the section (inclusive).
    pub end_line: usize,
    /// Byte range of the section in the source text.
    #[serde(skip)]
    pub start: usize,
    #[serde(skip)]
    pub end: usize,
}

impl Section {
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        &source[self.start..self.end]
    }

    /// One line of a heading outline, indented by level: `  ## Title  (lines 3-9, 120 tokens)`
    /// (`baton extract --outline` and the MCP `extract` tool).
    pub fn outline_line(&self, tokens: usize) -> String {
        format!(
            "{}{} {}  (lines {}-{}, {tokens} tokens)",
            "  ".repeat(usize::from(self.level.saturating_sub(1))),
            "#".repeat(usize::from(self.level)),
            self.title,
            self.start_line,
            self.end_line,
        )
    }
}

/// Every section of `text`, in document order.
pub fn sections(text: &str) -> Vec<Section> {
    sections_opts(text, Options::ENABLE_YAML_STYLE_METADATA_BLOCKS)
}

pub fn sections_strict(text: &str) -> Vec<Section> {
    sections_opts(text, Options::empty())
}

/// Parse once; line numbers come from counting newlines forward between headings, so the
/// text is scanned once more at memchr-like speed and nothing per line is stored.
fn sections_opts(text: &str, opts: Options) -> Vec<Section> {
    let bytes = text.as_bytes();
    let newlines = |a: usize, b: usize| count_newlines(&bytes[a..b]);
    // Position of the forward line counter: `line` is the 1-based line of byte `at`.
    let (mut at, mut line) = (0usize, 1usize);

    let mut out: Vec<Section> = Vec::new();
    // Indices in `out` of sections still open (strictly increasing levels).
    let mut open: Vec<usize> = Vec::new();
    let mut title: Option<String> = None;
    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let level = level as u8;
                // A heading may start mid-line (indented, in a list or quote): its section
                // starts at the beginning of that line.
                let start = bytes[..range.start]
                    .iter()
                    .rposition(|&c| c == b'\n')
                    .map_or(0, |i| i + 1);
                if start >= at {
                    line += newlines(at, start);
                    at = start;
                }
                while let Some(&i) = open.last() {
                    if out[i].level < level {
                        break;
                    }
                    out[i].end = start;
                    // Two headings can share a line ('\r' alone ends a line for CommonMark,
                    // not for our count): a section never ends before it starts.
                    out[i].end_line = (line - 1).max(out[i].start_line);
                    open.pop();
                }
                open.push(out.len());
                out.push(Section {
                    level,
                    title: String::new(),
                    start_line: line,
                    end_line: 0,
                    start,
                    end: 0,
                });
                title = Some(String::new());
            }
            Event::End(TagEnd::Heading(_)) => {
                if let (Some(mut t), Some(s)) = (title.take(), out.last_mut()) {
                    // Trim in place: no second allocation per heading.
                    let end = t.trim_end().len();
                    t.truncate(end);
                    let lead = t.len() - t.trim_start().len();
                    t.drain(..lead);
                    s.title = t;
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(title) = title.as_mut() {
                    title.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(title) = title.as_mut() {
                    title.push(' ');
                }
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        // The last line: a final newline ends a line rather than starting one.
        let last_line = line + newlines(at, text.len()) - usize::from(text.ends_with('\n'));
        for i in open {
            out[i].end = text.len();
            out[i].end_line = last_line;
        }
    }
    out
}

/// Newlines in `b`. Summing bytes per 64-byte chunk lets the compiler use wide SIMD compares
/// (a plain `filter().count()` widens every byte to a usize lane and is 4× slower).
fn count_newlines(b: &[u8]) -> usize {
    let chunks = b.chunks_exact(64);
    let tail = chunks.remainder();
    let mut n = 0usize;
    for c in chunks {
        n += usize::from(c.iter().map(|&x| u8::from(x == b'\n')).sum::<u8>());
    }
    n + tail.iter().filter(|&&x| x == b'\n').count()
}

/// Sections whose title matches `pred`, without sections nested inside an already chosen one.
pub fn select(all: &[Section], mut pred: impl FnMut(&str) -> bool) -> Vec<&Section> {
    let mut chosen: Vec<&Section> = Vec::new();
    for s in all {
        if chosen.last().is_some_and(|c| s.start < c.end) {
            continue;
        }
        if pred(&s.title) {
            chosen.push(s);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    /// Found by the `outline` fuzz target: with '\r' line endings two headings are on one
    /// line by our count, and the first section ended (line 0) before it started (line 1).
    #[test]
    fn a_section_never_ends_before_it_starts() {
        let text = "W\r====\r\r# two\r# three";
        let all = sections(text);
        assert!(all.len() >= 2, "{all:?}");
        for s in &all {
            assert!(s.start_line <= s.end_line, "{s:?}");
            assert!(s.start <= s.end, "{s:?}");
        }
    }

    use super::*;

    #[test]
    fn atx_setext_fences_and_front_matter() {
        let doc = "---\ntitle: x\n---\n# One\ntext\n```\n# not a heading\n```\n\nTwo\n---\nbody\n## Two.a\nmore\n# Three\n";
        let s = sections(doc);
        let titles: Vec<_> = s
            .iter()
            .map(|s| (s.level, s.title.as_str(), s.start_line, s.end_line))
            .collect();
        // `Two` is a setext level-2 heading: `One` runs on to the next level-1 heading.
        assert_eq!(
            titles,
            vec![
                (1, "One", 4, 14),
                (2, "Two", 10, 12),
                (2, "Two.a", 13, 14),
                (1, "Three", 15, 15)
            ]
        );
        assert_eq!(s[1].text(doc), "Two\n---\nbody\n");
    }

    #[test]
    fn newline_count() {
        let text = "a\n".repeat(100) + "\n\nxyz";
        for end in [0, 1, 63, 64, 65, 200, text.len()] {
            let want = text.as_bytes()[..end]
                .iter()
                .filter(|&&c| c == b'\n')
                .count();
            assert_eq!(count_newlines(&text.as_bytes()[..end]), want);
        }
    }

    #[test]
    fn select_skips_nested() {
        let doc = "# Types\n## Edge cases\n# Edge cases\n";
        let all = sections(doc);
        let got = select(&all, |t| t.contains("Types") || t.contains("Edge"));
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].start_line, 3);
    }
}
