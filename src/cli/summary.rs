//! `baton summary check|extract`: hold sub-agents to their return format.

use std::process::ExitCode;

use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use serde::Serialize;

use super::Ctx;
use super::tokens::read;
use crate::error::{Error, Result};
use baton_context::summary::{self, Violation};

#[derive(Debug, ClapArgs)]
#[command(
    after_help = "The summary block (the default format) ends an agent's response:
  ## Summary
  **Status:** Complete | Partial | Failed
  **Output file:** {path}
  **Lines written:** {n}
  ### Key Findings        one-line list items
  ### Issues Found        | # | Severity | Description |   (Critical, High, Medium, Low, Info; or \"None\")
  ### Key Numbers         | Metric | Value | Source |
  ### Next Phase Needs    one-line list items
at most 50 lines, and nothing after it.

ADR-003's format (--format adr003): the whole response is a concise summary under 200 words
that names the file holding the full report (the path must exist, relative to the working
directory).

Exit codes: 0 compliant, 1 violations (each printed as FILE:LINE: message), 2 bad input,
4 no summary block found.

Examples:
  baton summary check agent-output.md
  claude -p \"$PROMPT\" | tee out.md | baton summary check -
  baton summary check --format adr003 reply.txt
  baton summary extract transcript.md --json | jq .issues"
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)] // arguments built only for the subcommand that runs
pub enum Cmd {
    /// Validate a response's summary; every violation with its line
    #[command(
        after_help = "Examples:\n  baton summary check out.md\n  baton summary check --format adr003 -"
    )]
    Check {
        /// The agent's response; `-` reads stdin
        #[arg(value_name = "FILE")]
        file: String,
        #[arg(long, value_enum, default_value = "block")]
        format: Format,
        /// Replace invalid UTF-8 with U+FFFD instead of refusing the file
        #[arg(long)]
        lossy: bool,
    },
    /// Print the last summary block of a long response (--json: parsed fields)
    #[command(
        after_help = "Examples:\n  baton summary extract transcript.md\n  baton summary extract - --json"
    )]
    Extract {
        /// The agent's response; `-` reads stdin
        #[arg(value_name = "FILE")]
        file: String,
        /// Replace invalid UTF-8 with U+FFFD instead of refusing the file
        #[arg(long)]
        lossy: bool,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// The `## Summary` block (at most 50 lines)
    Block,
    /// ADR-003: under 200 words plus the path of the full report
    Adr003,
}

#[derive(Serialize)]
struct Report<'a, T: Serialize> {
    file: &'a str,
    format: Format,
    compliant: bool,
    violations: &'a [Violation],
    #[serde(flatten)]
    detail: T,
}

fn no_block(file: &str) -> Error {
    Error::not_found(format!("{file}: no `## Summary` block")).hint(
        "the agent must end its response with a `## Summary` block (see `baton summary --help`)",
    )
}

fn violations_out(w: &mut dyn std::io::Write, file: &str, v: &[Violation]) -> std::io::Result<()> {
    for x in v {
        writeln!(w, "{file}:{}: {}", x.line, x.message)?;
    }
    Ok(())
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    match a.command {
        Cmd::Check {
            file,
            format,
            lossy,
        } => {
            let inp = read(&file, lossy)?;
            let (violations, detail) = match format {
                Format::Block => {
                    let p = summary::parse(&inp.text).ok_or_else(|| no_block(&inp.name))?;
                    (p.violations.clone(), serde_json::to_value(&p.summary))
                }
                Format::Adr003 => {
                    let r = summary::check_adr003(&inp.text, |p| std::path::Path::new(p).exists());
                    (r.violations.clone(), serde_json::to_value(&r))
                }
            };
            let detail = detail.map_err(|e| Error::invalid(e.to_string()))?;
            let ok = violations.is_empty();
            let report = Report {
                file: &inp.name,
                format,
                compliant: ok,
                violations: &violations,
                detail: serde_json::json!({ "summary": detail }),
            };
            ctx.out.emit(&report, |w| {
                if ok {
                    writeln!(w, "ok: {} is compliant", inp.name)
                } else {
                    violations_out(w, &inp.name, &violations)?;
                    writeln!(w, "{} violation(s)", violations.len())
                }
            });
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Cmd::Extract { file, lossy } => {
            let inp = read(&file, lossy)?;
            let p = summary::parse(&inp.text).ok_or_else(|| no_block(&inp.name))?;
            let ok = p.violations.is_empty();
            let report = Report {
                file: &inp.name,
                format: Format::Block,
                compliant: ok,
                violations: &p.violations,
                detail: &p.summary,
            };
            ctx.out.emit(&report, |w| w.write_all(p.text.as_bytes()));
            if !ok && !ctx.out.json {
                // The block goes to stdout for piping; what is wrong with it goes to stderr.
                let mut err = std::io::stderr().lock();
                let _ = violations_out(&mut err, &inp.name, &p.violations);
            }
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}
