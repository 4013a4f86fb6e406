//! Task workflows (orchestrate, poc, graduate): a task of the store through its phases, each a
//! fresh agent process that reads the store's artifacts by path and writes one output file,
//! which baton stores through COMPLETE_PHASE. The store's manifest is the task's state (gates,
//! pauses, decisions); the run's journal records every agent call so a killed run resumes
//! without repeating one. The engine is plain sequential code run from the top on every
//! (re)start: each step first asks the journal whether it already happened.

pub mod def;
pub mod discover;
mod gates;
mod phases;
pub mod plan;
pub mod plan_run;
pub mod start;
mod waves;

use gates::GateOutcome;
pub use gates::{gate_decisions, infer_decision, run_state, stop_of};
pub use waves::{SpecTask, compute_waves, parse_tasks};

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::agents::{Agents, Assignment, Request};
use crate::call::{Call, Calls, Verdict as Judgement, judge_signal};
use crate::conductor::{Conductor, Report};
use crate::definition::Loaded;
use crate::error::{Error, Result};
use crate::events::{Reporter, RunEvent, Subject};
use crate::journal::{Entry, Journal, Judged, PhaseOutcome, Usage};
use crate::lock;
use crate::prompt::render;
use baton_context::signals::Grammar;
use baton_core::markdown;
use baton_store::model::{Decision, Gate, Manifest, PhaseStatus, Status, phase_label};
use baton_store::{Content, Store, artifacts};
use def::{TaskPhase, TaskWorkflow};

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
    pub agent: Option<baton_agent::settings::AgentId>,
    pub default_agent: baton_agent::settings::AgentId,
    #[serde(default)]
    pub roles: BTreeMap<String, crate::definition::Role>,
    /// Implementation tasks at once; 0: the workflow's `policy.parallel`.
    #[serde(default)]
    pub parallel: usize,
    #[serde(default)]
    pub no_wait: bool,
    /// graduate: the completed poc task this one graduates.
    #[serde(default)]
    pub from: Option<String>,
    /// `--from plan`: the task was planned (`baton plan`); start at the implementation.
    #[serde(default)]
    pub from_plan: bool,
    /// A spent usage limit is waited out (until its reset) instead of pausing the run.
    #[serde(default)]
    pub wait_for_quota: bool,
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

/// The task engine at work: built by [`start::TaskRun`] and [`plan_run::PlanRun`] only.
pub struct TaskEngine<'a> {
    pub(crate) project_dir: PathBuf,
    pub(crate) store: Store,
    pub(crate) slug: String,
    /// The workflow the run walks (orchestrate, poc, graduate), and the one a `lite` decision
    /// switches to.
    pub(crate) wf: Loaded<TaskWorkflow>,
    pub(crate) poc_wf: Option<Loaded<TaskWorkflow>>,
    pub(crate) journal: Mutex<Journal>,
    pub(crate) agents: &'a dyn Agents,
    pub(crate) reporter: &'a dyn Reporter,
    pub(crate) opts: TaskOptions,
    pub(crate) prompts_dir: PathBuf,
    pub(crate) attempts: Mutex<HashMap<String, u32>>,
    pub(crate) printed: Mutex<Vec<String>>,
    /// The workflow's conductor session, if it has one (reports are serialized through it).
    pub(crate) conductor: Option<Mutex<Conductor>>,
    /// A dry run (`baton plan --dry-run`): prompts are collected here, nothing runs.
    pub(crate) dry_run: Option<&'a Mutex<Vec<crate::call::DryPhase>>>,
}

/// What a task engine is made of; the rest (attempt counters, printed notes, a conductor, a
/// lite decision's workflow, a dry run's prompts) starts empty.
pub(crate) struct Parts<'a> {
    pub project_dir: PathBuf,
    pub store: Store,
    pub slug: String,
    /// The workflow, with its source and text (journaled with the run).
    pub wf: Loaded<TaskWorkflow>,
    pub journal: Journal,
    pub agents: &'a dyn Agents,
    pub reporter: &'a dyn Reporter,
    pub opts: TaskOptions,
    /// Where the run's prompts are written (`.baton/prompts`).
    pub prompts_dir: PathBuf,
}

impl<'a> TaskEngine<'a> {
    pub(crate) fn new(p: Parts<'a>) -> TaskEngine<'a> {
        TaskEngine {
            project_dir: p.project_dir,
            store: p.store,
            slug: p.slug,
            wf: p.wf,
            poc_wf: None,
            journal: Mutex::new(p.journal),
            agents: p.agents,
            reporter: p.reporter,
            opts: p.opts,
            prompts_dir: p.prompts_dir,
            attempts: Mutex::new(HashMap::new()),
            printed: Mutex::new(vec![]),
            conductor: None,
            dry_run: None,
        }
    }
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

    pub(super) fn calls(&self) -> Calls<'_> {
        Calls {
            journal: &self.journal,
            agents: self.agents,
            reporter: self.reporter,
            dry_run: self.dry_run,
            wait_for_quota: self.opts.wait_for_quota,
        }
    }

    fn manifest(&self) -> Result<Manifest> {
        Ok(self.store.manifest(&self.slug)?)
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
        let Loaded { def, source, text } = &self.wf;
        let from = self.opts.from_plan.then_some("implementation");
        self.walk(def, &def.order(source, text)?, from)
    }

    fn walk(&self, wf: &TaskWorkflow, order: &[String], from: Option<&str>) -> Result<Stop> {
        let start = match from {
            None => 0,
            // Starting over from the architect would ignore the plan: refused instead.
            Some(f) => order.iter().position(|p| p == f).ok_or_else(|| {
                Error::invalid(format!(
                    "workflow `{}` has no `{f}` phase to start from after a plan",
                    wf.name
                ))
                .hint(
                    "run --from plan with orchestrate (or a workflow with an implementation phase)",
                )
            })?,
        };
        for name in &order[start..] {
            let p = wf.phase(name).expect("ordered phases are defined").clone();
            let stop = match name.as_str() {
                "implementation" => self.implementation(wf, &p)?,
                "tests" => self.tests(wf, &p)?,
                "test-results" if !wf.test_command.is_empty() => self.test_command(wf, &p)?,
                "discovery" => self.discovered()?,
                _ if p.repair.is_some() => self.audit(wf, &p)?,
                _ => self.single(wf, &p, None)?,
            };
            if let Some(s) = stop {
                return Ok(s);
            }
            if name == "design-audit" {
                for gate in [Gate::Investigation, Gate::Design] {
                    match self.gate(wf, gate)? {
                        GateOutcome::Stopped(stop) => return Ok(stop),
                        GateOutcome::Decided(Decision::Lite) => return self.lite(),
                        GateOutcome::Decided(Decision::Full | Decision::Approve) => {}
                        GateOutcome::Decided(Decision::Shelf) => return Ok(Stop::Shelved),
                        GateOutcome::Decided(Decision::Cancel) => return Ok(Stop::Cancelled),
                        GateOutcome::Decided(_) => return Ok(Stop::Failed),
                    }
                }
            }
        }
        if self.manifest()?.workflow == baton_store::model::Workflow::Graduate {
            self.graduate_complete()?;
        }
        match self.gate(wf, Gate::Final)? {
            GateOutcome::Stopped(stop) => Ok(stop),
            GateOutcome::Decided(Decision::Approve) => Ok(Stop::Completed),
            GateOutcome::Decided(_) => Ok(Stop::Failed),
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
        crate::definition::assign(
            role,
            self.opts.agent.as_ref(),
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
        // The plan starts from the specs discovery stored, their sections extracted.
        let specs = if p.name == "plan" {
            let d = plan::discovery_phase(wf, &wf.name)?;
            let dir = self.store.task_dir(&self.slug);
            plan::extracted(&dir, &self.project_dir, d, &self.slug)?
        } else {
            vec![]
        };
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
            "specs": specs,
            "conductor_notes": Some(self.run_dir().join("conductor-notes.md"))
                .filter(|n| n.is_file())
                .map(|n| self.rel(&n)),
        });
        let template_name = p.template_name();
        let signal_id = signal_id.clone();
        let render_prompt = || -> Result<String> {
            let template = crate::prompt::template(&template_name, &self.prompts_dir)?;
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
            if self.dry_run.is_none() {
                baton_core::fs::create_dir_all(&self.run_dir().join("out"))?;
                // A file left by an attempt that never finished is not this attempt's answer.
                let _ = std::fs::remove_file(out_file);
            }
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
            policy: (&wf.policy).into(),
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
            let written = std::fs::read_to_string(out_file).unwrap_or_default();
            let has_file = !written.trim().is_empty();
            // A plan is checked on disk: the waves must be able to use it.
            let bad_plan = (p.name == "plan" && has_file)
                .then(|| plan::check(&written, &self.rel(out_file)))
                .flatten();
            match v.judged {
                Judged::Passed if bad_plan.is_some() => {
                    Judgement::broken(bad_plan.unwrap_or_default())
                }
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
}
