//! The engine's agents: the real CLIs through `baton_agent`, and the simulated agent — this
//! very binary, started as a separate process with `BATON_AGENT_SIM=1`, speaking Claude Code's
//! stream-json so it goes through exactly the parser `claude -p` does.

use std::path::{Path, PathBuf};

use super::agents::{Agents, Assignment, Reply, Request};
use baton_agent::settings::{self, AgentsConfig, Resolved};
// For display only (a dry run's command line): baton never runs a shell.
use crate::error::{Error, Result};
use baton_agent::wiring::shell_quote;
use baton_agent::{self as agent, AgentKind, AgentRequest, AgentSpec};
use baton_context::mask::record::{AGENT_ENV, PHASE_ENV, RUN_DIR_ENV};
use baton_core::error::Fault;

/// Set in the simulated agent's environment; `baton` started with it acts as the agent.
pub const SIM_ENV: &str = "BATON_AGENT_SIM";

/// Whether the engine can run phases with `who`: checked for every role before a run
/// changes anything. The agent must be known, its settings valid for its CLI, and its command
/// line buildable.
pub fn runnable(who: &Assignment, agents: &AgentsConfig) -> Result<()> {
    if who.agent.is_sim() {
        return Ok(());
    }
    let r = resolve(who, agents)?;
    r.check(&who.agent)?;
    let probe = AgentRequest::new("", ".", ".", "probe");
    agent::invocation(&r.spec(Path::new("."), false), &probe)?;
    Ok(())
}

/// One agent a run will call, as the pre-flight found it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AgentCheck {
    pub agent: String,
    /// What it runs (`claude`, or the configured program); none for the simulated agent.
    pub program: Option<String>,
    /// Where it was found.
    pub found: Option<PathBuf>,
    /// Its `--version` (dry runs only: a real run does not start the CLI for it).
    pub version: Option<String>,
    /// Where its credentials are, or how to log in (advisory).
    pub credentials: Option<String>,
    /// Why the run would stop (exit 7), and what to do.
    pub problem: Option<String>,
}

/// Before the first phase: every agent the run will call is installed. A real run stops at
/// the first that is not (exit 7, nothing changed); a dry run (`show`) asks each for its
/// version and credentials too, and lists what it found.
pub fn preflight(
    whos: &[Assignment],
    agents: &AgentsConfig,
    project_dir: &Path,
    show: bool,
) -> Result<Vec<AgentCheck>> {
    let mut checks: Vec<AgentCheck> = Vec::new();
    for who in whos {
        let name = who.agent.as_str().to_string();
        if checks.iter().any(|c| c.agent == name) {
            continue;
        }
        if who.agent.is_sim() {
            checks.push(AgentCheck {
                agent: name,
                program: None,
                found: None,
                version: None,
                credentials: None,
                problem: None,
            });
            continue;
        }
        let spec = resolve(who, agents)?.spec(project_dir, false);
        let program = agent::preflight::program(&spec).display().to_string();
        let (found, problem) = match agent::preflight::locate(&spec, project_dir) {
            Ok(p) => (Some(p), None),
            Err(e) if !show => return Err(e.into()),
            Err(e) => (
                None,
                Some(format!("{e}: {}", e.hint_text().unwrap_or_default())),
            ),
        };
        // Only the known CLIs are asked: a `command` agent of the user's own may take
        // `--version` for a prompt, and a dry run runs no agent.
        let known = matches!(
            spec.kind,
            AgentKind::Claude | AgentKind::Codex | AgentKind::Gemini
        );
        let version = found
            .as_deref()
            .filter(|_| show && known)
            .and_then(agent::preflight::version);
        let credentials = show
            .then(|| match agent::preflight::credentials(spec.kind) {
                agent::preflight::Credentials::Found(at) => Some(format!("found ({at})")),
                agent::preflight::Credentials::NoneFound(how) => Some(format!("none found: {how}")),
                agent::preflight::Credentials::NotApplicable => None,
            })
            .flatten();
        checks.push(AgentCheck {
            agent: name,
            program: Some(program),
            found,
            version,
            credentials,
            problem,
        });
    }
    Ok(checks)
}

/// [`runnable`], and its CLI installed: what a real run checks for each role before it
/// changes anything.
pub fn ready(who: &Assignment, agents: &AgentsConfig, project_dir: &Path) -> Result<()> {
    runnable(who, agents)?;
    preflight(std::slice::from_ref(who), agents, project_dir, false).map(drop)
}

fn resolve(who: &Assignment, agents: &AgentsConfig) -> Result<Resolved> {
    Ok(settings::resolve(
        agents,
        &who.agent,
        who.model.as_deref(),
        who.tier,
    )?)
}

pub struct CliAgents {
    project_dir: PathBuf,
    scenario: Option<PathBuf>,
    agents: AgentsConfig,
    skip_permissions: bool,
    /// `[run] api_patience_secs`.
    api_patience: std::time::Duration,
    /// The binary that acts as the simulated agent (default: this one).
    sim_program: Option<PathBuf>,
}

impl CliAgents {
    pub fn new(project_dir: &Path, scenario: Option<PathBuf>) -> CliAgents {
        CliAgents {
            project_dir: project_dir.to_path_buf(),
            scenario,
            agents: AgentsConfig::new(),
            skip_permissions: false,
            api_patience: agent::DEFAULT_API_PATIENCE,
            sim_program: None,
        }
    }

    /// Use `program` (a `baton` binary) as the simulated agent: for callers that are not
    /// `baton` themselves, such as tests of the library.
    pub fn sim_program(mut self, program: PathBuf) -> Self {
        self.sim_program = Some(program);
        self
    }

    /// The project's `[run] skip_permissions` and `[agents.*]` settings.
    pub fn configured(mut self, run: &crate::config::Config) -> Self {
        self.skip_permissions = run.run.skip_permissions;
        self.api_patience = std::time::Duration::from_secs(run.run.api_patience_secs);
        self.agents = run.agents.clone();
        self
    }

    /// The adapter configuration that runs `who`.
    pub fn spec(&self, who: &Assignment) -> Result<AgentSpec> {
        if who.agent.is_sim() {
            let exe = match &self.sim_program {
                Some(p) => p.clone(),
                // This very binary, even when a newer baton replaced its file mid-run (the
                // path `current_exe` gives then is gone; /proc's link still runs it).
                None if Path::new("/proc/self/exe").exists() => "/proc/self/exe".into(),
                None => std::env::current_exe().map_err(|e| Error::io("baton", e))?,
            };
            let mut s = AgentSpec::new(AgentKind::Claude);
            s.program = Some(exe);
            s.env.push((SIM_ENV.into(), "1".into()));
            if let Some(sc) = &self.scenario {
                s.env
                    .push(("BATON_SIM_SCENARIO".into(), sc.display().to_string()));
            }
            return Ok(s);
        }
        Ok(resolve(who, &self.agents)?.spec(&self.project_dir, self.skip_permissions))
    }
}

impl Agents for CliAgents {
    fn model(&self, who: &Assignment) -> Option<String> {
        if who.agent.is_sim() {
            // The simulated agent has no models: name what the role asks for.
            return who
                .model
                .clone()
                .or(who.tier.map(|t| format!("{} tier", t.name())));
        }
        resolve(who, &self.agents).ok().and_then(|r| r.model)
    }

    fn context_floor(&self, who: &Assignment) -> u64 {
        if who.agent.is_sim() {
            return 0;
        }
        self.spec(who).map_or(0, |s| s.kind.context_floor())
    }

    fn api_patience(&self) -> std::time::Duration {
        self.api_patience
    }

    fn command_line(&self, who: &Assignment, req: &Request) -> Option<String> {
        if who.agent.is_sim() {
            return None;
        }
        let spec = self.spec(who).ok()?;
        let r = AgentRequest::new(
            req.prompt,
            req.cwd.clone(),
            req.log_dir.clone(),
            req.name.clone(),
        );
        let inv = agent::invocation(&spec, &r).ok()?;
        let mut words = vec![shell_quote(&inv.program.display().to_string())];
        words.extend(inv.args.iter().map(|a| shell_quote(a)));
        let line = words.join(" ");
        Some(if inv.prompt_on_stdin {
            format!("{line} < prompt")
        } else {
            line
        })
    }

    fn run(&self, who: &Assignment, req: &Request) -> Result<Reply> {
        let mut spec = self.spec(who)?;
        spec.timeout = req.timeout;
        spec.grace = req.grace;
        spec.api_patience = self.api_patience;
        // What baton masks for the agent (`baton mask`, its hooks, the MCP tool) is logged for
        // this run, phase and agent (context::mask::record): the report's tokens saved.
        if let Some(run_dir) = req.log_dir.parent() {
            spec.env
                .push((RUN_DIR_ENV.into(), run_dir.display().to_string()));
            spec.env.push((PHASE_ENV.into(), req.name.clone()));
            spec.env.push((AGENT_ENV.into(), spec.kind.name().into()));
        }
        let mut r = AgentRequest::new(
            req.prompt,
            req.cwd.clone(),
            req.log_dir.clone(),
            req.name.clone(),
        );
        r.resume = req.resume.clone();
        // Ctrl-C or kill of baton stops the agent's process group (it has a group of its own,
        // out of the terminal's reach); so does a worker's lost claim.
        r.cancel = Some(super::interrupt::call_token());
        let out = agent::run(&spec, &r)?;
        Ok(Reply {
            ok: !out.is_error(),
            error: out.error.clone(),
            timed_out: out.timed_out(),
            transient: out.transient,
            fatal: out.is_fatal().then(|| {
                out.next_step()
                    .unwrap_or_else(|| "check the agent's setup".into())
            }),
            quota: out.quota_reset(),
            text: out.text_tail.clone(),
            usage: out.usage,
            cost_usd: out.cost_usd,
            session_id: out.session_id.clone(),
            context_tokens: out.context_tokens,
            context_peak_tokens: out.context_peak_tokens,
            duration_ms: out.duration_ms,
            log: out.log_path.clone(),
        })
    }
}
