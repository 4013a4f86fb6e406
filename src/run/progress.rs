//! What a run shows while it works: a live line on a terminal (indicatif), plain lines when
//! stdout is not one, or a JSON event stream (`--json`) for machines.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use super::journal::PhaseOutcome;
use crate::store::metrics::human_ms;
use crate::workflow::epic::StoryReport;

pub struct Progress {
    mode: Mode,
    bar: Option<ProgressBar>,
    started: Instant,
    tokens: u64,
    cost: f64,
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
        let mode = if quiet {
            Mode::Quiet
        } else if json {
            Mode::Json
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
            started: Instant::now(),
            tokens: 0,
            cost: 0.0,
        }
    }

    fn line(&self, text: &str) {
        match (&self.bar, self.mode) {
            (Some(b), _) => b.println(text),
            (None, Mode::Plain) => {
                let _ = writeln!(std::io::stderr(), "{text}");
            }
            _ => {}
        }
    }

    fn json(&self, v: serde_json::Value) {
        if self.mode == Mode::Json {
            let _ = writeln!(std::io::stdout(), "{v}");
        }
    }

    pub fn note(&self, text: &str) {
        self.line(&format!("  note: {text}"));
        self.json(serde_json::json!({"event": "note", "text": text}));
    }

    pub fn story(&self, id: &str, title: &str) {
        self.line(&format!("story {id}: {title}"));
        self.json(serde_json::json!({"event": "story_started", "story": id, "title": title}));
    }

    pub fn phase(&self, story: Option<&str>, phase: &str, attempt: u32) {
        let who = story.map_or("epic".to_string(), |s| format!("story {s}"));
        if let Some(b) = &self.bar {
            b.set_message(format!(
                "{who} · {phase} (attempt {attempt}) · {} tokens · ${:.2}",
                self.tokens, self.cost
            ));
        }
        self.json(serde_json::json!({"event": "phase_started", "story": story, "phase": phase, "attempt": attempt}));
    }

    pub fn phase_done(&mut self, story: Option<&str>, phase: &str, out: &PhaseOutcome) {
        self.tokens += out.usage.total();
        self.cost += out.cost_usd.unwrap_or(0.0);
        let mark = if out.ok { "ok" } else { "FAILED" };
        self.line(&format!(
            "  {phase:<17} {mark:<6} {:>7} {:>8} tokens  {}",
            human_ms(out.duration_ms),
            out.usage.total(),
            out.detail
        ));
        self.json(serde_json::json!({"event": "phase_finished", "story": story, "phase": phase, "outcome": out}));
    }

    pub fn replayed(&self, story: Option<&str>, phase: &str, out: &PhaseOutcome) {
        self.line(&format!(
            "  {phase:<17} {:<6} (recorded; not run again)",
            if out.ok { "ok" } else { "FAILED" }
        ));
        self.json(serde_json::json!({"event": "phase_replayed", "story": story, "phase": phase, "outcome": out}));
    }

    pub fn story_done(&self, r: &StoryReport) {
        let commit = r
            .commit
            .as_deref()
            .map(|c| format!(" commit {}", &c[..c.len().min(10)]))
            .unwrap_or_default();
        let reason = if r.reason.is_empty() {
            String::new()
        } else {
            format!(" — {}", r.reason)
        };
        self.line(&format!("  → {}{commit}{reason}", r.result));
        self.json(serde_json::json!({"event": "story_finished", "story": r}));
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}
