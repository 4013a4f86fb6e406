//! Claude Code: `claude -p --output-format stream-json --verbose`, prompt on stdin.
//! Lines: `system/init` (session id, model), `assistant` (an API message with its own usage:
//! the current context size), `user` (tool results), maybe `rate_limit_event`, and a final
//! `result` (subtype, is_error, result text, num_turns, total_cost_usd or older cost_usd,
//! usage summed over the run). An API or auth failure can arrive as `subtype: success` with
//! `is_error: true`, so `is_error` is checked first.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::outage::{Streak, server_down};
use super::{
    Access, AgentRequest, AgentSpec, FailureKind, OutputParser, Parsed, PromptVia, TEXT_TAIL_BYTES,
    Usage, classify_api_error, is_network, tail_str, unsupported,
};
use crate::error::Result;

pub(super) fn args(spec: &AgentSpec, req: &AgentRequest) -> Result<Vec<String>> {
    if spec.sandbox.is_some() {
        return Err(unsupported(spec, "sandbox"));
    }
    let mut a: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
        .map(String::from)
        .to_vec();
    let mut opt = |flag: &str, v: &Option<String>| {
        if let Some(v) = v {
            a.push(flag.to_string());
            a.push(v.clone());
        }
    };
    opt("--model", &spec.model);
    opt("--max-turns", &spec.max_turns.map(|n| n.to_string()));
    opt("--append-system-prompt", &spec.append_system_prompt);
    // `-p` denies Edit, Write and Bash by default: a phase that edits needs acceptEdits and
    // the Bash commands it may run. skip_permissions replaces both.
    let edit = spec.access == Access::Edit && !spec.skip_permissions;
    let mode = spec
        .permission_mode
        .clone()
        .or_else(|| edit.then(|| "acceptEdits".to_string()));
    opt("--permission-mode", &mode);
    let tools = allowed_tools(spec);
    // One comma-separated value: the option is variadic and would swallow what follows.
    opt(
        "--allowedTools",
        &(!tools.is_empty()).then(|| tools.join(",")),
    );
    opt(
        "--disallowedTools",
        &(!spec.disallowed_tools.is_empty()).then(|| spec.disallowed_tools.join(",")),
    );
    opt("--resume", &req.resume);
    if spec.skip_permissions {
        a.push("--dangerously-skip-permissions".into());
    }
    // ---- baton's hooks (masking every large Bash output) and MCP server for this run ----
    a.extend(crate::wiring::claude_run_args());
    // ---- end of baton's hooks and MCP server ----
    a.extend(spec.args.iter().cloned());
    if spec.prompt_via == PromptVia::Argv {
        a.push("--".into());
        a.push(req.prompt.clone());
    }
    Ok(a)
}

/// The tools a run allows claude (`--allowedTools`): the configured ones, or baton's defaults
/// for a phase that edits; baton's MCP tools always (its server comes with every run, and
/// claude would offer its tools and refuse every call).
fn allowed_tools(spec: &AgentSpec) -> Vec<String> {
    let edit = spec.access == Access::Edit && !spec.skip_permissions;
    let mut tools: Vec<String> = match &spec.allowed_tools {
        Some(t) => t.clone(),
        None if edit => super::default_allowed_tools(super::AgentKind::Claude),
        None => Vec::new(),
    };
    if !spec.skip_permissions {
        tools.push(crate::wiring::CLAUDE_MCP_RULE.to_string());
    }
    tools
}

/// The permissions a run gives claude on its command line, for baton's pre-tool hook (which
/// routes a command only where claude would run it unasked, and cannot read claude's flags):
/// `(variable, {"allow": [...], "deny": [...]})`.
pub(super) fn permissions_env(spec: &AgentSpec) -> (String, String) {
    let doc = serde_json::json!({
        "allow": allowed_tools(spec),
        "deny": spec.disallowed_tools,
    });
    (
        crate::wiring::CLAUDE_PERMISSIONS_VAR.to_string(),
        doc.to_string(),
    )
}

/// Usage object of the Anthropic API (`input_tokens`, `cache_creation_input_tokens`, …).
pub(super) fn usage(v: &Value) -> Usage {
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input: n("input_tokens"),
        cache_creation: n("cache_creation_input_tokens"),
        cache_read: n("cache_read_input_tokens"),
        output: n("output_tokens"),
    }
}

pub(super) struct Parser {
    session_id: Option<String>,
    /// From `system/init`: denied paths are shown relative to it.
    cwd: Option<String>,
    model: Option<String>,
    context_tokens: Option<u64>,
    /// The largest prompt of any assistant message (one API request each).
    context_peak_tokens: Option<u64>,
    /// Text blocks of assistant messages, bounded: the fallback when no `result` line came.
    assistant_text: String,
    result: Option<Parsed>,
    /// Retries of a request that got no HTTP answer at all (`api_retry` without a status).
    unanswered_retries: u32,
    /// Why baton stops claude before it gives up itself (see [`Parser::api_retry`]).
    stop: Option<(FailureKind, String)>,
    /// [`super::AgentSpec::api_patience`].
    patience: Duration,
    /// Since `system/init`, until the result: claude is working.
    started: bool,
    /// Tool calls of the model still running (their `tool_use` ids): claude is not waiting on
    /// its API meanwhile.
    in_flight: HashSet<String>,
    /// Retries after server errors (5xx, overloaded) in a row, and the latest status.
    server_errors: Option<Streak>,
    server_status: Option<u16>,
    /// Retries after 429s in a row: claude waits out a rate limit itself for minutes a call;
    /// past [`crate::codex::RATE_LIMIT_PATIENCE`], as for codex and gemini, baton stops it
    /// and its own backoff, which can pause the run, takes over.
    rate_limited: Option<Streak>,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new(super::DEFAULT_API_PATIENCE)
    }
}

/// Retries without any HTTP answer before baton calls the API unreachable (claude itself makes
/// 10, about three minutes; three are about four seconds).
const UNANSWERED_RETRIES: u32 = 3;

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

impl Parser {
    pub(super) fn new(patience: Duration) -> Parser {
        Parser {
            session_id: None,
            cwd: None,
            model: None,
            context_tokens: None,
            context_peak_tokens: None,
            assistant_text: String::new(),
            result: None,
            unanswered_retries: 0,
            stop: None,
            patience,
            started: false,
            in_flight: HashSet::new(),
            server_errors: None,
            server_status: None,
            rate_limited: None,
        }
    }

    /// Why baton stops claude now, if it does: what [`Parser::api_retry`] decided, or a streak
    /// of server errors or rate limits that outlasted its patience.
    fn verdict(&self, now: Instant) -> Option<(FailureKind, String)> {
        if let Some(s) = &self.stop {
            return Some(s.clone());
        }
        if Streak::outlasts(&self.server_errors, self.patience, now) {
            let streak = self.server_errors.as_ref()?;
            return Some(server_down(
                "claude",
                streak,
                self.server_status,
                self.patience,
            ));
        }
        if Streak::outlasts(&self.rate_limited, crate::codex::RATE_LIMIT_PATIENCE, now) {
            let streak = self.rate_limited.as_ref()?;
            return Some((
                FailureKind::Api,
                format!(
                    "rate limited: the API answered 429 Too Many Requests (\"{}\")",
                    streak.last()
                ),
            ));
        }
        None
    }

    pub(super) fn line_at(&mut self, line: &str, now: Instant) {
        // Anything that is not a JSON object (a warning, a progress line) is ignored.
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        if self.session_id.is_none() {
            self.session_id = s(&v, "session_id");
        }
        match v.get("type").and_then(Value::as_str) {
            Some("system") if v.get("subtype").and_then(Value::as_str) == Some("init") => {
                self.started = true;
                self.session_id = s(&v, "session_id").or(self.session_id.take());
                self.model = s(&v, "model").or(self.model.take());
                self.cwd = s(&v, "cwd").or(self.cwd.take());
            }
            Some("system") if v.get("subtype").and_then(Value::as_str) == Some("api_retry") => {
                self.api_retry(&v, now)
            }
            Some("assistant") => {
                // An answer: whatever failed before was got past.
                self.server_errors = None;
                self.rate_limited = None;
                self.assistant(&v)
            }
            Some("user") => {
                for id in blocks(&v).filter_map(|b| b.get("tool_use_id").and_then(Value::as_str)) {
                    self.in_flight.remove(id);
                }
            }
            Some("result") => self.result(&v),
            _ => {}
        }
    }

    /// `system/api_retry` (`attempt`, `error_status`, `error`): claude retrying a failed API
    /// request, up to 10 times over about three minutes. Credentials the API refused never
    /// start working, and no answer at all is a network that is not there: both stop claude
    /// at once. Server errors and rate limits are streaks, given their patience (see
    /// [`Parser::verdict`]).
    fn api_retry(&mut self, v: &Value, now: Instant) {
        let status = v.get("error_status").and_then(Value::as_u64);
        let error = v.get("error").and_then(Value::as_str).unwrap_or("");
        let report = format!(
            "HTTP {}: {error}, attempt {} of {}",
            status.map_or("-".to_string(), |s| s.to_string()),
            v.get("attempt").and_then(Value::as_u64).unwrap_or(0),
            v.get("max_retries").and_then(Value::as_u64).unwrap_or(0)
        );
        if status == Some(429) {
            Streak::extend(&mut self.rate_limited, now, &report);
            self.server_errors = None;
        } else if status.is_some_and(|s| s >= 500)
            || matches!(error, "server_error" | "overloaded_error")
        {
            Streak::extend(&mut self.server_errors, now, &report);
            self.server_status = status.and_then(|s| u16::try_from(s).ok());
            self.rate_limited = None;
        }
        if matches!(status, Some(401 | 403)) || error == "authentication_failed" {
            let status = status.map_or(String::new(), |s| format!("HTTP {s}, "));
            self.stop = Some((
                FailureKind::Auth,
                format!("the API refused claude's credentials ({status}{error})"),
            ));
        } else if status.is_none() {
            self.unanswered_retries += 1;
            if self.unanswered_retries >= UNANSWERED_RETRIES {
                self.stop = Some((
                    FailureKind::Network,
                    format!(
                        "no network: claude got no answer from its API in {} tries ({error})",
                        self.unanswered_retries
                    ),
                ));
            }
        } else {
            self.unanswered_retries = 0;
        }
    }

    fn assistant(&mut self, v: &Value) {
        let Some(msg) = v.get("message") else { return };
        if let Some(u) = msg.get("usage") {
            let prompt = usage(u).prompt_tokens();
            self.context_tokens = Some(prompt);
            self.context_peak_tokens = self.context_peak_tokens.max(Some(prompt));
        }
        if self.model.is_none() {
            self.model = s(msg, "model");
        }
        for block in blocks(v) {
            if block.get("type").and_then(Value::as_str) == Some("tool_use")
                && let Some(id) = block.get("id").and_then(Value::as_str)
            {
                self.in_flight.insert(id.to_string());
            }
            if block.get("type").and_then(Value::as_str) == Some("text")
                && let Some(t) = block.get("text").and_then(Value::as_str)
            {
                if !self.assistant_text.is_empty() {
                    self.assistant_text.push_str("\n\n");
                }
                self.assistant_text.push_str(t);
                if self.assistant_text.len() > 2 * TEXT_TAIL_BYTES {
                    self.assistant_text = tail_str(&self.assistant_text, TEXT_TAIL_BYTES);
                }
            }
        }
    }

    fn result(&mut self, v: &Value) {
        let subtype = s(v, "subtype").unwrap_or_default();
        let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let text = s(v, "result");
        let failure = if is_error || subtype != "success" {
            let errors: Vec<&str> = v
                .get("errors")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let msg = match (&text, errors.is_empty()) {
                (Some(t), _) if !t.trim().is_empty() => t.trim().to_string(),
                (_, false) => errors.join("; "),
                _ if subtype.is_empty() => "claude reported an error".to_string(),
                _ => format!("claude ended with {subtype}"),
            };
            // The API's HTTP status, when claude reports it: an HTTP status, not an exit code.
            let status = v.get("api_error_status").and_then(Value::as_u64);
            let kind = match (subtype.as_str(), status) {
                ("error_max_turns", _) => FailureKind::TurnLimit,
                ("error_max_budget_usd", _) => FailureKind::Budget,
                (_, Some(401 | 403)) => FailureKind::Auth,
                ("success" | "", _) if is_network(&msg) => FailureKind::Network,
                ("success" | "", _) => classify_api_error(&msg),
                _ => FailureKind::Execution,
            };
            Some((kind, tail_str(&msg, 4096)))
        } else {
            None
        };
        // What the permission mode refused: a warning always, part of the error on failure.
        let denied = denials(v, self.cwd.as_deref());
        let mut warnings = Vec::new();
        let failure = match (failure, denied) {
            (f, None) => f,
            (f, Some(d)) => {
                warnings.push(format!(
                    "claude's permission mode refused: {d} (see `access`, `permission_mode`, `allowed_tools`)"
                ));
                f.map(|(k, m)| (k, format!("{m}; denied: {d}")))
            }
        };
        self.result = Some(Parsed {
            text: text.map(|t| tail_str(&t, TEXT_TAIL_BYTES)),
            session_id: s(v, "session_id"),
            usage: v.get("usage").map(usage).unwrap_or_default(),
            cost_usd: v
                .get("total_cost_usd")
                .or_else(|| v.get("cost_usd"))
                .and_then(Value::as_f64),
            num_turns: v
                .get("num_turns")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok()),
            failure,
            warnings,
            saw_result: true,
            ..Parsed::default()
        });
    }
}

/// The content blocks of a `user` or `assistant` line's message.
fn blocks(v: &Value) -> impl Iterator<Item = &Value> {
    v.get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// `permission_denials` of a `result` (`[{tool_name, tool_use_id, tool_input}]`) as
/// "Edit(src/x.rs), Bash(git add -A)"; `None` when there are none.
fn denials(v: &Value, cwd: Option<&str>) -> Option<String> {
    let list = v.get("permission_denials")?.as_array()?;
    let mut shown: Vec<String> = list
        .iter()
        .take(10)
        .map(|d| {
            let tool = d.get("tool_name").and_then(Value::as_str).unwrap_or("?");
            let input = d.get("tool_input");
            let arg = [
                "command",
                "file_path",
                "notebook_path",
                "path",
                "pattern",
                "url",
            ]
            .iter()
            .find_map(|k| input.and_then(|i| i.get(*k)).and_then(Value::as_str));
            match arg {
                Some(a) => {
                    let a = cwd
                        .and_then(|c| a.strip_prefix(c))
                        .and_then(|r| r.strip_prefix('/'))
                        .unwrap_or(a);
                    let a: String = a.chars().take(80).collect();
                    format!("{tool}({a})")
                }
                None => tool.to_string(),
            }
        })
        .collect();
    if list.len() > shown.len() {
        shown.push(format!("{} more", list.len() - shown.len()));
    }
    (!shown.is_empty()).then(|| shown.join(", "))
}

impl OutputParser for Parser {
    fn line(&mut self, line: &str) {
        self.line_at(line, Instant::now());
    }

    fn stop(&self) -> bool {
        self.result.is_none() && self.verdict(Instant::now()).is_some()
    }

    fn waiting_on_model(&self) -> crate::silence::Waiting {
        (self.started && self.in_flight.is_empty() && self.result.is_none()).into()
    }

    fn finish(&mut self) -> Parsed {
        let mut p = self.result.take().unwrap_or_default();
        if !p.saw_result && p.failure.is_none() {
            p.failure = self.verdict(Instant::now());
        }
        p.session_id = p.session_id.or(self.session_id.take());
        p.model = self.model.take();
        p.context_tokens = self.context_tokens;
        p.context_peak_tokens = self.context_peak_tokens;
        if p.text.is_none() && !self.assistant_text.is_empty() {
            p.text = Some(tail_str(&self.assistant_text, TEXT_TAIL_BYTES));
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(lines: &[&str]) -> Parsed {
        let mut p = Parser::default();
        for l in lines {
            p.line(l);
        }
        p.finish()
    }

    /// claude-code 2.1.197's retry event, as it printed it against a model double.
    fn retry(attempt: u32, status: &str, error: &str) -> String {
        format!(
            r#"{{"type":"system","subtype":"api_retry","attempt":{attempt},"max_retries":10,"retry_delay_ms":608.07,"error_status":{status},"error":"{error}","session_id":"s"}}"#
        )
    }

    #[test]
    fn refused_credentials_stop_claude_at_its_first_retry() {
        let mut p = Parser::default();
        p.line(&retry(1, "401", "authentication_failed"));
        assert!(p.stop());
        let f = p.finish().failure.unwrap();
        assert_eq!(f.0, FailureKind::Auth);
        assert!(f.1.contains("HTTP 401"), "{}", f.1);
    }

    #[test]
    fn no_answer_at_all_stops_claude_at_its_third_retry() {
        let mut p = Parser::default();
        p.line(&retry(1, "null", "unknown"));
        p.line(&retry(2, "null", "unknown"));
        assert!(!p.stop(), "two retries are not yet hopeless");
        p.line(&retry(3, "null", "unknown"));
        assert!(p.stop());
        assert_eq!(p.finish().failure.unwrap().0, FailureKind::Network);
        // A server that answers (500, 429) is left to claude's own retries for a while.
        let mut p = Parser::default();
        for n in 1..=5 {
            p.line(&retry(n, "500", "server_error"));
        }
        assert!(!p.stop());
        assert!(p.finish().failure.is_none());
    }

    #[test]
    fn server_errors_past_the_patience_stop_claude_naming_them_and_429s_sooner() {
        let t0 = Instant::now() - Duration::from_secs(600);
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut p = Parser::new(Duration::from_secs(120));
        p.line_at(&retry(1, "500", "server_error"), at(0));
        p.line_at(&retry(2, "500", "server_error"), at(100));
        assert!(p.verdict(at(119)).is_none());
        let (kind, msg) = p.verdict(at(120)).unwrap();
        assert_eq!(kind, FailureKind::ApiDown);
        assert!(
            msg.starts_with("the API answers 500 (a server error) to every request: claude retried 2 times over 120 s"),
            "{msg}"
        );
        // An answer in between starts the count again.
        let mut p = Parser::new(Duration::from_secs(120));
        p.line_at(&retry(1, "529", "overloaded_error"), at(0));
        p.line_at(r#"{"type":"assistant","message":{"content":[]}}"#, at(60));
        p.line_at(&retry(1, "529", "overloaded_error"), at(100));
        assert!(p.verdict(at(200)).is_none());
        assert!(p.verdict(at(220)).is_some());
        // A 429 gets the patience codex's and gemini's get: transient, baton's backoff next.
        let mut p = Parser::new(Duration::from_secs(120));
        p.line_at(&retry(1, "429", "rate_limit"), at(0));
        assert!(p.verdict(at(19)).is_none());
        let (kind, msg) = p.verdict(at(20)).unwrap();
        assert_eq!(kind, FailureKind::Api);
        assert!(crate::is_transient(&msg), "{msg}");
    }

    #[test]
    fn claude_waits_on_its_api_only_between_its_tools() {
        let mut p = Parser::default();
        assert!(
            p.waiting_on_model() == crate::silence::Waiting::No,
            "not started"
        );
        p.line(r#"{"type":"system","subtype":"init","session_id":"s"}"#);
        assert!(p.waiting_on_model() == crate::silence::Waiting::Yes);
        p.line(r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}},{"type":"tool_use","id":"t2","name":"Read","input":{}}]}}"#);
        assert!(
            p.waiting_on_model() == crate::silence::Waiting::No,
            "two tools running"
        );
        p.line(r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}"#);
        assert!(
            p.waiting_on_model() == crate::silence::Waiting::No,
            "one still running"
        );
        p.line(r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}}"#);
        assert!(p.waiting_on_model() == crate::silence::Waiting::Yes);
        p.line(r#"{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}"#);
        assert!(
            p.waiting_on_model() == crate::silence::Waiting::No,
            "finished"
        );
    }

    #[test]
    fn the_results_http_status_is_read_as_one() {
        let denied = r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":403,"result":"API Error: 403 forbidden","session_id":"s"}"#;
        assert_eq!(parse(&[denied]).failure.unwrap().0, FailureKind::Auth);
        let refused = r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"result":"API Error: Unable to connect to API (ConnectionRefused)","session_id":"s"}"#;
        assert_eq!(parse(&[refused]).failure.unwrap().0, FailureKind::Network);
        let limited = r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error: Request rejected (429) · slow down","session_id":"s"}"#;
        let f = parse(&[limited]).failure.unwrap();
        assert_eq!(f.0, FailureKind::Api);
        assert!(crate::is_transient(&f.1));
    }

    #[test]
    fn older_cost_field_and_missing_result() {
        let p = parse(&[
            r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","cost_usd":0.5}"#,
        ]);
        assert_eq!(p.cost_usd, Some(0.5));
        assert!(p.failure.is_none());
        let p = parse(&[
            r#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"half way"}],"usage":{"input_tokens":3,"cache_read_input_tokens":10}}}"#,
            r#"{"type":"assistant","message":{"content":[],"usage":{"input_tokens":2,"cache_creation_input_tokens":4}}}"#,
        ]);
        assert!(!p.saw_result);
        assert_eq!(p.text.as_deref(), Some("half way"));
        // The latest request's prompt, and the largest one's.
        assert_eq!(p.context_tokens, Some(6));
        assert_eq!(p.context_peak_tokens, Some(13));
        assert_eq!(p.session_id.as_deref(), Some("s1"));
    }

    #[test]
    fn error_subtypes_map_to_kinds() {
        for (sub, kind) in [
            ("error_max_turns", FailureKind::TurnLimit),
            ("error_max_budget_usd", FailureKind::Budget),
            ("error_during_execution", FailureKind::Execution),
            (
                "error_max_structured_output_retries",
                FailureKind::Execution,
            ),
        ] {
            let line = format!(
                r#"{{"type":"result","subtype":"{sub}","is_error":true,"errors":["boom"]}}"#
            );
            let p = parse(&[&line]);
            assert_eq!(p.failure, Some((kind, "boom".to_string())), "{sub}");
        }
    }

    #[test]
    fn permission_denials_are_warned_and_named_in_the_error() {
        let fixture = include_str!("../../../tests/fixtures/agents/claude/permission_denied.jsonl");
        let p = parse(&fixture.lines().collect::<Vec<_>>());
        let (kind, msg) = p.failure.unwrap();
        assert_eq!(kind, FailureKind::Execution);
        assert_eq!(
            msg,
            "could not complete the task; denied: Edit(src/x.rs), Bash(git add -A)"
        );
        assert_eq!(p.warnings.len(), 1);
        assert!(
            p.warnings[0].contains("refused: Edit(src/x.rs), Bash(git add -A)"),
            "{:?}",
            p.warnings
        );
        // A successful run with a denial: a warning only.
        let p = parse(&[
            r#"{"type":"result","subtype":"success","is_error":false,"result":"done","permission_denials":[{"tool_name":"WebFetch","tool_use_id":"t","tool_input":{}}]}"#,
        ]);
        assert!(p.failure.is_none());
        assert!(
            p.warnings[0].contains("refused: WebFetch"),
            "{:?}",
            p.warnings
        );
        let p = parse(&[
            r#"{"type":"result","subtype":"success","is_error":false,"result":"done","permission_denials":[]}"#,
        ]);
        assert!(p.warnings.is_empty());
    }

    /// The argv without baton's own hook and MCP flags (tested on their own below).
    fn args(spec: &AgentSpec, req: &AgentRequest) -> Result<Vec<String>> {
        let mut a = super::args(spec, req)?;
        let at = a
            .iter()
            .position(|x| x == "--settings")
            .expect("--settings");
        assert_eq!(a[at + 2], "--mcp-config");
        a.drain(at..at + 4);
        Ok(a)
    }

    #[test]
    fn every_run_gets_the_hooks_and_the_mcp_server() {
        let req = AgentRequest::new("p", ".", ".", "n");
        let a = super::args(&AgentSpec::new(super::super::AgentKind::Claude), &req).unwrap();
        let at = a.iter().position(|x| x == "--settings").unwrap();
        let settings: Value = serde_json::from_str(&a[at + 1]).unwrap();
        let cmd = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap();
        assert!(cmd.ends_with(" hook claude post-tool-use"), "{cmd}");
        assert_eq!(a[at + 2], "--mcp-config");
        let mcp: Value = serde_json::from_str(&a[at + 3]).unwrap();
        assert_eq!(
            mcp["mcpServers"]["baton"]["args"],
            serde_json::json!(["mcp"])
        );
    }

    #[test]
    fn argv_carries_configured_flags_only() {
        let req = AgentRequest::new("-starts with dash", ".", ".", "n");
        let a = args(&AgentSpec::new(super::super::AgentKind::Claude), &req).unwrap();
        assert_eq!(
            a,
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "acceptEdits",
                "--allowedTools",
                "Bash(git status:*),Bash(git diff:*),Bash(git log:*),Bash(git show:*),Bash(baton:*),mcp__baton"
            ]
        );
        let mut ro = AgentSpec::new(super::super::AgentKind::Claude);
        ro.access = Access::ReadOnly;
        assert_eq!(
            args(&ro, &req).unwrap(),
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--allowedTools",
                "mcp__baton"
            ]
        );
        ro.access = Access::Edit;
        ro.permission_mode = Some("plan".into());
        ro.allowed_tools = Some(vec!["Bash(cargo test:*)".into(), "Read".into()]);
        assert_eq!(
            args(&ro, &req).unwrap()[4..],
            [
                "--permission-mode",
                "plan",
                "--allowedTools",
                "Bash(cargo test:*),Read,mcp__baton"
            ]
        );
        ro.allowed_tools = Some(Vec::new());
        assert_eq!(
            args(&ro, &req).unwrap()[6..],
            ["--allowedTools", "mcp__baton"]
        );
        let mut spec = AgentSpec::new(super::super::AgentKind::Claude);
        spec.model = Some("sonnet".into());
        spec.max_turns = Some(7);
        spec.skip_permissions = true;
        spec.prompt_via = PromptVia::Argv;
        let req = AgentRequest {
            resume: Some("abc".into()),
            ..req
        };
        let a = args(&spec, &req).unwrap();
        assert_eq!(
            a,
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                "sonnet",
                "--max-turns",
                "7",
                "--resume",
                "abc",
                "--dangerously-skip-permissions",
                "--",
                "-starts with dash"
            ]
        );
        spec.sandbox = Some("workspace-write".into());
        assert!(args(&spec, &req).is_err());
    }
}
