//! What a language's node-kind table says (one table a language: [`super::rust`],
//! [`super::python`], [`super::js`], [`super::go`]) and what the walk tells it.

use tree_sitter::Node;

use super::{Lang, go, js, python, rust};

/// How a language attaches documentation to a definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DocStyle {
    /// `///` and `/** */` comments and `#[…]` attributes before the item.
    Rust,
    /// A docstring: the first statement of the body.
    Python,
    /// Comments directly above (JSDoc `/** */`, Go's `//` lines).
    Comments,
}

/// What a language's table says about one node.
pub(super) struct Def<'t> {
    pub kind: &'static str,
    pub name: String,
    /// The node whose preceding siblings carry docs and whose range is the definition's
    /// (a wrapper such as `export_statement` or `decorated_definition`, or the node itself).
    pub outer: Node<'t>,
    /// The body: the signature ends where it starts.
    pub body: Option<Node<'t>>,
    /// Without a body, the signature ends at this byte at nesting depth 0 (`=` of a constant,
    /// `{` of a Go struct), or at the end of the node.
    pub cut_at: Option<u8>,
    /// Members are shown by name only.
    pub brief_members: bool,
    /// Shown by name only on its parent's line (a `#[test]` function: the name says it all).
    pub brief: bool,
    /// Scope when it is not given by nesting (a Go method's receiver type).
    pub scope: Option<String>,
}

/// What the walk knows about a node's surroundings. tree-sitter's `parent()` and
/// `prev_sibling()` rescan from the root and the first sibling (quadratic on files with
/// thousands of items), so the walk keeps ancestors and preceding comments itself.
pub(super) struct Up<'a, 't> {
    pub text: &'a str,
    /// Kind of the enclosing definition.
    pub enclosing: Option<&'static str>,
    /// Ancestors of the node, root first.
    pub ancestors: &'a [Node<'t>],
    /// Comments, attributes and decorators directly before the node (nearest last).
    pub before: &'a [Node<'t>],
}

impl<'t> Up<'_, 't> {
    /// The `k`-th ancestor: 0 is the parent.
    pub fn ancestor(&self, k: usize) -> Option<Node<'t>> {
        let i = self.ancestors.len().checked_sub(k + 1)?;
        self.ancestors.get(i).copied()
    }
}

/// Node kinds that can attach to the next definition.
pub(super) fn is_trivia(kind: &str) -> bool {
    matches!(
        kind,
        "comment" | "line_comment" | "block_comment" | "attribute_item" | "decorator"
    )
}

pub(super) struct Table {
    /// Classify `node` in its surroundings.
    pub classify: for<'t> fn(Node<'t>, &Up<'_, 't>) -> Option<Def<'t>>,
    /// Node kinds whose subtrees hold no definitions (skipped for speed, and so that
    /// macro bodies or strings never produce items).
    pub skip: &'static [&'static str],
    /// When set, the only node kinds whose children are visited (ERROR nodes too): most of a
    /// file is function bodies' statements and expressions, which hold no definitions, and
    /// the walk would otherwise visit every one of their nodes.
    pub descend: Option<&'static [&'static str]>,
    pub doc: DocStyle,
}

pub(super) fn table(lang: Lang) -> Option<Table> {
    Some(match lang {
        Lang::Rust => rust::TABLE,
        Lang::Python => python::TABLE,
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => js::TABLE,
        Lang::Go => go::TABLE,
        Lang::Markdown => return None,
    })
}
