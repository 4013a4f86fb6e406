//! `baton run`: execute a workflow (epic-execute, epic-chain) with agents in fresh processes.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Mutex, PoisonError};

use super::Ctx;

pub mod task;
mod verify;
use crate::error::{Error, Result};
use crate::run::cli_agents::CliAgents;
use crate::run::events::{Reporter, RunEvent};
use crate::run::git::Git;
use crate::run::journal::{Entry, Journal};
use crate::run::progress::Progress;
use crate::workflow::epic::def;
use crate::workflow::epic::project::{self, BmadStatus};
use crate::workflow::epic::{Engine, EpicReport, Options};

#[derive(Debug, Clone, clap::Args)]
#[command(after_help = "Examples:\n  baton run epic-execute 1 --agent sim\n  \
baton run epic-execute 2 --party-all --start-from 2.3\n  baton run epic-execute 1 --dry-run --verbose   # print every prompt, run nothing\n  \
baton run epic-chain 1 2 3                     # the handoff of each epic feeds the next\n  \
baton run --resume 20261122T130501-7f3a9c       # after a crash or kill -9\n  \
baton run orchestrate add-login --agent sim     # a task of the store: design → gates → waves → audit\n  \
baton run orchestrate add-login --no-wait       # stop at a gate instead of waiting for the decision\n  \
baton run poc cache-layer --parallel 2          # then: baton run graduate cache-layer\n\n\
Each phase is a fresh agent process; context moves through the story file and git staging.\n\
Agents: claude (default), codex, gemini, sim (the built-in simulated agent; scenario from\n\
--scenario or .baton/sim.toml). Exit code 1 when a story failed.")]
pub struct Args {
    /// epic-execute, epic-chain, orchestrate, poc, graduate or verify
    pub workflow: Option<String>,
    /// Epic id(s) (`1`, or several for epic-chain), or the task of orchestrate|poc|graduate
    pub epics: Vec<String>,
    /// verify: the queue whose items to run
    #[arg(long, value_name = "NAME")]
    pub queue: Option<String>,
    /// Continue an interrupted run where it stopped
    #[arg(long, value_name = "RUN_ID", conflicts_with_all = ["workflow", "epics"])]
    pub resume: Option<String>,
    /// Run every phase with this agent (claude, codex, gemini, sim)
    #[arg(long)]
    pub agent: Option<String>,
    /// Scenario of the simulated agent (TOML)
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    #[arg(long)]
    pub party_kickoff: bool,
    #[arg(long)]
    pub party_review: bool,
    #[arg(long)]
    pub party_failure: bool,
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
    #[arg(long)]
    pub verbose: bool,
    /// Start at this story (the ones before it are skipped)
    #[arg(long)]
    pub start_from: Option<String>,
    /// Skip stories whose status is already done
    #[arg(long)]
    pub skip_done: bool,
    /// Leave changes staged instead of committing each story
    #[arg(long)]
    pub no_commit: bool,
    /// No review phase
    #[arg(long)]
    pub skip_review: bool,
    /// Run up to N stories at once, each in its own git worktree, merged back in story order
    /// (a story file's `Depends on: 1.2` line makes it wait for 1.2). 1: one after another
    #[arg(long, value_name = "N", conflicts_with = "resume")]
    pub parallel: Option<usize>,
    /// orchestrate|poc|graduate: at a gate, exit (code 0) instead of waiting for the decision;
    /// rerun the same command (or `--resume RUN_ID`) after `baton resume --decision …`
    #[arg(long)]
    pub no_wait: bool,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    workflow: String,
    epics: Vec<String>,
    options: Options,
    scenario: Option<PathBuf>,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    // Task workflows and verify queues have engines of their own; a resumed run is routed by
    // the workflow its journal started.
    let workflow = match &a.resume {
        Some(id) => Journal::open(&ctx.project.local_dir(), id)?
            .started()
            .map(|s| s.1.to_string()),
        None => a.workflow.clone(),
    };
    match workflow.as_deref() {
        Some("orchestrate" | "poc" | "graduate") => return task::run(ctx, a),
        Some("verify") => return verify::run(ctx, a),
        _ => {}
    }
    // The tokenizer's tables take tens of milliseconds to load: load them while the project
    // is scanned, not on the first phase's critical path.
    std::thread::spawn(|| crate::context::tokens::Encoding::O200kBase.count(""));
    let project_dir = Git::new(&ctx.project.dir).toplevel()?;
    let local = ctx.project.local_dir();
    let (saved, journal) = match &a.resume {
        Some(id) => {
            let j = Journal::open(&local, id)?;
            if j.run_finished() {
                return Err(Error::state(format!("run {id} already finished"))
                    .hint("see its summary with `baton status`"));
            }
            let (_, _, _, opts) = j.started().ok_or_else(|| {
                Error::corrupt(
                    j.dir.join("events.jsonl"),
                    Some(1),
                    "does not start with run_started",
                )
            })?;
            let saved: Saved = serde_json::from_value(opts.clone())
                .map_err(|e| Error::corrupt(j.dir.join("events.jsonl"), Some(1), e.to_string()))?;
            (saved, Some(j))
        }
        None => (fresh(ctx, &a)?, None),
    };
    let (wf, _) = def::load(
        if saved.workflow == "epic-chain" {
            "epic-execute"
        } else {
            &saved.workflow
        },
        &local.join("workflows"),
    )?;
    let git = Git::new(&project_dir);
    let branch = git.branch().unwrap_or_default();
    if !saved.options.dry_run
        && !saved.options.no_commit
        && saved.options.protected_branches.contains(&branch)
    {
        return Err(Error::state(format!("refusing to commit on the protected branch `{branch}`"))
            .hint("work on a branch (git switch -c epic-1), pass --no-commit, or set [run] protected_branches in baton.toml"));
    }
    if a.resume.is_none() && saved.options.parallel > 1 && !saved.options.dry_run {
        // Stories branch from HEAD and merge back into this checkout: edits to tracked files
        // here would be invisible to them and in the way of their merges.
        let dirty = git.tracked_changes()?;
        if !dirty.is_empty() {
            return Err(Error::state(format!(
                "--parallel needs a clean checkout; changed: {}",
                dirty.join(", ")
            ))
            .hint("commit or stash your changes first (git stash), or run without --parallel"));
        }
    }
    // Find every epic before anything changes: a typo fails now, not after an hour of work.
    let epics: Vec<_> = saved
        .epics
        .iter()
        .map(|e| project::load_epic(&project_dir, e))
        .collect::<Result<_>>()?;
    for e in &epics {
        if e.stories.is_empty() {
            return Err(
                Error::not_found(format!("epic {} has no story files", e.id)).hint(format!(
                    "see what baton finds with `baton stories {}`",
                    e.id
                )),
            );
        }
    }
    let run_id = match &journal {
        Some(j) => j.started().map(|s| s.0.to_string()).unwrap_or_default(),
        None => crate::context::session::new_id(),
    };
    let journal = match journal {
        Some(j) => j,
        None if saved.options.dry_run => Journal::memory(),
        None => {
            let mut j = Journal::create(&local, &run_id)?;
            let options =
                serde_json::to_value(&saved).map_err(|e| Error::internal(e.to_string()))?;
            j.log(Entry::RunStarted {
                run_id: run_id.clone(),
                workflow: saved.workflow.clone(),
                subjects: saved.epics.clone(),
                options,
            })?;
            j
        }
    };
    let agents = CliAgents::new(&project_dir, saved.scenario.clone())
        .skip_permissions(ctx.project.config.run.skip_permissions);
    let status = BmadStatus::new(&project_dir);
    let progress = Progress::new(ctx.out.json, saved.options.dry_run);
    progress.report(&RunEvent::RunStarted {
        run_id: &run_id,
        workflow: &saved.workflow,
        subjects: &saved.epics,
        resumed: a.resume.is_some(),
    });
    let mut engine = Engine {
        project_dir: project_dir.clone(),
        git,
        wf,
        opts: saved.options.clone(),
        journal: Mutex::new(journal),
        agents: &agents,
        reporter: &progress,
        status: &status,
        prompts_dir: local.join("prompts"),
        worktrees_dir: local.join("worktrees"),
        run_id: run_id.clone(),
        resumed: a.resume.is_some(),
        dry_prompts: Mutex::new(vec![]),
    };
    let mut reports: Vec<EpicReport> = Vec::new();
    let mut handoff: Option<PathBuf> = None;
    for epic in &epics {
        let r = engine.run_epic(epic, handoff.as_deref())?;
        let h = PathBuf::from(format!("docs/handoffs/epic-{}-handoff.md", epic.id));
        handoff = project_dir.join(&h).is_file().then_some(h);
        reports.push(r);
    }
    progress.finish();
    if saved.options.dry_run {
        print_dry(
            &engine
                .dry_prompts
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
            saved.options.verbose,
        );
        return Ok(ExitCode::SUCCESS);
    }
    let (done, failed, skipped) = reports.iter().fold((0, 0, 0), |(d, f, s), r| {
        (
            d + r.count("done"),
            f + r.count("failed"),
            s + r.count("skipped"),
        )
    });
    let mut journal = engine.journal();
    if !journal.run_finished() {
        journal.log(Entry::RunFinished {
            done,
            failed,
            skipped,
        })?;
    }
    let run_dir = journal.dir.clone();
    drop(journal);
    let value = serde_json::json!({"run_id": run_id, "epics": reports, "run_dir": run_dir});
    progress.report(&RunEvent::RunFinished {
        run_id: &run_id,
        result: if failed > 0 { "failed" } else { "completed" },
        next: None,
        summary: Some(&value),
    });
    if !ctx.out.json {
        print_summary(&reports, &run_dir, &project_dir);
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn fresh(ctx: &Ctx, a: &Args) -> Result<Saved> {
    let workflow = a.workflow.clone().ok_or_else(|| {
        Error::invalid("which workflow? e.g. `baton run epic-execute 1`")
            .hint("or continue a run: baton run --resume RUN_ID")
    })?;
    if workflow != "epic-execute" && workflow != "epic-chain" {
        return Err(Error::not_found(format!("no workflow `{workflow}`")).hint(
            "baton run epic-execute EPIC, epic-chain EPIC…, orchestrate|poc|graduate TASK, \
             or verify --queue NAME",
        ));
    }
    if a.epics.is_empty() {
        return Err(
            Error::invalid(format!("{workflow} needs an epic id")).hint(format!(
                "e.g. baton run {workflow} 1 (see `baton stories 1`)"
            )),
        );
    }
    if workflow == "epic-execute" && a.epics.len() > 1 {
        return Err(Error::invalid("epic-execute runs one epic").hint(format!(
            "for several in order: baton run epic-chain {}",
            a.epics.join(" ")
        )));
    }
    let mut party = BTreeSet::new();
    for (on, name) in [
        (a.party_kickoff, "kickoff"),
        (a.party_review, "review"),
        (a.party_failure, "failure"),
        (a.party_retro, "retro"),
    ] {
        if on || a.party_all {
            party.insert(name.to_string());
        }
    }
    if a.parallel == Some(0) {
        return Err(Error::invalid(
            "--parallel needs at least 1 (stories at once)",
        ));
    }
    if a.parallel.is_some_and(|n| n > 1) && a.no_commit {
        return Err(Error::invalid("--parallel cannot go with --no-commit")
            .hint("parallel stories reach the run's branch as commits; use --parallel 1 to leave changes staged"));
    }
    let cfg = &ctx.project.config;
    let scenario = scenario(ctx, a)?;
    Ok(Saved {
        workflow,
        epics: a.epics.clone(),
        options: Options {
            party,
            party_agents: a.party_agents.clone(),
            dry_run: a.dry_run,
            verbose: a.verbose,
            start_from: a.start_from.clone(),
            skip_done: a.skip_done,
            no_commit: a.no_commit,
            skip_review: a.skip_review,
            agent: a.agent.clone(),
            default_agent: cfg.run.default_agent.clone(),
            roles: cfg.run.roles.clone(),
            protected_branches: cfg.run.protected_branches.clone(),
            parallel: a.parallel.unwrap_or(1),
        },
        scenario,
    })
}

/// Flags only epic runs know: refused by the other workflows rather than silently ignored.
pub(super) fn refuse_epic_flags(a: &Args, what: &str) -> Result<()> {
    let used: Vec<&str> = [
        (a.dry_run, "--dry-run"),
        (a.verbose, "--verbose"),
        (
            a.party_kickoff || a.party_review || a.party_failure || a.party_retro || a.party_all,
            "--party-*",
        ),
        (!a.party_agents.is_empty(), "--party-agents"),
        (a.start_from.is_some(), "--start-from"),
        (a.skip_done, "--skip-done"),
        (a.no_commit, "--no-commit"),
        (a.skip_review, "--skip-review"),
    ]
    .into_iter()
    .filter_map(|(on, flag)| on.then_some(flag))
    .collect();
    if used.is_empty() {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "{} apply only to epic runs, not to {what}",
        used.join(", ")
    ))
    .hint("see `baton run --help`"))
}

/// A run that continues keeps the options it started with; say so when new ones were given.
pub(super) fn note_kept_options(a: &Args) {
    if a.agent.is_some() || a.scenario.is_some() || a.parallel.is_some() {
        eprintln!(
            "note: the run continues with the options it started with; --agent, --scenario and --parallel given now are not used"
        );
    }
}

/// The simulated agent's scenario: `--scenario`, else `.baton/sim.toml`; made absolute, since
/// agents run in other directories (worktrees).
pub(super) fn scenario(ctx: &Ctx, a: &Args) -> Result<Option<PathBuf>> {
    let scenario = a.scenario.clone().or_else(|| {
        let p = ctx.project.local_dir().join("sim.toml");
        p.is_file().then_some(p)
    });
    Ok(match scenario {
        Some(p) if p.is_relative() => Some(
            std::env::current_dir()
                .map_err(|e| Error::io(".", e))?
                .join(p),
        ),
        other => other,
    })
}

fn print_dry(prompts: &[(String, String)], verbose: bool) {
    let mut out = std::io::stdout().lock();
    for (title, prompt) in prompts {
        let _ = writeln!(out, "===== {title} =====");
        if verbose {
            let _ = writeln!(out, "{prompt}");
        } else {
            for l in prompt.lines().take(6) {
                let _ = writeln!(out, "{l}");
            }
            let _ = writeln!(
                out,
                "… ({} lines; --verbose prints it all)\n",
                prompt.lines().count()
            );
        }
    }
    let _ = writeln!(
        out,
        "dry run: {} prompts, no agent run, nothing changed",
        prompts.len()
    );
}

fn print_summary(reports: &[EpicReport], run_dir: &Path, project: &Path) {
    use crate::store::metrics::human_ms;
    let mut out = std::io::stdout().lock();
    for r in reports {
        let _ = writeln!(
            out,
            "\nepic {}: {} done, {} failed, {} skipped in {} · {} tokens · ${:.2}",
            r.epic,
            r.count("done"),
            r.count("failed"),
            r.count("skipped"),
            human_ms(r.duration_ms),
            r.usage.total(),
            r.cost_usd
        );
        let _ = writeln!(
            out,
            "  {:<8} {:<34} {:<8} {:>8} {:>9} {:>7}  commit",
            "story", "title", "result", "attempts", "tokens", "cost"
        );
        for s in &r.stories {
            let title: String = s.title.chars().take(34).collect();
            let commit = s
                .commit
                .as_deref()
                .map(|c| &c[..c.len().min(10)])
                .unwrap_or("-");
            let _ = writeln!(
                out,
                "  {:<8} {:<34} {:<8} {:>8} {:>9} {:>7.3}  {commit}",
                s.id,
                title,
                s.result,
                s.attempts,
                s.usage.total(),
                s.cost_usd
            );
            if !s.reason.is_empty() {
                let _ = writeln!(out, "           ↳ {}", s.reason);
            }
        }
        if !r.artifacts.is_empty() {
            let _ = writeln!(out, "  artifacts: {}", r.artifacts.join(", "));
        }
    }
    let rel = run_dir.strip_prefix(project).unwrap_or(run_dir);
    let _ = writeln!(
        out,
        "\nrun log: {} (events.jsonl, prompts/, logs/)",
        rel.display()
    );
}
