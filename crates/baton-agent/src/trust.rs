//! Whether an agent CLI trusts a folder, read from where each CLI records it: a CLI ignores a
//! project's settings (baton's hooks and MCP server among them) in a folder it does not trust.
//! Read-only, and only advisory: `baton doctor` says what it finds and what to do.
//!
//! - claude: `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`), `projects.<dir>.hasTrustDialogAccepted`.
//! - codex: `$CODEX_HOME/config.toml` (`~/.codex`), `[projects."<dir>"] trust_level = "trusted"`.
//! - gemini: `~/.gemini/trustedFolders.json`, `{"<dir>": "TRUST_FOLDER" | "TRUST_PARENT" |
//!   "DO_NOT_TRUST"}` (a rule covers its folder's subfolders; TRUST_PARENT trusts the folder's
//!   parent), or `GEMINI_CLI_TRUST_WORKSPACE=true`, or folder trust turned off
//!   (`security.folderTrust.enabled = false` in `~/.gemini/settings.json`).

use std::path::{Path, PathBuf};

use crate::wiring::HookAgent;

/// What a CLI's records say of a folder.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "trust", content = "detail")]
pub enum Trust {
    /// Trusted, and by what.
    Trusted(String),
    /// Not trusted; how to trust it.
    NotTrusted(String),
}

/// Where `agent` reads a user-level file (see [`crate::wiring::user_file`]); nowhere readable when
/// neither HOME nor the CLI's own variable is set.
fn user_file(agent: HookAgent, rel: &str) -> PathBuf {
    crate::wiring::user_file(agent, Path::new(rel), &crate::wiring::process_env).unwrap_or_default()
}

/// Whether `agent` trusts `dir` (an absolute, canonical path).
pub fn of(agent: HookAgent, dir: &Path) -> Trust {
    match agent {
        HookAgent::Claude => claude(dir),
        HookAgent::Codex => codex(dir),
        HookAgent::Gemini => gemini(dir),
    }
}

fn claude(dir: &Path) -> Trust {
    let file = user_file(HookAgent::Claude, ".claude.json");
    let accepted = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .is_some_and(|v| {
            v.get("projects")
                .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
                .and_then(|p| p.get("hasTrustDialogAccepted"))
                .and_then(serde_json::Value::as_bool)
                == Some(true)
        });
    if accepted {
        Trust::Trusted(format!("accepted in {}", file.display()))
    } else {
        Trust::NotTrusted(
            "run `claude` in this folder once and trust it (claude ignores a project's permissions and MCP servers until then)".into(),
        )
    }
}

fn codex(dir: &Path) -> Trust {
    let file = user_file(HookAgent::Codex, ".codex/config.toml");
    let trusted = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .is_some_and(|t| {
            t.get("projects")
                .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
                .and_then(|p| p.get("trust_level"))
                .and_then(toml::Value::as_str)
                == Some("trusted")
        });
    if trusted {
        Trust::Trusted(format!("trust_level = \"trusted\" in {}", file.display()))
    } else {
        Trust::NotTrusted(
            "run `codex` in this folder once and trust it, then trust baton's hooks with /hooks (codex uses a project's .codex/ only then)".into(),
        )
    }
}

fn gemini(dir: &Path) -> Trust {
    if std::env::var("GEMINI_CLI_TRUST_WORKSPACE").is_ok_and(|v| v == "true") {
        return Trust::Trusted("GEMINI_CLI_TRUST_WORKSPACE=true".into());
    }
    // The user turned folder trust off: every folder's settings count.
    let settings = user_file(HookAgent::Gemini, ".gemini/settings.json");
    let off = std::fs::read(&settings)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v.pointer("/security/folderTrust/enabled")?.as_bool())
        == Some(false);
    if off {
        return Trust::Trusted(format!("folder trust is off in {}", settings.display()));
    }
    let file = user_file(HookAgent::Gemini, ".gemini/trustedFolders.json");
    let rules = std::fs::read(&file).unwrap_or_default();
    if gemini_trusts(dir, &rules) {
        Trust::Trusted(format!("a rule in {}", file.display()))
    } else {
        Trust::NotTrusted(
            "run `gemini` in this folder once and trust it (gemini ignores a folder's .gemini/settings.json until then); `baton run` sets GEMINI_CLI_TRUST_WORKSPACE=true for its own calls".into(),
        )
    }
}

/// Whether gemini's trusted-folder rules (`trustedFolders.json`'s text) trust `dir`: the most
/// specific rule covering it decides.
fn gemini_trusts(dir: &Path, rules: &[u8]) -> bool {
    let rules: Vec<(PathBuf, String)> =
        serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(rules)
            .map(|m| {
                m.into_iter()
                    .filter_map(|(k, v)| Some((PathBuf::from(k), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
    rules
        .iter()
        .filter_map(|(path, level)| {
            let covered = match level.as_str() {
                "TRUST_PARENT" => path.parent().map(Path::to_path_buf),
                _ => Some(path.clone()),
            }?;
            dir.starts_with(&covered)
                .then(|| (covered.components().count(), level.as_str()))
        })
        .max_by_key(|(depth, _)| *depth)
        .is_some_and(|(_, level)| matches!(level, "TRUST_FOLDER" | "TRUST_PARENT"))
}

/// How codex judges baton's hooks in `dir`: for each hook whose command is baton's, its
/// `trustStatus` (`trusted`, `untrusted`, `modified`…), as `codex app-server`'s `hooks/list`
/// reports it — the state `/hooks` shows and records. `None` when codex cannot be asked
/// within `limit` (an older codex without the method, a broken install).
pub fn codex_hook_trust(
    codex: &Path,
    dir: &Path,
    limit: std::time::Duration,
) -> Option<Vec<(String, String)>> {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(codex)
        .arg("app-server")
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(|l| l.ok())
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"clientInfo": {"name": "baton-doctor", "version": env!("CARGO_PKG_VERSION")}}});
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list",
        "params": {"cwds": [dir]}});
    let deadline = std::time::Instant::now() + limit;
    let mut answer = None;
    if writeln!(stdin, "{init}").is_ok() {
        let mut listed = false;
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            let Ok(line) = rx.recv_timeout(left) else {
                break;
            };
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if v["id"] == 1 && !listed {
                listed = writeln!(stdin, "{list}").is_ok();
            } else if v["id"] == 2 {
                answer = Some(v);
                break;
            }
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let hooks = answer?["result"]["data"][0]["hooks"].as_array()?.clone();
    Some(
        hooks
            .iter()
            .filter_map(|h| {
                let command = h["command"].as_str()?;
                command.contains(" hook codex ").then(|| {
                    (
                        command.to_string(),
                        h["trustStatus"].as_str().unwrap_or("unknown").to_string(),
                    )
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_rules_cover_subfolders_and_trust_parent_covers_the_parent() {
        let rules = br#"{"/work/a": "TRUST_FOLDER", "/work/b/x": "TRUST_PARENT", "/work/a/no": "DO_NOT_TRUST"}"#;
        let trusted = |d: &str| gemini_trusts(Path::new(d), rules);
        assert!(trusted("/work/a"));
        assert!(trusted("/work/a/deep/er"));
        assert!(
            trusted("/work/b/y"),
            "TRUST_PARENT of /work/b/x trusts /work/b"
        );
        assert!(
            !trusted("/work/a/no/more"),
            "the most specific rule decides"
        );
        assert!(!trusted("/elsewhere"));
        assert!(!gemini_trusts(Path::new("/work/a"), b"not json"));
    }
}
