//! Markdown section extraction (`baton extract`): sections are in order, inside the text and
//! at character boundaries; finding a section by its own title finds one with that title;
//! routing and the token limit never fail on what they are given.
#![no_main]

use arbitrary::Arbitrary;
use baton_context::extract::{self, default_routes};
use baton_context::tokens::Encoding;
use baton_core::markdown::{sections, sections_strict};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    strict: bool,
    limit: u16,
    /// The document; the title asked for is its last line.
    text: String,
}

fuzz_target!(|input: Input| {
    let text = &input.text;
    let all = if input.strict {
        sections_strict(text)
    } else {
        sections(text)
    };
    let lines = text.lines().count().max(1);
    for s in &all {
        assert!(s.start <= s.end && s.end <= text.len(), "{s:?}");
        assert!(
            text.is_char_boundary(s.start) && text.is_char_boundary(s.end),
            "{s:?}"
        );
        assert!(
            s.start_line >= 1 && s.start_line <= s.end_line.max(s.start_line),
            "{s:?}"
        );
        assert!(s.start_line <= lines + 1, "{s:?} of {lines} lines");
        assert!((1..=6).contains(&s.level), "{s:?}");
        let _ = s.text(text);
    }
    for w in all.windows(2) {
        assert!(w[0].start <= w[1].start, "sections in order: {w:?}");
    }
    if let Some(first) = all.first()
        && let Ok(found) = extract::find(&all, &first.title)
    {
        assert_eq!(
            extract::normalize(&found.title),
            extract::normalize(&first.title)
        );
    }
    let _ = extract::find(&all, text.lines().last().unwrap_or(""));
    let _ = extract::lead(&all);
    for (_, titles) in default_routes() {
        if let Ok(pick) = extract::route(&all, &titles) {
            let body = pick.section.text(text);
            let max = input.limit as usize % 400 + 1;
            let (out, cut) = extract::limit(body, Encoding::O200kBase, max, "doc.md", (1, 2));
            if cut {
                assert!(
                    Encoding::O200kBase.count(&out) <= max.max(40),
                    "{max}: {out:?}"
                );
            } else {
                assert_eq!(out, body);
            }
        }
    }
});
