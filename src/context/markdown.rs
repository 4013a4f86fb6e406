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
}

/// Every section of `text`, in document order.
pub fn sections(text: &str) -> Vec<Section> {
    sections_opts(text, Options::ENABLE_YAML_STYLE_METADATA_BLOCKS)
}

pub fn sections_strict(text: &str) -> Vec<Section> {
    sections_opts(text, Options::empty())
}

fn sections_opts(text: &str, opts: Options) -> Vec<Section> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |byte: usize| line_starts.partition_point(|&s| s <= byte);

    let mut heads: Vec<(u8, String, usize)> = Vec::new();
    let mut current: Option<(u8, String, usize)> = None;
    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                current = Some((level as u8, String::new(), range.start));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, title, start)) = current.take() {
                    heads.push((level, title.trim().to_string(), start));
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, title, _)) = current.as_mut() {
                    title.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, title, _)) = current.as_mut() {
                    title.push(' ');
                }
            }
            _ => {}
        }
    }

    let total_lines = if text.is_empty() {
        0
    } else {
        line_starts.len() - usize::from(text.ends_with('\n'))
    };
    let mut out = Vec::with_capacity(heads.len());
    for (i, (level, title, start)) in heads.iter().enumerate() {
        // Move the start back to the beginning of its line (a heading may be indented).
        let start_line = line_of(*start);
        let start_byte = line_starts[start_line - 1];
        let next = heads[i + 1..].iter().find(|(l, _, _)| l <= level);
        let (end_byte, end_line) = match next {
            Some((_, _, s)) => {
                let l = line_of(*s);
                (line_starts[l - 1], l - 1)
            }
            None => (text.len(), total_lines),
        };
        out.push(Section {
            level: *level,
            title: title.clone(),
            start_line,
            end_line,
            start: start_byte,
            end: end_byte,
        });
    }
    out
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
    fn select_skips_nested() {
        let doc = "# Types\n## Edge cases\n# Edge cases\n";
        let all = sections(doc);
        let got = select(&all, |t| t.contains("Types") || t.contains("Edge"));
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].start_line, 3);
    }
}
