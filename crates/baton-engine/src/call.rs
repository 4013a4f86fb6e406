//! The one phase pipeline every engine runs a phase through:
//!
//! replay? → render → save prompt → budget → journal start → call (backing off on rate limits
//! and overloads) → judge → journal finish.
//!
//! The engine supplies what differs — the subject, the prompt, and a judge of the agent's
//! answer — and gets back the recorded [`PhaseOutcome`]. A phase the journal already holds is
//! not run again: its recorded outcome is returned (`replayed`). Nothing is printed here: every
//! step is a [`RunEvent`] sent to the engine's reporter.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use super::agents::{Agents, Assignment, Reply, Request};
use super::definition::CallPolicy;
use super::events::{Reporter, RunEvent, Subject};
use super::journal::{Entry, Journal, Judged, PhaseOutcome, Usage};
use super::lock;
use crate::error::{Error, Result};
use baton_context::signals::{self, Grammar, Verdict as SignalVerdict};
use baton_context::tokens::Encoding;

/// One phase attempt, as the engine describes it.
pub struct Call<'a> {
    pub subject: &'a Subject,
    pub phase: &'a str,
    pub attempt: u32,
    /// Names the saved prompt (`prompts/<label>.md`) and the agent's logs (`logs/<label>.log`).
    pub label: String,
    pub who: Assignment,
    /// The agent's working directory (the project, or a story's worktree).
    pub cwd: PathBuf,
    /// Token budget of the prompt: a prompt over it is not sent.
    pub budget: Option<usize>,
    pub policy: CallPolicy,
    /// Continue this agent session instead of a fresh one.
    pub resume: Option<String>,
}

/// What the engine's judge made of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub judged: Judged,
    /// The signal line that decided it, or why it failed.
    pub detail: String,
    pub recommendation: Option<String>,
    /// The part of the answer the engine needs again on resume (verify's summary block),
    /// kept in the journal with the outcome.
    pub keep: Option<String>,
}

impl Verdict {
    pub fn malformed(detail: impl Into<String>) -> Verdict {
        Verdict {
            judged: Judged::Malformed,
            ..Verdict::broken(detail)
        }
    }

    pub fn passed(detail: impl Into<String>) -> Verdict {
        Verdict {
            judged: Judged::Passed,
            detail: detail.into(),
            recommendation: None,
            keep: None,
        }
    }

    pub fn broken(detail: impl Into<String>) -> Verdict {
        Verdict {
            judged: Judged::Broken,
            detail: detail.into(),
            recommendation: None,
            keep: None,
        }
    }

    pub fn rejected(detail: impl Into<String>) -> Verdict {
        Verdict {
            judged: Judged::Rejected,
            detail: detail.into(),
            recommendation: None,
            keep: None,
        }
    }
}

/// A finished phase attempt.
#[derive(Debug, Clone)]
pub struct Called {
    pub outcome: PhaseOutcome,
    /// The journal held it: nothing ran.
    pub replayed: bool,
    /// The agent's reply, when one ran in this process.
    pub reply: Option<Reply>,
}

impl Called {
    pub fn ok(&self) -> bool {
        self.outcome.ok
    }
}

/// The pipeline of one run: its journal, its agents, its reporter.
pub struct Calls<'a> {
    pub journal: &'a Mutex<Journal>,
    pub agents: &'a dyn Agents,
    pub reporter: &'a dyn Reporter,
    /// A dry run: prompts are collected here, nothing is sent or written.
    pub dry_run: Option<&'a Mutex<Vec<DryPhase>>>,
    /// `--wait-for-quota`: a spent usage limit is waited out, not a pause.
    pub wait_for_quota: bool,
}

/// Added to a usage limit's reset time before calling again: the provider's clock and ours
/// differ, and a call a few seconds early is refused again.
const QUOTA_MARGIN_SECS: i64 = 60;

/// Waits for a spent limit before the run pauses after all (with a reset time each wait is
/// one; without one, the backoff doubles up to an hour).
const QUOTA_WAITS: u32 = 48;

/// In the run's folder while it waits for a usage limit: when it goes on, and why.
pub const WAITING_FILE: &str = "waiting.json";

/// How long to wait for a spent limit: until `reset` (Unix seconds) and a margin; without
/// one, `fallback` seconds.
pub fn quota_wait(reset: Option<i64>, now: i64, fallback: u64) -> u64 {
    match reset {
        Some(at) => (at - now + QUOTA_MARGIN_SECS).max(0) as u64,
        None => fallback,
    }
}

/// A phase a dry run would run: who, with which command line, and the prompt.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DryPhase {
    pub title: String,
    pub agent: String,
    pub model: Option<String>,
    /// The command line the agent would be started with (the prompt goes to its stdin).
    pub argv: Option<String>,
    pub prompt: String,
}

impl Calls<'_> {
    /// Run one phase attempt through the pipeline (see the module doc). `render` makes the
    /// prompt (only when the phase really runs); `judge` decides the agent's answer — it is
    /// called only when the agent ran, and a pass also needs the agent process to have ended
    /// well.
    pub fn call(
        &self,
        c: &Call,
        render: impl FnOnce() -> Result<String>,
        judge: impl FnOnce(&Reply) -> Verdict,
    ) -> Result<Called> {
        let done = lock(self.journal)
            .finished_phase(c.subject, c.phase, c.attempt)
            .cloned();
        if let Some(outcome) = done {
            self.reporter.report(&RunEvent::PhaseReplayed {
                subject: c.subject,
                phase: c.phase,
                attempt: c.attempt,
                outcome: &outcome,
            });
            return Ok(Called {
                outcome,
                replayed: true,
                reply: None,
            });
        }
        self.stop_if(true)?;
        let prompt = render()?;
        if let Some(sink) = self.dry_run {
            let title = format!("{} PHASE: {}", c.phase.to_uppercase(), c.subject.label());
            let tokens = Encoding::O200kBase.count(&prompt) as u64;
            let req = Request {
                name: c.label.clone(),
                prompt: &prompt,
                cwd: c.cwd.clone(),
                log_dir: c.cwd.join(".baton-dry-run"),
                timeout: Duration::from_secs(c.policy.timeout_secs),
                grace: Duration::from_secs(c.policy.grace_secs),
                resume: c.resume.clone(),
            };
            let argv = self.agents.command_line(&c.who, &req);
            lock(sink).push(DryPhase {
                title,
                agent: c.who.agent.to_string(),
                model: self.agents.model(&c.who),
                argv,
                prompt,
            });
            let mut outcome = PhaseOutcome::broken("dry run".into(), tokens);
            outcome.ok = true;
            outcome.judged = Some(Judged::Passed);
            return Ok(Called {
                outcome,
                replayed: false,
                reply: None,
            });
        }
        let run_dir = lock(self.journal).dir.clone();
        let prompt_file = run_dir.join("prompts").join(format!("{}.md", c.label));
        baton_core::fs::write_atomic(&prompt_file, prompt.as_bytes())?;
        // Counted exactly only when the budget needs it — a prompt of no more bytes than the
        // budget cannot exceed it (a token is at least one byte).
        let counted = c
            .budget
            .is_some_and(|b| prompt.len() > b)
            .then(|| Encoding::O200kBase.count(&prompt) as u64);
        if let (Some(budget), Some(tokens)) = (c.budget, counted)
            && tokens as usize > budget
        {
            // Prompts pass paths, not contents; one still over budget is refused, not sent.
            let outcome = PhaseOutcome::broken(
                format!(
                    "prompt is {tokens} tokens, over the phase budget of {budget} (see {})",
                    prompt_file.display()
                ),
                tokens,
            );
            return self.finished(c, outcome, None);
        }
        self.log(Entry::PhaseStarted {
            subject: c.subject.clone(),
            phase: c.phase.to_string(),
            attempt: c.attempt,
        })?;
        let model = self.agents.model(&c.who);
        self.reporter.report(&RunEvent::PhaseStarted {
            subject: c.subject,
            phase: c.phase,
            attempt: c.attempt,
            agent: c.who.agent.as_str(),
            model: model.as_deref(),
        });
        let req = Request {
            name: c.label.clone(),
            prompt: &prompt,
            cwd: c.cwd.clone(),
            log_dir: run_dir.join("logs"),
            timeout: Duration::from_secs(c.policy.timeout_secs),
            grace: Duration::from_secs(c.policy.grace_secs),
            resume: c.resume.clone(),
        };
        // Otherwise the journal's count is an estimate: exact counting is BPE over the whole
        // prompt for a number that only informs.
        let prompt_tokens =
            counted.unwrap_or_else(|| baton_context::tokens::estimate(&prompt) as u64);
        let first = self.agents.run(&c.who, &req);
        // A call cut off by Ctrl-C or kill is not judged: the journal says interrupted and
        // resuming runs it again.
        let first = first?;
        self.check_interrupt()?;
        let reply = self.backoff(c, &req, first)?;
        let reply = self.wait_out_quota(c, &req, reply, &run_dir)?;
        // The CLI cannot work at all, or the API still refuses after every wait: no attempt of
        // the work is spent and nothing is judged. The phase stays started in the journal, so
        // resuming runs it again: the run is paused, not failed.
        let stopped = match (&reply.fatal, reply.transient) {
            (Some(next), _) => Some((next.clone(), "cannot run")),
            (None, true) => Some((
                transient_cause(reply.error.as_deref()).next_step(),
                "is paused in",
            )),
            (None, false) => None,
        };
        if let Some((next, verb)) = stopped {
            let what = reply.error.as_deref().unwrap_or("the agent failed");
            return Err(Error::unavailable(format!(
                "{} {verb} the {} phase of {}: {what}",
                c.who.agent,
                c.phase,
                c.subject.label()
            ))
            .hint(format!(
                "{next}; then continue with `baton run --resume {}`",
                run_dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            )));
        }
        let v = judge(&reply);
        let (judged, detail) = if reply.ok {
            (v.judged, v.detail)
        } else {
            // The process itself failed: say so first, it is the real cause; nothing a failed
            // process printed (a signal, a verdict) is trusted.
            let cause = reply.error.clone().unwrap_or_else(|| "agent failed".into());
            (Judged::Broken, format!("{cause}; {}", v.detail))
        };
        let outcome = PhaseOutcome {
            ok: judged == Judged::Passed,
            detail,
            recommendation: v.recommendation,
            usage: reply.usage,
            cost_usd: reply.cost_usd,
            duration_ms: reply.duration_ms,
            session_id: reply.session_id.clone(),
            prompt_tokens,
            log: Some(reply.log.display().to_string()),
            judged: Some(judged),
            kept: if judged == Judged::Passed {
                v.keep
            } else {
                None
            },
            budget: None,
            context_peak_tokens: reply.context_peak_tokens,
            context_budget: None,
            over_budget: false,
            label: None,
        };
        self.finished(c, outcome, Some(reply))
    }

    /// Rate limits and overloaded servers are waited out (`backoff_secs`, doubling), not
    /// counted as the phase failing.
    ///
    /// A server that keeps failing is given the agents' `api_patience` in all, counted from
    /// the first call: a wait that would end past it is not begun, and the run pauses.
    fn backoff(&self, c: &Call, req: &Request, mut reply: Reply) -> Result<Reply> {
        let mut wait = c.policy.backoff_secs;
        let mut usage = Usage::default();
        let mut cost: Option<f64> = None;
        let began = std::time::Instant::now()
            .checked_sub(Duration::from_millis(reply.duration_ms))
            .unwrap_or_else(std::time::Instant::now);
        let patience = self.agents.api_patience();
        for retry in 1..=c.policy.transient_retries {
            if !reply.transient {
                break;
            }
            if transient_cause(reply.error.as_deref()) == Transient::ServerErrors
                && !patience.is_zero()
                && began.elapsed() + Duration::from_secs(wait) >= patience
            {
                break;
            }
            self.reporter.report(&RunEvent::PhaseRetrying {
                subject: c.subject,
                phase: c.phase,
                attempt: c.attempt,
                wait_secs: wait,
                reason: reply.error.as_deref().unwrap_or("rate limited"),
            });
            usage.add(&reply.usage);
            cost = sum_cost(cost, reply.cost_usd);
            let until = std::time::Instant::now() + Duration::from_secs(wait);
            while std::time::Instant::now() < until {
                self.check_interrupt()?;
                std::thread::sleep(Duration::from_millis(50));
            }
            wait = wait.saturating_mul(2);
            // Each call keeps its own log: the refused one says why it was refused.
            let again = Request {
                name: format!("{}.retry-{retry}", req.name),
                ..req.clone()
            };
            reply = self.agents.run(&c.who, &again)?;
            self.check_interrupt()?;
        }
        // What the refused calls cost still counts.
        reply.usage.add(&usage);
        reply.cost_usd = sum_cost(reply.cost_usd, cost);
        Ok(reply)
    }

    /// A spent usage limit, with `--wait-for-quota`: wait until it resets (see [`quota_wait`];
    /// the backoff when the CLI's message gives no time baton reads), then call again. The
    /// wait is not an attempt; Ctrl-C during it pauses the run as ever.
    fn wait_out_quota(
        &self,
        c: &Call,
        req: &Request,
        mut reply: Reply,
        run_dir: &std::path::Path,
    ) -> Result<Reply> {
        if !self.wait_for_quota {
            return Ok(reply);
        }
        let mut fallback = c.policy.backoff_secs;
        let waiting = run_dir.join(WAITING_FILE);
        for n in 1..=QUOTA_WAITS {
            let Some(reset) = reply.quota else {
                break;
            };
            let now = jiff::Timestamp::now().as_second();
            let secs = quota_wait(reset, now, fallback);
            if reset.is_none() {
                fallback = fallback.saturating_mul(2).clamp(1, 3600);
            }
            let until = jiff::Timestamp::from_second(now + secs as i64)
                .unwrap_or_else(|_| jiff::Timestamp::now());
            let local = until
                .to_zoned(jiff::tz::TimeZone::system())
                .strftime("%Y-%m-%d %H:%M %Z")
                .to_string();
            let reason = match reset {
                Some(_) => format!(
                    "{}'s usage limit is spent: waiting until it resets, {local} (--wait-for-quota)",
                    c.who.agent
                ),
                None => format!(
                    "{}'s usage limit is spent (no reset time in its message): trying again at {local} (--wait-for-quota)",
                    c.who.agent
                ),
            };
            self.reporter.report(&RunEvent::PhaseRetrying {
                subject: c.subject,
                phase: c.phase,
                attempt: c.attempt,
                wait_secs: secs,
                reason: &reason,
            });
            let note = serde_json::json!({"until": until.to_string(), "reason": reason,
                "subject": c.subject.label(), "phase": c.phase});
            baton_core::fs::write_atomic(&waiting, note.to_string().as_bytes())?;
            let end = std::time::Instant::now() + Duration::from_secs(secs);
            let waited = (|| {
                while std::time::Instant::now() < end {
                    self.check_interrupt()?;
                    std::thread::sleep(Duration::from_millis(50));
                }
                Ok::<(), Error>(())
            })();
            let _ = std::fs::remove_file(&waiting);
            waited?;
            let again = Request {
                name: format!("{}.quota-{n}", req.name),
                ..req.clone()
            };
            reply = self.agents.run(&c.who, &again)?;
            self.check_interrupt()?;
            reply = self.backoff(c, &again, reply)?;
        }
        Ok(reply)
    }

    fn finished(
        &self,
        c: &Call,
        mut outcome: PhaseOutcome,
        reply: Option<Reply>,
    ) -> Result<Called> {
        // What the report needs to draw the phase and find its prompt and logs.
        outcome.budget = c.budget.map(|b| b as u64);
        // What the agent really held, against the prompt's budget plus its CLI's own floor.
        outcome.context_budget = outcome
            .budget
            .map(|b| b + self.agents.context_floor(&c.who));
        outcome.over_budget = matches!(
            (outcome.context_peak_tokens, outcome.context_budget),
            (Some(peak), Some(budget)) if peak > budget
        );
        outcome.label = Some(c.label.clone());
        self.log(Entry::PhaseFinished {
            subject: c.subject.clone(),
            phase: c.phase.to_string(),
            attempt: c.attempt,
            outcome: outcome.clone(),
        })?;
        self.reporter.report(&RunEvent::PhaseFinished {
            subject: c.subject,
            phase: c.phase,
            attempt: c.attempt,
            outcome: &outcome,
        });
        Ok(Called {
            outcome,
            replayed: false,
            reply,
        })
    }

    fn log(&self, e: Entry) -> Result<()> {
        lock(self.journal).log(e)
    }

    /// Stop here when a signal interrupted the run: journal it (once) and return the error
    /// that says how to continue.
    pub fn check_interrupt(&self) -> Result<()> {
        self.stop_if(false)
    }

    /// [`Calls::check_interrupt`], and, before a call starts (`between` calls), a graceful stop
    /// asked by `baton stop --graceful`: the phase that was running has finished and been
    /// judged; the run stops here, as a SIGTERM between two phases would stop it.
    fn stop_if(&self, between: bool) -> Result<()> {
        let dir = lock(self.journal).dir.clone();
        let (sig, name) = match super::interrupt::received() {
            Some(sig) => (sig, super::interrupt::name(sig)),
            None if between => match super::interrupt::take_graceful(&dir) {
                Some(why) if why.trim().is_empty() => (
                    libc::SIGTERM,
                    "a graceful stop (baton stop --graceful)".to_string(),
                ),
                Some(why) => (libc::SIGTERM, why.trim().to_string()),
                None => return Ok(()),
            },
            None => return Ok(()),
        };
        let mut j = lock(self.journal);
        let run_id = j
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let logged = j
            .records
            .last()
            .is_some_and(|r| matches!(r.entry, Entry::Interrupted { .. }));
        if !logged && !run_id.is_empty() {
            j.log(Entry::Interrupted {
                signal: name.clone(),
            })?;
            self.reporter.report(&RunEvent::Interrupted {
                signal: &name,
                resume: &format!("baton run --resume {run_id}"),
            });
        }
        Err(Error::Interrupted {
            signal: sig,
            name,
            hint: (!run_id.is_empty())
                .then(|| format!("nothing is lost; continue with: baton run --resume {run_id}")),
        })
    }
}

fn sum_cost(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

/// The judge every engine starts from: the phase's signal for `expected_id` (the last one
/// wins; another subject's signal does not count), parsed by `context::signals`.
pub fn judge_signal(text: &str, expected_id: &str, grammar: Grammar) -> Verdict {
    let res = signals::parse_grammar(text, expected_id, grammar);
    match res.verdict() {
        SignalVerdict::Success => Verdict::passed(res.line().unwrap_or_default()),
        SignalVerdict::Blocked { reason } | SignalVerdict::Failed { reason } => {
            Verdict::rejected(reason)
        }
        SignalVerdict::Missing { message } => Verdict::broken(message),
    }
}

/// Why the API still refused after every wait: a server that keeps failing (5xx,
/// overloaded, codex's "high demand") or a rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transient {
    ServerErrors,
    RateLimit,
}

impl Transient {
    fn next_step(self) -> String {
        match self {
            Transient::ServerErrors => {
                "the API kept answering with server errors past baton's backoff: try again later"
            }
            Transient::RateLimit => {
                "the API's rate limit outlasted baton's backoff: wait until it resets"
            }
        }
        .to_string()
    }
}

fn transient_cause(error: Option<&str>) -> Transient {
    static SERVER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b(50[0-4]|529)\b|server error|internal error|overloaded|bad gateway|service unavailable|unavailable|high demand",
        )
        .expect("regex")
    });
    match error {
        Some(e) if SERVER.is_match(e) && !e.contains("429") => Transient::ServerErrors,
        _ => Transient::RateLimit,
    }
}

#[cfg(test)]
mod transient_tests {
    use super::{QUOTA_MARGIN_SECS, Transient, quota_wait, transient_cause};

    #[test]
    fn a_spent_limit_is_waited_out_until_its_reset_and_a_margin() {
        let now = 1_000_000;
        // A reset an hour on: that hour and the margin.
        assert_eq!(
            quota_wait(Some(now + 3600), now, 30),
            3600 + QUOTA_MARGIN_SECS as u64
        );
        // A reset just passed (a message in whole minutes): what is left of the margin.
        assert_eq!(
            quota_wait(Some(now - 20), now, 30),
            QUOTA_MARGIN_SECS as u64 - 20
        );
        // Long passed: no wait at all, never a negative one.
        assert_eq!(quota_wait(Some(now - 7200), now, 30), 0);
        // No reset in the message: the backoff given.
        assert_eq!(quota_wait(None, now, 30), 30);
    }

    #[test]
    fn a_server_that_keeps_failing_is_not_called_a_rate_limit() {
        for e in [
            "unexpected status 500 Internal Server Error: boom",
            "API Error: 529 {\"type\":\"overloaded_error\"}",
            "stream error: 503 Service Unavailable",
            "the API answers with server errors (codex gave up after 5 reconnects: \"We’re currently experiencing high demand, which may cause temporary errors.\")",
        ] {
            assert_eq!(transient_cause(Some(e)), Transient::ServerErrors, "{e}");
        }
        assert!(
            Transient::ServerErrors
                .next_step()
                .contains("server errors")
        );
        for e in [
            Some("429 Too Many Requests: rate limit"),
            Some("rate_limit_exceeded"),
            None,
        ] {
            assert_eq!(transient_cause(e), Transient::RateLimit, "{e:?}");
        }
    }
}
