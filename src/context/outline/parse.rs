//! Parsing a source file into items: the whole text, or cheaper parses (skipped bodies, two
//! halves on two threads) when they can be trusted.

use tree_sitter::Parser;

use super::def::{Table, table};
use super::walk::{first_error, walk};
use super::{Item, Lang, python, rust};

/// Files at least this large are parsed in two halves on two threads when a split point is
/// found (see [`fast_items`]).
pub(super) const SPLIT_PARSE_BYTES: usize = 256 * 1024;

/// Parse and walk: items in document order, plus notes (syntax errors).
pub(super) fn code_items(lang: Lang, text: &str) -> (Vec<Item>, Vec<String>) {
    code_items_with(lang, text, true)
}

/// [`code_items`]; `fast`: try [`fast_items`] first (off only to test it against this).
pub(super) fn code_items_with(lang: Lang, text: &str, fast: bool) -> (Vec<Item>, Vec<String>) {
    let mut notes = Vec::new();
    let (Some(grammar), Some(tab)) = (lang.grammar(), table(lang)) else {
        return (Vec::new(), notes);
    };
    if fast && let Some(items) = fast_items(lang, &grammar, &tab, text) {
        return (items, notes);
    }
    let mut parser = Parser::new();
    if let Err(e) = parser.set_language(&grammar) {
        notes.push(format!("cannot load the {} grammar: {e}", lang.name()));
        return (Vec::new(), notes);
    }
    let Some(tree) = parser.parse(text, None) else {
        notes.push("the parser gave up: no outline".into());
        return (Vec::new(), notes);
    };
    let root = tree.root_node();
    if root.has_error() {
        let line = first_error(root).map_or(1, |n| n.start_position().row + 1);
        notes.push(format!(
            "syntax errors (first at line {line}): the outline may be incomplete"
        ));
    }
    let mut items = Vec::new();
    walk(&tab, root, text, lang.separator(), &mut items);
    (items, notes)
}

/// The items of `text` from a cheaper parse, or None to parse it whole. tree-sitter's parse
/// is most of an outline's time, so (1) Rust function bodies that cannot hold a definition
/// are left out of the parse (tree-sitter's included ranges: positions stay absolute), and
/// (2) a big file is cut at a line that starts a top-level item after a blank line, and the
/// halves are parsed and walked on two threads. Both are guesses made without a parser, so
/// the result is only trusted when every part parses without a syntax error — a wrong
/// guess (a cut or a skipped range inside a string, comment or body) leaves something
/// unterminated — else the caller parses the whole text (and reports its errors).
pub(super) fn fast_items(
    lang: Lang,
    grammar: &tree_sitter::Language,
    tab: &Table,
    text: &str,
) -> Option<Vec<Item>> {
    if text.is_empty() {
        return None;
    }
    let py_holes = if lang == Lang::Python {
        python::skippable_bodies(text)
    } else {
        Vec::new()
    };
    let holes = match lang {
        Lang::Rust => rust::skippable_bodies(text)?,
        Lang::Python => py_holes.iter().map(|h| (h.start, h.end)).collect(),
        _ => Vec::new(),
    };
    let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let cut = if text.len() >= SPLIT_PARSE_BYTES && two_cores {
        split_point(text)
    } else {
        None
    };
    if holes.is_empty() && cut.is_none() {
        return None;
    }
    let part = |s: usize, e: usize| -> Option<Vec<Item>> {
        let mut p = Parser::new();
        p.set_language(grammar).ok()?;
        p.set_included_ranges(&included(text, s, e, &holes)).ok()?;
        let tree = p.parse(text, None)?;
        if tree.root_node().has_error() {
            return None;
        }
        let mut items = Vec::new();
        walk(tab, tree.root_node(), text, lang.separator(), &mut items);
        Some(items)
    };
    let mut items = match cut {
        None => part(0, text.len())?,
        Some(cut) => split_items(cut, text.len(), &part)?,
    };
    // A Python definition whose body's tail was skipped ends, in this parse, on the line of
    // the kept first statement; it really ends where the skipped tail does.
    if !py_holes.is_empty() {
        for it in &mut items {
            let k = py_holes.partition_point(|h| h.start < it.end);
            if let Some(h) = py_holes.get(k)
                && h.kept_line <= it.end
                && it.end <= h.start
            {
                it.end = h.real_end;
                it.end_line = h.real_line;
            }
        }
    }
    Some(items)
}

/// Items of `part(0, cut)` and `part(cut, len)`, parsed on two threads.
fn split_items(
    cut: usize,
    len: usize,
    part: &(dyn Fn(usize, usize) -> Option<Vec<Item>> + Sync),
) -> Option<Vec<Item>> {
    std::thread::scope(|s| {
        let tail = s.spawn(|| part(cut, len));
        let head = part(0, cut);
        let tail = tail.join().ok()??;
        let mut items = head?;
        // The cut is between top-level items: the tail's parents are its own items.
        let off = items.len();
        items.extend(tail.into_iter().map(|mut it| {
            it.parent = it.parent.map(|p| p + off);
            it
        }));
        Some(items)
    })
}

/// A byte near the middle of `text` where a top-level item starts: the start of a line that
/// follows a blank line and begins with a letter, `#` or `@` (attributes, decorators) — not
/// with whitespace, a closing bracket, an operator or a comment, which belong to what is
/// above.
pub(super) fn split_point(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let from = b.len() / 2;
    let limit = (from + b.len() / 4).min(b.len());
    let mut at = from;
    while at < limit {
        let i = at + memchr::memmem::find(b.get(at..limit)?, b"\n\n")?;
        let start = i + 2;
        if b.get(start)
            .is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, b'#' | b'@'))
        {
            return Some(start);
        }
        at = i + 1;
    }
    None
}

/// tree-sitter ranges covering `text[s..e]` except `holes` (sorted, disjoint).
fn included(text: &str, s: usize, e: usize, holes: &[(usize, usize)]) -> Vec<tree_sitter::Range> {
    let b = text.as_bytes();
    // Rows and columns of ascending byte offsets, counted incrementally.
    let (mut pos, mut row, mut line_start) = (0, 0, 0);
    let mut point = |to: usize| {
        for nl in memchr::memchr_iter(b'\n', &b[pos..to]) {
            row += 1;
            line_start = pos + nl + 1;
        }
        pos = to;
        tree_sitter::Point::new(row, to - line_start)
    };
    let mut out = Vec::new();
    let mut from = s;
    let first = holes.partition_point(|h| h.1 <= s);
    for &(hs, he) in &holes[first..] {
        if hs >= e {
            break;
        }
        let (hs, he) = (hs.max(s), he.min(e));
        if hs > from {
            let (sp, ep) = (point(from), point(hs));
            out.push(tree_sitter::Range {
                start_byte: from,
                end_byte: hs,
                start_point: sp,
                end_point: ep,
            });
        }
        from = from.max(he);
    }
    if e > from || out.is_empty() {
        let (sp, ep) = (point(from), point(e));
        out.push(tree_sitter::Range {
            start_byte: from,
            end_byte: e,
            start_point: sp,
            end_point: ep,
        });
    }
    out
}
