//! Outline-first reads in the hooks: a whole-file read over `[mask] read_threshold` (Claude's
//! Read, gemini's read_file) is answered with the file's first lines and its outline
//! ([`baton_context::outline::first_read`]). The agent keeps every way to more: a read with a
//! range passes untouched, and so does the same file read whole again in the same session
//! (the second read is the agent asking for all of it; `.baton/outlined.jsonl` remembers the
//! first). baton's own scratch files are never outlined.

use serde_json::{Value, json};

use super::{Env, origin, session_id};
use baton_agent::wiring::HookAgent;
use baton_context::mask::record::{self, MaskRecord, Source};
use baton_context::outline::{FirstRead, first_read};

/// The file of reads already answered outline first: one `{"session", "path"}` line each.
const OUTLINED: &str = "outlined.jsonl";
/// Past this size the file starts over (an old session's reads no longer matter).
const OUTLINED_MAX_BYTES: u64 = 1 << 20;

/// For a file-read tool: `Some` with the answer (`None`: the read passes untouched — a range,
/// a small file, a second read, a scratch file; a file read is never masked or redacted, an
/// edit needs its exact text). `None` for any other tool.
pub(super) fn post_read(
    agent: HookAgent,
    tool: &str,
    v: &Value,
    resp: &Value,
    env: &Env,
) -> Option<Option<Value>> {
    let is_read = matches!(
        (agent, tool),
        (HookAgent::Claude, "Read") | (HookAgent::Gemini, "read_file")
    );
    if !is_read {
        return None;
    }
    Some(outline_first(agent, tool, v, resp, env))
}

fn outline_first(
    agent: HookAgent,
    tool: &str,
    v: &Value,
    resp: &Value,
    env: &Env,
) -> Option<Value> {
    let input = v.get("tool_input")?;
    let (path, text) = match (agent, tool) {
        (HookAgent::Claude, "Read") => {
            let file = resp.get("file")?;
            if resp.get("type").and_then(Value::as_str) != Some("text") {
                return None;
            }
            (
                file.get("filePath").and_then(Value::as_str)?,
                file.get("content").and_then(Value::as_str)?,
            )
        }
        (HookAgent::Gemini, "read_file") => (
            input
                .get("file_path")
                .or_else(|| input.get("absolute_path"))
                .and_then(Value::as_str)?,
            match resp {
                Value::String(s) => s.as_str(),
                _ => resp.get("llmContent").and_then(Value::as_str)?,
            },
        ),
        _ => return None,
    };
    // baton's own scratch file (the full output a summary named) is shown as it is, never
    // outlined, but with its secrets redacted: the copy on disk keeps them (`redact_scratch`
    // is opt-in), what the model reads does not.
    if super::reads_scratch(path, env) {
        return redacted_read(agent, resp, text);
    }
    let threshold = env.read_threshold?;
    // Claude's Read takes offset/limit, gemini's read_file start_line/end_line.
    let ranged = ["offset", "limit", "start_line", "end_line"]
        .iter()
        .any(|k| input.get(k).is_some_and(|x| !x.is_null()))
        || resp
            .pointer("/file/startLine")
            .and_then(Value::as_u64)
            .unwrap_or(1)
            != 1;
    if ranged || text.len() <= threshold {
        return None;
    }
    let session = session_id(v).unwrap_or("");
    if outlined_before(env.local_dir, session, path) {
        return None;
    }
    let fr = first_read(path, text, threshold)?;
    note_outlined(env.local_dir, session, path);
    log(agent, v, env, path, &fr);
    Some(match agent {
        HookAgent::Claude => {
            let mut file = resp["file"].clone();
            file["content"] = json!(fr.head);
            file["numLines"] = json!(fr.head_lines);
            file["startLine"] = json!(1);
            file["totalLines"] = json!(fr.total_lines);
            let mut out = resp.clone();
            out["file"] = file;
            json!({"hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "updatedToolOutput": out,
                "additionalContext": fr.guide,
            }})
        }
        // gemini takes a replacement only as a denial's reason.
        _ => json!({"decision": "deny", "reason": fr.text()}),
    })
}

/// A file read answered with its secrets redacted, in the tool's own shape; `None` when it
/// holds none (the read passes untouched).
fn redacted_read(agent: HookAgent, resp: &Value, text: &str) -> Option<Value> {
    let std::borrow::Cow::Owned(clean) = baton_context::mask::redact::redact(text) else {
        return None;
    };
    Some(match agent {
        HookAgent::Claude => {
            let mut out = resp.clone();
            out["file"]["content"] = json!(clean);
            json!({"hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "updatedToolOutput": out,
            }})
        }
        _ => json!({"decision": "deny", "reason": clean}),
    })
}

/// Whether `path` was answered outline first before in `session` (its second whole read in
/// a session is the agent asking for all of it).
pub(crate) fn outlined_before(local_dir: &std::path::Path, session: &str, path: &str) -> bool {
    let Ok(bytes) = baton_core::fs::read_no_link(&local_dir.join(OUTLINED)) else {
        return false;
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .any(|r| r["session"] == session && r["path"] == path)
}

/// Remember that `path` was answered outline first in `session`.
pub(crate) fn note_outlined(local_dir: &std::path::Path, session: &str, path: &str) {
    let file = local_dir.join(OUTLINED);
    if std::fs::symlink_metadata(&file).is_ok_and(|m| m.len() > OUTLINED_MAX_BYTES) {
        let _ = std::fs::remove_file(&file);
    }
    let line = json!({"session": session, "path": path}).to_string() + "\n";
    if let Err(e) = baton_core::fs::create_dir_all(local_dir)
        .and_then(|()| baton_core::fs::append(&file, line.as_bytes()))
    {
        eprintln!("baton: note: {} was not written: {e}", file.display());
    }
}

/// The read in the mask log: its full text is the file itself.
fn log(agent: HookAgent, v: &Value, env: &Env, path: &str, fr: &FirstRead) {
    let o = origin(agent, v);
    let tool = v.get("tool_name").and_then(Value::as_str).unwrap_or("read");
    let shown = format!("{}{}", fr.head, fr.guide);
    let rec = MaskRecord {
        v: record::VERSION,
        ts: baton_core::ids::now(),
        source: Source::PostToolUse,
        agent: o.agent,
        session: o.session,
        run: o.run,
        phase: o.phase,
        command: tool.chars().take(64).collect(),
        kind: "outline".into(),
        scratch: path.to_string(),
        tokens: fr.file_tokens as u64,
        tokens_estimated: false,
        masked_tokens: baton_context::tokens::Encoding::O200kBase.count(&shown) as u64,
    };
    if let Err(e) = record::append(env.local_dir, &rec) {
        eprintln!("baton: note: the mask log was not written: {e}");
    }
}
