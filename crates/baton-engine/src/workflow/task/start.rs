//! Starting a task run (orchestrate, poc, graduate), fresh or continued: the task and its
//! workflows are checked (every role's agent included), a graduate's task is made from its
//! poc, an unfinished run of the task is continued rather than doubled, and the journal is
//! started or held — before the first agent call. Then [`TaskRun::run`] drives the task to
//! where it stops and journals the end; the caller renders the [`TaskOutcome`].

use std::path::PathBuf;
use std::sync::Mutex;

use super::def as task_def;
use super::{Parts, Stop, TaskEngine, TaskOptions};
use crate::cli_agents::CliAgents;
use crate::conductor::{Conductor, Policy};
use crate::config::Project;
use crate::definition::WorkflowKind;
use crate::error::{Error, Result};
use crate::events::{Reporter, RunEvent, Subject, SubjectResult};
use crate::journal::{Entry, Journal};
use baton_agent::settings::AgentId;
use baton_core::notice;
use baton_store::Store;
use baton_store::model::{Manifest, Mode, PhaseStatus, Status, Workflow};

/// The workflows a task run is.
const WORKFLOWS: &[&str] = &["orchestrate", "poc", "graduate"];

/// What a task run is: kept in its journal's first record, so that a continued run goes on
/// with exactly these.
#[derive(serde::Serialize, serde::Deserialize)]
struct RunSpec {
    options: TaskOptions,
    scenario: Option<PathBuf>,
}

/// A new run of a task, as asked for.
pub struct Fresh {
    pub workflow: WorkflowKind,
    /// The task's name or slug.
    pub task: String,
    pub agent: Option<AgentId>,
    /// Implementation tasks at once; 0: the workflow's `policy.parallel`.
    pub parallel: usize,
    pub no_wait: bool,
    /// `--from plan`: start at the implementation of a planned task.
    pub from_plan: bool,
    pub scenario: Option<PathBuf>,
    /// `--wait-for-quota` (or `[run] wait_for_quota`).
    pub wait_for_quota: bool,
}

/// A new run (or the continuation of the task's unfinished one), or a run continued by id.
pub enum Start {
    Fresh(Fresh),
    Resume { journal: Journal, no_wait: bool },
}

/// A task run ready to go: checked, journaled, held.
pub struct TaskRun {
    journal: Journal,
    /// Held until the run returns: no second baton resumes it meanwhile.
    _hold: Option<std::fs::File>,
    run_id: String,
    workflow: String,
    slug: String,
    spec: RunSpec,
    resumed: bool,
    continued: bool,
    project_dir: PathBuf,
    local: PathBuf,
    store: Store,
}

/// Where a task run stopped.
pub struct TaskOutcome {
    pub stop: Stop,
    pub manifest: Manifest,
    pub agent_calls: usize,
    pub run_dir: PathBuf,
    /// The repository's top (paths shown relative to it).
    pub project_dir: PathBuf,
}

impl TaskRun {
    pub fn prepare(project: &Project, store: &Store, start: Start) -> Result<TaskRun> {
        let local = project.local_dir();
        let project_dir = crate::git::Git::new(&project.dir)
            .toplevel()
            .unwrap_or_else(|_| project.dir.clone());
        // A run started here comes held; a continued one is held below.
        let (journal, resumed, continued, no_wait, held) = match start {
            Start::Resume { journal, no_wait } => {
                if journal.run_finished() {
                    let id = journal
                        .started()
                        .map(|s| s.run_id.to_string())
                        .unwrap_or_default();
                    return Err(Error::state(format!("run {id} already finished"))
                        .hint("see where its task stands with `baton status`"));
                }
                (journal, true, false, no_wait, None)
            }
            Start::Fresh(f) => {
                let no_wait = f.no_wait;
                let (j, continued, held) = fresh(project, store, f)?;
                (j, continued, continued, no_wait, held)
            }
        };
        let hold = match held {
            Some(h) => Some(h),
            None => journal.hold()?,
        };
        if resumed {
            journal.clean_up_after_a_killed_baton();
        }
        let events = journal.dir.join("events.jsonl");
        let started = journal
            .started()
            .ok_or_else(|| Error::corrupt(&events, Some(1), "does not start with run_started"))?;
        let mut spec: RunSpec = serde_json::from_value(started.options.clone())
            .map_err(|e| Error::corrupt(&events, Some(1), e.to_string()))?;
        spec.options.no_wait = no_wait;
        let (run_id, workflow) = (started.run_id.to_string(), started.workflow.to_string());
        let slug = started.subjects.first().cloned().unwrap_or_default();
        if resumed {
            // The task's store writes the killed baton cut short (its state, artifacts).
            baton_core::fs::clear_cut_short_writes(&store.task_dir(&slug), &project_dir);
        }
        Ok(TaskRun {
            journal,
            _hold: hold,
            run_id,
            workflow,
            slug,
            spec,
            resumed,
            continued,
            project_dir,
            local,
            store: store.clone(),
        })
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }
    pub fn workflow(&self) -> &str {
        &self.workflow
    }
    pub fn slug(&self) -> &str {
        &self.slug
    }
    /// A fresh start found the task's unfinished run and continues it, with the options that
    /// run started with.
    pub fn continues_an_unfinished_run(&self) -> bool {
        self.continued
    }

    /// The task through its workflow until it completes, fails, shelves, pauses or waits at
    /// a gate; a run's end journaled.
    pub fn run(self, project: &Project, reporter: &dyn Reporter) -> Result<TaskOutcome> {
        let wdir = self.local.join("workflows");
        let wf = task_def::load(&self.workflow, &wdir)?;
        let poc_wf = if self.workflow == "orchestrate" {
            Some(task_def::load("poc", &wdir)?)
        } else {
            None
        };
        let agents = CliAgents::new(&self.project_dir, self.spec.scenario.clone())
            .configured(&project.config);
        reporter.report(&RunEvent::RunStarted {
            run_id: &self.run_id,
            workflow: &self.workflow,
            subjects: std::slice::from_ref(&self.slug),
            resumed: self.resumed,
        });
        // The conductor continues the session (and the counts) the journal last recorded.
        let meter = self
            .journal
            .records
            .iter()
            .rev()
            .find_map(|r| match &r.entry {
                Entry::ConductorCalled { meter, .. } => Some(meter.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let mut engine = TaskEngine::new(Parts {
            project_dir: self.project_dir.clone(),
            store: self.store.clone(),
            slug: self.slug.clone(),
            wf,
            journal: self.journal,
            agents: &agents,
            reporter,
            opts: self.spec.options,
            prompts_dir: self.local.join("prompts"),
        });
        engine.poc_wf = poc_wf;
        if let Some(d) = &engine.wf.def.conductor {
            let policy = Policy::from_budget(&project.config.budget);
            let mut c = Conductor::new(engine.assignment(&engine.wf.def, &d.role), policy);
            c.meter = meter;
            engine.conductor = Some(Mutex::new(c));
        }
        let stop = engine.run()?;
        let mut j = engine
            .journal
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        let result = match stop {
            Stop::Completed => Some(SubjectResult::Done),
            Stop::Failed => Some(SubjectResult::Failed),
            Stop::Shelved => Some(SubjectResult::Shelved),
            Stop::Cancelled => Some(SubjectResult::Cancelled),
            Stop::Paused(_) | Stop::Waiting(_) => None,
        };
        if let Some(result) = result {
            j.finish_subject_run(Subject::task(&self.slug, None), result)?;
        }
        Ok(TaskOutcome {
            stop,
            manifest: self.store.manifest(&self.slug)?,
            agent_calls: j.agent_calls(),
            run_dir: j.dir.clone(),
            project_dir: self.project_dir,
        })
    }
}

/// A new run of the task (with its hold, when it has one), or its unfinished one (`true`: the
/// caller holds it).
fn fresh(
    project: &Project,
    store: &Store,
    f: Fresh,
) -> Result<(Journal, bool, Option<std::fs::File>)> {
    let local = project.local_dir();
    let workflow = f.workflow.name().to_string();
    let name = &f.task;
    let slug = baton_store::names::slugify(name)?;
    if !store.exists(&slug) {
        let mode = if workflow == "poc" { " --mode poc" } else { "" };
        let close = store.did_you_mean(&slug);
        return Err(Error::not_found(format!("no task `{slug}`{close}")).hint(format!(
            "create it: baton task init \"{name}\"{mode} --workflow {workflow} (list: baton task list)"
        )));
    }
    // The workflows (orchestrate may switch to poc) and every role's agent must be valid
    // before anything changes.
    let mut names = vec![workflow.as_str()];
    if workflow == "orchestrate" {
        names.push("poc");
    }
    let run_cfg = &project.config.run;
    for name in names {
        let wf = task_def::load(name, &local.join("workflows"))?.def;
        let roles = wf
            .phases
            .iter()
            .map(|p| &p.role)
            .chain(wf.conductor.iter().map(|c| &c.role));
        for role in roles {
            let who = crate::definition::assign(
                role,
                f.agent.as_ref(),
                &run_cfg.roles,
                &wf.roles,
                &run_cfg.default_agent,
            );
            crate::cli_agents::ready(&who, &project.config.agents, &project.dir)?;
        }
    }
    let (slug, from) = graduated(store, &workflow, slug)?;
    if let Some(j) = Journal::unfinished(&local, WORKFLOWS, &slug) {
        // The run's own workflow, not the task's: after `lite` an orchestrate run goes on
        // with a task that is now a poc.
        let started = j
            .started()
            .map(|s| s.workflow.to_string())
            .unwrap_or_default();
        if started != workflow {
            return Err(Error::invalid(format!(
                "task `{slug}` has an unfinished {started} run: `baton run {workflow}` does not fit it"
            ))
            .hint(format!("continue it: baton run {started} {slug}")));
        }
        notice::said(format!("continuing the unfinished run of task {slug}"));
        return Ok((j, true, None));
    }
    let m = store.manifest(&slug)?;
    check_fits(&workflow, &slug, &m)?;
    if f.from_plan {
        check_planned(&workflow, &slug, &m)?;
    }
    let spec = RunSpec {
        options: TaskOptions {
            agent: f.agent,
            default_agent: run_cfg.default_agent.clone(),
            roles: run_cfg.roles.clone(),
            parallel: f.parallel,
            no_wait: f.no_wait,
            from,
            from_plan: f.from_plan,
            wait_for_quota: f.wait_for_quota,
        },
        scenario: f.scenario,
    };
    let run_id = baton_core::ids::new_id();
    let first = Entry::RunStarted {
        run_id: run_id.clone(),
        workflow,
        subjects: vec![slug],
        options: serde_json::to_value(&spec).map_err(|e| Error::internal(e.to_string()))?,
    };
    let (j, held) = Journal::start(&local, &run_id, first)?;
    Ok((j, false, held))
}

/// A graduate run's task and the poc it graduates: `baton run graduate <poc>` makes
/// `<poc>-graduate` from a completed poc. Other runs: the task itself.
fn graduated(store: &Store, workflow: &str, slug: String) -> Result<(String, Option<String>)> {
    if workflow != "graduate" {
        return Ok((slug, None));
    }
    let m = store.manifest(&slug)?;
    if m.workflow == Workflow::Poc || m.mode == Mode::Poc {
        if m.status != Status::Completed {
            return Err(Error::state(format!(
                "task `{slug}` is {}: only a completed poc graduates",
                m.status
            ))
            .hint(format!("finish it first: baton run poc {slug}")));
        }
        let g = format!("{slug}-graduate");
        if !store.exists(&g) {
            store.init(&g, Mode::Standard, Workflow::Graduate)?;
            notice::said(format!(
                "created task {g} (standard mode, graduate workflow) from poc {slug}"
            ));
        }
        return Ok((g, Some(slug)));
    }
    if m.workflow == Workflow::Graduate {
        let from = slug.strip_suffix("-graduate").map(str::to_string);
        if from.as_deref().is_none_or(|f| !store.exists(f)) {
            return Err(Error::state(format!(
                "task `{slug}` graduates no poc: name the completed poc task instead"
            ))
            .hint("baton run graduate <poc-task> (creates <poc-task>-graduate)"));
        }
        return Ok((slug, from));
    }
    Ok((slug, None))
}

/// The task is of the run's workflow and mode, and running.
fn check_fits(workflow: &str, slug: &str, m: &Manifest) -> Result<()> {
    let fits = match workflow {
        "orchestrate" => m.workflow == Workflow::Orchestrate && m.mode == Mode::Standard,
        "poc" => m.workflow == Workflow::Poc && m.mode == Mode::Poc,
        _ => m.workflow == Workflow::Graduate,
    };
    if !fits {
        return Err(Error::invalid(format!(
            "task `{slug}` is a {} task in {} mode: `baton run {workflow}` does not fit it",
            m.workflow, m.mode
        ))
        .hint(format!("run it with: baton run {} {slug}", m.workflow)));
    }
    if m.status != Status::Running {
        let hint = match m.status {
            Status::Paused => {
                format!("resume it first: baton resume --task {slug} --decision retry")
            }
            Status::WaitingGate => format!("decide first: baton gate show --task {slug}"),
            _ => "start a new task with baton task init".into(),
        };
        return Err(Error::state(format!(
            "task `{slug}` is {}: no run of it is left to continue",
            m.status
        ))
        .hint(hint));
    }
    Ok(())
}

/// `--from plan`: an orchestrate run of a task `baton plan` planned.
fn check_planned(workflow: &str, slug: &str, m: &Manifest) -> Result<()> {
    if workflow != "orchestrate" {
        return Err(Error::invalid(format!(
            "--from plan is for orchestrate runs, not {workflow}"
        ))
        .hint(format!("baton run orchestrate {slug} --from plan")));
    }
    // The record is in order: the latest success of each phase is its last one.
    let last = |phase: &str| {
        m.completed_phases
            .iter()
            .enumerate()
            .filter(|(_, c)| c.phase == phase && c.status == PhaseStatus::Success)
            .map(|(i, _)| i)
            .last()
    };
    match (last("plan"), last("discovery")) {
        (None, _) => Err(
            Error::state(format!("task `{slug}` has no plan to start from")).hint(format!(
                "plan it first: baton discover {slug}, then baton plan {slug}"
            )),
        ),
        // A plan made before the specs it should follow changed.
        (Some(plan), Some(discovery)) if discovery > plan => Err(Error::state(format!(
            "the plan of task `{slug}` is older than its latest discovery"
        ))
        .hint(format!(
            "plan it again from the new specs: baton plan {slug}"
        ))),
        _ => Ok(()),
    }
}
