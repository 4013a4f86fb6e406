//! `baton plan TASK`: the planning phase, headless, in a fresh context that reads only the
//! specs discovery stored (their sections extracted, within the phase's budget) and writes the
//! task breakdown the implementation waves use, stored as the task's spec and checked on disk.
//! It runs through the task engine's pipeline like every phase of `baton run`: journaled, its
//! prompt saved under the run's directory, a killed run continued by the same command.

use std::process::ExitCode;

use super::Ctx;
use super::agent_args::{self, AgentArgs};
use crate::cli::progress::Progress;
use crate::error::Result;
use baton_engine::workflow::task::plan_run::{PlanOutcome, PlanRun, PlanStart};

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
    #[command(flatten)]
    pub scope: super::Scope,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    baton_engine::interrupt::install();
    let store = ctx.store();
    let slug = match a.target.as_deref() {
        Some(t) => store.resolve(Some(&baton_store::names::slugify(t)?))?,
        None => store.resolve(ctx.task.as_deref())?,
    };
    let start = PlanStart {
        slug: slug.clone(),
        workflow: a.workflow.clone(),
        agent: a.agent.agent.clone(),
        scenario: agent_args::scenario(ctx, &a.agent)?,
        dry_run: a.dry_run,
    };
    let run = PlanRun::prepare(&ctx.project, &store, start)?;
    let progress = Progress::new(ctx.out.json, a.dry_run);
    if a.dry_run {
        let phases = run.dry_run(&ctx.project, &progress);
        progress.finish();
        let phases = phases?;
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
    let outcome = run.run(&ctx.project, &progress);
    progress.finish();
    match outcome? {
        PlanOutcome::Planned {
            tasks,
            spec,
            run_log,
        } => {
            let v = serde_json::json!({"task": slug, "result": "planned", "tasks": tasks, "plan": spec, "run_dir": run_log, "next": format!("baton run orchestrate {slug} --from plan")});
            ctx.out.emit(&v, |w| {
                writeln!(
                    w,
                    "task {slug} planned: {tasks} tasks in {}\n  run log: {}\n  next: baton run orchestrate {slug} --from plan",
                    super::shown(&ctx.project.dir, std::path::Path::new(&spec)),
                    super::shown(&ctx.project.dir, std::path::Path::new(&run_log))
                )
            });
            Ok(ExitCode::SUCCESS)
        }
        PlanOutcome::Paused { reason, run_log } => {
            let v = serde_json::json!({"task": slug, "result": "paused", "reason": reason, "run_dir": run_log});
            ctx.out.emit(&v, |w| {
                writeln!(
                    w,
                    "task {slug}: plan paused: {reason}\n  continue: baton resume --task {slug} --decision retry, then baton plan {slug}\n  run log: {}",
                    super::shown(&ctx.project.dir, std::path::Path::new(&run_log))
                )
            });
            Ok(ExitCode::from(1))
        }
    }
}
