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
