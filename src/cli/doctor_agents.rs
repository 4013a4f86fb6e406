//! `baton doctor`'s agents section: for each agent CLI, whether it is installed (and which
//! version), whether baton's wiring (`baton init AGENT`) is in this project, whether the CLI
//! would really pick it up (a CLI ignores a project's settings in a folder it does not trust),
//! whether it has credentials, and what to do; and whether a login shell finds `baton` (codex
//! runs an agent's commands in one).

use std::io::Write;
use std::path::{Path, PathBuf};

use baton_agent::preflight::{self, Credentials};
use baton_agent::trust::{self, Trust};
use baton_agent::wiring::{HookAgent, Scope};
use baton_agent::{AgentKind, AgentSpec};

/// One agent CLI as doctor finds it.
#[derive(Debug, serde::Serialize)]
pub struct AgentReport {
    pub agent: &'static str,
    pub installed: Option<PathBuf>,
    pub version: Option<String>,
    pub credentials: Option<String>,
    /// The project files `baton init AGENT` would still change (none: wired).
    pub unwired: Vec<PathBuf>,
    /// Why the project's agent settings could not be read (then nothing is known wired).
    pub wiring_error: Option<String>,
    /// Where baton's wiring is complete: `project` (`baton init AGENT`), `user` (`baton init
    /// AGENT --global`), `plugin` (Claude Code's baton plugin, installed and enabled).
    pub wired_at: Vec<&'static str>,
    /// codex only: each of baton's hooks and how codex judges it (`trusted`, `untrusted`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_trust: Option<Vec<HookTrust>>,
    pub trust: Trust,
    /// What to do, in order; empty when the CLI would use baton's wiring here.
    pub todo: Vec<String>,
}

impl AgentReport {
    /// Installed, wired, trusted: the CLI uses baton's hooks and MCP server in this project.
    pub fn picked_up(&self) -> bool {
        let project = self.wired_at.contains(&"project") && matches!(self.trust, Trust::Trusted(_));
        // The user's own settings and an enabled plugin need no folder trust.
        let elsewhere = self.wired_at.iter().any(|w| *w != "project");
        let hooks_trusted = self
            .hook_trust
            .as_ref()
            .is_none_or(|h| !h.is_empty() && h.iter().all(|t| t.status == "trusted"));
        self.installed.is_some() && (project || elsewhere) && hooks_trusted
    }
}

#[derive(Debug, serde::Serialize)]
pub struct HookTrust {
    pub command: String,
    pub status: String,
}

/// The CLI versions baton's wiring was checked with (tests/it/real_*.rs): an older one may
/// lack a hook field baton relies on (Claude's `updatedToolOutput` for every tool, codex's
/// rewritten `updatedInput`, gemini's `read_file` hook).
const CHECKED: [(HookAgent, &str, &str); 3] = [
    (HookAgent::Claude, "2.1.197", "@anthropic-ai/claude-code"),
    (HookAgent::Codex, "0.171.0", "@openai/codex"),
    (HookAgent::Gemini, "0.61.0", "@google/gemini-cli"),
];

/// The first `x.y.z` in a `--version` line, as numbers.
fn version_numbers(text: &str) -> Option<Vec<u64>> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|w| w.matches('.').count() >= 2)
        .map(|w| w.split('.').filter_map(|n| n.parse().ok()).collect())
}

/// What to do when `version` is older than the one baton was checked with.
fn too_old(agent: HookAgent, version: &str) -> Option<String> {
    let (_, checked, package) = CHECKED.iter().find(|(a, _, _)| *a == agent)?;
    let have = version_numbers(version)?;
    let want = version_numbers(checked)?;
    (have < want).then(|| {
        format!(
            "{} {} is older than {checked}, the version baton's hooks were checked with: \
             update it (npm install -g {package}@latest)",
            agent.name(),
            have.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(".")
        )
    })
}

/// Every agent CLI, for the project at `dir`.
pub fn check(dir: &Path) -> Vec<AgentReport> {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    [
        (HookAgent::Claude, AgentKind::Claude),
        (HookAgent::Codex, AgentKind::Codex),
        (HookAgent::Gemini, AgentKind::Gemini),
    ]
    .into_iter()
    .map(|(agent, kind)| {
        let spec = AgentSpec::new(kind);
        let installed = preflight::locate(&spec, dir).ok();
        let trust = trust::of(agent, &canonical);
        if installed.is_none() {
            // Not used here: how to get it is all there is to say.
            return AgentReport {
                agent: agent.name(),
                installed,
                version: None,
                credentials: None,
                unwired: Vec::new(),
                wiring_error: None,
                wired_at: Vec::new(),
                hook_trust: None,
                trust,
                todo: vec![format!("not installed: {}", preflight::install_hint(kind))],
            };
        }
        let mut todo = Vec::new();
        let version = installed.as_deref().and_then(preflight::version);
        let credentials = match preflight::credentials(kind) {
            Credentials::Found(at) => Some(format!("found ({at})")),
            Credentials::NoneFound(how) => {
                todo.push(format!("no credentials found: {how}"));
                None
            }
            Credentials::NotApplicable => None,
        };
        let (unwired, wiring_error): (Vec<PathBuf>, _) =
            match crate::init::plan(dir, agent, Scope::Project) {
                Ok(changes) => (changes.into_iter().map(|c| c.path).collect(), None),
                Err(e) => {
                    todo.push(format!("{e}: fix it, then run baton init {}", agent.name()));
                    (Vec::new(), Some(e.to_string()))
                }
            };
        let wired_at = levels(agent, unwired.is_empty() && wiring_error.is_none());
        if wired_at.is_empty() {
            todo.push(format!(
                "wire baton: baton init {0} (this project) or baton init {0} --global (every \
                 project)",
                agent.name()
            ));
        }
        if let Some(old) = version.as_deref().and_then(|v| too_old(agent, v)) {
            todo.push(old);
        }
        // codex runs no hook its user has not trusted (`/hooks`): ask codex itself.
        let hook_trust = (agent == HookAgent::Codex && !wired_at.is_empty())
            .then(|| {
                installed.as_deref().and_then(|codex| {
                    trust::codex_hook_trust(codex, dir, std::time::Duration::from_secs(10))
                })
            })
            .map(|found| match found {
                Some(hooks) => {
                    let untrusted = hooks.iter().filter(|(_, s)| s != "trusted").count();
                    if untrusted > 0 {
                        todo.push(format!(
                            "in codex, run `/hooks` and trust baton's hooks ({untrusted} of {} \
                             not trusted): codex runs no hook it has not been told to trust",
                            hooks.len()
                        ));
                    }
                    hooks
                        .into_iter()
                        .map(|(command, status)| HookTrust { command, status })
                        .collect()
                }
                None => {
                    todo.push(
                        "codex could not be asked whether baton's hooks are trusted: check \
                         `/hooks` in codex"
                            .into(),
                    );
                    Vec::new()
                }
            });
        // Only a project's own settings wait for the folder to be trusted.
        if !wired_at.iter().any(|w| *w != "project")
            && let Trust::NotTrusted(how) = &trust
        {
            todo.push(how.clone());
        }
        AgentReport {
            agent: agent.name(),
            installed,
            version,
            credentials,
            unwired,
            wiring_error,
            wired_at,
            hook_trust,
            trust,
            todo,
        }
    })
    .collect()
}

/// The levels at which baton's wiring for `agent` is complete.
fn levels(agent: HookAgent, project: bool) -> Vec<&'static str> {
    let mut out = Vec::new();
    if project {
        out.push("project");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    // The user's files are wherever the CLI reads them (`plan` follows $CODEX_HOME and the like).
    if let Some(h) = home.as_deref().filter(|h| h.is_dir())
        && crate::init::plan(h, agent, Scope::User).is_ok_and(|c| c.is_empty())
    {
        out.push("user");
    }
    if agent == HookAgent::Claude && claude_plugin_enabled() {
        out.push("plugin");
    }
    out
}

/// Claude Code's baton plugin: installed (`plugins/installed_plugins.json` in claude's folder)
/// and enabled (`enabledPlugins` in the user's settings).
fn claude_plugin_enabled() -> bool {
    let json = |rel: &str| -> Option<serde_json::Value> {
        let user = &baton_agent::wiring::process_env;
        let file = baton_agent::wiring::user_file(HookAgent::Claude, Path::new(rel), user)?;
        serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()
    };
    let installed = json(".claude/plugins/installed_plugins.json")
        .is_some_and(|v| v["plugins"].get(PLUGIN_ID).is_some());
    let enabled = json(".claude/settings.json")
        .is_some_and(|v| v["enabledPlugins"][PLUGIN_ID] == serde_json::Value::Bool(true));
    installed && enabled
}

/// The plugin's id: its name at the marketplace this repository is.
const PLUGIN_ID: &str = "baton@baton";

/// Where a login shell finds `baton` (`$SHELL -lc 'command -v baton'`), if it does within 5 s
/// (a profile that waits for something must not hang doctor).
pub fn baton_on_login_path() -> Option<String> {
    let shell = std::env::var_os("SHELL").unwrap_or_else(|| "/bin/sh".into());
    let mut cmd = std::process::Command::new(shell);
    cmd.args(["-lc", "command -v baton"]);
    preflight::first_line(cmd, std::time::Duration::from_secs(5))
}

/// The section for people.
pub fn render(
    w: &mut dyn Write,
    agents: &[AgentReport],
    login: Option<&str>,
) -> std::io::Result<()> {
    use super::style::{BAD, GOOD, To, paint};
    writeln!(w, "agents:")?;
    for a in agents {
        let Some(at) = &a.installed else {
            writeln!(w, "  {:<7} {}", a.agent, a.todo.join("; "))?;
            continue;
        };
        let head = match &a.version {
            Some(v) => format!("{} ({v})", at.display()),
            None => at.display().to_string(),
        };
        let verdict = if a.picked_up() {
            paint(To::Stdout, GOOD, "uses baton's hooks and MCP server here")
        } else {
            paint(To::Stdout, BAD, "does not use baton's wiring here")
        };
        writeln!(w, "  {:<7} {head}: {verdict}", a.agent)?;
        let wired = if let Some(e) = &a.wiring_error {
            format!("unknown ({e})")
        } else if !a.wired_at.is_empty() {
            format!("yes ({})", a.wired_at.join(", "))
        } else {
            let files: Vec<String> = a.unwired.iter().map(|p| p.display().to_string()).collect();
            format!("no ({} to change)", files.join(", "))
        };
        let trusted = match &a.trust {
            Trust::Trusted(by) => format!("yes ({by})"),
            Trust::NotTrusted(_) => "no".into(),
        };
        writeln!(
            w,
            "          wired: {wired}; folder trusted: {trusted}; credentials: {}",
            a.credentials.as_deref().unwrap_or("none found")
        )?;
        for t in &a.todo {
            writeln!(w, "          to do: {t}")?;
        }
    }
    match login {
        Some(p) => writeln!(w, "baton on a login shell's PATH: {p}"),
        None => writeln!(
            w,
            "baton on a login shell's PATH: {} (codex runs an agent's commands in a login shell: add baton's folder to PATH in your shell profile)",
            paint(To::Stdout, BAD, "not found")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_cli_than_the_one_checked_is_said_to_be() {
        assert_eq!(
            version_numbers("2.1.197 (Claude Code)"),
            Some(vec![2, 1, 197])
        );
        assert_eq!(version_numbers("codex-cli 0.171.0"), Some(vec![0, 171, 0]));
        assert!(too_old(HookAgent::Claude, "2.1.197 (Claude Code)").is_none());
        assert!(too_old(HookAgent::Claude, "2.2.0 (Claude Code)").is_none());
        assert!(
            too_old(HookAgent::Codex, "codex-cli 0.99.0")
                .unwrap()
                .contains("@openai/codex")
        );
        assert!(
            too_old(HookAgent::Gemini, "0.60.9")
                .unwrap()
                .contains("older than 0.61.0")
        );
        assert!(
            too_old(HookAgent::Gemini, "nightly").is_none(),
            "unknown: not judged"
        );
    }
}
