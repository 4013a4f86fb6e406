//! Gemini CLI: `gemini --output-format json`, prompt on stdin (headless when stdin is not a
//! TTY; `--prompt=` with [`PromptVia::Argv`]). Prints one JSON document
//! `{session_id, response, stats{models{<name>{tokens{…}}}}, error?{type, message, code}}`,
//! possibly pretty-printed, so the whole stdout (bounded) is parsed at the end; an error
//! document goes to **stderr** instead (checked with 0.61.0). Exit codes: 41 auth, 42 input,
//! 44 sandbox, 52 config, 53 turn limit, 54 tool error, 55 untrusted folder, 130 SIGINT.
//! Always `--skip-trust` (else exit 55 in a folder never trusted interactively) and
//! `GEMINI_CLI_TRUST_WORKSPACE=true` (the project's settings count only in a trusted folder);
//! `--allowed-tools` with [`GEMINI_ALLOWED_TOOLS`] for a phase that edits.

use serde_json::Value;

use super::outage::{Streak, server_down};
use super::{
    Access, AgentRequest, AgentSpec, FailureKind, OutputParser, Parsed, PromptVia, TEXT_TAIL_BYTES,
    Usage, classify_api_error, tail_str, unsupported,
};
use crate::error::Result;

/// gemini takes MCP servers only from its settings files, and a system-level file (which
/// `GEMINI_CLI_SYSTEM_DEFAULTS_PATH` could name) only when root owns it and every folder above
/// it. So under `baton run` gemini gets a home of the run's own (`GEMINI_CLI_HOME`, in the run's
/// folder): its `.gemini` links to each entry of the user's (credentials, history, extensions,
/// memory, its chats baton reads the context from: gemini reads and writes the user's own),
/// beside a settings.json that is the user's with baton's server added. `trust`: its tools (token counts, masking, the task store) need
/// no confirmation, which a headless gemini cannot ask for. The user's settings are read,
/// never written. `None` (gemini runs as the user has it): the user's settings already name a
/// `baton` server or are not JSON, or the run's folder cannot be made.
pub(super) fn run_home(run_dir: &std::path::Path, baton: &str) -> Option<(String, String)> {
    let var = &crate::wiring::process_env;
    let user = crate::wiring::config_dir(crate::wiring::HookAgent::Gemini, var)?;
    let user_home = var("HOME")
        .filter(|h| !h.is_empty())
        .map(std::path::PathBuf::from);
    let home = run_dir.join("gemini-home");
    make_run_home(&user, user_home.as_deref(), &home, baton)?;
    Some(("GEMINI_CLI_HOME".to_string(), home.display().to_string()))
}

/// [`run_home`] with the user's `.gemini` folder and home given: `home/.gemini` made (again,
/// idempotently) from `user`.
fn make_run_home(
    user: &std::path::Path,
    user_home: Option<&std::path::Path>,
    home: &std::path::Path,
    baton: &str,
) -> Option<()> {
    let settings = user.join("settings.json");
    let mut doc = match std::fs::read(&settings) {
        Ok(bytes) => serde_json::from_slice::<Value>(&bytes)
            .ok()
            .filter(Value::is_object)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(_) => return None,
    };
    if doc.pointer("/mcpServers/baton").is_some() {
        return None;
    }
    let mut server = crate::wiring::mcp_server(baton);
    server["trust"] = Value::Bool(true);
    doc.as_object_mut()?
        .entry("mcpServers")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()?
        .insert("baton".into(), server);
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).ok()?;
    let link = |from: &std::path::Path, to: std::path::PathBuf| {
        if std::fs::symlink_metadata(&to).is_err() {
            let _ = std::os::unix::fs::symlink(from, to);
        }
    };
    // What gemini makes on its first run goes to the user's folder as it would have: the
    // folders made there first (gemini cannot make one through a link to nothing), its files
    // linked even before they exist (gemini's write then creates the user's).
    for d in ["tmp", "history"] {
        let _ = std::fs::create_dir_all(user.join(d));
    }
    for f in [
        "projects.json",
        "installation_id",
        "oauth_creds.json",
        "google_accounts.json",
        "trustedFolders.json",
    ] {
        link(&user.join(f), dir.join(f));
    }
    for entry in std::fs::read_dir(user).into_iter().flatten().flatten() {
        if entry.file_name() != "settings.json" {
            link(&entry.path(), dir.join(entry.file_name()));
        }
    }
    // gemini also reads `~/.env` (after the project's and `~/.gemini/.env`).
    if let Some(h) = user_home.map(|h| h.join(".env")).filter(|e| e.exists()) {
        link(&h, home.join(".env"));
    }
    baton_core::fs::write_atomic(&dir.join("settings.json"), doc.to_string().as_bytes()).ok()
}

/// Larger JSON output is not parsed (the log still has it).
const MAX_DOC: usize = 16 * 1024 * 1024;

/// Requests that could not be sent before baton stops gemini as offline. Without a network
/// gemini 0.61.0 prints "Attempt N failed. Retrying with backoff... Error: exception TypeError:
/// fetch failed sending request" (and a stack) on stderr, waiting longer each time — the third
/// at ~20 s, the fourth past a minute — where the phase's timeout would be the only end.
const OFFLINE_ATTEMPTS: u32 = 3;

/// Watches gemini's stderr for requests that cannot even be sent (no network), as codex's
/// parser does with its reconnect events: a rate limit or a server error is not this. Only
/// one request's attempts in a row count (gemini numbers them from 1 for every request): a
/// long session's brief outages, each over at the next attempt, do not add up.
///
/// A 429 gemini retries itself too, with its own backoff (about four minutes of attempts, not
/// the API's `retry-after`): still failing after [`crate::codex::RATE_LIMIT_PATIENCE`], gemini
/// is stopped and baton's backoff, which can pause the run, takes over.
pub(super) struct Offline {
    /// Attempts of the current request that failed to be sent, all in a row from the first.
    attempts: u32,
    last: String,
    /// When the first of those attempts was reported given up: a minute or more between the
    /// first and the last is a server that does not answer, not a network that is not there.
    first_failed: Option<std::time::Instant>,
    /// The current run of 429 attempts.
    rate_limited: Option<Streak>,
    /// Attempts answered with a server error (5xx) in a row, given [`AgentSpec::api_patience`].
    server_errors: Option<Streak>,
    patience: std::time::Duration,
}

impl Default for Offline {
    fn default() -> Self {
        Offline::new(super::DEFAULT_API_PATIENCE)
    }
}

/// Between the first and the last failed send of a request, this long or more: gemini waited
/// for an answer each time (about a minute), the server took the request and said nothing.
const SLOW_FAILURES: std::time::Duration = std::time::Duration::from_secs(60);

impl OutputParser for Offline {
    fn line(&mut self, line: &str) {
        self.line_at(line, std::time::Instant::now());
    }

    fn stop(&self) -> bool {
        self.attempts >= OFFLINE_ATTEMPTS
            || self.rate_limit_outlasts()
            || Streak::outlasts(
                &self.server_errors,
                self.patience,
                std::time::Instant::now(),
            )
    }

    fn finish(&mut self) -> Parsed {
        if self.rate_limit_outlasts()
            && let Some(streak) = self.rate_limited.take()
        {
            return Parsed {
                failure: Some((
                    FailureKind::Api,
                    format!(
                        "rate limited: the API answered 429 Too Many Requests (\"{}\")",
                        streak.last()
                    ),
                )),
                ..Parsed::default()
            };
        }
        if Streak::outlasts(
            &self.server_errors,
            self.patience,
            std::time::Instant::now(),
        ) && let Some(streak) = &self.server_errors
        {
            return Parsed {
                failure: Some(server_down("gemini", streak, None, self.patience)),
                ..Parsed::default()
            };
        }
        let slow = self
            .first_failed
            .is_some_and(|t| t.elapsed() >= SLOW_FAILURES);
        Parsed {
            failure: (self.attempts >= OFFLINE_ATTEMPTS).then(|| {
                let last = tail_str(&self.last, 300);
                if slow {
                    (
                        FailureKind::ApiDown,
                        format!(
                            "no answer from the model API: gemini waited on {} requests in a row, about a minute each, and got nothing (\"{last}\")",
                            self.attempts
                        ),
                    )
                } else {
                    (
                        FailureKind::Network,
                        format!(
                            "no network: gemini could not send a request {} times (\"{last}\")",
                            self.attempts
                        ),
                    )
                }
            }),
            ..Parsed::default()
        }
    }
}

impl Offline {
    pub(super) fn new(patience: std::time::Duration) -> Offline {
        Offline {
            attempts: 0,
            last: String::new(),
            first_failed: None,
            rate_limited: None,
            server_errors: None,
            patience,
        }
    }

    pub(super) fn line_at(&mut self, line: &str, now: std::time::Instant) {
        let Some(rest) = line.strip_prefix("Attempt ") else {
            return;
        };
        if line.contains("status 429") || line.contains("429 error") {
            Streak::extend(&mut self.rate_limited, now, line);
        } else {
            self.rate_limited = None;
        }
        // "Attempt 2 failed with status 500. Retrying with backoff... _ApiError: {…}"
        if line.contains("failed with status 5") {
            Streak::extend(&mut self.server_errors, now, line);
        } else {
            self.server_errors = None;
        }
        let n = rest.split(' ').next().and_then(|n| n.parse::<u32>().ok());
        self.attempts = match n {
            Some(n) if line.contains("fetch failed") && (n == 1 || n == self.attempts + 1) => n,
            // Another failure (a rate limit, a server error): the request was sent.
            _ => 0,
        };
        match self.attempts {
            0 => self.first_failed = None,
            1 => self.first_failed = Some(now),
            _ => {}
        }
        if self.attempts > 0 {
            self.last = line.trim_end().to_string();
        }
    }

    fn rate_limit_outlasts(&self) -> bool {
        Streak::outlasts(
            &self.rate_limited,
            crate::codex::RATE_LIMIT_PATIENCE,
            std::time::Instant::now(),
        )
    }
}

pub(super) fn args(spec: &AgentSpec, req: &AgentRequest) -> Result<Vec<String>> {
    for (set, what) in [
        (spec.max_turns.is_some(), "max_turns"),
        (spec.append_system_prompt.is_some(), "append_system_prompt"),
        (spec.sandbox.is_some(), "sandbox"),
        (!spec.disallowed_tools.is_empty(), "disallowed_tools"),
    ] {
        if set {
            return Err(unsupported(spec, what));
        }
    }
    // Headless in an untrusted folder gemini exits 55: baton runs it in the project it was
    // asked to work on, so the folder is trusted for this session.
    let mut a: Vec<String> = vec![
        "--output-format".into(),
        "json".into(),
        "--skip-trust".into(),
    ];
    if let Some(m) = &spec.model {
        a.extend(["--model".into(), m.clone()]);
    }
    // `--yolo` and `--approval-mode` exclude each other: skip_permissions replaces the default.
    let mode = spec.permission_mode.clone().or_else(|| {
        (spec.access == Access::Edit && !spec.skip_permissions).then(|| "auto_edit".to_string())
    });
    if let Some(m) = mode {
        a.extend(["--approval-mode".into(), m]);
    }
    if spec.skip_permissions {
        a.push("--yolo".into());
    }
    let tools: Vec<String> = match &spec.allowed_tools {
        Some(t) => t.clone(),
        None if spec.access == Access::Edit && !spec.skip_permissions => {
            super::default_allowed_tools(super::AgentKind::Gemini)
        }
        None => Vec::new(),
    };
    if !tools.is_empty() {
        // `=`: one value, split on commas by gemini.
        a.push(format!("--allowed-tools={}", tools.join(",")));
    }
    if let Some(id) = &req.resume {
        a.extend(["--resume".into(), id.clone()]);
    }
    a.extend(spec.args.iter().cloned());
    if spec.prompt_via == PromptVia::Argv {
        // `=` form: a prompt starting with `-` stays the option's value.
        a.push(format!("--prompt={}", req.prompt));
    }
    Ok(a)
}

/// The documented exit codes.
pub(super) fn exit_failure(code: i32) -> FailureKind {
    match code {
        41 => FailureKind::Auth,
        42 => FailureKind::InvalidInput,
        44 => FailureKind::Sandbox,
        52 => FailureKind::Config,
        55 => FailureKind::Untrusted,
        53 => FailureKind::TurnLimit,
        54 => FailureKind::Tool,
        130 => FailureKind::Interrupted,
        1 => FailureKind::Api,
        _ => FailureKind::ExitCode,
    }
}

/// The failure in a document's `error: {type, message, code}`.
fn error_of(v: &Value) -> Option<(FailureKind, String)> {
    let e = v.get("error").filter(|e| !e.is_null())?;
    let msg = e
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("gemini reported an error")
        .to_string();
    // `code` is gemini's exit code for its own errors, but the API's HTTP status for an API
    // error (401, 429, 500): the two are told apart by range, never looked up in one table.
    let kind = match e.get("code").and_then(Value::as_i64) {
        Some(401 | 403) => FailureKind::Auth,
        Some(400..=599) => classify_api_error(&msg),
        Some(c) => i32::try_from(c)
            .ok()
            .map(exit_failure)
            .filter(|k| *k != FailureKind::ExitCode)
            .unwrap_or(FailureKind::Api),
        None => classify_api_error(&msg),
    };
    Some((kind, tail_str(&msg, 4096)))
}

/// The error document gemini `-o json` writes to **stderr** (`{session_id, error:{type,
/// message, code}}`, pretty-printed, maybe after other lines): the last one in `stderr`.
pub(super) fn error_doc(stderr: &str) -> Option<(FailureKind, String)> {
    let starts = std::iter::once(0)
        .chain(stderr.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| stderr[i..].starts_with('{'));
    let mut found = None;
    for i in starts {
        // The first value from here; what follows it (a stack trace) is ignored.
        let mut de = serde_json::Deserializer::from_str(&stderr[i..]).into_iter::<Value>();
        if let Some(Ok(v)) = de.next()
            && let Some(f) = error_of(&v)
        {
            found = Some(f);
        }
    }
    found
}

#[derive(Default)]
pub(super) struct Parser {
    doc: String,
    too_big: bool,
}

impl OutputParser for Parser {
    /// gemini prints its one document at the end: until then, it waits on its API whenever
    /// no tool's process runs.
    fn waiting_on_model(&self) -> crate::silence::Waiting {
        if self.doc.is_empty() && !self.too_big {
            crate::silence::Waiting::UnlessATool
        } else {
            crate::silence::Waiting::No
        }
    }

    fn line(&mut self, line: &str) {
        if self.too_big {
            return;
        }
        if self.doc.len() + line.len() > MAX_DOC {
            self.too_big = true;
            self.doc = String::new();
            return;
        }
        self.doc.push_str(line);
        self.doc.push('\n');
    }

    fn finish(&mut self) -> Parsed {
        let doc = std::mem::take(&mut self.doc);
        // Noise before the document (a warning line) is skipped: start at the first line
        // that opens an object.
        let v: Option<Value> = serde_json::from_str(&doc).ok().or_else(|| {
            let start = doc
                .match_indices('\n')
                .map(|(i, _)| i + 1)
                .find(|&i| doc[i..].starts_with('{'))?;
            serde_json::from_str(&doc[start..]).ok()
        });
        let Some(v) = v.filter(Value::is_object) else {
            return Parsed::default();
        };
        let mut usage = Usage::default();
        let mut model = None;
        if let Some(models) = v.pointer("/stats/models").and_then(Value::as_object) {
            for (name, m) in models {
                let t = m.get("tokens");
                let n = |k: &str| t.and_then(|t| t.get(k)).and_then(Value::as_u64);
                let cached = n("cached").unwrap_or(0);
                // Newer releases give `input` (uncached); older only `prompt` (which includes
                // the cached part).
                let input =
                    n("input").unwrap_or_else(|| n("prompt").unwrap_or(0).saturating_sub(cached));
                usage.add(&Usage {
                    input,
                    cache_creation: 0,
                    cache_read: cached,
                    output: n("candidates")
                        .unwrap_or(0)
                        .saturating_add(n("thoughts").unwrap_or(0)),
                });
                model.get_or_insert_with(|| name.clone());
            }
        }
        let failure = error_of(&v);
        Parsed {
            text: v
                .get("response")
                .and_then(Value::as_str)
                .map(|t| tail_str(t, TEXT_TAIL_BYTES)),
            session_id: v
                .get("session_id")
                .and_then(Value::as_str)
                .map(str::to_string),
            usage,
            model,
            saw_result: v.get("response").is_some() || failure.is_some(),
            failure,
            ..Parsed::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_limit_gemini_keeps_retrying_is_stopped_after_the_patience() {
        let mut w = Offline::default();
        let line = "Attempt 1 failed with status 429. Retrying with backoff... _ApiError: {}";
        w.line(line);
        assert!(!w.stop(), "a short 429 is gemini's to retry");
        // Another failure, or a sent request, ends the run of 429s.
        w.line("Attempt 2 failed with status 500. Retrying with backoff...");
        assert!(w.rate_limited.is_none());
        let since = std::time::Instant::now()
            .checked_sub(crate::codex::RATE_LIMIT_PATIENCE * 2)
            .unwrap();
        w.line_at(line, since);
        w.line(line);
        assert!(w.stop());
        let (kind, msg) = w.finish().failure.unwrap();
        assert_eq!(kind, FailureKind::Api);
        assert!(crate::is_transient(&msg), "{msg}");
    }

    #[test]
    fn noise_before_document_and_old_token_fields() {
        let mut p = Parser::default();
        for l in [
            "Loaded cached credentials.",
            "{",
            r#"  "response": "hi","#,
            r#"  "stats": {"models": {"gemini-2.5-pro": {"tokens": {"prompt": 100, "cached": 40, "candidates": 5, "thoughts": 2}}}}"#,
            "}",
        ] {
            p.line(l);
        }
        let r = p.finish();
        assert_eq!(r.text.as_deref(), Some("hi"));
        assert_eq!(
            r.usage,
            Usage {
                input: 60,
                cache_creation: 0,
                cache_read: 40,
                output: 7
            }
        );
        assert_eq!(r.model.as_deref(), Some("gemini-2.5-pro"));
    }

    #[test]
    fn argv_skips_trust_and_auto_edits_by_default() {
        use crate::{AgentKind, AgentRequest, AgentSpec};
        let req = AgentRequest::new("p", ".", ".", "n");
        let mut spec = AgentSpec::new(AgentKind::Gemini);
        assert_eq!(
            args(&spec, &req).unwrap(),
            [
                "--output-format",
                "json",
                "--skip-trust",
                "--approval-mode",
                "auto_edit",
                "--allowed-tools=run_shell_command(git status),run_shell_command(git diff),\
                 run_shell_command(git log),run_shell_command(git show),run_shell_command(baton)"
            ]
        );
        spec.allowed_tools = Some(vec!["run_shell_command(cargo test)".into()]);
        assert_eq!(
            args(&spec, &req).unwrap()[5],
            "--allowed-tools=run_shell_command(cargo test)"
        );
        spec.allowed_tools = None;
        spec.access = Access::ReadOnly;
        assert_eq!(
            args(&spec, &req).unwrap(),
            ["--output-format", "json", "--skip-trust"]
        );
        spec.access = Access::Edit;
        spec.skip_permissions = true;
        assert_eq!(
            args(&spec, &req).unwrap(),
            ["--output-format", "json", "--skip-trust", "--yolo"]
        );
    }

    #[test]
    fn slow_failures_are_no_answer_and_server_errors_past_the_patience_are_named() {
        let t0 = std::time::Instant::now() - std::time::Duration::from_secs(600);
        let at = |s: u64| t0 + std::time::Duration::from_secs(s);
        // gemini 0.61 against a server that takes each request and never answers: "fetch
        // failed" about a minute after each.
        let failed = |n: u32| {
            format!(
                "Attempt {n} failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request"
            )
        };
        let mut w = Offline::default();
        for (n, s) in [(1, 60), (2, 125), (3, 190)] {
            w.line_at(&failed(n), at(s));
        }
        assert!(w.stop());
        let (kind, msg) = w.finish().failure.unwrap();
        assert_eq!(kind, FailureKind::ApiDown);
        assert!(msg.starts_with("no answer from the model API"), "{msg}");
        // Failures seconds apart (the same words) are a network that is not there.
        let mut w = Offline::default();
        let now = std::time::Instant::now();
        for n in 1..=3 {
            w.line_at(&failed(n), now);
        }
        assert_eq!(w.finish().failure.unwrap().0, FailureKind::Network);
        // A server answering 500 to every attempt: stopped once that outlasts the patience.
        let mut w = Offline::new(std::time::Duration::from_secs(100));
        let five = |n: u32| {
            format!(
                r#"Attempt {n} failed with status 500. Retrying with backoff... _ApiError: {{"error":{{"code":500,"message":"internal","status":"INTERNAL"}}}}"#
            )
        };
        w.line_at(&five(1), at(0));
        w.line_at(&five(2), at(50));
        assert!(!Streak::outlasts(&w.server_errors, w.patience, at(99)));
        w.line_at(&five(3), at(105));
        assert!(w.stop());
        let (kind, msg) = w.finish().failure.unwrap();
        assert_eq!(kind, FailureKind::ApiDown);
        assert!(
            msg.starts_with(
                "the API answers 500 (a server error) to every request: gemini retried 3 times"
            ),
            "{msg}"
        );
    }

    #[test]
    fn a_runs_gemini_home_links_the_users_and_adds_batons_server_to_a_copy_of_their_settings() {
        let tmp = tempfile::tempdir().unwrap();
        let user = tmp.path().join("u/.gemini");
        std::fs::create_dir_all(user.join("tmp")).unwrap();
        let settings = r#"{"security":{"auth":{"selectedType":"oauth-personal"}},"mcpServers":{"db":{"command":"db-mcp"}}}"#;
        std::fs::write(user.join("settings.json"), settings).unwrap();
        std::fs::write(user.join("oauth_creds.json"), "{}").unwrap();
        std::fs::write(tmp.path().join("u/.env"), "X=1").unwrap();
        let home = tmp.path().join("run/gemini-home");
        for _ in 0..2 {
            make_run_home(&user, Some(&tmp.path().join("u")), &home, "/opt/baton").unwrap();
        }
        let mine: Value =
            serde_json::from_slice(&std::fs::read(home.join(".gemini/settings.json")).unwrap())
                .unwrap();
        assert_eq!(mine["security"]["auth"]["selectedType"], "oauth-personal");
        assert_eq!(mine["mcpServers"]["db"]["command"], "db-mcp");
        assert_eq!(
            mine["mcpServers"]["baton"],
            serde_json::json!({"command": "/opt/baton", "args": ["mcp"], "trust": true})
        );
        for (name, to) in [
            (".gemini/oauth_creds.json", user.join("oauth_creds.json")),
            (".gemini/tmp", user.join("tmp")),
            (".gemini/history", user.join("history")),
            // Not there yet: gemini's first write makes the user's.
            (".gemini/projects.json", user.join("projects.json")),
            (".env", tmp.path().join("u/.env")),
        ] {
            assert_eq!(std::fs::read_link(home.join(name)).unwrap(), to, "{name}");
        }
        // The user's own settings, as they were.
        assert_eq!(
            std::fs::read_to_string(user.join("settings.json")).unwrap(),
            settings
        );
        // Their own baton server, or settings gemini would read and baton cannot: left alone.
        std::fs::write(
            user.join("settings.json"),
            r#"{"mcpServers":{"baton":{"command":"b"}}}"#,
        )
        .unwrap();
        assert!(make_run_home(&user, None, &tmp.path().join("h2"), "baton").is_none());
        std::fs::write(user.join("settings.json"), "{ // a comment\n}").unwrap();
        assert!(make_run_home(&user, None, &tmp.path().join("h3"), "baton").is_none());
    }

    #[test]
    fn gemini_waits_on_its_api_until_its_document_unless_a_tool_runs() {
        use crate::silence::Waiting;
        let mut p = Parser::default();
        assert_eq!(p.waiting_on_model(), Waiting::UnlessATool);
        p.line("{\"session_id\": \"s\",");
        assert_eq!(p.waiting_on_model(), Waiting::No, "printing its answer");
    }

    #[test]
    fn offline_is_three_requests_that_could_not_be_sent() {
        let stderr = include_str!("../../../tests/fixtures/agents/gemini/offline.stderr");
        let mut w = Offline::default();
        let mut stops = vec![];
        for line in stderr.lines() {
            w.line(line);
            stops.push(w.stop());
        }
        // Stopped at the third attempt's line, not before.
        assert_eq!(
            stops.iter().filter(|s| **s).count(),
            stops.len() - stops.iter().position(|s| *s).unwrap()
        );
        assert!(
            stderr
                .lines()
                .nth(stops.iter().position(|s| *s).unwrap())
                .unwrap()
                .starts_with("Attempt 3 failed")
        );
        let (kind, msg) = w.finish().failure.unwrap();
        assert_eq!(kind, FailureKind::Network);
        assert!(
            msg.starts_with(
                "no network: gemini could not send a request 3 times (\"Attempt 3 failed."
            ),
            "{msg}"
        );
        // Two attempts, or a rate limit, are not offline.
        let mut w = Offline::default();
        w.line("Attempt 1 failed with status 429. Retrying with backoff... ApiError: quota");
        for line in stderr.lines().take_while(|l| !l.starts_with("Attempt 3")) {
            w.line(line);
        }
        assert!(!w.stop());
        assert_eq!(w.finish().failure, None);
        // Outages of a long session, each over after one or two attempts, do not add up; nor
        // does a sent attempt between two unsent ones.
        let mut w = Offline::default();
        let unsent = |n: u32| {
            format!(
                "Attempt {n} failed. Retrying with backoff... Error: exception TypeError: fetch failed sending request"
            )
        };
        for n in [1, 2, 1, 1, 2, 1] {
            w.line(&unsent(n));
            w.line("    at async retryWithBackoff (file:///x.js:1:2)");
        }
        w.line(&unsent(2));
        w.line("Attempt 3 failed with status 503. Retrying with backoff... ApiError: unavailable");
        w.line(&unsent(4));
        assert!(!w.stop());
        // Three of one request in a row are.
        for n in [1, 2, 3] {
            w.line(&unsent(n));
        }
        assert!(w.stop());
    }

    #[test]
    fn error_document_on_stderr() {
        // gemini 0.61.0, empty HOME, 2026-11-23: exit 41, nothing on stdout.
        let stderr = include_str!("../../../tests/fixtures/agents/gemini/auth_error.stderr");
        let (kind, msg) = error_doc(stderr).unwrap();
        assert_eq!(kind, FailureKind::Auth);
        assert!(msg.starts_with("Please set an Auth method"), "{msg}");
        // After other lines, followed by a stack trace.
        let noisy = format!("Loaded cached credentials.\n{stderr}    at x (file:///a.js:1:2)\n");
        assert_eq!(error_doc(&noisy).unwrap().0, FailureKind::Auth);
        assert!(error_doc("{not json\nplain").is_none());
        assert_eq!(exit_failure(55), FailureKind::Untrusted);
        assert_eq!(exit_failure(44), FailureKind::Sandbox);
    }

    #[test]
    fn not_json_is_no_result() {
        let mut p = Parser::default();
        p.line("plain words");
        assert!(!p.finish().saw_result);
    }
}
