//! Why an invocation failed ([`FailureKind`]), which failures mean "the CLI itself cannot
//! work" ([`FailureKind::is_fatal`]) and what the user should do then
//! ([`FailureKind::next_step`]); plus the message classifiers the adapters share.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::{AgentKind, tail_str};

/// Why an invocation counts as failed.
///
/// Two families: **fatal** kinds ([`FailureKind::is_fatal`]) say the CLI cannot do any work
/// here — retrying the phase, or running the next one with the same agent, fails the same way
/// until the user acts ([`FailureKind::next_step`]). The others say the agent ran and this piece
/// of work failed, timed out, crashed or was rate-limited ([`super::AgentOutcome::transient`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Killed after the timeout.
    TimedOut,
    /// Cancelled by the caller.
    Cancelled,
    /// Killed by a signal baton did not send.
    Signaled,
    /// Not logged in, bad API key (claude "Not logged in", gemini exit 41). Fatal.
    Auth,
    /// The CLI rejected its arguments (an unknown option, a bad value: "error: unknown option",
    /// "unexpected argument", gemini exit 42). Fatal.
    InvalidInput,
    /// Configuration error (gemini exit 52). Fatal.
    Config,
    /// The CLI does not know the configured model (codex given a Claude model name). Fatal.
    Model,
    /// No network: the CLI only reported reconnects (codex "Reconnecting... waiting for
    /// network", "stream disconnected"); baton stopped it. Fatal.
    Network,
    /// The folder is not trusted (gemini exit 55 without `--skip-trust`). Fatal.
    Untrusted,
    /// The CLI's sandbox could not start (gemini exit 44). Fatal.
    Sandbox,
    /// The program started but could not run (exit 127: e.g. `node` missing for an npm-installed
    /// CLI). A program that is not there at all is an `Err(not_found)` from [`super::run`]. Fatal.
    NotInstalled,
    /// Turn limit reached (claude `error_max_turns`, gemini exit 53).
    TurnLimit,
    /// Budget limit reached (claude `error_max_budget_usd`).
    Budget,
    /// Fatal tool error (gemini exit 54).
    Tool,
    /// SIGINT (gemini exit 130).
    Interrupted,
    /// The model API answered with an error (claude `is_error`, codex `turn.failed`).
    Api,
    /// The agent failed while executing (claude `error_during_execution`).
    Execution,
    /// Exit 0 but no final result in the output (a structured agent that printed nothing usable).
    NoResult,
    /// Non-zero exit with nothing more specific known.
    ExitCode,
}

impl FailureKind {
    /// The CLI itself cannot work (not runnable, not logged in, folder not trusted, bad
    /// configuration, model or argument, no network): every further call fails the same way
    /// until the user acts, so stop the run at once instead of spending attempts.
    /// `false` for failures of the work itself (timeouts, crashes, turn limits, API errors,
    /// rate limits).
    pub fn is_fatal(self) -> bool {
        use FailureKind::*;
        matches!(
            self,
            Auth | InvalidInput | Config | Model | Network | Untrusted | Sandbox | NotInstalled
        )
    }

    /// For a fatal kind, one line telling the user what to do with `agent` (`None` otherwise).
    pub fn next_step(self, agent: AgentKind) -> Option<String> {
        use FailureKind::*;
        let cli = agent.name();
        let s = match self {
            Auth => match agent {
                AgentKind::Claude => "log in: run `claude` once interactively (or set ANTHROPIC_API_KEY)".to_string(),
                AgentKind::Codex => "log in: run `codex login` (or set OPENAI_API_KEY)".to_string(),
                AgentKind::Gemini => "log in: run `gemini` once interactively, or set GEMINI_API_KEY".to_string(),
                _ => format!("log in to {cli}"),
            },
            InvalidInput => format!(
                "{cli} rejected its arguments: check this agent's `args` and settings against `{cli} --help` (see the error)"
            ),
            Config => format!("fix {cli}'s configuration (see the error), then run again"),
            Model => format!(
                "set a model {cli} knows: the role's model in baton.toml ([run.roles]) or the workflow's [roles], or leave it unset for {cli}'s default"
            ),
            Network => format!("check the network: {cli} cannot reach its API"),
            Untrusted => match agent {
                AgentKind::Gemini => "gemini: trust the folder or keep --skip-trust (or set GEMINI_CLI_TRUST_WORKSPACE=true)".to_string(),
                _ => format!("{cli}: trust this folder (run {cli} here once interactively)"),
            },
            Sandbox => format!("{cli}'s sandbox could not start: install or fix it, or turn the sandbox off"),
            NotInstalled => format!(
                "{cli} cannot start: reinstall it (an npm-installed CLI also needs `node` on PATH), or set `program`"
            ),
            _ => return None,
        };
        Some(s)
    }
}

static TRANSIENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(429|500|502|503|504|529)\b|overloaded|rate[ _-]?limit|too many requests|service unavailable|temporarily unavailable|quota exceeded|resource[ _]exhausted",
    )
    .expect("static regex")
});

/// Whether an error message describes a rate limit or an overloaded/5xx server.
pub fn is_transient(message: &str) -> bool {
    TRANSIENT.is_match(message)
}

static AUTH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)not logged in|please run /login|invalid api key|authentication|unauthori[sz]ed|\b401\b|api key")
        .expect("static regex")
});

/// Api or Auth, from an API error message.
pub(super) fn classify_api_error(message: &str) -> FailureKind {
    if AUTH.is_match(message) {
        FailureKind::Auth
    } else {
        FailureKind::Api
    }
}

/// What the CLIs' argument parsers print on stderr for a bad argument (checked 2026-11:
/// claude's commander "error: unknown option '--x'", "error: option '--permission-mode <mode>'
/// argument 'x' is invalid", "requires --verbose"; codex's clap "error: unexpected argument
/// '--full-auto' found", "error: invalid value"; gemini's yargs "Unknown argument: x").
static BAD_ARGUMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?im)^(error: (unknown option|unexpected argument|invalid value|option '.*' argument|too many arguments|missing required argument)|unknown arguments?: |Error: When using --print, .* requires )",
    )
    .expect("static regex")
});

/// Whether stderr shows the CLI rejecting its command line.
pub(super) fn is_bad_argument(stderr: &str) -> bool {
    BAD_ARGUMENT.is_match(stderr)
}

static NETWORK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)reconnecting\.\.\.|waiting for network|stream disconnected|error sending request|failed to lookup address|connection ?(refused|reset|failed)|unable to connect to api")
        .expect("static regex")
});

/// Whether a message is one of the CLI's own "no network" / reconnect messages.
pub(super) fn is_network(message: &str) -> bool {
    NETWORK.is_match(message)
}

static ANSI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[[0-9;]*[A-Za-z]").expect("static regex"));

/// The last non-empty lines of stderr, at most ~1 KB: the reason a process gave for failing.
pub(crate) fn stderr_reason(stderr_tail: &str) -> Option<String> {
    let plain = ANSI.replace_all(stderr_tail, "");
    let lines: Vec<&str> = plain
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let start = lines.len().saturating_sub(5);
    let s = lines[start..].join("\n");
    (!s.is_empty()).then(|| tail_str(&s, 1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_messages() {
        for m in [
            "API Error: 529 {\"type\":\"overloaded_error\"}",
            "Rate limit reached for requests",
            "HTTP 429 Too Many Requests",
            "503 Service Unavailable",
            "rate_limit_error",
        ] {
            assert!(is_transient(m), "{m}");
        }
        for m in [
            "Not logged in",
            "tests failed at line 4290",
            "error_max_turns",
        ] {
            assert!(!is_transient(m), "{m}");
        }
    }

    #[test]
    fn fatal_kinds_have_a_next_step() {
        use FailureKind::*;
        for k in [
            TimedOut,
            Cancelled,
            Signaled,
            Auth,
            InvalidInput,
            Config,
            Model,
            Network,
            Untrusted,
            Sandbox,
            NotInstalled,
            TurnLimit,
            Budget,
            Tool,
            Interrupted,
            Api,
            Execution,
            NoResult,
            ExitCode,
        ] {
            for agent in [AgentKind::Claude, AgentKind::Codex, AgentKind::Gemini] {
                assert_eq!(k.next_step(agent).is_some(), k.is_fatal(), "{k:?}");
            }
        }
        assert!(
            Auth.next_step(AgentKind::Claude)
                .unwrap()
                .contains("run `claude` once interactively")
        );
        assert!(
            Untrusted
                .next_step(AgentKind::Gemini)
                .unwrap()
                .contains("--skip-trust")
        );
        assert!(
            Model
                .next_step(AgentKind::Codex)
                .unwrap()
                .contains("[run.roles]")
        );
    }

    #[test]
    fn bad_arguments_as_the_real_clis_print_them() {
        // Captured 2026-11-23: claude-code 2.1.197, codex 0.169.0, gemini 0.61.0.
        for m in [
            "error: unknown option '--bogus'",
            "Error: When using --print, --output-format=stream-json requires --verbose",
            "error: option '--permission-mode <mode>' argument 'nope' is invalid. Allowed choices are acceptEdits, auto.",
            "error: unexpected argument '--full-auto' found\n\n  tip: to pass '--full-auto' as a value, use '-- --full-auto'",
            "Unknown argument: bogus\nUsage: gemini [options] [command]",
        ] {
            assert!(is_bad_argument(m), "{m}");
        }
        assert!(!is_bad_argument("tests: error: unknown thing in src/x.rs"));
    }

    #[test]
    fn network_messages() {
        for m in [
            "Reconnecting... waiting for network (Connection failed: error sending request)",
            "Reconnecting... 2/5 (stream disconnected before completion: failed to lookup address information: Name does not resolve)",
            // claude-code 2.1.197, its API's port closed.
            "API Error: Unable to connect to API (ConnectionRefused)",
        ] {
            assert!(is_network(m), "{m}");
        }
        assert!(!is_network("exceeded retry limit, last status: 429"));
    }
}
