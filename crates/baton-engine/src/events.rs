//! Typed run events: what every engine tells about its run, sent to a [`Reporter`] instead
//! of printed from inside the engine. One reporter draws the human progress (a live line on
//! a terminal, plain lines otherwise), another prints one JSON object per line (`--json`);
//! later readers (the HTML report, MCP) take the same events.

use serde::Serialize;

use super::journal::PhaseOutcome;
pub use super::subject::{Subject, SubjectKind, SubjectResult};

/// One thing that happened in a run. Serialized with `"event"` naming the variant.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent<'a> {
    RunStarted {
        run_id: &'a str,
        workflow: &'a str,
        subjects: &'a [String],
        resumed: bool,
    },
    /// A story, task or item begins (or is taken up again by a resumed run).
    SubjectStarted {
        subject: &'a Subject,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
    },
    PhaseStarted {
        subject: &'a Subject,
        phase: &'a str,
        attempt: u32,
        agent: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<&'a str>,
    },
    /// A rate limit or an overloaded server: the call is made again after `wait_secs`.
    PhaseRetrying {
        subject: &'a Subject,
        phase: &'a str,
        attempt: u32,
        wait_secs: u64,
        reason: &'a str,
    },
    PhaseFinished {
        subject: &'a Subject,
        phase: &'a str,
        attempt: u32,
        outcome: &'a PhaseOutcome,
    },
    /// A phase the journal already holds: its recorded outcome, not run again.
    PhaseReplayed {
        subject: &'a Subject,
        phase: &'a str,
        attempt: u32,
        outcome: &'a PhaseOutcome,
    },
    GateOpened {
        subject: &'a Subject,
        gate: &'a str,
        prompt: &'a str,
        artifacts: &'a [String],
        decisions: &'a str,
        decide: &'a str,
    },
    GateDecided {
        subject: &'a Subject,
        gate: &'a str,
        decision: &'a str,
    },
    Paused {
        subject: &'a Subject,
        point: &'a str,
        reason: &'a str,
        resume: &'a str,
    },
    Committed {
        subject: &'a Subject,
        sha: &'a str,
    },
    /// One of the project's checks ended (after `phase`, before anything is committed).
    CheckFinished {
        subject: &'a Subject,
        phase: &'a str,
        result: &'a crate::checks::CheckResult,
    },
    /// A failed story's edits set aside in `git stash`.
    Stashed {
        subject: &'a Subject,
        message: &'a str,
    },
    /// A session (verify's orchestrating session, a conductor) was retired for a fresh one.
    Rotated {
        subject: &'a Subject,
        session: &'a str,
        reason: &'a str,
    },
    SubjectFinished {
        subject: &'a Subject,
        result: SubjectResult,
        #[serde(skip_serializing_if = "str::is_empty")]
        reason: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        commit: Option<&'a str>,
        tokens: u64,
        cost_usd: f64,
    },
    /// A signal stopped the run (Ctrl-C, kill, a closed terminal); `resume` continues it.
    Interrupted {
        signal: &'a str,
        resume: &'a str,
    },
    Note {
        #[serde(skip_serializing_if = "Option::is_none")]
        subject: Option<&'a Subject>,
        text: &'a str,
    },
    RunFinished {
        run_id: &'a str,
        /// completed | failed | waiting | paused | …: how the run ended.
        result: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        next: Option<&'a str>,
        /// The engine's closing report (stories, items, the task's state).
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<&'a serde_json::Value>,
    },
}

/// Where run events go. `Sync`: parallel stories and implementation waves report from their
/// own threads.
pub trait Reporter: Sync {
    fn report(&self, event: &RunEvent);
}

/// Reports nothing (a dry run prints its prompts instead; library callers that do not care).
pub struct Silent;

impl Reporter for Silent {
    fn report(&self, _: &RunEvent) {}
}

/// Keeps every event as JSON: for tests of the engines.
#[derive(Default)]
pub struct Collect(pub std::sync::Mutex<Vec<serde_json::Value>>);

impl Reporter for Collect {
    fn report(&self, event: &RunEvent) {
        if let Ok(v) = serde_json::to_value(event) {
            super::lock(&self.0).push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_name_their_subject_with_the_engines_word() {
        let s = Subject::task("add-login", Some("3"));
        let v = serde_json::to_value(RunEvent::PhaseStarted {
            subject: &s,
            phase: "implementation",
            attempt: 2,
            agent: "sim",
            model: None,
        })
        .unwrap();
        assert_eq!(v["event"], "phase_started");
        assert_eq!(v["subject"]["kind"], "task");
        assert_eq!(v["subject"]["id"], "add-login");
        assert_eq!(v["subject"]["unit"], "3");
        assert!(v.get("model").is_none());
        assert_eq!(s.label(), "task add-login#3");
        assert_eq!(Subject::story("1", "1.2").label(), "story 1.2");
    }
}
