//! epic-execute (seed 000): every story of an epic through its phases, each phase a fresh
//! agent process; context moves only through files and git. The control loop is plain code —
//! no LLM decides anything here — and every step goes through the run's journal, so a crashed
//! run resumes at its first unfinished step.

pub mod bmad;
pub mod def;
pub mod parallel;
pub mod project;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::run::lock;
use std::time::{Duration, Instant};

use serde::Serialize;

use self::def::{Phase, Workflow};
use crate::context::outline::READ_STRATEGY;
use crate::context::signals::{self, SignalKind, Verdict};
use crate::context::tokens::Encoding;
use crate::error::{Error, Result};
use crate::run::agents::{Agents, Assignment, Request};
use crate::run::git::{Git, looks_secret};
use crate::run::journal::{Entry, Journal, PhaseOutcome, Usage};
use crate::run::progress::Progress;
use crate::run::prompt::render;

/// A story as the engine needs it.
#[derive(Debug, Clone, Serialize)]
pub struct StoryRef {
    pub id: String,
    pub title: String,
    /// Relative to the project directory.
    pub path: PathBuf,
    /// Normalised status (`ready-for-dev`, `done`, …).
    pub status: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EpicRef {
    pub id: String,
    pub path: Option<PathBuf>,
    pub stories: Vec<StoryRef>,
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
}

#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Options {
    /// Party phases switched on: kickoff, review, failure, retro.
    pub party: BTreeSet<String>,
    pub party_agents: Vec<String>,
    pub dry_run: bool,
    pub verbose: bool,
    pub start_from: Option<String>,
    pub skip_done: bool,
    pub no_commit: bool,
    pub skip_review: bool,
    /// Agent for every role (`--agent sim`).
    pub agent: Option<String>,
    pub default_agent: String,
    /// baton.toml's `[run.roles.<role>]`: agent and model per role, over the workflow's.
    #[serde(default)]
    pub roles: std::collections::BTreeMap<String, crate::run::definition::Role>,
    pub protected_branches: Vec<String>,
    /// Stories at once, each in its own git worktree (`--parallel N`); 0 or 1: one after
    /// another in the project itself.
    #[serde(default)]
    pub parallel: usize,
}

impl Options {
    fn flag_on(&self, flag: &str) -> bool {
        self.party.contains(flag) || (flag == "skip-review" && self.skip_review)
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StoryReport {
    pub id: String,
    pub title: String,
    pub result: String,
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
    pub fn count(&self, result: &str) -> u32 {
        self.stories.iter().filter(|s| s.result == result).count() as u32
    }
}

const PERSONAS: &[(&str, &str, &str, &str)] = &[
    (
        "Winston",
        "Architect",
        "Pattern adherence, scalability, API design consistency",
        "Calm, pragmatic, balances \"what could be\" with \"what should be\"",
    ),
    (
        "Murat",
        "Test Architect",
        "Test coverage, security vulnerabilities, edge cases",
        "Data-driven, \"strong opinions weakly held\", risk calculations",
    ),
    (
        "Amelia",
        "Developer",
        "Code quality, readability, maintainability, error handling",
        "Direct and precise",
    ),
    (
        "Bob",
        "Scrum Master",
        "Requirements, scope and process",
        "Crisp, checklist-driven",
    ),
];

pub struct Engine<'a> {
    pub project_dir: PathBuf,
    pub git: Git,
    pub wf: Workflow,
    pub opts: Options,
    /// Behind a lock because parallel stories log from their own threads; each event is still
    /// appended and fsync'd before the step it records is acted on.
    pub journal: Mutex<Option<Journal>>,
    pub agents: &'a dyn Agents,
    pub status: &'a dyn StatusWriter,
    pub prompts_dir: PathBuf,
    /// Parallel mode: `<worktrees_dir>/<run-id>/<story>` holds each story's worktree.
    pub worktrees_dir: PathBuf,
    pub progress: Mutex<Progress>,
    pub run_id: String,
    /// This process continues an interrupted run: git may hold commits the journal lacks.
    pub resumed: bool,
    /// Prompts printed by --dry-run.
    pub dry_prompts: Mutex<Vec<(String, String)>>,
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
pub(crate) struct Pipeline {
    pub rep: StoryReport,
    pub passed: bool,
    pub last_failure: String,
}

impl Engine<'_> {
    pub(crate) fn main_checkout(&self) -> Checkout {
        Checkout {
            dir: self.project_dir.clone(),
            git: self.git.clone(),
            shared_status: true,
        }
    }

    pub(crate) fn journal(&self) -> MutexGuard<'_, Option<Journal>> {
        lock(&self.journal)
    }

    pub(crate) fn progress(&self) -> MutexGuard<'_, Progress> {
        lock(&self.progress)
    }

    /// Append an event (fsync'd) when the run has a journal.
    pub(crate) fn log(&self, entry: Entry) -> Result<()> {
        match self.journal().as_mut() {
            Some(j) => j.log(entry),
            None => Ok(()),
        }
    }

    fn assignment(&self, role: &str) -> Assignment {
        crate::run::definition::assign(
            role,
            self.opts.agent.as_deref(),
            &self.opts.roles,
            &self.wf.roles,
            &self.opts.default_agent,
        )
    }

    fn personas(&self) -> Vec<serde_json::Value> {
        PERSONAS
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
        let mut reached_start = self.opts.start_from.is_none();
        let mut todo: Vec<&StoryRef> = Vec::new();
        for story in &epic.stories {
            if !reached_start {
                reached_start =
                    self.opts.start_from.as_deref().is_some_and(|f| {
                        signals::normalize_id(f) == signals::normalize_id(&story.id)
                    });
                if !reached_start {
                    report.stories.push(StoryReport {
                        id: story.id.clone(),
                        title: story.title.clone(),
                        result: "skipped".into(),
                        reason: "before --start-from".into(),
                        ..StoryReport::default()
                    });
                    continue;
                }
            }
            todo.push(story);
        }
        if self.opts.parallel > 1 && !self.opts.dry_run {
            self.run_parallel(epic, &todo, handoff, &mut report)?;
        } else {
            let mut failed = 0;
            for story in todo {
                let r = self.story(epic, story, handoff)?;
                if r.result == "failed" {
                    failed += 1;
                }
                report.usage.add(&r.usage);
                report.cost_usd += r.cost_usd;
                report.stories.push(r);
                let max = self.wf.policy.max_failed_stories;
                if max > 0 && failed >= max {
                    self.progress().note(&format!(
                        "stopping: {failed} stories failed (max_failed_stories = {max})"
                    ));
                    break;
                }
            }
        }
        // After the stories: UAT, retro — each a fresh context reading the story files.
        let main = self.main_checkout();
        let phases = self.wf.epic_phases.clone();
        for phase in &phases {
            if phase.flag.as_deref().is_some_and(|f| !self.opts.flag_on(f)) {
                continue;
            }
            let writes: Vec<String> = phase
                .writes
                .iter()
                .map(|w| w.replace("{epic}", &epic.id))
                .collect();
            let ctx = self.epic_context(epic, &report, &writes, started.elapsed());
            let out = self.phase(&main, epic, None, phase, 1, ctx, &writes)?;
            report.usage.add(&out.usage);
            report.cost_usd += out.cost_usd.unwrap_or(0.0);
            if out.ok {
                report.artifacts.extend(writes.iter().cloned());
            } else if phase.blocking {
                self.progress()
                    .note(&format!("{} failed: {}", phase.name, out.detail));
            } else {
                self.progress().note(&format!(
                    "{} failed (non-blocking, the epic stands): {}",
                    phase.name, out.detail
                ));
            }
        }
        if !self.opts.dry_run && !self.opts.no_commit && !report.artifacts.is_empty() {
            self.commit_epic_docs(epic, &report.artifacts)?;
        }
        let finished = self.journal().as_ref().map(|j| j.epic_finished(&epic.id));
        if finished == Some(false) {
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
            "summary": {"done": report.count("done"), "failed": report.count("failed"), "skipped": report.count("skipped"),
                        "duration": crate::store::metrics::human_ms(elapsed.as_millis() as u64)},
            "personas": self.personas(),
        })
    }

    /// A story the journal already settled (or that --skip-done skips): its report, without
    /// running anything.
    pub(crate) fn settled(&self, epic: &EpicRef, story: &StoryRef) -> Result<Option<StoryReport>> {
        let mut rep = StoryReport {
            id: story.id.clone(),
            title: story.title.clone(),
            ..StoryReport::default()
        };
        let recorded = self.journal().as_ref().and_then(|j| {
            j.story_result(&epic.id, &story.id)
                .map(|r| (r, j.committed(&epic.id, &story.id)))
        });
        if let Some(((result, reason), commit)) = recorded {
            rep.result = result;
            rep.reason = reason;
            rep.commit = commit;
            self.add_recorded_usage(&epic.id, &story.id, &mut rep);
            return Ok(Some(rep));
        }
        if self.opts.skip_done && story.status == "done" {
            rep.result = "skipped".into();
            rep.reason = "already done".into();
            self.finish_story(epic, story, &rep)?;
            return Ok(Some(rep));
        }
        Ok(None)
    }

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
        let Pipeline {
            mut rep,
            passed,
            last_failure,
        } = self.pipeline(&main, epic, story, handoff)?;
        if self.opts.dry_run {
            rep.result = "dry-run".into();
            return Ok(rep);
        }
        if passed {
            self.set_status(&main, story, "done")?;
            if !self.opts.no_commit {
                rep.commit = Some(self.commit_story(epic, story, "done")?);
            }
            rep.result = "done".into();
        } else {
            rep.result = "failed".into();
            rep.reason = last_failure;
            self.set_status(&main, story, "failed")?;
            // The failed story's edits are set aside, not lost, and cannot reach the next
            // story's commit; its record-bearing story file is committed on its own.
            let mut keep: Vec<String> = vec![story.path.display().to_string()];
            keep.extend(
                self.status
                    .status_files()
                    .iter()
                    .map(|p| p.display().to_string()),
            );
            let keep_refs: Vec<&str> = keep.iter().map(String::as_str).collect();
            let msg = format!("baton {}: story {} failed", self.run_id, story.id);
            if self.git.stash_except(&msg, &keep_refs)? {
                rep.reason.push_str(&format!(
                    " (its changes are in `git stash list`: \"{msg}\")"
                ));
            }
            if !self.opts.no_commit {
                rep.commit = Some(self.commit_story(epic, story, "failed")?);
            }
        }
        rep.duration_ms = started.elapsed().as_millis() as u64;
        self.finish_story(epic, story, &rep)?;
        Ok(rep)
    }

    /// A story's phases in `co`, attempt after attempt, until they pass or attempts run out.
    pub(crate) fn pipeline(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        handoff: Option<&Path>,
    ) -> Result<Pipeline> {
        let mut rep = StoryReport {
            id: story.id.clone(),
            title: story.title.clone(),
            ..StoryReport::default()
        };
        self.progress().story(&story.id, &story.title);
        let base = serde_json::json!({
            "story": {"id": story.id, "title": story.title, "path": story.path},
            "epic": {"id": epic.id, "path": epic.path},
            "handoff": handoff,
            "read_strategy": READ_STRATEGY,
            "mask_hint": MASK_HINT,
            "personas": self.personas(),
        });
        let phases = self.wf.story_phases.clone();
        let max = self.wf.policy.max_attempts;
        let mut passed = false;
        let mut last_failure = String::new();
        'attempts: for attempt in 1..=max {
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
                // Non-blocking phases before the pipeline (kickoff) run once per story.
                if !phase.blocking && attempt > 1 {
                    continue;
                }
                if let Some(st) = &phase.status_before {
                    self.set_status(co, story, st)?;
                }
                let mut ctx = base.clone();
                ctx["attempt"] = attempt.into();
                ctx["kickoff"] = self.opts.flag_on("kickoff").into();
                let out = self.phase(co, epic, Some(story), phase, attempt, ctx, &[])?;
                rep.usage.add(&out.usage);
                rep.cost_usd += out.cost_usd.unwrap_or(0.0);
                if out.ok || !phase.blocking {
                    continue;
                }
                last_failure = format!("{}: {}", phase.name, out.detail);
                self.failure_analysis(co, epic, story, phase, attempt, &out, &base, &mut rep)?;
                continue 'attempts;
            }
            passed = true;
            break;
        }
        Ok(Pipeline {
            rep,
            passed,
            last_failure,
        })
    }

    pub(crate) fn add_recorded_usage(&self, epic: &str, story: &str, rep: &mut StoryReport) {
        if let Some(j) = self.journal().as_ref() {
            for r in &j.records {
                if let Entry::PhaseFinished {
                    epic: e,
                    story: Some(s),
                    outcome,
                    attempt,
                    ..
                } = &r.entry
                    && e == epic
                    && s == story
                {
                    rep.usage.add(&outcome.usage);
                    rep.cost_usd += outcome.cost_usd.unwrap_or(0.0);
                    rep.duration_ms += outcome.duration_ms;
                    rep.attempts = rep.attempts.max(*attempt);
                }
            }
        }
    }

    pub(crate) fn finish_story(
        &self,
        epic: &EpicRef,
        story: &StoryRef,
        rep: &StoryReport,
    ) -> Result<()> {
        self.progress().story_done(rep);
        self.log(Entry::StoryFinished {
            epic: epic.id.clone(),
            story: story.id.clone(),
            result: rep.result.clone(),
            reason: rep.reason.clone(),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn failure_analysis(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        failed: &Phase,
        attempt: u32,
        out: &PhaseOutcome,
        base: &serde_json::Value,
        rep: &mut StoryReport,
    ) -> Result<()> {
        let Some(fp) = self.wf.failure_phase.clone() else {
            return Ok(());
        };
        if fp.flag.as_deref().is_some_and(|f| !self.opts.flag_on(f)) {
            return Ok(());
        }
        let mut ctx = base.clone();
        ctx["failure"] = serde_json::json!({
            "kind": failed.name,
            "signal": failed.fail_signal.first().cloned().unwrap_or_else(|| "none".into()),
            "message": out.detail,
        });
        let res = self.phase(co, epic, Some(story), &fp, attempt, ctx, &[])?;
        rep.usage.add(&res.usage);
        rep.cost_usd += res.cost_usd.unwrap_or(0.0);
        Ok(())
    }

    /// Write a status change in `co`: the story file always, the shared files when `co` is
    /// where they are kept.
    pub(crate) fn set_status(&self, co: &Checkout, story: &StoryRef, status: &str) -> Result<()> {
        if self.opts.dry_run {
            return Ok(());
        }
        self.status.set_story_status(&co.dir, story, status)?;
        if co.shared_status {
            self.status.set_shared_status(&co.dir, story, status)?;
        }
        Ok(())
    }

    /// One phase: render the prompt, check its budget, run a fresh agent, check its claims
    /// against the disk. Journaled: a phase the journal holds is not run again.
    #[allow(clippy::too_many_arguments)]
    fn phase(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: Option<&StoryRef>,
        phase: &Phase,
        attempt: u32,
        ctx: serde_json::Value,
        writes: &[String],
    ) -> Result<PhaseOutcome> {
        let sid = story.map(|s| s.id.as_str());
        let done = self.journal().as_ref().and_then(|j| {
            j.finished_phase(&epic.id, sid, &phase.name, attempt)
                .cloned()
        });
        if let Some(done) = done {
            self.progress().replayed(sid, &phase.name, &done);
            return Ok(done);
        }
        let party = phase
            .party_flag
            .as_deref()
            .is_some_and(|f| self.opts.flag_on(f));
        let template_name = if party {
            phase.party_template.as_deref().unwrap_or(&phase.template)
        } else {
            &phase.template
        };
        let template = crate::run::prompt::template(template_name, &self.prompts_dir)?;
        let prompt = render(template_name, &template, &ctx)?;
        // Counted up front only when a budget needs it before sending — and a prompt of no
        // more bytes than the budget cannot exceed it (a token is at least one byte) —,
        // otherwise while the agent runs (see below), off the phase's critical path.
        let over_maybe = phase.budget.is_some_and(|b| prompt.len() > b);
        let counted =
            (self.opts.dry_run || over_maybe).then(|| Encoding::O200kBase.count(&prompt) as u64);
        let prompt_tokens = counted.unwrap_or(0);
        let label = match sid {
            Some(s) => format!("{}-{}-{}-{}", epic.id, s, phase.name, attempt),
            None => format!("{}-{}-{}", epic.id, phase.name, attempt),
        };
        if self.opts.dry_run {
            let title = format!(
                "{} PHASE: {}",
                phase.name.to_uppercase(),
                sid.map_or(format!("epic {}", epic.id), |s| format!("story {s}"))
            );
            lock(&self.dry_prompts).push((title, prompt));
            return Ok(PhaseOutcome {
                ok: true,
                detail: "dry run".into(),
                recommendation: None,
                usage: Usage::default(),
                cost_usd: None,
                duration_ms: 0,
                session_id: None,
                prompt_tokens,
                log: None,
            });
        }
        let run_dir = self
            .journal()
            .as_ref()
            .map(|j| j.dir.clone())
            .ok_or_else(|| Error::invalid("internal: no journal"))?;
        let prompt_file = run_dir.join("prompts").join(format!("{label}.md"));
        crate::store::fs::write_atomic(&prompt_file, prompt.as_bytes())?;
        if let Some(budget) = phase.budget
            && prompt_tokens as usize > budget
        {
            // Prompts pass paths, not contents; one still over budget is refused, not sent.
            let out = PhaseOutcome {
                ok: false,
                detail: format!(
                    "prompt is {prompt_tokens} tokens, over the phase budget of {budget} (see {})",
                    prompt_file.display()
                ),
                recommendation: None,
                usage: Usage::default(),
                cost_usd: None,
                duration_ms: 0,
                session_id: None,
                prompt_tokens,
                log: None,
            };
            return self.phase_finished(epic, sid, phase, attempt, out);
        }
        self.log(Entry::PhaseStarted {
            epic: epic.id.clone(),
            story: sid.map(Into::into),
            phase: phase.name.clone(),
            attempt,
        })?;
        let log_dir = run_dir.join("logs");
        self.progress().phase(sid, &phase.name, attempt);
        let records_before =
            story.map(|s| count_record(&self.read_story(co, s), phase.record.as_deref()));
        let who = self.assignment(&phase.role);
        let req = Request {
            name: label.clone(),
            prompt: &prompt,
            cwd: co.dir.clone(),
            log_dir,
            timeout: Duration::from_secs(self.wf.policy.timeout_secs),
            grace: Duration::from_secs(self.wf.policy.grace_secs),
            resume: None,
        };
        let (first, prompt_tokens) = std::thread::scope(|sc| {
            let count = counted
                .is_none()
                .then(|| sc.spawn(|| Encoding::O200kBase.count(&prompt) as u64));
            let reply = self.agents.run(&who, &req);
            let tokens = count.map_or(prompt_tokens, |h| h.join().unwrap_or(0));
            (reply, tokens)
        });
        // Rate limits and overloaded servers are waited out, not counted as the story failing.
        let mut reply = first?;
        let mut wait = self.wf.policy.backoff_secs;
        for _ in 0..self.wf.policy.transient_retries {
            if !reply.transient {
                break;
            }
            self.progress().note(&format!(
                "{}: {} — retrying in {wait} s",
                phase.name,
                reply.error.as_deref().unwrap_or("rate limited")
            ));
            std::thread::sleep(Duration::from_secs(wait));
            wait *= 2;
            reply = self.agents.run(&who, &req)?;
        }
        let mut out = PhaseOutcome {
            ok: false,
            detail: String::new(),
            recommendation: None,
            usage: reply.usage,
            cost_usd: reply.cost_usd,
            duration_ms: reply.duration_ms,
            session_id: reply.session_id.clone(),
            prompt_tokens,
            log: Some(reply.log.display().to_string()),
        };
        let expected = sid
            .map(str::to_string)
            .unwrap_or_else(|| format!("Epic {}", epic.id));
        out.detail = match judge(phase, &reply.text, &expected) {
            Err(why) => why,
            Ok((line, rec)) => {
                out.recommendation = rec;
                match self.verify(co, story, phase, records_before, writes) {
                    Ok(()) => {
                        out.ok = true;
                        line
                    }
                    Err(why) => why,
                }
            }
        };
        if !out.ok && !reply.ok {
            // The process itself failed: say so first, it is the real cause.
            let cause = reply.error.clone().unwrap_or_else(|| "agent failed".into());
            out.detail = format!("{cause}; {}", out.detail);
        }
        self.phase_finished(epic, sid, phase, attempt, out)
    }

    /// Journal a phase's outcome (before anything acts on it) and show it.
    fn phase_finished(
        &self,
        epic: &EpicRef,
        sid: Option<&str>,
        phase: &Phase,
        attempt: u32,
        out: PhaseOutcome,
    ) -> Result<PhaseOutcome> {
        self.log(Entry::PhaseFinished {
            epic: epic.id.clone(),
            story: sid.map(Into::into),
            phase: phase.name.clone(),
            attempt,
            outcome: out.clone(),
        })?;
        self.progress().phase_done(sid, &phase.name, &out);
        Ok(out)
    }

    /// Check the agent's claims against the disk (bmad-loop's lesson).
    fn verify(
        &self,
        co: &Checkout,
        story: Option<&StoryRef>,
        phase: &Phase,
        records_before: Option<usize>,
        writes: &[String],
    ) -> std::result::Result<(), String> {
        if phase.needs_staged_diff {
            let staged = co.git.staged().map_err(|e| e.to_string())?;
            let story_file = story.map(|s| s.path.display().to_string());
            let code: Vec<&String> = staged
                .iter()
                .filter(|p| Some(*p) != story_file.as_ref())
                .collect();
            if code.is_empty() {
                return Err("the agent signalled completion but staged no code changes (git diff --staged is empty)".into());
            }
            let secrets: Vec<&String> = staged.iter().filter(|p| looks_secret(p)).collect();
            if !secrets.is_empty() {
                return Err(format!(
                    "refusing to go on: likely secrets are staged: {}",
                    secrets
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        if let (Some(s), Some(record), Some(before)) =
            (story, phase.record.as_deref(), records_before)
            && count_record(&self.read_story(co, s), Some(record)) <= before
        {
            return Err(format!(
                "the agent did not append a `## {record}` section to {}",
                s.path.display()
            ));
        }
        for w in writes {
            if !co.dir.join(w).is_file() {
                return Err(format!("the agent did not write {w}"));
            }
        }
        Ok(())
    }

    /// The story's commit message: the same subject and trailers in both modes.
    pub(crate) fn story_message(&self, epic: &EpicRef, story: &StoryRef, result: &str) -> String {
        let subject = if result == "done" {
            format!("feat(story {}): {}", story.id, story.title)
        } else {
            format!("docs(story {}): failed — records of the attempts", story.id)
        };
        format!(
            "{subject}\n\nEpic {}, story {} ({result}), by baton run {}.\n\nBaton-Run: {}\nBaton-Story: {}\n",
            epic.id, story.id, self.run_id, self.run_id, story.id
        )
    }

    /// Stage the story file and `extra`, refuse likely secrets, commit with `message` — unless
    /// `git`'s branch already has this run's commit of the story (a crash between `git
    /// commit` and the journal entry must not commit twice).
    pub(crate) fn commit_with(
        &self,
        git: &Git,
        story: &StoryRef,
        extra: &[String],
        message: &str,
    ) -> Result<String> {
        // Only a resumed run can meet a commit it made before a crash; a fresh run skips the
        // walk of the whole history (the costliest git call of a phase on a long history).
        if self.resumed
            && let Some(sha) =
                git.find_commit(&[("Baton-Run", &self.run_id), ("Baton-Story", &story.id)])?
        {
            return Ok(sha);
        }
        let mut paths = vec![story.path.display().to_string()];
        paths.extend(extra.iter().cloned());
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        git.add_paths(&refs)?;
        let staged = git.staged()?;
        let secrets: Vec<&String> = staged.iter().filter(|p| looks_secret(p)).collect();
        if !secrets.is_empty() {
            return Err(Error::state(format!("refusing to commit likely secrets: {}", secrets.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")))
                .hint("unstage them (git restore --staged <file>) and add them to .gitignore, then resume the run"));
        }
        git.commit(message)
    }

    pub(crate) fn status_file_names(&self) -> Vec<String> {
        self.status
            .status_files()
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    fn commit_story(&self, epic: &EpicRef, story: &StoryRef, result: &str) -> Result<String> {
        let recorded = self
            .journal()
            .as_ref()
            .and_then(|j| j.committed(&epic.id, &story.id));
        if let Some(sha) = recorded {
            return Ok(sha);
        }
        let msg = self.story_message(epic, story, result);
        let sha = self.commit_with(&self.git, story, &self.status_file_names(), &msg)?;
        self.log(Entry::StoryCommitted {
            epic: epic.id.clone(),
            story: story.id.clone(),
            sha: sha.clone(),
        })?;
        Ok(sha)
    }

    fn commit_epic_docs(&self, epic: &EpicRef, files: &[String]) -> Result<()> {
        if self.resumed
            && self
                .git
                .find_commit(&[("Baton-Run", &self.run_id), ("Baton-Epic", &epic.id)])?
                .is_some()
        {
            return Ok(());
        }
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        self.git.add_paths(&refs)?;
        if self.git.staged()?.is_empty() {
            return Ok(());
        }
        let msg = format!(
            "docs(epic {}): UAT and retrospective\n\nBaton-Run: {}\nBaton-Epic: {}\n",
            epic.id, self.run_id, epic.id
        );
        self.git.commit(&msg)?;
        Ok(())
    }
}

/// How many `## <record>` sections a story file has.
fn count_record(text: &str, record: Option<&str>) -> usize {
    let Some(r) = record else { return 0 };
    text.lines()
        .filter(|l| l.trim_start().starts_with("## ") && l.contains(r))
        .count()
}

/// Decide a phase from the agent's text: Ok(signal line, recommendation) or Err(reason).
fn judge(
    phase: &Phase,
    text: &str,
    expected_id: &str,
) -> std::result::Result<(String, Option<String>), String> {
    let wanted: Vec<&str> = phase
        .signal
        .iter()
        .chain(phase.fail_signal.iter())
        .map(String::as_str)
        .collect();
    // Signals the shared parser knows are parsed by it; the others (UAT COMPLETE) by keyword.
    let known = |k: &str| SignalKind::ALL.iter().any(|s| s.keyword() == k);
    if wanted.iter().all(|k| known(k)) {
        let res = signals::parse_signal(text, expected_id);
        return match res.verdict() {
            Verdict::Success => {
                let sig = res.signal.as_ref().expect("success has a signal");
                if !phase.signal.iter().any(|k| k == sig.kind.keyword()) {
                    return Err(format!(
                        "unexpected signal {} for the {} phase",
                        sig.kind.keyword(),
                        phase.name
                    ));
                }
                let rec = sig.recommendation.map(|r| format!("{r:?}"));
                Ok((format!("{}: {}", sig.kind.keyword(), sig.id), rec))
            }
            Verdict::Blocked { reason } | Verdict::Failed { reason } => {
                let kw = res.signal.as_ref().map_or("FAILED", |s| s.kind.keyword());
                Err(format!("{kw}: {reason}"))
            }
            Verdict::Missing { message } => Err(message),
        };
    }
    let mut in_fence = false;
    let mut found = None;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(k) = phase
            .signal
            .iter()
            .find(|k| l.trim_matches('*').starts_with(&format!("{k}:")))
        {
            found = Some(format!(
                "{k}: {}",
                l.trim_matches('*')[k.len() + 1..].trim()
            ));
        }
    }
    found
        .map(|f| (f, None))
        .ok_or_else(|| "no completion signal".to_string())
}

/// Seed 001's observation masking, for the implementer and reviewer prompts.
const MASK_HINT: &str = "Wrap commands with long output (test runs, builds, diffs) in `baton mask -- CMD`: \
you get a summary (counts, the first failure with file and line) and the path of the full output.";
