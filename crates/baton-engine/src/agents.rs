//! How the engine calls agents: one request, one fresh process, one reply. The adapters that
//! spawn and parse each CLI live in `baton_agent`; this is the engine's narrow view of them.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::Result;
use baton_agent::Usage;
use baton_agent::settings::{AgentId, Tier};

/// The agent and model that run one role. The model is resolved against the agent's
/// settings when it is called: a tier becomes that CLI's own model name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub agent: AgentId,
    pub tier: Option<Tier>,
    pub model: Option<String>,
}

#[derive(Clone)]
pub struct Request<'a> {
    /// Names the log files: `<log_dir>/<name>.log`.
    pub name: String,
    pub prompt: &'a str,
    pub cwd: PathBuf,
    pub log_dir: PathBuf,
    pub timeout: Duration,
    pub grace: Duration,
    /// Continue this agent session instead of starting a fresh one (a conductor).
    pub resume: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// The process exited 0 and the agent reported no error.
    pub ok: bool,
    /// Why not, when not (exit code, signal, timeout, the agent's own error).
    pub error: Option<String>,
    pub timed_out: bool,
    /// Rate limit or server overload: worth a retry after a pause, not a task failure.
    pub transient: bool,
    /// The CLI itself cannot work (not logged in, untrusted folder, unknown model, no network,
    /// a refused argument): what to do about it. The run stops; no attempt is spent.
    pub fatal: Option<String>,
    /// The subscription's usage limit is spent (fatal too): when it resets, as Unix seconds,
    /// where the CLI's message says so in a form baton reads.
    pub quota: Option<Option<i64>>,
    /// The agent's final text (bounded): where the signal is looked for.
    pub text: String,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub session_id: Option<String>,
    /// The session's context as the agent reports it (prompt size of its latest call).
    pub context_tokens: Option<u64>,
    /// The largest single request of the session, in prompt tokens.
    pub context_peak_tokens: Option<u64>,
    pub duration_ms: u64,
    pub log: PathBuf,
}

/// `Sync`: parallel stories call agents from their own threads.
pub trait Agents: Sync {
    fn run(&self, who: &Assignment, req: &Request) -> Result<Reply>;
    /// The model `who` will run with, as the agent's settings resolve it (for reports).
    fn model(&self, who: &Assignment) -> Option<String> {
        who.model.clone()
    }

    /// The context `who`'s CLI holds before baton's prompt ([`baton_agent::AgentKind::context_floor`]).
    fn context_floor(&self, _who: &Assignment) -> u64 {
        0
    }

    /// The command line `run` would start (for `--dry-run`), if it can be told.
    fn command_line(&self, _who: &Assignment, _req: &Request) -> Option<String> {
        None
    }

    /// How long a failing model API is given ([`baton_agent::AgentSpec::api_patience`]):
    /// baton's own backoff after server errors ends within it too.
    fn api_patience(&self) -> std::time::Duration {
        baton_agent::DEFAULT_API_PATIENCE
    }
}
