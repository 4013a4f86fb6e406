//! `baton budget`: is this context within its window, and is a refresh due?

use std::process::ExitCode;

use clap::Args as ClapArgs;
use serde::Serialize;

use super::Ctx;
use super::tokens::{counter, names, read};
use crate::error::{Error, Result};
use baton_context::budget::{self, Activity, Check};

#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Zones (fractions of the window; set in baton.toml [budget]):
  safe     below 40%            (80K of 200K)
  warning  40% to 50% inclusive (80-100K; 50% is the target)
  danger   above 50%            (>100K)
Refresh triggers (any one means rotate: spawn a fresh agent from the state file):
  usage above 70% of the window, --tasks-completed >= 5, --feedback-bytes > 10240

--phase NAME checks against that phase's budget (discovery 20K, planning 10K, conductor 5K,
implementer 15K, reviewer 10K; [budget.phases] in baton.toml overrides and adds): the phase
budget is the target, so the zones scale to a window of budget / target.

Exit codes: 0 ok (safe zone, no trigger), 10 warn (warning or danger zone), 11 rotate (a refresh
trigger fired), 2 bad input, 4 file or phase not found.

Examples:
  baton budget context.md notes.md              files against 200K
  cat prompt.md | baton budget --phase implementer
  baton budget --used 120000 --tasks-completed 3 --window 1M
  baton budget --model claude-opus-4 state.json --json || echo \"exit $?\""
)]
pub struct Args {
    /// Files that make up the context; `-` reads stdin (default when nothing else is given)
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// Context window in tokens (accepts 200K, 1M); default budget.window (200K)
    #[arg(long, value_name = "TOKENS", value_parser = parse_tokens, conflicts_with = "phase")]
    pub window: Option<usize>,
    /// Check against this phase's budget instead of the window
    #[arg(long, value_name = "NAME")]
    pub phase: Option<String>,
    /// Tokens already in the context besides the files (e.g. the conversation so far)
    #[arg(long, value_name = "TOKENS", value_parser = parse_tokens, default_value = "0")]
    pub used: usize,
    /// Tasks completed in this context (refresh trigger)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub tasks_completed: u64,
    /// Bytes of accumulated feedback in this context (refresh trigger)
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub feedback_bytes: u64,
    /// o200k_base or cl100k_base
    #[arg(long, default_value = "o200k_base", value_name = "NAME")]
    pub encoding: String,
    /// Count for this model (claude-* is an estimate)
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Replace invalid UTF-8 with U+FFFD instead of refusing the file
    #[arg(long)]
    pub lossy: bool,
}

/// `200000`, `200K`, `1.5M` (K = 1000).
pub fn parse_tokens(s: &str) -> std::result::Result<usize, String> {
    let t = s.trim().to_ascii_lowercase().replace(['_', ','], "");
    let (num, mult) = match t.strip_suffix('k') {
        Some(n) => (n.to_string(), 1e3),
        None => match t.strip_suffix('m') {
            Some(n) => (n.to_string(), 1e6),
            None => (t.clone(), 1.0),
        },
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v * mult < 1e15 => Ok((v * mult).round() as usize),
        _ => Err(format!(
            "{s:?} is not a token count (e.g. 200000, 200K, 1M)"
        )),
    }
}

#[derive(Serialize)]
struct FileCount {
    file: String,
    tokens: usize,
}

#[derive(Serialize)]
struct Report<'a> {
    files: Vec<FileCount>,
    used: usize,
    phase: Option<&'a str>,
    encoding: &'static str,
    estimate: bool,
    #[serde(flatten)]
    check: Check,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let cfg = &ctx.project.config.budget;
    cfg.validate()?;
    let counter = counter(ctx, &a.encoding, a.model.as_deref())?;
    let window = match (&a.phase, a.window) {
        (Some(p), _) => budget::phase_window(cfg, cfg.phase(p)?),
        (None, Some(0)) => return Err(Error::invalid("--window must be positive")),
        (None, Some(w)) => w,
        (None, None) => cfg.window,
    };
    // Nothing named and a count given: the caller already knows its size, do not wait on stdin.
    let files = if a.files.is_empty() && a.used > 0 {
        Vec::new()
    } else {
        names(&a.files)?
    };
    let mut counted = Vec::new();
    for f in files {
        let inp = read(&f, a.lossy)?;
        counted.push(FileCount {
            tokens: counter.count(&inp.text),
            file: inp.name,
        });
    }
    let tokens = a.used + counted.iter().map(|f| f.tokens).sum::<usize>();
    let act = Activity {
        tasks_completed: a.tasks_completed,
        feedback_bytes: a.feedback_bytes,
    };
    let check = budget::check(cfg, window, tokens, act);
    let code = check.verdict.exit_code();
    let report = Report {
        files: counted,
        used: a.used,
        phase: a.phase.as_deref(),
        encoding: counter.encoding.name(),
        estimate: counter.estimate,
        check,
    };
    ctx.out.emit(&report, |w| {
        let c = &report.check;
        let est = if report.estimate { "~" } else { "" };
        // A phase is measured against its own budget; a bare check against the window.
        let (of, pct) = match report.phase {
            Some(p) => (
                format!("phase {p} budget {} (window {})", c.target, c.window),
                c.tokens as f64 / c.target.max(1) as f64,
            ),
            None => (format!("window {}", c.window), c.usage),
        };
        writeln!(
            w,
            "{}: {est}{} tokens, {:.1}% of {of}; zone {}",
            c.verdict.name(),
            c.tokens,
            pct * 100.0,
            c.zone.name()
        )?;
        writeln!(
            w,
            "  warning at {}, target {}, refresh above {}",
            c.warning_at, c.target, c.refresh_at
        )?;
        for t in &c.triggers {
            writeln!(w, "  refresh due: {t}")?;
        }
        if report.estimate {
            writeln!(
                w,
                "  counts are estimates (Claude: o200k_base × budget.claude_factor)"
            )?;
        }
        Ok(())
    });
    Ok(ExitCode::from(code))
}

#[cfg(test)]
mod tests {
    use super::parse_tokens;

    #[test]
    fn token_amounts() {
        assert_eq!(parse_tokens("200K"), Ok(200_000));
        assert_eq!(parse_tokens("1.5m"), Ok(1_500_000));
        assert_eq!(parse_tokens("1_000"), Ok(1000));
        assert!(parse_tokens("lots").is_err());
        assert!(parse_tokens("-5").is_err());
    }
}
