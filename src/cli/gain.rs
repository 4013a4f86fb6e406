//! `baton gain`: what masking saved, from the project's mask log (`.baton/masks.jsonl`):
//! every output masked by a hook, by `baton mask` (an agent's or a person's) or by the MCP
//! mask tool. Totals, then by command, kind, agent and source, a chart by day, and the latest
//! records with `--history N`.

use std::io::Write;
use std::process::ExitCode;

use super::Ctx;
use super::style;
use crate::error::{Error, Result};
use baton_context::mask::gain::{self, Filter, Gain, Group};
use baton_context::mask::record::{self, MaskRecord};

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  baton gain                       totals, by command / kind / agent / source, by day
  baton gain --since 7d            the last seven days (also 24h, 2w, or a date: 2026-11-20)
  baton gain --history 20          and the 20 latest masked outputs
  baton gain --run 20261127T101500-3fa2c1
  baton gain --json                {\"saved_tokens\": N, \"masked\": [...], \"by_command\": [...], ...}

Saved = tokens of the full output - tokens of what the agent read instead (o200k_base; an
output far over the threshold is estimated, not counted, and marked so; what the agent read
instead, a summary, is always estimated). Every mask is
logged: hooks (claude, codex, gemini), `baton mask`, and the MCP mask tool. The log rotates
at 8 MiB, keeping 3 older files (masks.jsonl.1 … .3).")]
pub struct Args {
    /// Only outputs masked since then: an age (30m, 24h, 7d, 2w) or a date (2026-11-20)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Also list the N latest masked outputs (with --json: `masked` holds only those)
    #[arg(long, value_name = "N")]
    pub history: Option<usize>,
    /// Only outputs masked in this run
    #[arg(long, value_name = "RUN_ID", add = super::complete::run_ids())]
    pub run: Option<String>,
    /// Only outputs masked in this agent session (the CLI's own session id)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only outputs masked for this agent (claude, codex, gemini, sim)
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let filter = Filter {
        since: a.since.as_deref().map(since).transpose()?,
        run: a.run.clone(),
        session: a.session.clone(),
        agent: a.agent.clone(),
    };
    let read = record::read_all(&ctx.project.local_dir());
    let g = gain::gain(&read.records, &filter);
    let kept: Vec<&MaskRecord> = read.records.iter().filter(|r| filter.keeps(r)).collect();
    let latest = match a.history {
        Some(n) => &kept[kept.len().saturating_sub(n)..],
        None => &kept[..],
    };
    let mut v = serde_json::to_value(&g).map_err(|e| Error::internal(e.to_string()))?;
    v["since"] = serde_json::json!(filter.since);
    v["unreadable_lines"] = serde_json::json!(read.unreadable);
    v["unreadable_files"] = serde_json::json!(read.unreadable_files);
    v["masked"] = serde_json::json!(latest);
    ctx.out.emit(&v, |w| {
        render(w, ctx, &g, &filter, a.history.map(|_| latest), &read)
    });
    Ok(ExitCode::SUCCESS)
}

/// `--since`: an age before now, or a date or timestamp, as the log's sortable text.
fn since(s: &str) -> Result<String> {
    let t = s.trim();
    let age = t.starts_with(|c: char| c.is_ascii_digit())
        && t.ends_with(|c: char| c.is_ascii_alphabetic());
    if age && let Ok(age) = baton_context::session::parse_duration(t) {
        let span = jiff::SignedDuration::try_from(age)
            .map_err(|e| Error::invalid(format!("--since {s}: {e}")))?;
        let at = jiff::Timestamp::now()
            .checked_sub(span)
            .map_err(|e| Error::invalid(format!("--since {s}: {e}")))?;
        return Ok(baton_core::ids::stamp(at));
    }
    if let Ok(d) = t.parse::<jiff::civil::Date>() {
        return Ok(d.to_string());
    }
    if let Ok(ts) = t.parse::<jiff::Timestamp>() {
        return Ok(baton_core::ids::stamp(ts));
    }
    Err(
        Error::invalid(format!("--since {s:?} is neither an age nor a date"))
            .hint("an age such as 30m, 24h, 7d, 2w, or a date such as 2026-11-20"),
    )
}

/// Thousands with commas: 1,234,567.
fn n(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn render(
    w: &mut dyn Write,
    ctx: &Ctx,
    g: &Gain,
    filter: &Filter,
    latest: Option<&[&MaskRecord]>,
    read: &record::Read,
) -> std::io::Result<()> {
    let t = &g.totals;
    if t.count == 0 {
        let scope = if filter.since.is_some() || filter.run.is_some() || filter.agent.is_some() {
            " that match"
        } else {
            ""
        };
        writeln!(w, "no masked outputs{scope} yet")?;
        writeln!(
            w,
            "  outputs over the threshold are masked by `baton mask -- CMD`, the hooks `baton init` \
             wires, and the MCP mask tool"
        )?;
        return note_unreadable(w, read);
    }
    let saved = style::paint(
        style::To::Stdout,
        style::GOOD,
        &format!("{} tokens saved", n(t.saved_tokens)),
    );
    writeln!(
        w,
        "{saved} ({:.1} %): {} outputs masked, {} tokens of output, {} read instead",
        t.saved_percent(),
        n(t.count),
        n(t.tokens),
        n(t.shown_tokens)
    )?;
    let span = match (&g.first, &g.last) {
        (Some(f), Some(l)) => format!("{} … {}", &f[..f.len().min(16)], &l[..l.len().min(16)]),
        _ => String::new(),
    };
    let log = record::log_path(&ctx.project.local_dir());
    writeln!(
        w,
        "  {span} · from {}",
        super::shown(&ctx.project.dir, &log)
    )?;
    for (title, rows) in [
        ("command", &g.by_command),
        ("kind", &g.by_kind),
        ("agent", &g.by_agent),
        ("source", &g.by_source),
    ] {
        table(w, title, rows, 10)?;
    }
    writeln!(w, "\nby day")?;
    let max = g
        .by_day
        .iter()
        .map(|d| d.totals.saved_tokens)
        .max()
        .unwrap_or(0);
    for d in g.by_day.iter().rev().take(14).rev() {
        writeln!(
            w,
            "  {}  {:>12}  {}",
            d.key,
            n(d.totals.saved_tokens),
            gain::bar(d.totals.saved_tokens, max, 30)
        )?;
    }
    if let Some(latest) = latest {
        writeln!(w, "\nlatest {}", latest.len())?;
        for r in latest {
            writeln!(
                w,
                "  {}  {:<13} {:<7} {:<20} {:>10} → {:>6}  {}",
                &r.ts[..r.ts.len().min(19)],
                r.source.name(),
                r.agent.as_deref().unwrap_or("-"),
                clip(&r.command, 20),
                n(r.tokens),
                n(r.masked_tokens),
                r.scratch
            )?;
        }
    }
    note_unreadable(w, read)
}

fn table(w: &mut dyn Write, title: &str, rows: &[Group], limit: usize) -> std::io::Result<()> {
    writeln!(
        w,
        "\nby {title:<20} {:>7} {:>12} {:>9} {:>12}",
        "masked", "tokens", "shown", "saved"
    )?;
    for r in rows.iter().take(limit) {
        writeln!(
            w,
            "  {:<21} {:>7} {:>12} {:>9} {:>12}",
            clip(&r.key, 21),
            n(r.totals.count),
            n(r.totals.tokens),
            n(r.totals.shown_tokens),
            n(r.totals.saved_tokens)
        )?;
    }
    if rows.len() > limit {
        writeln!(w, "  … {} more (--json has all)", rows.len() - limit)?;
    }
    Ok(())
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(max - 1).collect();
        c.push('…');
        c
    }
}

fn note_unreadable(w: &mut dyn Write, read: &record::Read) -> std::io::Result<()> {
    let unreadable = read.unreadable;
    for f in &read.unreadable_files {
        writeln!(
            w,
            "\n{f}: this mask log could not be read and its records are left out"
        )?;
    }
    if unreadable > 0 {
        writeln!(
            w,
            "\n{unreadable} lines of the mask log could not be read (a torn write or a newer \
             format) and are left out"
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_get_thousands_separators() {
        assert_eq!(super::n(0), "0");
        assert_eq!(super::n(999), "999");
        assert_eq!(super::n(1000), "1,000");
        assert_eq!(super::n(1234567), "1,234,567");
    }

    #[test]
    fn since_takes_ages_and_dates_and_refuses_the_rest() {
        assert_eq!(super::since("2026-11-20").unwrap(), "2026-11-20");
        let week = super::since("7d").unwrap();
        assert_eq!(week.len(), "2026-11-20T10:00:00.000Z".len());
        assert!(week < baton_core::ids::now());
        assert!(super::since("yesterday").is_err());
        assert!(super::since("7 parsecs").is_err());
    }
}
