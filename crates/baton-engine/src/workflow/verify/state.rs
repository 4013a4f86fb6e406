//! `verification-state.json`: one item's progress, in the thin-orchestrator state-file shape. It alone is enough
//! for a cold session to continue: which phases are done (with their key findings), which one
//! was running when it stopped, and the orchestrator's context estimate. Paths in it are
//! relative to the item's directory (where the file lives), so they hold from any session.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use baton_context::summary::Summary;
use baton_core::fs;

pub const FILE_NAME: &str = "verification-state.json";

/// Where an item or one of its phases is: the state file's `status`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Progress {
    #[default]
    NotStarted,
    InProgress,
    Complete,
    Failed,
}

impl Progress {
    pub fn as_str(self) -> &'static str {
        match self {
            Progress::NotStarted => "not-started",
            Progress::InProgress => "in-progress",
            Progress::Complete => "complete",
            Progress::Failed => "failed",
        }
    }

    /// Complete or failed: no phase of it runs again until someone acts.
    pub fn is_final(self) -> bool {
        matches!(self, Progress::Complete | Progress::Failed)
    }
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Progress {
    type Err = Error;
    fn from_str(s: &str) -> Result<Progress> {
        [
            Progress::NotStarted,
            Progress::InProgress,
            Progress::Complete,
            Progress::Failed,
        ]
        .into_iter()
        .find(|p| p.as_str() == s)
        .ok_or_else(|| Error::invalid(format!("unknown status {s:?}")))
    }
}

/// Where an item is in its queue (`baton queue status`): one no phase has run of is pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemProgress {
    Pending,
    InProgress,
    Complete,
    Failed,
}

impl From<Progress> for ItemProgress {
    fn from(p: Progress) -> ItemProgress {
        match p {
            Progress::NotStarted => ItemProgress::Pending,
            Progress::InProgress => ItemProgress::InProgress,
            Progress::Complete => ItemProgress::Complete,
            Progress::Failed => ItemProgress::Failed,
        }
    }
}

impl ItemProgress {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemProgress::Pending => "pending",
            ItemProgress::InProgress => "in-progress",
            ItemProgress::Complete => "complete",
            ItemProgress::Failed => "failed",
        }
    }
}

/// Where an item is, derived from its state file.
#[derive(Debug, Clone, Serialize)]
pub struct ItemStatus {
    pub item: String,
    pub status: ItemProgress,
    /// The phase in progress (or that failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub phases_done: usize,
    pub phases: usize,
}

impl ItemStatus {
    /// An item no phase of has run yet.
    pub fn pending(item: &str) -> ItemStatus {
        ItemStatus {
            item: item.to_string(),
            status: ItemProgress::Pending,
            phase: None,
            reason: None,
            phases_done: 0,
            phases: 0,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    pub item: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    pub updated_at: String,
    pub status: Progress,
    /// Why the item failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// What a fresh session does next, in one line.
    #[serde(default)]
    pub next: String,
    pub phases: BTreeMap<String, PhaseState>,
    pub context_estimate: ContextEstimate,
    pub queue: QueueRef,
    /// Items of the queue complete when this one started: the latest [`QUEUE_WINDOW`], in
    /// queue order.
    #[serde(default)]
    pub completed: Vec<String>,
    /// Complete items before those listed in `completed`, not named.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub completed_more: usize,
    /// Orchestrator rotations while working on this item.
    #[serde(default)]
    pub rotations: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueRef {
    pub name: String,
    /// The items after this one not complete yet, in order (`companyQueue` of the original
    /// state-file shape): the first [`QUEUE_WINDOW`].
    #[serde(default)]
    pub next: Vec<String>,
    /// Items after those listed in `next`, not named.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: usize,
}

/// How many ids of the queue a state file names on each side of its item. The file is what
/// a fresh orchestrating context reads: a queue of 20,000 items would otherwise put 20,000 ids
/// into every item's file, and into that context.
pub const QUEUE_WINDOW: usize = 20;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// An item's place in its queue, as its state file shows it: the latest complete items and
/// the next ones still to do, each with the count of those not named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Neighbours {
    pub completed: Vec<String>,
    pub completed_more: usize,
    pub next: Vec<String>,
    pub next_more: usize,
}

impl Neighbours {
    /// From every complete item and every item still to do after this one, in queue order.
    pub fn of(mut completed: Vec<String>, mut next: Vec<String>) -> Neighbours {
        let completed_more = completed.len().saturating_sub(QUEUE_WINDOW);
        completed.drain(..completed_more);
        let next_more = next.len().saturating_sub(QUEUE_WINDOW);
        next.truncate(QUEUE_WINDOW);
        Neighbours {
            completed,
            completed_more,
            next,
            next_more,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhaseState {
    pub status: Progress,
    pub agent: String,
    #[serde(default)]
    pub input_files: Vec<String>,
    pub output_file: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_burned: Option<u64>,
    #[serde(default)]
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// An output file found when the phase (re)started: what a crashed attempt left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_output: Option<Partial>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Partial {
    pub file: String,
    pub lines: u64,
    pub attempt: u32,
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ContextEstimate {
    pub system_overhead: u64,
    pub conversation_tokens: u64,
    pub total_estimate: u64,
    pub session_limit: u64,
    pub rotation_threshold: u64,
}

impl State {
    /// Tokens every phase burned (saturating: the counts are what agent CLIs printed).
    pub fn tokens_burned(&self) -> u64 {
        self.phases
            .values()
            .filter_map(|p| p.tokens_burned)
            .fold(0, u64::saturating_add)
    }

    pub fn load_opt(path: &Path) -> Result<Option<State>> {
        let Some(text) = fs::read_text_opt(path)? else {
            return Ok(None);
        };
        serde_json::from_str(&text).map(Some).map_err(|e| {
            Error::corrupt(
                path,
                Some(e.line()),
                format!("not a verification state: {e}"),
            )
            .hint("fix or delete the file; deleting it restarts the item from its first phase")
        })
    }

    /// The JSON written to disk.
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Written atomically: a reader sees the old state or the new one.
    pub fn save(&mut self, path: &Path) -> Result<String> {
        self.updated_at = baton_core::ids::now();
        let text = self.to_text();
        fs::write_atomic(path, text.as_bytes())?;
        crash_point();
        Ok(text)
    }

    pub fn item_status(&self) -> ItemStatus {
        let done = self
            .phases
            .values()
            .filter(|p| p.status == Progress::Complete)
            .count();
        let current = self
            .phases
            .iter()
            .find(|(_, p)| matches!(p.status, Progress::InProgress | Progress::Failed))
            .map(|(id, _)| id.clone());
        ItemStatus {
            item: self.item.clone(),
            status: self.status.into(),
            phase: if self.status == Progress::Complete {
                None
            } else {
                current
            },
            reason: self.failure.clone(),
            phases_done: done,
            phases: self.phases.len(),
        }
    }
}

/// The small part of a summary block the state file keeps: what downstream phases and a cold
/// session need ("the key findings that downstream phases need"), not the block.
pub fn key_fields(s: &Summary) -> serde_json::Value {
    let mut severities: BTreeMap<String, u64> = BTreeMap::new();
    for i in &s.issues {
        *severities
            .entry(i.severity.to_ascii_lowercase())
            .or_default() += 1;
    }
    let numbers: serde_json::Map<String, serde_json::Value> = s
        .key_numbers
        .iter()
        .take(12)
        .map(|k| (k.metric.clone(), serde_json::Value::String(k.value.clone())))
        .collect();
    serde_json::json!({
        "status": s.status,
        "linesWritten": s.lines_written,
        "keyFindings": s.key_findings.iter().take(5).collect::<Vec<_>>(),
        "issuesNoted": s.issues.len(),
        "issuesBySeverity": severities,
        "keyNumbers": numbers,
        "nextPhaseNeeds": s.next_phase_needs.iter().take(5).collect::<Vec<_>>(),
    })
}

/// Crash testing: with `BATON_CRASH_AFTER_STATE_WRITE=N` the process dies (SIGKILL) right after
/// its N-th state-file write is on disk.
fn crash_point() {
    use std::sync::atomic::{AtomicU64, Ordering};
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::SeqCst) + 1;
    if std::env::var("BATON_CRASH_AFTER_STATE_WRITE")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        == Some(n)
    {
        #[cfg(unix)]
        // SAFETY: kill(2) on our own pid with SIGKILL; nothing after it runs.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::{Neighbours, QUEUE_WINDOW};

    #[test]
    fn neighbours_keep_the_latest_complete_and_the_next_to_do() {
        let ids = |r: std::ops::Range<usize>| r.map(|i| format!("I{i}")).collect::<Vec<_>>();
        let n = Neighbours::of(ids(0..25), ids(30..31));
        assert_eq!(n.completed, ids(5..25));
        assert_eq!((n.completed_more, n.next_more), (5, 0));
        assert_eq!(n.next, ids(30..31));
        let n = Neighbours::of(vec![], ids(0..QUEUE_WINDOW + 1));
        assert_eq!(n.next, ids(0..QUEUE_WINDOW));
        assert_eq!((n.completed_more, n.next_more), (0, 1));
        assert_eq!(Neighbours::of(vec![], vec![]), Neighbours::default());
    }
}
