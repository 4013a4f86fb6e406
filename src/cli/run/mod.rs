//! `baton run`: one subcommand per workflow, each with its own flags (parsed and checked by
//! clap, once), and `--resume RUN_ID`, which continues any run with the options it started
//! with. The engines live in `baton_engine::workflow`; this only turns arguments into their options
//! and renders what they report.

use std::process::ExitCode;

use super::Ctx;
use super::agent_args::{AgentArgs, scenario};
use crate::error::{Error, Result};
use baton_agent::settings::AgentId;
use baton_engine::definition::WorkflowKind;
use baton_engine::journal::Journal;

mod epic;
mod task;
pub(crate) mod verify;

#[derive(Debug, Clone, clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  baton run epic-execute 1 --agent sim\n  \
baton run epic-execute 2 --party-all --start-from 2.3\n  \
baton run epic-execute 1 --dry-run --verbose   # print every prompt, run nothing\n  \
baton run epic-chain 1 2 3                     # the handoff of each epic feeds the next\n  \
baton run orchestrate add-login --agent sim     # a task of the store: design → gates → waves → audit\n  \
baton run poc cache-layer --parallel 2          # then: baton run graduate cache-layer\n  \
baton run verify --queue dat-q1                 # every item of a queue through the verify pipeline\n  \
baton run --resume 20261122T130501-7f3a9c       # after a crash or kill -9: continues, never repeats\n  \
baton run --resume 20261122T130501-7f3a9c --retry 1.3   # 1.3 failed; you edited it: again\n\n\
Each phase is a fresh agent process; context moves through files and git, not prompts.\n\
Agents: claude (default), codex, gemini, sim (the built-in simulated agent; scenario from\n\
--scenario or .baton/sim.toml). --json prints one event per line. Exit code 1 when a story,\n\
task or item failed."
)]
pub struct Args {
    #[command(subcommand)]
    pub workflow: Option<Workflow>,
    /// Continue an interrupted run where it stopped, with the options it started with
    #[arg(long, value_name = "RUN_ID", add = crate::cli::complete::run_ids())]
    pub resume: Option<String>,
    /// With --resume of an orchestrate|poc|graduate run: exit at a gate instead of waiting
    #[arg(long, requires = "resume")]
    pub no_wait: bool,
    /// With --resume of an epic run: develop these failed (or escalated) stories again, with
    /// their attempts anew, after you edited them (comma-separated). A run that finished
    /// develops them in a new run
    #[arg(
        long,
        requires = "resume",
        value_name = "STORY,…",
        value_delimiter = ','
    )]
    pub retry: Vec<String>,
    /// With --retry: start from the changes of the story's failed round (its stash)
    #[arg(long, requires = "retry")]
    pub apply_stash: bool,
    /// Not with --resume: a run keeps the agents it started with (refused, with the reason)
    #[arg(long, requires = "resume", hide = true)]
    pub agent: Option<AgentId>,
    /// The task store of orchestrate|poc|graduate runs
    #[command(flatten)]
    pub store: crate::cli::StoreRoot,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum Workflow {
    /// Every story of one epic through kickoff, dev, review (fresh agents), then UAT and retro
    #[command(after_help = "Examples:\n  baton run epic-execute 1 --agent sim\n  \
baton run epic-execute 1 --party-all --parallel 3\n  baton run epic-execute 1 --only 1.2,1.4\n  \
baton run epic-execute 1 --dry-run --verbose")]
    EpicExecute(EpicArgs),
    /// Several epics in order; each epic's handoff feeds the next epic's prompts
    #[command(after_help = "Example:\n  baton run epic-chain 1 2 3 --party-retro")]
    EpicChain(ChainArgs),
    /// A task of the store: architect, design audit, gates, spec, implementation waves, audits
    #[command(
        after_help = "Examples:\n  baton task init \"Add login\" --workflow orchestrate\n  \
baton run orchestrate add-login --agent sim\n  baton run orchestrate add-login --no-wait   # exit at a gate\n  \
baton discover add-login && baton plan add-login && baton run orchestrate add-login --from plan"
    )]
    Orchestrate(TaskArgs),
    /// A poc task: architect, implementation waves, debt.md
    #[command(
        after_help = "Example:\n  baton task init cache --mode poc --workflow poc && baton run poc cache"
    )]
    Poc(TaskArgs),
    /// A completed poc to production quality, as the task <poc>-graduate
    #[command(after_help = "Example:\n  baton run graduate cache")]
    Graduate(TaskArgs),
    /// Every item of a queue through the verify pipeline, each phase a fresh sub-agent
    #[command(after_help = "Examples:\n  baton queue add dat-q1 BMNR MARA\n  \
baton run verify --queue dat-q1 --agent sim   # again after a crash: continues the same run")]
    Verify(VerifyArgs),
}

// The flags of epic runs (a plain comment: see `AgentArgs`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct EpicFlags {
    /// Party kickoff: Winston, Amelia and Murat discuss the story before dev
    #[arg(long)]
    pub party_kickoff: bool,
    /// Party review: several personas review the staged code together
    #[arg(long)]
    pub party_review: bool,
    /// Failure analysis: a blocked or failed story gets an analysis with a recommendation
    #[arg(long)]
    pub party_failure: bool,
    /// Retrospective and handoff for the next epic after the stories
    #[arg(long)]
    pub party_retro: bool,
    /// All four party phases
    #[arg(long)]
    pub party_all: bool,
    /// Personas of party phases, comma-separated (Winston, Murat, Amelia, Bob)
    #[arg(long, value_delimiter = ',')]
    pub party_agents: Vec<String>,
    /// Print every prompt that would be sent; run no agent, change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: the prompts in full
    #[arg(long, requires = "dry_run")]
    pub verbose: bool,
    /// Start at this story (the ones before it are skipped; across the epics of a chain)
    #[arg(long, value_name = "STORY")]
    pub start_from: Option<String>,
    /// Only these stories, comma-separated (the others are skipped, and an epic with none of
    /// them is skipped whole)
    #[arg(long, value_name = "STORY,…", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Skip stories whose status is already done (the default; kept for scripts)
    #[arg(long, hide = true)]
    pub skip_done: bool,
    /// Run these stories again although their status says done (comma-separated); done
    /// stories are skipped otherwise, and the run says so
    #[arg(long, value_name = "STORY,…", value_delimiter = ',')]
    pub redo: Vec<String>,
    /// Run every story again, done or not
    #[arg(long)]
    pub redo_all: bool,
    /// Leave changes staged instead of committing each story (in your checkout)
    #[arg(long)]
    pub no_commit: bool,
    /// When an agent's usage limit is spent, wait until it resets (its message says when;
    /// else the backoff, doubling) and go on, instead of pausing the run (exit 7)
    #[arg(long)]
    pub wait_for_quota: bool,
    /// Pause after every story or every epic (before the next one), telling the notifier;
    /// `baton run --resume RUN_ID` goes on
    #[arg(long, value_name = "story|epic", value_parser = ["story", "epic"])]
    pub pause_after: Option<String>,
    /// Work in your checkout itself, not in a worktree of the run's own (the run's commits
    /// then go straight onto your branch, and your own edits meanwhile can join them)
    #[arg(long)]
    pub in_place: bool,
    /// No review phase
    #[arg(long)]
    pub skip_review: bool,
    /// Who develops each story: `baton` (its kickoff, dev and review phases) or
    /// `bmad-build-auto` (the BMAD 6 skill installed in the project, once per story of a spec
    /// folder); default: the workflow's `dev`, else baton.toml's `[run] dev`, else baton
    #[arg(long, value_name = "WHO", value_parser = ["baton", "bmad-build-auto"])]
    pub dev: Option<String>,
    /// Run up to N stories at once, each in its own git worktree, merged back in story order
    /// (a story file's `Depends on: 1.2` line makes it wait for 1.2)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub parallel: Option<u32>,
    /// Do not run the project's checks (`[checks]`, or the test command found) before
    /// committing a story: its work is committed on the agents' word (the run says so)
    #[arg(long)]
    pub no_checks: bool,
    /// Develop stories whose status is still drafted (skipped otherwise, saying so)
    #[arg(long)]
    pub allow_draft: bool,
    /// Run the epic's UAT and retrospective although some of its stories have no file yet
    #[arg(long)]
    pub allow_missing: bool,
}

#[derive(Debug, Clone, clap::Args)]
pub struct EpicArgs {
    /// The epic's id, or a BMAD 6 spec folder (its path or name; see `baton stories EPIC`)
    pub epic: String,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub flags: EpicFlags,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ChainArgs {
    /// The epics (or BMAD 6 spec folders), in the order to run them
    #[arg(required = true, num_args = 1..)]
    pub epics: Vec<String>,
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub flags: EpicFlags,
}

#[derive(Debug, Clone, clap::Args)]
pub struct TaskArgs {
    /// The task (its slug, or its name)
    #[arg(add = crate::cli::complete::task_slugs())]
    pub task: String,
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Implementation tasks at once (default: the workflow's policy.parallel)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub parallel: Option<u32>,
    /// At a gate, exit (code 0) instead of waiting for the decision; rerun the same command
    /// (or `--resume RUN_ID`) after `baton resume --decision …`
    #[arg(long)]
    pub no_wait: bool,
    /// orchestrate: start after this phase. `plan`: the task was planned with `baton plan`
    /// (its task breakdown is the spec), so the implementation waves run first
    #[arg(long, value_name = "PHASE", value_enum)]
    pub from: Option<StartFrom>,
    /// When an agent's usage limit is spent, wait until it resets and go on, instead of
    /// pausing the run (exit 7)
    #[arg(long)]
    pub wait_for_quota: bool,
}

/// Where a task run may start other than at its first phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StartFrom {
    /// After `baton plan`: implementation, tests, audits
    Plan,
}

#[derive(Debug, Clone, clap::Args)]
pub struct VerifyArgs {
    /// The queue whose items to run (`baton queue add NAME ITEM…`)
    #[arg(long, value_name = "NAME", add = crate::cli::complete::queue_names())]
    pub queue: String,
    #[command(flatten)]
    pub agent: AgentArgs,
    /// When an agent's usage limit is spent, wait until it resets and go on, instead of
    /// pausing the run (exit 7)
    #[arg(long)]
    pub wait_for_quota: bool,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    // Ctrl-C, kill and a closed terminal stop the run cleanly, resumable (run::interrupt).
    baton_engine::interrupt::install();
    match (a.workflow, a.resume) {
        (Some(w), _) => match w {
            Workflow::EpicExecute(e) => epic::run(
                ctx,
                epic::Start::Fresh {
                    workflow: WorkflowKind::EpicExecute,
                    epics: vec![e.epic],
                    agent: e.agent,
                    flags: e.flags,
                },
            ),
            Workflow::EpicChain(c) => epic::run(
                ctx,
                epic::Start::Fresh {
                    workflow: WorkflowKind::EpicChain,
                    epics: c.epics,
                    agent: c.agent,
                    flags: c.flags,
                },
            ),
            Workflow::Orchestrate(t) => task::run(ctx, task::Start::Fresh(WorkflowKind::Orchestrate, t)),
            Workflow::Poc(t) => task::run(ctx, task::Start::Fresh(WorkflowKind::Poc, t)),
            Workflow::Graduate(t) => task::run(ctx, task::Start::Fresh(WorkflowKind::Graduate, t)),
            Workflow::Verify(v) => verify::run(ctx, verify::Start::Fresh(v)),
        },
        (None, Some(id)) => {
            // A resumed run is routed by the workflow its journal started.
            let local = ctx.project.local_dir();
            let j = Journal::open(&local, &id)?;
            // What a kill cut short in `.baton/` itself (ATTENTION.md, the current task), also
            // when the kill came after the run's last event: this resume is then the user's
            // only next step, and it says the run is finished.
            let removed = baton_core::fs::remove_stale_temps(&local, std::time::Duration::from_secs(60));
            baton_core::fs::note_removed_temps(&removed, &ctx.project.dir);
            if let Some(why) = j.closed() {
                return Err(Error::state(format!("run {id} was closed: {why}")).hint(
                    "it is not continued; start a new run (stories it finished are skipped as done)",
                ));
            }
            if let Some(a) = a.agent {
                // Its journal's calls were made by the agents it started with; a different
                // agent mid-run would mix two contexts' work in one story: refused, not ignored.
                let started = j
                    .started()
                    .and_then(|s| s.options.get("options").or(Some(s.options)).and_then(|o| o.get("agent")).cloned())
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "the roles' agents".into());
                return Err(Error::invalid(format!(
                    "run {id} continues with the agent it started with ({started}), not {}",
                    a
                ))
                .hint(format!(
                    "resume it as it is: baton run --resume {id}; or start a new run with --agent {}",
                    a
                )));
            }
            let started = j.started().map(|s| s.workflow.to_string()).unwrap_or_default();
            if started == "plan" {
                // A plan run is continued by `baton plan TASK`, the command that started it.
                let task = j.started().and_then(|s| s.subjects.first().cloned());
                if j.run_finished() {
                    return Err(Error::state(format!("run {id} already finished")).hint(
                        format!("plan the task again: baton plan {}", task.unwrap_or_default()),
                    ));
                }
                return super::plan::run(
                    ctx,
                    super::plan::Args {
                        target: task,
                        agent: AgentArgs::default(),
                        workflow: "plan".into(),
                        dry_run: false,
                        scope: Default::default(),
                    },
                );
            }
            let kind = WorkflowKind::parse(&started).ok_or_else(|| {
                Error::corrupt(
                    j.dir.join("events.jsonl"),
                    Some(1),
                    format!("run of an unknown workflow `{started}`"),
                )
            })?;
            if !a.retry.is_empty()
                && !matches!(kind, WorkflowKind::EpicExecute | WorkflowKind::EpicChain)
            {
                return Err(Error::invalid(format!(
                    "--retry is for epic-execute and epic-chain runs; run {id} is a {started} run"
                ))
                .hint(match kind {
                    WorkflowKind::Verify => "a failed verify item resumes at its failed phase when the queue runs again",
                    _ => "answer the task's pause with `baton resume --task TASK --decision retry`",
                }));
            }
            if a.no_wait && !kind.is_task() {
                return Err(Error::invalid(format!(
                    "--no-wait is for orchestrate, poc and graduate runs; run {id} is a {started} run"
                )));
            }
            match kind {
                WorkflowKind::EpicExecute | WorkflowKind::EpicChain => epic::run(
                    ctx,
                    epic::Start::Resume {
                        journal: j,
                        retry: a.retry,
                        apply_stash: a.apply_stash,
                    },
                ),
                WorkflowKind::Orchestrate | WorkflowKind::Poc | WorkflowKind::Graduate => {
                    task::run(
                        ctx,
                        task::Start::Resume {
                            journal: j,
                            no_wait: a.no_wait,
                        },
                    )
                }
                WorkflowKind::Verify => verify::run(ctx, verify::Start::Resume(j)),
            }
        }
        (None, None) => Err(Error::invalid("which workflow? e.g. `baton run epic-execute 1`")
            .hint("baton run epic-execute EPIC | epic-chain EPIC… | orchestrate|poc|graduate TASK | verify --queue NAME, or baton run --resume RUN_ID")),
    }
}

/// A run's end: its HTML report written (its path returned), and scratch beyond the
/// retention limits collected (`baton gc`), said when anything went.
fn at_run_end(
    ctx: &Ctx,
    run_dir: &std::path::Path,
    store: Option<&baton_store::Store>,
) -> Option<std::path::PathBuf> {
    let report = crate::report::at_run_end(run_dir, store);
    match super::gc::collect(ctx, ctx.project.config.mask.retention(), false) {
        Ok(p) if !p.remove.is_empty() => eprintln!(
            "note: removed {} old scratch files ({:.1} MB; [mask] keep_days and keep_mb in baton.toml)",
            p.remove.len(),
            p.remove.iter().map(|r| r.bytes).sum::<u64>() as f64 / (1024.0 * 1024.0)
        ),
        Ok(_) => {}
        Err(e) => eprintln!("warning: old scratch files not collected: {e}"),
    }
    report
}

/// Where the run's HTML report is (`at_run_end` wrote it).
fn print_report(report: Option<&std::path::Path>, project: &std::path::Path) {
    if let Some(p) = report {
        crate::outln!("report: {}", crate::cli::shown(project, p));
    }
}

/// A run that continues keeps the options it started with; say so when new ones were given.
fn note_kept_options(agent: &AgentArgs, parallel: Option<u32>) {
    if agent.agent.is_some() || agent.scenario.is_some() || parallel.is_some() {
        eprintln!(
            "note: the run continues with the options it started with; --agent, --scenario and --parallel given now are not used"
        );
    }
}
