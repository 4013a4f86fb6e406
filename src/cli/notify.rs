//! Being told (`[notify]`): a run's events that someone away from the terminal needs — a story
//! failed (with its reason: the failing test, when the checks named it), the run paused (why,
//! and the command that continues it), the run ended (counts, cost, report) — go to the
//! user's command as one JSON object on stdin, to a webhook as the same JSON, to the desktop,
//! and what waits for a human is listed in `.baton/ATTENTION.md`. A notifier that fails or hangs is stopped (bounded), said on stderr,
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
    webhook: Option<String>,
    desktop: bool,
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
            webhook: cfg.webhook.clone().filter(|c| !c.trim().is_empty()),
            desktop: cfg.desktop,
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
        if self.command.is_none() && self.webhook.is_none() && !self.desktop {
            return;
        }
        if let Some(o) = fields.as_object_mut() {
            o.insert("event".into(), Value::String(event.into()));
            o.insert("text".into(), Value::String(text.into()));
        }
        baton_context::mask::redact::redact_json(&mut fields);
        if let Some(cmd) = &self.command
            && let Err(why) = run("sh", &["-c", cmd], &fields.to_string(), self.timeout)
        {
            eprintln!("baton: warning: the [notify] command did not take the {event} event: {why}");
        }
        if let Some(url) = &self.webhook {
            // Slack shows `text`, Discord `content`, ntfy's JSON form `message`.
            let line = fields["text"].clone();
            if let Some(o) = fields.as_object_mut() {
                o.insert("content".into(), line.clone());
                o.insert("message".into(), line);
            }
            if let Err(why) = post(url, &fields.to_string(), self.timeout) {
                // The URL is not said: a webhook's URL is its secret.
                eprintln!(
                    "baton: warning: the [notify] webhook did not take the {event} event: {why}"
                );
            }
        }
        if self.desktop {
            let line = fields["text"].as_str().unwrap_or(text).to_string();
            if let Err(why) = desktop(&line, self.timeout) {
                eprintln!("baton: warning: no desktop notification of the {event} event: {why}");
            }
        }
    }

    /// The run stopped before its end (paused, interrupted, waiting at a gate): `event` with
    /// why and the command that goes on, and ATTENTION.md written, for a human must act.
    pub fn stopped(&self, event: &str, run_id: &str, why: &str, next: &str) {
        self.send(
            event,
            &format!("run {run_id} {why}; continue: {next}"),
            serde_json::json!({"run_id": run_id, "reason": why, "resume": next}),
            true,
        );
        self.write_attention(run_id);
    }

    /// The run ended: `run_ended` with `text` and its counts (`fields`), and ATTENTION.md
    /// brought up to date.
    pub fn ended(&self, run_id: &str, text: &str, mut fields: Value) {
        if let Some(o) = fields.as_object_mut() {
            o.insert("run_id".into(), Value::String(run_id.into()));
        }
        self.send("run_ended", text, fields, false);
        self.write_attention(run_id);
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

/// POST `body` (JSON) to `url` with curl: no TLS stack in baton for one request per event,
/// and curl is where webhooks are used.
fn post(url: &str, body: &str, timeout: Duration) -> Result<(), String> {
    if which("curl").is_none() {
        return Err("curl is not installed".into());
    }
    let secs = timeout.as_secs().max(1).to_string();
    run(
        "curl",
        &[
            "-fsS",
            "--max-time",
            &secs,
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--data-binary",
            "@-",
            "--",
            url,
        ],
        body,
        timeout + Duration::from_secs(1),
    )
}

/// One desktop notification: notify-send (freedesktop), else osascript (macOS); the text goes
/// as an argument, never through a shell or a script's source.
fn desktop(text: &str, timeout: Duration) -> Result<(), String> {
    if which("notify-send").is_some() {
        return run(
            "notify-send",
            &["--app-name=baton", "--", "baton", text],
            "",
            timeout,
        );
    }
    if which("osascript").is_some() {
        return run(
            "osascript",
            &[
                "-e",
                "on run argv",
                "-e",
                "display notification (item 1 of argv) with title \"baton\"",
                "-e",
                "end run",
                text,
            ],
            "",
            timeout,
        );
    }
    Err("neither notify-send nor osascript is installed".into())
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// `program ARGS` with `input` on stdin, stopped after `timeout` (its process group).
fn run(program: &str, args: &[&str], input: &str, timeout: Duration) -> Result<(), String> {
    let mut child = Command::new(program);
    child
        .args(args)
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

/// A reporter that passes every event on, and tells the notifier of a story (`story_failed`),
/// a verify item (`item_failed`) or an epic's own phases (`epic_failed`) that failed.
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
                &format!("{}_failed", subject.kind.word()),
                &format!("{} failed: {reason}", subject.label()),
                serde_json::json!({"run_id": self.run_id, "subject": subject, "reason": reason}),
                true,
            );
        }
    }
}
