//! Python: classes, functions and methods (decorators included), module-level constants.

use tree_sitter::Node;

use super::{Def, DocStyle, Table, Up, field_text};

pub(super) const TABLE: Table = Table {
    classify,
    skip: &["string", "comment", "decorator"],
    // Definitions sit in blocks of compound statements (`if TYPE_CHECKING:`, `try:`, …);
    // simple statements and expressions are not entered. A `def` in a lambda or a
    // comprehension cannot exist.
    descend: Some(&[
        "module",
        "block",
        "class_definition",
        "function_definition",
        "decorated_definition",
        "if_statement",
        "elif_clause",
        "else_clause",
        "for_statement",
        "while_statement",
        "try_statement",
        "except_clause",
        "except_group_clause",
        "finally_clause",
        "with_statement",
        "match_statement",
        "case_clause",
    ]),
    doc: DocStyle::Python,
};

fn classify<'t>(n: Node<'t>, up: &Up<'_, 't>) -> Option<Def<'t>> {
    let (text, enclosing) = (up.text, up.enclosing);
    let kind = match n.kind() {
        "function_definition" if enclosing == Some("class") => "method",
        "function_definition" => "def",
        "class_definition" => "class",
        "expression_statement" => return constant(n, up),
        _ => return None,
    };
    // Decorators live in a wrapper node; the definition's range starts with them.
    let outer = up
        .ancestor(0)
        .filter(|p| p.kind() == "decorated_definition")
        .unwrap_or(n);
    Some(Def {
        kind,
        name: field_text(n, "name", text)?,
        outer,
        body: n.child_by_field_name("body"),
        cut_at: None,
        brief_members: false,
        scope: None,
        brief: false,
    })
}

/// `NAME = …` / `NAME: T = …` at module level, when NAME is upper case (a constant by
/// convention; every other assignment would only make the outline longer).
fn constant<'t>(n: Node<'t>, up: &Up<'_, 't>) -> Option<Def<'t>> {
    let text = up.text;
    if up.ancestor(0)?.kind() != "module" {
        return None;
    }
    let a = n.named_child(0).filter(|a| a.kind() == "assignment")?;
    let left = a.child_by_field_name("left")?;
    if left.kind() != "identifier" {
        return None;
    }
    let name = left.utf8_text(text.as_bytes()).ok()?;
    let upper = name.chars().any(|c| c.is_ascii_uppercase())
        && !name.chars().any(|c| c.is_ascii_lowercase());
    if !upper {
        return None;
    }
    Some(Def {
        kind: "const",
        name: name.to_string(),
        outer: n,
        body: a.child_by_field_name("right"),
        cut_at: Some(b'='),
        brief_members: false,
        scope: None,
        brief: false,
    })
}

/// First line of the docstring: the body's first statement, when it is a string.
pub(super) fn docstring(body: Node, text: &str) -> Option<String> {
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let s = first.named_child(0).filter(|s| s.kind() == "string")?;
    let raw = s.utf8_text(text.as_bytes()).ok()?;
    let inner = raw
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_start_matches(['"', '\''])
        .trim_end_matches(['"', '\'']);
    inner
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// A function body left out of the fast parse: `start..end` is skipped (from the end of
/// the body's first statement, kept with its docstring, to the end of the body's last line);
/// the definitions around it end at `real_end` (line `real_line`, 1-based) in the whole
/// parse, where the fast parse ends them on the line starting at `kept_line`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Hole {
    pub start: usize,
    pub end: usize,
    pub kept_line: usize,
    pub real_end: usize,
    pub real_line: usize,
}

/// One logical line: physical lines joined by open brackets, open triple-quoted strings and
/// trailing backslashes.
struct Logical {
    /// First byte after the indentation.
    start: usize,
    indent: usize,
    /// End of the last code token (trailing comment and spaces excluded).
    code_end: usize,
    /// The `\n` that ends it (or the text's length).
    end: usize,
    /// Start of its last physical line, and that line's 1-based number.
    last_line_start: usize,
    last_line: usize,
    /// Only a comment (or nothing).
    blank: bool,
    /// Ends with `:` (a compound statement's header).
    colon: bool,
}

/// Smaller skips are not worth a range (see the Rust scanner's note).
const MIN_SKIP: usize = 32;

/// The logical lines of `text`, read by a light lexer that knows strings (triple-quoted
/// ones too), comments, brackets and backslash continuations. None when a bracket or a
/// string is still open at the end (the text does not parse; nothing is skipped).
fn logical_lines(text: &str) -> Option<Vec<Logical>> {
    let b = text.as_bytes();
    let n = b.len();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < n {
        let mut indent = 0;
        while i < n && matches!(b[i], b' ' | b'\t' | b'\x0c') {
            indent += if b[i] == b'\t' { 8 - indent % 8 } else { 1 };
            i += 1;
        }
        let start = i;
        let (mut depth, mut code_end, mut last_line_start) = (0usize, start, line_start(b, i));
        let mut colon = false;
        let end = loop {
            if i >= n {
                if depth > 0 {
                    return None;
                }
                break n;
            }
            match b[i] {
                b'\n' if depth == 0 => break i,
                b'\n' => {
                    line += 1;
                    i += 1;
                    last_line_start = i;
                }
                b'\\' if b.get(i + 1) == Some(&b'\n') => {
                    line += 1;
                    i += 2;
                    last_line_start = i;
                }
                b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') => {
                    line += 1;
                    i += 3;
                    last_line_start = i;
                }
                b'#' => i = memchr::memchr(b'\n', &b[i..]).map_or(n, |k| i + k),
                q @ (b'"' | b'\'') => {
                    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
                    i += if triple { 3 } else { 1 };
                    while i < n {
                        match b[i] {
                            b'\\' => {
                                if b.get(i + 1) == Some(&b'\n') {
                                    line += 1;
                                    last_line_start = i + 2;
                                }
                                i += 2;
                            }
                            b'\n' if !triple => break,
                            b'\n' => {
                                line += 1;
                                i += 1;
                                last_line_start = i;
                            }
                            c if c == q
                                && (!triple
                                    || (b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q))) =>
                            {
                                i += if triple { 3 } else { 1 };
                                break;
                            }
                            _ => i += 1,
                        }
                    }
                    if i >= n {
                        return None;
                    }
                    code_end = i;
                    colon = false;
                }
                c => {
                    match c {
                        b'(' | b'[' | b'{' => depth += 1,
                        b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    if !c.is_ascii_whitespace() {
                        code_end = i + 1;
                        colon = c == b':' && depth == 0;
                    }
                    i += 1;
                }
            }
        };
        out.push(Logical {
            start,
            indent,
            code_end,
            end,
            last_line_start,
            last_line: line,
            blank: code_end == start,
            colon,
        });
        line += 1;
        i = end + 1;
    }
    Some(out)
}

fn line_start(b: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &b[..at]).map_or(0, |k| k + 1)
}

fn starts_word(b: &[u8], at: usize, word: &[u8]) -> bool {
    b[at..].starts_with(word)
        && !b
            .get(at + word.len())
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// A line that opens a definition: `def`, `async def`, `class` or a decorator.
fn opens_def(b: &[u8], l: &Logical) -> bool {
    let s = l.start;
    starts_word(b, s, b"def")
        || starts_word(b, s, b"class")
        || b.get(s) == Some(&b'@')
        || (starts_word(b, s, b"async") && {
            let mut k = s + 5;
            while b.get(k).is_some_and(|c| matches!(c, b' ' | b'\t')) {
                k += 1;
            }
            starts_word(b, k, b"def")
        })
}

/// Bodies of `def`s that hold no definition, minus their first statement (which holds the
/// docstring; a compound one keeps its first line's chain, so what is parsed stays valid):
/// the fast parse skips them. Ascending and disjoint. A wrong guess makes the parse fail,
/// and the caller then parses in full.
pub(super) fn skippable_bodies(text: &str) -> Vec<Hole> {
    let b = text.as_bytes();
    let Some(lines) = logical_lines(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let d = &lines[k];
        k += 1;
        if d.blank || !d.colon || !opens_def(b, d) || b[d.start] == b'@' {
            continue;
        }
        if !(starts_word(b, d.start, b"def") || starts_word(b, d.start, b"async")) {
            continue;
        }
        // The body: following lines indented deeper (comment-only lines do not end it).
        let mut j = k;
        let mut last = None;
        let mut nested = false;
        while j < lines.len() {
            let l = &lines[j];
            if !l.blank {
                if l.indent <= d.indent {
                    break;
                }
                nested |= opens_def(b, l);
                last = Some(j);
            }
            j += 1;
        }
        let Some(last) = last else { continue };
        if nested {
            continue;
        }
        // Keep the first statement; if it is a header, its first statement too, and so on.
        let mut keep = k;
        let mut level = d.indent;
        loop {
            while lines[keep].blank {
                keep += 1;
            }
            if lines[keep].indent <= level {
                break;
            }
            level = lines[keep].indent;
            if !lines[keep].colon || keep == last {
                break;
            }
            keep += 1;
        }
        if keep >= last {
            continue;
        }
        let (kept, l) = (&lines[keep], &lines[last]);
        if l.end > kept.end + MIN_SKIP {
            out.push(Hole {
                start: kept.end,
                end: l.end,
                kept_line: kept.last_line_start,
                real_end: l.code_end,
                real_line: l.last_line,
            });
        }
        // Nothing nested: the next definition starts after this body.
        k = last + 1;
    }
    out
}
