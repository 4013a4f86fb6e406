//! The reporters of `baton run`: a live line on a terminal (indicatif) with plain lines above
//! it, plain lines when stderr is not a terminal, or one JSON event per line on stdout
//! (`--json`). Engines never print; they send [`RunEvent`]s here.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use baton_engine::events::{Reporter, RunEvent};
use baton_engine::lock;
use baton_store::metrics::human_ms;

use super::style::{self, visible};

pub struct Progress {
    mode: Mode,
    bar: Option<ProgressBar>,
    totals: Mutex<(u64, f64)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Live,
    Plain,
    Json,
    Quiet,
}

impl Progress {
    pub fn new(json: bool, quiet: bool) -> Progress {
        let mode = if json {
            Mode::Json
        } else if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Live
        } else {
            Mode::Plain
        };
        let bar = (mode == Mode::Live).then(|| {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            b.enable_steady_tick(Duration::from_millis(120));
            b
        });
        Progress {
            mode,
            bar,
            totals: Mutex::new((0, 0.0)),
        }
    }

    /// A line for people (not in --json mode: stdout is the event stream there).
    pub fn line(&self, text: &str) {
        match (&self.bar, self.mode) {
            (Some(b), _) => b.println(text),
            (None, Mode::Plain) => {
                let _ = writeln!(std::io::stderr(), "{text}");
            }
            _ => {}
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    fn human(&self, e: &RunEvent) {
        match e {
            RunEvent::RunStarted {
                run_id,
                workflow,
                subjects,
                resumed,
            } => self.line(&format!(
                "run {run_id}: {workflow} {} ({})",
                subjects.join(", "),
                if *resumed { "resumed" } else { "started" }
            )),
            RunEvent::SubjectStarted { subject, title } => match title {
                Some(t) => self.line(&format!("{}: {}", subject.label(), visible(t))),
                None => self.line(&subject.label()),
            },
            RunEvent::PhaseStarted {
                subject,
                phase,
                attempt,
                agent,
                ..
            } => {
                let (tokens, cost) = *lock(&self.totals);
                if let Some(b) = &self.bar {
                    b.set_message(format!(
                        "{} · {phase} (attempt {attempt}, {agent}) · {tokens} tokens · ${cost:.2}",
                        subject.label()
                    ));
                }
            }
            RunEvent::PhaseRetrying {
                phase,
                wait_secs,
                reason,
                ..
            } => self.line(&format!(
                "  note: {phase}: {} — retrying in {wait_secs} s",
                visible(reason)
            )),
            RunEvent::PhaseFinished {
                subject,
                phase,
                outcome,
                ..
            } => {
                {
                    let mut t = lock(&self.totals);
                    t.0 += outcome.usage.total();
                    t.1 += outcome.cost_usd.unwrap_or(0.0);
                }
                let mark = style::result(
                    style::To::Stderr,
                    if outcome.ok { "ok" } else { "FAILED" },
                    6,
                );
                self.line(&format!(
                    "  {:<17} {mark} {:>7} {:>8} tokens  {}{}",
                    phase_label(subject.unit.as_deref(), phase),
                    human_ms(outcome.duration_ms),
                    outcome.usage.total(),
                    context_note(outcome),
                    visible(&outcome.detail)
                ));
            }
            RunEvent::PhaseReplayed {
                subject,
                phase,
                outcome,
                ..
            } => self.line(&format!(
                "  {:<17} {:<6} (recorded; not run again)",
                phase_label(subject.unit.as_deref(), phase),
                if outcome.ok { "ok" } else { "FAILED" }
            )),
            RunEvent::GateOpened {
                subject,
                gate,
                prompt,
                artifacts,
                decisions,
                decide,
            } => {
                let mut s = format!(
                    "\n{}: waiting at the {gate} gate\n  {}\n",
                    subject.id,
                    visible(prompt)
                );
                for a in *artifacts {
                    s.push_str(&format!("  artifact: {}\n", visible(a)));
                }
                s.push_str(&format!(
                    "  decide:   baton resume --task {} --decision {decisions}\n  see:      baton gate show --task {}\n  {decide}",
                    subject.id, subject.id
                ));
                self.line(&s);
            }
            RunEvent::GateDecided {
                subject,
                gate,
                decision,
            } => self.line(&format!("{}: {gate} gate → {decision}", subject.id)),
            RunEvent::Paused {
                subject,
                point,
                reason,
                resume,
            } => self.line(&format!(
                "{}: paused at {point}: {}\n  continue: {resume}",
                subject.id,
                visible(reason)
            )),
            RunEvent::CheckFinished {
                subject, result, ..
            } => {
                let mark = style::result(
                    style::To::Stderr,
                    if result.passed { "ok" } else { "FAILED" },
                    6,
                );
                let label = phase_label(subject.unit.as_deref(), "check");
                let line = if result.passed {
                    format!("`{}`: {}", result.command, result.summary)
                } else {
                    result.describe()
                };
                self.line(&format!(
                    "  {label:<17} {mark} {:>7}  {}",
                    human_ms(result.duration_ms),
                    visible(&line)
                ));
            }
            RunEvent::Committed { .. } => {}
            RunEvent::Stashed { message, .. } => self.line(&format!(
                "  note: changes set aside: git stash list → \"{}\"",
                visible(message)
            )),
            RunEvent::Rotated {
                subject,
                session,
                reason,
            } => self.line(&format!(
                "  ↻ {}: {session} session rotated: {reason}",
                subject.label()
            )),
            RunEvent::SubjectFinished {
                result,
                reason,
                commit,
                ..
            } => {
                let commit = commit
                    .map(|c| format!(" commit {}", &c[..c.len().min(10)]))
                    .unwrap_or_default();
                let reason = if reason.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", visible(reason))
                };
                let result = style::result(style::To::Stderr, result.as_str(), 0);
                self.line(&format!("  → {result}{commit}{reason}"));
            }
            RunEvent::Note { subject, text } => match subject {
                Some(s) => self.line(&format!("  note: {}: {}", s.label(), visible(text))),
                None => self.line(&format!("  note: {}", visible(text))),
            },
            // The error that ends the run says it, with the resume command.
            RunEvent::Interrupted { .. } | RunEvent::RunFinished { .. } => {}
        }
    }
}

fn phase_label(unit: Option<&str>, phase: &str) -> String {
    match unit {
        Some(u) => format!("{phase}#{u}"),
        None => phase.to_string(),
    }
}

impl Reporter for Progress {
    fn report(&self, e: &RunEvent) {
        match self.mode {
            Mode::Json => {
                if let Ok(line) = serde_json::to_string(e) {
                    let _ = writeln!(std::io::stdout().lock(), "{line}");
                }
            }
            Mode::Quiet => {}
            Mode::Live | Mode::Plain => self.human(e),
        }
    }
}

/// `context 29,441/43,000  ` when the agent reported the context it held: the largest request
/// of its session against the phase's context budget; red, and said, when it went over.
fn context_note(o: &baton_engine::journal::PhaseOutcome) -> String {
    let Some(peak) = o.context_peak_tokens else {
        return String::new();
    };
    let text = match o.context_budget {
        Some(b) if o.over_budget => format!("context {peak}/{b} OVER BUDGET"),
        Some(b) => format!("context {peak}/{b}"),
        None => format!("context {peak}"),
    };
    let paint = if o.over_budget {
        style::BAD
    } else {
        style::NOTE
    };
    format!("{}  ", style::paint(style::To::Stderr, paint, &text))
}
