//! Claude Code: `claude -p --output-format stream-json --verbose`, prompt on stdin.
//! Lines: `system/init` (session id, model), `assistant` (an API message with its own usage:
//! the current context size), `user` (tool results), maybe `rate_limit_event`, and a final
//! `result` (subtype, is_error, result text, num_turns, total_cost_usd or older cost_usd,
//! usage summed over the run). An API or auth failure can arrive as `subtype: success` with
//! `is_error: true`, so `is_error` is checked first.

use serde_json::Value;

use super::{
    AgentRequest, AgentSpec, FailureKind, OutputParser, Parsed, PromptVia, TEXT_TAIL_BYTES, Usage,
    classify_api_error, tail_str, unsupported,
};
use crate::Result;

pub(super) fn args(spec: &AgentSpec, req: &AgentRequest) -> Result<Vec<String>> {
    if spec.full_auto {
        return Err(unsupported(spec, "full_auto"));
    }
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
    opt("--permission-mode", &spec.permission_mode);
    opt("--resume", &req.resume);
    if spec.skip_permissions {
        a.push("--dangerously-skip-permissions".into());
    }
    a.extend(spec.args.iter().cloned());
    if spec.prompt_via == PromptVia::Argv {
        a.push("--".into());
        a.push(req.prompt.clone());
    }
    Ok(a)
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

#[derive(Default)]
pub(super) struct Parser {
    session_id: Option<String>,
    model: Option<String>,
    context_tokens: Option<u64>,
    /// Text blocks of assistant messages, bounded: the fallback when no `result` line came.
    assistant_text: String,
    result: Option<Parsed>,
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

impl Parser {
    fn assistant(&mut self, v: &Value) {
        let Some(msg) = v.get("message") else { return };
        if let Some(u) = msg.get("usage") {
            self.context_tokens = Some(usage(u).prompt_tokens());
        }
        if self.model.is_none() {
            self.model = s(msg, "model");
        }
        for block in msg
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
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
            let kind = match subtype.as_str() {
                "error_max_turns" => FailureKind::TurnLimit,
                "error_max_budget_usd" => FailureKind::Budget,
                "success" | "" => classify_api_error(&msg),
                _ => FailureKind::Execution,
            };
            Some((kind, tail_str(&msg, 4096)))
        } else {
            None
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
            saw_result: true,
            ..Parsed::default()
        });
    }
}

impl OutputParser for Parser {
    fn line(&mut self, line: &str) {
        // Anything that is not a JSON object (a warning, a progress line) is ignored.
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        if self.session_id.is_none() {
            self.session_id = s(&v, "session_id");
        }
        match v.get("type").and_then(Value::as_str) {
            Some("system") if v.get("subtype").and_then(Value::as_str) == Some("init") => {
                self.session_id = s(&v, "session_id").or(self.session_id.take());
                self.model = s(&v, "model").or(self.model.take());
            }
            Some("assistant") => self.assistant(&v),
            Some("result") => self.result(&v),
            _ => {}
        }
    }

    fn finish(&mut self) -> Parsed {
        let mut p = self.result.take().unwrap_or_default();
        p.session_id = p.session_id.or(self.session_id.take());
        p.model = self.model.take();
        p.context_tokens = self.context_tokens;
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
        ]);
        assert!(!p.saw_result);
        assert_eq!(p.text.as_deref(), Some("half way"));
        assert_eq!(p.context_tokens, Some(13));
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
    fn argv_carries_configured_flags_only() {
        let req = AgentRequest::new("-starts with dash", ".", ".", "n");
        let a = args(&AgentSpec::new(super::super::AgentKind::Claude), &req).unwrap();
        assert_eq!(a, ["-p", "--output-format", "stream-json", "--verbose"]);
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
        spec.full_auto = true;
        assert!(args(&spec, &req).is_err());
    }
}
