//! Starting an epic run, fresh or resumed: everything between the options the caller parsed
//! and the first story. The definition, every role's agent and every template are checked,
//! the run-start lock is taken, earlier runs of the same epics are settled, the work tree the
//! user had is recorded, every epic is found, and the journal is started (or reopened and held)
//! — all before the first agent call, so a typo or a conflict fails with nothing changed.
//! Then [`EpicRun::run`] drives the epics and says how it ended; the caller renders that.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::bmad::config::{Config as BmadConfig, Outputs};
use super::project::{self, BmadStatus};
use super::select::Selection;
use super::tree::{Landing, RunTree};
use super::{
    Baseline, EpicEngine, EpicRef, EpicReport, EpicWorkflow, Options, StatusWriter, StoryResult,
    def,
};
use crate::agents::Assignment;
use crate::call::DryPhase;
use crate::cli_agents::{AgentCheck, CliAgents};
use crate::config::Project;
use crate::definition::WorkflowKind;
use crate::error::{Error, Result};
use crate::events::{Reporter, RunEvent};
use crate::git::Git;
use crate::journal::{Entry, Journal, Started};
use baton_core::error::Fault;
use baton_core::{fs, notice};

/// The workflows an epic run is.
const WORKFLOWS: &[&str] = &["epic-execute", "epic-chain"];

/// What an epic run is: kept in its journal's first record, so that `--resume` continues it
/// with exactly these.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunSpec {
    pub workflow: String,
    pub epics: Vec<String>,
    pub options: Options,
    pub scenario: Option<PathBuf>,
    /// The work tree when the run started (absent in runs of older batons: nothing then).
    #[serde(default)]
    pub baseline: Baseline,
    /// The worktree the run works in; None: in the user's checkout (`--in-place`,
    /// `--no-commit`, a repository with no commit, a run of an older baton).
    #[serde(default)]
    pub tree: Option<RunTree>,
}

impl RunSpec {
    pub fn new(
        workflow: WorkflowKind,
        epics: Vec<String>,
        options: Options,
        scenario: Option<PathBuf>,
    ) -> RunSpec {
        RunSpec {
            workflow: workflow.name().to_string(),
            epics,
            options,
            scenario,
            baseline: Baseline::default(),
            tree: None,
        }
    }
}

/// A new run, or one continued from its journal.
pub enum Start {
    Fresh(Box<RunSpec>),
    Resume(Journal),
}

/// A run ready to go: checked, locked, journaled.
pub struct EpicRun {
    spec: RunSpec,
    project_dir: PathBuf,
    local: PathBuf,
    wf: EpicWorkflow,
    journal: Journal,
    /// Held until the run returns: no second baton resumes it meanwhile.
    _hold: Option<std::fs::File>,
    epics: Vec<EpicRef>,
    selection: Selection,
    status: BmadStatus,
    outputs: Outputs,
    agents: CliAgents,
    run_id: String,
    resumed: bool,
    /// What the pre-flight found (shown by a dry run).
    checks: Vec<AgentCheck>,
    /// What a real run would refuse (a dry run shows it instead).
    refusals: Vec<String>,
}

/// How a run ended.
pub enum EpicOutcome {
    /// `--dry-run`: the stories already done (epic, story), each prompt that would be sent,
    /// and the pre-flight: the agents it would call, and what a real run would refuse.
    Dry {
        /// Stories whose status says done: (epic, story, whether it runs again).
        done: Vec<(String, String, bool)>,
        prompts: Vec<DryPhase>,
        agents: Vec<AgentCheck>,
        refusals: Vec<String>,
        /// Where a real run would work, and where its commits would go.
        place: String,
        /// The project's checks a real run would run before each commit.
        checks: Option<crate::checks::Checks>,
        /// Stories the epics list with no file yet: (epic, story).
        missing: Vec<(String, String)>,
    },
    Finished {
        reports: Vec<EpicReport>,
        run_dir: PathBuf,
        failed: u32,
        /// The repository's top (paths shown relative to it).
        project_dir: PathBuf,
        /// How the run's commits reached the user's branch (None: the run worked in place).
        landing: Option<Landing>,
    },
}

impl EpicRun {
    pub fn prepare(project: &Project, start: Start) -> Result<EpicRun> {
        let project_dir = Git::new(&project.dir).toplevel()?;
        let local = project.local_dir();
        let resumed = matches!(start, Start::Resume(_));
        let (mut spec, journal) = match start {
            Start::Resume(j) => (resumed_spec(&j)?, Some(j)),
            Start::Fresh(spec) => (*spec, None),
        };
        let dry_run = spec.options.dry_run;
        let (wf, whos) = checked_workflow(project, &local, &spec)?;
        if !resumed {
            // `--dev`, else the workflow's own, else baton.toml's.
            spec.options.dev = Some(
                spec.options
                    .dev
                    .or(wf.dev)
                    .or(project.config.run.dev)
                    .unwrap_or_default(),
            );
        }
        if !resumed {
            // Resolved once: a resumed run keeps the commands it started with. The
            // workflow's own `[checks]` over baton.toml's.
            spec.options.checks = Some(crate::checks::Checks::resolve(
                &project.config.checks.overlaid(wf.checks.as_ref()),
                &project_dir,
                spec.options.no_checks,
            ));
        }
        // Every agent's CLI is there before anything changes: a missing one is exit 7 now,
        // not a story left in-progress.
        let checks =
            crate::cli_agents::preflight(&whos, &project.config.agents, &project_dir, dry_run)?;
        // Find every epic before anything changes: a typo fails now, not after an hour of work.
        let mut epics: Vec<_> = spec
            .epics
            .iter()
            .map(|e| project::load_epic(&project_dir, e))
            .collect::<Result<_>>()?;
        // A `--redo` naming no story of the run's epics is a typo, refused before anything.
        if let Some(id) = spec
            .options
            .redo
            .iter()
            .find(|r| !epics.iter().any(|e| e.stories.iter().any(|s| &s.id == *r)))
        {
            return Err(Error::invalid(format!(
                "--redo names story {id}, which the run's epics do not have"
            ))
            .hint("see the stories with `baton stories EPIC`"));
        }
        if spec.options.dev() == super::Dev::BuildAuto {
            epics = super::build_auto::checked(&project_dir, &spec.options, &wf, epics)?;
        }
        if let Some(e) = epics.iter().find(|e| e.stories.is_empty()) {
            return Err(
                Error::not_found(format!("epic {} has no story files", e.id)).hint(format!(
                    "see what baton finds with `baton stories {}`",
                    e.id
                )),
            );
        }
        let selection = Selection::new(
            &epics,
            spec.options.start_from.as_deref(),
            &spec.options.only,
        )?;
        let git = Git::new(&project_dir);
        let mut refusals = Vec::new();
        if dry_run {
            let real = Options {
                dry_run: false,
                ..spec.options.clone()
            };
            if let Err(e) = check_branch(&git, &real, resumed, real.works_in_tree()) {
                refusals.push(format!("{e} ({})", e.hint_text().unwrap_or_default()));
            }
        } else {
            let in_tree = if resumed {
                spec.tree.is_some()
            } else {
                spec.options.works_in_tree()
            };
            check_branch(&git, &spec.options, resumed, in_tree)?;
        }
        let mut hold = match &journal {
            Some(j) => j.hold()?,
            None => None,
        };
        // Two new runs started at the same instant would both pass the check for a live run:
        // the second waits here until the first holds its run, then finds it. A resumed run
        // checks the same under the same lock: a new run of its epic started after the kill
        // may be working on it now.
        let mut starting = None;
        if !dry_run {
            starting = Some(start_lock(&local)?);
            let this = journal
                .as_ref()
                .and_then(|j| j.started())
                .map(|s| s.run_id.to_string());
            let landed = settle_earlier_runs(
                &local,
                &Git::new(&project_dir),
                &spec.options.protected_branches,
                &spec.epics,
                this.as_deref(),
            )?;
            if landed {
                // An earlier run's commits reached the checkout: its stories say done now.
                epics = spec
                    .epics
                    .iter()
                    .map(|e| project::load_epic(&project_dir, e))
                    .collect::<Result<_>>()?;
                if spec.options.dev() == super::Dev::BuildAuto {
                    epics = super::build_auto::checked(&project_dir, &spec.options, &wf, epics)?;
                }
            }
        }
        if !resumed && !dry_run {
            // What is untracked or changed now is the user's: never staged or stashed by a story.
            let abs = local.canonicalize().unwrap_or_else(|_| local.clone());
            let rel = abs
                .strip_prefix(&project_dir)
                .unwrap_or(&project.config.paths.local);
            spec.baseline = Baseline::capture(&Git::new(&project_dir), &rel.display().to_string())?;
        }
        if !resumed {
            spec.options.done_at_start = Some(
                epics
                    .iter()
                    .flat_map(|e| {
                        e.stories
                            .iter()
                            .filter(|s| s.status == "done")
                            .map(|s| super::done_key(&e.id, &s.id))
                    })
                    .collect(),
            );
        }
        if let Some(j) = &journal {
            // Held already (above): the next run starting may look.
            drop(starting.take());
            j.clean_up_after_a_killed_baton();
            // A graceful stop asked of a baton that was killed before it took it is not this
            // process's to obey: the resumed run would stop before its first call.
            let _ = crate::interrupt::take_graceful(&j.dir);
        }
        if resumed && !git.wait_idle(Duration::from_secs(10)) {
            notice::note("a git command is still running in this repository; going on");
        }
        let status = BmadStatus::new(&project_dir);
        let outputs = BmadConfig::load(&project_dir).outputs();
        if !dry_run {
            status.check()?;
        }
        let (run_id, journal) = match journal {
            Some(j) => (
                j.started()
                    .map(|s| s.run_id.to_string())
                    .unwrap_or_default(),
                j,
            ),
            None if dry_run => (baton_core::ids::new_id(), Journal::memory()),
            None => {
                let run_id = baton_core::ids::new_id();
                if spec.options.works_in_tree() {
                    spec.tree = RunTree::plan(&git, &local, &run_id, &spec.baseline)?;
                }
                let options =
                    serde_json::to_value(&spec).map_err(|e| Error::internal(e.to_string()))?;
                let (j, h) = Journal::start(
                    &local,
                    &run_id,
                    Entry::RunStarted {
                        run_id: run_id.clone(),
                        workflow: spec.workflow.clone(),
                        subjects: spec.epics.clone(),
                        options,
                    },
                )?;
                hold = h;
                // Held and started: a run starting now finds this one.
                drop(starting.take());
                (run_id, j)
            }
        };
        let agents =
            CliAgents::new(&project_dir, spec.scenario.clone()).configured(&project.config);
        let run = EpicRun {
            spec,
            project_dir,
            local,
            wf,
            journal,
            _hold: hold,
            epics,
            selection,
            status,
            outputs,
            agents,
            run_id,
            resumed,
            checks,
            refusals,
        };
        if !dry_run {
            run.remove_cut_short_writes();
        }
        Ok(run)
    }

    pub fn spec(&self) -> &RunSpec {
        &self.spec
    }

    /// `--retry STORY…` of a resumed run: each story re-armed (see `retry`), or none when one
    /// cannot be; what to tell the user.
    pub fn retry(&mut self, stories: &[String], apply_stash: bool) -> Result<Vec<String>> {
        if !self.resumed {
            return Err(Error::internal("--retry of a run that is not resumed"));
        }
        super::retry::rearm(
            &mut self.journal,
            &self.epics,
            &Git::new(&self.project_dir),
            &self.spec.options,
            self.wf.policy.max_attempts,
            stories,
            apply_stash,
        )
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Every story of every epic, in order, each epic's handoff fed to the next; the run's
    /// end journaled.
    pub fn run(self, reporter: &dyn Reporter) -> Result<EpicOutcome> {
        reporter.report(&RunEvent::RunStarted {
            run_id: &self.run_id,
            workflow: &self.spec.workflow,
            subjects: &self.spec.epics,
            resumed: self.resumed,
        });
        if let Some(c) = self.spec.options.checks.as_ref().filter(|_| !self.resumed) {
            reporter.report(&RunEvent::Note {
                subject: None,
                text: &c.describe(),
            });
        }
        let opts = &self.spec.options;
        let user = Git::new(&self.project_dir);
        // Where the stories are worked on: the run's own worktree, or the user's checkout.
        let work_dir = match self.spec.tree.as_ref().filter(|_| !opts.dry_run) {
            Some(t) => {
                t.ensure(&user, &self.journal.dir)?;
                if !self.resumed {
                    reporter.report(&RunEvent::Note {
                        subject: None,
                        text: &format!(
                            "working in {} on branch `{}`; your checkout is left alone until the run ends",
                            t.path
                                .strip_prefix(&self.project_dir)
                                .unwrap_or(&t.path)
                                .display(),
                            t.branch
                        ),
                    });
                }
                t.path.clone()
            }
            None => self.project_dir.clone(),
        };
        let mut engine = EpicEngine {
            project_dir: work_dir.clone(),
            user_dir: self.project_dir.clone(),
            spec_dirs: self
                .epics
                .iter()
                .filter_map(|e| e.spec_dir.clone())
                .collect(),
            git: Git::new(&work_dir),
            wf: self.wf,
            opts: opts.clone(),
            journal: Mutex::new(self.journal),
            agents: &self.agents,
            reporter,
            status: &self.status,
            prompts_dir: self.local.join("prompts"),
            worktrees_dir: self.local.join("worktrees"),
            run_id: self.run_id.clone(),
            resumed: self.resumed,
            dry_prompts: Mutex::new(vec![]),
            baseline: self.spec.baseline.clone(),
            local_ignored: Default::default(),
            staged_seen: Default::default(),
            outputs: self.outputs.clone(),
            selection: self.selection,
        };
        let mut reports: Vec<EpicReport> = Vec::new();
        let mut handoff: Option<PathBuf> = None;
        for (i, epic) in self.epics.iter().enumerate() {
            if i > 0 {
                // The epic before this one ended in this process or an earlier one: either
                // way its pause point is journaled once.
                engine.pause_after(
                    super::PauseAfter::Epic,
                    &format!("epic {}", self.epics[i - 1].id),
                )?;
            }
            let r = engine.run_epic(epic, handoff.as_deref())?;
            let h = self
                .outputs
                .handoff_dir
                .join(format!("epic-{}-handoff.md", epic.id));
            handoff = work_dir.join(&h).is_file().then_some(h);
            reports.push(r);
        }
        if opts.dry_run {
            let prompts = std::mem::take(
                &mut *engine
                    .dry_prompts
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            // Stories whose status says done: skipped, or run again (--redo): said.
            let done = self
                .epics
                .iter()
                .flat_map(|e| {
                    e.stories
                        .iter()
                        .filter(|s| s.status == "done")
                        .map(|s| (e.id.clone(), s.id.clone(), !opts.skips_done(&e.id, s)))
                })
                .collect();
            return Ok(EpicOutcome::Dry {
                done,
                prompts,
                agents: self.checks,
                refusals: self.refusals,
                place: super::tree::describe_place(&user, opts),
                checks: self.spec.options.checks.clone(),
                missing: self
                    .epics
                    .iter()
                    .flat_map(|e| e.missing.iter().map(|(id, _)| (e.id.clone(), id.clone())))
                    .collect(),
            });
        }
        let (done, failed, skipped) = reports.iter().fold((0, 0, 0), |(d, f, s), r| {
            (
                d + r.count(StoryResult::Done),
                f + r.count(StoryResult::Failed),
                s + r.count(StoryResult::Skipped),
            )
        });
        // Landed before the run is finished: a run killed while landing lands on resume.
        let landing = match &self.spec.tree {
            Some(t) => {
                let run_dir = engine.journal().dir.clone();
                let l = t.land(&user, &opts.protected_branches, &run_dir)?;
                reporter.report(&RunEvent::Note {
                    subject: None,
                    text: &l.describe(),
                });
                Some(l)
            }
            None => None,
        };
        let mut journal = engine.journal();
        // A pause asked after the last story has no call left to stop before.
        let _ = crate::interrupt::take_graceful(&journal.dir);
        if !journal.run_finished() {
            journal.log(Entry::RunFinished {
                done,
                failed,
                skipped,
            })?;
        }
        let run_dir = journal.dir.clone();
        Ok(EpicOutcome::Finished {
            reports,
            run_dir,
            failed,
            project_dir: self.project_dir,
            landing,
        })
    }

    /// Temp files of story or status writes a kill cut short: gone before any agent's
    /// `git add -A` can stage them. In the project, and in this run's story worktrees; and
    /// those of baton's own writes in `.baton/` (its `.gitignore`), which nothing commits but
    /// which must not pile up.
    fn remove_cut_short_writes(&self) {
        let mut tops = vec![self.project_dir.clone()];
        tops.extend(self.spec.tree.as_ref().map(|t| t.path.clone()));
        if let Ok(rd) = std::fs::read_dir(self.local.join("worktrees").join(&self.run_id)) {
            tops.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
        }
        let mut dirs: BTreeSet<PathBuf> = BTreeSet::from([self.local.clone()]);
        for top in &tops {
            for e in &self.epics {
                for s in &e.stories {
                    dirs.extend(top.join(&s.path).parent().map(Path::to_path_buf));
                }
            }
            for f in self.status.status_files() {
                dirs.extend(top.join(f).parent().map(Path::to_path_buf));
            }
        }
        for d in dirs {
            let removed = fs::remove_stale_temps(&d, Duration::from_secs(60));
            fs::note_removed_temps(&removed, &self.project_dir);
        }
    }
}

/// The spec a resumed run started with.
fn resumed_spec(j: &Journal) -> Result<RunSpec> {
    if j.run_finished() {
        let id = j
            .started()
            .map(|s| s.run_id.to_string())
            .unwrap_or_default();
        return Err(Error::state(format!("run {id} already finished"))
            .hint("see its summary with `baton status`"));
    }
    let events = j.dir.join("events.jsonl");
    let options = j
        .started()
        .map(|s| s.options)
        .ok_or_else(|| Error::corrupt(&events, Some(1), "does not start with run_started"))?;
    serde_json::from_value(options.clone())
        .map_err(|e| Error::corrupt(&events, Some(1), e.to_string()))
}

/// The run's workflow, with every role's agent, every prompt template and every budget checked
/// before the run exists: a typo fails now, not as a failed story. With the agents it calls.
fn checked_workflow(
    project: &Project,
    local: &Path,
    spec: &RunSpec,
) -> Result<(EpicWorkflow, Vec<Assignment>)> {
    let name = if spec.workflow == "epic-chain" {
        "epic-execute"
    } else {
        &spec.workflow
    };
    let mut wf = def::load(name, &local.join("workflows"))?.def;
    // One place for a phase's budget: baton.toml's `[budget.phases]` names the phase and wins
    // over the workflow definition's (what `baton config` shows is what the run uses).
    let set = &project.config.budget.phases;
    for p in wf
        .story_phases
        .iter_mut()
        .chain(wf.failure_phase.iter_mut())
        .chain(wf.epic_phases.iter_mut())
    {
        if let Some((_, b)) = set.iter().find(|(k, _)| k.eq_ignore_ascii_case(&p.name)) {
            p.budget = Some(*b);
        }
    }
    let o = &spec.options;
    let window = project.config.budget.window;
    let mut whos = Vec::new();
    for p in wf.phases() {
        if let Some(b) = p.budget.filter(|b| *b > window) {
            return Err(Error::invalid(format!(
                "phase {} has a budget of {b} tokens, more than the context window ({window})",
                p.name
            ))
            .hint(
                "lower the phase's budget in the workflow, or raise [budget] window in baton.toml",
            ));
        }
        let who = crate::definition::assign(
            &p.role,
            o.agent.as_ref(),
            &o.roles,
            &wf.roles,
            &o.default_agent,
        );
        crate::cli_agents::runnable(&who, &project.config.agents)?;
        crate::prompt::template(&p.template, &local.join("prompts"))?;
        if let Some(t) = &p.party_template {
            crate::prompt::template(t, &local.join("prompts"))?;
        }
        if p.flag.as_deref().is_none_or(|f| o.flag_on(f)) {
            whos.push(who);
        }
    }
    Ok((wf, whos))
}

/// The project's run-start lock. Its holder holds it for the moments between its check and its
/// journal: a minute means it hangs there.
fn start_lock(local: &Path) -> Result<std::fs::File> {
    fs::create_dir_all(local)?;
    let path = local.join("run-start.lock");
    let held = fs::try_lock_for(&path, Duration::from_secs(60))?;
    held.ok_or_else(|| {
        Error::state(format!(
            "another `baton run` of this project has been starting for a minute ({} is held)",
            path.display()
        ))
        .hint("see `baton status`; stop that baton if it hangs, then run this again")
    })
}

/// The branch may take the run's commits; a parallel run needs a clean checkout.
fn check_branch(git: &Git, o: &Options, resumed: bool, in_tree: bool) -> Result<()> {
    let branch = git.branch().unwrap_or_default();
    // A run in its own worktree commits on its own branch: a detached HEAD or a protected
    // branch only means its commits are not landed there (the end of the run says so).
    let commits_here = !o.dry_run && !o.no_commit && !in_tree;
    if commits_here && branch == "HEAD" && git.head().is_some() {
        // Commits on a detached HEAD belong to no branch: the next checkout leaves them behind.
        return Err(Error::state(
            "refusing to commit on a detached HEAD: the stories' commits would belong to no branch",
        )
        .hint("switch to a branch first (git switch -c epic-1), or pass --no-commit"));
    }
    if commits_here && o.protected_branches.contains(&branch) {
        return Err(Error::state(format!("refusing to commit on the protected branch `{branch}`"))
            .hint("work on a branch (git switch -c epic-1), pass --no-commit, or set [run] protected_branches in baton.toml"));
    }
    if !resumed && o.parallel > 1 && !o.dry_run {
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
    Ok(())
}

/// Earlier epic runs that did not finish and hold one of `epics`: one that a baton still runs
/// is in the way (refused: the two would edit one tree). Before a new run, one that was killed
/// may have left its agent running, which is stopped before this run's agents start (a
/// resumed run stops its own orphans).
fn settle_earlier_runs(
    local: &Path,
    user: &Git,
    protected: &[String],
    epics: &[String],
    resuming: Option<&str>,
) -> Result<bool> {
    let mut landed = false;
    for mut old in Journal::unfinished_runs(local, WORKFLOWS) {
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
        // A new run of the same epic takes over: the old one stops being offered for
        // --resume. Nothing of it is undone; the stories it finished say done and are skipped.
        let (id, epic) = (id.to_string(), epic.clone());
        // What it committed reaches the user's branch first: the new run must not redo it.
        let taken = close_landing(&old, user, protected)?;
        old.log(Entry::Closed {
            reason: "a new run of its epic took over".into(),
        })?;
        notice::note(format!(
            "run {id} of epic {epic} did not finish: closed, this run takes over (its commits \
             and stashes stay as they are; the stories it finished are skipped as done)"
        ));
        if let Some(l) = taken {
            landed |= matches!(l, Landing::Moved { .. });
            notice::note(format!("run {id}: {}", l.describe()));
        }
    }
    Ok(landed)
}

/// A run being closed: what it committed in its own worktree lands on the user's branch
/// (None: it worked in place, or is not an epic run).
pub fn close_landing(j: &Journal, user: &Git, protected: &[String]) -> Result<Option<Landing>> {
    let Some(tree) = j.started().and_then(|s| super::tree::of_journal(s.options)) else {
        return Ok(None);
    };
    tree.land(user, protected, &j.dir).map(Some)
}
