//! A run's journal: `.baton/runs/<run-id>/events.jsonl`, append-only and fsync'd before the
//! step it records is acted on. The engine is written as plain sequential code that asks the
//! journal before every step; on `--resume` it runs again from the top and every step the
//! journal already holds returns its recorded outcome instead of running: a completed agent
//! call is never repeated, a committed story never committed again, and the first unfinished
//! step is where real work starts.

mod hold;
mod query;

pub use query::Round;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use baton_core::error::io_err;
use baton_core::fs;

/// The journal's format. v2 names each phase's subject with its engine's word
/// (`{"kind":"story","id":"1.2","epic":"1"}`); v1 (`epic`/`story` fields whatever the engine)
/// is still read, converted on the way in.
pub const FORMAT: u32 = 2;

use super::subject::{Subject, SubjectKind, SubjectResult};

pub use baton_agent::Usage;

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
    /// Prompt tokens as counted by baton before sending: exact (o200k_base) when the phase's
    /// budget needed a count, else estimated (`context::tokens::estimate`).
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// How the phase was judged; absent in v1 records (see [`PhaseOutcome::judged`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<Judged>,
    /// What the engine needs of the answer again on resume (verify: the summary block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
    /// The phase's prompt budget (tokens), when it has one: the report draws it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    /// The context the agent really held: its largest single model request, in prompt tokens
    /// (the CLI's own system prompt and tool schemas included), when the CLI reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_peak_tokens: Option<u64>,
    /// The context the phase may fill: `budget` plus what the agent's CLI holds before
    /// baton's prompt (its floor).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_budget: Option<u64>,
    /// `context_peak_tokens` passed `context_budget`. Always written, false included: a
    /// reader of the events must not take a missing field for an unknown.
    #[serde(default)]
    pub over_budget: bool,
    /// Names the saved prompt (`prompts/<label>.md`) and the logs (`logs/<label>.log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// How a phase's answer was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judged {
    /// The work passed.
    Passed,
    /// The agent judged the work failed: a BLOCKED/FAILED signal, a failing audit.
    Rejected,
    /// The phase did not work: no or another subject's signal, a claim not found on disk, the
    /// agent process failed, the prompt over budget.
    Broken,
    /// The answer was not in the required format (a summary block missing or invalid).
    Malformed,
}

impl PhaseOutcome {
    /// A failed outcome that never reached an agent (over budget, dry run refused, …).
    pub fn broken(detail: String, prompt_tokens: u64) -> PhaseOutcome {
        PhaseOutcome {
            ok: false,
            detail,
            recommendation: None,
            usage: Usage::default(),
            cost_usd: None,
            duration_ms: 0,
            session_id: None,
            prompt_tokens,
            log: None,
            judged: Some(Judged::Broken),
            kept: None,
            budget: None,
            context_peak_tokens: None,
            context_budget: None,
            over_budget: false,
            label: None,
        }
    }

    pub fn judged(&self) -> Judged {
        match self.judged {
            Some(j) => j,
            None if self.ok => Judged::Passed,
            // v1 task runs marked an audit's FAILED verdict this way.
            None if self.recommendation.as_deref() == Some("verdict") => Judged::Rejected,
            None => Judged::Broken,
        }
    }
}

// A journal holds a few hundred entries, most of them phase records: boxing the large variant
// would save little memory and cost every match on it a dereference.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Entry {
    RunStarted {
        run_id: String,
        workflow: String,
        /// The epics, the task or the queue the run works on.
        #[serde(alias = "epics")]
        subjects: Vec<String>,
        options: serde_json::Value,
    },
    PhaseStarted {
        subject: Subject,
        phase: String,
        attempt: u32,
    },
    PhaseFinished {
        subject: Subject,
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
    /// `baton run --resume RUN --retry STORY`: a human re-armed the story. What the journal
    /// holds of it before this (its result, its commit) is of an earlier round; the new
    /// round's attempts count on after `after_attempt`. `stash`: the earlier round's stash,
    /// to be applied in the run's tree before the round's first call (`--apply-stash`).
    StoryRetried {
        epic: String,
        story: String,
        after_attempt: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stash: Option<String>,
    },
    /// The project's checks ran after a phase of an attempt (in order, up to the first red
    /// one). A resumed run reads them here instead of running them again.
    ChecksRun {
        subject: Subject,
        phase: String,
        attempt: u32,
        results: Vec<crate::checks::CheckResult>,
        /// The staged tree they ran on (`git write-tree`): a later phase that changed no code
        /// reuses a green result instead of running them again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tree: Option<String>,
    },
    /// A story, task or item ended in this run.
    SubjectFinished {
        subject: Subject,
        result: SubjectResult,
        #[serde(default, skip_serializing_if = "String::is_empty")]
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
    /// A signal stopped the run (the agent call it cut off is not judged, and runs again on
    /// resume).
    Interrupted {
        signal: String,
    },
    RunFinished {
        done: u32,
        failed: u32,
        skipped: u32,
    },
    /// An interrupted run the user gave up: closed by `baton stop RUN_ID`, or by a new run of
    /// its epic that took over. It is no longer offered for `--resume`; its commits and stashes
    /// stay as they are.
    Closed {
        reason: String,
    },
    /// A pause the run asked of itself (`--pause-after`, an escalation), logged before its
    /// stop is requested: a resumed run never pauses at the same point twice.
    PausePoint {
        at: String,
    },
    /// Task workflows: the run sets `gate` on the task and waits for a decision. Journaled
    /// before the store's SET_GATE, with the store's last event `seq` then (`store_seq`): on
    /// resume a SET_GATE after it shows the gate was set (and perhaps already decided), its
    /// absence that the kill came first. Journals without it journaled after SET_GATE.
    TaskGateOpened {
        task: String,
        gate: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        store_seq: Option<u64>,
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
        meter: crate::conductor::Meter,
    },
    /// The conductor session was retired; the next report starts a fresh one.
    ConductorRotated {
        task: String,
        rotation: crate::conductor::Rotation,
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
    /// False for a dry run's journal, kept in memory only.
    durable: bool,
}

impl Journal {
    pub fn runs_dir(local: &Path) -> PathBuf {
        local.join("runs")
    }

    /// The ids of the project's runs, oldest first (a run being started is none yet).
    pub fn run_ids(local: &Path) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(Self::runs_dir(local))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| !n.starts_with(fs::TEMP_PREFIX))
            .collect();
        ids.sort();
        ids
    }

    /// Start run `run_id` with its journal's first entry, `first` (`run_started`): the run's
    /// folder appears whole, that entry in it, or not at all. It is made under a temp name
    /// (`runs/.baton-tmp-<pid>-<id>`, which a later start removes when a kill left it) and
    /// renamed into place; a folder without its journal would show as a damaged run forever.
    /// The run is held (see [`Journal::hold`]) from before it appears: the lock is returned.
    pub fn start(
        local: &Path,
        run_id: &str,
        first: Entry,
    ) -> Result<(Journal, Option<std::fs::File>)> {
        let runs = Self::runs_dir(local);
        let dir = runs.join(run_id);
        fs::confined(local, &dir)?;
        if dir.exists() {
            return Err(Error::state(format!("run {run_id} already exists")));
        }
        fs::create_dir_all(&runs)?;
        baton_context::session::ensure_gitignore(local)?;
        let removed = fs::remove_stale_temps(&runs, Duration::from_secs(3600));
        fs::note_removed_temps(&removed, local.parent().unwrap_or(local));
        let making = runs.join(format!(
            "{}{}-{run_id}",
            fs::TEMP_PREFIX,
            std::process::id()
        ));
        fs::create_dir_all(&making.join("prompts"))?;
        fs::create_dir_all(&making.join("logs"))?;
        let mut j = Journal {
            path: making.join("events.jsonl"),
            dir: making.clone(),
            records: vec![],
            durable: true,
        };
        // The lock goes with the folder's rename (it is the file's, not its name's).
        let hold = j.hold()?;
        let seq = j.write(first)?;
        // Its journal is in the folder before the folder is in place.
        std::fs::File::open(&making)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(&making, e))?;
        std::fs::rename(&making, &dir).map_err(|e| Error::io(&dir, e))?;
        // The rename is durable before anything the run does.
        std::fs::File::open(&runs)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(&runs, e))?;
        j.path = dir.join("events.jsonl");
        j.dir = dir;
        crash_point(seq);
        Ok((j, hold))
    }

    /// The newest run of one of `workflows` on `subject` (its task or queue) that has not
    /// finished: running the same command again continues it instead of starting another.
    pub fn unfinished(local: &Path, workflows: &[&str], subject: &str) -> Option<Journal> {
        Self::unfinished_runs(local, workflows).find(|j| {
            j.started()
                .and_then(|s| s.subjects.first().cloned())
                .as_deref()
                == Some(subject)
        })
    }

    /// Every run of one of `workflows` that has not finished, newest first.
    pub fn unfinished_runs<'a>(
        local: &'a Path,
        workflows: &'a [&'a str],
    ) -> impl Iterator<Item = Journal> + 'a {
        Self::run_ids(local)
            .into_iter()
            .rev()
            .filter_map(move |id| {
                let j = Journal::open(local, &id).ok()?;
                let ours = workflows.contains(&j.started()?.workflow);
                (ours && !j.run_finished()).then_some(j)
            })
    }

    /// The run's folder as the user sees it: relative to `project` when inside it.
    pub fn dir_in(&self, project: &Path) -> String {
        self.dir
            .strip_prefix(project)
            .unwrap_or(&self.dir)
            .display()
            .to_string()
    }

    pub fn open(local: &Path, run_id: &str) -> Result<Journal> {
        baton_store::names::check_slug(&run_id.to_ascii_lowercase())
            .map_err(|_| Error::invalid(format!("`{run_id}` is not a run id")))?;
        let dir = Self::runs_dir(local).join(run_id);
        fs::confined(local, &dir)?;
        let path = dir.join("events.jsonl");
        if !path.is_file() {
            return Err(Error::NoRun {
                id: run_id.to_string(),
                runs: Self::runs_dir(local),
            });
        }
        let records = read(&path)?;
        Ok(Journal {
            dir,
            path,
            records,
            durable: true,
        })
    }

    /// A journal kept in memory only: a dry run writes nothing.
    pub fn memory() -> Journal {
        Journal {
            dir: PathBuf::new(),
            path: PathBuf::new(),
            records: vec![],
            durable: false,
        }
    }

    /// Append and fsync: the step is acted on only after this returns.
    pub fn log(&mut self, entry: Entry) -> Result<()> {
        let seq = self.write(entry)?;
        crash_point(seq);
        Ok(())
    }

    /// [`Journal::log`] without the test's crash point; returns the entry's number.
    fn write(&mut self, entry: Entry) -> Result<u64> {
        let rec = Record {
            v: FORMAT,
            seq: self.records.len() as u64 + 1,
            ts: baton_core::ids::now(),
            entry,
        };
        if self.durable {
            let mut line = serde_json::to_vec(&rec).map_err(|e| Error::internal(e.to_string()))?;
            line.push(b'\n');
            fs::append_durable(&self.path, &line)?;
        }
        let seq = rec.seq;
        self.records.push(rec);
        Ok(seq)
    }

    pub fn finished_phase(
        &self,
        subject: &Subject,
        phase: &str,
        attempt: u32,
    ) -> Option<&PhaseOutcome> {
        let since = match (subject.kind, &subject.epic) {
            (SubjectKind::Story, Some(epic)) => self.worktree_generation(epic, &subject.id),
            _ => 0,
        };
        self.records[since..].iter().find_map(|r| match &r.entry {
            Entry::PhaseFinished {
                subject: s,
                phase: p,
                attempt: a,
                outcome,
            } if s == subject && p == phase && *a == attempt => Some(outcome),
            _ => None,
        })
    }

    /// How many calls of this phase attempt were started and cut off (killed, interrupted)
    /// before they finished, in the story's current worktree: 0 when none was, or when one
    /// finished.
    pub fn killed_calls(&self, subject: &Subject, phase: &str, attempt: u32) -> usize {
        let since = match (subject.kind, &subject.epic) {
            (SubjectKind::Story, Some(epic)) => self.worktree_generation(epic, &subject.id),
            _ => 0,
        };
        let mut started = 0;
        for r in &self.records[since..] {
            match &r.entry {
                Entry::PhaseStarted {
                    subject: s,
                    phase: p,
                    attempt: a,
                } if s == subject && p == phase && *a == attempt => started += 1,
                Entry::PhaseFinished {
                    subject: s,
                    phase: p,
                    attempt: a,
                    ..
                } if s == subject && p == phase && *a == attempt => return 0,
                _ => {}
            }
        }
        started
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

    pub fn run_finished(&self) -> bool {
        self.records
            .iter()
            .any(|r| matches!(r.entry, Entry::RunFinished { .. } | Entry::Closed { .. }))
    }

    /// The end of a run of one subject (a task): the subject's result, then the run's, unless
    /// a run resumed after its end was journaled already.
    pub fn finish_subject_run(&mut self, subject: Subject, result: SubjectResult) -> Result<()> {
        if self.run_finished() {
            return Ok(());
        }
        self.log(Entry::SubjectFinished {
            subject,
            result,
            reason: String::new(),
        })?;
        self.log(Entry::RunFinished {
            done: u32::from(result == SubjectResult::Done),
            failed: u32::from(result == SubjectResult::Failed),
            skipped: 0,
        })
    }

    /// Agent calls that completed (for tests and `baton status`).
    pub fn agent_calls(&self) -> usize {
        self.records
            .iter()
            .filter(|r| matches!(r.entry, Entry::PhaseFinished { .. }))
            .count()
    }

    /// How the run started: its first record.
    pub fn started(&self) -> Option<Started<'_>> {
        self.records.first().and_then(|r| match &r.entry {
            Entry::RunStarted {
                run_id,
                workflow,
                subjects,
                options,
            } => Some(Started {
                run_id,
                workflow,
                subjects,
                options,
            }),
            _ => None,
        })
    }
}

/// A run's start as its journal recorded it.
#[derive(Debug, Clone, Copy)]
pub struct Started<'a> {
    pub run_id: &'a str,
    pub workflow: &'a str,
    /// What the run works on: epics, a task, a queue.
    pub subjects: &'a [String],
    /// The options it started with (a resumed run continues with them).
    pub options: &'a serde_json::Value,
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

/// A v1 phase record named its subject `epic` (the epic, the task slug or the verify item)
/// and `story` (the story, or a task's spec task id), whatever the engine: name it with the
/// engine's word, as v2 does.
fn upgrade_v1(v: &mut serde_json::Value, workflow: &str) {
    let Some(obj) = v.as_object_mut() else { return };
    let event = obj
        .get("event")
        .and_then(|e| e.as_str())
        .unwrap_or_default()
        .to_string();
    match event.as_str() {
        "phase_started" | "phase_finished" => {}
        // v1 had story_finished for epic stories and verify items alike.
        "story_finished" => {
            obj.insert("event".into(), "subject_finished".into());
        }
        _ => return,
    }
    let text = |x: Option<serde_json::Value>| x.and_then(|x| x.as_str().map(str::to_string));
    let epic = text(obj.shift_remove("epic")).unwrap_or_default();
    let story = text(obj.shift_remove("story"));
    let subject = match (workflow, story) {
        ("verify", Some(item)) if event == "story_finished" => Subject::item(&item),
        ("orchestrate" | "poc" | "graduate", unit) => Subject::task(&epic, unit.as_deref()),
        ("verify", _) => Subject::item(&epic),
        (_, Some(s)) => Subject::story(&epic, &s),
        (_, None) => Subject::epic(&epic),
    };
    obj.insert(
        "subject".into(),
        serde_json::to_value(subject).unwrap_or_default(),
    );
}

/// Every record; a torn last line (crash mid-append) is ignored: it was never acted on.
pub fn read(path: &Path) -> Result<Vec<Record>> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let end = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut out = Vec::new();
    let mut workflow = String::new();
    for (i, line) in bytes[..end].split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let bad = |e: serde_json::Error| {
            Error::corrupt(path, Some(i + 1), format!("not a run event: {e}"))
        };
        let mut v: serde_json::Value = serde_json::from_slice(line).map_err(bad)?;
        match v.get("v").and_then(serde_json::Value::as_u64) {
            Some(1) => upgrade_v1(&mut v, &workflow),
            Some(2) => {}
            other => {
                return Err(Error::corrupt(
                    path,
                    Some(i + 1),
                    format!(
                        "run event format v{} is not supported (this baton reads v1 and v{FORMAT})",
                        other.map_or("?".to_string(), |n| n.to_string())
                    ),
                ));
            }
        }
        let rec: Record = serde_json::from_value(v).map_err(bad)?;
        if let Entry::RunStarted { workflow: w, .. } = &rec.entry {
            workflow = w.clone();
        }
        out.push(rec);
    }
    if end < bytes.len() {
        // Cut the torn line so later appends start on a fresh line.
        let f = baton_core::fs::open_own(path, std::fs::OpenOptions::new().write(true))?;
        f.set_len(end as u64).map_err(io_err(path))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Vec<Record> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("events.jsonl");
        std::fs::write(&p, text).unwrap();
        read(&p).unwrap()
    }

    #[test]
    fn a_run_appears_whole_with_its_first_entry_and_held() {
        let t = tempfile::tempdir().unwrap();
        let local = t.path().join(".baton");
        let runs = Journal::runs_dir(&local);
        // What a kill left of a run being started, by a process that is gone.
        let left = runs.join(format!(
            "{}99999999-20990101T000000-000000",
            fs::TEMP_PREFIX
        ));
        std::fs::create_dir_all(left.join("prompts")).unwrap();
        let first = Entry::RunStarted {
            run_id: "20990101T000000-abcdef".into(),
            workflow: "verify".into(),
            subjects: vec!["q".into()],
            options: serde_json::json!({}),
        };
        let (j, hold) = Journal::start(&local, "20990101T000000-abcdef", first).unwrap();
        assert!(hold.is_some() && j.is_held());
        assert_eq!(j.dir, runs.join("20990101T000000-abcdef"));
        assert!(j.dir.join("prompts").is_dir() && j.dir.join("logs").is_dir());
        let names: Vec<String> = std::fs::read_dir(&runs)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["20990101T000000-abcdef"], "no temp folder stays");
        let reopened = Journal::open(&local, "20990101T000000-abcdef").unwrap();
        assert_eq!(reopened.records.len(), 1);
        assert_eq!(reopened.started().map(|s| s.workflow), Some("verify"));
        // Held: a second baton cannot take it; once let go, it can.
        assert!(reopened.hold().is_err());
        drop(hold);
        assert!(reopened.hold().unwrap().is_some());
        let again = Entry::RunStarted {
            run_id: "20990101T000000-abcdef".into(),
            workflow: "verify".into(),
            subjects: vec![],
            options: serde_json::json!({}),
        };
        assert!(Journal::start(&local, "20990101T000000-abcdef", again).is_err());
    }

    const OUTCOME: &str = r#"{"ok":true,"detail":"x","usage":{"input":1,"cache_creation":0,"cache_read":0,"output":1},"duration_ms":1}"#;

    #[test]
    fn v1_journals_name_their_subjects_by_the_runs_workflow() {
        let v1 = |wf: &str, lines: &[String]| {
            let mut t = format!(
                "{{\"v\":1,\"seq\":1,\"ts\":\"t\",\"event\":\"run_started\",\"run_id\":\"r\",\"workflow\":\"{wf}\",\"epics\":[\"s\"],\"options\":{{}}}}\n"
            );
            for (i, l) in lines.iter().enumerate() {
                t.push_str(&format!("{{\"v\":1,\"seq\":{},\"ts\":\"t\",{l}}}\n", i + 2));
            }
            read_text(&t)
        };
        let phase = |epic: &str, story: Option<&str>| {
            let story = story
                .map(|s| format!(",\"story\":\"{s}\""))
                .unwrap_or_default();
            format!(
                "\"event\":\"phase_finished\",\"epic\":\"{epic}\"{story},\"phase\":\"p\",\"attempt\":1,\"outcome\":{OUTCOME}"
            )
        };
        let subject = |r: &Record| match &r.entry {
            Entry::PhaseFinished { subject, .. } | Entry::SubjectFinished { subject, .. } => {
                subject.clone()
            }
            other => panic!("{other:?}"),
        };
        let e = v1("epic-execute", &[phase("1", Some("1.2")), phase("1", None)]);
        assert_eq!(subject(&e[1]), Subject::story("1", "1.2"));
        assert_eq!(subject(&e[2]), Subject::epic("1"));
        let t = v1(
            "orchestrate",
            &[phase("add-login", Some("3")), phase("add-login", None)],
        );
        assert_eq!(subject(&t[1]), Subject::task("add-login", Some("3")));
        assert_eq!(subject(&t[2]), Subject::task("add-login", None));
        let finished = "\"event\":\"story_finished\",\"epic\":\"q\",\"story\":\"BMNR\",\"result\":\"done\",\"reason\":\"\"".to_string();
        let v = v1("verify", &[phase("BMNR", None), finished]);
        assert_eq!(subject(&v[1]), Subject::item("BMNR"));
        assert_eq!(subject(&v[2]), Subject::item("BMNR"));
        // A v1 record reads back with the judgement its fields imply.
        match &e[1].entry {
            Entry::PhaseFinished { outcome, .. } => assert_eq!(outcome.judged(), Judged::Passed),
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_format_from_the_future_is_refused_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("events.jsonl");
        std::fs::write(&p, "{\"v\":9,\"seq\":1,\"ts\":\"t\",\"event\":\"run_finished\",\"done\":0,\"failed\":0,\"skipped\":0}\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.contains("line 1") && e.contains("v9 is not supported"),
            "{e}"
        );
    }
}
