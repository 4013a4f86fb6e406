//! Task workflows (orchestrate, poc, graduate): a task of the store through its phases, each a
//! fresh agent process that reads the store's artifacts by path and writes one output file,
//! which baton stores through COMPLETE_PHASE. The store's manifest is the task's state (gates,
//! pauses, decisions); the run's journal records every agent call so a killed run resumes
//! without repeating one. The engine is plain sequential code run from the top on every
//! (re)start: each step first asks the journal whether it already happened.

pub mod def;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::context::markdown;
use crate::context::signals::Grammar;
use crate::error::{Error, Result};
use crate::run::agents::{Agents, Assignment, Request};
use crate::run::call::{Call, Pipeline, Verdict as Judgement, judge_signal};
use crate::run::conductor::{Conductor, Report};
use crate::run::events::{Reporter, RunEvent, Subject};
use crate::run::journal::{Entry, Journal, Judged, PhaseOutcome, Usage};
use crate::run::lock;
use crate::run::prompt::render;
use crate::store::model::{Decision, Gate, Manifest, PhaseStatus, Status, phase_label};
use crate::store::{Content, Store, artifacts};
use def::{TaskPhase, TaskWorkflow};

/// One task of a spec's `## Tasks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecTask {
    pub id: String,
    pub title: String,
    pub depends_on: Vec<String>,
    pub files: Vec<String>,
}

/// The tasks of a spec (or a poc's architect.md): every heading `Task <id>: <title>` (any
/// level), with `Depends on: 1, 2` (or `none`) and `Files: …` lines in its section.
pub fn parse_tasks(text: &str) -> Vec<SpecTask> {
    let mut out = Vec::new();
    for s in markdown::sections(text) {
        let title = s.title.trim();
        let Some(rest) = title
            .strip_prefix("Task ")
            .or_else(|| title.strip_prefix("task "))
        else {
            continue;
        };
        let (id, name) = match rest.split_once(':') {
            Some((id, name)) => (id.trim(), name.trim()),
            None => (rest.trim(), ""),
        };
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let mut t = SpecTask {
            id: id.to_string(),
            title: name.to_string(),
            depends_on: vec![],
            files: vec![],
        };
        // Only the section's own lines up to the next heading.
        for line in s.text(text).lines().skip(1) {
            if line.trim_start().starts_with('#') {
                break;
            }
            let l = line
                .trim()
                .trim_start_matches(['-', '*', ' '])
                .replace("**", "");
            let list = |v: &str| -> Vec<String> {
                v.split(',')
                    .map(|x| {
                        x.trim()
                            .trim_matches('`')
                            .trim_start_matches("Task ")
                            .trim()
                    })
                    .filter(|x| !x.is_empty() && !x.eq_ignore_ascii_case("none"))
                    .map(str::to_string)
                    .collect()
            };
            if let Some(v) = l.strip_prefix("Depends on:") {
                t.depends_on = list(v);
            } else if let Some(v) = l.strip_prefix("Files:") {
                t.files = list(v);
            }
        }
        if !out.iter().any(|o: &SpecTask| o.id == t.id) {
            out.push(t);
        }
    }
    out
}

/// Topological levels: wave 1 holds the tasks without dependencies, wave k those whose
/// dependencies are all in earlier waves. Errors name `source` and what is wrong.
pub fn compute_waves(
    tasks: &[SpecTask],
    source: &str,
) -> std::result::Result<Vec<Vec<String>>, String> {
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    for t in tasks {
        for d in &t.depends_on {
            if !ids.contains(&d.as_str()) {
                return Err(format!(
                    "{source}: task {} depends on task {d}, which {source} does not define (tasks: {})",
                    t.id,
                    ids.join(", ")
                ));
            }
            if d == &t.id {
                return Err(format!("{source}: task {} depends on itself", t.id));
            }
        }
    }
    let mut level: HashMap<&str, usize> = HashMap::new();
    let mut waves: Vec<Vec<String>> = Vec::new();
    while level.len() < tasks.len() {
        let ready: Vec<&SpecTask> = tasks
            .iter()
            .filter(|t| !level.contains_key(t.id.as_str()))
            .filter(|t| t.depends_on.iter().all(|d| level.contains_key(d.as_str())))
            .collect();
        if ready.is_empty() {
            let left: Vec<&str> = tasks
                .iter()
                .filter(|t| !level.contains_key(t.id.as_str()))
                .map(|t| t.id.as_str())
                .collect();
            return Err(format!(
                "{source}: dependency cycle among tasks {}",
                left.join(", ")
            ));
        }
        let k = waves.len();
        for t in &ready {
            level.insert(t.id.as_str(), k);
        }
        waves.push(ready.iter().map(|t| t.id.clone()).collect());
    }
    Ok(waves)
}

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Completed,
    Failed,
    Shelved,
    Cancelled,
    Paused(String),
    /// `--no-wait`: the task waits at this gate.
    Waiting(Gate),
}

/// How one attempt of a phase came out.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Verdict {
    Pass,
    /// An audit said failed (its report is stored): the repair loop answers it.
    Fail(String),
    /// The phase did not work (no signal, agent error, no output): tried again, then paused.
    Error(String),
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TaskOptions {
    pub agent: Option<String>,
    pub default_agent: String,
    #[serde(default)]
    pub roles: BTreeMap<String, crate::run::definition::Role>,
    /// Implementation tasks at once; 0: the workflow's `policy.parallel`.
    #[serde(default)]
    pub parallel: usize,
    #[serde(default)]
    pub no_wait: bool,
    /// graduate: the completed poc task this one graduates.
    #[serde(default)]
    pub from: Option<String>,
}

/// A finished unit of work (an implementation task's attempt, an implementation audit): what
/// the conductor session is told of.
#[derive(Debug, Clone)]
pub struct TaskDone<'a> {
    pub phase: &'a str,
    pub task_id: Option<&'a str>,
    pub ok: bool,
    /// The signal line, or why it failed.
    pub detail: &'a str,
}

pub struct TaskEngine<'a> {
    pub project_dir: PathBuf,
    pub store: Store,
    pub slug: String,
    /// The workflow the run walks (orchestrate, poc, graduate), and the one a `lite` decision
    /// switches to.
    pub wf: TaskWorkflow,
    pub wf_text: (String, String),
    pub poc_wf: Option<(TaskWorkflow, String, String)>,
    pub journal: Mutex<Journal>,
    pub agents: &'a dyn Agents,
    pub reporter: &'a dyn Reporter,
    pub opts: TaskOptions,
    pub prompts_dir: PathBuf,
    pub attempts: Mutex<HashMap<String, u32>>,
    pub printed: Mutex<Vec<String>>,
    /// The workflow's conductor session, if it has one (reports are serialized through it).
    pub conductor: Option<Mutex<Conductor>>,
}

impl TaskEngine<'_> {
    fn log(&self, e: Entry) -> Result<()> {
        lock(&self.journal).log(e)
    }

    fn subject(&self) -> Subject {
        Subject::task(&self.slug, None)
    }

    fn say(&self, text: &str) {
        self.reporter.report(&RunEvent::Note {
            subject: Some(&self.subject()),
            text,
        });
    }

    fn calls(&self) -> Pipeline<'_> {
        Pipeline {
            journal: &self.journal,
            agents: self.agents,
            reporter: self.reporter,
            dry_run: None,
        }
    }

    fn manifest(&self) -> Result<Manifest> {
        self.store.manifest(&self.slug)
    }

    fn rel(&self, p: &Path) -> String {
        p.strip_prefix(&self.project_dir)
            .unwrap_or(p)
            .display()
            .to_string()
    }

    fn task_rel(&self, slug: &str) -> String {
        self.rel(&self.store.task_dir(slug))
    }

    /// Run the workflow from the top (replaying what the journal holds) until it stops.
    pub fn run(&self) -> Result<Stop> {
        let wf = self.wf.clone();
        let (source, text) = self.wf_text.clone();
        self.walk(&wf, &wf.order(&source, &text)?, None)
    }

    fn walk(&self, wf: &TaskWorkflow, order: &[String], from: Option<&str>) -> Result<Stop> {
        let start = from
            .and_then(|f| order.iter().position(|p| p == f))
            .unwrap_or(0);
        for name in &order[start..] {
            let p = wf.phase(name).expect("ordered phases are defined").clone();
            let stop = match name.as_str() {
                "implementation" => self.implementation(wf, &p)?,
                "tests" => self.tests(wf, &p)?,
                "test-results" if !wf.test_command.is_empty() => self.test_command(wf, &p)?,
                _ if p.repair.is_some() => self.audit(wf, &p)?,
                _ => self.single(wf, &p, None)?,
            };
            if let Some(s) = stop {
                return Ok(s);
            }
            if name == "design-audit" {
                for gate in [Gate::Investigation, Gate::Design] {
                    match self.gate(wf, gate)? {
                        Err(stop) => return Ok(stop),
                        Ok(Decision::Lite) => return self.lite(),
                        Ok(Decision::Full | Decision::Approve) => {}
                        Ok(Decision::Shelf) => return Ok(Stop::Shelved),
                        Ok(Decision::Cancel) => return Ok(Stop::Cancelled),
                        Ok(_) => return Ok(Stop::Failed),
                    }
                }
            }
        }
        if self.manifest()?.workflow == crate::store::model::Workflow::Graduate {
            self.graduate_complete()?;
        }
        match self.gate(wf, Gate::Final)? {
            Err(stop) => Ok(stop),
            Ok(Decision::Approve) => Ok(Stop::Completed),
            Ok(_) => Ok(Stop::Failed),
        }
    }

    /// Investigation gate + lite: the task became a poc; go on with the poc workflow's
    /// implementation (then its debt phase).
    fn lite(&self) -> Result<Stop> {
        let (wf, source, text) = self
            .poc_wf
            .clone()
            .ok_or_else(|| Error::internal("no poc workflow loaded"))?;
        self.say(&format!("{}: lite → the task is now a poc", self.slug));
        let order = wf.order(&source, &text)?;
        self.walk(&wf, &order, Some("implementation"))
    }

    fn graduate_complete(&self) -> Result<()> {
        let m = self.manifest()?;
        let dir = self.store.task_dir(&self.slug);
        if artifacts::latest(&dir, "graduate-complete").is_some() || m.status != Status::Running {
            return Ok(());
        }
        let from = self.opts.from.clone().unwrap_or_default();
        let impls: Vec<String> = m
            .completed_phases
            .iter()
            .filter(|c| c.phase == "implementation" && c.status == PhaseStatus::Success)
            .map(|c| c.label())
            .collect();
        let text = format!(
            "# Graduated: {from} → {}\n\nThe proof of concept `{from}` went through the standard path: spec, implementation ({}), tests, test results and the implementation audit.\n\nPoc artifacts: {}\n",
            self.slug,
            impls.join(", "),
            self.task_rel(&from)
        );
        self.store.store(
            &self.slug,
            "graduate-complete",
            Content {
                text,
                ..Content::default()
            },
        )?;
        self.say(&format!("{}: graduate-complete stored", self.slug));
        Ok(())
    }

    /// The point every finished unit of work passes: after each implementation task's attempt
    /// and each implementation audit. The conductor session, when the workflow has one, is told
    /// of it (resumed, or fresh and seeded with the task's state after a rotation). Its notes
    /// are advisory: a conductor that fails is reported and the run goes on.
    fn task_completed(&self, wf: &TaskWorkflow, done: TaskDone) -> Result<()> {
        let Some(conductor) = &self.conductor else {
            return Ok(());
        };
        let label = phase_label(done.phase, done.task_id);
        let attempt = lock(&self.attempts).get(&label).copied().unwrap_or(1);
        let key = format!("{label}@{attempt}");
        let recorded = lock(&self.journal)
            .records
            .iter()
            .any(|r| matches!(&r.entry, Entry::ConductorCalled { key: k, .. } if *k == key));
        if recorded {
            return Ok(());
        }
        let mut c = lock(conductor);
        let dir = self.store.task_dir(&self.slug);
        // What the report hands over: a finished task counts as a task; an audit's findings
        // and a failure's reason are feedback (the audit is read from its file, so its size).
        let (tasks, feedback_bytes, item, feedback_files) = match done.task_id {
            Some(id) => {
                let path = artifacts::latest(&dir, &format!("implementations/task-{id}"))
                    .map(|p| self.rel(&p))
                    .unwrap_or_else(|| "(no report stored)".into());
                let (tasks, feedback) = if done.ok {
                    (1, 0)
                } else {
                    (0, done.detail.len() as u64)
                };
                let result = if done.ok {
                    "done".to_string()
                } else {
                    format!("failed ({})", done.detail)
                };
                let item =
                    serde_json::json!({"id": id, "title": label, "result": result, "path": path});
                (tasks, feedback, Some(item), vec![])
            }
            None => {
                let audit = artifacts::latest(&dir, done.phase);
                let bytes = audit
                    .as_ref()
                    .and_then(|p| std::fs::metadata(p).ok())
                    .map_or(done.detail.len() as u64, |m| m.len());
                (
                    0,
                    bytes,
                    None,
                    audit.map(|p| self.rel(&p)).into_iter().collect(),
                )
            }
        };
        let news = format!(
            "{label} {} — {}",
            if done.ok { "passed" } else { "failed" },
            done.detail
        );
        let notes = self.run_dir().join("conductor-notes.md");
        let run_dir = self.run_dir();
        let name = format!("conductor-{}", key.replace(['#', '@'], "-"));
        let template_name = wf
            .conductor
            .as_ref()
            .map_or("conductor".into(), |d| d.template.clone());
        let last_rotation = c.meter.last_rotation;
        // Only the prompt the session needs is made: the state summary is read for a fresh one.
        let make_prompt = |fresh: bool| -> Result<String> {
            let template = crate::run::prompt::template(&template_name, &self.prompts_dir)?;
            let state_summary = if fresh {
                crate::store::view::summary(&self.manifest()?).render()
            } else {
                String::new()
            };
            let ctx = serde_json::json!({
                "task": self.slug,
                "notes_file": self.rel(&notes),
                "news": news,
                "tasks": item.iter().collect::<Vec<_>>(),
                "feedback_files": feedback_files,
                "fresh": fresh,
                "rotated": last_rotation.filter(|_| fresh).map(|r| format!("reason: {}", r.as_str())),
                "state_summary": state_summary,
            });
            let prompt = render(&template_name, &template, &ctx)?;
            crate::store::fs::write_atomic(
                &run_dir.join("prompts").join(format!("{name}.md")),
                prompt.as_bytes(),
            )?;
            Ok(prompt)
        };
        let base = Request {
            name: name.clone(),
            prompt: "",
            cwd: self.project_dir.clone(),
            log_dir: run_dir.join("logs"),
            timeout: Duration::from_secs(wf.policy.timeout_secs),
            grace: Duration::from_secs(wf.policy.grace_secs),
            resume: None,
        };
        let report = Report {
            prompt: &make_prompt,
            tasks,
            feedback_bytes,
        };
        // Advisory: a conductor that cannot be run (unknown agent, broken template) is said
        // and journaled like a failed report; the run goes on.
        let (reply, rotation) = c.report(self.agents, &base, &report).unwrap_or_else(|e| {
            (
                crate::run::agents::Reply {
                    error: Some(e.to_string()),
                    ..Default::default()
                },
                None,
            )
        });
        let signal = format!("CONDUCTOR UPDATED: {}", self.slug);
        let ok = reply.ok && reply.text.lines().any(|l| l.trim() == signal);
        let detail = if ok {
            signal
        } else {
            reply
                .error
                .clone()
                .unwrap_or_else(|| "no CONDUCTOR UPDATED line".into())
        };
        self.log(Entry::ConductorCalled {
            task: self.slug.clone(),
            key,
            ok,
            detail: detail.clone(),
            meter: c.meter.clone(),
        })?;
        if !ok {
            self.say(&format!("  ! conductor: {detail} (the run goes on)"));
        }
        if let Some(r) = rotation {
            let line = format!(
                "CONDUCTOR rotated ({}): {} tokens, {} tasks, {} bytes of feedback in {} calls",
                r.reason.as_str(),
                r.context_tokens,
                r.tasks,
                r.feedback_bytes,
                r.calls
            );
            self.log(Entry::ConductorRotated {
                task: self.slug.clone(),
                rotation: r,
            })?;
            self.store.note(&self.slug, &line)?;
            self.reporter.report(&RunEvent::Rotated {
                subject: &self.subject(),
                session: "conductor",
                reason: &line,
            });
        }
        Ok(())
    }

    // ---- phases -------------------------------------------------------------------------------

    /// A phase run once (retried per the policy, then the task paused).
    fn single(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        iteration: Option<u32>,
    ) -> Result<Option<Stop>> {
        let mut fails = 0;
        loop {
            match self.phase(wf, p, None, None, iteration)? {
                Verdict::Pass => return Ok(None),
                Verdict::Fail(why) | Verdict::Error(why) => {
                    fails += 1;
                    if fails < wf.policy.max_attempts {
                        continue;
                    }
                    fails = 0;
                    if let Some(stop) = self.pause_point(&p.name, &why)? {
                        return Ok(Some(stop));
                    }
                }
            }
        }
    }

    /// An audit with its repair loop: a failed verdict runs the repair phase, then audits again,
    /// at most `max_revisions` (design) or `max_fixes` (implementation) times; then PAUSE.
    fn audit(&self, wf: &TaskWorkflow, p: &TaskPhase) -> Result<Option<Stop>> {
        let repair = wf
            .phase(p.repair.as_deref().unwrap_or_default())
            .cloned()
            .ok_or_else(|| Error::internal("repair phase missing"))?;
        let max = if p.name == "design-audit" {
            wf.policy.max_revisions
        } else {
            wf.policy.max_fixes
        };
        let mut repairs = 0;
        let mut fails = 0;
        loop {
            match self.phase(wf, p, None, None, None)? {
                Verdict::Pass => {
                    if p.name == "impl-audit" {
                        let detail = self.last_detail(&p.name, None);
                        self.task_completed(
                            wf,
                            TaskDone {
                                phase: &p.name,
                                task_id: None,
                                ok: true,
                                detail: &detail,
                            },
                        )?;
                    }
                    return Ok(None);
                }
                Verdict::Error(why) => {
                    fails += 1;
                    if fails < wf.policy.max_attempts {
                        continue;
                    }
                    fails = 0;
                    if let Some(stop) = self.pause_point(&p.name, &why)? {
                        return Ok(Some(stop));
                    }
                }
                Verdict::Fail(why) => {
                    if p.name == "impl-audit" {
                        self.task_completed(
                            wf,
                            TaskDone {
                                phase: &p.name,
                                task_id: None,
                                ok: false,
                                detail: &why,
                            },
                        )?;
                    }
                    if repairs >= max {
                        let reason = format!(
                            "{} failed after {repairs} {}: {why}",
                            p.name,
                            if repairs == 1 { "repair" } else { "repairs" }
                        );
                        if let Some(stop) = self.pause_point(&p.name, &reason)? {
                            return Ok(Some(stop));
                        }
                        repairs = 0;
                        continue;
                    }
                    repairs += 1;
                    let n = self.next_iteration(&repair.name)?;
                    if let Some(stop) = self.single(wf, &repair, Some(n))? {
                        return Ok(Some(stop));
                    }
                }
            }
        }
    }

    /// The next free iteration of a numbered artifact (architect-revision-<n>.md) — or, when
    /// replaying, the one the recorded attempt stored.
    fn next_iteration(&self, phase: &str) -> Result<u32> {
        let dir = self.store.task_dir(&self.slug);
        let done = lock(&self.attempts).get(phase).copied().unwrap_or(0);
        // Replay: the attempts counted so far in this pass name the iteration.
        let mut n = 1;
        while dir.join(format!("{phase}-{n}.md")).exists() && n <= done {
            n += 1;
        }
        Ok(n)
    }

    /// The implementation tasks: spec.md's (graduate, orchestrate), architect.md's (poc), or
    /// one task for the whole change.
    fn spec_tasks(&self) -> Result<std::result::Result<(Vec<SpecTask>, String), String>> {
        let dir = self.store.task_dir(&self.slug);
        let mut sources = vec![("spec", artifacts::latest(&dir, "spec"))];
        sources.push(("architect", artifacts::latest(&dir, "architect")));
        for (name, path) in sources {
            let Some(path) = path else { continue };
            let text = crate::store::fs::read_text(&path)?;
            let tasks = parse_tasks(&text);
            if !tasks.is_empty() {
                let rel = path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Ok(Ok((tasks, rel)));
            }
            if name == "spec" {
                return Ok(Err(format!(
                    "{}: no tasks (expected `### Task 1: <title>` sections)",
                    self.rel(&path)
                )));
            }
        }
        Ok(Ok((
            vec![SpecTask {
                id: "1".into(),
                title: "the whole change".into(),
                depends_on: vec![],
                files: vec![],
            }],
            "architect.md".into(),
        )))
    }

    /// Implementation in waves: independent tasks at once (up to `parallel`), dependent ones in
    /// later waves; each task its own phase (`implementation#<id>`); each wave recorded.
    fn implementation(&self, wf: &TaskWorkflow, p: &TaskPhase) -> Result<Option<Stop>> {
        let (tasks, source) = loop {
            let parsed = self.spec_tasks()?.and_then(|(tasks, source)| {
                compute_waves(&tasks, &source).map(|w| (tasks, source, w))
            });
            match parsed {
                Ok((tasks, source, _)) => break (tasks, source),
                Err(why) => {
                    if let Some(stop) = self.pause_point("task-breakdown", &why)? {
                        return Ok(Some(stop));
                    }
                }
            }
        };
        let waves = compute_waves(&tasks, &source).map_err(Error::invalid)?;
        if self.manifest()?.waves.task_breakdown.is_none() {
            let breakdown = serde_json::json!({
                "source": source,
                "tasks": tasks,
                "waves": waves,
            });
            self.store.record_waves(&self.slug, breakdown)?;
        }
        self.say(&format!(
            "{}: {} tasks in {} waves ({})",
            self.slug,
            tasks.len(),
            waves.len(),
            waves
                .iter()
                .map(|w| w.join("+"))
                .collect::<Vec<_>>()
                .join(" → ")
        ));
        for (k, wave) in waves.iter().enumerate() {
            let recorded = self
                .manifest()?
                .waves
                .execution
                .iter()
                .any(|w| w["wave"].as_u64() == Some(k as u64 + 1));
            if recorded {
                // Replay: the wave ran; its phases replay from the journal.
                for id in wave {
                    let t = tasks.iter().find(|t| &t.id == id);
                    self.task_phase_replay(wf, p, id, t)?;
                }
                continue;
            }
            let mut pending: Vec<String> = wave.clone();
            let mut round = 0;
            loop {
                round += 1;
                let results = self.parallel(wf, p, &pending, &tasks)?;
                let failed: Vec<(String, String)> = results
                    .into_iter()
                    .filter_map(|(id, v)| match v {
                        Verdict::Pass => None,
                        Verdict::Fail(w) | Verdict::Error(w) => Some((id, w)),
                    })
                    .collect();
                if failed.is_empty() {
                    break;
                }
                let why = failed
                    .iter()
                    .map(|(id, w)| format!("implementation#{id}: {w}"))
                    .collect::<Vec<_>>()
                    .join("; ");
                if let Some(stop) = self.pause_point(&format!("wave-{}@{round}", k + 1), &why)? {
                    return Ok(Some(stop));
                }
                pending = failed.into_iter().map(|(id, _)| id).collect();
            }
            let wave_json = self.wave_record(k + 1, wave)?;
            self.say(&format!(
                "  wave {}: {} tasks, {} ms wall, {} ms of work, {} ms saved",
                k + 1,
                wave.len(),
                wave_json["wall_ms"],
                wave_json["sum_task_ms"],
                wave_json["savings_ms"]
            ));
            self.store.record_wave(&self.slug, wave_json)?;
        }
        Ok(None)
    }

    /// Walk a recorded wave's task phases through the journal so attempt counters match.
    fn task_phase_replay(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        id: &str,
        t: Option<&SpecTask>,
    ) -> Result<()> {
        loop {
            let attempt = lock(&self.attempts)
                .get(&phase_label(&p.name, Some(id)))
                .copied()
                .unwrap_or(0)
                + 1;
            let recorded = lock(&self.journal)
                .finished_phase(&Subject::task(&self.slug, Some(id)), &p.name, attempt)
                .is_some();
            if !recorded {
                return Ok(());
            }
            self.phase(wf, p, Some(id), t, None)?;
        }
    }

    /// Wave timings from the store's own phase records: the tasks' phase intervals (every
    /// attempt), their sum, the wall time they covered, and the difference (time saved).
    fn wave_record(&self, n: usize, wave: &[String]) -> Result<serde_json::Value> {
        let m = self.manifest()?;
        let mut spans: Vec<(i64, i64)> = Vec::new();
        let mut sum: u64 = 0;
        let (mut first, mut last) = (String::new(), String::new());
        for c in m.completed_phases.iter() {
            if c.phase != "implementation"
                || !c.task_id.as_ref().is_some_and(|id| wave.contains(id))
            {
                continue;
            }
            sum += c.duration_ms;
            if let (Some(a), Some(b)) = (
                crate::store::machine::epoch_ms(&c.started_at),
                crate::store::machine::epoch_ms(&c.ended_at),
            ) {
                spans.push((a, b));
            }
            if first.is_empty() || c.started_at < first {
                first = c.started_at.clone();
            }
            if c.ended_at > last {
                last = c.ended_at.clone();
            }
        }
        spans.sort_unstable();
        let mut wall: i64 = 0;
        let mut cur: Option<(i64, i64)> = None;
        for (s, e) in spans {
            cur = match cur {
                Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
                Some((cs, ce)) => {
                    wall += ce - cs;
                    Some((s, e))
                }
                None => Some((s, e)),
            };
        }
        wall += cur.map_or(0, |(s, e)| e - s);
        let wall = wall.max(0) as u64;
        Ok(serde_json::json!({
            "wave": n,
            "tasks": wave,
            "started_at": first,
            "ended_at": last,
            "wall_ms": wall,
            "sum_task_ms": sum,
            "savings_ms": sum.saturating_sub(wall),
        }))
    }

    /// Run `ids` of phase `p` at once, up to `parallel` threads.
    fn parallel(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        ids: &[String],
        tasks: &[SpecTask],
    ) -> Result<Vec<(String, Verdict)>> {
        let n = if self.opts.parallel > 0 {
            self.opts.parallel
        } else {
            wf.policy.parallel
        }
        .max(1)
        .min(ids.len().max(1));
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<(String, Result<Verdict>)>> = Mutex::new(vec![]);
        std::thread::scope(|sc| {
            for _ in 0..n {
                sc.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(id) = ids.get(i) else { break };
                        let t = tasks.iter().find(|t| &t.id == id);
                        let r = self.task_attempts(wf, p, id, t);
                        lock(&results).push((id.clone(), r));
                    }
                });
            }
        });
        let mut out = Vec::new();
        for (id, r) in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
            out.push((id, r?));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// One task's phase, tried up to `max_attempts` times.
    fn task_attempts(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        id: &str,
        t: Option<&SpecTask>,
    ) -> Result<Verdict> {
        let mut last = Verdict::Error("not run".into());
        for _ in 0..wf.policy.max_attempts {
            last = self.phase(wf, p, Some(id), t, None)?;
            if p.name == "implementation" {
                let detail = match &last {
                    Verdict::Pass => self.last_detail(&p.name, Some(id)),
                    Verdict::Fail(w) | Verdict::Error(w) => w.clone(),
                };
                self.task_completed(
                    wf,
                    TaskDone {
                        phase: &p.name,
                        task_id: Some(id),
                        ok: last == Verdict::Pass,
                        detail: &detail,
                    },
                )?;
            }
            if last == Verdict::Pass {
                break;
            }
        }
        Ok(last)
    }

    /// Tests: one phase per implementation task, all at once (up to `parallel`).
    fn tests(&self, wf: &TaskWorkflow, p: &TaskPhase) -> Result<Option<Stop>> {
        let (tasks, _) = match self.spec_tasks()? {
            Ok(t) => t,
            Err(why) => return Err(Error::invalid(why)),
        };
        let mut pending: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
        let mut round = 0;
        loop {
            round += 1;
            let failed: Vec<(String, Verdict)> = self
                .parallel(wf, p, &pending, &tasks)?
                .into_iter()
                .filter(|(_, v)| *v != Verdict::Pass)
                .collect();
            if failed.is_empty() {
                return Ok(None);
            }
            let why = failed
                .iter()
                .map(|(id, v)| format!("tests#{id}: {v:?}"))
                .collect::<Vec<_>>()
                .join("; ");
            if let Some(stop) = self.pause_point(&format!("tests@{round}"), &why)? {
                return Ok(Some(stop));
            }
            pending = failed.into_iter().map(|(id, _)| id).collect();
        }
    }

    /// test-results by baton itself: the workflow's test command, masked (zero tokens).
    fn test_command(&self, wf: &TaskWorkflow, p: &TaskPhase) -> Result<Option<Stop>> {
        loop {
            let label = p.name.clone();
            let attempt = self.bump(&label);
            let key = format!("{label}@{attempt}");
            let subject = Subject::task(&self.slug, None);
            let done = lock(&self.journal)
                .finished_phase(&subject, &p.name, attempt)
                .cloned();
            let m = self.manifest()?;
            if !m.running_phases.iter().any(|r| r.label() == label)
                && !self.store_has(&m, &p.name, None, attempt)
            {
                self.store.begin_phase(&self.slug, &p.name, None, &[])?;
            }
            let (outcome, text) = match done {
                Some(o) => {
                    let text =
                        std::fs::read_to_string(self.out_file(&label, attempt)).unwrap_or_default();
                    (o, text)
                }
                None => {
                    self.log(Entry::PhaseStarted {
                        subject: subject.clone(),
                        phase: p.name.clone(),
                        attempt,
                    })?;
                    self.reporter.report(&RunEvent::PhaseStarted {
                        subject: &subject,
                        phase: &p.name,
                        attempt,
                        agent: "baton",
                        model: None,
                    });
                    let started = std::time::Instant::now();
                    let out = std::process::Command::new(&wf.test_command[0])
                        .args(&wf.test_command[1..])
                        .current_dir(&self.project_dir)
                        .stdin(std::process::Stdio::null())
                        .output();
                    let (ok, detail, text) = match out {
                        Ok(o) => {
                            let mut all = o.stdout.clone();
                            all.extend_from_slice(&o.stderr);
                            let s = crate::context::mask::summarize_command_output(
                                crate::context::mask::Kind::Auto,
                                &wf.test_command,
                                &all,
                            );
                            let json = serde_json::to_string_pretty(&s).unwrap_or_default();
                            let text = format!(
                                "# Test results\n\nCommand: `{}` (run by baton, output masked)\nExit: {}\n\n## Summary\n\n{}\n\n```json\n{json}\n```\n",
                                wf.test_command.join(" "),
                                o.status.code().map_or("signal".into(), |c| c.to_string()),
                                s.summary
                            );
                            (o.status.success(), s.summary.clone(), text)
                        }
                        Err(e) => (
                            false,
                            format!("cannot run {}: {e}", wf.test_command[0]),
                            String::new(),
                        ),
                    };
                    if !text.is_empty() {
                        crate::store::fs::write_atomic(
                            &self.out_file(&label, attempt),
                            text.as_bytes(),
                        )?;
                    }
                    let o = PhaseOutcome {
                        ok,
                        detail,
                        recommendation: None,
                        usage: Usage::default(),
                        cost_usd: None,
                        duration_ms: started.elapsed().as_millis() as u64,
                        session_id: None,
                        prompt_tokens: 0,
                        log: None,
                        judged: Some(if ok { Judged::Passed } else { Judged::Rejected }),
                        kept: None,
                    };
                    self.log(Entry::PhaseFinished {
                        subject: subject.clone(),
                        phase: p.name.clone(),
                        attempt,
                        outcome: o.clone(),
                    })?;
                    self.reporter.report(&RunEvent::PhaseFinished {
                        subject: &subject,
                        phase: &p.name,
                        attempt,
                        outcome: &o,
                    });
                    (o, text)
                }
            };
            let m = self.manifest()?;
            if !self.store_has(&m, &p.name, None, attempt) {
                let status = if outcome.ok {
                    PhaseStatus::Success
                } else {
                    PhaseStatus::Failed
                };
                let content = (!text.trim().is_empty()).then(|| Content {
                    text: text.clone(),
                    ..Content::default()
                });
                self.store
                    .complete_phase(&self.slug, &p.name, None, status, content)?;
            }
            if outcome.ok {
                return Ok(None);
            }
            if let Some(stop) =
                self.pause_point(&key, &format!("tests fail: {}", outcome.detail))?
            {
                return Ok(Some(stop));
            }
        }
    }

    /// The recorded detail (signal line) of a phase's latest attempt.
    fn last_detail(&self, phase: &str, task_id: Option<&str>) -> String {
        let label = phase_label(phase, task_id);
        let attempt = lock(&self.attempts).get(&label).copied().unwrap_or(1);
        lock(&self.journal)
            .finished_phase(&Subject::task(&self.slug, task_id), phase, attempt)
            .map(|o| o.detail.clone())
            .unwrap_or_default()
    }

    fn bump(&self, label: &str) -> u32 {
        let mut a = lock(&self.attempts);
        let n = a.entry(label.to_string()).or_insert(0);
        *n += 1;
        *n
    }

    fn store_has(&self, m: &Manifest, phase: &str, task_id: Option<&str>, attempt: u32) -> bool {
        m.completed_phases
            .iter()
            .any(|c| c.phase == phase && c.task_id.as_deref() == task_id && c.attempt == attempt)
    }

    fn run_dir(&self) -> PathBuf {
        lock(&self.journal).dir.clone()
    }

    fn out_file(&self, label: &str, attempt: u32) -> PathBuf {
        self.run_dir()
            .join("out")
            .join(format!("{}-{attempt}.md", label.replace('#', "-")))
    }

    pub fn assignment(&self, wf: &TaskWorkflow, role: &str) -> Assignment {
        crate::run::definition::assign(
            role,
            self.opts.agent.as_deref(),
            &self.opts.roles,
            &wf.roles,
            &self.opts.default_agent,
        )
    }

    /// The store artifacts a prompt may name, as paths relative to the project.
    fn files(&self) -> serde_json::Value {
        let dir = self.store.task_dir(&self.slug);
        let rel = |p: Option<PathBuf>| p.map(|p| self.rel(&p));
        let all_of = |sub: &str| -> Vec<String> {
            let mut v: Vec<String> = std::fs::read_dir(dir.join(sub))
                .map(|rd| {
                    rd.filter_map(|e| e.ok())
                        .map(|e| self.rel(&e.path()))
                        .collect()
                })
                .unwrap_or_default();
            v.sort();
            v
        };
        serde_json::json!({
            "architect": rel(artifacts::latest(&dir, "architect")),
            "revision": rel(artifacts::latest_numbered(&dir, "architect-revision")),
            "design_audit": rel(artifacts::latest(&dir, "design-audit")),
            "spec": rel(artifacts::latest(&dir, "spec")),
            "implementations": all_of("implementations"),
            "tests": all_of("tests"),
            "test_results": rel(artifacts::latest(&dir, "test-results")),
            "impl_audit": rel(artifacts::latest(&dir, "impl-audit")),
            "debt": rel(artifacts::latest(&dir, "debt")),
        })
    }

    /// One attempt of a phase: replayed from the journal when it finished before, else run.
    /// Either way the store ends up with the phase begun and completed exactly once.
    fn phase(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        task_id: Option<&str>,
        task: Option<&SpecTask>,
        iteration: Option<u32>,
    ) -> Result<Verdict> {
        let label = phase_label(&p.name, task_id);
        let attempt = self.bump(&label);
        let out_file = self.out_file(&label, attempt);
        let m = self.manifest()?;
        let completed = self.store_has(&m, &p.name, task_id, attempt);
        if !completed && !m.running_phases.iter().any(|r| r.label() == label) {
            self.store
                .begin_phase(&self.slug, &p.name, task_id, &p.needs)?;
        }
        let outcome = self.call(wf, p, task_id, task, iteration, attempt, &out_file)?;
        let verdict = match outcome.judged() {
            Judged::Passed => Verdict::Pass,
            Judged::Rejected => Verdict::Fail(outcome.detail.clone()),
            Judged::Broken | Judged::Malformed => Verdict::Error(outcome.detail.clone()),
        };
        if !completed {
            let status = if verdict == Verdict::Pass {
                PhaseStatus::Success
            } else {
                PhaseStatus::Failed
            };
            let text = match verdict {
                Verdict::Error(_) => String::new(),
                _ => std::fs::read_to_string(&out_file).unwrap_or_default(),
            };
            let content = (!text.trim().is_empty()).then(|| Content {
                task_id: task_id.map(Into::into),
                iteration,
                text,
            });
            self.store
                .complete_phase(&self.slug, &p.name, task_id, status, content)?;
        }
        Ok(verdict)
    }

    /// One attempt through the run pipeline (`run::call`): the prompt names the store's
    /// artifacts by path, the answer passes with the phase's signal for this task (or spec
    /// task) and its output file written.
    #[allow(clippy::too_many_arguments)]
    fn call(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        task_id: Option<&str>,
        task: Option<&SpecTask>,
        iteration: Option<u32>,
        attempt: u32,
        out_file: &Path,
    ) -> Result<PhaseOutcome> {
        let label = phase_label(&p.name, task_id);
        let signal_id = match task_id {
            Some(id) => format!("{}/{id}", self.slug),
            None => self.slug.clone(),
        };
        let files = self.files();
        let poc_from = self.opts.from.as_ref().map(|f| {
            let dir = self.store.task_dir(f);
            let mut v = vec![];
            for s in ["architect", "debt"] {
                if let Some(p) = artifacts::latest(&dir, s) {
                    v.push(self.rel(&p));
                }
            }
            v.push(format!("{}/implementations/", self.task_rel(f)));
            v.join(", ")
        });
        let ctx = serde_json::json!({
            "task": self.slug,
            "workflow": wf.name,
            "phase": p.name,
            "task_dir": self.task_rel(&self.slug),
            "memory_dir": self.rel(&self.store.memory_dir()),
            "files": files,
            "task_id": task_id,
            "task_title": task.map(|t| t.title.clone()),
            "task_files": task.map(|t| t.files.join(", ")),
            "iteration": iteration,
            "poc_from": poc_from,
            "conductor_notes": Some(self.run_dir().join("conductor-notes.md"))
                .filter(|n| n.is_file())
                .map(|n| self.rel(&n)),
        });
        let template_name = p.template_name();
        let signal_id = signal_id.clone();
        let render_prompt = || -> Result<String> {
            let template = crate::run::prompt::template(&template_name, &self.prompts_dir)?;
            let mut prompt = render(&template_name, &template, &ctx)?;
            prompt.push_str(&format!(
                "\n---\nBaton phase: {}\nBaton task: {}\n{}Attempt: {attempt}\nOutput file: {}\n\
Write your whole result to the output file (create its directory if needed); baton stores it.\n\
When done, print on its own line:\nSignal: {}: {signal_id}\n",
                p.name,
                self.slug,
                task_id
                    .map(|t| format!("Task id: {t}\n"))
                    .unwrap_or_default(),
                self.rel(out_file),
                p.signal,
            ));
            if let Some(f) = &p.fail_signal {
                prompt.push_str(&format!(
                    "If it fails, print instead:\nFail signal: {f}: {signal_id} - <why>\n"
                ));
            }
            crate::store::fs::create_dir_all(&self.run_dir().join("out"))?;
            // A file left by an attempt that never finished is not this attempt's answer.
            let _ = std::fs::remove_file(out_file);
            Ok(prompt)
        };
        let subject = Subject::task(&self.slug, task_id);
        let call = Call {
            subject: &subject,
            phase: &p.name,
            attempt,
            label: format!("{}-{attempt}", label.replace('#', "-")),
            who: self.assignment(wf, &p.role),
            cwd: self.project_dir.clone(),
            budget: p.budget,
            policy: wf.policy.call(),
            resume: None,
        };
        let success = [p.signal.as_str()];
        let failure: Vec<&str> = p.fail_signal.iter().map(String::as_str).collect();
        let grammar = Grammar {
            success: &success,
            failure: &failure,
        };
        let called = self.calls().call(&call, render_prompt, |reply| {
            let v = judge_signal(&reply.text, &signal_id, grammar);
            let has_file = std::fs::read_to_string(out_file).is_ok_and(|t| !t.trim().is_empty());
            match v.judged {
                Judged::Passed | Judged::Rejected if !has_file => Judgement::broken(format!(
                    "the agent signalled but did not write {}",
                    self.rel(out_file)
                )),
                // A failing verdict is answered by the repair loop only where there is one.
                Judged::Rejected if p.repair.is_none() => Judgement::broken(v.detail),
                _ => v,
            }
        })?;
        Ok(called.outcome)
    }

    // ---- pauses and gates --------------------------------------------------------------------

    /// A phase failed every attempt: PAUSE the task (once) and stop — or, when the pause was
    /// answered with retry (while this run waited or before it was restarted), go on.
    fn pause_point(&self, point: &str, reason: &str) -> Result<Option<Stop>> {
        let occurrence = {
            let mut a = lock(&self.attempts);
            let n = a.entry(format!("pause:{point}")).or_insert(0);
            *n += 1;
            *n
        };
        let point = format!("{point}#{occurrence}");
        let idx = lock(&self.journal).records.iter().position(|r| {
            matches!(&r.entry, Entry::TaskPaused { task, point: p, .. } if *task == self.slug && *p == point)
        });
        let idx = match idx {
            Some(i) => i,
            None => {
                let m = self.manifest()?;
                if m.status == Status::Running {
                    let reason = format!("{reason} (after {point})");
                    self.store.pause(
                        &self.slug,
                        &reason,
                        vec![
                            format!("baton resume --task {} --decision retry", self.slug),
                            format!("baton resume --task {} --decision reject", self.slug),
                        ],
                    )?;
                }
                self.log(Entry::TaskPaused {
                    task: self.slug.clone(),
                    point: point.clone(),
                    reason: reason.to_string(),
                })?;
                self.reporter.report(&RunEvent::Paused {
                    subject: &self.subject(),
                    point: &point,
                    reason,
                    resume: &format!(
                        "baton resume --task {} --decision retry, then: baton run {} {}",
                        self.slug, self.wf.name, self.slug
                    ),
                });
                lock(&self.journal).records.len() - 1
            }
        };
        let later = lock(&self.journal).records.len() > idx + 1;
        if later {
            return Ok(None);
        }
        let m = self.manifest()?;
        match m.status {
            Status::Running => {
                self.log(Entry::TaskRetried {
                    task: self.slug.clone(),
                    point,
                })?;
                self.say(&format!("{}: retry → going on", self.slug));
                Ok(None)
            }
            Status::Paused => Ok(Some(Stop::Paused(
                m.failure_context.map(|f| f.reason).unwrap_or_default(),
            ))),
            _ => Ok(Some(stop_of(m.status))),
        }
    }

    /// Stop at `gate` (when the workflow has it) and wait for the decision, made by any
    /// process through `baton resume`. Returns the decision, or why the run stops.
    fn gate(&self, wf: &TaskWorkflow, gate: Gate) -> Result<std::result::Result<Decision, Stop>> {
        let g = gate.as_str().to_string();
        let decided = lock(&self.journal)
            .records
            .iter()
            .find_map(|r| match &r.entry {
                Entry::TaskGateDecided {
                    task,
                    gate: x,
                    decision,
                } if *task == self.slug && *x == g => decision.parse::<Decision>().ok(),
                _ => None,
            });
        if let Some(d) = decided {
            return Ok(Ok(d));
        }
        let configured = wf.gates.contains(&gate);
        if !configured && gate != Gate::Final {
            return Ok(Ok(if gate == Gate::Investigation {
                Decision::Full
            } else {
                Decision::Approve
            }));
        }
        let opened = lock(&self.journal).records.iter().any(|r| {
            matches!(&r.entry, Entry::TaskGateOpened { task, gate: x } if *task == self.slug && *x == g)
        });
        if !opened {
            let m = self.manifest()?;
            if m.status == Status::Running {
                let (prompt, artifacts) = self.gate_text(gate);
                self.store.set_gate(&self.slug, gate, &prompt, artifacts)?;
                if !configured {
                    // No final gate in this workflow: baton approves it itself.
                    self.store.resume(&self.slug, Decision::Approve)?;
                }
            }
            self.log(Entry::TaskGateOpened {
                task: self.slug.clone(),
                gate: g.clone(),
            })?;
        }
        let mut told = false;
        loop {
            let m = self.manifest()?;
            let waiting = m.status == Status::WaitingGate
                && m.gate_context.as_ref().is_some_and(|c| c.gate == gate);
            if waiting {
                if !told {
                    self.tell_gate(&m);
                    told = true;
                }
                if self.opts.no_wait {
                    return Ok(Err(Stop::Waiting(gate)));
                }
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
            let d = infer_decision(&m, gate).ok_or_else(|| {
                Error::state(format!(
                    "task `{}` is {} after the {gate} gate: no decision can be read from it",
                    self.slug, m.status
                ))
            })?;
            self.log(Entry::TaskGateDecided {
                task: self.slug.clone(),
                gate: g,
                decision: d.as_str().into(),
            })?;
            if configured {
                self.reporter.report(&RunEvent::GateDecided {
                    subject: &self.subject(),
                    gate: gate.as_str(),
                    decision: d.as_str(),
                });
            }
            return Ok(Ok(d));
        }
    }

    fn gate_text(&self, gate: Gate) -> (String, Vec<String>) {
        let dir = self.store.task_dir(&self.slug);
        let rel = |stem: &str| artifacts::latest(&dir, stem).map(|p| self.rel(&p));
        let revision = artifacts::latest_numbered(&dir, "architect-revision").map(|p| self.rel(&p));
        match gate {
            Gate::Investigation => (
                "Design audited. Choose the path: full (spec and the standard path), lite (a poc: implement now, record the debt), shelf (keep the findings, stop), cancel.".into(),
                [rel("architect"), revision, rel("design-audit")].into_iter().flatten().collect(),
            ),
            Gate::Design => (
                "Approve the design before the spec is written?".into(),
                [rel("architect"), revision, rel("design-audit")].into_iter().flatten().collect(),
            ),
            Gate::Final => {
                let mut a: Vec<String> = [rel("spec"), rel("test-results"), rel("impl-audit"), rel("debt"), rel("graduate-complete")]
                    .into_iter()
                    .flatten()
                    .collect();
                if let Ok(rd) = std::fs::read_dir(dir.join("implementations")) {
                    let mut v: Vec<String> = rd.filter_map(|e| e.ok()).map(|e| self.rel(&e.path())).collect();
                    v.sort();
                    a.extend(v);
                }
                ("Approve the implementation and complete the task?".into(), a)
            }
        }
    }

    fn tell_gate(&self, m: &Manifest) {
        let Some(g) = &m.gate_context else { return };
        let key = format!("gate:{}", g.gate);
        {
            let mut p = lock(&self.printed);
            if p.contains(&key) {
                return;
            }
            p.push(key);
        }
        let decide = if self.opts.no_wait {
            format!(
                "then continue with: baton run {} {}",
                self.wf.name, self.slug
            )
        } else {
            "(this run waits for the decision; Ctrl-C is safe: rerun to continue)".to_string()
        };
        self.reporter.report(&RunEvent::GateOpened {
            subject: &self.subject(),
            gate: g.gate.as_str(),
            prompt: &g.prompt,
            artifacts: &g.artifacts,
            decisions: gate_decisions(g.gate),
            decide: &decide,
        });
    }
}

pub fn gate_decisions(g: Gate) -> &'static str {
    match g {
        Gate::Design | Gate::Final => "approve|reject",
        Gate::Investigation => "full|lite|shelf|cancel|reject",
    }
}

/// The decision that took the task from `gate` to where it is now (seed 002's routing table
/// read backwards: each decision leaves a distinct state).
pub fn infer_decision(m: &Manifest, gate: Gate) -> Option<Decision> {
    use crate::store::model::Workflow;
    Some(match (gate, m.status) {
        (_, Status::Failed) => Decision::Reject,
        (Gate::Final, Status::Completed) => Decision::Approve,
        (
            Gate::Design,
            Status::Running | Status::Paused | Status::WaitingGate | Status::Completed,
        ) => Decision::Approve,
        (Gate::Investigation, Status::Shelved) => Decision::Shelf,
        (Gate::Investigation, Status::Cancelled) => Decision::Cancel,
        (Gate::Investigation, _) if m.workflow == Workflow::Poc => Decision::Lite,
        (
            Gate::Investigation,
            Status::Running | Status::Paused | Status::WaitingGate | Status::Completed,
        ) => Decision::Full,
        _ => return None,
    })
}

pub fn stop_of(s: Status) -> Stop {
    match s {
        Status::Completed => Stop::Completed,
        Status::Shelved => Stop::Shelved,
        Status::Cancelled => Stop::Cancelled,
        _ => Stop::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "# Spec\n\n## Signatures\n\n`fn login()`\n\n## Tasks\n\n### Task 1: Model\nDepends on: none\nFiles: src/user.rs\n\n### Task 2: Service\n- **Depends on:** 1\n- Files: src/auth.rs, src/token.rs\n\n### Task 3: API\nDepends on: 1, 2\n\n### Task 4: Docs\n\n```\n### Task 9: not a heading\n```\n";

    #[test]
    fn spec_tasks_are_parsed_from_headings_and_lines() {
        let t = parse_tasks(SPEC);
        let ids: Vec<&str> = t.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "3", "4"]);
        assert_eq!(t[1].title, "Service");
        assert_eq!(t[1].depends_on, ["1"]);
        assert_eq!(t[1].files, ["src/auth.rs", "src/token.rs"]);
        assert_eq!(t[2].depends_on, ["1", "2"]);
        assert!(t[0].depends_on.is_empty() && t[3].depends_on.is_empty());
    }

    #[test]
    fn waves_are_topological_levels() {
        let w = compute_waves(&parse_tasks(SPEC), "spec.md").unwrap();
        assert_eq!(w, vec![vec!["1", "4"], vec!["2"], vec!["3"]]);
    }

    #[test]
    fn unknown_dependencies_and_cycles_name_the_spec() {
        let t = parse_tasks("### Task 1: a\nDepends on: 9\n");
        let e = compute_waves(&t, "spec.md").unwrap_err();
        assert!(e.contains("spec.md") && e.contains("task 9"), "{e}");
        let t = parse_tasks(
            "### Task 1: a\nDepends on: 2\n### Task 2: b\nDepends on: 1\n### Task 3: c\n",
        );
        let e = compute_waves(&t, "spec.md").unwrap_err();
        assert!(
            e.contains("spec.md: dependency cycle among tasks 1, 2"),
            "{e}"
        );
    }

    #[test]
    fn decisions_are_read_back_from_the_state() {
        let mut m: Manifest = crate::store::machine::create(&crate::store::model::Event {
            v: 1,
            seq: 1,
            ts: crate::store::now(),
            kind: crate::store::model::EventKind::TaskCreated {
                name: "t".into(),
                mode: crate::store::model::Mode::Standard,
                workflow: crate::store::model::Workflow::Orchestrate,
            },
        })
        .unwrap();
        assert_eq!(
            infer_decision(&m, Gate::Investigation),
            Some(Decision::Full)
        );
        m.workflow = crate::store::model::Workflow::Poc;
        assert_eq!(
            infer_decision(&m, Gate::Investigation),
            Some(Decision::Lite)
        );
        m.status = Status::Shelved;
        assert_eq!(
            infer_decision(&m, Gate::Investigation),
            Some(Decision::Shelf)
        );
        m.status = Status::Failed;
        assert_eq!(infer_decision(&m, Gate::Design), Some(Decision::Reject));
        m.status = Status::Completed;
        assert_eq!(infer_decision(&m, Gate::Final), Some(Decision::Approve));
    }
}
