//! Starting `baton run verify --queue Q`, fresh or continued: a queue of the file backend
//! (the postgres one is drained by workers), its pipeline, prompts and every role's agent
//! checked ([`preflight`], shared with `baton worker`), the queue's run lock taken, the writes a
//! killed baton cut short removed, the journal started — before the first agent call. Then
//! [`VerifyRun::run`] works the queue and journals the end; the caller renders the report.

use std::path::PathBuf;
use std::sync::Mutex;

use super::backend::BackendKind;
use super::pipeline::{self, VerifyPipeline};
use super::queue::Queues;
use super::{Options, Report, VerifyEngine};
use crate::cli_agents::CliAgents;
use crate::config::Project;
use crate::error::{Error, Result};
use crate::events::{Reporter, RunEvent};
use crate::journal::{Entry, Journal};
use crate::lock;

/// A new run of a queue (or the continuation of its unfinished one), or a run continued by id.
pub enum Start {
    Fresh(Box<Options>),
    Resume(Journal),
}

/// A verify run ready to go.
pub struct VerifyRun {
    opts: Options,
    pipeline: VerifyPipeline,
    queues: Queues,
    journal: Journal,
    /// The queue's run lock: one run works a queue at a time.
    _run_lock: std::fs::File,
    run_id: String,
    resumed: bool,
    continued: bool,
    local: PathBuf,
}

/// How a verify run ended.
pub struct VerifyOutcome {
    pub report: Report,
    pub run_dir: PathBuf,
    /// The run's directory, relative to the project.
    pub run_log: String,
}

/// Everything checked before a queue is worked on (`baton run verify`, `baton worker`): the
/// pipeline, its prompts and every role's agent. Returns the pipeline.
pub fn preflight(project: &Project, opts: &Options) -> Result<VerifyPipeline> {
    let local = project.local_dir();
    let pipeline = pipeline::load(&local.join("workflows"))?.def;
    let prompts = local.join("prompts");
    crate::prompt::template("verify-reminder", &prompts)?;
    for ph in &pipeline.phases {
        crate::prompt::template(&ph.template, &prompts)?;
        let who = crate::definition::assign(
            &ph.role,
            opts.agent.as_ref(),
            &opts.roles,
            &pipeline.roles,
            &opts.default_agent,
        );
        crate::cli_agents::ready(&who, &project.config.agents, &project.dir)?;
    }
    Ok(pipeline)
}

impl VerifyRun {
    pub fn prepare(project: &Project, start: Start) -> Result<VerifyRun> {
        if project.config.queue.backend == BackendKind::Postgres {
            let q = match &start {
                Start::Fresh(o) => o.queue.clone(),
                Start::Resume(_) => "NAME".into(),
            };
            return Err(Error::invalid(
                "the queues are in PostgreSQL (`[queue] backend = \"postgres\"`): workers drain them, not `baton run verify`",
            )
            .hint(format!("start one or more workers: baton worker --queue {q}")));
        }
        let local = project.local_dir();
        let queues = Queues::new(&local);
        let (opts, journal, continued) = match start {
            Start::Resume(j) => (resumed_options(&j)?, Some(j), false),
            // `baton run verify --queue Q` again continues Q's unfinished run (a crash, a
            // kill), so one queue has one run to look at until it finishes.
            Start::Fresh(o) => match Journal::unfinished(&local, &["verify"], &o.queue) {
                Some(j) => (resumed_options(&j)?, Some(j), true),
                None => (*o, None, false),
            },
        };
        queues.load(&opts.queue)?;
        let pipeline = preflight(project, &opts)?;
        let run_lock = queues.lock_run(&opts.queue)?;
        // Writes to the queue's files (items, states) a killed baton cut short.
        baton_core::fs::clear_cut_short_writes(&queues.queue_dir(&opts.queue), &project.dir);
        let resumed = journal.is_some();
        if let Some(j) = &journal {
            j.clean_up_after_a_killed_baton();
        }
        let journal = match journal {
            Some(j) => j,
            None => {
                let id = baton_core::ids::new_id();
                let first = Entry::RunStarted {
                    run_id: id.clone(),
                    workflow: "verify".into(),
                    subjects: vec![opts.queue.clone()],
                    options: serde_json::to_value(&opts)
                        .map_err(|e| Error::internal(e.to_string()))?,
                };
                Journal::start(&local, &id, first)?.0
            }
        };
        let run_id = journal
            .started()
            .map(|s| s.run_id.to_string())
            .unwrap_or_default();
        Ok(VerifyRun {
            opts,
            pipeline,
            queues,
            journal,
            _run_lock: run_lock,
            run_id,
            resumed,
            continued,
            local,
        })
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// A fresh start found the queue's unfinished run and continues it, with the options that
    /// run started with.
    pub fn continues_an_unfinished_run(&self) -> bool {
        self.continued
    }

    /// Every item of the queue through the pipeline; the run's end journaled.
    pub fn run(self, project: &Project, reporter: &dyn Reporter) -> Result<VerifyOutcome> {
        reporter.report(&RunEvent::RunStarted {
            run_id: &self.run_id,
            workflow: "verify",
            subjects: std::slice::from_ref(&self.opts.queue),
            resumed: self.resumed,
        });
        let agents =
            CliAgents::new(&project.dir, self.opts.scenario.clone()).configured(&project.config);
        let work_command = format!("baton run verify --queue {}", self.opts.queue);
        let mut engine = VerifyEngine {
            project_dir: project.dir.clone(),
            queues: self.queues,
            pipeline: self.pipeline,
            prompts_dir: self.local.join("prompts"),
            agents: &agents,
            opts: self.opts,
            journal: Mutex::new(self.journal),
            run_id: self.run_id,
            reporter,
            complete: Default::default(),
            work_command,
        };
        let report = engine.run()?;
        let mut journal = lock(&engine.journal);
        journal.log(Entry::RunFinished {
            done: report.done,
            failed: report.failed,
            skipped: report.already_complete,
        })?;
        Ok(VerifyOutcome {
            report,
            run_dir: journal.dir.clone(),
            run_log: journal.dir_in(&project.dir),
        })
    }
}

/// The options a continued run started with.
fn resumed_options(j: &Journal) -> Result<Options> {
    if j.run_finished() {
        let id = j
            .started()
            .map(|s| s.run_id.to_string())
            .unwrap_or_default();
        return Err(Error::state(format!("run {id} already finished")).hint(
            "to work on the queue again: baton run verify --queue NAME (complete items are skipped)",
        ));
    }
    j.started()
        .and_then(|s| serde_json::from_value(s.options.clone()).ok())
        .ok_or_else(|| {
            Error::corrupt(
                j.dir.join("events.jsonl"),
                Some(1),
                "does not start with a verify run_started",
            )
        })
}
