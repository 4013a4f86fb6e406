//! The agent CLIs' output, read as a call's outcome: claude's stream-json, codex's JSONL
//! events and gemini's JSON document (with its stderr), raw or built from the events each CLI
//! prints (with numbers and strings anywhere from plausible to hostile), however the call
//! ended. An outcome always comes back; a failed exit is always a failure, with a message.
#![no_main]

use arbitrary::Arbitrary;
use baton_agent::{AgentKind, AgentSpec, ExitKind, read_output};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

/// One line of a CLI's output, in one of the shapes the three CLIs print.
#[derive(Arbitrary, Debug)]
enum Event {
    ClaudeInit {
        session: String,
    },
    ClaudeAssistant {
        input: i64,
        cache_read: u64,
        cache_create: u64,
        output: i64,
        model: String,
    },
    ClaudeRetry {
        attempt: u32,
        status: Option<u16>,
        error: String,
    },
    ClaudeResult {
        subtype: u8,
        is_error: bool,
        result: String,
        cost: f64,
        turns: i64,
        denials: Vec<String>,
    },
    CodexThread {
        id: String,
    },
    CodexItem {
        kind: u8,
        text: String,
    },
    CodexTurnCompleted {
        input: u64,
        cached: u64,
        output: u64,
    },
    CodexTurnFailed {
        message: String,
    },
    CodexError {
        message: String,
    },
    Gemini {
        session: String,
        response: Option<String>,
        tokens: i64,
        error: Option<(String, Option<i64>)>,
    },
    Text(String),
}

const SUBTYPES: &[&str] = &[
    "success",
    "error_max_turns",
    "error_during_execution",
    "error",
    "",
];

fn line(e: Event) -> String {
    let v = match e {
        Event::ClaudeInit { session } => {
            json!({"type": "system", "subtype": "init", "session_id": session})
        }
        Event::ClaudeAssistant {
            input,
            cache_read,
            cache_create,
            output,
            model,
        } => json!({
            "type": "assistant",
            "message": {"model": model, "usage": {"input_tokens": input,
                "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_create,
                "output_tokens": output}}}),
        Event::ClaudeRetry {
            attempt,
            status,
            error,
        } => json!({"type": "system",
            "subtype": "api_retry", "attempt": attempt, "error_status": status, "error": error}),
        Event::ClaudeResult {
            subtype,
            is_error,
            result,
            cost,
            turns,
            denials,
        } => json!({
            "type": "result", "subtype": SUBTYPES[subtype as usize % SUBTYPES.len()],
            "is_error": is_error, "result": result, "total_cost_usd": cost, "num_turns": turns,
            "permission_denials": denials.iter().map(|d| json!({"tool_name": d})).collect::<Vec<_>>(),
            "usage": {"input_tokens": 1, "output_tokens": 2}}),
        Event::CodexThread { id } => json!({"type": "thread.started", "thread_id": id}),
        Event::CodexItem { kind, text } => {
            let ty =
                ["agent_message", "command_execution", "reasoning", "error"][kind as usize % 4];
            json!({"type": "item.completed",
                   "item": {"type": ty, "text": text, "command": text, "aggregated_output": text}})
        }
        Event::CodexTurnCompleted {
            input,
            cached,
            output,
        } => json!({"type": "turn.completed",
            "usage": {"input_tokens": input, "cached_input_tokens": cached, "output_tokens": output}}),
        Event::CodexTurnFailed { message } => {
            json!({"type": "turn.failed", "error": {"message": message}})
        }
        Event::CodexError { message } => json!({"type": "error", "message": message}),
        Event::Gemini {
            session,
            response,
            tokens,
            error,
        } => {
            let mut v = json!({"session_id": session, "response": response,
                "stats": {"models": {"gemini-2.5-pro": {"tokens": {"prompt": tokens, "total": tokens,
                    "candidates": 1, "cached": 0}}}}});
            if let Some((message, code)) = error {
                v["error"] = json!({"type": "ApiError", "message": message, "code": code});
            }
            v
        }
        Event::Text(t) => return t,
    };
    v.to_string()
}

#[derive(Arbitrary, Debug)]
enum Output {
    /// stdout, then stderr after the first [`STDERR`] (a seed is a recorded stream as it is).
    Raw(Vec<u8>),
    Events {
        stdout: Vec<Event>,
        stderr: Vec<String>,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    kind: u8,
    exit: u8,
    output: Output,
}

const STDERR: &[u8] = b"\n--stderr--\n";

fuzz_target!(|input: Input| {
    let kind = [AgentKind::Claude, AgentKind::Codex, AgentKind::Gemini][input.kind as usize % 3];
    let exit = match input.exit % 8 {
        0..=3 => ExitKind::Exited(0),
        4 => ExitKind::Exited(1),
        5 => ExitKind::Exited(i32::from(input.exit)),
        6 => ExitKind::Signaled(9),
        _ => ExitKind::Stopped,
    };
    let (stdout, stderr): (Vec<u8>, Vec<u8>) = match input.output {
        Output::Raw(data) => match data.windows(STDERR.len()).position(|w| w == STDERR) {
            Some(i) => (data[..i].to_vec(), data[i + STDERR.len()..].to_vec()),
            None => (data, Vec::new()),
        },
        Output::Events { stdout, stderr } => (
            stdout
                .into_iter()
                .map(|e| line(e) + "\n")
                .collect::<String>()
                .into_bytes(),
            stderr.join("\n").into_bytes(),
        ),
    };
    let out = read_output(&AgentSpec::new(kind), &stdout, &stderr, exit);
    if !matches!(exit, ExitKind::Exited(0)) {
        assert!(out.is_error(), "{exit:?} read as success: {out:?}");
    }
    assert_eq!(out.stdout_bytes, stdout.len() as u64);
    if out.is_error() {
        assert!(
            out.error.as_deref().is_some_and(|e| !e.is_empty()),
            "{out:?}"
        );
    }
    let _: Value = serde_json::to_value(&out).expect("an outcome serializes");
});
