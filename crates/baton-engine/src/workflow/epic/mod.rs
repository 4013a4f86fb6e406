//! epic-execute: every story of an epic through its phases, each phase a fresh
//! agent process; context moves only through files and git. The control loop is plain code —
//! no LLM decides anything here — and every step goes through the run's journal, so a crashed
//! run resumes at its first unfinished step.

pub mod bmad;
mod build_auto;
mod checked;
mod commit;
pub mod def;
mod judge;
pub mod parallel;
mod party;
mod pause;
mod phase;
pub mod project;
mod retry;
pub mod select;
mod settle;
pub mod start;
pub mod tree;
mod work;

pub use build_auto::Dev;
pub use pause::PauseAfter;
pub use work::Baseline;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::lock;
use std::time::{Duration, Instant};

use serde::Serialize;

use self::def::{EpicWorkflow, Phase};
use crate::agents::{Agents, Assignment};
use crate::call::{Call, Calls, Verdict, judge_signal};
use crate::error::{Error, Result};
use crate::events::{Reporter, RunEvent, Subject, SubjectResult};
use crate::git::{Git, looks_secret};
use crate::journal::{Entry, Journal, Judged, PhaseOutcome, Usage};
use crate::prompt::render;
use crate::prompt::template;
use crate::prompt::{mask_hint, read_strategy};
use baton_agent::wiring::baton_command;
use baton_context::signals::{self, Grammar, SignalKind, Verdict as SignalVerdict};

/// A story as the engine needs it.
#[derive(Debug, Clone, Serialize)]
pub struct StoryRef {
    pub id: String,
    pub title: String,
    /// Relative to the project directory.
    pub path: PathBuf,
    /// Normalised status (`ready-for-dev`, `done`, …).
    pub status: String,
    /// A blocked story's blocking condition (spec folders: build-auto's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked: Option<String>,
    /// Spec folders' `spec_checkpoint` / `done_checkpoint`: a human looks before the story is
    /// developed / once it is committed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spec_checkpoint: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub done_checkpoint: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct EpicRef {
    pub id: String,
    pub path: Option<PathBuf>,
    pub stories: Vec<StoryRef>,
    /// Stories the epic lists that have no file yet (normal mid-epic in BMAD): `(id, title)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<(String, String)>,
    /// A BMAD 6 spec folder's own folder (relative to the project); None for an epic file's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_dir: Option<PathBuf>,
}

/// Writes a story's status where the project keeps it (story file, sprint-status.yaml).
/// `Sync`: parallel stories write their statuses from their own threads.
pub trait StatusWriter: Sync {
    /// Write `status` into the story's own file under `dir` (the project or a worktree).
    fn set_story_status(&self, dir: &Path, story: &StoryRef, status: &str) -> Result<()>;
    /// Write it where the project tracks every story at once (sprint-status.yaml) under `dir`.
    fn set_shared_status(&self, dir: &Path, story: &StoryRef, status: &str) -> Result<()>;
    /// Files besides the story that a status change touches (committed with the story).
    fn status_files(&self) -> Vec<PathBuf>;
    /// Mark the epic's retrospective done where the project tracks it (sprint-status.yaml's
    /// `epic-N-retrospective`); the file written, if any.
    fn set_retro_done(&self, _dir: &Path, _epic: &str) -> Result<Option<PathBuf>> {
        Ok(None)
    }
}

#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Options {
    /// Party phases switched on: kickoff, review, failure, retro.
    pub party: BTreeSet<String>,
    pub party_agents: Vec<String>,
    pub dry_run: bool,
    pub verbose: bool,
    pub start_from: Option<String>,
    /// Only these stories (`--only`); empty: all.
    #[serde(default)]
    pub only: Vec<String>,
    /// Stories whose status says done are not run again (the default of `baton run`; a
    /// journal from before it was the default says what that run chose).
    pub skip_done: bool,
    /// Done stories run again all the same (`--redo 1.1,1.2`).
    #[serde(default)]
    pub redo: Vec<String>,
    /// The stories (`epic:story`) whose status said done when the run started: the ones
    /// `skip_done` leaves out. A story this run itself finished says done too, and must not be
    /// taken for one (a resumed run finishes what it started). None: a journal from before.
    #[serde(default)]
    pub done_at_start: Option<Vec<String>>,
    pub no_commit: bool,
    pub skip_review: bool,
    /// Agent for every role (`--agent sim`).
    pub agent: Option<baton_agent::settings::AgentId>,
    pub default_agent: baton_agent::settings::AgentId,
    /// baton.toml's `[run.roles.<role>]`: agent and model per role, over the workflow's.
    #[serde(default)]
    pub roles: std::collections::BTreeMap<String, crate::definition::Role>,
    pub protected_branches: Vec<String>,
    /// Stories at once, each in its own git worktree (`--parallel N`); 0 or 1: one after
    /// another in the project itself.
    #[serde(default)]
    pub parallel: usize,
    /// `--no-checks`: the project's checks are not run in this run.
    #[serde(default)]
    pub no_checks: bool,
    /// `--allow-draft`: a story whose status is still drafted is developed too.
    #[serde(default)]
    pub allow_draft: bool,
    /// `--allow-missing`: the epic's UAT and retrospective run although stories it lists have
    /// no file yet.
    #[serde(default)]
    pub allow_missing: bool,
    /// `--in-place`: the run works in the user's checkout, not in a worktree of its own.
    #[serde(default)]
    pub in_place: bool,
    /// `--wait-for-quota` (or `[run] wait_for_quota`): a spent usage limit is waited out.
    #[serde(default)]
    pub wait_for_quota: bool,
    /// `--pause-after story|epic` (or `[run] pause_after`).
    #[serde(default)]
    pub pause_after: Option<PauseAfter>,
    /// The project's checks, resolved when the run starts (a resumed run keeps them). A
    /// journal from before checks existed has none.
    #[serde(default)]
    pub checks: Option<crate::checks::Checks>,
    /// Who develops a story: baton's own phases, or the user's bmad-build-auto skill (`--dev`;
    /// resolved when the run starts, with the workflow's and baton.toml's).
    #[serde(default)]
    pub dev: Option<build_auto::Dev>,
}

impl Options {
    /// Whether a new run works in a worktree of its own (`tree`): unless asked not to, or it
    /// commits nothing (its changes are left in the checkout).
    pub fn works_in_tree(&self) -> bool {
        !self.in_place && !self.no_commit && !self.dry_run
    }

    /// Whether `story` of `epic` is left as it is: its status said done when the run
    /// started, and it is not to be redone.
    pub(crate) fn skips_done(&self, epic: &str, story: &StoryRef) -> bool {
        let done = match &self.done_at_start {
            Some(list) => list.contains(&done_key(epic, &story.id)),
            None => story.status == "done",
        };
        self.skip_done && done && !self.redo.contains(&story.id)
    }
}

/// A story's entry in [`Options::done_at_start`].
pub(crate) fn done_key(epic: &str, story: &str) -> String {
    format!("{epic}:{story}")
}

impl Options {
    /// Who develops the stories (baton's own phases unless the run started with another).
    pub fn dev(&self) -> Dev {
        self.dev.unwrap_or_default()
    }

    pub(crate) fn flag_on(&self, flag: &str) -> bool {
        self.party.contains(flag) || (flag == "skip-review" && self.skip_review)
    }
}

/// How a story of a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StoryResult {
    /// Not finished yet.
    #[default]
    Pending,
    Done,
    Failed,
    Skipped,
    DryRun,
}

/// A story's result read back from the journal (a task's results are no story's: failed).
impl From<SubjectResult> for StoryResult {
    fn from(r: SubjectResult) -> StoryResult {
        match r {
            SubjectResult::Done => StoryResult::Done,
            SubjectResult::Skipped => StoryResult::Skipped,
            SubjectResult::DryRun => StoryResult::DryRun,
            SubjectResult::Failed | SubjectResult::Shelved | SubjectResult::Cancelled => {
                StoryResult::Failed
            }
        }
    }
}

impl std::fmt::Display for StoryResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl StoryResult {
    pub fn as_str(self) -> &'static str {
        match self {
            StoryResult::Pending => "pending",
            StoryResult::Done => "done",
            StoryResult::Failed => "failed",
            StoryResult::Skipped => "skipped",
            StoryResult::DryRun => "dry-run",
        }
    }

    /// How the story ended, as the journal records it (None: not yet).
    pub fn ended(self) -> Option<SubjectResult> {
        match self {
            StoryResult::Pending => None,
            StoryResult::Done => Some(SubjectResult::Done),
            StoryResult::Failed => Some(SubjectResult::Failed),
            StoryResult::Skipped => Some(SubjectResult::Skipped),
            StoryResult::DryRun => Some(SubjectResult::DryRun),
        }
    }

    /// Done or skipped: stories that depend on it may go on.
    pub fn lets_dependents_run(self) -> bool {
        matches!(self, StoryResult::Done | StoryResult::Skipped)
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StoryReport {
    pub id: String,
    pub title: String,
    pub result: StoryResult,
    pub reason: String,
    pub attempts: u32,
    pub usage: Usage,
    pub cost_usd: f64,
    pub duration_ms: u64,
    pub commit: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct EpicReport {
    pub epic: String,
    pub stories: Vec<StoryReport>,
    pub usage: Usage,
    pub cost_usd: f64,
    pub duration_ms: u64,
    pub artifacts: Vec<String>,
}

impl EpicReport {
    pub fn count(&self, result: StoryResult) -> u32 {
        self.stories.iter().filter(|s| s.result == result).count() as u32
    }
}

/// The status a failed story is left in: BMAD's own, the work not done.
pub(crate) const FAILED_STATUS: &str = "in-progress";
/// Where a failure is written when the failed phase names no record section.
const DEV_RECORD: &str = "Dev Agent Record";

/// The epic engine at work: built by [`start::EpicRun::run`] only, so its caches and
/// journal are never put together by hand.
pub struct EpicEngine<'a> {
    /// Where the stories are worked on: the run's own worktree, or the user's checkout.
    pub(crate) project_dir: PathBuf,
    /// The user's checkout (the repository's top).
    pub(crate) user_dir: PathBuf,
    /// The run's BMAD 6 spec folders (relative), every epic's.
    pub(crate) spec_dirs: Vec<PathBuf>,
    pub(crate) git: Git,
    pub(crate) wf: EpicWorkflow,
    pub(crate) opts: Options,
    /// Behind a lock because parallel stories log from their own threads; each event is still
    /// appended and fsync'd before the step it records is acted on.
    pub(crate) journal: Mutex<Journal>,
    pub(crate) agents: &'a dyn Agents,
    pub(crate) reporter: &'a dyn Reporter,
    pub(crate) status: &'a dyn StatusWriter,
    pub(crate) prompts_dir: PathBuf,
    /// Parallel mode: `<worktrees_dir>/<run-id>/<story>` holds each story's worktree.
    pub(crate) worktrees_dir: PathBuf,
    pub(crate) run_id: String,
    /// This process continues an interrupted run: git may hold commits the journal lacks.
    pub(crate) resumed: bool,
    /// Prompts printed by --dry-run.
    pub(crate) dry_prompts: Mutex<Vec<crate::call::DryPhase>>,
    /// The work tree as the run found it: never a story's work.
    pub(crate) baseline: Baseline,
    /// Per checkout, whether git ignores baton's folder (asked once: see `stage_work`).
    pub(crate) local_ignored: Mutex<std::collections::BTreeMap<PathBuf, bool>>,
    /// The staged list a story's judge read last, per checkout and story: the next phase's
    /// prompt shows it without asking git again (nothing stages or unstages in between).
    pub(crate) staged_seen: Mutex<std::collections::BTreeMap<(PathBuf, String), Vec<String>>>,
    /// Where UAT, retrospective and handoff go (the project's BMAD config).
    pub(crate) outputs: bmad::config::Outputs,
    /// The stories `--start-from`/`--only` leave out.
    pub(crate) selection: select::Selection,
}

/// Where a story's work happens: the project itself, or (parallel mode) the story's worktree.
#[derive(Debug, Clone)]
pub(crate) struct Checkout {
    pub dir: PathBuf,
    pub git: Git,
    /// Shared status files (sprint-status.yaml) are written here too. Not in a worktree: every
    /// story's line sits next to its neighbours', so they would conflict when merged; they are
    /// written on the run's branch at merge time instead.
    pub shared_status: bool,
}

/// What a story's phases came to (before anything is committed).
pub(crate) struct StoryPhases {
    pub rep: StoryReport,
    pub passed: bool,
    pub last_failure: String,
    /// The record section of the phase that failed last (where the failure is written).
    pub failed_record: Option<String>,
}

impl EpicEngine<'_> {
    pub(crate) fn main_checkout(&self) -> Checkout {
        Checkout {
            dir: self.project_dir.clone(),
            git: self.git.clone(),
            shared_status: true,
        }
    }

    pub fn journal(&self) -> MutexGuard<'_, Journal> {
        lock(&self.journal)
    }

    /// Append an event (fsync'd; a dry run's journal is kept in memory only).
    pub(crate) fn log(&self, entry: Entry) -> Result<()> {
        self.journal().log(entry)
    }

    pub(crate) fn note(&self, text: &str) {
        self.reporter.report(&RunEvent::Note {
            subject: None,
            text,
        });
    }

    fn calls(&self) -> Calls<'_> {
        Calls {
            journal: &self.journal,
            agents: self.agents,
            reporter: self.reporter,
            dry_run: self.opts.dry_run.then_some(&self.dry_prompts),
            wait_for_quota: self.opts.wait_for_quota,
        }
    }

    fn assignment(&self, role: &str) -> Assignment {
        crate::definition::assign(
            role,
            self.opts.agent.as_ref(),
            &self.opts.roles,
            &self.wf.roles,
            &self.opts.default_agent,
        )
    }

    fn personas(&self) -> Vec<serde_json::Value> {
        party::PERSONAS
            .iter()
            .filter(|(n, ..)| self.opts.party_agents.is_empty() || self.opts.party_agents.iter().any(|a| a.eq_ignore_ascii_case(n)))
            .map(|(name, role, focus, style)| serde_json::json!({"name": name, "role": role, "focus": focus, "style": style}))
            .collect()
    }

    fn read_story(&self, co: &Checkout, s: &StoryRef) -> String {
        std::fs::read_to_string(co.dir.join(&s.path)).unwrap_or_default()
    }

    /// Run one epic; `handoff` is the previous epic's handoff file (epic-chain).
    pub fn run_epic(&mut self, epic: &EpicRef, handoff: Option<&Path>) -> Result<EpicReport> {
        let started = Instant::now();
        let mut report = EpicReport {
            epic: epic.id.clone(),
            ..EpicReport::default()
        };
        let mut todo: Vec<&StoryRef> = Vec::new();
        for (id, title) in &epic.missing {
            // Named and counted: never a silent "0 skipped".
            let reason = format!(
                "{id} has no story file yet: create it with the BMAD create-story workflow"
            );
            self.note(&reason);
            report.stories.push(StoryReport {
                id: id.clone(),
                title: title.clone(),
                result: StoryResult::Skipped,
                reason,
                ..StoryReport::default()
            });
        }
        for story in &epic.stories {
            if let Some(left) = self.selection.left_out(&epic.id, &story.id) {
                report.stories.push(StoryReport {
                    id: story.id.clone(),
                    title: story.title.clone(),
                    result: StoryResult::Skipped,
                    reason: left.reason().into(),
                    ..StoryReport::default()
                });
                continue;
            }
            todo.push(story);
        }
        if self.selection.whole_epic_left_out(epic) {
            // Nothing of this epic runs: neither do its UAT and retrospective.
            return Ok(report);
        }
        if !todo.is_empty() {
            self.baseline_checks(epic)?;
        }
        if self.opts.parallel > 1 && !self.opts.dry_run {
            self.run_parallel(epic, &todo, handoff, &mut report)?;
        } else {
            let mut failed = 0;
            for story in todo {
                let r = self.story(epic, story, handoff)?;
                if r.result == StoryResult::Failed {
                    failed += 1;
                }
                report.usage.add(&r.usage);
                report.cost_usd += r.cost_usd;
                report.stories.push(r);
                let max = self.wf.policy.max_failed_stories;
                if max > 0 && failed >= max {
                    self.note(&format!(
                        "stopping: {failed} stories failed (max_failed_stories = {max})"
                    ));
                    break;
                }
            }
        }
        // After the stories: UAT, retro — each a fresh context reading the story files. Not
        // over half an epic: with stories still missing their files, only when asked.
        let main = self.main_checkout();
        let mut phases = self.wf.epic_phases.clone();
        if !epic.missing.is_empty() && !self.opts.allow_missing && !phases.is_empty() {
            self.note(&format!(
                "the epic's UAT and retrospective are not run: {} of its stories have no file \
                 yet (--allow-missing runs them anyway)",
                epic.missing.len()
            ));
            phases.clear();
        }
        for phase in &phases {
            if phase.flag.as_deref().is_some_and(|f| !self.opts.flag_on(f)) {
                continue;
            }
            let writes: Vec<String> = phase
                .writes
                .iter()
                .map(|w| self.outputs.fill(w, &epic.id))
                .collect();
            let ctx = self.epic_context(epic, &report, &writes, started.elapsed());
            let out = self.phase(&main, epic, None, phase, 1, ctx, &writes)?;
            report.usage.add(&out.usage);
            report.cost_usd += out.cost_usd.unwrap_or(0.0);
            if out.ok {
                if !self.opts.dry_run {
                    // Staged, so that a later phase's killed call sets aside only its own edits.
                    main.git.stage(&writes)?;
                }
                report.artifacts.extend(writes.iter().cloned());
                if phase.name == "retro" && !self.opts.dry_run {
                    // BMAD's own marker that the epic's retrospective happened.
                    if let Some(f) = self.status.set_retro_done(&main.dir, &epic.id)? {
                        report.artifacts.push(f.display().to_string());
                    }
                }
            } else if phase.blocking {
                self.note(&format!("{} failed: {}", phase.name, out.detail));
            } else {
                self.note(&format!(
                    "{} failed (non-blocking, the epic stands): {}",
                    phase.name, out.detail
                ));
            }
        }
        if !self.opts.dry_run && !self.opts.no_commit && !report.artifacts.is_empty() {
            self.commit_epic_docs(epic, &report.artifacts)?;
        }
        let finished = self.journal().epic_finished(&epic.id);
        if !finished {
            self.log(Entry::EpicFinished {
                epic: epic.id.clone(),
            })?;
        }
        report.duration_ms = started.elapsed().as_millis() as u64;
        Ok(report)
    }

    fn epic_context(
        &self,
        epic: &EpicRef,
        report: &EpicReport,
        writes: &[String],
        elapsed: Duration,
    ) -> serde_json::Value {
        let stories: Vec<serde_json::Value> = epic
            .stories
            .iter()
            .map(|s| {
                let result = report
                    .stories
                    .iter()
                    .find(|r| r.id == s.id)
                    .map_or("not run", |r| r.result.as_str());
                serde_json::json!({"id": s.id, "title": s.title, "path": s.path, "result": result})
            })
            .collect();
        serde_json::json!({
            "epic": {"id": epic.id, "path": epic.path},
            "stories": stories,
            "writes": writes,
            "summary": {"done": report.count(StoryResult::Done), "failed": report.count(StoryResult::Failed), "skipped": report.count(StoryResult::Skipped),
                        "duration": baton_store::metrics::human_ms(elapsed.as_millis() as u64)},
            "personas": self.personas(),
        })
    }

    /// A story the journal already settled (or that --skip-done skips): its report, without
    /// running anything.
    fn story(
        &self,
        epic: &EpicRef,
        story: &StoryRef,
        handoff: Option<&Path>,
    ) -> Result<StoryReport> {
        if let Some(rep) = self.settled(epic, story)? {
            return Ok(rep);
        }
        let started = Instant::now();
        let main = self.main_checkout();
        self.apply_round_stash(&main, epic, story)?;
        let StoryPhases {
            mut rep,
            passed,
            last_failure,
            failed_record,
        } = self.story_phases(&main, epic, story, handoff)?;
        if self.opts.dry_run {
            rep.result = StoryResult::DryRun;
            return Ok(rep);
        }
        // build-auto writes a story's file where it names it, and its status itself.
        let built = (self.opts.dev() == Dev::BuildAuto).then(|| self.built(&main, epic, story));
        let story = built.as_ref().unwrap_or(story);
        let has_file = main.dir.join(&story.path).is_file();
        if passed {
            self.set_status(&main, story, "done")?;
            if !self.opts.no_commit {
                rep.commit = Some(self.commit_story(epic, story, StoryResult::Done)?);
            }
            rep.result = StoryResult::Done;
        } else {
            rep.result = StoryResult::Failed;
            rep.reason = last_failure;
            // A BMAD status: the story is still in progress (BMAD has no `failed`).
            if built.is_none() {
                self.set_status(&main, story, FAILED_STATUS)?;
            }
            // The failed story's own edits are set aside, not lost, and cannot reach the next
            // story's commit; its record-bearing story file is committed on its own.
            let stash = self.stash_story_work(&main, epic, story)?;
            let record = failed_record.as_deref().unwrap_or(DEV_RECORD);
            if has_file {
                self.record_failure(&main, epic, story, record, &rep.reason, stash.as_deref())?;
            }
            if let Some(msg) = &stash {
                rep.reason.push_str(&format!(
                    " (its changes are in `git stash list`: \"{msg}\")"
                ));
                self.reporter.report(&RunEvent::Stashed {
                    subject: &Subject::story(&epic.id, &story.id),
                    message: msg,
                });
            }
            if !self.opts.no_commit && has_file {
                rep.commit = Some(self.commit_story(epic, story, StoryResult::Failed)?);
            }
        }
        rep.duration_ms = started.elapsed().as_millis() as u64;
        self.finish_story(epic, story, &rep)?;
        Ok(rep)
    }

    /// A story's phases in `co`, attempt after attempt, until they pass or attempts run out.
    pub(crate) fn story_phases(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        handoff: Option<&Path>,
    ) -> Result<StoryPhases> {
        if self.opts.dev() == Dev::BuildAuto {
            return self.build_auto_phases(co, epic, story);
        }
        let mut rep = StoryReport {
            id: story.id.clone(),
            title: story.title.clone(),
            ..StoryReport::default()
        };
        if story.spec_checkpoint {
            // Stops before the story's first call; a resumed run goes on (journaled once).
            self.pause(
                &format!("spec checkpoint of story {}", story.id),
                &format!(
                    "story {}'s spec checkpoint (stories.yaml): review {}",
                    story.id,
                    story.path.display()
                ),
            )?;
        }
        self.reporter.report(&RunEvent::SubjectStarted {
            subject: &Subject::story(&epic.id, &story.id),
            title: Some(&story.title),
        });
        let base = serde_json::json!({
            "story": {"id": story.id, "title": story.title, "path": story.path},
            "epic": {"id": epic.id, "path": epic.path},
            "handoff": handoff,
            "read_strategy": read_strategy(&baton_command()),
            "mask_hint": mask_hint(&baton_command()),
            "personas": self.personas(),
        });
        let phases = self.wf.story_phases.clone();
        // A story re-armed by `--retry` has its attempts anew, numbered on after the earlier
        // round's: every attempt's record, log and stash keeps its own name.
        let first = self
            .journal()
            .story_round(&epic.id, &story.id)
            .after_attempt
            + 1;
        let max = first - 1 + self.wf.policy.max_attempts;
        let mut passed = false;
        let mut last_failure = String::new();
        let mut failed_record = None;
        // The last red check, for the next attempt's prompt.
        let mut checks_failure = serde_json::Value::Null;
        'attempts: for attempt in first..=max {
            rep.attempts = attempt;
            for phase in &phases {
                if phase.flag.as_deref().is_some_and(|f| !self.opts.flag_on(f)) {
                    continue;
                }
                if phase
                    .skip_flag
                    .as_deref()
                    .is_some_and(|f| self.opts.flag_on(f))
                {
                    continue;
                }
                // Non-blocking phases before the pipeline (kickoff) run once per story (round).
                if !phase.blocking && attempt > first {
                    continue;
                }
                // The status files as they were: a CLI that cannot work leaves them so.
                let kept = phase
                    .status_before
                    .as_ref()
                    .map(|_| self.status_snapshot(co, story));
                if let Some(st) = &phase.status_before {
                    self.set_status(co, story, st)?;
                }
                let mut ctx = base.clone();
                ctx["attempt"] = attempt.into();
                ctx["kickoff"] = self.opts.flag_on("kickoff").into();
                ctx["checks_failure"] = checks_failure.clone();
                let out = match self.phase(co, epic, Some(story), phase, attempt, ctx, &[]) {
                    // The agent CLI cannot work: the story goes back to the status it had,
                    // and the run stops, resumable.
                    Err(e @ Error::Agent(baton_agent::Error::Unavailable { .. })) => {
                        if let Some(k) = kept {
                            self.put_back(k)?;
                        }
                        return Err(e);
                    }
                    other => other?,
                };
                rep.usage.add(&out.usage);
                rep.cost_usd += out.cost_usd.unwrap_or(0.0);
                if out.ok
                    && phase.blocking
                    && phase.stages()
                    && let Some(red) = self.checks_red(co, epic, story, &phase.name, attempt)?
                {
                    // The agent said done; the project's own checks say no. Never committed:
                    // the next attempt is told what failed.
                    last_failure = format!("{}: {}", phase.name, red.describe());
                    failed_record = phase.record.clone();
                    checks_failure = red.for_prompt();
                    continue 'attempts;
                }
                if out.ok || !phase.blocking {
                    continue;
                }
                last_failure = format!("{}: {}", phase.name, out.detail);
                failed_record = phase.record.clone();
                self.failure_analysis(co, epic, story, phase, attempt, &out, &base, &mut rep)?;
                continue 'attempts;
            }
            passed = true;
            break;
        }
        Ok(StoryPhases {
            rep,
            passed,
            last_failure,
            failed_record,
        })
    }
}
