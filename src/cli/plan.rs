//! `baton plan TASK`: the planning phase, headless, in a fresh context that reads only the
//! specs discovery stored (their sections extracted, within the phase's budget) and writes the
//! task breakdown the implementation waves use, stored as the task's spec and checked on disk.
//! It runs through the task engine's pipeline like every phase of `baton run`: journaled, its
//! prompt saved under the run's directory, a killed run continued by the same command.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Mutex;

use super::Ctx;
use super::agent_args::{self, AgentArgs};
use crate::cli::progress::Progress;
use baton_core::error::{Error, Result};
use baton_engine::cli_agents::CliAgents;
use baton_engine::events::Subject;
use baton_engine::journal::{Entry, Journal};
use baton_engine::workflow::task::def as task_def;
use baton_engine::workflow::task::{Stop, TaskEngine, TaskOptions, plan};
use baton_store::model::Status;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
baton plan add-login                      # after baton discover add-login\n  \
baton plan add-login --agent sim          # the simulated agent (no LLM)\n  \
baton plan add-login --dry-run            # the prompt it would send\n  \
baton run orchestrate add-login --from plan   # then: implementation waves, tests, audits\n\n\
The plan is stored as the task's spec.md (## Tasks, one `### Task N` each) and must parse into\n\
waves; a failed plan pauses the task (baton resume --task T --decision retry, then baton plan T).")]
pub struct Args {
    /// The task (its slug or name; default: the current task)
    #[arg(value_name = "TASK")]
    pub target: Option<String>,
    #[command(flatten)]
    pub agent: AgentArgs,
    /// The task workflow whose plan phase to run (and whose discovery wrote the specs)
    #[arg(long, value_name = "NAME", default_value = "plan")]
    pub workflow: String,
    /// Print the prompt that would be sent; run nothing, change nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    options: TaskOptions,
    scenario: Option<std::path::PathBuf>,
    /// The workflow whose plan phase runs: a continued run keeps it, whatever `--workflow` says.
    #[serde(default = "plan_workflow")]
    workflow: String,
}

fn plan_workflow() -> String {
    "plan".into()
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    baton_engine::interrupt::install();
    let store = ctx.store();
    let local = ctx.project.local_dir();
    let project_dir = baton_engine::git::Git::new(&ctx.project.dir)
        .toplevel()
        .unwrap_or_else(|_| ctx.project.dir.clone());
    let slug = match a.target.as_deref() {
        Some(t) => store.resolve(Some(&baton_store::names::slugify(t)?))?,
        None => store.resolve(ctx.task.as_deref())?,
    };
    let wdir = local.join("workflows");
    // An unfinished plan run of the task is continued with the workflow it started with.
    let started_with = (!a.dry_run)
        .then(|| Journal::unfinished(&local, &["plan"], &slug))
        .flatten()
        .and_then(|j| {
            let opts = j.started()?.options.clone();
            serde_json::from_value::<Saved>(opts).ok()
        })
        .map(|s| s.workflow);
    let workflow = started_with.unwrap_or_else(|| a.workflow.clone());
    let (wf, source, text) = task_def::load(&workflow, &wdir)?;
    let phase = wf
        .phase("plan")
        .ok_or_else(|| {
            Error::invalid(format!("workflow {source} has no `plan` phase"))
                .hint("use the built-in one: baton plan TASK --workflow plan")
        })?
        .clone();
    // Nothing starts without specs to plan from, in a task that can take the phase.
    let discovery = plan::discovery_phase(&wf, &source)?;
    plan::extracted(&store.task_dir(&slug), &project_dir, discovery, &slug)?;
    let m = store.manifest(&slug)?;
    if m.status != Status::Running && !a.dry_run {
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
    let cfg = &ctx.project.config;
    let who = baton_engine::definition::assign(
        &phase.role,
        a.agent.agent.as_ref(),
        &cfg.run.roles,
        &wf.roles,
        &cfg.run.default_agent,
    );
    baton_engine::cli_agents::runnable(&who, &cfg.agents)?;
    let options = || TaskOptions {
        agent: a.agent.agent.clone(),
        default_agent: cfg.run.default_agent.clone(),
        roles: cfg.run.roles.clone(),
        ..TaskOptions::default()
    };
    let unfinished = (!a.dry_run)
        .then(|| Journal::unfinished(&local, &["plan"], &slug))
        .flatten();
    let resumed = unfinished.is_some();
    // A run started here comes held; a continued one is held below.
    let (journal, started_held) = match unfinished {
        Some(j) => {
            eprintln!("continuing the unfinished plan run of task {slug}");
            (j, None)
        }
        None if a.dry_run => (Journal::memory(), None),
        None => {
            let saved = Saved {
                options: options(),
                workflow: workflow.clone(),
                scenario: agent_args::scenario(ctx, &a.agent)?,
            };
            let run_id = baton_core::ids::new_id();
            let first = Entry::RunStarted {
                run_id: run_id.clone(),
                workflow: "plan".into(),
                subjects: vec![slug.clone()],
                options: serde_json::to_value(&saved)
                    .map_err(|e| Error::internal(e.to_string()))?,
            };
            Journal::start(&local, &run_id, first)?
        }
    };
    let saved: Saved = match journal.started() {
        Some(s) => serde_json::from_value(s.options.clone()).map_err(|e| {
            Error::corrupt(journal.dir.join("events.jsonl"), Some(1), e.to_string())
        })?,
        None => Saved {
            options: options(),
            scenario: None,
            workflow: workflow.clone(),
        },
    };
    // Held until the plan returns: a second `baton plan` of the task meanwhile is refused
    // instead of stopping this one's agent and writing the same journal.
    let _hold = match started_held {
        Some(h) => Some(h),
        None => journal.hold()?,
    };
    if resumed {
        journal.clean_up_after_a_killed_baton();
    }
    let agents = CliAgents::new(&project_dir, saved.scenario.clone()).configured(cfg);
    let progress = Progress::new(ctx.out.json, a.dry_run);
    let dry = Mutex::new(vec![]);
    let engine = TaskEngine {
        project_dir: project_dir.clone(),
        store: store.clone(),
        slug: slug.clone(),
        wf: wf.clone(),
        wf_text: (source, text),
        poc_wf: None,
        journal: Mutex::new(journal),
        agents: &agents,
        reporter: &progress,
        opts: saved.options,
        prompts_dir: local.join("prompts"),
        attempts: Mutex::new(HashMap::new()),
        printed: Mutex::new(vec![]),
        conductor: None,
        dry_run: a.dry_run.then_some(&dry),
    };
    if a.dry_run {
        engine.dry_phase(&wf, &phase)?;
        progress.finish();
        let phases = dry.into_inner().unwrap_or_else(|e| e.into_inner());
        ctx.out.emit(&phases, |w| {
            for p in &phases {
                writeln!(
                    w,
                    "{} (dry run: nothing sent)\n  agent: {}{}\n--- prompt ---\n{}",
                    p.title,
                    p.agent,
                    p.argv
                        .as_ref()
                        .map(|c| format!("\n  command: {c}"))
                        .unwrap_or_default(),
                    p.prompt
                )?;
            }
            Ok(())
        });
        return Ok(ExitCode::SUCCESS);
    }
    let stop = engine.single(&wf, &phase, None)?;
    let mut j = engine
        .journal
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    let rel = j.dir_in(&project_dir);
    progress.finish();
    match stop {
        None => {
            if !j.run_finished() {
                j.log(Entry::SubjectFinished {
                    subject: Subject::task(&slug, None),
                    result: "done".into(),
                    reason: String::new(),
                })?;
                j.log(Entry::RunFinished {
                    done: 1,
                    failed: 0,
                    skipped: 0,
                })?;
            }
            let spec = baton_store::artifacts::latest(&store.task_dir(&slug), "spec");
            let tasks = spec
                .as_ref()
                .and_then(|p| std::fs::read_to_string(p).ok())
                .map(|t| baton_engine::workflow::task::parse_tasks(&t).len())
                .unwrap_or(0);
            let spec_rel = spec
                .map(|p| {
                    p.strip_prefix(&project_dir)
                        .unwrap_or(&p)
                        .display()
                        .to_string()
                })
                .unwrap_or_default();
            let v = serde_json::json!({"task": slug, "result": "planned", "tasks": tasks, "plan": spec_rel, "run_dir": rel, "next": format!("baton run orchestrate {slug} --from plan")});
            ctx.out.emit(&v, |w| {
                writeln!(
                    w,
                    "task {slug} planned: {tasks} tasks in {spec_rel}\n  run log: {rel}\n  next: baton run orchestrate {slug} --from plan"
                )
            });
            Ok(ExitCode::SUCCESS)
        }
        Some(stop) => {
            let why = match stop {
                Stop::Paused(why) => why,
                other => format!("{other:?}"),
            };
            let v = serde_json::json!({"task": slug, "result": "paused", "reason": why, "run_dir": rel});
            ctx.out.emit(&v, |w| {
                writeln!(
                    w,
                    "task {slug}: plan paused: {why}\n  continue: baton resume --task {slug} --decision retry, then baton plan {slug}\n  run log: {rel}"
                )
            });
            Ok(ExitCode::from(1))
        }
    }
}
