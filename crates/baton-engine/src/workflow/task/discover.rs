//! Discovery: the first phase, a dialogue with the person in an interactive agent session of
//! its own (their terminal, a fresh context), which ends in spec files written in the project.
//! baton meters the session from the CLI's own transcript and warns past the budget; after the
//! person leaves it records the phase only when every spec file was written — the specs stored
//! as the task's artifacts, the dialogue itself nowhere. Leaving earlier records nothing: the
//! next `baton discover` starts a new session for the same task.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::def::TaskPhase;
use super::plan::SpecPath;
use baton_agent::{AgentSpec, interactive, transcript};
use baton_context::extract;
use baton_core::error::{Error, Result};
use baton_core::markdown;
use baton_store::model::PhaseStatus;
use baton_store::{Content, Store, artifacts};

/// The discovery prompt: what to ask, what to scan, the spec files and their sections.
pub fn prompt(
    prompts_dir: &Path,
    p: &TaskPhase,
    slug: &str,
    idea: Option<&str>,
    specs: &[SpecPath],
) -> Result<String> {
    let name = p.template_name();
    let template = crate::prompt::template(&name, prompts_dir)?;
    let ctx = serde_json::json!({
        "task": slug,
        "idea": idea,
        "specs": specs.iter().map(|s| serde_json::json!({"path": s.rel, "sections": s.spec.sections})).collect::<Vec<_>>(),
        "budget": p.budget,
        "signal": p.signal,
    });
    crate::prompt::render(&name, &template, &ctx)
}

/// One discovery session, ready to start.
pub struct Session<'a> {
    pub project_dir: PathBuf,
    pub store: &'a Store,
    pub slug: String,
    pub phase: TaskPhase,
    pub specs: Vec<SpecPath>,
    pub agent: AgentSpec,
    pub prompt: String,
    /// How often the transcript is read.
    pub poll: Duration,
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// Every spec file was written: the phase is recorded, the specs stored.
    Recorded {
        /// Artifacts, relative to the task directory.
        stored: Vec<String>,
        tokens: u64,
        /// `FILE: ## Section` the prompt asked for and the file lacks.
        missing_sections: Vec<String>,
    },
    /// The person left before the specs were written: nothing recorded.
    Unfinished {
        /// Spec files (relative) not written in this session.
        missing: Vec<String>,
        tokens: u64,
    },
}

impl Session<'_> {
    /// Run the session in the person's terminal until they leave; `warn(tokens, budget)` is
    /// called (from the watcher thread) once the dialogue passes the phase's budget.
    pub fn run(&self, warn: Box<dyn Fn(u64, u64) + Send>) -> Result<Ended> {
        // claude takes the session id from baton, so the watcher reads that transcript only.
        let session = uuid::Uuid::new_v4().to_string();
        let (program, args) = interactive::argv(&self.agent, &self.prompt, Some(&session))?;
        let name =
            (self.agent.kind == baton_agent::AgentKind::Claude).then(|| format!("{session}.jsonl"));
        // File times are coarse: a transcript written in the second before the start counts.
        let since = SystemTime::now() - Duration::from_secs(1);
        let var = |k: &str| std::env::var(k).ok();
        let watcher = transcript::root(self.agent.kind, &var).map(|root| {
            transcript::Watcher::start(
                self.agent.kind,
                root,
                name,
                since,
                self.phase.budget.map(|b| b as u64),
                self.poll,
                warn,
            )
        });
        let status = std::process::Command::new(&program)
            .args(&args)
            .current_dir(&self.project_dir)
            .envs(self.agent.env.iter().map(|(k, v)| (k, v)))
            .env_remove("BATON_DATABASE_URL")
            .spawn()
            .and_then(wait_passing_signals);
        let tokens = watcher.map_or(0, transcript::Watcher::finish);
        if let Err(e) = status {
            return Err(Error::agent(format!(
                "cannot start the agent `{}`: {e}",
                program.display()
            ))
            .hint("install its CLI, or pick another with --agent (or [agents.<name>] program = … in baton.toml)"));
        }
        let missing: Vec<String> = self
            .specs
            .iter()
            .filter(|s| !written_since(&s.path, since))
            .map(|s| s.rel.clone())
            .collect();
        if !missing.is_empty() {
            return Ok(Ended::Unfinished { missing, tokens });
        }
        self.record(tokens)
    }

    /// BEGIN_PHASE discovery, one STORE per spec file, COMPLETE_PHASE; the dialogue's size in
    /// the history.
    fn record(&self, tokens: u64) -> Result<Ended> {
        let mut texts = vec![];
        let mut missing_sections = vec![];
        for s in &self.specs {
            baton_core::fs::confined(&self.project_dir, &s.path)?;
            let text = baton_core::fs::read_text(&s.path)?;
            let all = markdown::sections(&text);
            for t in &s.spec.sections {
                if extract::find(&all, t).is_err() {
                    missing_sections.push(format!("{}: ## {t}", s.rel));
                }
            }
            texts.push((s.spec.stem().to_string(), text));
        }
        // A recording a kill cut short left the phase running and maybe some specs stored:
        // it is finished now, without a second begin or a second copy of a stored spec.
        let m = self.store.manifest(&self.slug)?;
        if !m.running_phases.iter().any(|r| r.label() == "discovery") {
            self.store.begin_phase(&self.slug, "discovery", None, &[])?;
        }
        let task_dir = self.store.task_dir(&self.slug);
        let mut stored = vec![];
        for (stem, text) in texts {
            let latest = artifacts::latest(&task_dir, &format!("discovery/{stem}"));
            if let Some(p) = latest
                && std::fs::read_to_string(&p).is_ok_and(|t| t == text)
                && m.running_phases.iter().any(|r| r.label() == "discovery")
            {
                stored.push(
                    p.strip_prefix(&task_dir)
                        .unwrap_or(&p)
                        .display()
                        .to_string(),
                );
                continue;
            }
            let o = self.store.store(
                &self.slug,
                "discovery",
                Content {
                    task_id: Some(stem),
                    iteration: None,
                    text,
                },
            )?;
            stored.extend(o.stored);
        }
        self.store
            .complete_phase(&self.slug, "discovery", None, PhaseStatus::Success, None)?;
        let budget = self
            .phase
            .budget
            .map(|b| format!(" (budget {b})"))
            .unwrap_or_default();
        self.store.note(
            &self.slug,
            &format!(
                "discovery: dialogue of {tokens} tokens{budget}; specs stored: {}",
                stored.join(", ")
            ),
        )?;
        Ok(Ended::Recorded {
            stored,
            tokens,
            missing_sections,
        })
    }
}

/// A non-empty file modified at or after `since`.
fn written_since(path: &Path, since: SystemTime) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|m| m.is_file() && m.len() > 0 && m.modified().is_ok_and(|t| t >= since))
}

/// Wait for the person's agent CLI to end. A `kill` of baton (SIGTERM) or a closed terminal
/// (SIGHUP; `run::interrupt` catches both) is passed on to the agent, once, and baton goes on
/// waiting ([`DIALOGUE_GRACE`] at most, then it kills the agent): when the agent has ended,
/// what the session wrote is recorded as always. (Ctrl-C
/// and Ctrl-\ are the agent's alone: see `interrupt::install_for_dialogue`.)
fn wait_passing_signals(
    mut child: std::process::Child,
) -> std::io::Result<std::process::ExitStatus> {
    let mut passed: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        match passed {
            None => {
                if let Some(sig) = crate::interrupt::received() {
                    // SAFETY: kill(2) of our own child, not reaped yet (try_wait above).
                    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
                    passed = Some(Instant::now());
                }
            }
            // An agent that does not end on it is killed: a `kill` of baton must end both.
            Some(at) if at.elapsed() > DIALOGUE_GRACE => {
                let _ = child.kill();
                return child.wait();
            }
            Some(_) => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How long the agent has to end once a signal baton got was passed on to it.
const DIALOGUE_GRACE: Duration = Duration::from_secs(5);
