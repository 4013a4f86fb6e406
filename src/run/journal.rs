//! A run's journal: `.baton/runs/<run-id>/events.jsonl`, append-only and fsync'd before the
//! step it records is acted on. The engine is written as plain sequential code that asks the
//! journal before every step; on `--resume` it runs again from the top and every step the
//! journal already holds returns its recorded outcome instead of running: a completed agent
//! call is never repeated, a committed story never committed again, and the first unfinished
//! step is where real work starts.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, io_err};
use crate::store::fs;

pub const FORMAT: u32 = 1;

pub use crate::agent::Usage;

/// How a phase ended, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseOutcome {
    pub ok: bool,
    /// The signal line that decided it, or the reason it failed.
    pub detail: String,
    /// For failure analysis: Retry | Skip | Escalate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<String>,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Prompt tokens as counted by baton before sending.
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    RunStarted {
        run_id: String,
        workflow: String,
        epics: Vec<String>,
        options: serde_json::Value,
    },
    PhaseStarted {
        epic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        story: Option<String>,
        phase: String,
        attempt: u32,
    },
    PhaseFinished {
        epic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        story: Option<String>,
        phase: String,
        attempt: u32,
        outcome: PhaseOutcome,
    },
    /// Parallel mode: a fresh worktree for the story, logged before `git worktree add`. The
    /// story's phases recorded before it belong to an earlier worktree and are not replayed.
    StoryWorktree {
        epic: String,
        story: String,
        path: String,
        branch: String,
    },
    StoryCommitted {
        epic: String,
        story: String,
        sha: String,
    },
    StoryFinished {
        epic: String,
        story: String,
        result: String,
        reason: String,
    },
    EpicFinished {
        epic: String,
    },
    /// Verify queues: the orchestrating session's context estimate crossed the rotation
    /// threshold; the next phase starts from the item's state file alone.
    Rotated {
        item: String,
        after_phase: String,
        next_phase: String,
        reason: String,
        estimate: u64,
        threshold: u64,
        reset_to: u64,
        state_file: String,
        state_tokens: u64,
    },
    RunFinished {
        done: u32,
        failed: u32,
        skipped: u32,
    },
    /// Task workflows: the run set `gate` on the task and waits for a decision.
    TaskGateOpened {
        task: String,
        gate: String,
    },
    /// Task workflows: the decision the run picked up for `gate`.
    TaskGateDecided {
        task: String,
        gate: String,
        decision: String,
    },
    /// Task workflows: a phase failed every attempt and the run paused the task at `point`.
    TaskPaused {
        task: String,
        point: String,
        reason: String,
    },
    /// Task workflows: the pause at `point` was answered with retry.
    TaskRetried {
        task: String,
        point: String,
    },
    /// A report to the conductor session (`key`: the unit of work it tells of, with its
    /// attempt) and the session's meter after it; a resumed run skips reports it holds.
    ConductorCalled {
        task: String,
        key: String,
        ok: bool,
        detail: String,
        meter: crate::run::conductor::Meter,
    },
    /// The conductor session was retired; the next report starts a fresh one.
    ConductorRotated {
        task: String,
        rotation: crate::run::conductor::Rotation,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub v: u32,
    pub seq: u64,
    pub ts: String,
    #[serde(flatten)]
    pub entry: Entry,
}

/// The open journal of one run.
pub struct Journal {
    pub dir: PathBuf,
    path: PathBuf,
    pub records: Vec<Record>,
}

impl Journal {
    pub fn runs_dir(local: &Path) -> PathBuf {
        local.join("runs")
    }

    pub fn create(local: &Path, run_id: &str) -> Result<Journal> {
        let dir = Self::runs_dir(local).join(run_id);
        if dir.exists() {
            return Err(Error::state(format!("run {run_id} already exists")));
        }
        fs::create_dir_all(&dir.join("prompts"))?;
        fs::create_dir_all(&dir.join("logs"))?;
        crate::context::session::ensure_gitignore(local)?;
        let path = dir.join("events.jsonl");
        Ok(Journal {
            dir,
            path,
            records: vec![],
        })
    }

    /// The newest run of one of `workflows` on `subject` (its task or queue) that has not
    /// finished: running the same command again continues it instead of starting another.
    pub fn unfinished(local: &Path, workflows: &[&str], subject: &str) -> Option<Journal> {
        let mut ids: Vec<String> = std::fs::read_dir(Self::runs_dir(local))
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        ids.sort();
        ids.into_iter().rev().find_map(|id| {
            let j = Journal::open(local, &id).ok()?;
            let (_, wf, subjects, _) = j.started()?;
            let ours =
                workflows.contains(&wf) && subjects.first().map(String::as_str) == Some(subject);
            (ours && !j.run_finished()).then_some(j)
        })
    }

    pub fn open(local: &Path, run_id: &str) -> Result<Journal> {
        crate::store::names::check_slug(&run_id.to_ascii_lowercase())
            .map_err(|_| Error::invalid(format!("`{run_id}` is not a run id")))?;
        let dir = Self::runs_dir(local).join(run_id);
        let path = dir.join("events.jsonl");
        if !path.is_file() {
            return Err(Error::not_found(format!(
                "no run {run_id} in {}",
                Self::runs_dir(local).display()
            ))
            .hint("list the runs with `baton status`"));
        }
        let records = read(&path)?;
        Ok(Journal { dir, path, records })
    }

    /// Append and fsync: the step is acted on only after this returns.
    pub fn log(&mut self, entry: Entry) -> Result<()> {
        let rec = Record {
            v: FORMAT,
            seq: self.records.len() as u64 + 1,
            ts: crate::store::now(),
            entry,
        };
        let mut line = serde_json::to_vec(&rec).map_err(|e| Error::invalid(e.to_string()))?;
        line.push(b'\n');
        fs::append_durable(&self.path, &line)?;
        let seq = rec.seq;
        self.records.push(rec);
        crash_point(seq);
        Ok(())
    }

    pub fn finished_phase(
        &self,
        epic: &str,
        story: Option<&str>,
        phase: &str,
        attempt: u32,
    ) -> Option<&PhaseOutcome> {
        let since = story.map_or(0, |s| self.worktree_generation(epic, s));
        self.records[since..].iter().find_map(|r| match &r.entry {
            Entry::PhaseFinished {
                epic: e,
                story: s,
                phase: p,
                attempt: a,
                outcome,
            } if e == epic && s.as_deref() == story && p == phase && *a == attempt => Some(outcome),
            _ => None,
        })
    }

    /// Index of the first record after the story's latest fresh worktree (0 if it has none).
    pub fn worktree_generation(&self, epic: &str, story: &str) -> usize {
        self.records
            .iter()
            .rposition(|r| {
                matches!(&r.entry, Entry::StoryWorktree { epic: e, story: s, .. } if e == epic && s == story)
            })
            .map_or(0, |i| i + 1)
    }

    pub fn story_result(&self, epic: &str, story: &str) -> Option<(String, String)> {
        self.records.iter().find_map(|r| match &r.entry {
            Entry::StoryFinished {
                epic: e,
                story: s,
                result,
                reason,
            } if e == epic && s == story => Some((result.clone(), reason.clone())),
            _ => None,
        })
    }

    pub fn committed(&self, epic: &str, story: &str) -> Option<String> {
        self.records.iter().find_map(|r| match &r.entry {
            Entry::StoryCommitted {
                epic: e,
                story: s,
                sha,
            } if e == epic && s == story => Some(sha.clone()),
            _ => None,
        })
    }

    pub fn epic_finished(&self, epic: &str) -> bool {
        self.records
            .iter()
            .any(|r| matches!(&r.entry, Entry::EpicFinished { epic: e } if e == epic))
    }

    pub fn run_finished(&self) -> bool {
        self.records
            .iter()
            .any(|r| matches!(r.entry, Entry::RunFinished { .. }))
    }

    /// Agent calls that completed (for tests and `baton status`).
    pub fn agent_calls(&self) -> usize {
        self.records
            .iter()
            .filter(|r| matches!(r.entry, Entry::PhaseFinished { .. }))
            .count()
    }

    pub fn started(&self) -> Option<(&str, &str, &[String], &serde_json::Value)> {
        self.records.first().and_then(|r| match &r.entry {
            Entry::RunStarted {
                run_id,
                workflow,
                epics,
                options,
            } => Some((
                run_id.as_str(),
                workflow.as_str(),
                epics.as_slice(),
                options,
            )),
            _ => None,
        })
    }
}

/// Crash testing: with `BATON_CRASH_AFTER_EVENT=N` the process dies (SIGKILL, no clean-up)
/// right after journal event N is on disk — the harshest place a real crash can hit.
fn crash_point(seq: u64) {
    if let Some(n) = std::env::var("BATON_CRASH_AFTER_EVENT")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        && n == seq
    {
        #[cfg(unix)]
        // SAFETY: kill(2) on our own pid with SIGKILL; nothing after it runs.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        std::process::abort();
    }
}

/// Every record; a torn last line (crash mid-append) is ignored: it was never acted on.
pub fn read(path: &Path) -> Result<Vec<Record>> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut out = Vec::new();
    for (i, line) in bytes[..end].split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let rec: Record = serde_json::from_slice(line)
            .map_err(|e| Error::corrupt(path, Some(i + 1), format!("not a run event: {e}")))?;
        if rec.v != FORMAT {
            return Err(Error::corrupt(
                path,
                Some(i + 1),
                format!("run event format v{} is not supported", rec.v),
            ));
        }
        out.push(rec);
    }
    if end < bytes.len() {
        // Cut the torn line so later appends start on a fresh line.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(io_err(path))?;
        f.set_len(end as u64).map_err(io_err(path))?;
    }
    Ok(out)
}
