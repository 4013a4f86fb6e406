//! A model API that keeps failing, as a CLI's retries report it: the streak of server errors
//! (or rate limits) since the first, and when baton stops waiting for the CLI to get past it.
//! Pure: the reports come with their time, so the rules are tested without waiting.

use std::time::{Duration, Instant};

use super::FailureKind;

/// A run of failed requests of one kind: since when, how many, the latest report.
#[derive(Debug, Clone)]
pub(crate) struct Streak {
    since: Instant,
    reports: u32,
    last: String,
}

impl Streak {
    /// Another failure reported at `now`: the streak in `slot` goes on, or starts.
    pub(crate) fn extend(slot: &mut Option<Streak>, now: Instant, report: &str) {
        let s = slot.get_or_insert_with(|| Streak {
            since: now,
            reports: 0,
            last: String::new(),
        });
        s.reports += 1;
        s.last = super::tail_str(report.trim(), 300);
    }

    /// Whether the streak in `slot` has gone on for `patience` by `now`; never for a patience
    /// of zero (`api_patience_secs = 0`: the CLI's own retries are left alone).
    pub(crate) fn outlasts(slot: &Option<Streak>, patience: Duration, now: Instant) -> bool {
        !patience.is_zero()
            && slot
                .as_ref()
                .is_some_and(|s| now.saturating_duration_since(s.since) >= patience)
    }

    pub(crate) fn last(&self) -> &str {
        &self.last
    }

    pub(crate) fn reports(&self) -> u32 {
        self.reports
    }
}

/// Whether a CLI's report is of a server error: a 5xx, or the words the CLIs and APIs use
/// for one (codex says "We're currently experiencing high demand" for a 500).
pub(crate) fn is_server_error(report: &str) -> bool {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b5\d\d\b|internal server error|bad gateway|service unavailable|gateway timeout|overloaded|high demand|server[_ ]error",
        )
        .expect("static regex")
    });
    RE.is_match(report)
}

/// The HTTP status of a server error in a CLI's report (`500`, `503`, `529`), if it names one.
pub(crate) fn server_status(report: &str) -> Option<u16> {
    static RE: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\b(5\d\d)\b").expect("static regex"));
    RE.captures(report).and_then(|c| c[1].parse().ok())
}

/// What stopping a CLI whose API answered only server errors for `patience` says: the
/// status, how long, the CLI's own last words.
pub(crate) fn server_down(
    cli: &str,
    streak: &Streak,
    status: Option<u16>,
    patience: Duration,
) -> (FailureKind, String) {
    let answers = match status.or_else(|| server_status(&streak.last)) {
        Some(code) => format!("the API answers {code} (a server error)"),
        None => "the API answers with server errors".to_string(),
    };
    (
        FailureKind::ApiDown,
        format!(
            "{answers} to every request: {cli} retried {} times over {} s (\"{}\")",
            streak.reports,
            patience.as_secs(),
            streak.last
        ),
    )
}

/// What stopping a CLI that waited on its API with nothing heard for `patience` says.
pub(crate) fn unanswered(patience: Duration) -> String {
    format!(
        "no answer from the model API for {}: the request was sent and nothing came back",
        human_secs(patience.as_secs())
    )
}

fn human_secs(s: u64) -> String {
    match s {
        s if s >= 120 && s % 60 == 0 => format!("{} minutes", s / 60),
        60 => "1 minute".to_string(),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streak_outlasts_its_patience_from_its_first_report() {
        let t0 = Instant::now();
        let mut slot = None;
        Streak::extend(&mut slot, t0, "Attempt 1 failed with status 500");
        Streak::extend(
            &mut slot,
            t0 + Duration::from_secs(50),
            "Attempt 2 failed with status 503",
        );
        let p = Duration::from_secs(60);
        assert!(!Streak::outlasts(&slot, p, t0 + Duration::from_secs(59)));
        assert!(Streak::outlasts(&slot, p, t0 + Duration::from_secs(60)));
        assert!(!Streak::outlasts(&None, p, t0 + Duration::from_secs(600)));
        // A patience of zero turns the stop off.
        assert!(!Streak::outlasts(
            &slot,
            Duration::ZERO,
            t0 + Duration::from_secs(600)
        ));
        let (kind, msg) = server_down("gemini", slot.as_ref().unwrap(), None, p);
        assert_eq!(kind, FailureKind::ApiDown);
        assert!(kind.is_fatal());
        assert_eq!(
            msg,
            "the API answers 503 (a server error) to every request: gemini retried 2 times over 60 s (\"Attempt 2 failed with status 503\")"
        );
    }

    #[test]
    fn silence_is_named_in_words() {
        assert!(
            unanswered(Duration::from_secs(300))
                .starts_with("no answer from the model API for 5 minutes")
        );
        assert!(
            unanswered(Duration::from_secs(45))
                .starts_with("no answer from the model API for 45 s")
        );
        assert_eq!(
            server_status("Reconnecting... 2/5 (status 502 Bad Gateway)"),
            Some(502)
        );
        assert_eq!(server_status("HTTP 429"), None);
        assert!(is_server_error(
            "Reconnecting... 1/5 (We’re currently experiencing high demand, which may cause temporary errors.)"
        ));
        assert!(is_server_error("HTTP 529: overloaded_error"));
        assert!(!is_server_error(
            "Reconnecting... 1/5 (stream disconnected before completion)"
        ));
    }
}
