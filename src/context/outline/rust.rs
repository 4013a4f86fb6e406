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
