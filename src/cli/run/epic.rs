//! `baton run epic-execute EPIC` and `epic-chain EPIC…`: every story of the epics through
//! the epic-execute workflow, agents in fresh processes. The run itself, from its checks to
//! its journal's last record, is baton-engine's (`workflow::epic::start`); this turns the
//! flags into its options and renders what it reports.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use super::{AgentArgs, EpicFlags};
use crate::cli::Ctx;
use crate::cli::progress::Progress;
use crate::error::{Error, Result};
use baton_engine::call::DryPhase;
use baton_engine::cli_agents::AgentCheck;
use baton_engine::definition::WorkflowKind;
use baton_engine::events::{Reporter, RunEvent};
use baton_engine::journal::Journal;
use baton_engine::workflow::epic::start::{EpicOutcome, EpicRun, RunSpec};
use baton_engine::workflow::epic::{EpicReport, Options, PauseAfter, StoryResult};

/// A new run, or one continued from its journal.
pub enum Start {
    Fresh {
        workflow: WorkflowKind,
        epics: Vec<String>,
        agent: AgentArgs,
        flags: EpicFlags,
    },
    /// `--retry`: stories to develop again (a finished run's in a new run).
    Resume {
        journal: Journal,
        retry: Vec<String>,
        apply_stash: bool,
    },
}

pub fn run(ctx: &Ctx, start: Start) -> Result<ExitCode> {
    use baton_engine::workflow::epic::start::Start as EngineStart;
    let mut retry = Vec::new();
    let mut apply_stash = false;
    let start = match start {
        Start::Resume {
            journal,
            retry: stories,
            apply_stash: apply,
        } if journal.run_finished() && journal.closed().is_none() && !stories.is_empty() => {
            let id = journal
                .started()
                .map(|s| s.run_id.to_string())
                .unwrap_or_default();
            if apply {
                return Err(Error::invalid(format!(
                    "--apply-stash puts a story's changes back in the tree of a run that has not finished; run {id} finished"
                ))
                .hint(format!(
                    "apply the stash in your checkout (`git stash list` names it), then: baton run --resume {id} --retry {}",
                    stories.join(",")
                )));
            }
            eprintln!(
                "run {id} finished: {} developed again in a new run with its options (the stories done are skipped)",
                stories.join(", ")
            );
            EngineStart::Fresh(Box::new(RunSpec::again(&journal, &stories)?))
        }
        Start::Resume {
            journal,
            retry: stories,
            apply_stash: apply,
        } => {
            retry = stories;
            apply_stash = apply;
            EngineStart::Resume(journal)
        }
        Start::Fresh {
            workflow,
            epics,
            agent,
            flags,
        } => EngineStart::Fresh(Box::new(fresh(ctx, workflow, epics, &agent, &flags)?)),
    };
    let mut run = EpicRun::prepare(&ctx.project, start)?;
    if !retry.is_empty() {
        for note in run.retry(&retry, apply_stash)? {
            eprintln!("{}", crate::cli::style::visible(&note));
        }
    }
    let dry_run = run.spec().options.dry_run;
    let verbose = run.spec().options.verbose;
    let run_id = run.run_id().to_string();
    // A dry run prints its prompts instead of events.
    let progress = Progress::new(ctx.out.json && !dry_run, dry_run);
    let notifier = crate::cli::notify::Notifier::new(&ctx.project);
    let outcome = run.run(&crate::cli::notify::Notifying {
        inner: &progress,
        notifier: &notifier,
        run_id: &run_id,
    });
    progress.finish();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            if !dry_run {
                // Paused (an agent that cannot work, a spent limit) or stopped: someone may
                // need to act before it can go on.
                let resume = format!("baton run --resume {run_id}");
                notifier.stopped("run_paused", &run_id, &format!("paused: {e}"), &resume);
            }
            return Err(e.into());
        }
    };
    let (reports, run_dir, failed, project_dir, landing) = match outcome {
        EpicOutcome::Dry {
            done,
            prompts,
            agents,
            refusals,
            place,
            checks,
            missing,
        } => {
            if ctx.out.json {
                let line = serde_json::json!({"event": "preflight", "agents": agents, "refusals": refusals, "works": place, "checks": checks, "missing_stories": missing});
                let _ = writeln!(std::io::stdout().lock(), "{line}");
                print_dry_json(&done, &prompts);
            } else {
                print_preflight(&agents, &refusals, &place);
                if let Some(c) = &checks {
                    crate::outln!("{}", c.describe());
                }
                for (_, id) in &missing {
                    crate::outln!(
                        "story {id}: no story file yet: create it with the BMAD create-story \
                         workflow (the epic's UAT waits for it unless --allow-missing)"
                    );
                }
                print_dry(&done, &prompts, verbose);
            }
            return Ok(ExitCode::SUCCESS);
        }
        EpicOutcome::Finished {
            reports,
            run_dir,
            failed,
            project_dir,
            landing,
        } => (reports, run_dir, failed, project_dir, landing),
    };
    let project_dir = &project_dir;
    let report = super::at_run_end(ctx, &run_dir, None);
    let value = serde_json::json!({"run_id": run_id, "epics": reports, "run_dir": run_dir, "report_html": report, "landing": landing});
    progress.report(&RunEvent::RunFinished {
        run_id: &run_id,
        result: if failed > 0 { "failed" } else { "completed" },
        next: None,
        summary: Some(&value),
    });
    let count = |r: StoryResult| reports.iter().map(|e| e.count(r)).sum::<u32>();
    let cost: f64 = reports.iter().map(|e| e.cost_usd).sum();
    notifier.ended(
        &run_id,
        &format!(
            "run {run_id} ended: {} done, {failed} failed, {} skipped, ${cost:.2}",
            count(StoryResult::Done),
            count(StoryResult::Skipped)
        ),
        serde_json::json!({"done": count(StoryResult::Done), "failed": failed,
            "skipped": count(StoryResult::Skipped), "cost_usd": cost, "report": report}),
    );
    let epics: Vec<&str> = reports.iter().map(|r| r.epic.as_str()).collect();
    let published = crate::cli::publish::publish(
        &ctx.project,
        landing.as_ref(),
        &format!("baton: epic {} (run {run_id})", epics.join(", ")),
        &format!(
            "{} stories done, {failed} failed, {} skipped, by baton run {run_id}.\n\nReport: {}",
            count(StoryResult::Done),
            count(StoryResult::Skipped),
            report
                .as_ref()
                .map_or("none".into(), |r| r.display().to_string())
        ),
    );
    for line in &published {
        eprintln!("{line}");
    }
    if !ctx.out.json {
        print_summary(&reports, &run_dir, project_dir);
        super::print_report(report.as_deref(), project_dir);
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One object per story already done, then per prompt that would be sent, in order.
fn print_dry_json(done: &[(String, String, bool)], prompts: &[DryPhase]) {
    let mut out = std::io::stdout().lock();
    for (epic, story, again) in done {
        let line = serde_json::json!({"event": "already_done", "epic": epic, "story": story, "runs_again": again});
        let _ = writeln!(out, "{line}");
    }
    for p in prompts {
        let line = serde_json::json!({"event": "prompt", "title": p.title, "agent": p.agent, "model": p.model, "argv": p.argv, "prompt": p.prompt});
        let _ = writeln!(out, "{line}");
    }
}

fn fresh(
    ctx: &Ctx,
    workflow: WorkflowKind,
    epics: Vec<String>,
    agent: &AgentArgs,
    a: &EpicFlags,
) -> Result<RunSpec> {
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
    // Flags that contradict each other: refused, never one silently winning.
    for (one, other, both) in [
        (
            "--skip-review",
            "--party-review",
            a.skip_review && (a.party_review || a.party_all),
        ),
        ("--skip-done", "--redo-all", a.skip_done && a.redo_all),
        ("--redo", "--redo-all", !a.redo.is_empty() && a.redo_all),
    ] {
        if both {
            let other = if other == "--party-review" && a.party_all && !a.party_review {
                "--party-all"
            } else {
                other
            };
            return Err(
                Error::invalid(format!("{one} contradicts {other}")).hint("give one of the two")
            );
        }
    }
    if a.parallel.is_some_and(|n| n > 1) && a.no_commit {
        return Err(Error::invalid("--parallel cannot go with --no-commit")
            .hint("parallel stories reach the run's branch as commits; use --parallel 1 to leave changes staged"));
    }
    let cfg = &ctx.project.config;
    let scenario = super::scenario(ctx, agent)?;
    Ok(RunSpec::new(
        workflow,
        epics,
        Options {
            party,
            party_agents: a.party_agents.clone(),
            dry_run: a.dry_run,
            verbose: a.verbose,
            start_from: a.start_from.clone(),
            only: a.only.clone(),
            skip_done: !a.redo_all,
            redo: a.redo.clone(),
            done_at_start: None,
            no_commit: a.no_commit,
            in_place: a.in_place,
            wait_for_quota: a.wait_for_quota || ctx.project.config.run.wait_for_quota,
            dev: a.dev.as_deref().map(|d| match d {
                "bmad-build-auto" => baton_engine::workflow::epic::Dev::BuildAuto,
                _ => baton_engine::workflow::epic::Dev::Baton,
            }),
            pause_after: match a.pause_after.as_deref() {
                Some("story") => Some(PauseAfter::Story),
                Some("epic") => Some(PauseAfter::Epic),
                _ => ctx.project.config.run.pause_after,
            },
            skip_review: a.skip_review,
            agent: agent.agent.clone(),
            default_agent: cfg.run.default_agent.clone(),
            roles: cfg.run.roles.clone(),
            protected_branches: cfg.run.protected_branches.clone(),
            parallel: a.parallel.unwrap_or(1) as usize,
            no_checks: a.no_checks,
            allow_draft: a.allow_draft,
            allow_missing: a.allow_missing,
            checks: None,
        },
        scenario,
    ))
}

/// What a real run would find before its first phase.
fn print_preflight(agents: &[AgentCheck], refusals: &[String], place: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "pre-flight:");
    for a in agents {
        let line = match (&a.found, &a.problem) {
            (_, Some(p)) => format!("NOT RUNNABLE, a run would stop (exit 7): {p}"),
            (Some(at), None) => {
                let mut l = at.display().to_string();
                if let Some(v) = &a.version {
                    l += &format!(" ({v})");
                }
                if let Some(c) = &a.credentials {
                    l += &format!("; credentials: {c}");
                }
                l
            }
            (None, None) => "the simulated agent (no CLI)".into(),
        };
        let _ = writeln!(out, "  agent {}: {line}", a.agent);
    }
    let _ = writeln!(out, "  works: {place}");
    for r in refusals {
        let _ = writeln!(out, "  a run would refuse: {r}");
    }
    let _ = writeln!(out);
}

fn print_dry(done: &[(String, String, bool)], prompts: &[DryPhase], verbose: bool) {
    let mut out = std::io::stdout().lock();
    for (_, story, again) in done {
        let _ = if *again {
            writeln!(out, "story {story}: already done, and run again (--redo)")
        } else {
            writeln!(
                out,
                "story {story}: already done: skipped (`--redo {story}` or --redo-all runs it again)"
            )
        };
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
                "  {:<8} {:<34} {} {:>8} {:>9} {:>7.3}  {commit}",
                s.id,
                title,
                crate::cli::style::result(crate::cli::style::To::Stdout, s.result.as_str(), 8),
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
    let _ = writeln!(
        out,
        "\nrun log: {} (events.jsonl, prompts/, logs/)",
        crate::cli::shown(project, run_dir)
    );
}
