//! The walk over a syntax tree: each definition the language table recognises becomes an
//! [`Item`] with its signature, docs, scope and ranges.

use tree_sitter::Node;

use super::def::{Def, DocStyle, Table, Up, is_trivia};
use super::{Item, python};

/// Walk one syntax tree, appending its definitions to `items`.
pub(super) fn walk<'t>(tab: &Table, root: Node<'t>, text: &str, sep: &str, items: &mut Vec<Item>) {
    // Items whose node is an ancestor of the cursor: (node id, item index).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut cursor = root.walk();
    // Ancestors of the cursor's node, and for each the trivia run before it.
    let mut path: Vec<Node> = Vec::new();
    let mut runs: Vec<Vec<Node>> = Vec::new();
    let mut run: Vec<Node> = Vec::new();
    // An iterative walk: deeply nested input must not overflow the stack.
    'walk: loop {
        let node = cursor.node();
        let parent = open.last().map(|&(_, i)| i);
        let up = Up {
            text,
            enclosing: parent.and_then(|i| items.get(i)).map(|it| it.kind),
            ancestors: &path,
            before: &run,
        };
        if let Some(def) = (tab.classify)(node, &up) {
            let brief = parent
                .and_then(|p| items.get(p))
                .is_some_and(|p| p.members_brief || def.brief);
            // The trivia before the definition's outer node (itself or an ancestor).
            let before: &[Node] = if def.outer.id() == node.id() {
                &run
            } else {
                path.iter()
                    .rposition(|a| a.id() == def.outer.id())
                    .and_then(|k| runs.get(k))
                    .map_or(&[], |r| r.as_slice())
            };
            let item = build(tab, node, def, before, text, items, parent, sep, brief);
            open.push((node.id(), items.len()));
            items.push(item);
        }
        let kind = node.kind();
        let enter = match tab.descend {
            Some(kinds) => kinds.contains(&kind) || node.is_error(),
            None => !tab.skip.contains(&kind),
        };
        if enter && cursor.goto_first_child() {
            path.push(node);
            runs.push(std::mem::take(&mut run));
            continue;
        }
        loop {
            let cur = cursor.node();
            if open.last().is_some_and(|&(id, _)| id == cur.id()) {
                open.pop();
            }
            if is_trivia(cur.kind()) {
                run.push(cur);
            } else {
                run.clear();
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
            path.pop();
            run = runs.pop().unwrap_or_default();
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn build(
    tab: &Table,
    node: Node,
    def: Def,
    before: &[Node],
    text: &str,
    items: &[Item],
    parent: Option<usize>,
    sep: &str,
    brief: bool,
) -> Item {
    let outer = def.outer;
    // The header starts after decorators and comments that a wrapper holds.
    let header = first_header_child(outer).unwrap_or(outer);
    let sig_start = header.start_byte();
    let end = outer.end_byte().max(node.end_byte());
    let sig_end = match def.body {
        Some(b) if b.start_byte() >= sig_start => b.start_byte(),
        _ => cut_point(text, sig_start, end, def.cut_at),
    };
    let signature = compact(text.get(sig_start..sig_end).unwrap_or(""));
    let (first_node, mut doc) = docs(tab.doc, outer, before, text);
    if tab.doc == DocStyle::Python {
        doc = def.body.and_then(|b| python::docstring(b, text));
    }
    let first = first_node.start_byte();
    // From the start of its line (indentation included) unless other code precedes it there.
    let ls = line_start(text, first);
    let full = if text.get(ls..first).is_some_and(|s| s.trim().is_empty()) {
        ls
    } else {
        first
    };
    let scope = def
        .scope
        .clone()
        .or_else(|| {
            parent.and_then(|p| items.get(p)).map(|p| {
                if p.scope.is_empty() {
                    p.name.clone()
                } else {
                    format!("{}{sep}{}", p.scope, p.name)
                }
            })
        })
        .unwrap_or_default();
    Item {
        kind: def.kind,
        name: def.name,
        scope,
        depth: parent.map_or(0, |p| items.get(p).map_or(0, |i| i.depth + 1)),
        signature,
        doc,
        start_line: header.start_position().row + 1,
        end_line: line_of_end(outer, end),
        // From the tree, not by counting newlines: that would be quadratic in big files.
        full_start_line: first_node.start_position().row + 1,
        tokens: 0, // counted after the parse, see `outline`
        start: full,
        end,
        parent,
        brief,
        members_brief: def.brief_members,
    }
}

/// Last line of a node (a node ending right after a newline ends on the line before).
fn line_of_end(outer: Node, end: usize) -> usize {
    let p = outer.end_position();
    if p.column == 0 && end > outer.start_byte() {
        p.row.max(1)
    } else {
        p.row + 1
    }
}

fn line_start(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1)
}

/// The first child that is not a decorator, attribute or comment (where the header starts).
fn first_header_child(n: Node) -> Option<Node> {
    let mut c = n.walk();
    n.children(&mut c).find(|ch| {
        !matches!(
            ch.kind(),
            "decorator" | "comment" | "line_comment" | "block_comment" | "attribute_item"
        )
    })
}

/// Where a body-less signature ends: at `stop` outside brackets and strings, or the node end.
fn cut_point(text: &str, from: usize, to: usize, stop: Option<u8>) -> usize {
    let bytes = text.as_bytes();
    let to = to.min(bytes.len());
    let Some(stop) = stop else { return to };
    let mut depth = 0i32;
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate().take(to).skip(from) {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                // Not `'`: Rust lifetimes would open a quote that never closes.
                b'"' | b'`' => quote = Some(b),
                b'(' | b'[' | b'<' => depth += 1,
                b')' | b']' | b'>' => depth -= 1,
                _ if b == stop && depth <= 0 => return i,
                _ => {}
            },
        }
    }
    to
}

/// Whitespace runs collapsed to one space; `( a, b, )` tidied to `(a, b)`; the trailing
/// body opener (`{`, `:`, `=`, `;`) dropped.
pub(super) fn compact(sig: &str) -> String {
    let mut out = String::with_capacity(sig.len().min(256));
    for w in sig.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    let mut s = out
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(",)", ")")
        .replace("[ ", "[")
        .replace(" ]", "]")
        .replace(",]", "]");
    while let Some(t) = s
        .strip_suffix('{')
        .or_else(|| s.strip_suffix(':'))
        .or_else(|| s.strip_suffix('='))
        .or_else(|| s.strip_suffix(';'))
    {
        s = t.trim_end().to_string();
    }
    s
}

/// Doc comments and attributes directly above `outer`: (the first of them, or `outer`; first
/// doc line). Stops at a blank line or any other node.
fn docs<'t>(
    style: DocStyle,
    outer: Node<'t>,
    before: &[Node<'t>],
    text: &str,
) -> (Node<'t>, Option<String>) {
    let mut start = outer;
    if style == DocStyle::Python {
        return (start, None);
    }
    let mut first_doc: Option<String> = None;
    let mut cur = outer;
    for &prev in before.iter().rev() {
        if prev.end_position().row + 1 < cur.start_position().row {
            break; // a blank line separates it
        }
        let t = prev.utf8_text(text.as_bytes()).unwrap_or("");
        let is_doc = match (style, prev.kind()) {
            (DocStyle::Rust, "line_comment") => t.starts_with("///") && !t.starts_with("////"),
            (DocStyle::Rust, "block_comment") => t.starts_with("/**") && !t.starts_with("/***"),
            (DocStyle::Comments, "comment") => true,
            _ => false,
        };
        // Attributes and decorators between the docs and the definition belong to it.
        let is_attr = matches!(
            (style, prev.kind()),
            (DocStyle::Rust, "attribute_item") | (DocStyle::Comments, "decorator")
        );
        if !is_doc && !is_attr {
            break;
        }
        if is_doc && let Some(l) = first_comment_line(t) {
            // Walking upwards: the topmost doc line wins.
            first_doc = Some(l);
        }
        start = prev;
        cur = prev;
    }
    (start, first_doc)
}

/// The first non-empty line of a comment, markers stripped.
fn first_comment_line(t: &str) -> Option<String> {
    t.lines()
        .map(|l| {
            l.trim()
                .trim_start_matches("/**")
                .trim_start_matches("/*")
                .trim_start_matches("///")
                .trim_start_matches("//")
                .trim_end_matches("*/")
                .trim_start_matches('*')
                .trim()
        })
        .find(|l| !l.is_empty())
        .map(|l| l.to_string())
}

/// Where the first syntax error is: the first MISSING node, or the innermost ERROR node on the
/// way to it (an ERROR node can wrap the whole file; its erroneous child is more precise).
pub(super) fn first_error(root: Node) -> Option<Node> {
    let mut cursor = root.walk();
    loop {
        let n = cursor.node();
        if n.is_missing() {
            return Some(n);
        }
        if !cursor.goto_first_child() {
            return Some(n);
        }
        loop {
            let c = cursor.node();
            if c.has_error() || c.is_missing() || c.is_error() {
                break;
            }
            if !cursor.goto_next_sibling() {
                return Some(n);
            }
        }
    }
}

/// The name text of `node`'s field `field`.
pub(super) fn field_text(node: Node, field: &str, text: &str) -> Option<String> {
    node.child_by_field_name(field)
        .and_then(|n| n.utf8_text(text.as_bytes()).ok())
        .map(|s| s.to_string())
}
