//! `baton outline`: the skeleton of source files (definitions, signatures, line ranges, token
//! counts), or a repository map of a directory; and `baton extract FILE --symbol NAME`.

use std::path::Path;
use std::process::ExitCode;

use clap::Args as ClapArgs;
use serde::Serialize;

use super::Ctx;
use crate::error::{Error, Result};
use baton_context::extract;
use baton_context::outline::{self, FileOutline, Lang, Source};
use baton_context::tokens::Encoding;

#[derive(Debug, ClapArgs)]
#[command(after_help = "\
Each definition is one line, indented by nesting:
  START-END signature [tokens]  // first line of its doc comment
Signatures stop at the body; members of a trait impl (`impl Trait for Type`) are listed by name
and line on the impl's line. Rust, Python, TypeScript/TSX, JavaScript and Go are parsed with
tree-sitter; Markdown gives its heading tree; other files get a note, their size and first lines.
A file with syntax errors gets a partial outline and a note; invalid UTF-8 is replaced (noted).

Token counts are estimates, shown as `~N` (JSON: \"tokens_estimated\": true): loading the
encoding's vocabulary costs more than outlining a file. The estimate follows the encoding's
pre-tokenizer (words, camelCase parts, digit groups, punctuation and whitespace runs; long runs
by length): on real code within ~7 % of o200k_base per file. --exact-tokens counts exactly.

A directory is outlined file by file (one thread per core) over what git tracks under it
(`git ls-files`: ignored files are left out), with each file's token total: a repository map.

Then read only what you need: `baton extract FILE --symbol NAME` (also Type::method, Class.method).

Examples:
  baton outline src/main.rs
  baton outline src/ --json
  baton outline app.py lib/util.ts
  baton extract src/store/mod.rs --symbol Store::mutate")]
pub struct Args {
    /// Files or directories to outline
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<String>,
    /// Encoding for token counts (o200k_base or cl100k_base)
    #[arg(long, default_value = "o200k_base", value_name = "NAME")]
    pub encoding: String,
    /// Count tokens exactly with the encoding's vocabulary (slower: see below)
    #[arg(long)]
    pub exact_tokens: bool,
}

#[derive(Serialize)]
struct Report {
    files: Vec<FileOutline>,
    /// Tokens of all files together, and of all their outlines.
    tokens: usize,
    outline_tokens: usize,
    /// Some file's counts are estimates, so the totals are too.
    tokens_estimated: bool,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let enc = Encoding::parse(&a.encoding)?;
    let mut files = Vec::new();
    for p in &a.paths {
        let path = Path::new(p);
        if path.is_dir() {
            let tracked = outline::tracked_files(path)?;
            files.extend(
                outline::outline_files(&tracked, enc, a.exact_tokens, true)
                    .into_iter()
                    .flatten(),
            );
        } else {
            let src = Source::read(path)?;
            files.push(outline::outline_with(&src, None, enc, a.exact_tokens));
        }
    }
    let report = Report {
        tokens: files.iter().map(|f| f.tokens).sum(),
        outline_tokens: files.iter().map(|f| f.outline_tokens).sum(),
        tokens_estimated: files.iter().any(|f| f.tokens_estimated),
        files,
    };
    ctx.out.emit(&report, |w| {
        for f in &report.files {
            w.write_all(super::style::for_stdout(&outline::render(f)).as_bytes())?;
        }
        if report.files.len() > 1 {
            let approx = if report.tokens_estimated { "~" } else { "" };
            writeln!(
                w,
                "total: {} files, {approx}{} tokens; outline {approx}{} tokens",
                report.files.len(),
                report.tokens,
                report.outline_tokens
            )?;
        } else if report.files.is_empty() {
            writeln!(w, "no files tracked by git under {}", a.paths.join(", "))?;
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct Piece {
    file: String,
    symbol: String,
    kind: &'static str,
    name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    scope: String,
    start_line: usize,
    end_line: usize,
    tokens: usize,
    truncated: bool,
    text: String,
}

/// `baton extract FILE --symbol NAME…`: each definition exactly, with its docs and
/// attributes or decorators, in the order asked.
pub fn extract_symbols(
    ctx: &Ctx,
    file: Option<&str>,
    symbols: &[String],
    max_tokens: Option<usize>,
    enc: Encoding,
) -> Result<ExitCode> {
    let file = file.ok_or_else(|| {
        Error::invalid("--symbol needs the source FILE")
            .hint("baton extract src/lib.rs --symbol parse")
    })?;
    let src = Source::read(Path::new(file))?;
    let lang = Lang::from_path(Path::new(file));
    match lang {
        Some(Lang::Markdown) => {
            return Err(Error::invalid(format!(
                "{file} is Markdown: it has sections, not symbols"
            ))
            .hint(format!("baton extract {file} --section TITLE")));
        }
        None => {
            return Err(Error::invalid(format!(
                "{file}: no outline for this language, so no symbols"
            ))
            .hint("--symbol works on Rust, Python, TypeScript/TSX, JavaScript and Go files"));
        }
        Some(_) => {}
    }
    let o = outline::outline(&src, lang, enc);
    if !ctx.out.json {
        for n in &o.notes {
            eprintln!("baton: {file}: {n}");
        }
    }
    let mut remaining = max_tokens;
    let mut pieces = Vec::new();
    for s in symbols {
        let i = outline::find_symbol(&o, s)?;
        let Some(it) = o.items.get(i) else { continue };
        let mut text = src.text.get(it.start..it.end).unwrap_or("").to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let (text, truncated) = match remaining {
            Some(max) => {
                let (t, cut) =
                    extract::limit(&text, enc, max, file, (it.full_start_line, it.end_line));
                remaining = Some(max.saturating_sub(enc.count(&t)));
                (t, cut)
            }
            None => (text, false),
        };
        pieces.push(Piece {
            file: file.to_string(),
            symbol: s.clone(),
            kind: it.kind,
            name: it.name.clone(),
            scope: it.scope.clone(),
            start_line: it.full_start_line,
            end_line: it.end_line,
            tokens: enc.count(&text),
            truncated,
            text,
        });
    }
    ctx.out.emit(&pieces, |w| {
        for (i, p) in pieces.iter().enumerate() {
            if i > 0 {
                writeln!(w)?;
            }
            w.write_all(p.text.as_bytes())?;
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}
