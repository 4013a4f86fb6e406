//! Discovery: the first phase, a dialogue with the person in an interactive agent session of
//! its own (their terminal, a fresh context), which ends in spec files written in the project.
//! baton meters the session from the CLI's own transcript and warns past the budget; after the
//! person leaves it records the phase only when every spec file was written — the specs stored
//! as the task's artifacts, the dialogue itself nowhere. Leaving earlier records nothing: the
//! next `baton discover` starts a new session for the same task.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::def::{self as task_def, TaskPhase};
use super::plan::{self, SpecPath};
use crate::cli_agents::CliAgents;
use crate::config::Project;
use crate::definition::Loaded;
use crate::error::{Error, Result};
use baton_agent::settings::AgentId;
use baton_agent::{AgentSpec, interactive, transcript};
use baton_context::extract;
use baton_core::markdown;
use baton_store::model::{Mode, PhaseStatus, Status, Workflow};
use baton_store::{Content, Store, artifacts};

/// What `baton discover` is asked.
pub struct Ask<'a> {
    /// A task (its slug or name), an idea (a sentence: a task is made of it), or none: `task`.
    pub target: Option<&'a str>,
    /// The task when no target is given (`--task`, else the current one).
    pub task: Option<&'a str>,
    /// The task workflow whose discovery phase runs.
    pub workflow: &'a str,
    pub agent: Option<&'a AgentId>,
    /// Where the spec files go (`{task}`: the slug); default: the phase's.
    pub spec_dir: Option<&'a str>,
}

/// A discovery session prepared — the task, its spec files, the agent CLI, the prompt and the
/// command line — with nothing changed yet (a dry run stops here).
pub struct Prepared {
    pub project_dir: PathBuf,
    pub slug: String,
    /// The name of the task an idea becomes, made when the session opens, and the idea.
    pub create: Option<(String, String)>,
    /// The agent, as the person named it.
    pub agent_name: String,
    pub phase: TaskPhase,
    pub specs: Vec<SpecPath>,
    pub agent: AgentSpec,
    pub prompt: String,
    /// The command line; its last argument is the prompt.
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl Prepared {
    pub fn prepare(project: &Project, store: &Store, ask: &Ask) -> Result<Prepared> {
        let local = project.local_dir();
        let project_dir = crate::git::Git::new(&project.dir)
            .toplevel()
            .unwrap_or_else(|_| project.dir.clone());
        let Loaded {
            def: wf, source, ..
        } = task_def::load(ask.workflow, &local.join("workflows"))?;
        let phase = plan::discovery_phase(&wf, &source)?.clone();
        let (slug, create) = resolve(store, ask)?;
        let specs = plan::spec_paths(&project_dir, &phase, &slug, ask.spec_dir)?;
        let cfg = &project.config;
        let who = crate::definition::assign(
            &phase.role,
            ask.agent,
            &cfg.run.roles,
            &wf.roles,
            &cfg.run.default_agent,
        );
        if who.agent.is_sim() {
            return Err(Error::invalid(format!(
                "discovery is a dialogue with a person: the simulated agent cannot hold it (agent `{}`)",
                who.agent
            ))
            .hint("pick an interactive agent CLI: --agent claude|codex|gemini or an [agents.<name>] of baton.toml"));
        }
        let agent = CliAgents::new(&project_dir, None)
            .configured(cfg)
            .spec(&who)?;
        let idea = create.as_ref().map(|(_, idea)| idea.as_str());
        let prompt = self::prompt(&local.join("prompts"), &phase, &slug, idea, &specs)?;
        let (program, args) = interactive::argv(&agent, &prompt, None)?;
        Ok(Prepared {
            project_dir,
            slug,
            create,
            agent_name: who.agent.to_string(),
            phase,
            specs,
            agent,
            prompt,
            program,
            args,
        })
    }

    /// The agent CLI is there (before the terminal is checked: a missing CLI is the first
    /// thing to fix).
    pub fn locate(&self) -> Result<()> {
        baton_agent::preflight::locate(&self.agent, &self.project_dir)?;
        Ok(())
    }

    /// Make the task an idea becomes, or check the task runs: the session can start.
    pub fn open(self, store: &Store, poll: Duration) -> Result<Session<'_>> {
        match &self.create {
            Some((name, _)) => {
                store.init(name, Mode::Standard, Workflow::Orchestrate)?;
            }
            None => {
                let m = store.manifest(&self.slug)?;
                if m.status != Status::Running {
                    return Err(Error::state(format!(
                        "task `{}` is {}: discovery records a phase only in a running task",
                        self.slug, m.status
                    ))
                    .hint("start a new task: baton discover \"<idea>\""));
                }
            }
        }
        Ok(Session {
            project_dir: self.project_dir,
            store,
            slug: self.slug,
            phase: self.phase,
            specs: self.specs,
            agent: self.agent,
            prompt: self.prompt,
            poll,
        })
    }
}

/// The task asked for, or the one an idea becomes (its name and the idea).
fn resolve(store: &Store, ask: &Ask) -> Result<(String, Option<(String, String)>)> {
    let Some(t) = ask.target else {
        return Ok((store.resolve(ask.task)?, None));
    };
    match baton_store::names::slugify(t).ok() {
        Some(s) if store.exists(&s) => Ok((store.resolve(Some(&s))?, None)),
        // One word is a task's name, not an idea: a typo must not become a task.
        _ if !t.trim().contains(char::is_whitespace) => {
            let close = store.did_you_mean(t);
            Err(Error::not_found(format!("no task `{t}`{close}")).hint(
                "see the tasks with `baton task list`; an idea is a sentence: baton discover \"Let people sign in with GitHub\"",
            ))
        }
        _ => {
            // A sentence makes a long slug: its first words name the task.
            let name: String = t.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
            let slug = baton_store::names::slugify(&name)?;
            if store.exists(&slug) {
                // The idea would be dropped in favour of a task it merely starts like.
                return Err(Error::state(format!(
                    "the idea would be task `{slug}`, which exists already"
                ))
                .hint(format!(
                    "continue that task: baton discover {slug}; or word the idea's first words differently"
                )));
            }
            Ok((slug, Some((name, t.to_string()))))
        }
    }
}

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
            return Err(Error::unavailable(format!(
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
