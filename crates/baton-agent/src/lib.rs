//! baton-agent: the agent CLIs baton runs. Run one LLM CLI invocation (a fresh **context**)
//! and report what happened; [`wiring`] says how baton is wired into each CLI (hooks, MCP
//! server, run arguments); [`sim`] is the deterministic simulated agent. Its errors are
//! [`Error`]: the shared faults, and [`Error::Unavailable`], an agent CLI that cannot work
//! here (exit 7). Depends on
//! baton-core only: it must never depend on the store, the context toolkit or the engines.
//!
//! ```no_run
//! use baton_agent::{AgentKind, AgentRequest, AgentSpec, Agent};
//! # fn main() -> baton_agent::Result<()> {
//! let spec = AgentSpec::new(AgentKind::Claude);
//! let req = AgentRequest::new("Implement story 1.2 …", ".", ".baton/runs/r1/outputs", "dev-1.2");
//! let out = spec.run(&req)?;           // Err only if the process could not be started
//! if out.is_error() { /* out.failure, out.error, out.transient */ }
//! # Ok(()) }
//! ```
//!
//! # API
//! - [`AgentSpec`] is configuration (kind, binary override, model, flags, timeout, grace);
//!   [`AgentRequest`] is one call (prompt, cwd, log directory and name, env, session to resume).
//! - [`Agent`] is the extension point: `AgentSpec` implements it for the real CLIs; the engine
//!   implements it for the `sim` agent ([`AgentKind::Sim`] is refused by [`run`]).
//! - [`run`] returns `Err` only when nothing ran (missing binary or cwd, bad configuration, log
//!   files not creatable). Everything that happens once the process started — non-zero exit,
//!   timeout, an API error reported inside the output — is an [`AgentOutcome`] with
//!   [`AgentOutcome::failure`] set. [`AgentOutcome::transient`] marks rate limits and
//!   overloaded/5xx answers, so the engine can back off and retry them separately from task
//!   failures.
//! - **Fatal failures.** [`AgentOutcome::is_fatal`] ([`FailureKind::is_fatal`]) tells "the CLI
//!   itself cannot work here" — auth, untrusted folder, bad config or model, no network, an
//!   argument the CLI rejects, a CLI that cannot start — from "the agent ran and the work
//!   failed" (timeout, crash, turn limit, API error, rate limit). A fatal failure repeats on
//!   every call until the user acts, so stop the run and show
//!   [`AgentOutcome::next_step`] (e.g. "log in: run `claude` once interactively"). A CLI not
//!   installed is `Err(Error::Unavailable)` from [`run`] (exit 7); [`preflight`] finds it first.
//! - [`Access`] (default `Edit`) picks the default permission flags; `permission_mode`,
//!   `sandbox`, `allowed_tools` override them, `skip_permissions` (never on by default) replaces
//!   them. claude's [`AgentOutcome::warnings`] list what its permission mode refused.
//! - [`invocation`] shows the exact argv without running anything (dry runs, logs, tests).
//!
//! # Processes
//! Each call is a fresh process, leader of its own process group (`CommandExt::process_group(0)`),
//! never started through a shell. The prompt goes on stdin (or argv, per [`PromptVia`]);
//! `CLAUDECODE` is removed from the child's environment (a `claude` started from inside Claude
//! Code otherwise refuses to run or misbehaves). stdout is copied to `<log_dir>/<name>.log` and
//! stderr to `<log_dir>/<name>.stderr.log` as it arrives, and parsed line by line; only bounded
//! state is kept (the last 32 KB of text, the parsed result, usage), so an agent printing
//! gigabytes costs no memory.
//!
//! On timeout (or when [`AgentRequest::cancel`] is set) the whole group gets SIGTERM, then
//! SIGKILL after the grace period. When the leader
//! exits on its own, any process it left in its group (a dev server started with `&`) is
//! terminated the same way: an invocation never leaves orphans behind.
//!
//! This uses std::process plus `libc::kill(-pgid, …)` rather than the `process-wrap` crate: the
//! TERM → grace → KILL sequence, the clean-up of stragglers after a normal exit and the
//! "is anyone left in the group" check are all custom anyway, process-wrap would add `nix` to the
//! build for two system calls, and `libc` was already in the dependency tree.
//!
//! # Formats (sources and checked versions: docs/ARCHITECTURE.md, `agent/`)
//! Checked against claude-code 2.1.197, codex 0.169.0, gemini 0.61.0 (2026-11).
//! - claude: `claude -p --output-format stream-json --verbose --permission-mode acceptEdits
//!   --allowedTools <CLAUDE_ALLOWED_TOOLS>` (JSON lines: `system/init`, `assistant`, `user`, final
//!   `result` with `permission_denials`).
//! - codex: `codex exec --json --sandbox workspace-write -` (JSON lines: `thread.started`,
//!   `turn.completed`, `turn.failed`, `item.completed`, `error`). Offline it prints
//!   "Reconnecting... waiting for network" forever: after the third such message, or reconnect
//!   messages only for 20 s, baton stops it ([`ExitKind::Stopped`], [`FailureKind::Network`]).
//!   A Claude or Gemini model name is a [`FailureKind::Model`] at once.
//! - gemini: `gemini --output-format json --skip-trust --approval-mode auto_edit` with the
//!   prompt on stdin (one JSON document on stdout; an error document on stderr; exit codes
//!   41/42/44/52/53/54/55/130). Offline it retries, ever slower, saying so on stderr ("Attempt
//!   N failed … fetch failed"): at the third (~20 s) baton stops it, as codex.
//! - command: any program; prompt on stdin, plain text out.

#![cfg_attr(test, allow(clippy::print_stdout, clippy::print_stderr))]

mod claude;
mod codex;
pub mod error;
mod failure;
mod gemini;
pub mod interactive;
mod outage;
pub mod preflight;
mod process;
pub mod settings;
mod silence;
pub mod sim;
pub mod transcript;
pub mod trust;
mod usage;
pub mod wiring;

pub use failure::{FailureKind, is_transient};
use failure::{classify_api_error, is_bad_argument, is_network, stderr_reason};
pub use process::{Orphan, orphans, stop_orphans};
pub use usage::Usage;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use error::{Error, Result};

/// Bytes of final text kept for signal parsing (epic-execute read the last 32 KB too).
pub const TEXT_TAIL_BYTES: usize = 32 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    #[default]
    Claude,
    Codex,
    Gemini,
    /// Any program: argv from `program` + `args`, prompt on stdin, plain text out.
    Command,
    /// The deterministic simulated agent; implemented by the engine, refused by [`run`].
    Sim,
}

impl AgentKind {
    pub fn name(self) -> &'static str {
        match self {
            AgentKind::Claude => "claude",
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini",
            AgentKind::Command => "command",
            AgentKind::Sim => "sim",
        }
    }

    /// The context the CLI holds before baton's prompt (its own system prompt and tool
    /// schemas, baton's MCP tools included), in o200k tokens, as measured through the model
    /// double for the versions checked (tests/it/util/real_agent.rs keeps these true). A
    /// phase's context budget is its prompt budget plus this.
    pub fn context_floor(self) -> u64 {
        match self {
            AgentKind::Claude => 28_000,
            AgentKind::Codex => 11_000,
            AgentKind::Gemini => 12_000,
            AgentKind::Command | AgentKind::Sim => 0,
        }
    }

    pub fn parse(name: &str) -> Option<AgentKind> {
        [
            AgentKind::Claude,
            AgentKind::Codex,
            AgentKind::Gemini,
            AgentKind::Command,
            AgentKind::Sim,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

/// How the prompt reaches the agent.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PromptVia {
    /// On stdin, then stdin is closed. The default: no argv size limit (Linux caps one argument
    /// at 128 KB) and nothing in `ps`.
    #[default]
    Stdin,
    /// As the last argument (`-- PROMPT` for claude/codex, `--prompt=PROMPT` for gemini, plain
    /// last argument for a command). Never through a shell.
    Argv,
}

/// What an agent may do in the working directory: the default permission flags.
///
/// | kind | `Edit` (default) | `ReadOnly` |
/// |---|---|---|
/// | claude | `--permission-mode acceptEdits --allowedTools <CLAUDE_ALLOWED_TOOLS>` | nothing (`-p` denies Edit, Write, Bash) |
/// | codex | `--sandbox workspace-write` (`.git` stays read-only) | nothing (codex's default `read-only`) |
/// | gemini | `--approval-mode auto_edit` | nothing (`default`) |
///
/// `permission_mode`, `sandbox`, `allowed_tools` and `skip_permissions` override these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// A phase that edits files (dev, fix).
    #[default]
    Edit,
    /// A phase that only reads (review, analysis).
    ReadOnly,
}

/// claude's default `--allowedTools` for [`Access::Edit`]: the git commands a phase uses to see
/// its changes, and baton's own tools (the prompts read code through `baton mask` / `outline` /
/// `extract`). Build and test commands are project-specific: add them in baton.toml
/// (`[agents.claude] allowed_tools = ["Bash(cargo test:*)"]`). Staging and committing are
/// baton's job: no agent writes to `.git`.
pub const CLAUDE_ALLOWED_TOOLS: &[&str] = &[
    "Bash(git status:*)",
    "Bash(git diff:*)",
    "Bash(git log:*)",
    "Bash(git show:*)",
    "Bash(baton:*)",
];

/// gemini's default `--allowed-tools` for [`Access::Edit`]: the same commands as
/// [`CLAUDE_ALLOWED_TOOLS`], in gemini's spelling. Under `--approval-mode auto_edit` gemini 0.61
/// offers its model no shell tool at all unless some command of it is allowed: the dev could
/// not run the tests, nor the reviewer `git diff --staged`.
pub const GEMINI_ALLOWED_TOOLS: &[&str] = &[
    "run_shell_command(git status)",
    "run_shell_command(git diff)",
    "run_shell_command(git log)",
    "run_shell_command(git show)",
    "run_shell_command(baton)",
];

/// The default allowed tools of `kind` (claude, gemini) for a phase that edits: the list above,
/// and baton called by the path the prompts give it ([`crate::wiring::baton_command`]).
pub fn default_allowed_tools(kind: AgentKind) -> Vec<String> {
    let baton = crate::wiring::baton_command();
    let (list, by_path) = match kind {
        AgentKind::Gemini => (GEMINI_ALLOWED_TOOLS, format!("run_shell_command({baton})")),
        _ => (CLAUDE_ALLOWED_TOOLS, format!("Bash({baton}:*)")),
    };
    let mut tools: Vec<String> = list.iter().map(|t| t.to_string()).collect();
    if baton != "baton" {
        tools.push(by_path);
    }
    tools
}

/// The environment each kind gets before the configured one (which may override it).
fn kind_env(kind: AgentKind) -> Vec<(String, String)> {
    match kind {
        // gemini reads the project's .gemini/settings.json (baton's hooks and MCP server from
        // `baton init gemini`) only in a trusted folder, and decides that before it parses
        // `--skip-trust`: the variable is what makes the project's settings count.
        AgentKind::Gemini => vec![("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into())],
        _ => Vec::new(),
    }
}

/// Configuration of one agent (what `baton.toml` will describe).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSpec {
    pub kind: AgentKind,
    /// Binary to run instead of the kind's default name (`claude`, `codex`, `gemini`);
    /// required for `command`. A bare name is looked up on the child's PATH.
    pub program: Option<PathBuf>,
    pub model: Option<String>,
    /// Extra arguments, passed verbatim after baton's own flags (for `command`: all arguments).
    pub args: Vec<String>,
    /// Wall-clock limit of one invocation (epic-execute's CLAUDE_TIMEOUT default: 600 s).
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub grace: Duration,
    pub prompt_via: PromptVia,
    /// claude `--max-turns`.
    pub max_turns: Option<u32>,
    /// claude `--append-system-prompt`.
    pub append_system_prompt: Option<String>,
    /// What the agent may do; decides the default permission flags (see [`Access`]).
    pub access: Access,
    /// claude `--permission-mode`, gemini `--approval-mode`: overrides the [`Access`] default.
    pub permission_mode: Option<String>,
    /// claude `--allowedTools`, gemini `--allowed-tools` (one comma-separated argument).
    /// `None`: the default, [`CLAUDE_ALLOWED_TOOLS`] / [`GEMINI_ALLOWED_TOOLS`] when
    /// [`Access::Edit`], none when read-only; `Some(empty)`: none. claude's runs always add
    /// baton's own MCP tools (unless `skip_permissions`). codex refuses a non-empty list.
    /// Other kinds refuse a non-empty list.
    pub allowed_tools: Option<Vec<String>>,
    /// claude `--disallowedTools` (one comma-separated argument). Other kinds refuse it.
    pub disallowed_tools: Vec<String>,
    /// claude `--dangerously-skip-permissions`, codex
    /// `--dangerously-bypass-approvals-and-sandbox`, gemini `--yolo`. Never on by default;
    /// replaces the [`Access`] defaults.
    pub skip_permissions: bool,
    /// codex `--sandbox` (`read-only`, `workspace-write`, `danger-full-access`): overrides the
    /// [`Access`] default. (codex 0.169 removed `--full-auto`; baton never passes it.)
    pub sandbox: Option<String>,
    /// Environment added to the child's (inherited) environment.
    pub env: Vec<(String, String)>,
    /// How long the CLI may wait on its model API with nothing heard (claude, codex), or keep
    /// retrying server errors (claude, gemini), before baton stops it: the call then fails
    /// with [`FailureKind::ApiDown`] and the run pauses.
    pub api_patience: Duration,
}

/// [`AgentSpec::api_patience`] unless configured (`[run] api_patience_secs`).
pub const DEFAULT_API_PATIENCE: Duration = Duration::from_secs(180);

impl AgentSpec {
    pub fn new(kind: AgentKind) -> AgentSpec {
        AgentSpec {
            kind,
            program: None,
            model: None,
            args: Vec::new(),
            timeout: Duration::from_secs(600),
            grace: Duration::from_secs(10),
            prompt_via: PromptVia::Stdin,
            max_turns: None,
            append_system_prompt: None,
            access: Access::Edit,
            permission_mode: None,
            allowed_tools: None,
            disallowed_tools: Vec::new(),
            skip_permissions: false,
            sandbox: None,
            env: Vec::new(),
            api_patience: DEFAULT_API_PATIENCE,
        }
    }

    /// A `command` agent running `program args…`.
    pub fn command(program: impl Into<PathBuf>, args: &[&str]) -> AgentSpec {
        AgentSpec {
            program: Some(program.into()),
            args: args.iter().map(|a| a.to_string()).collect(),
            ..AgentSpec::new(AgentKind::Command)
        }
    }
}

/// One invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRequest {
    pub prompt: String,
    /// Working directory of the agent (must exist).
    pub cwd: PathBuf,
    /// Directory of the log files (created if missing).
    pub log_dir: PathBuf,
    /// Log file stem: `<name>.log`, `<name>.stderr.log`. One path component.
    pub name: String,
    /// Environment for this call; wins over [`AgentSpec::env`].
    pub env: Vec<(String, String)>,
    /// Session to resume (claude `--resume`, codex `exec resume`, gemini `--resume`).
    pub resume: Option<String>,
    /// Set from another thread (a Ctrl-C handler) to stop the agent: its group is terminated
    /// like on timeout. Needed because the agent's own process group does not receive the
    /// terminal's Ctrl-C.
    pub cancel: Option<CancelToken>,
}

/// A flag shared with a running invocation; [`CancelToken::cancel`] stops it. A child token
/// (a worker's claim) is also cancelled by its parent's (the process's Ctrl-C), and by theirs.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>, Option<Box<CancelToken>>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }
    /// A token cancelled by its own `cancel` and by this one's (or an ancestor's).
    pub fn child(&self) -> CancelToken {
        CancelToken(Arc::default(), Some(Box::new(self.clone())))
    }
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst) || self.1.as_ref().is_some_and(|p| p.is_cancelled())
    }
}

impl PartialEq for CancelToken {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl AgentRequest {
    pub fn new(
        prompt: impl Into<String>,
        cwd: impl Into<PathBuf>,
        log_dir: impl Into<PathBuf>,
        name: impl Into<String>,
    ) -> AgentRequest {
        AgentRequest {
            prompt: prompt.into(),
            cwd: cwd.into(),
            log_dir: log_dir.into(),
            name: name.into(),
            env: Vec::new(),
            resume: None,
            cancel: None,
        }
    }
}

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "exit", content = "value", rename_all = "snake_case")]
pub enum ExitKind {
    Exited(i32),
    /// Killed by a signal baton did not send.
    Signaled(i32),
    /// Killed by baton after [`AgentSpec::timeout`].
    TimedOut,
    /// Killed by baton because [`AgentRequest::cancel`] was set.
    Cancelled,
    /// Stopped by baton because the output showed the CLI cannot go on (codex only reporting
    /// reconnects: no network); [`AgentOutcome::failure`] says why.
    Stopped,
    /// Stopped by baton after the CLI waited this many seconds on its model API with nothing
    /// heard ([`AgentSpec::api_patience`]).
    Unanswered(u64),
}

/// Everything the engine needs from one invocation. Serializable, so a completed call can be
/// recorded and never re-run on resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentOutcome {
    pub kind: AgentKind,
    pub exit: ExitKind,
    /// The final text (claude `result`, codex last `agent_message`, gemini `response`, a
    /// command's stdout), at most its last [`TEXT_TAIL_BYTES`]; what signals are parsed from.
    pub text_tail: String,
    pub session_id: Option<String>,
    /// Summed over the whole invocation.
    pub usage: Usage,
    /// Prompt size of the latest model call (claude: latest `assistant` message usage): the
    /// current context size. `None` where the CLI does not report per-call usage.
    pub context_tokens: Option<u64>,
    /// The largest single model request of the session, in prompt tokens: the most context
    /// the agent held ([`transcript::peak_tokens`]). `None` where it cannot be read.
    #[serde(default)]
    pub context_peak_tokens: Option<u64>,
    pub cost_usd: Option<f64>,
    pub num_turns: Option<u32>,
    pub model: Option<String>,
    pub failure: Option<FailureKind>,
    /// Human-readable reason of the failure (the agent's message, or the end of stderr).
    pub error: Option<String>,
    /// A rate limit or overloaded/5xx answer: back off and retry, do not count a task failure.
    pub transient: bool,
    pub duration_ms: u64,
    pub log_path: PathBuf,
    pub stderr_path: PathBuf,
    /// Bytes the agent wrote to stdout (all of them are in `log_path`).
    pub stdout_bytes: u64,
    /// Things that did not fail the run but deserve a look (log write errors, oversized lines,
    /// leftover processes that had to be killed).
    pub warnings: Vec<String>,
}

impl AgentOutcome {
    pub fn is_error(&self) -> bool {
        self.failure.is_some()
    }
    pub fn timed_out(&self) -> bool {
        self.exit == ExitKind::TimedOut
    }
    /// The CLI itself cannot work here ([`FailureKind::is_fatal`]): stop the run, tell the
    /// user [`AgentOutcome::next_step`].
    pub fn is_fatal(&self) -> bool {
        self.failure.is_some_and(FailureKind::is_fatal)
    }
    /// A spent usage limit: when it resets (Unix seconds), if its message says so readably.
    pub fn quota_reset(&self) -> Option<Option<i64>> {
        (self.failure == Some(FailureKind::QuotaSpent))
            .then(|| failure::quota_reset(self.error.as_deref()?, &jiff::Zoned::now()))
            .map(|z| z.map(|z| z.timestamp().as_second()))
    }
    /// What the user should do about a fatal failure ([`FailureKind::next_step`]); for a spent
    /// limit, with the reset time read from the CLI's message, in the user's zone too.
    pub fn next_step(&self) -> Option<String> {
        let step = self.failure.and_then(|f| f.next_step(self.kind))?;
        let quota = (self.failure == Some(FailureKind::QuotaSpent)).then_some(());
        let when = quota.and_then(|()| failure::quota_step(self.kind, self.error.as_deref()?));
        Some(when.unwrap_or(step))
    }
}

/// One agent implementation: the real CLIs ([`AgentSpec`]) or the engine's simulated agent.
pub trait Agent: Send + Sync {
    fn run(&self, req: &AgentRequest) -> Result<AgentOutcome>;
}

impl Agent for AgentSpec {
    fn run(&self, req: &AgentRequest) -> Result<AgentOutcome> {
        run(self, req)
    }
}

/// The exact command line of an invocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// Whether the prompt is written to stdin (else it is in `args`).
    pub prompt_on_stdin: bool,
}

fn unsupported(spec: &AgentSpec, what: &str) -> Error {
    Error::invalid(format!(
        "`{what}` is not supported by the {} agent",
        spec.kind.name()
    ))
    .hint("remove it from this agent's configuration, or pass the CLI's own flag in `args`")
}

/// Build the command line for `spec` and `req` (nothing is run).
pub fn invocation(spec: &AgentSpec, req: &AgentRequest) -> Result<Invocation> {
    let default = match spec.kind {
        AgentKind::Claude => "claude",
        AgentKind::Codex => "codex",
        AgentKind::Gemini => "gemini",
        AgentKind::Command => {
            return match &spec.program {
                Some(p) => {
                    let mut args = spec.args.clone();
                    if spec.prompt_via == PromptVia::Argv {
                        args.push(req.prompt.clone());
                    }
                    Ok(Invocation {
                        program: p.clone(),
                        args,
                        prompt_on_stdin: spec.prompt_via == PromptVia::Stdin,
                    })
                }
                None => Err(Error::invalid("a `command` agent needs a program")
                    .hint("set `program` (and `args`) for this agent")),
            };
        }
        AgentKind::Sim => {
            return Err(Error::invalid(
                "the sim agent is run by the engine, not by agent::run",
            ));
        }
    };
    let args = match spec.kind {
        AgentKind::Claude => claude::args(spec, req)?,
        AgentKind::Codex => codex::args(spec, req)?,
        _ => gemini::args(spec, req)?,
    };
    Ok(Invocation {
        program: spec.program.clone().unwrap_or_else(|| default.into()),
        args,
        prompt_on_stdin: spec.prompt_via == PromptVia::Stdin,
    })
}

/// What a format parser extracted from stdout.
#[derive(Debug, Default)]
struct Parsed {
    text: Option<String>,
    session_id: Option<String>,
    usage: Usage,
    context_tokens: Option<u64>,
    context_peak_tokens: Option<u64>,
    cost_usd: Option<f64>,
    num_turns: Option<u32>,
    model: Option<String>,
    failure: Option<(FailureKind, String)>,
    /// Added to the outcome's warnings (claude's permission denials, codex's unknown model).
    warnings: Vec<String>,
    /// The CLI's final result was seen (claude `result`, codex `turn.completed`, gemini JSON).
    saw_result: bool,
}

/// A stdout format: fed complete lines (lossily decoded), asked for its result at the end.
/// Implementations keep bounded state only.
trait OutputParser: Send {
    /// `false` for plain text: the runner then skips line splitting.
    fn wants_lines(&self) -> bool {
        true
    }
    fn line(&mut self, line: &str);
    /// Polled by the runner: `true` stops the process group now ([`ExitKind::Stopped`]); the
    /// reason is the failure `finish` returns.
    fn stop(&self) -> bool {
        false
    }
    /// Whether the CLI is waiting on its model API right now (a request sent, no tool of the
    /// model's running): while it is, and nothing is heard for [`AgentSpec::api_patience`],
    /// the runner stops it ([`ExitKind::Unanswered`]).
    fn waiting_on_model(&self) -> silence::Waiting {
        silence::Waiting::No
    }
    fn finish(&mut self) -> Parsed;
}

struct PlainText;
impl OutputParser for PlainText {
    fn wants_lines(&self) -> bool {
        false
    }
    fn line(&mut self, _: &str) {}
    fn finish(&mut self) -> Parsed {
        Parsed {
            saw_result: true,
            ..Parsed::default()
        }
    }
}

/// Keep the last `max` bytes of `s`, cut at a character boundary.
fn tail_str(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].to_string()
}

/// Run one invocation (see the module doc).
pub fn run(spec: &AgentSpec, req: &AgentRequest) -> Result<AgentOutcome> {
    let inv = invocation(spec, req)?;
    let (parser, stderr_watch) = parsers(spec);
    let mut env = kind_env(spec.kind);
    if spec.kind == AgentKind::Claude {
        env.push(claude::permissions_env(spec));
    }
    // Under a run (its logs in `<run>/logs`), baton's MCP server for gemini.
    if spec.kind == AgentKind::Gemini
        && req.log_dir.file_name().is_some_and(|n| n == "logs")
        && let Some(run_dir) = req.log_dir.parent()
    {
        env.extend(gemini::run_home(run_dir, &crate::wiring::baton_program()));
    }
    env.extend(spec.env.iter().cloned());
    env.extend(req.env.iter().cloned());
    let raw = process::run(process::Job {
        inv: &inv,
        prompt: &req.prompt,
        cwd: &req.cwd,
        log_dir: &req.log_dir,
        name: &req.name,
        env: &env,
        timeout: spec.timeout,
        grace: spec.grace,
        cancel: req.cancel.as_ref(),
        api_patience: spec.api_patience,
        parser,
        stderr_watch,
    })?;
    Ok(outcome(spec, raw))
}

/// A CLI's stdout format, and the watcher of its stderr (gemini's retries).
fn parsers(spec: &AgentSpec) -> (Box<dyn OutputParser>, Option<Box<dyn OutputParser>>) {
    let patience = spec.api_patience;
    let parser: Box<dyn OutputParser> = match spec.kind {
        AgentKind::Claude => Box::new(claude::Parser::new(patience)),
        AgentKind::Codex => Box::new(codex::Parser::default()),
        AgentKind::Gemini => Box::new(gemini::Parser::default()),
        _ => Box::new(PlainText),
    };
    let watch = (spec.kind == AgentKind::Gemini)
        .then(|| Box::new(gemini::Offline::new(patience)) as Box<dyn OutputParser>);
    (parser, watch)
}

/// The outcome of a call whose output was recorded (a log read again, a fuzzer's input): what
/// [`run`] would have concluded had the CLI printed `stdout` and `stderr` and ended by `exit`.
pub fn read_output(spec: &AgentSpec, stdout: &[u8], stderr: &[u8], exit: ExitKind) -> AgentOutcome {
    outcome(spec, process::replay(parsers(spec), stdout, stderr, exit))
}

fn outcome(spec: &AgentSpec, raw: process::Raw) -> AgentOutcome {
    let p = raw.parsed;
    let stderr_tail = String::from_utf8_lossy(&raw.stderr_tail).into_owned();
    let structured = spec.kind != AgentKind::Command;
    let (failure, error) = match raw.exit {
        ExitKind::TimedOut => (
            Some(FailureKind::TimedOut),
            Some(format!(
                "timed out after {} s; the process group was killed",
                spec.timeout.as_secs_f64()
            )),
        ),
        ExitKind::Cancelled => (
            Some(FailureKind::Cancelled),
            Some("cancelled; the process group was killed".to_string()),
        ),
        ExitKind::Signaled(sig) => (
            Some(FailureKind::Signaled),
            Some(match stderr_reason(&stderr_tail) {
                Some(r) => format!("killed by signal {sig}: {r}"),
                None => format!("killed by signal {sig}"),
            }),
        ),
        ExitKind::Unanswered(secs) => (
            Some(FailureKind::ApiDown),
            Some(format!(
                "{}; baton stopped the process group",
                outage::unanswered(Duration::from_secs(secs))
            )),
        ),
        ExitKind::Stopped => {
            let (kind, msg) = p.failure.clone().unwrap_or((
                FailureKind::ExitCode,
                "the output showed the CLI could not go on".to_string(),
            ));
            (
                Some(kind),
                Some(format!("{msg}; baton stopped the process group")),
            )
        }
        ExitKind::Exited(code) => match p.failure.clone().or_else(|| {
            // gemini -o json writes its error document to stderr.
            (spec.kind == AgentKind::Gemini)
                .then(|| gemini::error_doc(&stderr_tail))
                .flatten()
        }) {
            Some((kind, msg)) => (Some(kind), Some(msg)),
            None if code != 0 => {
                let kind = if !structured {
                    FailureKind::ExitCode
                } else if code == 127 {
                    FailureKind::NotInstalled
                } else if is_bad_argument(&stderr_tail) {
                    FailureKind::InvalidInput
                } else if spec.kind == AgentKind::Gemini {
                    gemini::exit_failure(code)
                } else {
                    FailureKind::ExitCode
                };
                let msg = match stderr_reason(&stderr_tail) {
                    Some(r) => format!("exited with code {code}: {r}"),
                    None => format!("exited with code {code}"),
                };
                (Some(kind), Some(msg))
            }
            None if structured && !p.saw_result => (
                Some(FailureKind::NoResult),
                Some(format!(
                    "{} exited 0 without a final result in its output",
                    spec.kind.name()
                )),
            ),
            None => (None, None),
        },
    };
    // A CLI may report a failure with an empty message (codex's `turn.failed`): say what is known.
    let error = error.map(|e| match e.trim() {
        "" => stderr_reason(&stderr_tail).unwrap_or_else(|| {
            format!("{} reported a failure without a message", spec.kind.name())
        }),
        _ => e,
    });
    let transient = failure.is_some_and(|f| {
        !f.is_fatal() && !matches!(f, FailureKind::TimedOut | FailureKind::Cancelled)
    }) && (error.as_deref().is_some_and(is_transient)
        || is_transient(&stderr_tail));
    let text_tail = match p.text {
        Some(t) => tail_str(&t, TEXT_TAIL_BYTES),
        None if !structured => {
            tail_str(&String::from_utf8_lossy(&raw.stdout_tail), TEXT_TAIL_BYTES)
        }
        None => String::new(),
    };
    // codex and gemini print only sums: their own transcript has each request.
    let since = std::time::SystemTime::now() - raw.duration - std::time::Duration::from_secs(2);
    let (latest, peak) = match (p.context_peak_tokens, p.session_id.as_deref()) {
        (None, Some(id)) => {
            transcript::session_context(spec.kind, &spec.env, id, since).unwrap_or_default()
        }
        _ => (None, None),
    };
    AgentOutcome {
        kind: spec.kind,
        exit: raw.exit,
        text_tail,
        session_id: p.session_id,
        usage: p.usage,
        context_tokens: p.context_tokens.or(latest),
        context_peak_tokens: p.context_peak_tokens.or(peak),
        cost_usd: p.cost_usd,
        num_turns: p.num_turns,
        model: p.model,
        failure,
        error,
        transient,
        duration_ms: raw.duration.as_millis() as u64,
        log_path: raw.log_path,
        stderr_path: raw.stderr_path,
        stdout_bytes: raw.stdout_bytes,
        warnings: raw.warnings.into_iter().chain(p.warnings).collect(),
    }
}

#[cfg(test)]
#[path = "lib_tests.rs"]
mod tests;
