//! The engine's agents: the real CLIs through `crate::agent`, and the simulated agent — this
//! very binary, started as a separate process with `BATON_AGENT_SIM=1`, speaking Claude Code's
//! stream-json so it goes through exactly the parser `claude -p` does.

use std::path::{Path, PathBuf};

use super::agents::{Agents, Assignment, Reply, Request};
use crate::agent::{self, AgentKind, AgentRequest, AgentSpec};
use crate::error::{Error, Result};

/// Set in the simulated agent's environment; `baton` started with it acts as the agent.
pub const SIM_ENV: &str = "BATON_AGENT_SIM";
/// The run directory of the phase an agent runs (set for every agent process).
pub const RUN_DIR_ENV: &str = "BATON_RUN_DIR";
/// The phase's label (`prompts/<label>.md`, `logs/<label>.log`).
pub const PHASE_ENV: &str = "BATON_RUN_PHASE";

/// Whether the engine can run phases with `who`: checked for every role before a run
/// changes anything. The `command` kind needs a program, which workflow roles cannot name yet.
pub fn runnable(who: &Assignment) -> Result<()> {
    match who.agent {
        AgentKind::Claude | AgentKind::Codex | AgentKind::Gemini | AgentKind::Sim => Ok(()),
        AgentKind::Command => Err(Error::invalid(
            "the `command` agent cannot run workflow phases: it needs a program",
        )
        .hint("agents for phases: claude, codex, gemini, sim (--agent, [run.roles] in baton.toml, or the workflow's [roles])")),
    }
}

pub struct CliAgents {
    scenario: Option<PathBuf>,
    skip_permissions: bool,
    /// The binary that acts as the simulated agent (default: this one).
    sim_program: Option<PathBuf>,
}

impl CliAgents {
    pub fn new(_project_dir: &Path, scenario: Option<PathBuf>) -> CliAgents {
        CliAgents {
            scenario,
            skip_permissions: false,
            sim_program: None,
        }
    }

    /// Use `program` (a `baton` binary) as the simulated agent: for callers that are not
    /// `baton` themselves, such as tests of the library.
    pub fn sim_program(mut self, program: PathBuf) -> Self {
        self.sim_program = Some(program);
        self
    }

    pub fn skip_permissions(mut self, yes: bool) -> Self {
        self.skip_permissions = yes;
        self
    }

    fn spec(&self, who: &Assignment, req: &Request) -> Result<AgentSpec> {
        runnable(who)?;
        let mut spec = match who.agent {
            AgentKind::Sim => {
                let exe = match &self.sim_program {
                    Some(p) => p.clone(),
                    None => std::env::current_exe().map_err(|e| Error::io("baton", e))?,
                };
                let mut s = AgentSpec::new(AgentKind::Claude);
                s.program = Some(exe);
                s.env.push((SIM_ENV.into(), "1".into()));
                if let Some(sc) = &self.scenario {
                    s.env
                        .push(("BATON_SIM_SCENARIO".into(), sc.display().to_string()));
                }
                s
            }
            kind => AgentSpec::new(kind),
        };
        if who.agent != AgentKind::Sim {
            spec.model = who.model.clone();
            spec.skip_permissions = self.skip_permissions;
        }
        spec.timeout = req.timeout;
        spec.grace = req.grace;
        // `baton mask` run by the agent records what it masked in this run, for this phase
        // (context::mask::record): the report's masked outputs and tokens saved.
        if let Some(run_dir) = req.log_dir.parent() {
            spec.env
                .push((RUN_DIR_ENV.into(), run_dir.display().to_string()));
            spec.env.push((PHASE_ENV.into(), req.name.clone()));
        }
        Ok(spec)
    }
}

impl Agents for CliAgents {
    fn run(&self, who: &Assignment, req: &Request) -> Result<Reply> {
        let spec = self.spec(who, req)?;
        let mut r = AgentRequest::new(
            req.prompt,
            req.cwd.clone(),
            req.log_dir.clone(),
            req.name.clone(),
        );
        r.resume = req.resume.clone();
        // Ctrl-C or kill of baton stops the agent's process group (it has a group of its own,
        // out of the terminal's reach).
        r.cancel = Some(super::interrupt::token().clone());
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
            text: out.text_tail.clone(),
            usage: out.usage,
            cost_usd: out.cost_usd,
            session_id: out.session_id.clone(),
            context_tokens: out.context_tokens,
            duration_ms: out.duration_ms,
            log: out.log_path.clone(),
        })
    }
}
