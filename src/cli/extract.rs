//! `baton extract`: print only the spec section (or ADR decision) a task needs.

use std::process::ExitCode;

use clap::Args as ClapArgs;
use serde::Serialize;

use super::Ctx;
use super::tokens::read;
use crate::error::{Error, Result};
use baton_context::extract::{self, Pick};
use baton_context::tokens::Encoding;
use baton_core::markdown::{Section, sections};

#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Sections are CommonMark's: ATX and setext headings (not `#` lines in code fences);
YAML front matter is skipped. A section runs to the next heading of the same or higher level,
so it includes its subsections.

Titles match case-insensitively, ignoring a leading number (\"3.2 \") and a trailing colon:
exact first, then a unique prefix, then a unique substring. \"Parent > Child\" picks a child of
a given section (a heading titled \"Parent > Child\" itself comes first). An ambiguous title
lists the candidates; a missing one lists the headings.

Task types route to sections (first one the document has; [extract.routes] in baton.toml):
  create_model -> Data Model | Data Models | Schema
  add_endpoint -> API Contracts | API Contract | API
  create_service -> Components | Services | Architecture
  other -> Overview | Summary | @lead (the text before the first subsection)

ADR decisions (`traces_to`): --decision ID finds, in order, a heading naming it (\"Decision 2\",
\"D2\", \"ADR-0002\", or a numbered heading \"2. Use Postgres\"); else, when ID is the ADR's own
number (from its title \"ADR 001: …\" / \"4. …\" or file name \"0004-….md\"), its Decision
section (\"Decision\", \"Decision Outcome\"); else ID is taken as a heading title.

--max-tokens N bounds the whole output, markers included: pieces are taken in order, each
within what the earlier ones left; a cut piece ends with
  [… truncated by baton at N tokens; full section: FILE lines A-B]
(a piece that finds no room left is reduced to its marker, which may then exceed N).

Examples:
  baton extract docs/TECHNICAL_DESIGN.md --section \"Data Model\"
  baton extract design.md --task-type add_endpoint --max-tokens 1000
  baton extract design.md --task-type create_model --adr docs/adr/0004-db.md --decision ADR-0004
  baton extract design.md --section \"Components > Cache\" --json
  baton extract design.md --outline
  baton extract src/store/mod.rs --symbol Store::mutate     (a definition; see `baton outline`)"
)]
pub struct Args {
    /// The spec document (optional with --adr)
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
    /// Section title to extract (repeatable)
    #[arg(long, short = 's', value_name = "TITLE")]
    pub section: Vec<String>,
    /// Extract the section routed for this task type
    #[arg(long, value_name = "TYPE")]
    pub task_type: Option<String>,
    /// An ADR file to extract decisions from
    #[arg(long, value_name = "FILE", requires = "decision")]
    pub adr: Option<String>,
    /// Decision id in --adr (repeatable): D2, "Decision 2", ADR-0013, 2
    #[arg(long, value_name = "ID", requires = "adr")]
    pub decision: Vec<String>,
    /// Cut the output at this many tokens (with a marker saying where the rest is)
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<usize>,
    /// Print the heading tree with line ranges and token counts
    #[arg(long, conflicts_with_all = ["section", "task_type", "decision", "max_tokens"])]
    pub outline: bool,
    /// Definition in a source file (repeatable): NAME, Type::method, Class.method
    #[arg(long, value_name = "NAME", conflicts_with_all = ["section", "task_type", "decision", "adr", "outline"])]
    pub symbol: Vec<String>,
    /// Encoding for token counts (o200k_base or cl100k_base)
    #[arg(long, default_value = "o200k_base", value_name = "NAME")]
    pub encoding: String,
    /// Replace invalid UTF-8 with U+FFFD instead of refusing the file
    #[arg(long)]
    pub lossy: bool,
}

#[derive(Serialize)]
struct Piece {
    file: String,
    title: String,
    level: u8,
    start_line: usize,
    end_line: usize,
    lead_only: bool,
    tokens: usize,
    truncated: bool,
    text: String,
}

#[derive(Serialize)]
struct Outline {
    level: u8,
    title: String,
    start_line: usize,
    end_line: usize,
    tokens: usize,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let enc = Encoding::parse(&a.encoding)?;
    if !a.symbol.is_empty() {
        return super::outline::extract_symbols(
            ctx,
            a.file.as_deref(),
            &a.symbol,
            a.max_tokens,
            enc,
        );
    }
    if a.outline {
        let file = a.file.as_deref().or(a.adr.as_deref()).ok_or_else(|| {
            Error::invalid("--outline needs a FILE").hint("baton extract spec.md --outline")
        })?;
        return outline(ctx, file, enc, a.lossy);
    }
    if a.section.is_empty() && a.task_type.is_none() && a.decision.is_empty() {
        return Err(Error::invalid("nothing to extract").hint(
            "pass --section TITLE, --task-type TYPE, --adr FILE --decision ID, --symbol NAME or --outline",
        ));
    }
    // Each document is read and parsed once, whatever is asked of it.
    let mut picks: Vec<(String, String, Pick)> = Vec::new();
    if !a.section.is_empty() || a.task_type.is_some() {
        let file = a.file.as_deref().ok_or_else(|| {
            Error::invalid("--section and --task-type need the spec FILE")
                .hint("baton extract docs/TECHNICAL_DESIGN.md --section \"Data Model\"")
        })?;
        let inp = read(file, a.lossy)?;
        let all = sections(&inp.text);
        for title in &a.section {
            let s = extract::find(&all, title).map_err(|e| Error::in_file(e, &inp.name))?;
            picks.push((inp.name.clone(), String::new(), whole(s)));
        }
        if let Some(t) = &a.task_type {
            let route = ctx.project.config.extract.route(t)?;
            let p = extract::route(&all, &route).map_err(|e| Error::in_file(e, &inp.name))?;
            picks.push((inp.name.clone(), String::new(), p));
        }
        for p in &mut picks {
            p.1 = inp.text[p.2.section.start..p.2.section.end].to_string();
        }
    } else if a.file.is_some() {
        return Err(Error::invalid("FILE given but nothing to extract from it")
            .hint("add --section TITLE or --task-type TYPE"));
    }
    if let Some(adr) = &a.adr {
        let inp = read(adr, a.lossy)?;
        let all = sections(&inp.text);
        for id in &a.decision {
            let p = extract::find_decision(&all, &inp.name, id)
                .map_err(|e| Error::in_file(e, &inp.name))?;
            let text = inp.text[p.section.start..p.section.end].to_string();
            picks.push((inp.name.clone(), text, p));
        }
    }
    let mut remaining = a.max_tokens;
    let mut pieces = Vec::new();
    for (file, text, p) in picks {
        let s = &p.section;
        let (text, truncated) = match remaining {
            Some(max) => {
                let (t, cut) = extract::limit(&text, enc, max, &file, (s.start_line, s.end_line));
                remaining = Some(max.saturating_sub(enc.count(&t)));
                (t, cut)
            }
            None => (text, false),
        };
        // Counting is only paid for when someone asked for numbers.
        let tokens = if ctx.out.json { enc.count(&text) } else { 0 };
        pieces.push(Piece {
            file,
            title: s.title.clone(),
            level: s.level,
            start_line: s.start_line,
            end_line: s.end_line,
            lead_only: p.lead_only,
            tokens,
            truncated,
            text,
        });
    }
    ctx.out.emit(&pieces, |w| {
        for (i, p) in pieces.iter().enumerate() {
            if i > 0 && !p.text.is_empty() {
                writeln!(w)?;
            }
            w.write_all(super::style::for_stdout(&p.text).as_bytes())?;
            if !p.text.ends_with('\n') && !p.text.is_empty() {
                writeln!(w)?;
            }
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}

fn whole(s: &Section) -> Pick {
    Pick {
        section: s.clone(),
        lead_only: false,
    }
}

/// Errors about sections name the document they were looked for in.
fn outline(ctx: &Ctx, file: &str, enc: Encoding, lossy: bool) -> Result<ExitCode> {
    let inp = read(file, lossy)?;
    let all = sections(&inp.text);
    let rows: Vec<Outline> = all
        .iter()
        .map(|s| Outline {
            level: s.level,
            title: s.title.clone(),
            start_line: s.start_line,
            end_line: s.end_line,
            tokens: enc.count(s.text(&inp.text)),
        })
        .collect();
    ctx.out.emit(&rows, |w| {
        if rows.is_empty() {
            writeln!(w, "{}: no headings", inp.name)?;
        }
        for (s, r) in all.iter().zip(&rows) {
            writeln!(w, "{}", s.outline_line(r.tokens))?;
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}
