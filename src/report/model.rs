//! What a report shows, built from a run's journal alone (plus its mask records and, for task
//! runs, the task's manifest): every phase attempt with its interval, outcome, usage and
//! files; the gates' waits; the rotation points; the totals.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use baton_context::mask::record::{self, MaskRecord};
use baton_engine::events::{Subject, SubjectKind, SubjectResult};
use baton_engine::journal::{Entry, Judged, Record, Usage};

/// How a phase attempt ended, as the report colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Rejected,
    Broken,
    Malformed,
    /// Started and not finished, in a run still going.
    Running,
    /// Started and not finished, in a run that stopped (a signal, a crash): resuming runs it.
    Interrupted,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Rejected => "rejected",
            Status::Broken => "broken",
            Status::Malformed => "malformed",
            Status::Running => "running",
            Status::Interrupted => "interrupted",
        }
    }

    fn of(j: Judged) -> Status {
        match j {
            Judged::Passed => Status::Passed,
            Judged::Rejected => Status::Rejected,
            Judged::Broken => Status::Broken,
            Judged::Malformed => Status::Malformed,
        }
    }
}

/// One line of the timeline: a story, an epic's own phases, a task (or one spec task of
/// it), a queue item.
#[derive(Debug, Clone)]
pub struct Row {
    pub subject: Subject,
    /// How the subject ended, when it finished in this run.
    pub result: Option<SubjectResult>,
    pub reason: String,
    pub commit: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Phase {
    pub row: usize,
    pub phase: String,
    pub attempt: u32,
    /// Milliseconds since the run started.
    pub start_ms: u64,
    pub end_ms: u64,
    pub status: Status,
    pub detail: String,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub prompt_tokens: u64,
    pub budget: Option<u64>,
    /// The most context the agent held (its largest request), its budget, and whether it
    /// went over.
    pub context_peak: Option<u64>,
    pub context_budget: Option<u64>,
    pub over_budget: bool,
    pub duration_ms: u64,
    /// The saved prompt and the agent's log, when they exist.
    pub prompt: Option<PathBuf>,
    pub log: Option<PathBuf>,
    /// Indices into [`Model::masks`].
    pub masks: Vec<usize>,
    /// Which of the run's concurrent slots the attempt ran in (0 = the first).
    pub lane: usize,
}

/// One of the project's checks after a phase (`phase` is `baseline` for the starting commit's).
#[derive(Debug, Clone)]
pub struct CheckRun {
    pub row: usize,
    pub phase: String,
    pub attempt: u32,
    pub result: baton_engine::checks::CheckResult,
}

/// A gate the run waited at, from its opening to the decision (or to now).
#[derive(Debug, Clone)]
pub struct GateWait {
    pub row: usize,
    pub gate: String,
    pub start_ms: u64,
    pub end_ms: u64,
    pub decision: Option<String>,
}

/// A session retired for a fresh one: a verify item's orchestrating session, a conductor.
#[derive(Debug, Clone)]
pub struct Rotation {
    pub row: usize,
    pub at_ms: u64,
    pub session: &'static str,
    pub reason: String,
}

/// An implementation wave of a task (from the task's manifest).
#[derive(Debug, Clone)]
pub struct Wave {
    pub wave: u64,
    pub start_ms: u64,
    pub end_ms: u64,
    pub tasks: String,
    pub savings_ms: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub phases: usize,
    pub by_status: Vec<(Status, usize)>,
    pub retries: usize,
    pub tokens: u64,
    pub prompt_tokens: u64,
    pub cost_usd: f64,
    pub wall_ms: u64,
    /// The sum of the phases' durations.
    pub phase_ms: u64,
    /// Time some phase was running (the union of the intervals).
    pub busy_ms: u64,
    /// `phase_ms - busy_ms`: what running phases side by side saved.
    pub parallel_savings_ms: u64,
    /// The most phases that ran at once.
    pub lanes: usize,
    pub masked_outputs: usize,
    pub mask_tokens_saved: u64,
    pub gate_wait_ms: u64,
}

#[derive(Debug, Clone)]
pub struct Model {
    pub run_id: String,
    pub workflow: String,
    pub subjects: Vec<String>,
    pub started_at: String,
    pub updated_at: String,
    /// finished, interrupted (a signal stopped it), or unfinished (running, or killed).
    pub state: String,
    pub span_ms: u64,
    pub rows: Vec<Row>,
    pub phases: Vec<Phase>,
    pub gates: Vec<GateWait>,
    pub rotations: Vec<Rotation>,
    /// The project's checks, per story and phase, as the run recorded them.
    pub checks: Vec<CheckRun>,
    /// The deferred-work ledger's open entries when the report was written, one line each.
    pub deferred: Vec<String>,
    pub waves: Vec<Wave>,
    pub masks: Vec<MaskRecord>,
    /// Lines of masks.jsonl that could not be read.
    pub masks_unreadable: usize,
    /// Mask logs that could not be read at all ("PATH: why").
    pub masks_unreadable_files: Vec<String>,
    pub totals: Totals,
    pub run_dir: PathBuf,
}

fn millis(ts: &str) -> Option<i64> {
    ts.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

/// The rows, found by subject; a task's spec tasks (units) are rows of their own.
struct Rows {
    rows: Vec<Row>,
    index: HashMap<Subject, usize>,
}

impl Rows {
    fn get(&mut self, s: &Subject) -> usize {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.rows.push(Row {
            subject: s.clone(),
            result: None,
            reason: String::new(),
            commit: None,
        });
        self.index.insert(s.clone(), self.rows.len() - 1);
        self.rows.len() - 1
    }
}

/// Build the model of the run in `run_dir` from its journal records. `waves` are the task's
/// `waves.execution` entries, when the run is a task run.
pub fn build(run_dir: &Path, records: &[Record], waves: &[serde_json::Value]) -> Model {
    let t0 = records.first().and_then(|r| millis(&r.ts)).unwrap_or(0);
    let at = |ts: &str| millis(ts).map_or(0, |m| (m - t0).max(0) as u64);
    let last = records.last().map_or(0, |r| at(&r.ts));
    let (mut run_id, mut workflow, mut subjects) = (String::new(), String::new(), vec![]);
    let mut rows = Rows {
        rows: vec![],
        index: HashMap::new(),
    };
    let mut phases: Vec<Phase> = vec![];
    // Attempts started and not yet finished: (subject, phase, attempt) → start.
    let mut open: HashMap<(Subject, String, u32), u64> = HashMap::new();
    let mut gates: Vec<GateWait> = vec![];
    let mut rotations = vec![];
    let mut checks = vec![];
    let mut finished = false;
    let mut interrupted = false;
    let record::Read {
        records: masks,
        unreadable: masks_unreadable,
        unreadable_files: masks_unreadable_files,
    } = record::for_run(run_dir);
    let mut masks_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, m) in masks.iter().enumerate() {
        masks_of
            .entry(m.phase.as_deref().unwrap_or(""))
            .or_default()
            .push(i);
    }
    let existing = |p: PathBuf| p.is_file().then_some(p);
    for r in records {
        let now = at(&r.ts);
        match &r.entry {
            Entry::RunStarted {
                run_id: id,
                workflow: wf,
                subjects: s,
                ..
            } => {
                run_id = id.clone();
                workflow = wf.clone();
                subjects = s.clone();
            }
            Entry::PhaseStarted {
                subject,
                phase,
                attempt,
            } => {
                rows.get(subject);
                open.insert((subject.clone(), phase.clone(), *attempt), now);
            }
            Entry::PhaseFinished {
                subject,
                phase,
                attempt,
                outcome: o,
            } => {
                let row = rows.get(subject);
                // A phase refused before it started (over budget) has no start: it took no time.
                let start = open
                    .remove(&(subject.clone(), phase.clone(), *attempt))
                    .unwrap_or(now);
                let label = o.label.clone().or_else(|| {
                    o.log.as_deref().and_then(|l| {
                        Path::new(l)
                            .file_stem()
                            .map(|s| s.to_string_lossy().into_owned())
                    })
                });
                let (prompt, log) = match &label {
                    Some(l) => (
                        existing(run_dir.join("prompts").join(format!("{l}.md"))),
                        existing(run_dir.join("logs").join(format!("{l}.log"))),
                    ),
                    None => (None, None),
                };
                phases.push(Phase {
                    row,
                    phase: phase.clone(),
                    attempt: *attempt,
                    start_ms: start,
                    end_ms: now.max(start),
                    status: Status::of(o.judged()),
                    detail: o.detail.clone(),
                    usage: o.usage,
                    cost_usd: o.cost_usd,
                    prompt_tokens: o.prompt_tokens,
                    budget: o.budget,
                    context_peak: o.context_peak_tokens,
                    context_budget: o.context_budget,
                    over_budget: o.over_budget,
                    duration_ms: o.duration_ms,
                    prompt,
                    log,
                    masks: label
                        .as_deref()
                        .and_then(|l| masks_of.get(l).cloned())
                        .unwrap_or_default(),
                    lane: 0,
                });
            }
            Entry::StoryCommitted { epic, story, sha } => {
                let row = rows.get(&Subject::story(epic, story));
                rows.rows[row].commit = Some(sha.clone());
            }
            Entry::SubjectFinished {
                subject,
                result,
                reason,
            } => {
                let row = rows.get(subject);
                rows.rows[row].result = Some(*result);
                rows.rows[row].reason = reason.clone();
            }
            Entry::Rotated {
                item,
                after_phase,
                reason,
                estimate,
                threshold,
                ..
            } => rotations.push(Rotation {
                row: rows.get(&Subject::item(item)),
                at_ms: now,
                session: "orchestrating",
                reason: format!(
                    "after {after_phase}: {reason} (estimate {estimate} of {threshold} tokens)"
                ),
            }),
            Entry::ConductorRotated { task, rotation } => rotations.push(Rotation {
                row: rows.get(&Subject::task(task, None)),
                at_ms: now,
                session: "conductor",
                reason: format!(
                    "{} ({} context tokens, {} tasks, {} bytes of feedback)",
                    rotation.reason.as_str(),
                    rotation.context_tokens,
                    rotation.tasks,
                    rotation.feedback_bytes
                ),
            }),
            Entry::TaskGateOpened { task, gate, .. } => gates.push(GateWait {
                row: rows.get(&Subject::task(task, None)),
                gate: gate.clone(),
                start_ms: now,
                end_ms: now,
                decision: None,
            }),
            Entry::TaskGateDecided { gate, decision, .. } => {
                if let Some(g) = gates
                    .iter_mut()
                    .rev()
                    .find(|g| &g.gate == gate && g.decision.is_none())
                {
                    g.end_ms = now;
                    g.decision = Some(decision.clone());
                }
            }
            Entry::ChecksRun {
                subject,
                phase,
                attempt,
                results,
                ..
            } => {
                let row = rows.get(subject);
                checks.extend(results.iter().map(|r| CheckRun {
                    row,
                    phase: phase.clone(),
                    attempt: *attempt,
                    result: r.clone(),
                }));
            }
            Entry::Interrupted { .. } => interrupted = true,
            Entry::RunFinished { .. } | Entry::Closed { .. } => finished = true,
            _ => {}
        }
    }
    // A gate still open waits until the last thing the journal knows.
    for g in gates.iter_mut().filter(|g| g.decision.is_none()) {
        g.end_ms = last;
    }
    let state = if finished {
        "finished"
    } else if interrupted {
        "interrupted"
    } else {
        "unfinished"
    };
    let still = if finished || interrupted {
        Status::Interrupted
    } else {
        Status::Running
    };
    let mut unfinished: Vec<_> = open.into_iter().collect();
    unfinished.sort_by_key(|(_, start)| *start);
    for ((subject, phase, attempt), start) in unfinished {
        phases.push(Phase {
            row: rows.get(&subject),
            phase,
            attempt,
            start_ms: start,
            end_ms: last.max(start),
            status: still,
            detail: "started, not finished".into(),
            usage: Usage::default(),
            cost_usd: None,
            prompt_tokens: 0,
            budget: None,
            context_peak: None,
            context_budget: None,
            over_budget: false,
            duration_ms: last.saturating_sub(start),
            prompt: None,
            log: None,
            masks: vec![],
            lane: 0,
        });
    }
    phases.sort_by_key(|p| (p.start_ms, p.end_ms));
    let lanes = assign_lanes(&mut phases);
    let waves = waves
        .iter()
        .filter_map(|w| {
            let n = |k: &str| w.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0);
            let ts = |k: &str| w.get(k).and_then(|v| v.as_str()).map(at);
            Some(Wave {
                wave: n("wave"),
                start_ms: ts("started_at")?,
                end_ms: ts("ended_at")?,
                tasks: match w.get("tasks") {
                    Some(serde_json::Value::Array(a)) => a
                        .iter()
                        .map(|t| t.as_str().map_or_else(|| t.to_string(), str::to_string))
                        .collect::<Vec<_>>()
                        .join(", "),
                    _ => String::new(),
                },
                savings_ms: n("savings_ms"),
            })
        })
        .collect();
    let totals = totals(&phases, &gates, &masks, lanes, last);
    let span_ms = phases
        .iter()
        .map(|p| p.end_ms)
        .chain(gates.iter().map(|g| g.end_ms))
        .chain([last])
        .max()
        .unwrap_or(0)
        .max(1);
    Model {
        run_id,
        workflow,
        subjects,
        started_at: records.first().map(|r| r.ts.clone()).unwrap_or_default(),
        updated_at: records.last().map(|r| r.ts.clone()).unwrap_or_default(),
        state: state.into(),
        span_ms,
        rows: rows.rows,
        phases,
        gates,
        rotations,
        checks,
        deferred: Vec::new(),
        waves,
        masks,
        masks_unreadable,
        masks_unreadable_files,
        totals,
        run_dir: run_dir.to_path_buf(),
    }
}

/// Give each attempt (sorted by start) the first slot free at its start; returns how many
/// slots the run used — the most attempts that ran at once.
fn assign_lanes(phases: &mut [Phase]) -> usize {
    let mut free_at: Vec<u64> = vec![];
    for p in phases.iter_mut() {
        let lane = match free_at.iter().position(|&end| end <= p.start_ms) {
            Some(i) => i,
            None => {
                free_at.push(0);
                free_at.len() - 1
            }
        };
        free_at[lane] = p.end_ms.max(p.start_ms + 1);
        p.lane = lane;
    }
    free_at.len()
}

fn totals(
    phases: &[Phase],
    gates: &[GateWait],
    masks: &[MaskRecord],
    lanes: usize,
    wall_ms: u64,
) -> Totals {
    let mut t = Totals {
        phases: phases.len(),
        lanes,
        wall_ms,
        masked_outputs: masks.len(),
        mask_tokens_saved: masks.iter().map(MaskRecord::saved).sum(),
        gate_wait_ms: gates.iter().map(|g| g.end_ms - g.start_ms).sum(),
        ..Totals::default()
    };
    let mut counts: Vec<(Status, usize)> = vec![];
    // The union of the intervals (phases are sorted by start).
    let mut cover: Option<(u64, u64)> = None;
    for p in phases {
        t.tokens += p.usage.total();
        t.prompt_tokens += p.prompt_tokens;
        t.cost_usd += p.cost_usd.unwrap_or(0.0);
        t.retries += usize::from(p.attempt > 1);
        t.phase_ms += p.end_ms - p.start_ms;
        match counts.iter_mut().find(|(s, _)| *s == p.status) {
            Some(c) => c.1 += 1,
            None => counts.push((p.status, 1)),
        }
        cover = match cover {
            Some((s, e)) if p.start_ms <= e => Some((s, e.max(p.end_ms))),
            Some((s, e)) => {
                t.busy_ms += e - s;
                Some((p.start_ms, p.end_ms))
            }
            None => Some((p.start_ms, p.end_ms)),
        };
    }
    if let Some((s, e)) = cover {
        t.busy_ms += e - s;
    }
    t.parallel_savings_ms = t.phase_ms.saturating_sub(t.busy_ms);
    t.by_status = counts;
    t
}

/// Kind of the rows, for the report's headings: stories, tasks, items.
pub fn row_word(rows: &[Row]) -> &'static str {
    match rows.iter().find(|r| r.subject.kind != SubjectKind::Epic) {
        Some(r) => match r.subject.kind {
            SubjectKind::Story | SubjectKind::Epic => "story",
            SubjectKind::Task => "task",
            SubjectKind::Item => "item",
        },
        None => "story",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(seq: u64, ms: u64, entry: Entry) -> Record {
        let ts = jiff::Timestamp::from_millisecond(1_700_000_000_000 + ms as i64)
            .unwrap()
            .to_string();
        Record {
            v: 2,
            seq,
            ts,
            entry,
        }
    }

    fn outcome(ok: bool, dur: u64) -> baton_engine::journal::PhaseOutcome {
        let mut o = baton_engine::journal::PhaseOutcome::broken("x".into(), 100);
        o.ok = ok;
        o.judged = Some(if ok { Judged::Passed } else { Judged::Rejected });
        o.duration_ms = dur;
        o.usage.input = 10;
        o.cost_usd = Some(0.5);
        o
    }

    #[test]
    fn parallel_phases_get_lanes_and_savings_and_open_ones_are_interrupted() {
        let a = Subject::story("1", "1.1");
        let b = Subject::story("1", "1.2");
        let start = |s: &Subject, p: &str| Entry::PhaseStarted {
            subject: s.clone(),
            phase: p.into(),
            attempt: 1,
        };
        let fin = |s: &Subject, p: &str, ok: bool| Entry::PhaseFinished {
            subject: s.clone(),
            phase: p.into(),
            attempt: 1,
            outcome: outcome(ok, 100),
        };
        let records = vec![
            rec(
                1,
                0,
                Entry::RunStarted {
                    run_id: "r".into(),
                    workflow: "epic-execute".into(),
                    subjects: vec!["1".into()],
                    options: serde_json::json!({}),
                },
            ),
            rec(2, 0, start(&a, "dev")),
            rec(3, 50, start(&b, "dev")),
            rec(4, 100, fin(&a, "dev", true)),
            rec(5, 150, fin(&b, "dev", false)),
            rec(6, 200, start(&a, "review")),
            rec(
                7,
                300,
                Entry::Interrupted {
                    signal: "SIGINT".into(),
                },
            ),
        ];
        let m = build(Path::new("/nonexistent"), &records, &[]);
        assert_eq!(m.rows.len(), 2);
        assert_eq!(m.phases.len(), 3);
        assert_eq!(m.state, "interrupted");
        assert_eq!(m.totals.lanes, 2);
        assert_eq!(m.phases[1].lane, 1);
        // 0–100 and 50–150 overlap: 200 ms of phases in 150 ms, then 200–300.
        assert_eq!(m.totals.phase_ms, 300);
        assert_eq!(m.totals.busy_ms, 250);
        assert_eq!(m.totals.parallel_savings_ms, 50);
        assert_eq!(m.phases[2].status, Status::Interrupted);
        assert_eq!(m.phases[1].status, Status::Rejected);
        assert_eq!(m.totals.tokens, 20);
        assert!((m.totals.cost_usd - 1.0).abs() < 1e-9);
    }
}
