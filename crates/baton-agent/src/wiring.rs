//! How baton is wired into each agent CLI: the hook entries and the MCP server entry,
//! one definition for `baton init` (project files, `baton` on PATH) and for the agents baton
//! launches itself (the running baton binary, by absolute path); and where each CLI keeps its
//! user-level files ([`user_file`]).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The agent CLIs baton hooks into (the CLIs of [`crate::AgentKind`] that have hooks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookAgent {
    Claude,
    Codex,
    Gemini,
}

impl HookAgent {
    pub fn name(self) -> &'static str {
        match self {
            HookAgent::Claude => "claude",
            HookAgent::Codex => "codex",
            HookAgent::Gemini => "gemini",
        }
    }
}

/// Where a hook entry was written: a project's files (`baton init AGENT`), the user's own
/// settings (`baton init AGENT --global`), or the Claude Code plugin. One call is answered by
/// one of them only: the most specific wired (project, then user, then plugin), so an output
/// is never masked twice ([`Scope::shadowed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Scope {
    #[default]
    Project,
    User,
    Plugin,
}

impl Scope {
    /// Its value of `--scope`.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
            Scope::Plugin => "plugin",
        }
    }

    fn flag(self) -> &'static str {
        match self {
            Scope::Project => "",
            Scope::User => " --scope user",
            Scope::Plugin => " --scope plugin",
        }
    }

    /// Whether a hook of this scope should step aside for a more specific one wired for
    /// `agent`: the project's settings in `project`, the user's where `var`'s environment
    /// puts them ([`user_file`]).
    pub fn shadowed(self, agent: HookAgent, project: &Path, var: Var) -> bool {
        let wired = |files: Vec<PathBuf>, scope: Scope| {
            files.iter().any(|f| {
                std::fs::read_to_string(f).is_ok_and(|text| names_hook(&text, agent, scope))
            })
        };
        let project_wired = || {
            let files = settings_files(agent, Scope::Project);
            wired(
                files.iter().map(|f| project.join(f)).collect(),
                Scope::Project,
            )
        };
        let user_wired = || {
            let files = settings_files(agent, Scope::User).iter();
            let user = |f: &&str| user_file(agent, Path::new(f), var);
            wired(files.filter_map(user).collect(), Scope::User)
        };
        match self {
            Scope::Project => false,
            Scope::User => project_wired(),
            Scope::Plugin => project_wired() || user_wired(),
        }
    }
}

/// The files (relative to the project, or to HOME by default for [`Scope::User`]: see
/// [`user_file`]) where `agent`'s hooks of that scope are written.
pub fn settings_files(agent: HookAgent, scope: Scope) -> &'static [&'static str] {
    match (agent, scope) {
        (HookAgent::Claude, Scope::Project) => {
            &[".claude/settings.json", ".claude/settings.local.json"]
        }
        (HookAgent::Claude, _) => &[".claude/settings.json"],
        (HookAgent::Codex, _) => &[".codex/hooks.json"],
        (HookAgent::Gemini, _) => &[".gemini/settings.json"],
    }
}

/// Whether a settings text holds baton's post-tool hook for `agent` of exactly `scope`.
fn names_hook(text: &str, agent: HookAgent, scope: Scope) -> bool {
    let needle = format!("hook {} {}", agent.name(), Event::PostToolUse.arg());
    text.match_indices(&needle).any(|(i, _)| {
        let rest = &text[i + needle.len()..];
        match scope {
            Scope::Project => !rest.starts_with(" --scope"),
            _ => rest.starts_with(scope.flag()),
        }
    })
}

/// The events baton handles, named as Claude Code names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Event {
    /// Claude and codex: a command likely to print a lot is rewritten to run through
    /// `baton mask`, before the CLI cuts its output.
    PreToolUse,
    PostToolUse,
    /// Claude only: a tool that failed (a command that exited non-zero) goes to this hook, not
    /// to `PostToolUse`, with only the head of its output.
    PostToolUseFailure,
    SessionStart,
    PreCompact,
}

/// Every event baton handles, in the order its entries are written.
pub const EVENTS: [Event; 5] = [
    Event::PreToolUse,
    Event::PostToolUse,
    Event::PostToolUseFailure,
    Event::SessionStart,
    Event::PreCompact,
];

impl Event {
    pub fn arg(self) -> &'static str {
        match self {
            Event::PreToolUse => "pre-tool-use",
            Event::PostToolUse => "post-tool-use",
            Event::PostToolUseFailure => "post-tool-use-failure",
            Event::SessionStart => "session-start",
            Event::PreCompact => "pre-compact",
        }
    }

    /// The event's name in `agent`'s settings (None: the agent has no such hook).
    pub fn native(self, agent: HookAgent) -> Option<&'static str> {
        Some(match (agent, self) {
            // gemini's hook gets the output whole. codex cuts it (to ~10 KB, head and tail)
            // before its post-tool hook runs; claude keeps the whole output of a command that
            // succeeded, but hands one that failed to `PostToolUseFailure` with only its head.
            (HookAgent::Gemini, Event::PreToolUse) => return None,
            (HookAgent::Claude | HookAgent::Codex, Event::PreToolUse) => "PreToolUse",
            (HookAgent::Claude, Event::PostToolUseFailure) => "PostToolUseFailure",
            (_, Event::PostToolUseFailure) => return None,
            (HookAgent::Gemini, Event::PostToolUse) => "AfterTool",
            (HookAgent::Gemini, Event::PreCompact) => "PreCompress",
            (_, Event::PostToolUse) => "PostToolUse",
            (_, Event::SessionStart) => "SessionStart",
            (_, Event::PreCompact) => "PreCompact",
        })
    }
}

/// Seconds Claude Code and Codex give a hook; Gemini counts in milliseconds.
const HOOK_TIMEOUT_SECS: u64 = 30;

/// `<baton> hook <agent> <event> [--scope S]`, `baton` quoted for the shell the agent runs it
/// with.
pub fn hook_command(baton: &str, agent: HookAgent, event: Event, scope: Scope) -> String {
    format!(
        "{} hook {} {}{}",
        shell_quote(baton),
        agent.name(),
        event.arg(),
        scope.flag()
    )
}

/// The variable through which a claude run baton launches tells baton's pre-tool hook the
/// permissions it gave on claude's command line (`--allowedTools`, `--disallowedTools`), which
/// the hook cannot read from any file: `{"allow": [...], "deny": [...]}`.
pub const CLAUDE_PERMISSIONS_VAR: &str = "BATON_CLAUDE_PERMISSIONS";

/// Claude's permission rule for every tool of baton's MCP server (`mcp__<server>`).
pub const CLAUDE_MCP_RULE: &str = "mcp__baton";

/// The MCP server entry (`mcpServers.baton` in JSON settings, `[mcp_servers.baton]` for Codex).
pub fn mcp_server(baton: &str) -> Value {
    json!({"command": baton, "args": ["mcp"]})
}

/// The matcher of each event's entry, per agent (None: every occurrence).
fn matcher(agent: HookAgent, event: Event) -> Option<&'static str> {
    match (agent, event) {
        // Bash, file reads (outline first), and MCP tools (other servers' large results;
        // baton's own are skipped).
        (HookAgent::Claude, Event::PostToolUse) => Some("Bash|Read|mcp__.*"),
        // Commands only: the routing before they run, and claude's failed ones.
        (HookAgent::Claude, Event::PreToolUse | Event::PostToolUseFailure) => Some("Bash"),
        // Codex hooks only Bash.
        (HookAgent::Codex, Event::PreToolUse | Event::PostToolUse) => Some("Bash"),
        (HookAgent::Gemini, Event::PostToolUse) => Some("run_shell_command|read_file"),
        (HookAgent::Claude, Event::SessionStart) => Some("startup|resume|clear|compact"),
        (HookAgent::Codex, Event::SessionStart) => Some("startup|resume|clear"),
        _ => None,
    }
}

/// One event's entry: `{matcher?, hooks: [{type: command, command, timeout}]}`.
pub fn hook_entry(baton: &str, agent: HookAgent, event: Event, scope: Scope) -> Value {
    let timeout = match agent {
        HookAgent::Gemini => HOOK_TIMEOUT_SECS * 1000,
        _ => HOOK_TIMEOUT_SECS,
    };
    let mut hook = json!({
        "type": "command",
        "command": hook_command(baton, agent, event, scope),
        "timeout": timeout,
    });
    if agent == HookAgent::Gemini {
        hook["name"] = json!(format!("baton-{}", event.arg()));
    }
    let mut entry = json!({"hooks": [hook]});
    if let Some(m) = matcher(agent, event) {
        entry["matcher"] = json!(m);
    }
    entry
}

/// Every event baton hooks, with its native name: `(native event, entry)`.
pub fn hook_entries(baton: &str, agent: HookAgent, scope: Scope) -> Vec<(&'static str, Value)> {
    EVENTS
        .into_iter()
        .filter_map(|e| Some((e.native(agent)?, hook_entry(baton, agent, e, scope))))
        .collect()
}

/// `{"hooks": {"PostToolUse": [entry], …}}`: Claude's settings, Codex's hooks.json, Gemini's
/// settings.json share this shape.
pub fn hooks_document(baton: &str, agent: HookAgent, scope: Scope) -> Value {
    let mut hooks = serde_json::Map::new();
    for (name, entry) in hook_entries(baton, agent, scope) {
        hooks.insert(name.to_string(), json!([entry]));
    }
    json!({ "hooks": hooks })
}

/// The flags for a `claude` run baton launches: its masking hook (`--settings`) and baton's MCP
/// server (`--mcp-config`), as inline JSON (both flags take a file or a JSON string), so every
/// Bash output of the run is masked whether or not the agent wraps its commands.
pub fn claude_run_args() -> Vec<String> {
    claude_run_args_with(&baton_program())
}

/// The baton the agents baton launches should call: this very binary, by its absolute path,
/// when it is baton; a program that links baton's library (a test harness) must not name
/// itself as a hook or MCP server (claude would start it, and it would start claude again):
/// `baton` from PATH then.
pub fn baton_program() -> String {
    std::env::current_exe()
        .ok()
        .filter(|p| p.file_stem().is_some_and(|n| n == "baton"))
        .map_or_else(|| "baton".to_string(), |p| p.display().to_string())
}

/// baton as the prompts name it, for an agent's shell: the running binary by its absolute
/// path, quoted for a shell. codex runs commands in a login shell, whose PATH is the profile's,
/// not baton's caller's: a bare `baton` may not be found there (exit 127).
pub fn baton_command() -> String {
    shell_quote(&baton_program())
}

/// [`claude_run_args`] with the baton program given.
pub fn claude_run_args_with(baton: &str) -> Vec<String> {
    // Only the masking hooks (routing before a command runs, its output after it succeeded or
    // failed): a run's prompt carries its own state, and the store's current task need not be
    // the run's.
    let mut hooks = serde_json::Map::new();
    for e in [
        Event::PreToolUse,
        Event::PostToolUse,
        Event::PostToolUseFailure,
    ] {
        let name = e.native(HookAgent::Claude).unwrap_or_default();
        let entry = hook_entry(baton, HookAgent::Claude, e, Scope::Project);
        hooks.insert(name.into(), json!([entry]));
    }
    let hooks = json!({ "hooks": hooks });
    vec![
        "--settings".into(),
        hooks.to_string(),
        "--mcp-config".into(),
        json!({"mcpServers": {"baton": mcp_server(baton)}}).to_string(),
    ]
}

/// Quote `s` for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%=,".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

// Where each agent CLI keeps its user-level files, found as the CLI itself finds them:
// claude in `$CLAUDE_CONFIG_DIR` (else `~/.claude`, with `~/.claude.json` beside it), codex in
// `$CODEX_HOME` (else `~/.codex`), gemini in `$GEMINI_CLI_HOME/.gemini` (else `~/.gemini`).
// One answer for `init --global`, the hooks stepping aside, `doctor`, folder trust, the
// credentials check and the transcripts: a user who moved a CLI's folder is followed everywhere.

/// The environment a lookup reads: a function, so a test can give its own.
pub type Var<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process's environment, as a [`Var`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A variable that is set and not empty, as a path.
fn set(var: Var, name: &str) -> Option<PathBuf> {
    var(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The folder `agent` keeps its user settings in (None: neither its variable nor HOME is set).
pub fn config_dir(agent: HookAgent, var: Var) -> Option<PathBuf> {
    let home = || set(var, "HOME");
    match agent {
        HookAgent::Claude => {
            set(var, "CLAUDE_CONFIG_DIR").or_else(|| Some(home()?.join(".claude")))
        }
        HookAgent::Codex => set(var, "CODEX_HOME").or_else(|| Some(home()?.join(".codex"))),
        HookAgent::Gemini => Some(set(var, "GEMINI_CLI_HOME").or_else(home)?.join(".gemini")),
    }
}

/// Claude Code's own state file: the user's MCP servers and each folder's trust
/// (`~/.claude.json`, or inside `$CLAUDE_CONFIG_DIR` when that is set).
pub fn claude_json(var: Var) -> Option<PathBuf> {
    match set(var, "CLAUDE_CONFIG_DIR") {
        Some(dir) => Some(dir.join(".claude.json")),
        None => Some(set(var, "HOME")?.join(".claude.json")),
    }
}

/// Where `agent` reads a user-level file, given by its default place under HOME
/// (`.codex/hooks.json`, `.claude.json`, `.gemini/commands/x.toml`).
pub fn user_file(agent: HookAgent, rel: &Path, var: Var) -> Option<PathBuf> {
    if agent == HookAgent::Claude && rel == Path::new(".claude.json") {
        return claude_json(var);
    }
    let folder = match agent {
        HookAgent::Claude => ".claude",
        HookAgent::Codex => ".codex",
        HookAgent::Gemini => ".gemini",
    };
    match rel.strip_prefix(folder) {
        Ok(rest) => Some(config_dir(agent, var)?.join(rest)),
        Err(_) => Some(set(var, "HOME")?.join(rel)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn each_cli_is_followed_to_the_folder_its_variable_names() {
        let home = env(&[("HOME", "/h")]);
        let moved = env(&[
            ("HOME", "/h"),
            ("CLAUDE_CONFIG_DIR", "/c"),
            ("CODEX_HOME", "/x"),
            ("GEMINI_CLI_HOME", "/g"),
        ]);
        let file = |agent, rel: &str, var: Var| user_file(agent, Path::new(rel), var).unwrap();
        use HookAgent::*;
        assert_eq!(
            file(Claude, ".claude/settings.json", &home),
            Path::new("/h/.claude/settings.json")
        );
        assert_eq!(
            file(Claude, ".claude/settings.json", &moved),
            Path::new("/c/settings.json")
        );
        assert_eq!(
            file(Claude, ".claude.json", &home),
            Path::new("/h/.claude.json")
        );
        assert_eq!(
            file(Claude, ".claude.json", &moved),
            Path::new("/c/.claude.json")
        );
        assert_eq!(
            file(Codex, ".codex/hooks.json", &home),
            Path::new("/h/.codex/hooks.json")
        );
        assert_eq!(
            file(Codex, ".codex/hooks.json", &moved),
            Path::new("/x/hooks.json")
        );
        assert_eq!(
            file(Gemini, ".gemini/settings.json", &moved),
            Path::new("/g/.gemini/settings.json")
        );
        assert_eq!(
            file(Gemini, ".gemini/commands/a.toml", &home),
            Path::new("/h/.gemini/commands/a.toml")
        );
    }

    #[test]
    fn an_empty_variable_counts_as_unset_and_no_home_is_no_answer() {
        let empty = env(&[("HOME", "/h"), ("CODEX_HOME", ""), ("GEMINI_CLI_HOME", "")]);
        assert_eq!(
            config_dir(HookAgent::Codex, &empty).unwrap(),
            Path::new("/h/.codex")
        );
        assert_eq!(
            config_dir(HookAgent::Gemini, &empty).unwrap(),
            Path::new("/h/.gemini")
        );
        let none = env(&[]);
        assert_eq!(config_dir(HookAgent::Claude, &none), None);
        assert_eq!(claude_json(&none), None);
        let only = env(&[("CODEX_HOME", "/x")]);
        assert_eq!(
            config_dir(HookAgent::Codex, &only).unwrap(),
            Path::new("/x")
        );
    }

    #[test]
    fn claude_settings_have_the_documented_shape() {
        let d = hooks_document("baton", HookAgent::Claude, Scope::Project);
        assert_eq!(
            d["hooks"]["PostToolUse"][0],
            json!({"matcher": "Bash|Read|mcp__.*", "hooks": [{
                "type": "command", "command": "baton hook claude post-tool-use", "timeout": 30
            }]})
        );
        assert_eq!(
            d["hooks"]["PreCompact"][0]["hooks"][0]["command"],
            "baton hook claude pre-compact"
        );
        // A command is routed before it runs, and one that failed (claude hands it to another
        // event, with only its head) is seen too.
        for (event, arg) in [
            ("PreToolUse", "pre-tool-use"),
            ("PostToolUseFailure", "post-tool-use-failure"),
        ] {
            assert_eq!(
                d["hooks"][event][0],
                json!({"matcher": "Bash", "hooks": [{
                    "type": "command", "command": format!("baton hook claude {arg}"), "timeout": 30
                }]}),
                "{event}"
            );
        }
        // A run's claude gets the same three masking hooks, by baton's own path.
        let args = claude_run_args_with("/opt/baton");
        let settings: Value = serde_json::from_str(&args[1]).unwrap();
        let mut events: Vec<&String> = settings["hooks"].as_object().unwrap().keys().collect();
        events.sort();
        assert_eq!(events, ["PostToolUse", "PostToolUseFailure", "PreToolUse"]);
        assert_eq!(
            settings["hooks"]["PostToolUseFailure"][0]["hooks"][0]["command"],
            "/opt/baton hook claude post-tool-use-failure"
        );
        // Neither codex nor gemini has a failure event of its own.
        for agent in [HookAgent::Codex, HookAgent::Gemini] {
            assert_eq!(Event::PostToolUseFailure.native(agent), None);
        }
    }

    #[test]
    fn gemini_names_its_events_and_counts_milliseconds() {
        let d = hooks_document("baton", HookAgent::Gemini, Scope::Project);
        let hook = &d["hooks"]["AfterTool"][0];
        assert_eq!(hook["matcher"], "run_shell_command|read_file");
        assert_eq!(hook["hooks"][0]["timeout"], 30_000);
        assert!(d["hooks"].get("PreCompress").is_some());
    }

    #[test]
    fn paths_with_spaces_are_quoted() {
        assert_eq!(shell_quote("/usr/bin/baton"), "/usr/bin/baton");
        assert_eq!(shell_quote("/my dir/it's"), r"'/my dir/it'\''s'");
    }

    #[test]
    fn a_hook_steps_aside_for_a_more_specific_one() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let home_var = home.path().display().to_string();
        let with_home = move |k: &str| (k == "HOME").then(|| home_var.clone());
        let no_home = |_: &str| None;
        let (p, h): (&Path, Var) = (project.path(), &with_home);
        let write = |base: &Path, scope: Scope| {
            let doc = hooks_document("baton", HookAgent::Claude, scope);
            std::fs::create_dir_all(base.join(".claude")).unwrap();
            std::fs::write(base.join(".claude/settings.json"), doc.to_string()).unwrap();
        };
        for s in [Scope::Project, Scope::User, Scope::Plugin] {
            assert!(!s.shadowed(HookAgent::Claude, p, h), "{s:?} alone");
        }
        write(home.path(), Scope::User);
        assert!(!Scope::User.shadowed(HookAgent::Claude, p, h));
        assert!(Scope::Plugin.shadowed(HookAgent::Claude, p, h));
        assert!(
            !Scope::Plugin.shadowed(HookAgent::Codex, p, h),
            "another agent's"
        );
        // The user's settings where CLAUDE_CONFIG_DIR puts them, not under HOME.
        let moved = tempfile::tempdir().unwrap();
        let moved_var = moved.path().display().to_string();
        let elsewhere = move |k: &str| (k == "CLAUDE_CONFIG_DIR").then(|| moved_var.clone());
        assert!(!Scope::Plugin.shadowed(HookAgent::Claude, p, &elsewhere));
        let doc = hooks_document("baton", HookAgent::Claude, Scope::User);
        std::fs::write(moved.path().join("settings.json"), doc.to_string()).unwrap();
        assert!(Scope::Plugin.shadowed(HookAgent::Claude, p, &elsewhere));
        write(project.path(), Scope::Project);
        assert!(Scope::User.shadowed(HookAgent::Claude, p, h));
        assert!(Scope::Plugin.shadowed(HookAgent::Claude, p, &no_home));
        assert!(!Scope::Project.shadowed(HookAgent::Claude, p, h));
        assert_eq!(
            hook_command(
                "/opt/b a/baton",
                HookAgent::Codex,
                Event::PreToolUse,
                Scope::User
            ),
            "'/opt/b a/baton' hook codex pre-tool-use --scope user"
        );
    }
}
