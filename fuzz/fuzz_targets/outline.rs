//! The outline parsers (tree-sitter for Rust, Python, TypeScript/TSX, JavaScript and Go; the
//! Markdown headings) and the outline-first read on any bytes: the symbols' lines are the
//! file's, and the first read shows the file's own first lines.
#![no_main]

use arbitrary::Arbitrary;
use baton_context::outline::{Lang, Source, first_read, outline};
use baton_context::tokens::Encoding;
use libfuzzer_sys::fuzz_target;

const LANGS: &[(Lang, &str)] = &[
    (Lang::Rust, "f.rs"),
    (Lang::Python, "f.py"),
    (Lang::TypeScript, "f.ts"),
    (Lang::Tsx, "f.tsx"),
    (Lang::JavaScript, "f.js"),
    (Lang::Go, "f.go"),
    (Lang::Markdown, "f.md"),
];

#[derive(Arbitrary, Debug)]
struct Input {
    lang: u8,
    threshold: u8,
    bytes: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let (lang, name) = LANGS[input.lang as usize % LANGS.len()];
    let src = Source::from_bytes(name, input.bytes);
    let o = outline(&src, Some(lang), Encoding::O200kBase);
    let lines = src.text.lines().count().max(1);
    assert_eq!(o.bytes, src.text.len());
    for item in &o.items {
        assert!(item.full_start_line <= item.start_line, "{item:?}");
        assert!(
            item.start_line <= item.end_line && item.end_line <= lines + 1,
            "{item:?} of {lines}"
        );
        assert!(
            item.start <= item.end && item.end <= src.text.len(),
            "{item:?}"
        );
        if let Some(p) = item.parent {
            assert!(p < o.items.len(), "{item:?}");
        }
    }
    if let Some(read) = first_read(name, &src.text, input.threshold as usize) {
        assert!(src.text.starts_with(&read.head), "{:?}", read.head);
        assert!(read.head_lines <= read.total_lines, "{read:?}");
    }
});
