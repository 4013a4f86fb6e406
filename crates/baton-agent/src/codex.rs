//! OpenAI Codex: `codex exec --json [flags] -` (prompt on stdin), resume with
//! `codex exec --json [flags] resume <SESSION_ID> -`. JSON lines: `thread.started{thread_id}`,
//! `turn.completed{usage}`, `turn.failed{error{message}}`, `item.completed{item}`,
//! `error{message}`. The final text is the last `agent_message` item. No cost is reported.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::outage::{Streak, is_server_error};
use super::{
    Access, AgentRequest, AgentSpec, FailureKind, OutputParser, Parsed, PromptVia, TEXT_TAIL_BYTES,
    Usage, classify_api_error, is_network, tail_str, unsupported,
};
use crate::error::Result;

pub(super) fn args(spec: &AgentSpec, req: &AgentRequest) -> Result<Vec<String>> {
    if spec.max_turns.is_some() {
        return Err(unsupported(spec, "max_turns"));
    }
    if spec.append_system_prompt.is_some() {
        return Err(unsupported(spec, "append_system_prompt"));
    }
    if spec.permission_mode.is_some() {
        return Err(unsupported(spec, "permission_mode"));
    }
    let mut a: Vec<String> = vec!["exec".into(), "--json".into()];
    if let Some(m) = &spec.model {
        a.extend(["--model".into(), m.clone()]);
    }
    if spec.allowed_tools.as_ref().is_some_and(|t| !t.is_empty()) {
        return Err(unsupported(spec, "allowed_tools"));
    }
    if !spec.disallowed_tools.is_empty() {
        return Err(unsupported(spec, "disallowed_tools"));
    }
    // read-only is codex's default and blocks every edit. (`--full-auto` is gone since 0.169.)
    let sandbox = spec.sandbox.clone().or_else(|| {
        (spec.access == Access::Edit && !spec.skip_permissions)
            .then(|| "workspace-write".to_string())
    });
    if let Some(s) = sandbox {
        a.extend(["--sandbox".into(), s]);
    }
    if spec.skip_permissions {
        a.push("--dangerously-bypass-approvals-and-sandbox".into());
    }
    // ---- baton's MCP server for this run, its tools callable (codex refuses an MCP call that
    // "requires approval" when the approval policy is never, as `codex exec`'s is) ----
    a.extend(["-c".into(), mcp_override(&crate::wiring::baton_program())]);
    // ---- end of baton's MCP server ----
    a.extend(spec.args.iter().cloned());
    // Flags go before `resume`: codex requires them to be given again on resume.
    if let Some(id) = &req.resume {
        a.extend(["resume".into(), id.clone()]);
    }
    match spec.prompt_via {
        PromptVia::Stdin => a.push("-".into()),
        PromptVia::Argv => a.extend(["--".into(), req.prompt.clone()]),
    }
    Ok(a)
}

/// `mcp_servers.baton={…}` for `-c`: baton's server with its tools approved, nothing else.
fn mcp_override(baton: &str) -> String {
    let command = toml::Value::String(baton.to_string());
    format!(
        "mcp_servers.baton={{command={command},args=[\"mcp\"],default_tools_approval_mode=\"approve\"}}"
    )
}

/// No network: stop after this many "waiting for network" messages…
const WAITING_LIMIT: u32 = 3;
/// …or when reconnect messages still come this long after the first, with nothing else between
/// (codex 0.169 offline: "Reconnecting... 2/5" … "5/5" in 4 s, then "waiting for network" at
/// about 9, 17 and 30 s, forever).
const TROUBLE_WINDOW: Duration = Duration::from_secs(20);
/// How long a CLI may wait out a rate limit itself before baton stops it (a short
/// `retry-after` is over well before).
pub(super) const RATE_LIMIT_PATIENCE: Duration = Duration::from_secs(20);

#[derive(Default)]
pub(super) struct Parser {
    session_id: Option<String>,
    usage: Usage,
    turns: u32,
    last_message: Option<String>,
    turn_failed: Option<String>,
    /// An `error` event not followed by a completed turn.
    pending_error: Option<String>,
    /// First reconnect / no-network message since the last real event, their count of
    /// "waiting for network", the latest one.
    trouble_since: Option<Instant>,
    waiting: u32,
    network: Option<String>,
    /// Set when only reconnect messages came for too long, the API refused for a rate limit,
    /// or the model is not codex's.
    stop: bool,
    /// codex reconnecting after a 429, since when: it waits out the API's `retry-after` itself
    /// (an hour, for a spent quota). A short wait it gets over; one still going after
    /// [`RATE_LIMIT_PATIENCE`] is stopped, and baton's backoff, which can pause the run, takes
    /// over.
    rate_limited: Option<Streak>,
    /// From "Model metadata for `X` not found", and whether X is another vendor's model.
    unknown_model: Option<(String, bool)>,
    warnings: Vec<String>,
    /// Reconnects after server errors ("Reconnecting... 2/5 (We're currently experiencing
    /// high demand…)", codex's words for a 5xx): codex gives up after five, and the failure
    /// is named a server error, not a network or a rate limit.
    server_errors: Option<Streak>,
    /// Between `turn.started` and the turn's end: codex is working.
    in_turn: bool,
    /// Tool items of the model still running (`item.started`, not yet completed): codex is
    /// not waiting on its API meanwhile.
    in_flight: HashSet<String>,
}

/// The server errors codex reported, named as such: the status when its message gives one.
fn server_errors_named(message: &str) -> String {
    match super::outage::server_status(message) {
        Some(code) => format!("the API answers {code} (a server error)"),
        None => "the API answers with server errors".to_string(),
    }
}

fn msg(v: &Value) -> Option<String> {
    v.get("message").and_then(Value::as_str).map(str::to_string)
}

/// codex's reconnect message after the API refused for a rate limit ("Reconnecting... 1/5
/// (exceeded retry limit, last status: 429 Too Many Requests)").
fn is_rate_limit(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("429") || m.contains("too many requests") || m.contains("rate limit")
}

/// `X` of codex's "Model metadata for `X` not found".
fn unknown_model(message: &str) -> Option<String> {
    let rest = message.strip_prefix("Model metadata for `")?;
    let end = rest.find("` not found")?;
    Some(rest[..end].to_string())
}

/// A Claude or Gemini model name: codex can never run it.
fn foreign_model(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["claude", "sonnet", "opus", "haiku", "gemini"]
        .iter()
        .any(|f| n.contains(f))
}

fn model_message(model: &str, said: &str) -> String {
    format!(
        "codex does not know the model `{model}` (\"{said}\"): set a codex model (an OpenAI one) as this role's `model` in baton.toml [run.roles] or the workflow's [roles], or leave it unset for codex's default"
    )
}

impl Parser {
    /// A reconnect / no-network message at `now`.
    fn trouble(&mut self, message: String, now: Instant) {
        let since = *self.trouble_since.get_or_insert(now);
        if message.to_ascii_lowercase().contains("waiting for network") {
            self.waiting += 1;
        }
        self.network = Some(message);
        if self.waiting >= WAITING_LIMIT || now.duration_since(since) >= TROUBLE_WINDOW {
            self.stop = true;
        }
    }

    /// A real event: whatever reconnects came before were overcome.
    fn progress(&mut self) {
        self.rate_limited = None;
        self.trouble_since = None;
        self.waiting = 0;
        self.network = None;
    }

    pub(super) fn line_at(&mut self, line: &str, now: Instant) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        match v.get("type").and_then(Value::as_str) {
            Some("thread.started") => {
                self.session_id = v
                    .get("thread_id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            Some("turn.completed") => {
                let u = v.get("usage");
                let n = |k: &str| {
                    u.and_then(|u| u.get(k))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                // OpenAI counts cached tokens inside input_tokens; Usage keeps them apart.
                let cached = n("cached_input_tokens");
                self.usage.add(&Usage {
                    input: n("input_tokens").saturating_sub(cached),
                    cache_creation: 0,
                    cache_read: cached,
                    output: n("output_tokens"),
                });
                self.turns += 1;
                self.pending_error = None;
                self.in_turn = false;
                self.progress();
            }
            Some("turn.failed") => {
                let m = v
                    .get("error")
                    .and_then(msg)
                    .unwrap_or_else(|| "codex turn failed".into());
                self.turn_failed = Some(m);
                self.in_turn = false;
            }
            Some("turn.started") => self.in_turn = true,
            Some("error") => {
                let m = msg(&v).unwrap_or_else(|| "codex error".into());
                if is_server_error(&m) && !is_rate_limit(&m) {
                    if m.starts_with("Reconnecting") {
                        Streak::extend(&mut self.server_errors, now, &m);
                    }
                } else if is_rate_limit(&m) {
                    Streak::extend(&mut self.rate_limited, now, &m);
                } else if is_network(&m) {
                    self.trouble(m.clone(), now);
                }
                self.pending_error = Some(m);
            }
            Some("item.completed" | "item.started" | "item.updated") => {
                let Some(item) = v.get("item") else { return };
                // Older releases said `item_type` / `assistant_message`.
                let ty = item
                    .get("type")
                    .or_else(|| item.get("item_type"))
                    .and_then(Value::as_str);
                if ty == Some("error") {
                    // A warning item ("Model metadata for `sonnet` not found. Defaulting to
                    // fallback metadata…", "Falling back from WebSockets to HTTPS transport.
                    // stream disconnected…"): codex goes on.
                    let m = msg(item).unwrap_or_default();
                    if let Some(model) = unknown_model(&m) {
                        let foreign = foreign_model(&model);
                        self.warnings.push(format!("codex: {m}"));
                        // A Claude or Gemini name can never work: stop now.
                        self.stop |= foreign;
                        self.unknown_model = Some((model, foreign));
                    } else if is_network(&m) {
                        self.trouble(m, now);
                    }
                    return;
                }
                self.progress();
                self.server_errors = None;
                // The model's tools, not its own messages, reasoning or plan (a todo list is
                // open all turn long).
                let tool = matches!(
                    ty,
                    Some("command_execution" | "mcp_tool_call" | "file_change" | "web_search")
                );
                if let Some(id) = item.get("id").and_then(Value::as_str) {
                    match v.get("type").and_then(Value::as_str) {
                        Some("item.started") if tool => {
                            self.in_flight.insert(id.to_string());
                        }
                        Some("item.completed") => {
                            self.in_flight.remove(id);
                        }
                        _ => {}
                    }
                }
                if v.get("type").and_then(Value::as_str) == Some("item.completed")
                    && matches!(ty, Some("agent_message" | "assistant_message"))
                    && let Some(t) = item.get("text").and_then(Value::as_str)
                {
                    self.last_message = Some(tail_str(t, TEXT_TAIL_BYTES));
                }
            }
            _ => {}
        }
    }
}

impl OutputParser for Parser {
    fn line(&mut self, line: &str) {
        self.line_at(line, Instant::now());
    }

    fn waiting_on_model(&self) -> crate::silence::Waiting {
        (self.in_turn && self.in_flight.is_empty()).into()
    }

    fn stop(&self) -> bool {
        self.stop || Streak::outlasts(&self.rate_limited, RATE_LIMIT_PATIENCE, Instant::now())
    }

    fn finish(&mut self) -> Parsed {
        // codex's own verdict, when it gave up itself, is the message.
        let gave_up = self.turn_failed.is_some();
        let error = self.turn_failed.take().or(self.pending_error.take());
        let model = self.unknown_model.take();
        let failure = match (&model, error) {
            (Some((m, true)), _) => Some((
                FailureKind::Model,
                model_message(m, &format!("Model metadata for `{m}` not found")),
            )),
            _ if !gave_up && self.rate_limited.is_some() => self.rate_limited.take().map(|s| {
                (
                    FailureKind::Api,
                    format!(
                        "rate limited: the API answered 429 Too Many Requests ({})",
                        s.last()
                    ),
                )
            }),
            (_, None) if self.stop => self.network.take().map(|m| {
                (
                    FailureKind::Network,
                    format!("no network: codex only kept reconnecting ({m})"),
                )
            }),
            (_, None) => None,
            // A spent quota or refused key is its own kind, whatever digits its words hold.
            (_, Some(e))
                if (self.server_errors.is_some() || is_server_error(&e))
                    && classify_api_error(&e) == FailureKind::Api =>
            {
                let reconnects = self.server_errors.take().map_or(0, |s| s.reports());
                Some((
                    FailureKind::Api,
                    format!(
                        "{} (codex gave up after {reconnects} reconnects: \"{e}\")",
                        server_errors_named(&e)
                    ),
                ))
            }
            (_, Some(e)) if is_network(&e) => {
                Some((FailureKind::Network, format!("no network: {e}")))
            }
            (Some((m, false)), Some(e)) if e.to_ascii_lowercase().contains("model") => {
                Some((FailureKind::Model, model_message(m, &e)))
            }
            (_, Some(e)) => Some((classify_api_error(&e), e)),
        }
        .map(|(k, m)| (k, tail_str(&m, 4096)));
        Parsed {
            text: self.last_message.take(),
            session_id: self.session_id.take(),
            usage: self.usage,
            num_turns: (self.turns > 0).then_some(self.turns),
            saw_result: self.turns > 0,
            failure,
            warnings: std::mem::take(&mut self.warnings),
            ..Parsed::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AgentKind;

    const NO_NETWORK: &str = include_str!("../../../tests/fixtures/agents/codex/no_network.jsonl");
    const MODEL: &str = include_str!("../../../tests/fixtures/agents/codex/model_not_found.jsonl");

    /// codex 0.171 against an API answering 500 to every request, as it printed it.
    #[test]
    fn server_errors_are_named_as_such_and_codex_waits_on_its_api_only_between_tools() {
        let mut p = Parser::default();
        let now = Instant::now();
        assert!(p.waiting_on_model() == crate::silence::Waiting::No);
        p.line_at(r#"{"type":"turn.started"}"#, now);
        assert!(p.waiting_on_model() == crate::silence::Waiting::Yes);
        for n in 1..=5 {
            let line = format!(
                r#"{{"type":"error","message":"Reconnecting... {n}/5 (We’re currently experiencing high demand, which may cause temporary errors.)"}}"#
            );
            p.line_at(&line, now + Duration::from_secs(30 * n));
        }
        assert!(
            !OutputParser::stop(&p),
            "a server error is not a network gone"
        );
        let said = r#"We’re currently experiencing high demand, which may cause temporary errors."#;
        p.line_at(&format!(r#"{{"type":"error","message":"{said}"}}"#), now);
        p.line_at(
            &format!(r#"{{"type":"turn.failed","error":{{"message":"{said}"}}}}"#),
            now,
        );
        assert!(p.waiting_on_model() == crate::silence::Waiting::No);
        let (kind, msg) = p.finish().failure.unwrap();
        assert_eq!(kind, FailureKind::Api);
        assert!(
            msg.starts_with("the API answers with server errors (codex gave up after 5 reconnects"),
            "{msg}"
        );
        assert!(crate::is_transient(&msg), "{msg}");
        // A spent limit whose words hold a 5xx-looking number is still a spent limit.
        let mut p = Parser::default();
        let spent = "You've hit your usage limit. Try again in 503 minutes.";
        p.line_at(
            &format!(r#"{{"type":"turn.failed","error":{{"message":"{spent}"}}}}"#),
            now,
        );
        assert_eq!(p.finish().failure.unwrap().0, FailureKind::QuotaSpent);
        // A command running is not waiting on the API; a todo list open all turn is.
        let mut p = Parser::default();
        p.line_at(r#"{"type":"turn.started"}"#, now);
        p.line_at(
            r#"{"type":"item.started","item":{"id":"i0","type":"todo_list","items":[]}}"#,
            now,
        );
        assert!(p.waiting_on_model() == crate::silence::Waiting::Yes);
        p.line_at(r#"{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"make test","status":"in_progress"}}"#, now);
        assert!(p.waiting_on_model() == crate::silence::Waiting::No);
        p.line_at(r#"{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"make test","exit_code":1,"status":"failed"}}"#, now);
        assert!(p.waiting_on_model() == crate::silence::Waiting::Yes);
    }

    #[test]
    fn a_long_rate_limit_stops_codex_as_a_transient_api_failure() {
        let mut p = Parser::default();
        let now = Instant::now();
        p.line_at(r#"{"type":"thread.started","thread_id":"t1"}"#, now);
        p.line_at(r#"{"type":"turn.started"}"#, now);
        let line = r#"{"type":"error","message":"Reconnecting... 1/5 (exceeded retry limit, last status: 429 Too Many Requests)"}"#;
        p.line_at(line, now);
        assert!(
            !OutputParser::stop(&p),
            "a short retry-after is codex's to wait out"
        );
        // Then an answer: over.
        p.line_at(
            r#"{"type":"item.completed","item":{"type":"agent_message","text":"hi"}}"#,
            now,
        );
        assert!(p.rate_limited.is_none());
        // Still waiting past the patience: stopped.
        let long_ago = now.checked_sub(RATE_LIMIT_PATIENCE * 2).unwrap();
        p.line_at(line, long_ago);
        p.line_at(line, now);
        assert!(
            OutputParser::stop(&p),
            "codex would wait out retry-after itself"
        );
        let (kind, msg) = p.finish().failure.unwrap();
        assert_eq!(kind, FailureKind::Api);
        assert!(crate::is_transient(&msg), "{msg}");
        assert!(!kind.is_fatal());
    }

    #[test]
    fn resume_and_flags_order() {
        let mut spec = AgentSpec::new(AgentKind::Codex);
        spec.model = Some("gpt-5".into());
        let mut req = AgentRequest::new("p", ".", ".", "n");
        req.resume = Some("th-1".into());
        assert_eq!(
            args(&spec, &req).unwrap(),
            [
                "exec",
                "--json",
                "--model",
                "gpt-5",
                "--sandbox",
                "workspace-write",
                "-c",
                "mcp_servers.baton={command=\"baton\",args=[\"mcp\"],default_tools_approval_mode=\"approve\"}",
                "resume",
                "th-1",
                "-"
            ]
        );
        spec.max_turns = Some(3);
        assert!(args(&spec, &req).is_err());
    }

    #[test]
    fn sandbox_follows_access_and_never_full_auto() {
        let req = AgentRequest::new("p", ".", ".", "n");
        let mut spec = AgentSpec::new(AgentKind::Codex);
        let a = args(&spec, &req).unwrap();
        assert_eq!(a[..4], ["exec", "--json", "--sandbox", "workspace-write"]);
        assert_eq!(a[4], "-c");
        assert_eq!(a[6..], ["-"]);
        // baton's server: a TOML inline table codex parses (its path quoted as TOML).
        let table: toml::Table = a[5].parse().unwrap();
        assert_eq!(
            table["mcp_servers"]["baton"]["default_tools_approval_mode"].as_str(),
            Some("approve")
        );
        let odd: toml::Table = mcp_override("/my dir/\"baton\"").parse().unwrap();
        assert_eq!(
            odd["mcp_servers"]["baton"]["command"].as_str(),
            Some("/my dir/\"baton\"")
        );
        spec.access = Access::ReadOnly;
        assert_eq!(args(&spec, &req).unwrap()[..2], ["exec", "--json"]);
        assert_eq!(args(&spec, &req).unwrap()[4], "-");
        spec.sandbox = Some("danger-full-access".into());
        assert_eq!(
            args(&spec, &req).unwrap()[2..4],
            ["--sandbox", "danger-full-access"]
        );
        let mut spec = AgentSpec::new(AgentKind::Codex);
        spec.skip_permissions = true;
        assert_eq!(
            args(&spec, &req).unwrap()[..3],
            [
                "exec",
                "--json",
                "--dangerously-bypass-approvals-and-sandbox",
            ]
        );
        assert!(!a.iter().any(|x| x == "--full-auto"));
        spec.allowed_tools = Some(vec!["Bash(ls:*)".into()]);
        assert!(args(&spec, &req).is_err());
    }

    #[test]
    fn error_then_completed_turn_is_not_a_failure() {
        let mut p = Parser::default();
        p.line(r#"{"type":"error","message":"Reconnecting... 1/5"}"#);
        p.line(r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}"#);
        assert!(!p.stop());
        let r = p.finish();
        assert!(r.failure.is_none());
        assert_eq!(
            r.usage,
            Usage {
                input: 6,
                cache_creation: 0,
                cache_read: 4,
                output: 2
            }
        );
    }

    /// Feed `text`'s lines, each `step` after the previous one.
    fn feed(p: &mut Parser, text: &str, t0: Instant, step: Duration) -> Instant {
        let mut t = t0;
        for l in text.lines() {
            p.line_at(l, t);
            t += step;
        }
        t
    }

    #[test]
    fn waiting_for_network_stops_at_the_third() {
        let mut p = Parser::default();
        let t = feed(
            &mut p,
            NO_NETWORK,
            Instant::now(),
            Duration::from_millis(500),
        );
        assert!(!p.stop(), "one wait for the network is not yet hopeless");
        let wait = NO_NETWORK.lines().last().unwrap();
        p.line_at(wait, t);
        assert!(!p.stop());
        p.line_at(wait, t + Duration::from_secs(1));
        assert!(p.stop());
        let r = p.finish();
        let (kind, msg) = r.failure.unwrap();
        assert_eq!(kind, FailureKind::Network);
        assert!(msg.contains("waiting for network"), "{msg}");
    }

    #[test]
    fn reconnects_for_twenty_seconds_stop_but_progress_resets() {
        let mut p = Parser::default();
        let t0 = Instant::now();
        let reconnect = NO_NETWORK.lines().nth(2).unwrap();
        p.line_at(reconnect, t0);
        p.line_at(reconnect, t0 + Duration::from_secs(19));
        assert!(!p.stop());
        // A real event in between: the earlier reconnects were overcome.
        p.line_at(
            r#"{"type":"item.completed","item":{"id":"i","type":"reasoning","text":"…"}}"#,
            t0 + Duration::from_secs(19),
        );
        p.line_at(reconnect, t0 + Duration::from_secs(25));
        assert!(!p.stop());
        p.line_at(reconnect, t0 + Duration::from_secs(45));
        assert!(p.stop());
    }

    #[test]
    fn claude_model_name_is_a_model_failure_at_once() {
        let mut p = Parser::default();
        feed(&mut p, MODEL, Instant::now(), Duration::ZERO);
        assert!(p.stop(), "a Claude model name never works with codex");
        let r = p.finish();
        let (kind, msg) = r.failure.unwrap();
        assert_eq!(kind, FailureKind::Model);
        assert!(
            msg.contains("`sonnet`") && msg.contains("[run.roles]"),
            "{msg}"
        );
        assert!(r.warnings[0].contains("Model metadata"), "{:?}", r.warnings);
        // An OpenAI model codex has no metadata for yet only warns…
        let mut p = Parser::default();
        feed(
            &mut p,
            &MODEL.replace("sonnet", "gpt-9"),
            Instant::now(),
            Duration::ZERO,
        );
        assert!(!p.stop());
        p.line(r#"{"type":"turn.completed","usage":{}}"#);
        let r = p.finish();
        assert!(r.failure.is_none());
        assert_eq!(r.warnings.len(), 1);
        // …unless the API then refuses it.
        let mut p = Parser::default();
        feed(
            &mut p,
            &MODEL.replace("sonnet", "gpt-9"),
            Instant::now(),
            Duration::ZERO,
        );
        p.line(r#"{"type":"turn.failed","error":{"message":"The model `gpt-9` does not exist"}}"#);
        assert_eq!(p.finish().failure.unwrap().0, FailureKind::Model);
    }
}
