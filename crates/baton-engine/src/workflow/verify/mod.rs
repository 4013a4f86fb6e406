//! Verify queues: baton is the thin orchestrator, sub-agents are fat. For each item
//! of a queue, each phase of the pipeline runs in a fresh sub-agent that gets file paths (never
//! contents), writes its findings to its output file and answers with a summary block. baton
//! reads only that block, keeps its key fields in the item's `verification-state.json` (written
//! when a phase starts and after it ends), and models the context of the orchestrating session
//! to rotate it before it would overflow.

pub mod backend;
pub mod link;
pub mod pg;
pub mod pipeline;
pub mod queue;
pub mod start;
pub mod state;
pub mod worker;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use self::pipeline::{Phase, VerifyPipeline};
use self::queue::Queues;
use self::state::{ContextEstimate, Neighbours, Partial, Progress, QueueRef, State};
use crate::agents::{Agents, Assignment};
use crate::call::{Call, Calls, Verdict};
use crate::definition::Role;
use crate::error::{Error, Result};
use crate::events::{Reporter, RunEvent, Subject, SubjectResult};
use crate::journal::{Entry, Journal, Judged};
use crate::lock;
use baton_context::summary;

/// `[verify]` of baton.toml: the orchestrating session's context model (the thin-orchestrator defaults).
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct VerifyConfig {
    /// The orchestrating session's window.
    pub session_limit: u64,
    /// Rotate when the estimate goes over this (default 120K, ~60% of 195K).
    pub rotation_threshold: u64,
    /// System prompt + project context of the orchestrating session.
    pub system_overhead: u64,
    /// What each orchestrator message (spawning a sub-agent, taking its return) costs.
    pub message_tokens: u64,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        VerifyConfig {
            session_limit: 195_000,
            rotation_threshold: 120_000,
            system_overhead: 15_000,
            message_tokens: 750,
        }
    }
}

/// The orchestrating session's context, as the thin-orchestrator model estimates it: overhead + the state file it
/// started from + every summary returned since + a cost per message. Only summaries are ever
/// in it: never an output file's contents.
pub struct Context {
    cfg: VerifyConfig,
    start_tokens: u64,
    summaries: Vec<String>,
    summary_tokens: u64,
    messages: u64,
}

impl Context {
    /// A fresh session that has read `state_text` (the state file) and nothing else.
    pub fn fresh(cfg: &VerifyConfig, state_text: &str) -> Context {
        Context {
            cfg: cfg.clone(),
            start_tokens: baton_context::tokens::estimate(state_text) as u64,
            summaries: Vec::new(),
            summary_tokens: 0,
            messages: 0,
        }
    }

    pub fn message(&mut self) {
        self.messages += 1;
    }

    pub fn returned(&mut self, summary_block: &str) {
        self.summary_tokens += baton_context::tokens::estimate(summary_block) as u64;
        self.summaries.push(summary_block.to_string());
    }

    pub fn estimate(&self) -> ContextEstimate {
        let conversation =
            self.start_tokens + self.summary_tokens + self.messages * self.cfg.message_tokens;
        ContextEstimate {
            system_overhead: self.cfg.system_overhead,
            conversation_tokens: conversation,
            total_estimate: self.cfg.system_overhead + conversation,
            session_limit: self.cfg.session_limit,
            rotation_threshold: self.cfg.rotation_threshold,
        }
    }

    pub fn summaries(&self) -> usize {
        self.summaries.len()
    }

    /// Tokens of the state file this session started from.
    pub fn start_tokens(&self) -> u64 {
        self.start_tokens
    }
}

/// Who runs the roles: `--agent`, else baton.toml's `[run.roles]`, else the pipeline's
/// `[roles]`, else the default agent.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Options {
    pub queue: String,
    pub agent: Option<baton_agent::settings::AgentId>,
    pub default_agent: baton_agent::settings::AgentId,
    #[serde(default)]
    pub roles: BTreeMap<String, Role>,
    #[serde(default)]
    pub scenario: Option<PathBuf>,
    #[serde(default)]
    pub config: VerifyConfig,
    /// A spent usage limit is waited out (until its reset) instead of pausing the run.
    #[serde(default)]
    pub wait_for_quota: bool,
}

#[derive(Debug, Default, Serialize)]
pub struct Report {
    pub queue: String,
    pub done: u32,
    pub failed: u32,
    /// Complete before this run started.
    pub already_complete: u32,
    pub rotations: u32,
    pub agent_calls: u32,
    /// (item, reason) of every failed item.
    pub failures: Vec<(String, String)>,
}

/// The verify engine at work: built by [`start::VerifyRun`] and a worker only.
pub struct VerifyEngine<'a> {
    pub(crate) project_dir: PathBuf,
    pub(crate) queues: Queues,
    pub(crate) pipeline: VerifyPipeline,
    pub(crate) prompts_dir: PathBuf,
    pub(crate) agents: &'a dyn Agents,
    pub(crate) opts: Options,
    pub(crate) journal: Mutex<Journal>,
    pub(crate) run_id: String,
    pub(crate) reporter: &'a dyn Reporter,
    /// Ids of the queue's complete items: read from their state files once when the run
    /// starts, kept up to date as items finish (the queue's only cross-item state).
    pub(crate) complete: std::collections::HashSet<String>,
    /// The command that continues the queue (`baton run verify --queue Q`, or
    /// `baton worker --queue Q` on the postgres backend), for the state file's `next`.
    pub(crate) work_command: String,
}

/// How an item's phase ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseResult {
    Complete,
    /// Why it failed.
    Failed(String),
}

/// A sub-agent's answer passes with a valid summary block (kept in the journal, so a
/// resumed run rebuilds the state file from it); a missing or invalid one is malformed.
fn judge_summary(text: &str, output: &Path) -> Verdict {
    let named = |p: &summary::Parsed| {
        p.summary.output_file.as_deref().map(|f| {
            let f = f.trim().trim_matches('`');
            Path::new(f).file_name().map(|n| n.to_os_string())
        })
    };
    match summary::parse(text) {
        None => Verdict::malformed("the answer has no `## Summary` block"),
        Some(p) if !p.violations.is_empty() => Verdict::malformed(format!(
            "the summary block is invalid: {}",
            p.violations
                .iter()
                .take(3)
                .map(|v| v.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        )),
        // The block's output file is the phase's own: another item's (or phase's) answer does
        // not pass for this one.
        Some(p) if named(&p).is_some_and(|n| n.as_deref() != output.file_name()) => {
            Verdict::broken(format!(
                "the summary block names another output file ({}), not {}",
                p.summary.output_file.as_deref().unwrap_or_default(),
                output.file_name().unwrap_or_default().to_string_lossy()
            ))
        }
        Some(p) => {
            let mut v = Verdict::passed(format!(
                "summary block ok ({} lines)",
                p.summary.end_line + 1 - p.summary.start_line
            ));
            v.keep = Some(p.text);
            v
        }
    }
}

impl VerifyEngine<'_> {
    fn note(&self, text: &str) {
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
            dry_run: None,
            wait_for_quota: self.opts.wait_for_quota,
        }
    }

    fn assignment(&self, role: &str) -> Assignment {
        crate::definition::assign(
            role,
            self.opts.agent.as_ref(),
            &self.opts.roles,
            &self.pipeline.roles,
            &self.opts.default_agent,
        )
    }

    /// Every item of the queue not complete yet, in queue order, one at a time: the queue is
    /// re-read for each item and nothing of an item is kept once it is done.
    pub fn run(&mut self) -> Result<Report> {
        let name = self.opts.queue.clone();
        let mut report = Report {
            queue: name.clone(),
            ..Report::default()
        };
        for x in self.queues.load(&name)?.items {
            if self
                .queues
                .state(&name, &x.id)?
                .is_some_and(|s| s.status == Progress::Complete)
            {
                self.complete.insert(x.id);
            }
        }
        let mut i = 0;
        while let Some(item) = self.queues.item_at(&name, i)? {
            i += 1;
            let prior = self.queues.state(&name, &item)?;
            if prior
                .as_ref()
                .is_some_and(|s| s.status == Progress::Complete)
            {
                report.already_complete += 1;
                continue;
            }
            match self.run_item(&item, i - 1, prior, &mut report)? {
                None => {
                    report.done += 1;
                    self.complete.insert(item);
                }
                Some(reason) => {
                    report.failed += 1;
                    report.failures.push((item, reason));
                }
            }
        }
        Ok(report)
    }

    fn relative(&self, p: &Path) -> String {
        p.strip_prefix(&self.project_dir)
            .unwrap_or(p)
            .display()
            .to_string()
    }

    /// One item, from its state file. `Some(reason)` when it failed.
    fn run_item(
        &mut self,
        item: &str,
        index: usize,
        prior: Option<State>,
        report: &mut Report,
    ) -> Result<Option<String>> {
        let name = self.opts.queue.clone();
        let item_dir = self.queues.item_dir(&name, item);
        baton_core::fs::create_dir_all(&item_dir)?;
        let path = item_dir.join(state::FILE_NAME);
        let q = self.queues.load(&name)?;
        // companiesCompleted / companyQueue of the state-file shape: what is done, what is still to do.
        let (done, todo): (Vec<_>, Vec<_>) = q
            .items
            .iter()
            .enumerate()
            .filter(|(i, x)| *i > index || self.complete.contains(&x.id))
            .map(|(_, x)| x.id.clone())
            .partition(|id| self.complete.contains(id));
        let around = Neighbours::of(done, todo);
        drop(q);
        let resumed = prior.is_some();
        let mut st = self.prepare_state(item, prior, around);
        // Between items the orchestrating context always starts afresh, from this file only.
        let text = st.to_text();
        let mut ctx = Context::fresh(&self.opts.config, &text);
        st.context_estimate = ctx.estimate();
        st.save(&path)?;
        let first = self
            .pipeline
            .phases
            .iter()
            .find(|p| st.phases[&p.id].status != Progress::Complete)
            .map(|p| p.id.clone())
            .unwrap_or_default();
        self.note(&format!(
            "{item}: {} at phase {first}",
            if resumed { "resuming" } else { "starting" }
        ));
        let phases = self.pipeline.phases.clone();
        for (k, ph) in phases.iter().enumerate() {
            if st.phases[&ph.id].status == Progress::Complete {
                continue;
            }
            if let PhaseResult::Failed(reason) =
                self.run_phase(item, ph, &path, &mut st, &mut ctx, report)?
            {
                let reason = format!("phase {}: {reason}", ph.id);
                st.status = Progress::Failed;
                st.failure = Some(reason.clone());
                st.next = self.next_line(&st);
                st.save(&path)?;
                lock(&self.journal).log(Entry::SubjectFinished {
                    subject: Subject::item(item),
                    result: SubjectResult::Failed,
                    reason: reason.clone(),
                })?;
                self.reporter.report(&RunEvent::SubjectFinished {
                    subject: &Subject::item(item),
                    result: SubjectResult::Failed,
                    reason: &reason,
                    commit: None,
                    tokens: st.tokens_burned(),
                    cost_usd: 0.0,
                });
                return Ok(Some(reason));
            }
            let est = ctx.estimate();
            let more = phases[k + 1..]
                .iter()
                .find(|p| st.phases[&p.id].status != Progress::Complete);
            if let Some(next_phase) = more
                && est.total_estimate > est.rotation_threshold
            {
                // Rotate: the state is on disk; the session's context is dropped and the next
                // phase starts from the state file alone.
                drop(ctx);
                let on_disk = State::load_opt(&path)?.ok_or_else(|| {
                    Error::corrupt(&path, None, "the state file vanished mid-item")
                })?;
                st = on_disk;
                st.rotations += 1;
                report.rotations += 1;
                st.next = self.next_line(&st);
                ctx = Context::fresh(&self.opts.config, &st.to_text());
                st.context_estimate = ctx.estimate();
                st.save(&path)?;
                lock(&self.journal).log(Entry::Rotated {
                    item: item.to_string(),
                    after_phase: ph.id.clone(),
                    next_phase: next_phase.id.clone(),
                    reason: format!(
                        "context estimate {} > rotation threshold {} (session limit {})",
                        est.total_estimate, est.rotation_threshold, est.session_limit
                    ),
                    estimate: est.total_estimate,
                    threshold: est.rotation_threshold,
                    reset_to: ctx.estimate().total_estimate,
                    state_file: self.relative(&path),
                    state_tokens: ctx.start_tokens(),
                })?;
                self.reporter.report(&RunEvent::Rotated {
                    subject: &Subject::item(item),
                    session: "orchestrator",
                    reason: &format!(
                        "context budget hit ({} > {}): rotated; continuing from {} at phase {}",
                        est.total_estimate,
                        est.rotation_threshold,
                        self.relative(&path),
                        next_phase.id
                    ),
                });
            }
        }
        st.status = Progress::Complete;
        st.next = self.next_line(&st);
        st.save(&path)?;
        lock(&self.journal).log(Entry::SubjectFinished {
            subject: Subject::item(item),
            result: SubjectResult::Done,
            reason: String::new(),
        })?;
        self.reporter.report(&RunEvent::SubjectFinished {
            subject: &Subject::item(item),
            result: SubjectResult::Done,
            reason: "",
            commit: None,
            tokens: st.tokens_burned(),
            cost_usd: 0.0,
        });
        Ok(None)
    }

    /// An item's state as a phase of it starts: from its prior state (or a new one), with the
    /// pipeline's phases (ones it no longer has dropped, new ones added not started). Both
    /// engines (`baton run verify`, `baton worker`) start an item's work from this.
    pub fn prepare_state(&self, item: &str, prior: Option<State>, around: Neighbours) -> State {
        let mut st = prior.unwrap_or_else(|| State {
            item: item.to_string(),
            ..State::default()
        });
        st.phases
            .retain(|id, _| self.pipeline.phases.iter().any(|p| p.id == *id));
        for ph in &self.pipeline.phases {
            // A new phase starts not started (`Progress::default`).
            let e = st.phases.entry(ph.id.clone()).or_default();
            e.agent = ph.agent.clone();
            e.output_file = ph.output_for(item);
            e.input_files = self.input_names(ph, item);
        }
        if st.started_at.is_none() {
            st.started_at = Some(baton_core::ids::now());
        }
        st.status = Progress::InProgress;
        st.failure = None;
        st.queue = QueueRef {
            name: self.opts.queue.clone(),
            next: around.next,
            more: around.next_more,
        };
        st.completed = around.completed;
        st.completed_more = around.completed_more;
        st.run_id = Some(self.run_id.clone());
        st.next = self.next_line(&st);
        st
    }

    pub(crate) fn input_names(&self, ph: &Phase, item: &str) -> Vec<String> {
        ph.inputs
            .iter()
            .filter_map(|i| self.pipeline.phases.iter().find(|p| p.id == *i))
            .map(|p| p.output_for(item))
            .collect()
    }

    /// "what a fresh session does next", for the state file.
    pub fn next_line(&self, st: &State) -> String {
        let cmd = self.work_command.clone();
        match st.status.as_str() {
            "complete" => "nothing: the item is complete".into(),
            _ => match self.pipeline.phases.iter().find(|p| {
                st.phases
                    .get(&p.id)
                    .is_none_or(|s| s.status != Progress::Complete)
            }) {
                Some(p) => format!("continue {} from phase {}: {cmd}", st.item, p.id),
                None => format!("finish {}: {cmd}", st.item),
            },
        }
    }

    /// One phase of an item through the run pipeline (`run::call`): the answer passes with
    /// its output file written and a valid summary block; a missing or invalid block gets one
    /// retry with the format reminder. The state file is written when the phase starts and
    /// after it ends.
    pub fn run_phase(
        &mut self,
        item: &str,
        ph: &Phase,
        path: &Path,
        st: &mut State,
        ctx: &mut Context,
        report: &mut Report,
    ) -> Result<PhaseResult> {
        let item_dir = path.parent().unwrap_or(Path::new("."));
        let output = item_dir.join(ph.output_for(item));
        let output_rel = self.relative(&output);
        let subject = Subject::item(item);
        let mut tokens = 0u64;
        let mut reason: Option<String> = None;
        for retry in [false, true] {
            // The journal is the truth: an attempt it holds as finished while the state file
            // still says in progress (killed between the two writes) is replayed from it, not
            // called again.
            let last = st.phases[&ph.id].attempts;
            let unabsorbed = !retry
                && last > 0
                && st.phases[&ph.id].status == Progress::InProgress
                && lock(&self.journal)
                    .finished_phase(&subject, &ph.id, last)
                    .is_some();
            let attempt = if unabsorbed { last } else { last + 1 };
            // What an earlier attempt (cut off, or failed) left in the output file: set aside,
            // so this one starts from the item's files as they were before it, and writes each
            // line once.
            let partial = if !retry && !unabsorbed {
                self.set_aside(item, &output, attempt - 1)?
            } else {
                None
            };
            let before = st.phases[&ph.id].clone();
            {
                let ps = st.phases.get_mut(&ph.id).expect("phase state");
                ps.status = Progress::InProgress;
                ps.attempts = attempt;
                ps.started_at = Some(baton_core::ids::now());
                ps.error = None;
                if partial.is_some() {
                    ps.partial_output = partial.clone();
                }
            }
            st.context_estimate = ctx.estimate();
            st.next = self.next_line(st);
            st.save(path)?;
            if let Some(p) = &partial {
                self.note(&format!(
                    "{item} {}: a previous attempt left a partial output ({} lines); it is set aside at {} and the phase starts afresh",
                    ph.id, p.lines, p.file
                ));
            }
            let call = Call {
                subject: &subject,
                phase: &ph.id,
                attempt,
                label: format!("{item}-{}-{attempt}", ph.id),
                who: self.assignment(&ph.role),
                cwd: self.project_dir.clone(),
                budget: ph.budget,
                policy: self.pipeline.policy,
                resume: None,
            };
            let called = {
                let this = &*self;
                let render = || match &reason {
                    None => this.prompt(item, ph, st, attempt, &output_rel, partial.as_ref()),
                    Some(r) => this.reminder(item, ph, attempt, &output_rel, &output, r),
                };
                this.calls().call(&call, render, |reply| {
                    if !output.is_file() {
                        return Verdict::broken(format!(
                            "the agent wrote no output file ({output_rel})"
                        ));
                    }
                    judge_summary(&reply.text, &output)
                })
            };
            let called = match called {
                Ok(c) => c,
                Err(e) => {
                    // A pause (a spent limit, no login, a signal) is no attempt: the phase
                    // stands as it did, and a resumed run makes this attempt again.
                    st.phases.insert(ph.id.clone(), before);
                    st.next = self.next_line(st);
                    st.save(path)?;
                    return Err(e);
                }
            };
            if called.reply.is_some() {
                report.agent_calls += 1;
                ctx.message();
            }
            let outcome = called.outcome;
            tokens += outcome.usage.total();
            let parsed = outcome.kept.as_deref().and_then(summary::parse);
            match (outcome.judged(), parsed) {
                (Judged::Passed, Some(p)) => {
                    ctx.returned(&p.text);
                    let ps = st.phases.get_mut(&ph.id).expect("phase state");
                    ps.status = Progress::Complete;
                    ps.summary = Some(state::key_fields(&p.summary));
                    ps.completed_at = Some(baton_core::ids::now());
                    ps.tokens_burned = Some(ps.tokens_burned.unwrap_or(0) + tokens);
                    st.context_estimate = ctx.estimate();
                    st.next = self.next_line(st);
                    st.save(path)?;
                    let s = &p.summary;
                    self.note(&format!(
                        "{item} {}: complete — {} findings, {} issue(s), {} lines in {output_rel}",
                        ph.id,
                        s.key_findings.len(),
                        s.issues.len(),
                        s.lines_written.unwrap_or(0)
                    ));
                    return Ok(PhaseResult::Complete);
                }
                (Judged::Malformed, _) if !retry => {
                    self.note(&format!(
                        "{item} {}: {}; retrying once with a format reminder",
                        ph.id, outcome.detail
                    ));
                    reason = Some(outcome.detail);
                }
                (judged, _) => {
                    let w = if judged == Judged::Passed {
                        // A v1 journal kept no summary block: the phase must run again.
                        "the recorded answer's summary block is not in the journal".to_string()
                    } else if retry {
                        format!(
                            "{} (after a retry with the format reminder)",
                            outcome.detail
                        )
                    } else {
                        outcome.detail
                    };
                    let ps = st.phases.get_mut(&ph.id).expect("phase state");
                    ps.status = Progress::Failed;
                    ps.error = Some(w.clone());
                    ps.tokens_burned = Some(ps.tokens_burned.unwrap_or(0) + tokens);
                    st.context_estimate = ctx.estimate();
                    return Ok(PhaseResult::Failed(w));
                }
            }
        }
        unreachable!("the second attempt always returns")
    }

    fn prompt(
        &self,
        item: &str,
        ph: &Phase,
        st: &State,
        attempt: u32,
        output_rel: &str,
        partial: Option<&Partial>,
    ) -> Result<String> {
        let item_dir = self.queues.item_dir(&self.opts.queue, item);
        let mut inputs = Vec::new();
        let mut notes = Vec::new();
        for id in &ph.inputs {
            let Some(src) = self.pipeline.phases.iter().find(|p| p.id == *id) else {
                continue;
            };
            inputs.push(serde_json::json!({
                "phase": id,
                "agent": src.agent,
                "path": self.relative(&item_dir.join(src.output_for(item))),
            }));
            // Only the small key fields the state file keeps: never the file's contents.
            if let Some(needs) = st
                .phases
                .get(id)
                .and_then(|s| s.summary.as_ref())
                .and_then(|s| s["nextPhaseNeeds"].as_array())
            {
                for n in needs.iter().filter_map(|n| n.as_str()) {
                    notes.push(serde_json::json!({"phase": id, "text": n}));
                }
            }
        }
        let ctx = serde_json::json!({
            "phase": ph,
            "item": item,
            "attempt": attempt,
            "output": output_rel,
            "inputs": inputs,
            "notes": notes,
            "partial": partial.map(|p| serde_json::json!({"path": p.file, "lines": p.lines})),
            "format": pipeline::FORMAT,
        });
        let t = crate::prompt::template(&ph.template, &self.prompts_dir)?;
        crate::prompt::render(&ph.template, &t, &ctx)
    }

    fn reminder(
        &self,
        item: &str,
        ph: &Phase,
        attempt: u32,
        output_rel: &str,
        output: &Path,
        reason: &str,
    ) -> Result<String> {
        let ctx = serde_json::json!({
            "phase": ph,
            "item": item,
            "attempt": attempt,
            "output": output_rel,
            "output_lines": line_count(output),
            "reason": reason,
            "format": pipeline::FORMAT,
        });
        let t = crate::prompt::template("verify-reminder", &self.prompts_dir)?;
        crate::prompt::render("verify-reminder", &t, &ctx)
    }
}

/// Lines of a file, counted as a stream (the orchestrator never holds an output file's text).
impl VerifyEngine<'_> {
    /// An output file an earlier attempt of the phase left, moved to the run's
    /// `set-aside/<item>/<file>.attempt-<n>` (never overwriting one set aside before). A kill
    /// between the move and the state's write leaves it there: found again, not lost.
    fn set_aside(&self, item: &str, output: &Path, earlier: u32) -> Result<Option<Partial>> {
        let dir = lock(&self.journal).dir.join("set-aside").join(item);
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let slot = |k: u32| {
            dir.join(match k {
                0 => format!("{name}.attempt-{earlier}"),
                k => format!("{name}.attempt-{earlier}-{k}"),
            })
        };
        let Some(lines) = line_count(output) else {
            // Moved already by a baton killed before it said so.
            let moved = (0..).map(slot).take_while(|p| p.is_file()).last();
            return Ok(moved.map(|p| Partial {
                lines: line_count(&p).unwrap_or(0),
                file: self.relative(&p),
                attempt: earlier,
            }));
        };
        baton_core::fs::create_dir_all(&dir)?;
        let to = (0..).map(slot).find(|p| !p.exists()).expect("a free name");
        std::fs::rename(output, &to).map_err(|e| Error::io(output, e))?;
        Ok(Some(Partial {
            file: self.relative(&to),
            lines,
            attempt: earlier,
        }))
    }
}

fn line_count(path: &Path) -> Option<u64> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = [0u8; 16 * 1024];
    let (mut n, mut last) = (0u64, b'\n');
    loop {
        let k = f.read(&mut buf).ok()?;
        if k == 0 {
            break;
        }
        n += memchr::memchr_iter(b'\n', &buf[..k]).count() as u64;
        last = buf[k - 1];
    }
    Some(n + u64::from(last != b'\n'))
}
