//! Structure-first reads (seed 001's "File Read Strategy"): the skeleton of a source file —
//! every definition with its signature, line range and token count — so an agent reads the
//! outline first and then only the definition it needs (`baton extract FILE --symbol NAME`).
//!
//! Source files are parsed with tree-sitter grammars (real parsers: nesting, decorators and
//! doc comments come from the syntax tree, not from regexes). Each language has a file with
//! its node-kind table ([`rust`], [`python`], [`js`] for JavaScript/TypeScript/TSX, [`go`]);
//! this module walks the tree, attaches docs and attributes, and renders. Markdown files get
//! the heading tree of [`crate::context::markdown`]. Anything else gets a note plus its head.

use std::path::Path;

use serde::Serialize;
use tree_sitter::{Node, Parser};

use super::tokens::Encoding;
use crate::error::Result;

mod estimate;
mod go;
mod js;
mod python;
mod rust;
mod symbol;

pub use estimate::ESTIMATE_ABOVE_BYTES;
pub use symbol::{find_symbol, nearest_names};

/// Text for agent prompts (the run engine puts it into the implementer and reviewer prompts):
/// seed 001's read strategy, with the commands that make it cheap.
pub const READ_STRATEGY: &str = "\
Reading code: structure first, then only what you need.
- To understand a file or module, run `baton outline PATH` (a directory gives a repository map):
  every definition with its signature, line range and token count, for a few percent of the
  file's tokens.
- To read one definition, run `baton extract FILE --symbol NAME` (`Type::method` or
  `Class.method` for members); it prints exactly that definition with its docs and attributes.
- Read a whole file only when you are going to modify most of it. Do not `cat` large files or
  whole directories, and do not re-read files already in your context.";

/// Files larger than this are not parsed (a note says so); parsing is linear but the output
/// of a generated 100 MB file would help nobody.
pub const MAX_PARSE_BYTES: usize = 64 * 1024 * 1024;
/// Lines shown for a file that has no outline.
const HEAD_LINES: usize = 10;
/// Display caps: a signature or doc line longer than this is cut with `…`.
const SIG_MAX: usize = 120;
const DOC_MAX: usize = 48;

/// A language baton can outline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    Rust,
    Python,
    TypeScript,
    Tsx,
    JavaScript,
    Go,
    Markdown,
}

impl Lang {
    /// The language of a path, from its extension.
    pub fn from_path(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "rs" => Lang::Rust,
            "py" | "pyi" | "pyw" => Lang::Python,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "go" => Lang::Go,
            "md" | "markdown" => Lang::Markdown,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::JavaScript => "javascript",
            Lang::Go => "go",
            Lang::Markdown => "markdown",
        }
    }

    /// Separator of qualified names in this language (`Type::method`, `Class.method`).
    pub fn separator(self) -> &'static str {
        match self {
            Lang::Rust => "::",
            _ => ".",
        }
    }

    fn grammar(self) -> Option<tree_sitter::Language> {
        Some(match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Markdown => return None,
        })
    }
}

/// One definition in the outline.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    /// `fn`, `method`, `struct`, `enum`, `trait`, `impl`, `class`, `def`, `interface`,
    /// `type`, `const`, `function`, `heading`, …
    pub kind: &'static str,
    pub name: String,
    /// The enclosing definitions' names, joined by the language's separator (`Type`, `A.B`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub scope: String,
    /// Nesting depth: 0 for top-level definitions.
    pub depth: usize,
    /// The header up to the body, whitespace collapsed (full length; display cuts it).
    pub signature: String,
    /// First line of the doc comment or docstring.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// 1-based line of the header (after decorators and attributes): ctags' `line`.
    pub start_line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// First line of the doc comments, attributes and decorators attached to it.
    pub full_start_line: usize,
    /// Tokens of the whole definition, docs and attributes included (an estimate when the
    /// file's `tokens_estimated` is set).
    pub tokens: usize,
    /// Byte range of the definition with its docs (from the start of its first line).
    #[serde(skip)]
    pub start: usize,
    #[serde(skip)]
    pub end: usize,
    /// Index of the enclosing item.
    #[serde(skip)]
    pub parent: Option<usize>,
    /// Shown by name only, on its parent's line (members of a trait impl: the trait gives
    /// their signatures, and listing them in full would dominate the outline).
    #[serde(skip)]
    pub brief: bool,
    /// Its own members are brief.
    #[serde(skip)]
    pub members_brief: bool,
}

/// The outline of one file.
#[derive(Debug, Clone, Serialize)]
pub struct FileOutline {
    pub file: String,
    /// None when baton has no outline for the file's language.
    pub language: Option<Lang>,
    pub bytes: usize,
    pub lines: usize,
    /// Tokens of the whole file.
    pub tokens: usize,
    /// Tokens of the rendered outline (what reading it costs).
    pub outline_tokens: usize,
    /// All token counts of this file are estimates ([`ESTIMATE_ABOVE_BYTES`]).
    pub tokens_estimated: bool,
    pub items: Vec<Item>,
    /// Syntax errors, invalid UTF-8, no outline for this language, …
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// First lines of a file that has no outline.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub head: Vec<String>,
}

/// A file's text as read for outlining: lossy UTF-8, with notes about what was replaced.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: String,
    pub binary: bool,
    pub notes: Vec<String>,
}

impl Source {
    /// Decode `bytes`: invalid UTF-8 is replaced with U+FFFD and noted (an outline of a
    /// Latin-1 file is still useful; line numbers do not move).
    pub fn from_bytes(name: &str, bytes: Vec<u8>) -> Source {
        let binary = bytes.iter().take(8192).any(|&b| b == 0);
        let mut notes = Vec::new();
        let text = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                if !binary {
                    notes.push(format!(
                        "not valid UTF-8: invalid bytes replaced with U+FFFD (first at byte {at})"
                    ));
                }
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        };
        Source {
            name: name.to_string(),
            text,
            binary,
            notes,
        }
    }

    pub fn read(path: &Path) -> Result<Source> {
        let bytes = crate::context::input::read_bytes(
            path,
            "`baton outline DIR` maps a directory; extract needs a file",
        )?;
        Ok(Source::from_bytes(&path.display().to_string(), bytes))
    }
}

/// Token counts of ranges of one text: exact, or estimated for big files.
enum Counts<'a> {
    Exact(RangeCounter<'a>),
    Estimated(estimate::Estimator),
}

impl Counts<'_> {
    fn total(&self) -> usize {
        match self {
            Counts::Exact(c) => c.total,
            Counts::Estimated(c) => c.total,
        }
    }

    fn range(&self, s: usize, e: usize) -> usize {
        match self {
            Counts::Exact(c) => c.count(s, e),
            Counts::Estimated(c) => c.count(s, e),
        }
    }
}

/// Tokens of a rendered outline, counted the way its file's counts were.
pub fn render_tokens(o: &FileOutline, enc: Encoding) -> usize {
    let r = render(o);
    if o.tokens_estimated {
        estimate::estimate(&r)
    } else {
        enc.count(&r)
    }
}

/// Outline `src` as language `lang` (None: from the file name); token counts are estimated
/// above [`ESTIMATE_ABOVE_BYTES`].
pub fn outline(src: &Source, lang: Option<Lang>, enc: Encoding) -> FileOutline {
    outline_with(src, lang, enc, false)
}

/// [`outline`], with exact token counts whatever the size when `exact_tokens` is set.
pub fn outline_with(
    src: &Source,
    lang: Option<Lang>,
    enc: Encoding,
    exact_tokens: bool,
) -> FileOutline {
    let lang = lang.or_else(|| Lang::from_path(Path::new(&src.name)));
    let text = src.text.as_str();
    let code =
        lang.filter(|l| *l != Lang::Markdown && !src.binary && text.len() <= MAX_PARSE_BYTES);
    let estimated = !exact_tokens && text.len() > ESTIMATE_ABOVE_BYTES;
    // Counting tokens and parsing are independent passes over the text: run them side by side
    // (the walk records byte ranges; their counts are filled in after the join).
    let (counter, parsed) = std::thread::scope(|s| {
        let parse = code.map(|l| s.spawn(move || code_items(l, text)));
        let counter = if estimated {
            Counts::Estimated(estimate::Estimator::new(text))
        } else {
            Counts::Exact(RangeCounter::new(enc, text))
        };
        let parsed = parse.map(|h| {
            h.join()
                .unwrap_or_else(|_| (Vec::new(), vec!["the parser failed: no outline".into()]))
        });
        (counter, parsed)
    });
    let mut o = FileOutline {
        file: src.name.clone(),
        language: lang,
        bytes: text.len(),
        lines: line_count(text),
        tokens: counter.total(),
        outline_tokens: 0,
        tokens_estimated: estimated,
        items: Vec::new(),
        notes: src.notes.clone(),
        head: Vec::new(),
    };
    match lang {
        _ if src.binary => {
            o.language = None;
            o.notes = vec!["binary file: no outline".into()];
        }
        None => {
            let ext = Path::new(&src.name)
                .extension()
                .map(|e| format!(" (.{})", e.to_string_lossy()))
                .unwrap_or_default();
            o.notes.push(format!(
                "no outline for this language{ext}: outlines cover Rust, Python, TypeScript/TSX, JavaScript, Go and Markdown"
            ));
            o.head = head(text);
        }
        Some(_) if text.len() > MAX_PARSE_BYTES => {
            o.notes.push(format!(
                "too large to outline ({} bytes; the limit is {MAX_PARSE_BYTES})",
                text.len()
            ));
            o.head = head(text);
        }
        Some(Lang::Markdown) => o.items = markdown_items(text, &counter),
        Some(_) => {
            let (mut items, notes) = parsed.unwrap_or_default();
            for it in &mut items {
                it.tokens = counter.range(it.start, it.end);
            }
            o.items = items;
            o.notes.extend(notes);
        }
    }
    o.outline_tokens = render_tokens(&o, enc);
    o
}

fn line_count(text: &str) -> usize {
    let n = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    n + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

fn head(text: &str) -> Vec<String> {
    text.lines()
        .take(HEAD_LINES)
        .map(|l| cut(l.trim_end(), 160))
        .collect()
}

/// `s` cut to at most `max` chars, with `…` when cut.
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", s[..i].trim_end()),
        None => s.to_string(),
    }
}

fn markdown_items(text: &str, counter: &Counts) -> Vec<Item> {
    let all = super::markdown::sections(text);
    let min = all.iter().map(|s| s.level).min().unwrap_or(1);
    all.iter()
        .map(|s| Item {
            kind: "heading",
            name: s.title.clone(),
            scope: String::new(),
            depth: usize::from(s.level - min),
            signature: format!("{} {}", "#".repeat(usize::from(s.level)), s.title),
            doc: None,
            start_line: s.start_line,
            end_line: s.end_line,
            full_start_line: s.start_line,
            tokens: counter.range(s.start, s.end),
            start: s.start,
            end: s.end,
            parent: None,
            brief: false,
            members_brief: false,
        })
        .collect()
}

/// How a language attaches documentation to a definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DocStyle {
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
fn is_trivia(kind: &str) -> bool {
    matches!(
        kind,
        "comment" | "line_comment" | "block_comment" | "attribute_item" | "decorator"
    )
}

struct Table {
    /// Classify `node` in its surroundings.
    classify: for<'t> fn(Node<'t>, &Up<'_, 't>) -> Option<Def<'t>>,
    /// Node kinds whose subtrees hold no definitions (skipped for speed, and so that
    /// macro bodies or strings never produce items).
    skip: &'static [&'static str],
    /// When set, the only node kinds whose children are visited (ERROR nodes too): most of a
    /// file is function bodies' statements and expressions, which hold no definitions, and
    /// the walk would otherwise visit every one of their nodes.
    descend: Option<&'static [&'static str]>,
    doc: DocStyle,
}

fn table(lang: Lang) -> Option<Table> {
    Some(match lang {
        Lang::Rust => rust::TABLE,
        Lang::Python => python::TABLE,
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => js::TABLE,
        Lang::Go => go::TABLE,
        Lang::Markdown => return None,
    })
}

/// Files at least this large are parsed in two halves on two threads when a split point is
/// found (see [`parse`]).
const SPLIT_PARSE_BYTES: usize = 256 * 1024;

/// Parse and walk: items in document order, plus notes (syntax errors).
fn code_items(lang: Lang, text: &str) -> (Vec<Item>, Vec<String>) {
    code_items_with(lang, text, true)
}

/// [`code_items`]; `fast`: try [`fast_items`] first (off only to test it against this).
fn code_items_with(lang: Lang, text: &str, fast: bool) -> (Vec<Item>, Vec<String>) {
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
/// is most of an outline's time, so (1) Rust function bodies that cannot hold a definition
/// are left out of the parse (tree-sitter's included ranges: positions stay absolute), and
/// (2) a big file is cut at a line that starts a top-level item after a blank line, and the
/// halves are parsed and walked on two threads. Both are guesses made without a parser, so
/// the result is only trusted when every part parses without a syntax error — a wrong
/// guess (a cut or a skipped range inside a string, comment or body) leaves something
/// unterminated — else the caller parses the whole text (and reports its errors).
fn fast_items(
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
    let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let cut = if text.len() >= SPLIT_PARSE_BYTES && two_cores {
        split_point(text)
    } else {
        None
    };
    if holes.is_empty() && cut.is_none() {
        return None;
    }
    let part = |s: usize, e: usize| -> Option<Vec<Item>> {
        let mut p = Parser::new();
        p.set_language(grammar).ok()?;
        p.set_included_ranges(&included(text, s, e, &holes)).ok()?;
        let tree = p.parse(text, None)?;
        if tree.root_node().has_error() {
            return None;
        }
        let mut items = Vec::new();
        walk(tab, tree.root_node(), text, lang.separator(), &mut items);
        Some(items)
    };
    let mut items = match cut {
        None => part(0, text.len())?,
        Some(cut) => split_items(cut, text.len(), &part)?,
    };
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
fn split_point(text: &str) -> Option<usize> {
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

/// tree-sitter ranges covering `text[s..e]` except `holes` (sorted, disjoint).
fn included(text: &str, s: usize, e: usize, holes: &[(usize, usize)]) -> Vec<tree_sitter::Range> {
    let b = text.as_bytes();
    // Rows and columns of ascending byte offsets, counted incrementally.
    let (mut pos, mut row, mut line_start) = (0, 0, 0);
    let mut point = |to: usize| {
        for nl in memchr::memchr_iter(b'\n', &b[pos..to]) {
            row += 1;
            line_start = pos + nl + 1;
        }
        pos = to;
        tree_sitter::Point::new(row, to - line_start)
    };
    let mut out = Vec::new();
    let mut from = s;
    let first = holes.partition_point(|h| h.1 <= s);
    for &(hs, he) in &holes[first..] {
        if hs >= e {
            break;
        }
        let (hs, he) = (hs.max(s), he.min(e));
        if hs > from {
            let (sp, ep) = (point(from), point(hs));
            out.push(tree_sitter::Range {
                start_byte: from,
                end_byte: hs,
                start_point: sp,
                end_point: ep,
            });
        }
        from = from.max(he);
    }
    if e > from || out.is_empty() {
        let (sp, ep) = (point(from), point(e));
        out.push(tree_sitter::Range {
            start_byte: from,
            end_byte: e,
            start_point: sp,
            end_point: ep,
        });
    }
    out
}

/// Walk one syntax tree, appending its definitions to `items`.
fn walk<'t>(tab: &Table, root: Node<'t>, text: &str, sep: &str, items: &mut Vec<Item>) {
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

/// Token counts of any byte range of one text, from a single pass over it.
///
/// BPE counts each pre-tokenizer piece on its own, so the tokens of `text[s..e]` are the
/// tokens of the whole pieces in it plus those of its last, cut piece — provided `s` starts a
/// piece (then splitting the range alone yields the same pieces up to the cut). Definitions
/// start at a line start, which almost always starts a piece; otherwise the range is counted
/// directly. This turns counting every nested definition (depth × file size) into one pass:
/// the difference between 3× and 1× ctags' time on a 1 MB file. A unit test checks the result
/// against direct counts.
pub(crate) struct RangeCounter<'a> {
    enc: Encoding,
    text: &'a str,
    /// Start byte of each piece and the tokens before it.
    starts: Vec<(usize, usize)>,
    pub total: usize,
}

impl<'a> RangeCounter<'a> {
    pub fn new(enc: Encoding, text: &'a str) -> RangeCounter<'a> {
        let tok = match enc {
            Encoding::O200kBase => bpe_openai::o200k_base(),
            Encoding::Cl100kBase => bpe_openai::cl100k_base(),
        };
        let base = text.as_ptr() as usize;
        let mut starts = Vec::with_capacity(text.len() / 4);
        let mut total = 0;
        for piece in tok.split(text) {
            starts.push((piece.as_ptr() as usize - base, total));
            total += tok.bpe.count(piece.as_bytes());
        }
        RangeCounter {
            enc,
            text,
            starts,
            total,
        }
    }

    pub fn count(&self, s: usize, e: usize) -> usize {
        let direct = || self.enc.count(self.text.get(s..e).unwrap_or(""));
        if s >= e || e > self.text.len() {
            return 0;
        }
        let Ok(i) = self.starts.binary_search_by_key(&s, |p| p.0) else {
            return direct();
        };
        // The piece holding the range's last byte.
        let j = self.starts.partition_point(|p| p.0 < e) - 1;
        let (tail_start, before_tail) = self.starts[j];
        match self.text.get(tail_start..e) {
            Some(tail) => before_tail - self.starts[i].1 + self.enc.count(tail),
            None => direct(),
        }
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
fn compact(sig: &str) -> String {
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
fn first_error(root: Node) -> Option<Node> {
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

/// The outline as people (and agents) read it: one line per definition, indented by
/// nesting: `START-END signature [tokens]  // doc`; members of trait impls by name on their
/// impl's line.
pub fn render(o: &FileOutline) -> String {
    use std::fmt::Write;
    let mut body = String::new();
    let approx = if o.tokens_estimated { "~" } else { "" };
    for n in &o.notes {
        let _ = writeln!(body, "  note: {n}");
    }
    for h in &o.head {
        let _ = writeln!(body, "  | {h}");
    }
    for (i, it) in o.items.iter().enumerate() {
        if it.brief {
            continue;
        }
        let range = if it.end_line > it.start_line {
            format!("{}-{}", it.start_line, it.end_line)
        } else {
            it.start_line.to_string()
        };
        let _ = write!(
            body,
            "{}{range} {} [{approx}{}]",
            "  ".repeat(it.depth),
            cut(&it.signature, SIG_MAX),
            it.tokens
        );
        if let Some(d) = &it.doc {
            let _ = write!(body, "  // {}", doc_summary(d));
        }
        let members: Vec<String> = o
            .items
            .iter()
            .skip(i + 1)
            .take_while(|m| m.start < it.end)
            .filter(|m| m.brief && m.parent == Some(i))
            .map(|m| format!("{}:{}", m.name, m.start_line))
            .collect();
        if !members.is_empty() {
            let _ = write!(body, ": {}", members.join(" "));
        }
        body.push('\n');
    }
    let tokens = if o.tokens_estimated {
        format!(
            "~{} tokens, estimated above {} KiB; --exact-tokens for exact",
            o.tokens,
            ESTIMATE_ABOVE_BYTES / 1024
        )
    } else {
        format!("{} tokens", o.tokens)
    };
    let what = match o.language {
        Some(l) => format!("{}, {} lines, {tokens}", l.name(), o.lines),
        None => format!("{} lines, {} bytes, {tokens}", o.lines, o.bytes),
    };
    format!("{}  ({what})\n{body}", o.file)
}

/// A doc line as the outline shows it: its first sentence, cut on a word boundary.
fn doc_summary(d: &str) -> String {
    let first = match d.find(". ") {
        Some(i) => &d[..i],
        None => d.trim_end_matches('.'),
    };
    if first.chars().count() <= DOC_MAX {
        return first.to_string();
    }
    let mut end = first
        .char_indices()
        .nth(DOC_MAX)
        .map_or(first.len(), |(i, _)| i);
    if let Some(space) = first[..end].rfind(' ')
        && space > DOC_MAX / 2
    {
        end = space;
    }
    format!("{}…", first[..end].trim_end_matches([',', ';', ':', ' ']))
}

/// The token cost of a rendered outline line set vs the file: the ratio `outline / file`.
pub fn ratio(o: &FileOutline) -> f64 {
    if o.tokens == 0 {
        0.0
    } else {
        o.outline_tokens as f64 / o.tokens as f64
    }
}

/// For `baton mask`: when the masked command only printed (part of) one source file that has an
/// outline (`cat F`, `head -n 200 F`, `tail F`, `sed -n '1,400p' F`), say that an outline is
/// cheaper: `{"command": "baton outline F", "outline_tokens": N, "file_tokens": M}`.
pub fn hint_for_command(argv: &[String]) -> Option<serde_json::Value> {
    let file = single_file_operand(argv)?;
    let path = Path::new(file);
    Lang::from_path(path)?;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() as usize > MAX_PARSE_BYTES {
        return None;
    }
    let src = Source::read(path).ok()?;
    // Exact: the hint's numbers carry no estimate flag, and `mask` has counted the output
    // with the vocabulary anyway.
    let o = outline_with(&src, None, Encoding::O200kBase, true);
    Some(serde_json::json!({
        "command": format!("baton outline {}", shell_word(file)),
        "outline_tokens": o.outline_tokens,
        "file_tokens": o.tokens,
    }))
}

/// Quote a path for the suggested command when it needs it.
fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./+,:@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The one file a `cat`/`head`/`tail`/`sed -n …p` invocation prints, if it prints exactly one.
fn single_file_operand(argv: &[String]) -> Option<&str> {
    let (prog, args) = argv.split_first()?;
    let prog = Path::new(prog).file_name()?.to_str()?;
    let mut operands: Vec<&str> = Vec::new();
    let mut it = args.iter();
    let mut script_given = false;
    while let Some(a) = it.next() {
        match (prog, a.as_str()) {
            (_, "--") => {
                operands.extend(it.by_ref().map(String::as_str));
                break;
            }
            ("head" | "tail", "-n" | "-c" | "--lines" | "--bytes") => {
                it.next();
            }
            ("sed", "-e" | "--expression") => {
                script_given = true;
                it.next();
            }
            ("sed", "-f" | "--file" | "-i" | "--in-place") => return None,
            (_, a) if a.starts_with('-') && a.len() > 1 => {}
            (_, a) => operands.push(a),
        }
    }
    match prog {
        "cat" | "head" | "tail" => {}
        "sed" => {
            // Without -e, the first operand is the script; it must only print (`p`).
            if !script_given {
                if operands.is_empty() {
                    return None;
                }
                let script = operands.remove(0);
                if !script.trim_end().ends_with('p') {
                    return None;
                }
            }
        }
        _ => return None,
    }
    match operands.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
