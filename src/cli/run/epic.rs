//! `baton run epic-execute EPIC` and `epic-chain EPIC…`: every story of the epics through
//! the epic-execute workflow, agents in fresh processes.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Mutex, PoisonError};

use super::{AgentArgs, EpicFlags};
use crate::cli::Ctx;
use crate::cli::progress::Progress;
use baton_core::error::{Error, Result};
use baton_engine::call::DryPhase;
use baton_engine::cli_agents::CliAgents;
use baton_engine::definition::WorkflowKind;
use baton_engine::events::{Reporter, RunEvent};
use baton_engine::git::Git;
use baton_engine::journal::{Entry, Journal, Started};
use baton_engine::workflow::epic::def;
use baton_engine::workflow::epic::project::{self, BmadStatus};
use baton_engine::workflow::epic::{
    Baseline, Engine, EpicReport, Options, StatusWriter, StoryResult,
};

/// A new run, or one continued from its journal.
pub enum Start {
    Fresh {
        workflow: WorkflowKind,
        epics: Vec<String>,
        agent: AgentArgs,
        flags: EpicFlags,
    },
    Resume(Journal),
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    workflow: String,
    epics: Vec<String>,
    options: Options,
    scenario: Option<PathBuf>,
    /// The work tree when the run started (absent in runs of older batons: nothing then).
    #[serde(default)]
    baseline: Baseline,
}

pub fn run(ctx: &Ctx, start: Start) -> Result<ExitCode> {
    let project_dir = Git::new(&ctx.project.dir).toplevel()?;
    let local = ctx.project.local_dir();
    let resumed = matches!(start, Start::Resume(_));
    let (saved, journal) = match start {
        Start::Resume(j) => {
            if j.run_finished() {
                let id = j
                    .started()
                    .map(|s| s.run_id.to_string())
                    .unwrap_or_default();
                return Err(Error::state(format!("run {id} already finished"))
                    .hint("see its summary with `baton status`"));
            }
            let opts = j.started().map(|s| s.options).ok_or_else(|| {
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
        Start::Fresh {
            workflow,
            epics,
            agent,
            flags,
        } => (fresh(ctx, workflow, epics, &agent, &flags)?, None),
    };
    let mut saved = saved;
    if !resumed && !saved.options.dry_run {
        // What is untracked or changed now is the user's: never staged or stashed by a story.
        let abs = local.canonicalize().unwrap_or_else(|_| local.clone());
        let rel = abs
            .strip_prefix(&project_dir)
            .unwrap_or(&ctx.project.config.paths.local);
        saved.baseline = Baseline::capture(&Git::new(&project_dir), &rel.display().to_string())?;
    }
    let (wf, _) = def::load(
        if saved.workflow == "epic-chain" {
            "epic-execute"
        } else {
            &saved.workflow
        },
        &local.join("workflows"),
    )?;
    // Every role's agent and every prompt template are checked before the run exists: a typo
    // fails now, not as a failed story.
    for p in wf.phases() {
        let who = baton_engine::definition::assign(
            &p.role,
            saved.options.agent.as_ref(),
            &saved.options.roles,
            &wf.roles,
            &saved.options.default_agent,
        );
        baton_engine::cli_agents::runnable(&who, &ctx.project.config.agents)?;
        baton_engine::prompt::template(&p.template, &local.join("prompts"))?;
        if let Some(t) = &p.party_template {
            baton_engine::prompt::template(t, &local.join("prompts"))?;
        }
    }
    let git = Git::new(&project_dir);
    // Held until the run returns: no second baton resumes it meanwhile.
    let mut _hold = match &journal {
        Some(j) => j.hold()?,
        None => None,
    };
    // Two new runs started at the same instant would both pass the check for a live run:
    // the second waits here until the first holds its run, then finds it.
    // A resumed run checks the same under the same lock: a new run of its epic started
    // after the kill may be working on it now.
    let mut starting = None;
    if !saved.options.dry_run {
        baton_core::fs::create_dir_all(&local)?;
        let path = local.join("run-start.lock");
        // Its holder holds it for the moments between its check and its journal: a minute
        // means it hangs there.
        let held = baton_core::fs::try_lock_for(&path, std::time::Duration::from_secs(60))?;
        starting = Some(held.ok_or_else(|| {
            Error::state(format!(
                "another `baton run` of this project has been starting for a minute ({} is held)",
                path.display()
            ))
            .hint("see `baton status`; stop that baton if it hangs, then run this again")
        })?);
        let this = journal
            .as_ref()
            .and_then(|j| j.started())
            .map(|s| s.run_id.to_string());
        settle_earlier_runs(&local, &saved.epics, this.as_deref())?;
    }
    if let Some(j) = &journal {
        // Held already (above): the next run starting may look.
        drop(starting.take());
        j.clean_up_after_a_killed_baton();
    }
    if resumed && !git.wait_idle(std::time::Duration::from_secs(10)) {
        eprintln!("note: a git command is still running in this repository; going on");
    }
    let branch = git.branch().unwrap_or_default();
    if !saved.options.dry_run
        && !saved.options.no_commit
        && saved.options.protected_branches.contains(&branch)
    {
        return Err(Error::state(format!("refusing to commit on the protected branch `{branch}`"))
            .hint("work on a branch (git switch -c epic-1), pass --no-commit, or set [run] protected_branches in baton.toml"));
    }
    if !resumed && saved.options.parallel > 1 && !saved.options.dry_run {
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
    let status = BmadStatus::new(&project_dir);
    let outputs = baton_engine::workflow::epic::bmad::config::Config::load(&project_dir).outputs();
    if !saved.options.dry_run {
        status.check()?;
    }
    let run_id = match &journal {
        Some(j) => j
            .started()
            .map(|s| s.run_id.to_string())
            .unwrap_or_default(),
        None => baton_core::ids::new_id(),
    };
    let journal = match journal {
        Some(j) => j,
        None if saved.options.dry_run => Journal::memory(),
        None => {
            let options =
                serde_json::to_value(&saved).map_err(|e| Error::internal(e.to_string()))?;
            let (j, hold) = Journal::start(
                &local,
                &run_id,
                Entry::RunStarted {
                    run_id: run_id.clone(),
                    workflow: saved.workflow.clone(),
                    subjects: saved.epics.clone(),
                    options,
                },
            )?;
            _hold = hold;
            // Held and started: a run starting now finds this one.
            drop(starting.take());
            j
        }
    };
    let agents =
        CliAgents::new(&project_dir, saved.scenario.clone()).configured(&ctx.project.config);
    if !saved.options.dry_run {
        // Temp files of story or status writes a kill cut short: gone before any agent's
        // `git add -A` can stage them. In the project, and in this run's story worktrees.
        let mut tops = vec![project_dir.clone()];
        if let Ok(rd) = std::fs::read_dir(local.join("worktrees").join(&run_id)) {
            tops.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
        }
        let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
        for top in &tops {
            for e in &epics {
                for s in &e.stories {
                    dirs.extend(top.join(&s.path).parent().map(Path::to_path_buf));
                }
            }
            for f in status.status_files() {
                dirs.extend(top.join(f).parent().map(Path::to_path_buf));
            }
        }
        for d in dirs {
            let removed =
                baton_core::fs::remove_stale_temps(&d, std::time::Duration::from_secs(60));
            baton_core::fs::note_removed_temps(&removed, &project_dir);
        }
    }
    // A dry run prints its prompts instead of events.
    let progress = Progress::new(
        ctx.out.json && !saved.options.dry_run,
        saved.options.dry_run,
    );
    progress.report(&RunEvent::RunStarted {
        run_id: &run_id,
        workflow: &saved.workflow,
        subjects: &saved.epics,
        resumed,
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
        resumed,
        dry_prompts: Mutex::new(vec![]),
        baseline: saved.baseline.clone(),
        local_ignored: Default::default(),
        staged_seen: Default::default(),
        outputs: outputs.clone(),
    };
    let mut reports: Vec<EpicReport> = Vec::new();
    let mut handoff: Option<PathBuf> = None;
    for epic in &epics {
        let r = engine.run_epic(epic, handoff.as_deref())?;
        let h = outputs
            .handoff_dir
            .join(format!("epic-{}-handoff.md", epic.id));
        handoff = project_dir.join(&h).is_file().then_some(h);
        reports.push(r);
    }
    progress.finish();
    if saved.options.dry_run {
        let prompts = engine
            .dry_prompts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Stories whose status says done run again unless --skip-done: say so.
        let done: Vec<(String, String)> = if saved.options.skip_done {
            Vec::new()
        } else {
            epics
                .iter()
                .flat_map(|e| {
                    e.stories
                        .iter()
                        .filter(|s| s.status == "done")
                        .map(|s| (e.id.clone(), s.id.clone()))
                })
                .collect()
        };
        if ctx.out.json {
            // One object per story already done, then per prompt that would be sent, in order.
            let mut out = std::io::stdout().lock();
            for (epic, story) in &done {
                let line =
                    serde_json::json!({"event": "already_done", "epic": epic, "story": story});
                let _ = writeln!(out, "{line}");
            }
            for p in prompts.iter() {
                let line = serde_json::json!({"event": "prompt", "title": p.title, "agent": p.agent, "model": p.model, "argv": p.argv, "prompt": p.prompt});
                let _ = writeln!(out, "{line}");
            }
        } else {
            print_dry(&done, &prompts, saved.options.verbose);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (done, failed, skipped) = reports.iter().fold((0, 0, 0), |(d, f, s), r| {
        (
            d + r.count(StoryResult::Done),
            f + r.count(StoryResult::Failed),
            s + r.count(StoryResult::Skipped),
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
    let report = crate::report::at_run_end(&run_dir, None);
    let value = serde_json::json!({"run_id": run_id, "epics": reports, "run_dir": run_dir, "report_html": report});
    progress.report(&RunEvent::RunFinished {
        run_id: &run_id,
        result: if failed > 0 { "failed" } else { "completed" },
        next: None,
        summary: Some(&value),
    });
    if !ctx.out.json {
        print_summary(&reports, &run_dir, &project_dir);
        super::print_report(report.as_deref(), &project_dir);
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn fresh(
    ctx: &Ctx,
    workflow: WorkflowKind,
    epics: Vec<String>,
    agent: &AgentArgs,
    a: &EpicFlags,
) -> Result<Saved> {
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
    if a.parallel.is_some_and(|n| n > 1) && a.no_commit {
        return Err(Error::invalid("--parallel cannot go with --no-commit")
            .hint("parallel stories reach the run's branch as commits; use --parallel 1 to leave changes staged"));
    }
    let cfg = &ctx.project.config;
    let scenario = super::scenario(ctx, agent)?;
    Ok(Saved {
        workflow: workflow.name().to_string(),
        epics,
        options: Options {
            party,
            party_agents: a.party_agents.clone(),
            dry_run: a.dry_run,
            verbose: a.verbose,
            start_from: a.start_from.clone(),
            skip_done: a.skip_done,
            no_commit: a.no_commit,
            skip_review: a.skip_review,
            agent: agent.agent.clone(),
            default_agent: cfg.run.default_agent.clone(),
            roles: cfg.run.roles.clone(),
            protected_branches: cfg.run.protected_branches.clone(),
            parallel: a.parallel.unwrap_or(1) as usize,
        },
        scenario,
        baseline: Baseline::default(),
    })
}

fn print_dry(done: &[(String, String)], prompts: &[DryPhase], verbose: bool) {
    let mut out = std::io::stdout().lock();
    for (_, story) in done {
        let _ = writeln!(
            out,
            "story {story}: already done (its status says done; --skip-done skips it)"
        );
    }
    if !done.is_empty() {
        let _ = writeln!(out);
    }
    for DryPhase {
        title,
        agent,
        model,
        argv,
        prompt,
    } in prompts
    {
        let _ = writeln!(out, "===== {title} =====");
        let _ = writeln!(
            out,
            "agent: {agent} · model: {}",
            model.as_deref().unwrap_or("the CLI's default")
        );
        match argv {
            Some(a) => {
                let _ = writeln!(out, "argv: {a}");
            }
            None if agent == "sim" => {
                let _ = writeln!(out, "argv: (the simulated agent: no CLI)");
            }
            None => {}
        }
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
    use baton_store::metrics::human_ms;
    let mut out = std::io::stdout().lock();
    for r in reports {
        let _ = writeln!(
            out,
            "\nepic {}: {} done, {} failed, {} skipped in {} · {} tokens · ${:.2}",
            r.epic,
            r.count(StoryResult::Done),
            r.count(StoryResult::Failed),
            r.count(StoryResult::Skipped),
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

/// Before a new run of `epics`, or a run `resuming` them: an unfinished run of one of them
/// that a baton still runs is in the way (refused: the two would edit one tree). Before a new
/// run, one that was killed may have left its agent running, which is stopped before this
/// run's agents start (a resumed run stops its own orphans).
fn settle_earlier_runs(local: &Path, epics: &[String], resuming: Option<&str>) -> Result<()> {
    for old in Journal::unfinished_runs(local, &["epic-execute", "epic-chain"]) {
        let Some(Started {
            run_id: id,
            subjects,
            ..
        }) = old.started()
        else {
            continue;
        };
        let Some(epic) = subjects.iter().find(|e| epics.contains(e)) else {
            continue;
        };
        if Some(id) == resuming {
            continue;
        }
        if old.is_held() {
            return Err(Error::state(format!(
                "epic {epic} is being worked on by run {id}, in another baton"
            ))
            .hint("wait for it to finish (`baton status` shows where it is), or stop it first"));
        }
        // A killed run's agents must not edit the tree this run works in.
        old.clean_up_after_a_killed_baton();
        if resuming.is_some() {
            // Another run that did not finish: the one resumed now goes on; that one waits.
            continue;
        }
        eprintln!(
            "note: run {id} of epic {epic} did not finish; `baton run --resume {id}` continues it instead of starting over"
        );
    }
    Ok(())
}
