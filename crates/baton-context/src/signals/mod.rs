//! Completion signals: the line an agent ends a phase with, and the optional fenced JSON status
//! block before it (the epic-execute workflow's convention, see [`StatusBlock`]).
//!
//! Two entry points share one line grammar:
//! - [`parse_signal`] knows the built-in keywords ([`SignalKind`]) and the status block:
//!
//!   ```text
//!   KICKOFF COMPLETE: <id>
//!   IMPLEMENTATION COMPLETE: <id>
//!   IMPLEMENTATION BLOCKED: <id> - <reason>
//!   REVIEW PASSED: <id>
//!   REVIEW PASSED WITH FIXES: <id> - Fixed <N> issues
//!   REVIEW FAILED: <id> - <reason>
//!   ANALYSIS COMPLETE: <id> - Retry|Skip|Escalate
//!   RETRO COMPLETE: Epic <id>
//!   ```
//! - [`parse_grammar`] takes the keywords from a [`Grammar`] (a workflow phase's `signal` and
//!   `fail_signal`, e.g. `ARCHITECT COMPLETE: add-login`, `DESIGN AUDIT FAILED: add-login -
//!   why`, `IMPLEMENTATION COMPLETE: add-login/3`), and also tolerates a leading `Signal:` or
//!   `Fail signal:` label, as some prompts print the signal that way.
//!
//! Both scan the whole text (callers pass the agent's final text or the last 32 KB of its
//! output) and keep the **last** valid signal whose id matches the expected one.
//!
//! What counts as a signal line:
//! - it starts the line (at most 3 spaces of indentation: 4 is a Markdown code block);
//! - it is not inside a fenced code block (```` ``` ```` or `~~~`), not in a `>` quote, and does
//!   not start with a backtick (inline code quoting the grammar);
//! - the keyword is matched case-insensitively, with any whitespace between its words, longest
//!   keyword first; Markdown emphasis (`**…**`, `__…__`) and `#` heading markers around it are
//!   ignored, as is trailing punctuation after the id;
//! - the separator after the keyword is `:` (a dash or nothing is tolerated), the reason after
//!   the id is introduced by ` - `, ` – `, ` — ` or `:`;
//! - `Story 1.2` / `Epic 1` written with a space is one id.
//!
//! Ids are compared by [`normalize_id`]: `story-1-2`, `1.2` and `Story 01.2` are the same id,
//! `add-login/3` is neither `add-login/30` nor `add-login`.
//!
//! The status block is the last fenced block before the chosen signal (or, with no signal,
//! anywhere) whose content is a JSON object with a `status` key; a block naming another
//! `story_id` is ignored. [`SignalResult::verdict`] combines both into what the engine acts on.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

mod block;
mod grammar;
mod id;
mod line;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_grammar;

pub use block::{Decision, Issue, Status, StatusBlock};
pub use grammar::{Found, Grammar, GrammarResult, parse_grammar};
pub use id::normalize_id;
use line::{Event, Keywords};

/// The signal keywords, in matching order (longest first: `REVIEW PASSED WITH FIXES` before
/// `REVIEW PASSED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    KickoffComplete,
    ImplementationComplete,
    ImplementationBlocked,
    ReviewPassedWithFixes,
    ReviewPassed,
    ReviewFailed,
    AnalysisComplete,
    RetroComplete,
}

impl SignalKind {
    pub const ALL: [SignalKind; 8] = [
        SignalKind::KickoffComplete,
        SignalKind::ImplementationComplete,
        SignalKind::ImplementationBlocked,
        SignalKind::ReviewPassedWithFixes,
        SignalKind::ReviewPassed,
        SignalKind::ReviewFailed,
        SignalKind::AnalysisComplete,
        SignalKind::RetroComplete,
    ];

    /// The keyword as agents are told to print it.
    pub fn keyword(self) -> &'static str {
        match self {
            SignalKind::KickoffComplete => "KICKOFF COMPLETE",
            SignalKind::ImplementationComplete => "IMPLEMENTATION COMPLETE",
            SignalKind::ImplementationBlocked => "IMPLEMENTATION BLOCKED",
            SignalKind::ReviewPassedWithFixes => "REVIEW PASSED WITH FIXES",
            SignalKind::ReviewPassed => "REVIEW PASSED",
            SignalKind::ReviewFailed => "REVIEW FAILED",
            SignalKind::AnalysisComplete => "ANALYSIS COMPLETE",
            SignalKind::RetroComplete => "RETRO COMPLETE",
        }
    }

    /// Whether the phase that printed this signal succeeded.
    pub fn is_success(self) -> bool {
        !matches!(
            self,
            SignalKind::ImplementationBlocked | SignalKind::ReviewFailed
        )
    }
}

/// The failure analysis' recommendation (`ANALYSIS COMPLETE: id - Retry|Skip|Escalate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recommendation {
    Retry,
    Skip,
    Escalate,
}

/// One signal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signal {
    pub kind: SignalKind,
    /// The id as the agent wrote it (punctuation and backticks trimmed, not normalised).
    pub id: String,
    /// Text after the id (the reason, `Fixed N issues`, the recommendation), if any.
    pub detail: Option<String>,
    /// `N` of `Fixed N issues` (REVIEW PASSED WITH FIXES).
    pub fixed: Option<u32>,
    /// ANALYSIS COMPLETE's recommendation, when it is one of the three words.
    pub recommendation: Option<Recommendation>,
    /// 1-based line number in the parsed text.
    pub line: usize,
}

/// Everything [`parse_signal`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignalResult {
    /// The last valid signal for the expected id.
    pub signal: Option<Signal>,
    /// The status block that goes with it (see the module doc).
    pub status: Option<StatusBlock>,
    /// Ids of well-formed signals that named another id (at most 8, for error messages).
    pub other_ids: Vec<String>,
}

/// What the engine acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// A success signal, and no status block contradicting it.
    Success,
    /// IMPLEMENTATION BLOCKED, or a success signal whose status block says BLOCKED.
    Blocked { reason: String },
    /// REVIEW FAILED, or a success signal whose status block says FAILED.
    Failed { reason: String },
    /// No completion signal for the expected id: treated as a failure (an agent that stops
    /// without saying it is done has not succeeded).
    Missing { message: String },
}

impl SignalResult {
    pub fn verdict(&self) -> Verdict {
        let Some(sig) = &self.signal else {
            let mut message = "no completion signal".to_string();
            if !self.other_ids.is_empty() {
                message.push_str(&format!(
                    " for this id (found signals for: {})",
                    self.other_ids.join(", ")
                ));
            }
            return Verdict::Missing { message };
        };
        let reason = || {
            sig.detail
                .clone()
                .unwrap_or_else(|| "no reason given".to_string())
        };
        match sig.kind {
            SignalKind::ImplementationBlocked => return Verdict::Blocked { reason: reason() },
            SignalKind::ReviewFailed => return Verdict::Failed { reason: reason() },
            _ => {}
        }
        // A success line contradicted by the structured block is not trusted.
        match self.status.as_ref().map(|b| &b.status) {
            Some(Status::Blocked) => Verdict::Blocked {
                reason: format!(
                    "status block says BLOCKED but the signal is {}",
                    sig.kind.keyword()
                ),
            },
            Some(Status::Failed) => Verdict::Failed {
                reason: format!(
                    "status block says FAILED but the signal is {}",
                    sig.kind.keyword()
                ),
            },
            _ => Verdict::Success,
        }
    }
}

/// The built-in keywords, indexed as [`SignalKind::ALL`].
static BUILTIN: LazyLock<Keywords<'static>> = LazyLock::new(|| {
    let retro = SignalKind::ALL
        .iter()
        .position(|k| *k == SignalKind::RetroComplete)
        .expect("RETRO COMPLETE is built in");
    Keywords::new(SignalKind::ALL.iter().map(|k| k.keyword())).with_epic_word_after(retro)
});
static FIXED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\bfixed\s+(\d{1,9})\b").expect("static regex"));

impl Signal {
    fn from_raw(raw: line::Raw) -> Signal {
        let kind = SignalKind::ALL[raw.index];
        let detail = raw.detail;
        let fixed = match kind {
            SignalKind::ReviewPassedWithFixes => detail
                .as_deref()
                .and_then(|d| FIXED.captures(d))
                .and_then(|c| c.get(1))
                .and_then(|m| m.as_str().parse().ok()),
            _ => None,
        };
        let recommendation = match kind {
            SignalKind::AnalysisComplete => detail.as_deref().and_then(|d| {
                let w = d
                    .split(|c: char| !c.is_alphabetic())
                    .find(|w| !w.is_empty())?;
                match w.to_ascii_lowercase().as_str() {
                    "retry" => Some(Recommendation::Retry),
                    "skip" => Some(Recommendation::Skip),
                    "escalate" => Some(Recommendation::Escalate),
                    _ => None,
                }
            }),
            _ => None,
        };
        Signal {
            kind,
            id: raw.id,
            detail,
            fixed,
            recommendation,
            line: raw.line,
        }
    }
}

/// Find the last valid completion signal for `expected_id` (see the module doc for the rules).
pub fn parse_signal(text: &str, expected_id: &str) -> SignalResult {
    let want = normalize_id(expected_id);
    let mut signal: Option<Signal> = None;
    // The status block in force at the chosen signal, and the latest one seen.
    let mut status_at_signal: Option<StatusBlock> = None;
    let mut latest_block: Option<StatusBlock> = None;
    let mut other_ids: Vec<String> = Vec::new();
    line::scan(text, true, |ev| match ev {
        Event::Block(start, body) => {
            if let Some(b) = block::parse_block(body, start) {
                let ours = b
                    .story_id
                    .as_deref()
                    .is_none_or(|id| normalize_id(id) == want);
                if ours {
                    latest_block = Some(b);
                }
            }
        }
        Event::Line(n, l) => {
            let Some(raw) = line::parse_line(l, n, &BUILTIN) else {
                return;
            };
            if normalize_id(&raw.id) == want {
                status_at_signal = latest_block.clone();
                signal = Some(Signal::from_raw(raw));
            } else if other_ids.len() < 8 && !other_ids.contains(&raw.id) {
                other_ids.push(raw.id);
            }
        }
    });
    let status = if signal.is_some() {
        status_at_signal
    } else {
        latest_block
    };
    SignalResult {
        signal,
        status,
        other_ids,
    }
}
