//! Go: functions, methods (scoped by their receiver type), types (struct, interface, alias),
//! an interface's method specs (as ctags' `methodSpec`), and package-level constants and
//! variables.

use tree_sitter::Node;

use super::{Def, DocStyle, Table, Up, field_text};

pub(super) const TABLE: Table = Table {
    classify,
    skip: &[
        "interpreted_string_literal",
        "raw_string_literal",
        "comment",
        "field_declaration_list",
    ],
    descend: None,
    doc: DocStyle::Comments,
};

fn classify<'t>(n: Node<'t>, up: &Up<'_, 't>) -> Option<Def<'t>> {
    let text = up.text;
    let mut scope = None;
    let (kind, cut_at, outer) = match n.kind() {
        "function_declaration" => ("func", None, n),
        // `Get(key string) (string, error)` inside `type Store interface { … }`.
        "method_elem" | "method_spec" => ("method", None, n),
        "method_declaration" => {
            scope = n
                .child_by_field_name("receiver")
                .and_then(|r| receiver_type(r, text));
            ("method", None, n)
        }
        "type_spec" | "type_alias" => {
            let k = match n.child_by_field_name("type").map(|t| t.kind()) {
                Some("struct_type") if n.kind() == "type_spec" => "struct",
                Some("interface_type") if n.kind() == "type_spec" => "interface",
                _ => "type",
            };
            // The signature stops at the struct's or interface's `{`.
            (k, Some(b'{'), single_spec(n, up.ancestor(0)))
        }
        "const_spec" | "var_spec" => {
            if up.ancestor(1)?.kind() != "source_file" {
                return None; // only package-level ones
            }
            let k = if n.kind() == "const_spec" {
                "const"
            } else {
                "var"
            };
            (k, Some(b'='), single_spec(n, up.ancestor(0)))
        }
        _ => return None,
    };
    Some(Def {
        kind,
        name: field_text(n, "name", text)?,
        outer,
        body: n
            .child_by_field_name("body")
            .or_else(|| n.child_by_field_name("value")),
        cut_at,
        brief_members: false,
        scope,
        brief: false,
    })
}

/// `type X struct{}` is a declaration with one spec: the declaration is the definition (docs
/// sit above `type`); in a `type ( … )` group each spec stands alone.
fn single_spec<'t>(n: Node<'t>, parent: Option<Node<'t>>) -> Node<'t> {
    match parent {
        Some(p) if p.named_child_count() == 1 => p,
        _ => n,
    }
}

/// `Server` for `(s *Server)`, `(l List[T])`.
fn receiver_type(r: Node, text: &str) -> Option<String> {
    let s = r.utf8_text(text.as_bytes()).ok()?;
    let s = s.trim_matches(|c| c == '(' || c == ')');
    let last = s.split_whitespace().last()?;
    let t = last.trim_start_matches('*');
    Some(t.split('[').next().unwrap_or(t).to_string())
}
