//! Parsing a source file into items: the whole text, or cheaper parses (skipped bodies, two
//! halves on two threads) when they can be trusted.

use tree_sitter::Parser;

use super::def::{Table, table};
use super::walk::{first_error, walk};
use super::{Item, Lang, python, rust};

/// Texts the parser sees (after skipped bodies) at least this large are parsed in two halves
/// on two threads when a split point is found (see [`fast_items`]): ~10 ms of parsing, where
/// a thread costs tens of microseconds.
pub(super) const SPLIT_PARSE_BYTES: usize = 64 * 1024;

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
/// is most of an outline's time, so (1) regions that cannot hold a listed definition (Rust
/// function bodies without item keywords and macro token trees, Python function bodies
/// without nested definitions) are cut out of the text the parser sees, all but their
/// newlines — so rows stay those of `text`, and byte offsets are mapped back (`Compact`) —
/// and (2) a big file is cut at a line that starts a top-level item after a blank line, and
/// the halves are parsed and walked on two threads. Both are guesses made without a parser,
/// so the result is only trusted when every part parses without a syntax error — a wrong
/// guess (a cut or a removed range inside a string, comment or body) leaves something
/// unterminated — else the caller parses the whole text (and reports its errors).
///
/// Not tree-sitter's included ranges: its lexer finds its range by a linear scan of the range
/// list on every jump, so thousands of skipped bodies (a 1 MB file) made the parse quadratic.
/// Not blanks either: lexing the spaces cost a third of the parse.
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
    let short = Compact::new(text, holes);
    let seen = short.text.as_str();
    let two_cores = crate::cores() > 1;
    let cut = if seen.len() >= SPLIT_PARSE_BYTES && two_cores {
        split_point(seen)
    } else {
        None
    };
    if short.map.len() <= 1 && cut.is_none() {
        return None;
    }
    let part = |s: usize, e: usize| -> Option<Vec<Item>> {
        let mut p = Parser::new();
        p.set_language(grammar).ok()?;
        if (s, e) != (0, seen.len()) {
            p.set_included_ranges(&[range(seen, s, e)]).ok()?;
        }
        let tree = p.parse(seen, None)?;
        if tree.root_node().has_error() {
            return None;
        }
        let mut items = Vec::new();
        walk(tab, tree.root_node(), seen, lang.separator(), &mut items);
        Some(items)
    };
    let mut items = match cut {
        None => part(0, seen.len())?,
        Some(cut) => split_items(cut, seen.len(), &part)?,
    };
    for it in &mut items {
        it.start = short.to_text(it.start);
        it.end = short.end_to_text(it.end);
    }
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

/// A text with regions cut out, all but their newlines (rows do not move), and the way back
/// from its byte offsets to the original's.
struct Compact {
    text: String,
    /// (offset here, offset in the original) at the start of each run kept in one piece.
    map: Vec<(usize, usize)>,
}

impl Compact {
    /// `text` without the bytes of `holes` (they may nest or overlap) except newlines. Holes
    /// start and end at ASCII bytes, so whole characters go: still UTF-8.
    fn new(text: &str, mut holes: Vec<(usize, usize)>) -> Compact {
        holes.sort_unstable();
        let b = text.as_bytes();
        let mut out = Vec::with_capacity(text.len());
        let mut map = vec![(0, 0)];
        let mut from = 0;
        for (s, e) in holes {
            let e = e.min(b.len());
            if e <= from {
                continue;
            }
            let s = s.max(from);
            out.extend_from_slice(&b[from..s]);
            for nl in memchr::memchr_iter(b'\n', &b[s..e]) {
                map.push((out.len(), s + nl));
                out.push(b'\n');
            }
            map.push((out.len(), e));
            from = e;
        }
        out.extend_from_slice(&b[from..]);
        let text = String::from_utf8(out).unwrap_or_else(|_| text.to_string());
        Compact { text, map }
    }

    /// The original offset of the byte at `at` (where a region was cut out: the byte after it).
    fn to_text(&self, at: usize) -> usize {
        let k = self
            .map
            .partition_point(|&(c, _)| c <= at)
            .saturating_sub(1);
        let (c, t) = self.map[k];
        t + (at - c)
    }

    /// The original offset of an exclusive end `at` (where a region was cut out: its start).
    fn end_to_text(&self, at: usize) -> usize {
        let k = self.map.partition_point(|&(c, _)| c < at).saturating_sub(1);
        let (c, t) = self.map[k];
        t + (at - c)
    }
}

/// The tree-sitter range of `text[s..e]`.
fn range(text: &str, s: usize, e: usize) -> tree_sitter::Range {
    let point = |at: usize| {
        let before = &text.as_bytes()[..at];
        let row = memchr::memchr_iter(b'\n', before).count();
        let col = before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(at, |i| at - i - 1);
        tree_sitter::Point::new(row, col)
    };
    tree_sitter::Range {
        start_byte: s,
        end_byte: e,
        start_point: point(s),
        end_point: point(e),
    }
}
