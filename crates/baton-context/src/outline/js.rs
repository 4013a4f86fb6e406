//! JavaScript, TypeScript and TSX (one table: the TypeScript grammars extend JavaScript's):
//! functions, classes, methods, interfaces, enums, type aliases, namespaces, and top-level
//! `const`/`let`/`var` (arrow functions and function expressions count as functions).

use tree_sitter::Node;

use super::{Def, DocStyle, Table, Up, field_text};

pub(super) const TABLE: Table = Table {
    classify,
    skip: &["string", "template_string", "comment", "regex"],
    descend: None,
    doc: DocStyle::Comments,
};

fn classify<'t>(n: Node<'t>, up: &Up<'_, 't>) -> Option<Def<'t>> {
    let text = up.text;
    let kind = match n.kind() {
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            "function"
        }
        "class_declaration" | "abstract_class_declaration" => "class",
        // A class expression only when it has a name (`const A = class B {}`).
        "class" if n.child_by_field_name("name").is_some() => "class",
        "method_definition" | "abstract_method_signature" => "method",
        "interface_declaration" => "interface",
        "enum_declaration" => "enum",
        "type_alias_declaration" => "type",
        "internal_module" | "module" => "namespace",
        "variable_declarator" => return variable(n, up),
        _ => return None,
    };
    Some(Def {
        kind,
        name: field_text(n, "name", text)?,
        outer: exported(n, up.ancestor(0)),
        body: n.child_by_field_name("body"),
        cut_at: None,
        brief_members: false,
        scope: None,
        brief: false,
    })
}

/// The `export …` statement around a declaration, if any (docs sit above it).
fn exported<'t>(n: Node<'t>, parent: Option<Node<'t>>) -> Node<'t> {
    parent
        .filter(|p| p.kind() == "export_statement")
        .unwrap_or(n)
}

/// A top-level variable: `const f = () => …` is a function, anything else a constant.
fn variable<'t>(n: Node<'t>, up: &Up<'_, 't>) -> Option<Def<'t>> {
    let text = up.text;
    let decl = up
        .ancestor(0)
        .filter(|p| matches!(p.kind(), "lexical_declaration" | "variable_declaration"))?;
    let top = up.ancestor(1)?;
    let top_level = match top.kind() {
        "program" => true,
        "export_statement" => up.ancestor(2).is_some_and(|p| p.kind() == "program"),
        _ => false,
    };
    if !top_level {
        return None;
    }
    let name = n.child_by_field_name("name")?;
    if name.kind() != "identifier" {
        return None; // destructuring: no single name
    }
    let value = n.child_by_field_name("value");
    let func = value.filter(|v| {
        matches!(
            v.kind(),
            "arrow_function" | "function_expression" | "generator_function"
        )
    });
    let mut c = decl.walk();
    let single = decl
        .named_children(&mut c)
        .filter(|d| d.kind() == "variable_declarator")
        .count()
        == 1;
    Some(Def {
        kind: if func.is_some() { "function" } else { "const" },
        name: name.utf8_text(text.as_bytes()).ok()?.to_string(),
        outer: if single { exported(decl, Some(top)) } else { n },
        body: match func {
            Some(f) => f.child_by_field_name("body"),
            None => value,
        },
        cut_at: Some(b'='),
        brief_members: false,
        scope: None,
        brief: false,
    })
}
