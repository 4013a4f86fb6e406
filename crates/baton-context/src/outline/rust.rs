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

/// Interiors (delimiter exclusive) that the parse can leave out, as they hold no definition
/// the outline lists: function bodies that hold no item keyword (most of a Rust file), and the
/// token trees of macro invocations and `macro_rules!` bodies (never walked: a macro's items
/// are not the file's). Nested ones may overlap. A light lexer skips strings, raw strings,
/// chars and comments so their brackets do not count. None when the brackets do not balance;
/// the caller also re-parses in full if the skeleton has any syntax error, which is what a
/// wrong guess here (a bracket in an unusual literal) produces.
pub(super) fn skippable_bodies(text: &str) -> Option<Vec<(usize, usize)>> {
    let b = text.as_bytes();
    let n = b.len();
    let mut out = Vec::new();
    // Open brackets: (position, closing byte, skippable: a fn body or a macro's token tree
    // (false for other brackets), holds an item keyword).
    let mut stack: Vec<(usize, u8, Skip, bool)> = Vec::new();
    // After `fn`: the next `{` outside brackets is its body, unless `;` or `}` comes first.
    let mut pending = false;
    let mut brackets = 0i32;
    // After `name!` or `macro_rules! name`: the next bracket opens a token tree.
    let mut macro_next = false;
    let mut i = 0;
    while i < n {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = memchr::memchr(b'\n', &b[i..]).map_or(n, |k| i + k);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < n {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
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
                continue;
            }
            b'\'' => {
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
                    i += 1;
                }
                if ITEM_WORDS.contains(&word) {
                    if let Some(top) = stack.last_mut() {
                        top.3 = true;
                    }
                    if word == b"fn" {
                        pending = true;
                        brackets = 0;
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
                let skip = if macro_next {
                    Skip::TokenTree
                } else if c == b'{' && pending && brackets <= 0 {
                    Skip::FnBody
                } else {
                    Skip::No
                };
                stack.push((i, close, skip, false));
                macro_next = false;
                if c == b'{' {
                    pending = false;
                } else {
                    brackets += 1;
                }
            }
            b')' | b']' | b'}' => {
                let (open, close, skip, items) = stack.pop()?;
                if close != c {
                    return None;
                }
                if let Some(top) = stack.last_mut() {
                    top.3 |= items;
                }
                let whole = match skip {
                    Skip::TokenTree => true,
                    Skip::FnBody => !items,
                    Skip::No => false,
                };
                if whole && i > open + 1 {
                    out.push((open + 1, i));
                }
                if c == b'}' {
                    pending = false;
                } else {
                    brackets -= 1;
                }
            }
            b';' if brackets <= 0 => pending = false,
            _ if !c.is_ascii_whitespace() => macro_next = false,
            _ => {}
        }
        i += 1;
    }
    stack.is_empty().then_some(out)
}

/// What an open bracket's interior is to the parse.
#[derive(Clone, Copy)]
enum Skip {
    No,
    FnBody,
    TokenTree,
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
