//! Being told (`[notify]`): a run's events that someone away from the terminal needs — a story
//! failed (with its reason: the failing test, when the checks named it), the run paused (why,
//! and the command that continues it), the run ended (counts, cost, report) — go to the
//! user's command as one JSON object on stdin, and what waits for a human is listed in
//! `.baton/ATTENTION.md`. A notifier that fails or hangs is stopped (bounded), said on stderr,
//! and never changes the run.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Time a notifier command may take when `[notify] timeout_secs` does not say.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Notifier {
    command: Option<String>,
    timeout: Duration,
    /// `.baton/ATTENTION.md`.
    attention: PathBuf,
    /// Lines of what waits for a human, this run.
    waiting: std::sync::Mutex<Vec<String>>,
}

impl Notifier {
    pub fn new(project: &baton_engine::config::Project) -> Notifier {
        let cfg = &project.config.notify;
        Notifier {
            command: cfg.command.clone().filter(|c| !c.trim().is_empty()),
            timeout: cfg
                .timeout_secs
                .map_or(DEFAULT_TIMEOUT, Duration::from_secs),
            attention: project.local_dir().join("ATTENTION.md"),
            waiting: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Tell the user's command of `event` (its name) with `fields`; `text` is one line for a
    /// person (Slack, ntfy and the like show it). `waits`: the event asks a human to act, and
    /// goes into ATTENTION.md.
    pub fn send(&self, event: &str, text: &str, mut fields: Value, waits: bool) {
        if waits {
            baton_engine::lock(&self.waiting).push(text.to_string());
        }
        let Some(cmd) = &self.command else {
            return;
        };
        if let Some(o) = fields.as_object_mut() {
            o.insert("event".into(), Value::String(event.into()));
            o.insert("text".into(), Value::String(text.into()));
        }
        baton_context::mask::redact::redact_json(&mut fields);
        if let Err(why) = run(cmd, &fields.to_string(), self.timeout) {
            eprintln!("baton: warning: the [notify] command did not take the {event} event: {why}");
        }
    }

    /// Write `.baton/ATTENTION.md` with what this run left waiting for a human, or remove the
    /// one an earlier run left when nothing waits now.
    pub fn write_attention(&self, run_id: &str) {
        let waiting = baton_engine::lock(&self.waiting).clone();
        if waiting.is_empty() {
            let _ = std::fs::remove_file(&self.attention);
            return;
        }
        let mut text = format!(
            "# Waiting for you\n\nRun {run_id}, {}:\n\n",
            baton_core::ids::now()
        );
        for w in &waiting {
            text.push_str(&format!("- {w}\n"));
        }
        let written = baton_core::fs::own_file(&self.attention)
            .and_then(|_| baton_core::fs::write_atomic(&self.attention, text.as_bytes()));
        if let Err(e) = written {
            eprintln!(
                "baton: warning: {} was not written: {e}",
                self.attention.display()
            );
        }
    }
}

/// `sh -c CMD` with `input` on stdin, stopped after `timeout` (its process group).
fn run(cmd: &str, input: &str, timeout: Duration) -> Result<(), String> {
    let mut child = Command::new("sh");
    child
        .args(["-c", cmd])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut child, 0);
    let mut child = child.spawn().map_err(|e| format!("cannot start it: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input must not hold the run up either.
        let _ = stdin.write_all(input.as_bytes());
    }
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) if s.success() => return Ok(()),
            Ok(Some(s)) => return Err(format!("it failed ({s})")),
            Ok(None) if started.elapsed() >= timeout => {
                baton_core::process::signal_group(child.id() as i32, libc::SIGKILL);
                let _ = child.wait();
                return Err(format!(
                    "it took over {} s and was stopped",
                    timeout.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// A reporter that passes every event on, and tells the notifier of a story that failed.
pub struct Notifying<'a> {
    pub inner: &'a dyn baton_engine::events::Reporter,
    pub notifier: &'a Notifier,
    pub run_id: &'a str,
}

impl baton_engine::events::Reporter for Notifying<'_> {
    fn report(&self, e: &baton_engine::events::RunEvent) {
        self.inner.report(e);
        if let baton_engine::events::RunEvent::SubjectFinished {
            subject,
            result: baton_engine::subject::SubjectResult::Failed,
            reason,
            ..
        } = e
        {
            self.notifier.send(
                "story_failed",
                &format!("{} failed: {reason}", subject.label()),
                serde_json::json!({"run_id": self.run_id, "subject": subject, "reason": reason}),
                true,
            );
        }
    }
}
