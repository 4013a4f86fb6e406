//! `baton run orchestrate|poc|graduate TASK`: a task of the store through its workflow.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use super::TaskArgs;
use crate::cli::Ctx;
use crate::cli::progress::Progress;
use baton_core::error::{Error, Result};
use baton_engine::cli_agents::CliAgents;
use baton_engine::conductor::{Conductor, Policy};
use baton_engine::definition::WorkflowKind;
use baton_engine::events::{Reporter, RunEvent, Subject};
use baton_engine::journal::{Entry, Journal, Started};
use baton_engine::workflow::task::def as task_def;
use baton_engine::workflow::task::{Stop, TaskEngine, TaskOptions};
use baton_store::model::{Mode, Status, Workflow};
use baton_store::{Store, metrics::human_ms};

#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    options: TaskOptions,
    scenario: Option<PathBuf>,
}

/// A new run (or the continuation of the task's unfinished one), or a run continued by id.
pub enum Start {
    Fresh(WorkflowKind, TaskArgs),
    Resume { journal: Journal, no_wait: bool },
}

pub fn run(ctx: &Ctx, start: Start) -> Result<ExitCode> {
    let local = ctx.project.local_dir();
    let store = ctx.store();
    let project_dir = baton_engine::git::Git::new(&ctx.project.dir)
        .toplevel()
        .unwrap_or_else(|_| ctx.project.dir.clone());
    // A run started here comes held; a continued one is held below.
    let (journal, resumed, no_wait, started_held) = match start {
        Start::Resume { journal, no_wait } => {
            if journal.run_finished() {
                let id = journal
                    .started()
                    .map(|s| s.run_id.to_string())
                    .unwrap_or_default();
                return Err(Error::state(format!("run {id} already finished"))
                    .hint("see where its task stands with `baton status`"));
            }
            (journal, true, no_wait, None)
        }
        Start::Fresh(kind, a) => {
            let (j, resumed, held) = fresh(ctx, kind, &a, &store, &local)?;
            (j, resumed, a.no_wait, held)
        }
    };
    // Held until the run returns: no second baton resumes it meanwhile.
    let _hold = match started_held {
        Some(h) => Some(h),
        None => journal.hold()?,
    };
    if resumed {
        journal.clean_up_after_a_killed_baton();
    }
    let (run_id, workflow, slug, saved) = {
        let Started {
            run_id: id,
            workflow: wf,
            subjects: epics,
            options: opts,
        } = journal.started().ok_or_else(|| {
            Error::corrupt(
                journal.dir.join("events.jsonl"),
                Some(1),
                "does not start with run_started",
            )
        })?;
        let saved: Saved = serde_json::from_value(opts.clone()).map_err(|e| {
            Error::corrupt(journal.dir.join("events.jsonl"), Some(1), e.to_string())
        })?;
        (
            id.to_string(),
            wf.to_string(),
            epics.first().cloned().unwrap_or_default(),
            saved,
        )
    };
    if resumed {
        // The task's store writes the killed baton cut short (its state, artifacts).
        baton_core::fs::clear_cut_short_writes(&store.task_dir(&slug), &project_dir);
    }
    let mut options = saved.options;
    options.no_wait = no_wait;
    let wdir = local.join("workflows");
    let (wf, source, text) = task_def::load(&workflow, &wdir)?;
    let poc_wf = if workflow == "orchestrate" {
        Some(task_def::load("poc", &wdir)?)
    } else {
        None
    };
    let agents =
        CliAgents::new(&project_dir, saved.scenario.clone()).configured(&ctx.project.config);
    let progress = Progress::new(ctx.out.json, false);
    progress.report(&RunEvent::RunStarted {
        run_id: &run_id,
        workflow: &workflow,
        subjects: std::slice::from_ref(&slug),
        resumed,
    });
    // The conductor continues the session (and the counts) the journal last recorded.
    let meter = journal
        .records
        .iter()
        .rev()
        .find_map(|r| match &r.entry {
            Entry::ConductorCalled { meter, .. } => Some(meter.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let policy = Policy::from_budget(&ctx.project.config.budget);
    let mut engine = TaskEngine {
        project_dir: project_dir.clone(),
        store: store.clone(),
        slug: slug.clone(),
        wf,
        wf_text: (source, text),
        poc_wf,
        journal: Mutex::new(journal),
        agents: &agents,
        reporter: &progress,
        opts: options,
        prompts_dir: local.join("prompts"),
        attempts: Mutex::new(HashMap::new()),
        printed: Mutex::new(vec![]),
        conductor: None,
        dry_run: None,
    };
    if let Some(d) = &engine.wf.conductor {
        let mut c = Conductor::new(engine.assignment(&engine.wf, &d.role), policy);
        c.meter = meter;
        engine.conductor = Some(Mutex::new(c));
    }
    let stop = engine.run()?;
    let mut j = engine
        .journal
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    let terminal = matches!(
        stop,
        Stop::Completed | Stop::Failed | Stop::Shelved | Stop::Cancelled
    );
    if terminal && !j.run_finished() {
        let result = match stop {
            Stop::Completed => "done",
            Stop::Failed => "failed",
            Stop::Shelved => "shelved",
            _ => "cancelled",
        };
        j.log(Entry::SubjectFinished {
            subject: Subject::task(&slug, None),
            result: result.into(),
            reason: String::new(),
        })?;
        j.log(Entry::RunFinished {
            done: u32::from(stop == Stop::Completed),
            failed: u32::from(stop == Stop::Failed),
            skipped: 0,
        })?;
    }
    let m = store.manifest(&slug)?;
    let calls = j.agent_calls();
    let rel = j.dir_in(&project_dir);
    let (line, code) = match &stop {
        Stop::Completed => ("completed".to_string(), 0),
        Stop::Failed => ("failed".to_string(), 1),
        Stop::Shelved => (
            "shelved (baton task summary shows what was found)".to_string(),
            0,
        ),
        Stop::Cancelled => ("cancelled".to_string(), 0),
        Stop::Paused(why) => (
            format!(
                "paused: {why}\n  continue: baton resume --task {slug} --decision retry, then baton run {workflow} {slug}\n  give up:  baton resume --task {slug} --decision reject"
            ),
            1,
        ),
        Stop::Waiting(g) => (
            format!(
                "waiting at the {g} gate (--no-wait)\n  decide:   baton resume --task {slug} --decision {}\n  continue: baton run --resume {run_id}",
                baton_engine::workflow::task::gate_decisions(*g)
            ),
            0,
        ),
    };
    progress.finish();
    let report = crate::report::at_run_end(&j.dir, Some(&store));
    let summary = serde_json::json!({"task": slug, "workflow": workflow, "status": m.status, "agent_calls": calls, "run_dir": rel, "report_html": report, "manifest": m});
    let result = match &stop {
        Stop::Completed => "completed",
        Stop::Failed => "failed",
        Stop::Shelved => "shelved",
        Stop::Cancelled => "cancelled",
        Stop::Paused(_) => "paused",
        Stop::Waiting(_) => "waiting",
    };
    let next = line
        .split_once('\n')
        .map(|(_, rest)| rest.trim().to_string());
    progress.report(&RunEvent::RunFinished {
        run_id: &run_id,
        result,
        next: next.as_deref(),
        summary: Some(&summary),
    });
    if !ctx.out.json {
        println!(
            "task {slug}: {line}\n  {} phases · {} busy · {} saved by parallel waves · {calls} agent calls\n  run log: {rel}",
            m.completed_phases.len(),
            human_ms(m.metrics.total_duration_ms.unwrap_or(0)),
            human_ms(m.metrics.parallelization_savings_ms.unwrap_or(0)),
        );
        super::print_report(report.as_deref(), &project_dir);
    }
    Ok(ExitCode::from(code))
}

/// The unfinished run of `slug`, if any: rerunning a task continues its run.
fn fresh(
    ctx: &Ctx,
    kind: WorkflowKind,
    a: &TaskArgs,
    store: &Store,
    local: &Path,
) -> Result<(Journal, bool, Option<std::fs::File>)> {
    let workflow = kind.name().to_string();
    let name = &a.task;
    let slug = baton_store::names::slugify(name)?;
    if !store.exists(&slug) {
        let mode = if workflow == "poc" { " --mode poc" } else { "" };
        return Err(Error::not_found(format!("no task `{slug}`")).hint(format!(
            "create it: baton task init \"{name}\"{mode} --workflow {workflow} (list: baton task list)"
        )));
    }
    // The workflows (orchestrate may switch to poc) and every role's agent must be valid
    // before anything changes.
    let mut names = vec![workflow.as_str()];
    if workflow == "orchestrate" {
        names.push("poc");
    }
    let run_cfg = &ctx.project.config.run;
    for name in names {
        let (wf, _, _) = task_def::load(name, &local.join("workflows"))?;
        let roles = wf
            .phases
            .iter()
            .map(|p| &p.role)
            .chain(wf.conductor.iter().map(|c| &c.role));
        for role in roles {
            let who = baton_engine::definition::assign(
                role,
                a.agent.agent.as_ref(),
                &run_cfg.roles,
                &wf.roles,
                &run_cfg.default_agent,
            );
            baton_engine::cli_agents::runnable(&who, &ctx.project.config.agents)?;
        }
    }
    let m = store.manifest(&slug)?;
    let (slug, from) = match workflow.as_str() {
        "graduate" if m.workflow == Workflow::Poc || m.mode == Mode::Poc => {
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
                eprintln!("created task {g} (standard mode, graduate workflow) from poc {slug}");
            }
            (g, Some(slug))
        }
        "graduate" if m.workflow == Workflow::Graduate => {
            let from = slug.strip_suffix("-graduate").map(str::to_string);
            if from.as_deref().is_none_or(|f| !store.exists(f)) {
                return Err(Error::state(format!(
                    "task `{slug}` graduates no poc: name the completed poc task instead"
                ))
                .hint("baton run graduate <poc-task> (creates <poc-task>-graduate)"));
            }
            (slug, from)
        }
        _ => (slug, None),
    };
    if let Some(j) = Journal::unfinished(local, &["orchestrate", "poc", "graduate"], &slug) {
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
        eprintln!("continuing the unfinished run of task {slug}");
        super::note_kept_options(&a.agent, a.parallel);
        return Ok((j, true, None));
    }
    let m = store.manifest(&slug)?;
    let fits = match workflow.as_str() {
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
    let from_plan = a.from == Some(super::StartFrom::Plan);
    if from_plan {
        check_planned(&workflow, &slug, &m)?;
    }
    let cfg = &ctx.project.config;
    let scenario = super::scenario(ctx, &a.agent)?;
    let saved = Saved {
        options: TaskOptions {
            agent: a.agent.agent.clone(),
            default_agent: cfg.run.default_agent.clone(),
            roles: cfg.run.roles.clone(),
            parallel: a.parallel.unwrap_or(0) as usize,
            no_wait: a.no_wait,
            from,
            from_plan,
        },
        scenario,
    };
    let run_id = baton_core::ids::new_id();
    let first = Entry::RunStarted {
        run_id: run_id.clone(),
        workflow: workflow.clone(),
        subjects: vec![slug.clone()],
        options: serde_json::to_value(&saved).map_err(|e| Error::internal(e.to_string()))?,
    };
    let (j, held) = Journal::start(local, &run_id, first)?;
    Ok((j, false, held))
}

/// `--from plan`: an orchestrate run of a task `baton plan` planned.
fn check_planned(workflow: &str, slug: &str, m: &baton_store::model::Manifest) -> Result<()> {
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
            .filter(|(_, c)| {
                c.phase == phase && c.status == baton_store::model::PhaseStatus::Success
            })
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
