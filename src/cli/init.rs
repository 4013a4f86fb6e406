//! `baton init AGENT`: set up an agent CLI in this project (MCP server, hooks, slash commands,
//! an instructions section), merged into existing files; `--uninstall` takes it out again.

use std::process::ExitCode;

use clap::Args as ClapArgs;
use serde::Serialize;

use super::Ctx;
use crate::error::Result;
use crate::init;
use baton_agent::wiring::{HookAgent, Scope};
use baton_core::error::{Fault, Kind};

#[derive(Debug, ClapArgs)]
#[command(after_help = "\
Files written (merged into existing ones: no key is lost, nothing is overwritten):
  claude  .mcp.json (mcpServers.baton), .claude/settings.json (PreToolUse, PostToolUse,
          PostToolUseFailure, SessionStart, PreCompact hooks; permissions.allow mcp__baton;
          enabledMcpjsonServers baton),
          .claude/commands/baton-{status,begin,complete,epic}.md, CLAUDE.md
  codex   .codex/config.toml ([mcp_servers.baton], its tools approved), .codex/hooks.json
          (PreToolUse, PostToolUse, SessionStart, PreCompact), AGENTS.md
  gemini  .gemini/settings.json (mcpServers.baton, trusted; AfterTool, SessionStart,
          PreCompress hooks), .gemini/commands/baton-*.toml, GEMINI.md
The instructions file gets a section between <!-- baton:begin --> and <!-- baton:end -->.
What was added is recorded in .baton/init-AGENT.json: --uninstall restores a file nobody
changed since byte for byte, and takes only baton's entries out of one that was changed.
Running init again changes nothing. JSON files baton changes are rewritten with sorted keys.

With --global the same parts go into the user's settings under HOME (claude:
~/.claude/settings.json, ~/.claude.json mcpServers, ~/.claude/commands/, ~/.claude/CLAUDE.md;
codex: ~/.codex/config.toml, ~/.codex/hooks.json, ~/.codex/AGENTS.md; gemini:
~/.gemini/settings.json, ~/.gemini/commands/, ~/.gemini/GEMINI.md), recorded in
~/.config/baton/init-AGENT.json. A CLI whose folder was moved is followed: $CLAUDE_CONFIG_DIR
(settings, .claude.json, commands), $CODEX_HOME, $GEMINI_CLI_HOME. The user-level hooks step
aside in a project that has its own `baton init`: one output is masked once.

Examples:
  baton init claude --dry-run     the diff, nothing written
  baton init claude
  baton init claude --global      every project of this user
  baton init codex --uninstall")]
pub struct Args {
    /// The agent CLI to set up
    #[arg(value_enum)]
    pub agent: HookAgent,
    /// Show the changes as a diff; write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Remove exactly what `baton init` added
    #[arg(long)]
    pub uninstall: bool,
    /// Set up the CLI for every project: the user's own settings under HOME
    /// (~/.claude/settings.json and ~/.claude.json, ~/.codex/, ~/.gemini/), recorded in
    /// ~/.config/baton/ ($CLAUDE_CONFIG_DIR, $CODEX_HOME, $GEMINI_CLI_HOME followed); a
    /// project's own `baton init` takes precedence where there is one
    #[arg(long)]
    pub global: bool,
}

#[derive(Serialize)]
struct Report {
    agent: &'static str,
    action: &'static str,
    dry_run: bool,
    files: Vec<FileReport>,
    /// What the user must still do before the agent CLI uses what was written.
    next_steps: Vec<&'static str>,
}

/// What each CLI needs from its user before it reads a project's settings (checked with
/// claude-code 2.1.197, codex 0.171.0, gemini-cli 0.61.0).
fn next_steps(agent: HookAgent, scope: Scope) -> Vec<&'static str> {
    if scope == Scope::User {
        return match agent {
            HookAgent::Codex => vec![
                "in codex, run `/hooks` and trust baton's hooks: codex runs no hook it has not \
                 been told to trust",
                "restart the codex sessions already running",
            ],
            HookAgent::Claude => vec!["restart the claude sessions already running"],
            HookAgent::Gemini => vec!["restart the gemini sessions already running"],
        };
    }
    match agent {
        HookAgent::Claude => vec![
            "trust this folder in claude (start `claude` here once and accept the trust dialog): \
             until then claude ignores the project's permission for baton's MCP tools",
            "restart the claude sessions already running here",
        ],
        HookAgent::Codex => vec![
            "trust this project in codex (start `codex` here once and trust it): codex reads \
             .codex/ only in a trusted project",
            "in codex, run `/hooks` and trust baton's hooks: codex runs no hook it has not been \
             told to trust",
            "restart the codex sessions already running here",
        ],
        HookAgent::Gemini => vec![
            "trust this folder in gemini (`/permissions`, or security.folderTrust in your \
             settings): gemini ignores .gemini/settings.json in a folder it does not trust",
            "restart the gemini sessions already running here",
        ],
    }
}

#[derive(Serialize)]
struct FileReport {
    path: String,
    change: &'static str,
    diff: String,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let (dir, local, scope) = if a.global {
        let home = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .filter(|h| h.is_absolute())
            .ok_or_else(|| {
                crate::Error::invalid("--global needs HOME: it is not set")
                    .hint("set HOME to your home folder")
            })?;
        let record = baton_engine::config::user_file()
            .and_then(|f| f.parent().map(std::path::Path::to_path_buf))
            .unwrap_or_else(|| home.join(".config/baton"));
        (home, record, Scope::User)
    } else {
        (
            ctx.project.dir.clone(),
            ctx.project.local_dir(),
            Scope::Project,
        )
    };
    if !a.dry_run {
        init::sweep(&dir, &local, a.agent, scope);
    }
    let plan = || {
        if a.uninstall {
            init::plan_uninstall(&dir, &local, a.agent, scope)
        } else {
            init::plan(&dir, a.agent, scope)
        }
    };
    let mut changes = plan()?;
    // A file another program wrote between the plan and the write: planned again from what
    // it holds now, a few times (a program rewriting it constantly wins: init says so).
    if !a.dry_run {
        for attempt in 1.. {
            match init::write(&dir, &local, a.agent, &changes, !a.uninstall, scope) {
                Ok(()) => break,
                Err(e) if e.kind() == Kind::State && attempt < 3 => changes = plan()?,
                Err(e) => {
                    if e.kind() != Kind::State {
                        eprintln!(
                            "baton init: nothing was changed (what was written before the error \
                             was put back): make the folder writable, then run init again"
                        );
                    }
                    return Err(e);
                }
            }
        }
    }
    let files: Vec<FileReport> = changes
        .iter()
        .map(|c| FileReport {
            path: c.path.display().to_string(),
            change: match (&c.before, &c.after) {
                (None, _) => "created",
                (_, None) => "removed",
                _ => "changed",
            },
            diff: init::diff(c),
        })
        .collect();
    let report = Report {
        agent: a.agent.name(),
        action: if a.uninstall { "uninstall" } else { "install" },
        dry_run: a.dry_run,
        next_steps: if a.uninstall || files.is_empty() {
            Vec::new()
        } else {
            next_steps(a.agent, scope)
        },
        files,
    };
    ctx.out.emit(&report, |w| {
        if report.files.is_empty() {
            let what = if a.uninstall {
                "nothing of baton's to remove"
            } else {
                "already set up: nothing to change"
            };
            writeln!(w, "{}: {what}", report.agent)?;
            return Ok(());
        }
        for f in &report.files {
            if a.dry_run {
                w.write_all(f.diff.as_bytes())?;
            } else {
                let shown = super::shown(&dir, std::path::Path::new(&f.path));
                writeln!(w, "{} {shown}", f.change)?;
            }
        }
        if a.dry_run {
            writeln!(w, "(dry run: nothing written)")?;
        } else if !a.uninstall {
            let global = if a.global { " --global" } else { "" };
            let place = if a.global { " in every project" } else { "" };
            writeln!(
                w,
                "baton is set up for {}{place}; `baton init {}{global} --uninstall` removes it",
                report.agent, report.agent
            )?;
            writeln!(w, "Before {} uses it:", report.agent)?;
            for step in &report.next_steps {
                writeln!(w, "- {step}")?;
            }
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}
