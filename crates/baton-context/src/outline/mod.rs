//! Structure-first reads (the "read the outline, then only what you need" strategy agents are
//! given in the run prompts' `read_strategy`): the skeleton of a source file —
//! every definition with its signature, line range and token count — so an agent reads the
//! outline first and then only the definition it needs (`baton extract FILE --symbol NAME`).
//!
//! Source files are parsed with tree-sitter grammars (real parsers: nesting, decorators and
//! doc comments come from the syntax tree, not from regexes). Each language has a file with
//! its node-kind table (`rust.rs`, `python.rs`, `js.rs` for JavaScript/TypeScript/TSX, `go.rs`)
//! on the interface of `def.rs`; `parse.rs` parses (whole, or cheaper when that can be
//! trusted), `walk.rs` turns the tree into items with docs and attributes, `count.rs` counts
//! their tokens (estimated by [`crate::tokens::estimate`] unless asked for exact counts) and `render.rs` prints them. Markdown files get
//! the heading tree of [`baton_core::markdown`]. Anything else gets a note plus its head.

use std::path::Path;

use serde::Serialize;

use super::tokens::Encoding;
use crate::error::{Error, Result};
use crate::tokens::estimate;

mod count;
mod def;
mod first_read;
mod fit;
mod go;
mod js;
mod parse;
mod python;
mod render;
mod rust;
mod symbol;
mod walk;

use count::RangeCounter;
use def::{Def, DocStyle, Table, Up};
pub use first_read::{ANSWER_MAX_CHARS, FirstRead, first_read, whole_file_read};
pub use fit::{Brevity, render_within};
use parse::code_items;
pub use render::{hint_for_command, ratio, render};
pub use symbol::{find_symbol, nearest_names};
use walk::field_text;

/// Files larger than this are not parsed (a note says so); parsing is linear but the output
/// of a generated 100 MB file would help nobody.
pub const MAX_PARSE_BYTES: usize = 64 * 1024 * 1024;
/// Files at least this large have their tokens estimated on a thread of their own, beside
/// the parse.
const PARALLEL_ESTIMATE_BYTES: usize = 256 * 1024;
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
    /// All token counts of this file are estimates (the default; `--exact-tokens` counts).
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
        let bytes = crate::input::read_bytes(
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

/// Outline `src` as language `lang` (None: from the file name), with estimated token counts.
pub fn outline(src: &Source, lang: Option<Lang>, enc: Encoding) -> FileOutline {
    outline_with(src, lang, enc, false)
}

/// [`outline`]; `exact_tokens`: count with the encoding's vocabulary instead of estimating.
/// Estimates are the default: loading a vocabulary costs more than outlining a file
/// (docs/ARCHITECTURE.md, "Estimated counts").
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
    let (counter, parsed) = if exact_tokens {
        // Exact counting and parsing are independent passes over the text: run them side by
        // side (the walk records byte ranges; their counts are filled in after the join).
        std::thread::scope(|s| {
            let parse = code.map(|l| s.spawn(move || code_items(l, text)));
            let counter = Counts::Exact(RangeCounter::new(enc, text));
            let parsed = parse.map(|h| {
                h.join()
                    .unwrap_or_else(|_| (Vec::new(), vec!["the parser failed: no outline".into()]))
            });
            (counter, parsed)
        })
    } else if code.is_some() && text.len() >= PARALLEL_ESTIMATE_BYTES && crate::cores() > 1 {
        // The estimate is one cheap pass (~3 ms a MB), but serial: it overlaps the scan for
        // skippable bodies that comes before the parse.
        std::thread::scope(|s| {
            let est = s.spawn(|| estimate::Estimator::new(text));
            let parsed = code.map(|l| code_items(l, text));
            let est = est
                .join()
                .unwrap_or_else(|_| estimate::Estimator::new(text));
            (Counts::Estimated(est), parsed)
        })
    } else {
        let parsed = code.map(|l| code_items(l, text));
        (Counts::Estimated(estimate::Estimator::new(text)), parsed)
    };
    let estimated = !exact_tokens;
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

/// Files git tracks under `dir` (run directly, no shell), as paths joined to `dir`.
pub fn tracked_files(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["ls-files", "-z", "--cached", "--", "."])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::not_found("git is not installed")
                .hint("install git, or outline the files one by one: baton outline FILE…"),
            _ => Error::io("git", e),
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(Error::invalid(format!(
            "{}: cannot list the files git tracks: {}",
            dir.display(),
            err.trim()
        ))
        .hint(
            "a directory is mapped through `git ls-files`; outside a repository, name the files",
        ));
    }
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| dir.join(String::from_utf8_lossy(p).as_ref()))
        .filter(|p| p.is_file())
        .collect())
}

/// Outline many files on a small pool of threads (one per core), in the order given; a file
/// that cannot be read is None (tracked but deleted from the work tree, or a submodule).
/// `map`: drop the head and notes of files with no outline (a repository map lists those by
/// size only).
pub fn outline_files(
    paths: &[std::path::PathBuf],
    enc: Encoding,
    exact_tokens: bool,
    map: bool,
) -> Vec<Option<FileOutline>> {
    let one = |p: &std::path::PathBuf| {
        let src = Source::read(p).ok()?;
        let mut o = outline_with(&src, None, enc, exact_tokens);
        if map && o.language.is_none() {
            o.head.clear();
            o.notes.clear();
            o.outline_tokens = render_tokens(&o, enc);
        }
        Some(o)
    };
    let threads = crate::cores().min(paths.len());
    if threads <= 1 {
        return paths.iter().map(one).collect();
    }
    // Files are handed out one at a time, so a big file does not hold up a whole share.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<Option<FileOutline>> = Vec::new();
    out.resize_with(paths.len(), || None);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(p) = paths.get(i) else { break };
                        done.push((i, one(p)));
                    }
                    done
                })
            })
            .collect();
        for w in workers {
            // A worker that panicked leaves its files out, like unreadable ones.
            for (i, o) in w.join().unwrap_or_default() {
                out[i] = o;
            }
        }
    });
    out
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
    let all = baton_core::markdown::sections(text);
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

#[cfg(test)]
mod tests;
