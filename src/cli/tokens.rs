//! `baton tokens`: exact token counts per file and in total.

use std::process::ExitCode;

use clap::Args as ClapArgs;
use serde::Serialize;

use super::Ctx;
use crate::error::Result;
use baton_context::input::{self, Utf8};
use baton_context::tokens::{Counter, Encoding};

#[derive(Debug, ClapArgs)]
#[command(after_help = "Examples:
  baton tokens spec.md src/*.rs          per file and total, o200k_base
  git diff | baton tokens -              count stdin
  baton tokens --encoding cl100k_base prompt.txt
  baton tokens --model claude-sonnet-4-5 --json context.md

Counts are exact for OpenAI encodings (tiktoken's encode_ordinary: no special tokens).
Claude's tokenizer is not public: --model claude-* counts with o200k_base and multiplies by
budget.claude_factor from baton.toml (default 1.15); the output marks such counts as estimates.")]
pub struct Args {
    /// Files to count; `-` (or nothing) reads stdin
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// o200k_base (GPT-4o and later) or cl100k_base (GPT-4, GPT-3.5)
    #[arg(long, default_value = "o200k_base", value_name = "NAME")]
    pub encoding: String,
    /// Count for this model (claude-* is an estimate, see below)
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Replace invalid UTF-8 with U+FFFD instead of refusing the file
    #[arg(long)]
    pub lossy: bool,
}

#[derive(Serialize)]
struct FileCount {
    file: String,
    tokens: usize,
    bytes: usize,
}

#[derive(Serialize)]
struct Report<'a> {
    encoding: &'static str,
    model: Option<&'a str>,
    estimate: bool,
    factor: f64,
    files: Vec<FileCount>,
    total: usize,
}

/// The counter the flags and baton.toml ask for.
pub fn counter(ctx: &Ctx, encoding: &str, model: Option<&str>) -> Result<Counter> {
    let enc = Encoding::parse(encoding)?;
    match model {
        Some(m) => Ok(Counter::for_model(
            m,
            enc,
            ctx.project.config.budget.claude_factor,
        )?),
        None => Ok(Counter::exact(enc)),
    }
}

/// Read one input (`-` = stdin).
pub fn read(name: &str, lossy: bool) -> Result<input::Input> {
    Ok(input::read(
        name,
        if lossy { Utf8::Lossy } else { Utf8::Strict },
    )?)
}

/// The inputs named on the command line; none means stdin (refused when it is a terminal,
/// where waiting for EOF would look like a hang).
pub fn names(files: &[String]) -> Result<Vec<String>> {
    use std::io::IsTerminal;
    if !files.is_empty() {
        return Ok(files.to_vec());
    }
    if std::io::stdin().is_terminal() {
        return Err(
            crate::Error::invalid("no input: name a FILE or pipe text in")
                .hint("e.g. `baton tokens spec.md` or `git diff | baton tokens -`"),
        );
    }
    Ok(vec!["-".to_string()])
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let counter = counter(ctx, &a.encoding, a.model.as_deref())?;
    let mut files = Vec::new();
    // Read and count one file at a time so only one text is in memory.
    for name in names(&a.files)? {
        let inp = read(&name, a.lossy)?;
        files.push(FileCount {
            tokens: counter.count(&inp.text),
            bytes: inp.text.len(),
            file: inp.name,
        });
    }
    let total = files.iter().map(|f| f.tokens).sum();
    let report = Report {
        encoding: counter.encoding.name(),
        model: a.model.as_deref(),
        estimate: counter.estimate,
        factor: counter.factor,
        files,
        total,
    };
    ctx.out.emit(&report, |w| {
        let mark = if report.estimate { "~" } else { "" };
        for f in &report.files {
            writeln!(w, "{:>11}  {}", format!("{mark}{}", f.tokens), f.file)?;
        }
        if report.files.len() > 1 {
            writeln!(w, "{:>11}  total", format!("{mark}{}", report.total))?;
        }
        if report.estimate {
            writeln!(
                w,
                "estimate: {} × {} (Claude's tokenizer is not public; set budget.claude_factor in baton.toml)",
                report.encoding, report.factor
            )?;
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}
