//! Before anything runs: is an agent's CLI there, which version is it, and has it credentials.
//! A run checks [`locate`] for every agent it will call before its first phase (a missing CLI
//! is exit 7 with nothing changed); `--dry-run` shows all three.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::wiring::HookAgent;
use crate::{AgentKind, AgentSpec};

/// The program `spec` runs: its `program`, else the kind's CLI name.
pub fn program(spec: &AgentSpec) -> PathBuf {
    spec.program.clone().unwrap_or_else(|| {
        PathBuf::from(match spec.kind {
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini",
            _ => "claude",
        })
    })
}

/// Where `program` is: a path (relative to `cwd`, the agent's working directory) that is an
/// executable file, or a bare name found on `path` (the PATH the child inherits).
pub fn find(program: &Path, path: Option<&OsStr>, cwd: &Path) -> Option<PathBuf> {
    which::which_in(program, path, cwd).ok()
}

/// The CLI `spec` would run, found; an agent error (exit 7) saying how to install it if not.
pub fn locate(spec: &AgentSpec, cwd: &Path) -> Result<PathBuf> {
    let program = program(spec);
    let path = spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| std::ffi::OsString::from(v))
        .or_else(|| std::env::var_os("PATH"));
    find(&program, path.as_deref(), cwd).ok_or_else(|| {
        let what = if program.components().count() > 1 {
            "is not an executable file"
        } else {
            "is not installed (not found on PATH)"
        };
        Error::unavailable(format!("agent CLI `{}` {what}", program.display()))
            .hint(install_hint(spec.kind))
    })
}

/// How to get the kind's CLI.
pub fn install_hint(kind: AgentKind) -> String {
    let package = match kind {
        AgentKind::Claude => "@anthropic-ai/claude-code",
        AgentKind::Codex => "@openai/codex",
        AgentKind::Gemini => "@google/gemini-cli",
        _ => {
            return "check the agent's `program` in baton.toml ([agents.NAME] program = \"…\")"
                .into();
        }
    };
    format!(
        "install it (npm install -g {package}), or set `program` in baton.toml's [agents] table; `--agent sim` runs without any CLI"
    )
}

/// The first line `program --version` prints, within 10 s; `None` if it prints nothing or fails.
pub fn version(program: &Path) -> Option<String> {
    let mut cmd = std::process::Command::new(program);
    cmd.arg("--version");
    first_line(cmd, Duration::from_secs(10))
}

/// The first non-empty line a command prints on stdout when it succeeds within `limit`
/// (stdin closed, stderr dropped); `None` otherwise, the command then killed. For probes
/// that must not hang a check: a CLI's `--version`, a login shell's profile.
pub fn first_line(mut cmd: std::process::Command, limit: Duration) -> Option<String> {
    use std::io::Read;
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(_)) | Err(_) => return None,
            Ok(None) if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    out.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// Where the kind's CLI keeps credentials, for a hint when none is found. Advisory only: a
/// login can also live in the system keychain, which baton does not read.
pub fn credentials(kind: AgentKind) -> Credentials {
    let env_set = |names: &[&str]| {
        names
            .iter()
            .find(|n| std::env::var_os(n).is_some_and(|v| !v.is_empty()))
            .map(|n| format!("${n}"))
    };
    let file = |p: PathBuf| p.is_file().then(|| p.display().to_string());
    let user_file = |agent, rel: &str| {
        crate::wiring::user_file(agent, Path::new(rel), &crate::wiring::process_env)
            .unwrap_or_default()
    };
    let (found, login) = match kind {
        AgentKind::Claude => (
            env_set(&[
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "CLAUDE_CODE_OAUTH_TOKEN",
            ])
            .or_else(|| file(user_file(HookAgent::Claude, ".claude/.credentials.json"))),
            "run `claude` once and log in, or set ANTHROPIC_API_KEY",
        ),
        AgentKind::Codex => (
            env_set(&["OPENAI_API_KEY", "CODEX_API_KEY"])
                .or_else(|| file(user_file(HookAgent::Codex, ".codex/auth.json"))),
            "run `codex login`, or set OPENAI_API_KEY",
        ),
        AgentKind::Gemini => {
            // Headless gemini needs an auth method, chosen in its settings or implied by its
            // variables; without one (or with one it rejects) it exits 41 before any work.
            let settings = user_file(HookAgent::Gemini, ".gemini/settings.json");
            if let Err(why) = gemini_auth(&settings, &crate::wiring::process_env) {
                return Credentials::NoneFound(why);
            }
            (
                env_set(&[
                    "GEMINI_API_KEY",
                    "GOOGLE_API_KEY",
                    "GOOGLE_GENAI_USE_VERTEXAI",
                ])
                .or_else(|| file(user_file(HookAgent::Gemini, ".gemini/oauth_creds.json"))),
                "run `gemini` once and log in, or set GEMINI_API_KEY",
            )
        }
        _ => return Credentials::NotApplicable,
    };
    match found {
        Some(f) => Credentials::Found(f),
        None => Credentials::NoneFound(login.into()),
    }
}

/// The auth method headless gemini would use: `security.auth.selectedType` in the user's
/// settings, else the one its variables imply (as gemini-cli 0.61 reads them). `Err`, with
/// what to do, when it would exit 41: no method at all, or `GOOGLE_GEMINI_BASE_URL` alone
/// (gemini takes it for a gateway, which headless mode rejects: "Invalid auth method
/// selected").
fn gemini_auth(settings: &Path, var: crate::wiring::Var) -> std::result::Result<String, String> {
    let selected = std::fs::read_to_string(settings)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| {
            v.pointer("/security/auth/selectedType")
                .and_then(|t| t.as_str())
                .map(String::from)
        });
    if let Some(t) = selected {
        return Ok(t);
    }
    let set = |k: &str| var(k).is_some_and(|v| !v.is_empty());
    let is = |k: &str, want: &str| var(k).as_deref() == Some(want);
    let how = format!(
        "choose gemini's auth method: run `gemini` once, or set security.auth.selectedType in \
         {} (\"gemini-api-key\" with GEMINI_API_KEY set)",
        settings.display()
    );
    if is("GOOGLE_GENAI_USE_GCA", "true") {
        Ok("oauth-personal".into())
    } else if is("GOOGLE_GENAI_USE_VERTEXAI", "true") {
        Ok("vertex-ai".into())
    } else if set("GOOGLE_GEMINI_BASE_URL") {
        Err(format!(
            "GOOGLE_GEMINI_BASE_URL is set and no auth method is chosen: gemini exits 41 \
             (\"Invalid auth method selected\"); {how}"
        ))
    } else if set("GEMINI_API_KEY") {
        Ok("gemini-api-key".into())
    } else if is("CLOUD_SHELL", "true") || is("GEMINI_CLI_USE_COMPUTE_ADC", "true") {
        Ok("compute-default-credentials".into())
    } else {
        Err(format!(
            "no auth method is chosen (gemini exits 41 without one): {how}"
        ))
    }
}

/// What [`credentials`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// The variable or file that holds them.
    Found(String),
    /// None found; how to log in.
    NoneFound(String),
    /// A `command` agent: baton cannot tell.
    NotApplicable,
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::error::Fault;

    fn executable(p: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(p, "#!/bin/sh\necho 'agent 1.2.3'\n").unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn geminis_auth_method_is_read_as_gemini_reads_it() {
        let d = tempfile::tempdir().unwrap();
        let settings = d.path().join("settings.json");
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        // Nothing chosen, nothing implied: exit 41, said.
        let e = gemini_auth(&settings, &env(&[])).unwrap_err();
        assert!(e.contains("no auth method is chosen"), "{e}");
        assert!(e.contains("security.auth.selectedType"), "{e}");
        // An API key implies its method; a base URL alone is a gateway gemini refuses.
        assert_eq!(
            gemini_auth(&settings, &env(&[("GEMINI_API_KEY", "k")])).unwrap(),
            "gemini-api-key"
        );
        let e = gemini_auth(
            &settings,
            &env(&[
                ("GEMINI_API_KEY", "k"),
                ("GOOGLE_GEMINI_BASE_URL", "http://x"),
            ]),
        )
        .unwrap_err();
        assert!(e.contains("Invalid auth method selected"), "{e}");
        // Chosen in the settings: that one, whatever the variables say.
        std::fs::write(
            &settings,
            r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#,
        )
        .unwrap();
        assert_eq!(
            gemini_auth(&settings, &env(&[("GOOGLE_GEMINI_BASE_URL", "http://x")])).unwrap(),
            "gemini-api-key"
        );
    }

    #[test]
    fn a_cli_is_found_on_the_path_or_by_its_path_and_its_version_read() {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        executable(&bin.join("agent"));
        std::fs::write(bin.join("plain"), "not executable").unwrap();
        let path = Some(bin.as_os_str());
        assert_eq!(
            find(Path::new("agent"), path, d.path()),
            Some(bin.join("agent"))
        );
        assert_eq!(find(Path::new("claude-nowhere"), path, d.path()), None);
        // Found, but not executable: not runnable.
        assert_eq!(find(Path::new("plain"), path, d.path()), None);
        // A relative path is the agent's working directory's.
        assert!(find(Path::new("bin/agent"), None, d.path()).is_some());
        assert_eq!(version(&bin.join("agent")).as_deref(), Some("agent 1.2.3"));
        assert_eq!(version(&bin.join("plain")), None);
    }

    #[test]
    fn a_missing_cli_is_an_agent_error_that_says_how_to_install_it() {
        let d = tempfile::tempdir().unwrap();
        let mut spec = AgentSpec::new(AgentKind::Codex);
        spec.env
            .push(("PATH".into(), d.path().display().to_string()));
        let e = locate(&spec, d.path()).unwrap_err();
        assert!(matches!(e, Error::Unavailable { .. }), "{e:?}");
        assert_eq!(e.exit_code(), 7);
        assert_eq!(
            e.to_string(),
            "agent CLI `codex` is not installed (not found on PATH)"
        );
        assert!(
            e.hint_text()
                .unwrap()
                .contains("npm install -g @openai/codex")
        );
    }
}
