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
    /// A subscription's usage limit is spent (claude "You've hit your session limit · resets
    /// 3pm (Europe/Berlin)", codex "You've hit your usage limit"): every call fails the same
    /// way until it resets, so no attempt is spent on it. Fatal: the run pauses. An API key's
    /// spend limit ("You have reached your specified API usage limits. You will regain access
    /// on 2026-12-01 at 00:00 UTC.") is one too.
    QuotaSpent,
    /// The API account has no credit left (claude "Credit balance is too low"): nothing resets
    /// it but a human buying credits. Fatal.
    Billing,
    /// The model API is down: it answered only server errors (5xx), or nothing at all, for
    /// the agent's `api_patience`; baton stopped the CLI. Fatal: the run pauses, naming it.
    ApiDown,
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
            Auth | InvalidInput
                | Config
                | Model
                | Network
                | Untrusted
                | Sandbox
                | NotInstalled
                | QuotaSpent
                | Billing
                | ApiDown
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
            QuotaSpent => format!("wait until {cli}'s usage limit resets (its message says when)"),
            Billing => format!(
                "add credits to the API account {cli} uses (its provider's billing page), then continue"
            ),
            ApiDown => format!(
                "{cli}'s model API is down or not answering: check the provider's status page (or the proxy or base URL {cli} is pointed at) and try again once it answers"
            ),
            _ => return None,
        };
        Some(s)
    }
}

static TRANSIENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(429|500|502|503|504|529)\b|overloaded|high demand|rate[ _-]?limit|too many requests|service unavailable|temporarily unavailable|quota exceeded|resource[ _]exhausted",
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

/// The CLIs' own words for a spent subscription limit (claude-code 2.1.197: "You've hit your
/// session limit · resets 3pm (Europe/Berlin)", weekly, Opus, …; codex 0.171: "You've hit your
/// usage limit. …"). Spend limits an admin sets are the same to a run: nothing goes on.
/// The Anthropic API's own answer for an API key over its spend limit is one too.
static QUOTA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)you['’]ve hit your [\w ]{0,40}limit|usage_limit_reached|you have exhausted your daily quota|reached your specified [\w ]{0,20}usage limits")
        .expect("static regex")
});

/// An account with nothing left to spend: claude-code's "Credit balance is too low" (the
/// API's "Your credit balance is too low to access the Anthropic API").
static BILLING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)credit balance is too low").expect("static regex"));

/// Api, Auth, Billing or QuotaSpent, from an API error message.
pub(super) fn classify_api_error(message: &str) -> FailureKind {
    if BILLING.is_match(message) {
        FailureKind::Billing
    } else if QUOTA.is_match(message) {
        FailureKind::QuotaSpent
    } else if AUTH.is_match(message) {
        FailureKind::Auth
    } else {
        FailureKind::Api
    }
}

/// `resets 3pm (Europe/Berlin)`, `resets 3:45pm (…)`, `resets Nov 29, 3pm (…)`, `resets Jan
/// 2, 2027, 3pm (…)` (a reset in another year): claude's reset.
static RESETS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"resets (?:(?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2}), (?:(?P<year>\d{4}), )?)?(?P<h>\d{1,2})(?::(?P<m>\d{2}))?(?P<ap>am|pm) \((?P<tz>[A-Za-z_]+(?:/[A-Za-z0-9_+\-]+)*)\)",
    )
    .expect("static regex")
});

/// For a spent limit: when it resets, from the CLI's message, in its zone and the user's.
pub(super) fn quota_step(agent: AgentKind, message: &str) -> Option<String> {
    let at = quota_reset(message, &jiff::Zoned::now())?;
    let local = at.with_time_zone(jiff::tz::TimeZone::system());
    Some(format!(
        "{}'s usage limit resets at {} ({} here): continue after that",
        agent.name(),
        at.strftime("%Y-%m-%d %H:%M %Z"),
        local.strftime("%Y-%m-%d %H:%M %Z")
    ))
}

/// codex's reset: "… or try again at 3:45 PM." (today), "try again at Nov 29th, 2026 3:45
/// PM." (another day), in the machine's local time (codex formats it so: a time alone when
/// the reset falls on codex's own today, its minute cut, not rounded). "Try again at …"
/// without an offer before it.
static TRY_AGAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:try|Try) again at (?:(?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2})(?:st|nd|rd|th)?, (?P<year>\d{4}) )?(?P<h>\d{1,2}):(?P<m>\d{2}) (?P<ap>AM|PM)",
    )
    .expect("static regex")
});

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// When a spent limit resets, read from the CLI's message — claude's local time in the IANA
/// zone it names, codex's in the machine's zone —, the next such time after `now`; `None` when
/// the message gives none it can read.
pub fn quota_reset(message: &str, now: &jiff::Zoned) -> Option<jiff::Zoned> {
    claude_reset(message, now)
        .or_else(|| codex_reset(message, now))
        .or_else(|| gemini_reset(message, now))
        .or_else(|| api_key_reset(message))
}

/// The Anthropic API's spend limit: "You will regain access on 2026-12-01 at 00:00 UTC."
static REGAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"regain access on (?P<d>\d{4}-\d{2}-\d{2}) at (?P<t>\d{2}:\d{2}) UTC")
        .expect("static regex")
});

fn api_key_reset(message: &str) -> Option<jiff::Zoned> {
    let c = REGAIN.captures(message)?;
    let at: jiff::civil::DateTime = format!("{}T{}:00", &c["d"], &c["t"]).parse().ok()?;
    at.to_zoned(jiff::tz::TimeZone::UTC).ok()
}

/// gemini's "You have exhausted your daily quota on this model." (gemini-cli 0.61, for a 429
/// whose QuotaFailure names a per-day quota) gives no time: Google's per-day quotas reset at
/// midnight Pacific time.
fn gemini_reset(message: &str, now: &jiff::Zoned) -> Option<jiff::Zoned> {
    if !message
        .to_ascii_lowercase()
        .contains("exhausted your daily quota")
    {
        return None;
    }
    let tz = jiff::tz::TimeZone::get("America/Los_Angeles").ok()?;
    let here = now.with_time_zone(tz.clone());
    let tomorrow = here.date().tomorrow().ok()?;
    tomorrow.at(0, 0, 0, 0).to_zoned(tz).ok()
}

fn codex_reset(message: &str, now: &jiff::Zoned) -> Option<jiff::Zoned> {
    let c = TRY_AGAIN.captures(message)?;
    let mut hour: i8 = c["h"].parse().ok()?;
    let minute: i8 = c["m"].parse().ok()?;
    match (&c["ap"], hour) {
        ("AM", 12) => hour = 0,
        ("PM", h) if h < 12 => hour += 12,
        _ => {}
    }
    let tz = now.time_zone().clone();
    let date = match (c.name("mon"), c.name("day"), c.name("year")) {
        (Some(mon), Some(day), Some(year)) => {
            let month = MONTHS.iter().position(|m| *m == mon.as_str())? as i8 + 1;
            jiff::civil::Date::new(
                year.as_str().parse().ok()?,
                month,
                day.as_str().parse().ok()?,
            )
            .ok()?
        }
        _ => now.date(),
    };
    let mut at = date.at(hour, minute, 0, 0).to_zoned(tz).ok()?;
    if c.name("mon").is_none() {
        // A time alone is on codex's today, which is ours but across a midnight between its
        // message and this reading: a time a day ahead was yesterday's.
        if at > now.checked_add(jiff::Span::new().hours(23)).ok()? {
            at = at.checked_sub(jiff::Span::new().days(1)).ok()?;
        }
        // Its minute is cut (the caller waits a minute past it), and one already gone (a reset
        // named for now, read a moment later) is never tomorrow's.
    }
    Some(at)
}

fn claude_reset(message: &str, now: &jiff::Zoned) -> Option<jiff::Zoned> {
    let c = RESETS.captures(message)?;
    let tz = jiff::tz::TimeZone::get(&c["tz"]).ok()?;
    let mut hour: i8 = c["h"].parse().ok()?;
    let minute: i8 = c.name("m").map_or(Some(0), |m| m.as_str().parse().ok())?;
    match (&c["ap"], hour) {
        ("am", 12) => hour = 0,
        ("pm", h) if h < 12 => hour += 12,
        _ => {}
    }
    let here = now.with_time_zone(tz.clone());
    let date = match (c.name("mon"), c.name("day")) {
        (Some(mon), Some(day)) => {
            let month = MONTHS.iter().position(|m| *m == mon.as_str())? as i8 + 1;
            let day: i8 = day.as_str().parse().ok()?;
            let on = |year: i16| jiff::civil::Date::new(year, month, day).ok();
            match c.name("year") {
                Some(year) => on(year.as_str().parse().ok()?)?,
                None => {
                    let this_year = on(here.year())?;
                    // "Jan 2" seen on Dec 30 is next year's.
                    if this_year < here.date() {
                        on(here.year() + 1)?
                    } else {
                        this_year
                    }
                }
            }
        }
        _ => here.date(),
    };
    let mut at = date.at(hour, minute, 0, 0).to_zoned(tz).ok()?;
    if c.name("mon").is_none() && at <= here {
        at = at.checked_add(jiff::Span::new().days(1)).ok()?;
    }
    Some(at)
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
            QuotaSpent,
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
    fn a_spent_limit_is_told_from_other_errors_and_its_reset_read() {
        for m in [
            "You've hit your session limit · resets 3pm (Europe/Berlin)",
            "You've hit your weekly limit · resets Nov 29, 3pm (America/New_York)",
            "You've hit your Opus limit · resets 3:45pm (Asia/Tokyo)",
            "You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at 4:12 PM.",
        ] {
            assert_eq!(classify_api_error(m), FailureKind::QuotaSpent, "{m}");
        }
        assert_eq!(
            classify_api_error("Not logged in · Please run /login"),
            FailureKind::Auth
        );
        assert_eq!(classify_api_error("API Error: 500"), FailureKind::Api);
        let now: jiff::Zoned = "2026-11-28T10:00:00+01:00[Europe/Berlin]".parse().unwrap();
        let at = |m: &str| quota_reset(m, &now).map(|z| z.to_string());
        // Later today, in its own zone.
        assert_eq!(
            at("You've hit your session limit · resets 3pm (Europe/Berlin)").as_deref(),
            Some("2026-11-28T15:00:00+01:00[Europe/Berlin]")
        );
        // Passed already today: tomorrow's.
        assert_eq!(
            at("resets 9:30am (Europe/Berlin)").as_deref(),
            Some("2026-11-29T09:30:00+01:00[Europe/Berlin]")
        );
        // Another zone, 12 am and 12 pm.
        assert_eq!(
            at("resets 12am (America/New_York)").as_deref(),
            Some("2026-11-29T00:00:00-05:00[America/New_York]")
        );
        assert_eq!(
            at("resets 12pm (Asia/Tokyo)").as_deref(),
            Some("2026-11-29T12:00:00+09:00[Asia/Tokyo]")
        );
        // A date more than a day away.
        assert_eq!(
            at("resets Dec 2, 3pm (Europe/Berlin)").as_deref(),
            Some("2026-12-02T15:00:00+01:00[Europe/Berlin]")
        );
        // codex's, in the machine's zone (here: `now`'s), a time alone on codex's today: later
        // today; gone already (codex names a later day with its date: never tomorrow's);
        // across a midnight between the message and its reading (yesterday's
        // 11:59 PM); dated.
        assert_eq!(
            at("You've hit your usage limit. … or try again at 4:12 PM.").as_deref(),
            Some("2026-11-28T16:12:00+01:00[Europe/Berlin]")
        );
        assert_eq!(
            at("… or try again at 9:30 AM.").as_deref(),
            Some("2026-11-28T09:30:00+01:00[Europe/Berlin]")
        );
        assert_eq!(
            at("You've hit your usage limit. Try again at 9:05 AM.").as_deref(),
            Some("2026-11-28T09:05:00+01:00[Europe/Berlin]")
        );
        let after_midnight: jiff::Zoned =
            "2026-11-29T00:00:02+01:00[Europe/Berlin]".parse().unwrap();
        assert_eq!(
            quota_reset("… or try again at 11:59 PM.", &after_midnight).map(|z| z.to_string()),
            Some("2026-11-28T23:59:00+01:00[Europe/Berlin]".to_string())
        );
        assert_eq!(
            at("… or try again at Dec 3rd, 2026 12:30 AM.").as_deref(),
            Some("2026-12-03T00:30:00+01:00[Europe/Berlin]")
        );
        // gemini's daily quota: the next midnight, Pacific time.
        assert_eq!(
            at("You have exhausted your daily quota on this model.").as_deref(),
            Some("2026-11-29T00:00:00-08:00[America/Los_Angeles]")
        );
        assert_eq!(
            classify_api_error("You have exhausted your daily quota on this model."),
            FailureKind::QuotaSpent
        );
        // A reset in another year, as claude dates it then.
        assert_eq!(
            at("resets Jan 2, 2027, 3pm (Europe/Berlin)").as_deref(),
            Some("2027-01-02T15:00:00+01:00[Europe/Berlin]")
        );
        // An API key's spend limit, as the Anthropic API words it.
        let cap = "API Error: 400 You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC.";
        assert_eq!(classify_api_error(cap), FailureKind::QuotaSpent);
        assert_eq!(at(cap).as_deref(), Some("2026-12-01T00:00:00+00:00[UTC]"));
        // No credit left: a human must act, nothing resets it.
        let broke = "Credit balance is too low";
        assert_eq!(classify_api_error(broke), FailureKind::Billing);
        assert!(FailureKind::Billing.is_fatal());
        assert!(
            FailureKind::Billing
                .next_step(AgentKind::Claude)
                .unwrap()
                .contains("add credits")
        );
        // Unreadable: no reset, the backoff's wait applies; a date that does not exist too.
        assert_eq!(at("resets Feb 30, 3pm (Europe/Berlin)"), None);
        assert_eq!(at("resets soon (Nowhere/Land)"), None);
        assert_eq!(at("You've hit your usage limit."), None);
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
