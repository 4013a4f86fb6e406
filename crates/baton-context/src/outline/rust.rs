//! Rust: items, impls and trait members (tree-sitter-rust node kinds).

use tree_sitter::Node;

use super::{Def, DocStyle, Table, Up, field_text};

pub(super) const TABLE: Table = Table {
    classify,
    // Macro bodies are token trees, not items; strings and comments hold none either.
    skip: &[
        "token_tree",
        "string_literal",
        "raw_string_literal",
        "line_comment",
        "block_comment",
        "attribute_item",
        "inner_attribute_item",
        "use_declaration",
        "field_declaration_list",
        "enum_variant_list",
    ],
    // Definitions sit in item lists and in blocks (a fn in a fn, `const _: () = { impl … }`);
    // statements and expressions are not entered. Items nested in an `if` or a closure body
    // are not listed (ctags' Rust parser lists none either).
    descend: Some(&[
        "source_file",
        "declaration_list",
        "mod_item",
        "impl_item",
        "trait_item",
        "foreign_mod_item",
        "function_item",
        "const_item",
        "static_item",
        "block",
    ]),
    doc: DocStyle::Rust,
};

fn classify<'t>(n: Node<'t>, up: &Up<'_, 't>) -> Option<Def<'t>> {
    let (text, enclosing) = (up.text, up.enclosing);
    let (kind, cut_at) = match n.kind() {
        "function_item" | "function_signature_item" => {
            let method = matches!(enclosing, Some("impl" | "trait"));
            (if method { "method" } else { "fn" }, None)
        }
        "struct_item" => ("struct", None),
        "enum_item" => ("enum", None),
        "union_item" => ("union", None),
        "trait_item" => ("trait", None),
        "impl_item" => ("impl", None),
        "type_item" => ("type", None),
        "const_item" => ("const", Some(b'=')),
        "static_item" => ("static", Some(b'=')),
        "mod_item" => ("mod", None),
        "macro_definition" => ("macro", Some(b'{')),
        _ => return None,
    };
    let name = if kind == "impl" {
        impl_type_name(n.child_by_field_name("type")?, text)?
    } else {
        field_text(n, "name", text)?
    };
    // A constant's signature ends where its value starts.
    let body = n
        .child_by_field_name("body")
        .or_else(|| n.child_by_field_name("value"));
    Some(Def {
        kind,
        name,
        outer: n,
        body,
        cut_at,
        // In `impl Trait for Type` the trait fixes every member's signature.
        brief_members: kind == "impl" && n.child_by_field_name("trait").is_some(),
        scope: None,
        brief: kind != "impl" && is_test(up.before, text),
    })
}

/// A function marked `#[test]` (or `#[tokio::test]`, …) directly above it.
fn is_test(before: &[Node], text: &str) -> bool {
    for p in before.iter().rev() {
        match p.kind() {
            "attribute_item" => {
                let t = p.utf8_text(text.as_bytes()).unwrap_or("");
                let inner = t.trim_start_matches("#[").trim_end_matches(']').trim();
                if inner == "test" || inner.ends_with("::test") {
                    return true;
                }
            }
            "line_comment" | "block_comment" => {}
            _ => return false,
        }
    }
    false
}

/// `Standard` for `Standard<W>`, `&'a mut Foo<T>`, `crate::x::Foo`.
fn impl_type_name(mut t: Node, text: &str) -> Option<String> {
    // Unwrap references, pointers and generics down to the named type.
    for _ in 0..8 {
        match t.kind() {
            "generic_type" | "reference_type" | "pointer_type" => {
                t = t.child_by_field_name("type")?;
            }
            _ => break,
        }
    }
    let s = t.utf8_text(text.as_bytes()).ok()?;
    let s = s.rsplit("::").next().unwrap_or(s);
    Some(s.split('<').next().unwrap_or(s).trim().to_string())
}

/// Item keywords: a block holding one of them (outside strings and comments) may hold a
/// definition, so its body is parsed.
const ITEM_WORDS: &[&[u8]] = &[
    b"fn",
    b"struct",
    b"enum",
    b"union",
    b"trait",
    b"impl",
    b"type",
    b"const",
    b"static",
    b"mod",
    b"macro_rules",
    b"extern",
];

/// Regions the parse can leave out, as they hold no definition the outline lists nor
/// anything it shows: function bodies that hold no item keyword (most of a Rust file), the
/// token trees of macro invocations and `macro_rules!` bodies (never walked: a macro's items
/// are not the file's), a whole macro statement that ends its line (`name!(…);`, which the
/// outline does not list: thousands of them in a test module cost a third of the parse),
/// the fields of structs, enums and unions (the outline shows a type's signature, not its
/// fields), and the brackets of a `const`/`static` value holding no item keyword. Sorted;
/// none inside another. A light lexer skips strings, raw strings, chars and comments so their
/// brackets do not count. None when the brackets do not balance; the caller also re-parses in
/// full if the skeleton has any syntax error, which is what a wrong guess here (a bracket in
/// an unusual literal, a macro that was an expression) produces.
pub(super) fn skippable_bodies(text: &str) -> Option<Vec<(usize, usize)>> {
    let b = text.as_bytes();
    let n = b.len();
    let mut out = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    // What the next bracket at the stack depth given opens (see `Pending`).
    let mut pending: Option<(Pending, usize)> = None;
    // After `name!` or `macro_rules! name`: the next bracket opens a token tree; `Some` start
    // of `name` when the invocation starts a statement.
    let mut macro_next = false;
    let mut macro_stmt: Option<usize> = None;
    // The last byte of code before here, `/` for a comment; 0 at the start. A statement
    // starts after `;`, `{` or `}` (not after a comment: a doc comment above a removed macro
    // would reach the item after it).
    let mut last = 0u8;
    let mut run: Option<CommentRun> = None;
    let mut i = 0;
    while i < n {
        let c = b[i];
        let depth = stack.len();
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = memchr::memchr(b'\n', &b[i..]).map_or(n, |k| i + k);
                let line = comment_line(b, i, end);
                // The next line of a run with the same marker: its text goes once the run
                // has shown some (the outline shows a doc's first line).
                let next = run.filter(|r| {
                    r.marker == line.marker
                        && last == b'/'
                        && memchr::memchr_iter(b'\n', &b[r.end..i]).count() == 1
                });
                run = match next {
                    Some(r) if r.shown => {
                        if line.text < end {
                            out.push((line.text, end));
                        }
                        Some(CommentRun { end, ..r })
                    }
                    Some(r) => Some(CommentRun {
                        end,
                        shown: !line.blank,
                        ..r
                    }),
                    // Only between statements and items: a comment in a signature is shown.
                    None if matches!(last, 0 | b';' | b'{' | b'}' | b'/') => Some(CommentRun {
                        marker: line.marker,
                        end,
                        shown: !line.blank,
                    }),
                    None => None,
                };
                i = end;
                last = b'/';
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                last = b'/';
                let mut level = 0;
                while i < n {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        level += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        level -= 1;
                        i += 2;
                        if level == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                continue;
            }
            b'"' => {
                i = string_end(b, i + 1);
                last = c;
                continue;
            }
            b'\'' => {
                last = c;
                // A char literal ('x', '\n', '\u{..}', '}') or a lifetime ('a).
                if b.get(i + 1) == Some(&b'\\') {
                    // The escaped byte may be a quote itself ('\'').
                    i += 3;
                    while i < n && b[i] != b'\'' {
                        i += 1;
                    }
                    i += 1;
                } else {
                    let len = b.get(i + 1).map_or(1, |&x| utf8_len(x));
                    if b.get(i + 1 + len) == Some(&b'\'') {
                        i += len + 2;
                    } else {
                        // A lifetime: its name (`'static`) is no keyword.
                        i += 1;
                        while i < n && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                            i += 1;
                        }
                    }
                }
                continue;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let s = i;
                let stmt_start = matches!(last, 0 | b';' | b'{' | b'}');
                last = b'a';
                while i < n && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &b[s..i];
                // Raw strings: r"…", r#"…"#, br"…", with any number of #.
                if matches!(word, b"r" | b"br" | b"cr") && matches!(b.get(i), Some(b'"' | b'#')) {
                    let hashes = b[i..].iter().take_while(|&&x| x == b'#').count();
                    if b.get(i + hashes) == Some(&b'"') {
                        i = raw_string_end(b, i + hashes + 1, hashes);
                        continue;
                    }
                }
                if matches!(word, b"b" | b"c") && b.get(i) == Some(&b'"') {
                    i = string_end(b, i + 1);
                    continue;
                }
                // `name!(…)`, `name![…]`, `name! {…}`; `macro_rules! name {…}` (its name
                // comes between: the flag waits for the bracket).
                if b.get(i) == Some(&b'!') && b.get(i + 1) != Some(&b'=') {
                    macro_next = true;
                    macro_stmt = (stmt_start && word != b"macro_rules").then_some(s);
                    i += 1;
                }
                if ITEM_WORDS.contains(&word) {
                    if let Some(top) = stack.last_mut() {
                        top.items = true;
                    }
                    // What comes next: a body, fields or a value.
                    let next = b.get(i).copied().unwrap_or(b' ');
                    let named = next.is_ascii_whitespace()
                        && b[i..]
                            .iter()
                            .find(|x| !x.is_ascii_whitespace())
                            .is_some_and(|&x| x.is_ascii_alphabetic() || x == b'_');
                    match (word, pending) {
                        // `fn` in a parameter's type (`f: fn(u8)`) keeps the outer `fn`.
                        (b"fn", Some((Pending::Fn, d))) if d <= depth => {}
                        (b"fn", _) => pending = Some((Pending::Fn, depth)),
                        (b"struct" | b"enum" | b"union", None) if named => {
                            pending = Some((Pending::Fields, depth));
                        }
                        (b"const" | b"static", None) if next.is_ascii_whitespace() => {
                            pending = Some((Pending::Const, depth));
                        }
                        _ => {}
                    }
                }
                continue;
            }
            b'(' | b'[' | b'{' => {
                let close = match c {
                    b'(' => b')',
                    b'[' => b']',
                    _ => b'}',
                };
                let here = pending.filter(|&(_, d)| d == depth).map(|(p, _)| p);
                let skip = if macro_next {
                    Skip::TokenTree(macro_stmt.take())
                } else {
                    match (here, c) {
                        (Some(Pending::Fn), b'{') => Skip::FnBody,
                        (Some(Pending::Fields), b'{') => Skip::Whole,
                        (Some(Pending::Value), _) => Skip::FnBody,
                        _ => Skip::No,
                    }
                };
                if c == b'{' && matches!(here, Some(Pending::Fn | Pending::Fields | Pending::Const))
                {
                    pending = None;
                }
                stack.push(Open {
                    at: i,
                    close,
                    skip,
                    items: false,
                });
                macro_next = false;
                last = c;
            }
            b')' | b']' | b'}' => {
                let open = stack.pop()?;
                if open.close != c {
                    return None;
                }
                if let Some(top) = stack.last_mut() {
                    top.items |= open.items;
                }
                let hole = match open.skip {
                    Skip::TokenTree(Some(s)) => match statement_end(b, i, c) {
                        Some(e) => Some((s, e)),
                        None => Some((open.at + 1, i)),
                    },
                    Skip::TokenTree(None) | Skip::Whole => Some((open.at + 1, i)),
                    Skip::FnBody if !open.items => Some((open.at + 1, i)),
                    Skip::FnBody | Skip::No => None,
                };
                if let Some((s, e)) = hole
                    && e > s
                {
                    out.push((s, e));
                }
                if pending.is_some_and(|(_, d)| d > stack.len()) {
                    pending = None;
                }
                last = c;
            }
            b';' => {
                if pending.is_some_and(|(_, d)| d == depth) {
                    pending = None;
                }
                last = c;
            }
            // `=` of a constant's value (not `==`, `=>`, `<=`, `+=`, …).
            b'=' => {
                if pending == Some((Pending::Const, depth))
                    && !matches!(b.get(i + 1), Some(b'=' | b'>'))
                    && !matches!(
                        b.get(i.wrapping_sub(1)),
                        Some(
                            b'=' | b'!'
                                | b'<'
                                | b'>'
                                | b'+'
                                | b'-'
                                | b'*'
                                | b'/'
                                | b'%'
                                | b'&'
                                | b'|'
                                | b'^'
                        )
                    )
                {
                    pending = Some((Pending::Value, depth));
                }
                macro_next = false;
                last = c;
            }
            _ if !c.is_ascii_whitespace() => {
                macro_next = false;
                macro_stmt = None;
                last = c;
            }
            _ => {}
        }
        i += 1;
    }
    if !stack.is_empty() {
        return None;
    }
    // Holes close inner-first; the parse wants them in order, none inside another.
    out.sort_unstable();
    let mut kept: Vec<(usize, usize)> = Vec::with_capacity(out.len());
    for (s, e) in out {
        match kept.last() {
            Some(&(_, pe)) if s < pe => {}
            _ => kept.push((s, e)),
        }
    }
    Some(kept)
}

/// The end of a macro statement whose token tree closes with `close` at `i`: after its `;`
/// (needed after `)` and `]`), when nothing but blanks follows on the line; else None (an
/// expression such as `foo!(x).bar()`, or code after it on the line).
fn statement_end(b: &[u8], i: usize, close: u8) -> Option<usize> {
    let blanks = |mut j: usize| {
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        j
    };
    let mut j = blanks(i + 1);
    if b.get(j) == Some(&b';') {
        j = blanks(j + 1);
    } else if close != b'}' {
        return None;
    }
    matches!(b.get(j), None | Some(b'\n' | b'\r')).then_some(j)
}

/// Consecutive line comments with one marker.
#[derive(Clone, Copy)]
struct CommentRun {
    marker: (usize, bool),
    /// The end of its last line.
    end: usize,
    /// A line with text was kept.
    shown: bool,
}

/// A line comment from `i` (at `//`) to `end`: its marker (the number of slashes, and a `!`
/// after them), where its text starts, and whether that text is blank to the outline's doc
/// reader (only blanks, `/`, `*` and `!`: a superset of what it strips).
struct CommentLine {
    marker: (usize, bool),
    text: usize,
    blank: bool,
}

fn comment_line(b: &[u8], i: usize, end: usize) -> CommentLine {
    let slashes = b[i..end].iter().take_while(|&&c| c == b'/').count();
    let bang = b.get(i + slashes) == Some(&b'!');
    let text = (i + slashes + usize::from(bang)).min(end);
    CommentLine {
        marker: (slashes, bang),
        text,
        blank: b[text..end]
            .iter()
            .all(|c| c.is_ascii_whitespace() || matches!(c, b'/' | b'*' | b'!')),
    }
}

/// An open bracket.
struct Open {
    at: usize,
    close: u8,
    skip: Skip,
    /// An item keyword was seen inside.
    items: bool,
}

/// What an open bracket's interior is to the parse.
#[derive(Clone, Copy)]
enum Skip {
    No,
    /// A function body or a constant's value: left out unless it holds an item keyword.
    FnBody,
    /// Struct, enum or union fields: always left out.
    Whole,
    /// A macro's token tree: always left out; with the start of the statement it begins, if
    /// it begins one (then the whole statement may go).
    TokenTree(Option<usize>),
}

/// What the next bracket at a given depth opens, from the keyword before it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pending {
    /// After `fn`: a `{` is its body, unless `;` comes first.
    Fn,
    /// After `struct`/`enum`/`union NAME`: a `{` holds its fields.
    Fields,
    /// After `const`/`static`, before the value's `=`.
    Const,
    /// A constant's value, up to its `;`.
    Value,
}

fn utf8_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// The byte after the closing `"` of a string whose contents start at `i`.
fn string_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The byte after `"` + `hashes` × `#` that closes a raw string whose contents start at `i`.
fn raw_string_end(b: &[u8], mut i: usize, hashes: usize) -> usize {
    while let Some(k) = memchr::memchr(b'"', b.get(i..).unwrap_or(&[])) {
        let q = i + k + 1;
        if b.len() >= q + hashes && b[q..q + hashes].iter().all(|&x| x == b'#') {
            return q + hashes;
        }
        i = q;
    }
    b.len()
}
