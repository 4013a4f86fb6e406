//! A conductor session: one agent session kept across several steps of a workflow —
//! resumed with the adapter's session support instead of started fresh — and **rotated** before
//! it overflows. baton tracks the session's context from the usage the agent reports, the tasks
//! it has been told about and the feedback it has taken in; when the context crosses
//! `refresh_usage` of the window (70 %), after `refresh_tasks` completed tasks (5), or past
//! `refresh_feedback_bytes` of feedback (10 KB) — `[budget]` in baton.toml — the session is
//! retired and the next call starts a fresh one, seeded with the state file's summary.
//!
//! [`Meter`] is the pure part (what is known of the live session, when it is due); [`Conductor`]
//! makes the calls. Each rotation is returned to the caller, who journals it with its reason.

use serde::{Deserialize, Serialize};

use super::agents::{Agents, Assignment, Reply, Request};
use crate::error::Result;
use baton_context::budget::BudgetConfig;

/// When a conductor session is rotated.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Context window of the conductor's model, in tokens.
    pub window: u64,
    /// Rotate when the reported context exceeds this fraction of the window.
    pub usage: f64,
    /// Rotate after this many completed tasks reported to one session.
    pub tasks: u64,
    /// Rotate when the feedback given to one session exceeds this many bytes.
    pub feedback_bytes: u64,
}

impl Policy {
    pub fn from_budget(b: &BudgetConfig) -> Policy {
        Policy {
            window: b.window as u64,
            usage: b.refresh_usage,
            tasks: b.refresh_tasks,
            feedback_bytes: b.refresh_feedback_bytes,
        }
    }

    /// The context size above which the session is rotated.
    pub fn usage_limit(&self) -> u64 {
        (self.window as f64 * self.usage) as u64
    }
}

/// Why a session was rotated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The context crossed the usage threshold.
    Usage,
    /// The session was told of enough completed tasks.
    Tasks,
    /// The session took in too much feedback.
    Feedback,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Usage => "usage",
            Reason::Tasks => "tasks",
            Reason::Feedback => "feedback",
        }
    }
}

/// What baton knows of the live conductor session. Serializable: the engine journals it after
/// every call, so a resumed run continues the same session with the same counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meter {
    /// The session to resume; `None` before the first call and after a rotation.
    pub session_id: Option<String>,
    /// The session's context as the agent last reported it (prompt size of its latest call).
    pub context_tokens: u64,
    /// Completed tasks reported to this session.
    pub tasks: u64,
    /// Bytes of feedback given to this session.
    pub feedback_bytes: u64,
    /// Calls made to this session.
    pub calls: u32,
    /// Sessions retired so far (0 while the first one lives).
    pub rotations: u32,
    /// Why the last session was retired (told to the fresh one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_rotation: Option<Reason>,
}

/// A retired session, as journaled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rotation {
    pub reason: Reason,
    pub session_id: Option<String>,
    pub context_tokens: u64,
    pub tasks: u64,
    pub feedback_bytes: u64,
    pub calls: u32,
}

impl Meter {
    /// Account for one call: the agent's report and what the call told it.
    pub fn record(&mut self, reply: &Reply, tasks: u64, feedback_bytes: u64) {
        if reply.session_id.is_some() {
            self.session_id = reply.session_id.clone();
        }
        // An agent that reports no context size: the session holds what it held plus this call.
        self.context_tokens = reply
            .context_tokens
            .unwrap_or(self.context_tokens + reply.usage.total());
        self.tasks += tasks;
        self.feedback_bytes += feedback_bytes;
        self.calls += 1;
    }

    /// The first trigger the session has crossed, most urgent first.
    pub fn due(&self, p: &Policy) -> Option<Reason> {
        if self.calls == 0 {
            None
        } else if self.context_tokens > p.usage_limit() {
            Some(Reason::Usage)
        } else if self.feedback_bytes > p.feedback_bytes {
            Some(Reason::Feedback)
        } else if p.tasks > 0 && self.tasks >= p.tasks {
            Some(Reason::Tasks)
        } else {
            None
        }
    }

    /// Retire the session: the next call starts a fresh one.
    pub fn rotate(&mut self, reason: Reason) -> Rotation {
        let r = Rotation {
            reason,
            session_id: self.session_id.take(),
            context_tokens: self.context_tokens,
            tasks: self.tasks,
            feedback_bytes: self.feedback_bytes,
            calls: self.calls,
        };
        *self = Meter {
            rotations: self.rotations + 1,
            last_rotation: Some(reason),
            ..Meter::default()
        };
        r
    }
}

/// One report to the conductor.
pub struct Report<'a> {
    /// The prompt, made for a fresh session (`true`: the report preceded by the state file's
    /// summary) or for one that continues (only what happened since the last call).
    pub prompt: &'a dyn Fn(bool) -> Result<String>,
    /// Completed tasks this report tells of.
    pub tasks: u64,
    /// Bytes of feedback (audit findings, failure reasons) this report hands over.
    pub feedback_bytes: u64,
}

/// The conductor: one role's agent, its rotation policy and its live session.
pub struct Conductor {
    pub who: Assignment,
    pub policy: Policy,
    pub meter: Meter,
}

impl Conductor {
    pub fn new(who: Assignment, policy: Policy) -> Conductor {
        Conductor {
            who,
            policy,
            meter: Meter::default(),
        }
    }

    /// Whether the next call starts a fresh session (and so needs the fresh prompt).
    pub fn fresh(&self) -> bool {
        self.meter.session_id.is_none()
    }

    /// Send one report: resume the live session, or start a fresh one seeded with the state
    /// summary. When the call leaves the session past a trigger, it is rotated at once, so the
    /// rotation is decided (and journaled) by the call that caused it.
    pub fn report(
        &mut self,
        agents: &dyn Agents,
        base: &Request,
        report: &Report,
    ) -> Result<(Reply, Option<Rotation>)> {
        let text = (report.prompt)(self.fresh())?;
        let req = Request {
            name: base.name.clone(),
            prompt: &text,
            cwd: base.cwd.clone(),
            log_dir: base.log_dir.clone(),
            timeout: base.timeout,
            grace: base.grace,
            resume: self.meter.session_id.clone(),
        };
        let reply = agents.run(&self.who, &req)?;
        if !reply.ok {
            // A failed call leaves the session in a state we cannot count on: the next report
            // starts a fresh one, with fresh counts (this is not a rotation).
            self.meter = Meter {
                rotations: self.meter.rotations,
                ..Meter::default()
            };
            return Ok((reply, None));
        }
        self.meter
            .record(&reply, report.tasks, report.feedback_bytes);
        let rotation = self
            .meter
            .due(&self.policy)
            .map(|reason| self.meter.rotate(reason));
        Ok((reply, rotation))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;

    fn policy() -> Policy {
        Policy::from_budget(&BudgetConfig::default())
    }

    /// An agent whose session grows by `growth` tokens per call plus the prompt's bytes / 4,
    /// like a resumed conversation does; a call without `resume` starts a new session.
    struct Growing {
        growth: u64,
        sessions: Mutex<Vec<u64>>,
        calls: Mutex<Vec<(Option<String>, String)>>,
    }

    impl Agents for Growing {
        fn run(&self, _who: &Assignment, req: &Request) -> Result<Reply> {
            let mut s = self.sessions.lock().unwrap();
            let id = match &req.resume {
                Some(id) => id[1..].parse::<usize>().unwrap(),
                None => {
                    s.push(0);
                    s.len() - 1
                }
            };
            s[id] += self.growth + req.prompt.len() as u64 / 4;
            self.calls
                .lock()
                .unwrap()
                .push((req.resume.clone(), req.prompt.to_string()));
            Ok(Reply {
                ok: true,
                session_id: Some(format!("s{id}")),
                context_tokens: Some(s[id]),
                ..Reply::default()
            })
        }
    }

    fn growing(growth: u64) -> Growing {
        Growing {
            growth,
            sessions: Mutex::new(vec![]),
            calls: Mutex::new(vec![]),
        }
    }

    fn base() -> Request<'static> {
        Request {
            name: "conductor".into(),
            prompt: "",
            cwd: PathBuf::from("."),
            log_dir: PathBuf::from("."),
            timeout: Duration::from_secs(1),
            grace: Duration::from_secs(1),
            resume: None,
        }
    }

    fn conductor() -> Conductor {
        Conductor::new(
            Assignment {
                agent: baton_agent::AgentKind::Sim.into(),
                tier: None,
                model: None,
            },
            policy(),
        )
    }

    fn send(c: &mut Conductor, a: &Growing, tasks: u64, feedback: u64) -> Option<Rotation> {
        let prompt = |fresh: bool| {
            Ok(if fresh {
                "STATE SUMMARY\ntask done"
            } else {
                "task done"
            }
            .to_string())
        };
        let r = Report {
            prompt: &prompt,
            tasks,
            feedback_bytes: feedback,
        };
        c.report(a, &base(), &r).unwrap().1
    }

    #[test]
    fn usage_past_seventy_percent_rotates_once_and_the_next_call_is_fresh() {
        let a = growing(50_000);
        let mut c = conductor();
        let reasons: Vec<_> = (0..5)
            .filter_map(|_| send(&mut c, &a, 0, 0))
            .map(|r| (r.reason, r.context_tokens > 140_000, r.calls))
            .collect();
        // 50K, 100K, 150K (> 140K: rotate), then a fresh session at 50K, 100K.
        assert_eq!(reasons, [(Reason::Usage, true, 3)]);
        let calls = a.calls.lock().unwrap();
        let resumed: Vec<bool> = calls.iter().map(|(r, _)| r.is_some()).collect();
        assert_eq!(resumed, [false, true, true, false, true]);
        assert!(
            calls[3].1.starts_with("STATE SUMMARY"),
            "fresh session seeded"
        );
        assert_eq!(calls[4].1, "task done", "resumed session gets only news");
        assert_eq!(c.meter.rotations, 1);
        assert_eq!(c.meter.last_rotation, Some(Reason::Usage));
    }

    #[test]
    fn five_tasks_rotate_with_reason_tasks() {
        let a = growing(100);
        let mut c = conductor();
        let got: Vec<_> = (0..7).map(|_| send(&mut c, &a, 1, 0)).collect();
        let rotated: Vec<usize> = got
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.as_ref().map(|_| i))
            .collect();
        assert_eq!(rotated, [4]);
        assert_eq!(got[4].as_ref().unwrap().reason, Reason::Tasks);
        assert_eq!(got[4].as_ref().unwrap().tasks, 5);
        assert_eq!(c.meter.tasks, 2, "counts restart with the fresh session");
    }

    #[test]
    fn feedback_over_ten_kib_rotates_with_reason_feedback() {
        let a = growing(100);
        let mut c = conductor();
        assert!(send(&mut c, &a, 0, 6 * 1024).is_none());
        assert!(
            send(&mut c, &a, 0, 4 * 1024).is_none(),
            "exactly 10 KiB is not over"
        );
        let r = send(&mut c, &a, 0, 1).unwrap();
        assert_eq!(
            (r.reason, r.feedback_bytes),
            (Reason::Feedback, 10 * 1024 + 1)
        );
    }

    #[test]
    fn thresholds_come_from_the_budget_config() {
        let b = BudgetConfig {
            window: 100_000,
            refresh_usage: 0.5,
            refresh_tasks: 2,
            refresh_feedback_bytes: 10,
            ..BudgetConfig::default()
        };
        let p = Policy::from_budget(&b);
        assert_eq!(p.usage_limit(), 50_000);
        let mut m = Meter {
            calls: 1,
            tasks: 2,
            ..Meter::default()
        };
        assert_eq!(m.due(&p), Some(Reason::Tasks));
        m.context_tokens = 50_001;
        assert_eq!(m.due(&p), Some(Reason::Usage), "usage is the most urgent");
        assert_eq!(Meter::default().due(&p), None, "no call, nothing to rotate");
    }

    #[test]
    fn a_failed_call_drops_the_session_without_counting() {
        struct Failing;
        impl Agents for Failing {
            fn run(&self, _w: &Assignment, _r: &Request) -> Result<Reply> {
                Ok(Reply {
                    ok: false,
                    session_id: Some("x".into()),
                    ..Reply::default()
                })
            }
        }
        let mut c = conductor();
        c.meter.session_id = Some("live".into());
        c.meter.calls = 1;
        c.meter.tasks = 4;
        c.meter.rotations = 2;
        let prompt = |_: bool| Ok("p".to_string());
        let r = Report {
            prompt: &prompt,
            tasks: 3,
            feedback_bytes: 0,
        };
        let (reply, rot) = c.report(&Failing, &base(), &r).unwrap();
        assert!(!reply.ok && rot.is_none());
        assert!(c.fresh());
        assert_eq!((c.meter.tasks, c.meter.calls), (0, 0), "fresh counts");
        assert_eq!(c.meter.rotations, 2, "not counted as a rotation");
    }
}
