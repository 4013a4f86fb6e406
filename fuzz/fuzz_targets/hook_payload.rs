//! The hooks' stdin: any bytes, or a payload built from the CLIs' shapes (the tool, its input
//! and its response as each CLI sends them, with values anywhere from plausible to hostile),
//! as any CLI's event. The answer must be JSON the CLI can read, within the hook's cap.
#![no_main]

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU32, Ordering};

use arbitrary::Arbitrary;
use baton::hooks::{Env, handle};
use baton_agent::wiring::{Event, HookAgent};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

const TOOLS: &[&str] = &[
    "Bash",
    "Read",
    "read_file",
    "run_shell_command",
    "mcp__x__y",
    "mcp__baton__mask",
    "Edit",
    "",
];

/// A payload in a CLI's shape.
#[derive(Arbitrary, Debug)]
struct Shaped {
    tool: u8,
    session: Option<String>,
    command: String,
    stdout: String,
    stderr: String,
    interrupted: Option<u8>,
    /// A path that names baton's scratch folder, the project, or anything.
    path: (u8, String),
    ranged: Option<(u16, u16)>,
    /// The response as a plain string (codex, gemini) instead of an object.
    response_as_string: bool,
    persisted: Option<String>,
    blocks: Vec<String>,
}

#[derive(Arbitrary, Debug)]
enum Payload {
    Raw(Vec<u8>),
    Shaped(Shaped),
}

#[derive(Arbitrary, Debug)]
struct Input {
    agent: u8,
    event: u8,
    payload: Payload,
}

static PROJECT: LazyLock<tempfile::TempDir> =
    LazyLock::new(|| tempfile::tempdir().expect("temp project"));
static CALLS: AtomicU32 = AtomicU32::new(0);

fn shaped(s: Shaped, root: &std::path::Path) -> Vec<u8> {
    let tool = TOOLS[s.tool as usize % TOOLS.len()];
    let path = match s.path.0 % 3 {
        0 => root
            .join(".baton/scratch")
            .join(&s.path.1)
            .display()
            .to_string(),
        1 => root.join(&s.path.1).display().to_string(),
        _ => s.path.1.clone(),
    };
    let mut input = json!({"command": s.command, "file_path": path});
    if let Some((offset, limit)) = s.ranged {
        input["offset"] = json!(offset);
        input["limit"] = json!(limit);
    }
    let response = if s.response_as_string {
        Value::String(format!("{}{}", s.stdout, s.stderr))
    } else if tool.starts_with("mcp__") {
        json!(
            s.blocks
                .iter()
                .map(|t| json!({"type": "text", "text": t}))
                .collect::<Vec<_>>()
        )
    } else {
        json!({
            "stdout": s.stdout, "stderr": s.stderr,
            "interrupted": s.interrupted.map(|i| json!(i % 2 == 0)).unwrap_or(json!(s.interrupted)),
            "isImage": false, "persistedOutputPath": s.persisted,
            "llmContent": s.stdout, "type": "text",
            "file": {"filePath": path, "content": s.stdout, "numLines": 1, "startLine": 1,
                     "totalLines": 1},
        })
    };
    json!({"session_id": s.session, "tool_name": tool, "tool_input": input,
           "tool_response": response, "hook_event_name": "PostToolUse"})
    .to_string()
    .into_bytes()
}

fuzz_target!(|input: Input| {
    let agent = [HookAgent::Claude, HookAgent::Codex, HookAgent::Gemini][input.agent as usize % 3];
    let event = [
        Event::PreToolUse,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::SessionStart,
        Event::PreCompact,
    ][input.event as usize % 5];
    let root = PROJECT.path();
    let local = root.join(".baton");
    // Scratch files of masked outputs would pile up over millions of runs.
    if CALLS.fetch_add(1, Ordering::Relaxed) % 2000 == 0 {
        let _ = std::fs::remove_dir_all(&local);
    }
    let payload = match input.payload {
        Payload::Raw(b) => b,
        Payload::Shaped(s) => shaped(s, root),
    };
    let env = Env {
        store: baton_store::Store::new(root.join(".baton/store")),
        project_dir: root,
        local_dir: &local,
        // Low enough that a fuzzer's output of a few KB is masked, not passed through.
        threshold: 200,
        redact_scratch: false,
        route: vec!["cargo test".into(), "cat".into(), "pytest".into()],
        read_threshold: Some(100),
    };
    if let Ok(Some(answer)) = handle(agent, event, &payload, &env) {
        let text = serde_json::to_string(&answer).expect("an answer serializes");
        assert!(answer.is_object(), "a hook answers with an object: {text}");
        assert!(
            text.len() < 64 * 1024,
            "the answer is capped, got {} bytes",
            text.len()
        );
    }
});
