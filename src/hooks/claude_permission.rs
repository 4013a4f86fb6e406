//! Whether Claude Code would run a Bash command without asking anyone, read from the same
//! permission rules it reads. The pre-tool hook routes a command through `baton mask` only
//! then: claude checks its rules on the rewritten command (`baton mask --routed -- bash -c
//! '…'`), which the user's `Bash(make test)` does not match, so the hook must give the
//! permission itself ("allow") — and it gives it only where claude would have given it to
//! the original command. A command the user would have been asked about is not routed (its
//! output is still handled after it ran).
//!
//! Matching errs on the side of not routing: an allow rule must match exactly (prefix rules at
//! a word boundary), any deny or ask rule that could match stops the routing, and only a
//! simple command (no `;`, `&`, `|`, redirection, substitution or line break) is considered,
//! since claude checks each part of a compound command on its own.

use std::path::Path;

use serde_json::Value;

use baton_agent::wiring::{self, HookAgent, Var};

use baton_agent::wiring::CLAUDE_PERMISSIONS_VAR as RUN_PERMISSIONS_VAR;

/// Claude Code's managed settings (an administrator's rules, which no user setting overrides).
const MANAGED: &str = "/etc/claude-code/managed-settings.json";

/// The permission rules claude reads for a session in `project`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Rules {
    pub allow: Vec<String>,
    /// Deny and ask rules: either stops the routing.
    pub stop: Vec<String>,
}

impl Rules {
    /// From the run's variable, the project's settings (shared and local), the user's and the
    /// managed settings. A file that cannot be read or parsed adds nothing.
    pub fn read(project: &Path, var: Var) -> Rules {
        let mut rules = Rules::default();
        if let Some(text) = var(RUN_PERMISSIONS_VAR)
            && let Ok(v) = serde_json::from_str::<Value>(&text)
        {
            rules.add(&v, "allow", "deny");
        }
        let mut files = vec![
            project.join(".claude/settings.json"),
            project.join(".claude/settings.local.json"),
            std::path::PathBuf::from(MANAGED),
        ];
        files.extend(wiring::user_file(
            HookAgent::Claude,
            Path::new(".claude/settings.json"),
            var,
        ));
        for f in files {
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            if let Ok(v) = serde_json::from_str::<Value>(&text)
                && let Some(p) = v.get("permissions")
            {
                rules.add(p, "allow", "deny");
                rules.add(p, "", "ask");
            }
        }
        rules
    }

    fn add(&mut self, v: &Value, allow: &str, stop: &str) {
        let list = |k: &str| {
            v.get(k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect::<Vec<_>>()
        };
        if !allow.is_empty() {
            self.allow.extend(list(allow));
        }
        self.stop.extend(list(stop));
    }
}

/// Whether claude, in `mode` (the hook input's `permission_mode`), would run `command` without
/// asking under `rules`.
pub fn runs_unasked(command: &str, mode: &str, rules: &Rules) -> bool {
    let command = command.trim();
    if command.is_empty() || !is_simple(command) || mode == "plan" {
        return false;
    }
    if rules.stop.iter().any(|r| could_match(r, command)) {
        return false;
    }
    mode == "bypassPermissions" || rules.allow.iter().any(|r| matches_exactly(r, command))
}

/// One command with its arguments: nothing claude would split into several commands, and no
/// expansion that could run another.
fn is_simple(command: &str) -> bool {
    !command.contains([
        ';', '&', '|', '<', '>', '`', '$', '(', ')', '\n', '\r', '\\',
    ])
}

/// The pattern inside `Bash(…)`; `Some("")` for a bare `Bash` (every command); `None` for
/// another tool's rule.
fn bash_pattern(rule: &str) -> Option<&str> {
    let rule = rule.trim();
    if rule == "Bash" {
        return Some("");
    }
    rule.strip_prefix("Bash(")?.strip_suffix(')')
}

/// An allow rule that certainly covers `command`: the whole command, a `prefix:*` at a word
/// boundary, or a glob whose `*` stands for any text.
fn matches_exactly(rule: &str, command: &str) -> bool {
    let Some(p) = bash_pattern(rule) else {
        return false;
    };
    if p.is_empty() || p == "*" {
        return true;
    }
    if let Some(prefix) = p.strip_suffix(":*") {
        return command == prefix
            || command
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with(' '));
    }
    glob(p, command)
}

/// A deny or ask rule that might cover `command`: read loosely (a prefix without the word
/// boundary, a glob, the command's first word), so a doubt stops the routing.
fn could_match(rule: &str, command: &str) -> bool {
    let Some(p) = bash_pattern(rule) else {
        return false;
    };
    let p = p.trim();
    if p.is_empty() || p == "*" {
        return true;
    }
    let prefix = p.strip_suffix(":*").unwrap_or(p);
    let before_glob = prefix.split('*').next().unwrap_or("");
    command.starts_with(before_glob.trim_end()) || glob(p, command)
}

/// `*` matches any text (none included); everything else matches itself.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &text[first.len()..];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allow: &[&str], stop: &[&str]) -> Rules {
        Rules {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            stop: stop.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn only_what_an_allow_rule_covers_runs_unasked() {
        let r = rules(
            &["Bash(make test)", "Bash(cargo test:*)", "Bash(npm run *)"],
            &[],
        );
        for yes in [
            "make test",
            "cargo test",
            "cargo test --all -- --nocapture",
            "npm run test",
            "  make test  ",
        ] {
            assert!(runs_unasked(yes, "default", &r), "{yes}");
        }
        for no in [
            "make test-all",
            "make",
            "cargo testing",
            "pytest",
            "npm test",
            "Read",
        ] {
            assert!(!runs_unasked(no, "default", &r), "{no}");
        }
        assert!(runs_unasked(
            "pytest -x",
            "bypassPermissions",
            &rules(&[], &[])
        ));
        assert!(
            !runs_unasked("make test", "plan", &r),
            "plan mode runs nothing"
        );
        assert!(runs_unasked(
            "go test ./...",
            "acceptEdits",
            &rules(&["Bash"], &[])
        ));
        assert!(!runs_unasked(
            "go test",
            "default",
            &rules(&["Read", "Edit"], &[])
        ));
    }

    #[test]
    fn a_compound_command_or_an_expansion_is_never_given_permission() {
        let all = rules(&["Bash(make test:*)", "Bash"], &[]);
        for cmd in [
            "make test; curl x | sh",
            "make test && rm -rf /",
            "make test > out.txt",
            "make test $(whoami)",
            "make test `id`",
            "make test\nrm x",
            "make test \\\n; x",
        ] {
            assert!(!runs_unasked(cmd, "bypassPermissions", &all), "{cmd:?}");
            assert!(!runs_unasked(cmd, "default", &all), "{cmd:?}");
        }
    }

    #[test]
    fn any_deny_or_ask_rule_that_might_cover_the_command_stops_it() {
        let allow = ["Bash"];
        for stop in [
            "Bash(make:*)",
            "Bash(make test)",
            "Bash(make *)",
            "Bash",
            "Bash(*)",
            "Bash(mak:*)",
        ] {
            assert!(
                !runs_unasked("make test", "bypassPermissions", &rules(&allow, &[stop])),
                "{stop}"
            );
        }
        for other in ["Bash(rm:*)", "Read(./.env)", "Bash(cargo test)"] {
            assert!(
                runs_unasked("make test", "default", &rules(&allow, &[other])),
                "{other}"
            );
        }
    }

    #[test]
    fn rules_are_read_from_every_settings_file_and_a_runs_variable() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join(".claude")).unwrap();
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::write(
            project.path().join(".claude/settings.local.json"),
            r#"{"permissions": {"allow": ["Bash(make test)"], "ask": ["Bash(make deploy)"]}}"#,
        )
        .unwrap();
        std::fs::write(
            project.path().join(".claude/settings.json"),
            "not json: adds nothing",
        )
        .unwrap();
        std::fs::write(
            home.path().join(".claude/settings.json"),
            r#"{"permissions": {"deny": ["Bash(pytest:*)"]}}"#,
        )
        .unwrap();
        let home_s = home.path().display().to_string();
        let var = move |k: &str| match k {
            "HOME" => Some(home_s.clone()),
            k if k == RUN_PERMISSIONS_VAR => {
                Some(r#"{"allow": ["Bash(cargo test:*)"], "deny": ["Bash(go:*)"]}"#.into())
            }
            _ => None,
        };
        let r = Rules::read(project.path(), &var);
        assert!(r.allow.contains(&"Bash(make test)".to_string()), "{r:?}");
        assert!(r.allow.contains(&"Bash(cargo test:*)".to_string()), "{r:?}");
        for s in ["Bash(make deploy)", "Bash(pytest:*)", "Bash(go:*)"] {
            assert!(r.stop.contains(&s.to_string()), "{s}: {r:?}");
        }
    }
}
