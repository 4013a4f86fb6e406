//! Starting `baton plan TASK`, fresh or continued: the planning phase of a task whose specs
//! discovery stored, checked (the workflow has a `plan` phase, the specs are extracted, the
//! task can take the phase, its agent is runnable) before anything runs; an unfinished plan run
//! of the task is continued with the workflow it started with. Then [`PlanRun::run`] runs the
//! phase through the task engine's pipeline and journals the end, or [`PlanRun::dry_run`]
//! renders the prompt it would send.

use std::path::PathBuf;
use std::sync::Mutex;

use super::def::{self as task_def, TaskPhase as Phase};
use super::{Parts, Stop, TaskEngine, TaskOptions, plan};
use crate::call::DryPhase;
use crate::cli_agents::CliAgents;
use crate::config::Project;
use crate::definition::Loaded;
use crate::error::{Error, Result};
use crate::events::{Reporter, Subject, SubjectResult};
use crate::journal::{Entry, Journal};
use baton_agent::settings::AgentId;
use baton_core::notice;
use baton_store::Store;
use baton_store::model::Status;

/// What a plan run is, kept in its journal's first record.
#[derive(serde::Serialize, serde::Deserialize)]
struct RunSpec {
    options: TaskOptions,
    scenario: Option<PathBuf>,
    /// The workflow whose plan phase runs: a continued run keeps it, whatever `--workflow` says.
    #[serde(default = "plan_workflow")]
    workflow: String,
}

fn plan_workflow() -> String {
    "plan".into()
}

/// A plan of `slug`, as asked for.
pub struct PlanStart {
    pub slug: String,
    /// The task workflow whose plan phase to run (a continued run keeps its own).
    pub workflow: String,
    pub agent: Option<AgentId>,
    pub scenario: Option<PathBuf>,
    /// Render the prompt only: nothing journaled, nothing run.
    pub dry_run: bool,
}

/// A plan run ready to go.
pub struct PlanRun {
    journal: Journal,
    /// Held until the plan returns: a second `baton plan` of the task meanwhile is refused
    /// instead of stopping this one's agent and writing the same journal. (`engine` hands it
    /// back: it must outlive the phase, not the engine's making.)
    hold: Option<std::fs::File>,
    spec: RunSpec,
    wf: Loaded<task_def::TaskWorkflow>,
    phase: Phase,
    slug: String,
    project_dir: PathBuf,
    local: PathBuf,
    store: Store,
}

/// How a plan run ended.
pub enum PlanOutcome {
    /// The plan is stored: `tasks` tasks in `spec` (relative to the repository).
    Planned {
        tasks: usize,
        spec: String,
        run_log: String,
    },
    Paused {
        reason: String,
        run_log: String,
    },
}

impl PlanRun {
    pub fn prepare(project: &Project, store: &Store, start: PlanStart) -> Result<PlanRun> {
        let local = project.local_dir();
        let project_dir = crate::git::Git::new(&project.dir)
            .toplevel()
            .unwrap_or_else(|_| project.dir.clone());
        let slug = start.slug;
        let unfinished = (!start.dry_run)
            .then(|| Journal::unfinished(&local, &["plan"], &slug))
            .flatten();
        // An unfinished plan run of the task is continued with the workflow it started with.
        let workflow = unfinished
            .as_ref()
            .and_then(|j| serde_json::from_value::<RunSpec>(j.started()?.options.clone()).ok())
            .map_or(start.workflow, |s| s.workflow);
        let wf = task_def::load(&workflow, &local.join("workflows"))?;
        let phase = wf
            .def
            .phase("plan")
            .ok_or_else(|| {
                Error::invalid(format!("workflow {} has no `plan` phase", wf.source))
                    .hint("use the built-in one: baton plan TASK --workflow plan")
            })?
            .clone();
        // Nothing starts without specs to plan from, in a task that can take the phase.
        let discovery = plan::discovery_phase(&wf.def, &wf.source)?;
        plan::extracted(&store.task_dir(&slug), &project_dir, discovery, &slug)?;
        let m = store.manifest(&slug)?;
        if m.status != Status::Running && !start.dry_run {
            let hint = match m.status {
                Status::Paused => format!(
                    "resume it first: baton resume --task {slug} --decision retry, then baton plan {slug}"
                ),
                _ => "start a new task: baton discover \"<idea>\"".into(),
            };
            return Err(Error::state(format!(
                "task `{slug}` is {}: it cannot be planned now",
                m.status
            ))
            .hint(hint));
        }
        let cfg = &project.config;
        let who = crate::definition::assign(
            &phase.role,
            start.agent.as_ref(),
            &cfg.run.roles,
            &wf.def.roles,
            &cfg.run.default_agent,
        );
        if start.dry_run {
            crate::cli_agents::runnable(&who, &cfg.agents)?;
        } else {
            crate::cli_agents::ready(&who, &cfg.agents, &project.dir)?;
        }
        let fresh_spec = || RunSpec {
            options: TaskOptions {
                wait_for_quota: cfg.run.wait_for_quota,
                agent: start.agent.clone(),
                default_agent: cfg.run.default_agent.clone(),
                roles: cfg.run.roles.clone(),
                ..TaskOptions::default()
            },
            scenario: start.scenario.clone(),
            workflow: workflow.clone(),
        };
        let resumed = unfinished.is_some();
        // A run started here comes held; a continued one is held below.
        let (journal, held) = match unfinished {
            Some(j) => {
                notice::said(format!("continuing the unfinished plan run of task {slug}"));
                (j, None)
            }
            None if start.dry_run => (Journal::memory(), None),
            None => {
                let run_id = baton_core::ids::new_id();
                let first = Entry::RunStarted {
                    run_id: run_id.clone(),
                    workflow: "plan".into(),
                    subjects: vec![slug.clone()],
                    options: serde_json::to_value(fresh_spec())
                        .map_err(|e| Error::internal(e.to_string()))?,
                };
                Journal::start(&local, &run_id, first)?
            }
        };
        let spec: RunSpec = match journal.started() {
            Some(s) => serde_json::from_value(s.options.clone()).map_err(|e| {
                Error::corrupt(journal.dir.join("events.jsonl"), Some(1), e.to_string())
            })?,
            None => fresh_spec(),
        };
        let hold = match held {
            Some(h) => Some(h),
            None => journal.hold()?,
        };
        if resumed {
            journal.clean_up_after_a_killed_baton();
        }
        Ok(PlanRun {
            journal,
            hold,
            spec,
            wf,
            phase,
            slug,
            project_dir,
            local,
            store: store.clone(),
        })
    }

    fn engine<'a>(
        self,
        agents: &'a CliAgents,
        reporter: &'a dyn Reporter,
        dry: Option<&'a Mutex<Vec<DryPhase>>>,
    ) -> (
        TaskEngine<'a>,
        task_def::TaskWorkflow,
        Phase,
        Option<std::fs::File>,
    ) {
        let mut engine = TaskEngine::new(Parts {
            project_dir: self.project_dir,
            store: self.store,
            slug: self.slug,
            wf: self.wf.clone(),
            journal: self.journal,
            agents,
            reporter,
            opts: self.spec.options,
            prompts_dir: self.local.join("prompts"),
        });
        engine.dry_run = dry;
        (engine, self.wf.def, self.phase, self.hold)
    }

    fn agents(&self, project: &Project) -> CliAgents {
        CliAgents::new(&self.project_dir, self.spec.scenario.clone()).configured(&project.config)
    }

    /// The prompt the phase would send; nothing runs.
    pub fn dry_run(self, project: &Project, reporter: &dyn Reporter) -> Result<Vec<DryPhase>> {
        let agents = self.agents(project);
        let dry = Mutex::new(vec![]);
        let (engine, wf, phase, _hold) = self.engine(&agents, reporter, Some(&dry));
        engine.dry_phase(&wf, &phase)?;
        drop(engine);
        Ok(dry.into_inner().unwrap_or_else(|e| e.into_inner()))
    }

    /// The plan phase, through the task engine's pipeline; a plan stored ends the run.
    pub fn run(self, project: &Project, reporter: &dyn Reporter) -> Result<PlanOutcome> {
        let agents = self.agents(project);
        let slug = self.slug.clone();
        let project_dir = self.project_dir.clone();
        let store = self.store.clone();
        let (engine, wf, phase, _hold) = self.engine(&agents, reporter, None);
        let stop = engine.single(&wf, &phase, None)?;
        let mut j = engine
            .journal
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        let run_log = j.dir_in(&project_dir);
        if let Some(stop) = stop {
            let reason = match stop {
                Stop::Paused(why) => why,
                other => format!("{other:?}"),
            };
            return Ok(PlanOutcome::Paused { reason, run_log });
        }
        j.finish_subject_run(Subject::task(&slug, None), SubjectResult::Done)?;
        let spec = baton_store::artifacts::latest(&store.task_dir(&slug), "spec");
        let tasks = spec
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|t| super::parse_tasks(&t).len())
            .unwrap_or(0);
        let spec = spec
            .map(|p| {
                p.strip_prefix(&project_dir)
                    .unwrap_or(&p)
                    .display()
                    .to_string()
            })
            .unwrap_or_default();
        Ok(PlanOutcome::Planned {
            tasks,
            spec,
            run_log,
        })
    }
}
