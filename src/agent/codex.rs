//! OpenAI Codex: `codex exec --json [flags] -` (prompt on stdin), resume with
//! `codex exec --json [flags] resume <SESSION_ID> -`. JSON lines: `thread.started{thread_id}`,
//! `turn.completed{usage}`, `turn.failed{error{message}}`, `item.completed{item}`,
//! `error{message}`. The final text is the last `agent_message` item. No cost is reported.

use serde_json::Value;

use super::{
    AgentRequest, AgentSpec, OutputParser, Parsed, PromptVia, TEXT_TAIL_BYTES, Usage,
    classify_api_error, tail_str, unsupported,
};
use crate::Result;

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
    if spec.full_auto {
        a.push("--full-auto".into());
    }
    if let Some(s) = &spec.sandbox {
        a.extend(["--sandbox".into(), s.clone()]);
    }
    if spec.skip_permissions {
        a.push("--dangerously-bypass-approvals-and-sandbox".into());
    }
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

#[derive(Default)]
pub(super) struct Parser {
    session_id: Option<String>,
    usage: Usage,
    turns: u32,
    last_message: Option<String>,
    turn_failed: Option<String>,
    /// An `error` event not followed by a completed turn.
    pending_error: Option<String>,
}

fn msg(v: &Value) -> Option<String> {
    v.get("message").and_then(Value::as_str).map(str::to_string)
}

impl OutputParser for Parser {
    fn line(&mut self, line: &str) {
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
            }
            Some("turn.failed") => {
                let m = v
                    .get("error")
                    .and_then(msg)
                    .unwrap_or_else(|| "codex turn failed".into());
                self.turn_failed = Some(m);
            }
            Some("error") => {
                self.pending_error = Some(msg(&v).unwrap_or_else(|| "codex error".into()));
            }
            Some("item.completed") => {
                let Some(item) = v.get("item") else { return };
                // Older releases said `item_type` / `assistant_message`.
                let ty = item
                    .get("type")
                    .or_else(|| item.get("item_type"))
                    .and_then(Value::as_str);
                if matches!(ty, Some("agent_message" | "assistant_message"))
                    && let Some(t) = item.get("text").and_then(Value::as_str)
                {
                    self.last_message = Some(tail_str(t, TEXT_TAIL_BYTES));
                }
            }
            _ => {}
        }
    }

    fn finish(&mut self) -> Parsed {
        let failure = self
            .turn_failed
            .take()
            .or(self.pending_error.take())
            .map(|m| (classify_api_error(&m), tail_str(&m, 4096)));
        Parsed {
            text: self.last_message.take(),
            session_id: self.session_id.take(),
            usage: self.usage,
            num_turns: (self.turns > 0).then_some(self.turns),
            saw_result: self.turns > 0,
            failure,
            ..Parsed::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentKind;

    #[test]
    fn resume_and_flags_order() {
        let mut spec = AgentSpec::new(AgentKind::Codex);
        spec.model = Some("gpt-5".into());
        spec.full_auto = true;
        let mut req = AgentRequest::new("p", ".", ".", "n");
        req.resume = Some("th-1".into());
        assert_eq!(
            args(&spec, &req).unwrap(),
            [
                "exec",
                "--json",
                "--model",
                "gpt-5",
                "--full-auto",
                "resume",
                "th-1",
                "-"
            ]
        );
        spec.max_turns = Some(3);
        assert!(args(&spec, &req).is_err());
    }

    #[test]
    fn error_then_completed_turn_is_not_a_failure() {
        let mut p = Parser::default();
        p.line(r#"{"type":"error","message":"Reconnecting... 1/5"}"#);
        p.line(r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}"#);
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
}
