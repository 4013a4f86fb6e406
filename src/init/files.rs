//! What `baton init` writes for each agent: which file, and what baton's part of it is.

use std::path::PathBuf;

use serde_json::Value;

use baton_agent::wiring::{self, HookAgent, Scope};

/// The command the project files name: baton on PATH (never a machine's own path).
const BATON: &str = "baton";

/// baton's part of one file.
pub enum Part {
    /// JSON settings: `(path of an object key, value)` set when absent, and
    /// `(path of an array, entry)` appended when not already there.
    Json {
        keys: Vec<(Vec<String>, Value)>,
        entries: Vec<(Vec<String>, Value)>,
    },
    /// A TOML table (Codex's `[mcp_servers.baton]`).
    TomlTable { table: Vec<String>, value: Value },
    /// A section between markers, appended to an instructions file.
    Section(String),
    /// A whole file of baton's.
    Whole(String),
}

pub struct Wanted {
    pub path: PathBuf,
    pub part: Part,
}

pub const BEGIN_MARK: &str =
    "<!-- baton:begin (written by `baton init`; `baton init --uninstall` removes it) -->";
pub const END_MARK: &str = "<!-- baton:end -->";

fn p(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

fn hook_entries(agent: HookAgent, scope: Scope) -> Vec<(Vec<String>, Value)> {
    wiring::hook_entries(BATON, agent, scope)
        .into_iter()
        .map(|(event, entry)| (p(&["hooks", event]), entry))
        .collect()
}

/// Claude's settings: the hooks, baton's MCP tools allowed (else every call is refused: "you
/// haven't granted it yet"), and the project's `.mcp.json` server `baton` enabled (else a
/// session asks first, and `claude -p` never loads it).
fn claude_entries(scope: Scope) -> Vec<(Vec<String>, Value)> {
    let mut entries = hook_entries(HookAgent::Claude, scope);
    entries.push((
        p(&["permissions", "allow"]),
        Value::String(wiring::CLAUDE_MCP_RULE.into()),
    ));
    // The user's servers (in ~/.claude.json) need no enabling; a project's `.mcp.json` does.
    if scope == Scope::Project {
        entries.push((p(&["enabledMcpjsonServers"]), Value::String("baton".into())));
    }
    entries
}

/// gemini offers a server's tools to a headless session only when they need no confirmation:
/// `trust: true` on baton's server (and on no other) is that grant.
fn gemini_mcp_key() -> (Vec<String>, Value) {
    let mut server = wiring::mcp_server(BATON);
    server["trust"] = Value::Bool(true);
    (p(&["mcpServers", "baton"]), server)
}

/// codex refuses an MCP call that "requires approval" where the approval policy is never
/// (`codex exec`): baton's tools, and only baton's, are approved.
fn codex_mcp_server() -> Value {
    let mut server = wiring::mcp_server(BATON);
    server["default_tools_approval_mode"] = Value::String("approve".into());
    server
}

fn mcp_key() -> (Vec<String>, Value) {
    (p(&["mcpServers", "baton"]), wiring::mcp_server(BATON))
}

/// The instructions section: what baton offers, in a few lines.
fn section(agent: HookAgent) -> String {
    let hooks = match agent {
        HookAgent::Claude => "Bash and MCP outputs over 2,000 tokens",
        HookAgent::Codex => "Bash outputs over 2,000 tokens",
        HookAgent::Gemini => "shell outputs over 2,000 tokens",
    };
    format!(
        "{BEGIN_MARK}\n## baton\n\n\
baton keeps this project's task state and context (MCP server `baton`; CLI `baton`):\n\
- Task state: `phase_begin` / `phase_complete` (or `baton phase begin|complete`), `gate`, \
`store`, `retrieve`, `status`. A fresh or compacted session starts from `status`.\n\
- Large output: {hooks} are replaced by a summary (counts, first failure) and the path of \
the full text in `.baton/scratch/`; read that file only for what the summary lacks. \
Run long commands through the `mask` tool or `baton mask -- CMD`.\n\
- Cheap reading: `extract` (one spec section), `outline` (a file's definitions), `budget`.\n\
{END_MARK}\n"
    )
}

/// Slash commands for the common flows: (name, description, prompt).
const COMMANDS: &[(&str, &str, &str)] = &[
    (
        "baton-status",
        "Show the baton task state and the next step",
        "Call the baton MCP tool `status` (or run `baton task summary`) and tell me the task's \
state: what is done, what is running, what it waits for, and the next command.",
    ),
    (
        "baton-begin",
        "Begin a phase with the context it needs",
        "Begin the phase `$ARGUMENTS` of the current baton task: call the baton MCP tool \
`phase_begin` with phase `$ARGUMENTS` and needs `memory` (or run `baton phase begin $ARGUMENTS \
--needs memory`), then work from the context it returns.",
    ),
    (
        "baton-complete",
        "Complete a phase and store its output",
        "Complete the phase `$ARGUMENTS` of the current baton task: call the baton MCP tool \
`phase_complete` with phase `$ARGUMENTS`, status `success` (or `failed`) and the phase's output \
as content (or pipe it to `baton phase complete $ARGUMENTS --status success`).",
    ),
    (
        "baton-epic",
        "Run an epic with baton's deterministic pipeline",
        "Run `baton run epic-execute $ARGUMENTS --dry-run` first and show me the plan; when I \
confirm, run `baton run epic-execute $ARGUMENTS` and report its outcome from `baton status`.",
    ),
];

/// The plugin's further commands (its `/baton:*` namespace needs no `baton-` prefix).
const PLUGIN_COMMANDS: &[(&str, &str, &str)] = &[
    (
        "gain",
        "Show the tokens baton's masking saved",
        "Run `baton gain $ARGUMENTS` and show me its table as it is: tokens saved, by command, \
kind, agent and day. Then say in one sentence where most of the savings came from.",
    ),
    (
        "report",
        "Open the HTML report of the latest baton run",
        "Run `baton report $ARGUMENTS` and give me the path of the report it wrote, with the \
run's outcome from `baton status` in three lines.",
    ),
];

/// The Claude Code plugin this repository publishes (`plugin/`, listed by
/// `.claude-plugin/marketplace.json`): the hooks and MCP server of `baton init claude`, naming
/// `baton` from PATH, and `/baton:*` commands. Paths are relative to the repository's top; a
/// test keeps the committed files equal to these.
pub fn plugin_files() -> Vec<(PathBuf, String)> {
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    let version = env!("CARGO_PKG_VERSION");
    let description = "Context management for multi-agent coding: large outputs masked to a \
summary and a file, large file reads outline first, durable task state, baton's MCP tools";
    let mut out = vec![
        (
            PathBuf::from(".claude-plugin/marketplace.json"),
            pretty(&serde_json::json!({
                "name": "baton",
                "owner": {"name": "baton developers"},
                "metadata": {"description": "baton for Claude Code", "version": version},
                "plugins": [{
                    "name": "baton",
                    "source": "./plugin",
                    "description": description,
                    "version": version,
                    "license": "MIT OR Apache-2.0",
                }],
            })),
        ),
        (
            PathBuf::from("plugin/.claude-plugin/plugin.json"),
            pretty(&serde_json::json!({
                "name": "baton",
                "version": version,
                "description": description,
                "author": {"name": "baton developers"},
                "license": "MIT OR Apache-2.0",
                "keywords": ["context", "masking", "tokens", "mcp", "bmad"],
            })),
        ),
        (
            PathBuf::from("plugin/hooks/hooks.json"),
            pretty(&wiring::hooks_document(
                "baton",
                HookAgent::Claude,
                wiring::Scope::Plugin,
            )),
        ),
        (
            PathBuf::from("plugin/.mcp.json"),
            pretty(&serde_json::json!({"mcpServers": {"baton": wiring::mcp_server("baton")}})),
        ),
    ];
    for (name, desc, prompt) in COMMANDS.iter().chain(PLUGIN_COMMANDS) {
        let short = name.trim_start_matches("baton-");
        out.push((
            PathBuf::from(format!("plugin/commands/{short}.md")),
            format!("---\ndescription: {desc}\n---\n{prompt}\n"),
        ));
    }
    out
}

fn command_files(agent: HookAgent) -> Vec<Wanted> {
    // The same relative paths serve a project and HOME (~/.claude/commands, ~/.gemini/commands).
    COMMANDS
        .iter()
        .filter_map(|(name, desc, prompt)| match agent {
            HookAgent::Claude => Some(Wanted {
                path: PathBuf::from(format!(".claude/commands/{name}.md")),
                part: Part::Whole(format!("---\ndescription: {desc}\n---\n{prompt}\n")),
            }),
            HookAgent::Gemini => {
                let prompt = prompt.replace("$ARGUMENTS", "{{args}}");
                let mut doc = toml::Table::new();
                doc.insert("description".into(), toml::Value::String(desc.to_string()));
                doc.insert("prompt".into(), toml::Value::String(prompt));
                Some(Wanted {
                    path: PathBuf::from(format!(".gemini/commands/{name}.toml")),
                    part: Part::Whole(toml::to_string(&doc).unwrap_or_default()),
                })
            }
            // Codex's custom prompts live in the user's ~/.codex/prompts, not in a project.
            HookAgent::Codex => None,
        })
        .collect()
}

/// Every file `baton init AGENT` writes (relative to the project), or with `Scope::User` every
/// file `baton init AGENT --global` writes (relative to HOME: the same settings files, the
/// user's MCP server list `~/.claude.json`, and the instructions files under each CLI's folder).
pub fn wanted(agent: HookAgent, scope: Scope) -> Vec<Wanted> {
    let user = scope == Scope::User;
    let mut out = match agent {
        HookAgent::Claude => vec![
            Wanted {
                path: if user { ".claude.json" } else { ".mcp.json" }.into(),
                part: Part::Json {
                    keys: vec![mcp_key()],
                    entries: Vec::new(),
                },
            },
            Wanted {
                path: ".claude/settings.json".into(),
                part: Part::Json {
                    keys: Vec::new(),
                    entries: claude_entries(scope),
                },
            },
        ],
        HookAgent::Codex => vec![
            Wanted {
                path: ".codex/config.toml".into(),
                part: Part::TomlTable {
                    table: p(&["mcp_servers", "baton"]),
                    value: codex_mcp_server(),
                },
            },
            Wanted {
                path: ".codex/hooks.json".into(),
                part: Part::Json {
                    keys: Vec::new(),
                    entries: hook_entries(agent, scope),
                },
            },
        ],
        HookAgent::Gemini => vec![Wanted {
            path: ".gemini/settings.json".into(),
            part: Part::Json {
                keys: vec![gemini_mcp_key()],
                entries: hook_entries(agent, scope),
            },
        }],
    };
    out.extend(command_files(agent));
    let doc = match (agent, user) {
        (HookAgent::Claude, false) => "CLAUDE.md",
        (HookAgent::Codex, false) => "AGENTS.md",
        (HookAgent::Gemini, false) => "GEMINI.md",
        (HookAgent::Claude, true) => ".claude/CLAUDE.md",
        (HookAgent::Codex, true) => ".codex/AGENTS.md",
        (HookAgent::Gemini, true) => ".gemini/GEMINI.md",
    };
    out.push(Wanted {
        path: doc.into(),
        part: Part::Section(section(agent)),
    });
    out
}
