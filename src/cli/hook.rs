//! `baton hook AGENT EVENT`: the command an agent CLI runs for a hook event (written into its
//! settings by `baton init`). Fails open: whatever goes wrong, exit 0 and print nothing, so
//! the agent keeps the original output; the reason goes to stderr only.

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::Args as ClapArgs;

use crate::error::{Error, Result};
use crate::hooks;
use baton_agent::wiring::{Event, HookAgent, Scope};
use baton_engine::config::Project;

#[derive(Debug, ClapArgs)]
#[command(after_help = "\
Events (the agent's own names):
  pre-tool-use    Claude and Codex PreToolUse (Bash): a command of `[mask] route` (test
                  runners, builds, linters, diffs, whole-file reads) is rewritten to run
                  through `baton mask`, so its whole output is summarised before the CLI cuts
                  it; the exit code is the command's. Claude's only where it would run the
                  command without asking (its permission rules, read from its settings)
  post-tool-use   Claude PostToolUse (Bash, Read, MCP tools), Codex PostToolUse (Bash),
                  Gemini AfterTool (run_shell_command, read_file): an output over the threshold
                  is saved to .baton/scratch/ and replaced by its summary, first failure and
                  path; a smaller one passes untouched (no output)
  post-tool-use-failure
                  Claude PostToolUseFailure (Bash): a command that failed and was not routed
                  reaches this hook cut to its first ~10,000 characters; baton adds the
                  summary of that part and says how to see the whole run
  session-start   SessionStart: the current task's state as additionalContext
  pre-compact     Claude/Codex PreCompact, Gemini PreCompress: a COMPACT line in the task's
                  history

The event's JSON is read on stdin. Any error (input that is not the event's JSON, a broken
baton.toml, a full disk) exits 0 with no output: the agent keeps what it had.

Threshold: --threshold, else `[mask] threshold` in baton.toml, else 2000 tokens (o200k_base).
Scope: `baton init AGENT --global` writes `--scope user`, the Claude Code plugin `--scope
plugin`; such a hook does nothing where a more specific one (the project's, then the user's)
is wired for the same agent.

Examples:
  baton hook claude post-tool-use < event.json
  baton hook codex session-start < event.json
  baton init claude        writes these commands into .claude/settings.json")]
pub struct Args {
    /// The agent CLI whose event this is
    #[arg(value_enum)]
    pub agent: HookAgent,
    /// The event
    #[arg(value_enum)]
    pub event: Event,
    /// Mask outputs over this many tokens
    #[arg(long, value_name = "TOKENS")]
    pub threshold: Option<usize>,
    /// Where this hook was wired: a user-level hook steps aside in a project wired itself, the
    /// plugin's for either (one output is never masked twice)
    #[arg(long, value_enum, default_value = "project")]
    pub scope: Scope,
    #[command(flatten)]
    pub store: super::StoreRoot,
}

/// The hook's arguments as `baton init` writes them (`hook AGENT EVENT [--scope S]
/// [--threshold N] [--root DIR]`), read without clap: a hook runs on every tool call of every
/// agent, and building clap's tree of every command was a third of a pass-through hook's own
/// work. Anything else (`--help`, a value clap would refuse, a flag given twice, `--x=y`) is
/// `None`, and goes through clap, which parses these the same way (tested).
pub fn quick_args(args: &[std::ffi::OsString]) -> Option<Args> {
    use clap::ValueEnum;
    // By the names the enums give themselves (clap's own look-up would bring its code in).
    fn named<T: ValueEnum + Copy>(
        text: &std::ffi::OsStr,
        name: fn(T) -> &'static str,
    ) -> Option<T> {
        let text = text.to_str()?;
        T::value_variants()
            .iter()
            .copied()
            .find(|v| name(*v) == text)
    }
    let [_, hook, agent, event, rest @ ..] = args else {
        return None;
    };
    if hook != "hook" {
        return None;
    }
    let mut a = Args {
        agent: named(agent, HookAgent::name)?,
        event: named(event, Event::arg)?,
        threshold: None,
        scope: Scope::default(),
        store: super::StoreRoot { root: None },
    };
    let (mut scope, mut threshold, mut root) = (false, false, false);
    for pair in rest.chunks(2) {
        let [flag, value] = pair else { return None };
        let text = value.to_str()?;
        if text.is_empty() || text.starts_with('-') {
            return None;
        }
        let seen = match flag.to_str()? {
            "--scope" => {
                a.scope = named(value, Scope::name)?;
                &mut scope
            }
            "--threshold" => {
                a.threshold = Some(text.parse().ok()?);
                &mut threshold
            }
            "--root" => {
                a.store.root = Some(value.into());
                &mut root
            }
            _ => return None,
        };
        if std::mem::replace(seen, true) {
            return None;
        }
    }
    Some(a)
}

/// Largest hook input read (an output past it is cut in the read, and masked).
const MAX_INPUT: u64 = 64 * 1024 * 1024;

pub fn run(a: &Args, root: Option<&Path>) -> ExitCode {
    let answer = (|| -> Result<Option<serde_json::Value>> {
        let mut input = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_INPUT)
            .read_to_end(&mut input)
            .map_err(|e| Error::io("<stdin>", e))?;
        // Hooks run in the session's directory; `cwd` of the event says where, when it differs.
        let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
        let project = Project::discover(&cwd)?;
        let user = baton_agent::wiring::process_env;
        if a.scope.shadowed(a.agent, &project.dir, &user) {
            return Ok(None);
        }
        let local = project.local_dir();
        let env = hooks::Env {
            store: baton_store::Store::new(project.store_root(root)),
            project_dir: &project.dir,
            local_dir: &local,
            threshold: a
                .threshold
                .or(project.config.mask.threshold)
                .unwrap_or(baton_context::mask::DEFAULT_THRESHOLD),
            redact_scratch: project.config.mask.redact_scratch,
            route: project.config.mask.route(),
            read_threshold: project.config.mask.read_threshold(),
        };
        let answer = hooks::handle(a.agent, a.event, &input, &env);
        // The process ends with the hook: tearing down its configuration was a tenth of a
        // pass-through's page faults (as `cli::main` leaves clap's tree).
        std::mem::forget(env);
        std::mem::forget(project);
        answer
    })();
    match answer {
        Ok(Some(v)) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{v}");
        }
        Ok(None) => {}
        Err(e) => eprintln!("baton hook {} {}: {e}", a.agent.name(), a.event.arg()),
    }
    ExitCode::SUCCESS
}
