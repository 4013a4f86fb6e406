//! Agent CLI hooks: one command per agent and event (`baton hook claude post-tool-use`), reading
//! the event's JSON on stdin and answering on stdout in the agent's own format.
//!
//! - pre-tool-use (Claude and Codex `PreToolUse`): a command of `[mask] route` is rewritten to
//!   run through `baton mask`, before the CLI cuts its output (see [`route`]); for claude only
//!   where it would run the command unasked ([`claude_permission`]).
//! - post-tool-use-failure (Claude `PostToolUseFailure`): a command that failed and was not
//!   routed; claude passes only the head of its output and takes no replacement, so baton adds
//!   the summary of that head and says plainly that the rest was cut.
//! - post-tool-use (Claude `PostToolUse`, Codex `PostToolUse`, Gemini `AfterTool`): an output
//!   over the threshold goes to scratch and is replaced by baton's mask summary (for Claude,
//!   from the full copy it saved when it cut the output); a routed command's answer is
//!   baton's already and is never masked again. Claude gets
//!   `updatedToolOutput` in exactly the tool's shape (Bash: `{stdout, stderr, interrupted,
//!   isImage}`; a shape that does not match is silently ignored) or `updatedMCPToolOutput`;
//!   Codex `decision: "block"` and Gemini `decision: "deny"`, whose `reason` replaces the result.
//! - session-start: the current task's state summary as `additionalContext`.
//! - pre-compact (Gemini `PreCompress`): a line in the task's history.
//!
//! The caller fails open: any error here means no answer, and the agent keeps the original.

use std::path::Path;

use serde_json::{Value, json};

use crate::error::{Error, Result};
use baton_agent::wiring::{self, Event, HookAgent};
use baton_context::mask::{self, capture};
use baton_store::Store;

pub mod claude_permission;
pub(crate) mod read;

/// What a hook needs from the project.
pub struct Env<'a> {
    pub store: Store,
    /// The project's folder (claude's project settings are read from it).
    pub project_dir: &'a std::path::Path,
    pub local_dir: &'a std::path::Path,
    pub threshold: usize,
    pub redact_scratch: bool,
    /// The command prefixes the pre-tool hook routes through `baton mask` (`[mask] route`).
    pub route: Vec<String>,
    /// Whole-file reads over this many tokens are answered outline first (`[mask]
    /// read_threshold`); `None`: never.
    pub read_threshold: Option<usize>,
}

/// Hook output strings are capped (Claude Code: 10,000 characters); the summary stays far below.
const MAX_REPLY_CHARS: usize = 9_000;

/// Answer one event: `None` is "no output" (the agent goes on unchanged).
pub fn handle(agent: HookAgent, event: Event, input: &[u8], env: &Env) -> Result<Option<Value>> {
    let v: Value = serde_json::from_slice(input)
        .map_err(|e| Error::invalid(format!("hook input is not JSON: {e}")))?;
    if !v.is_object() {
        return Err(Error::invalid("hook input is not a JSON object"));
    }
    match event {
        Event::PreToolUse => pre_tool_use(agent, &v, env),
        Event::PostToolUse => post_tool_use(agent, &v, env),
        Event::PostToolUseFailure => post_tool_use_failure(agent, &v, env),
        Event::SessionStart => session_start(agent, env),
        Event::PreCompact => pre_compact(agent, &v, env),
    }
}

/// Codex cuts a command's output to about 10 KB (head and tail) before its post-tool hooks
/// run, and claude hands a command that failed to another hook with only its first ~10,000
/// characters: a failure in the middle is gone. A command likely to print a lot is therefore
/// run through `baton mask` instead, so the model gets the summary of the whole output, and
/// the command's exit code as it was. Codex 0.171 takes a rewritten `tool_input.command` only
/// with `permissionDecision: allow`; claude checks its permission rules on the rewritten
/// command unless the hook allows it, so it is routed only where claude would have run the
/// original without asking.
fn pre_tool_use(agent: HookAgent, v: &Value, env: &Env) -> Result<Option<Value>> {
    if agent == HookAgent::Gemini {
        return Ok(None);
    }
    let Some(input) = v.get("tool_input").and_then(Value::as_object) else {
        return Ok(None);
    };
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return Ok(None);
    };
    // The common case, a command not routed, costs no look-up of baton's own path. A read of
    // baton's own scratch file is never masked again.
    if !mask::route::matches(command.trim_start(), &env.route) || reads_scratch(command, env) {
        return Ok(None);
    }
    if agent == HookAgent::Claude {
        let mode = v
            .get("permission_mode")
            .and_then(Value::as_str)
            .unwrap_or("default");
        let rules = claude_permission::Rules::read(env.project_dir, &wiring::process_env);
        if !claude_permission::runs_unasked(command, mode, &rules) {
            return Ok(None);
        }
    }
    let baton = wiring::baton_program();
    let Some(routed) = route_in_session(command, &env.route, &baton, session_id(v)) else {
        return Ok(None);
    };
    let mut updated = input.clone();
    updated.insert("command".into(), Value::String(routed));
    Ok(Some(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": updated,
    }})))
}

/// `command` run through `baton mask` when it starts with one of `route` (whole words), and
/// is not baton already; the command line itself goes to `bash -c` untouched.
pub fn route(command: &str, route: &[String], baton: &str) -> Option<String> {
    route_in_session(command, route, baton, None)
}

/// [`route`], naming the agent's session (a second whole read of a file in one session is
/// shown whole: the agent asked for all of it).
fn route_in_session(
    command: &str,
    route: &[String],
    baton: &str,
    session: Option<&str>,
) -> Option<String> {
    let c = command.trim_start();
    let first = c.split_whitespace().next()?;
    if first.ends_with("baton") || first.ends_with("baton'") {
        return None;
    }
    let session = session
        .map(|s| format!(" --session {}", wiring::shell_quote(s)))
        .unwrap_or_default();
    mask::route::matches(c, route).then(|| {
        format!(
            "{} mask --routed{session} -- bash -c {}",
            wiring::shell_quote(baton),
            wiring::shell_quote(c)
        )
    })
}

/// Whether a command line is one a pre-tool hook routed through `baton mask`: its output is
/// baton's own answer already (a summary, or a file's outline) and is never masked again.
fn is_routed(command: &str) -> bool {
    let c = command.trim_start();
    let Some(first) = c.split_whitespace().next() else {
        return false;
    };
    let first = first.trim_matches('\'');
    (first == "baton" || first.ends_with("/baton"))
        && c.split_whitespace().nth(1) == Some("mask")
        && c.split_whitespace().any(|w| w == "--routed")
}

/// The tool's output as text, and how to put a replacement back in its shape.
enum Shape {
    /// Claude Bash: `{stdout, stderr, interrupted, isImage}`; `persisted` is Claude's own copy
    /// of an output it cut (`persistedOutputPath`), named again in the replacement.
    ClaudeBash {
        interrupted: Value,
        persisted: Option<String>,
    },
    /// Claude MCP tool: a string, or content blocks.
    ClaudeMcp { blocks: bool },
    /// Codex and Gemini: the replacement is a reason text.
    Reason,
}

fn post_tool_use(agent: HookAgent, v: &Value, env: &Env) -> Result<Option<Value>> {
    let tool = v.get("tool_name").and_then(Value::as_str).unwrap_or("");
    // baton's own MCP tools already answer briefly (wired by `baton init`, or by the plugin).
    if tool.starts_with("mcp__baton__") || tool.starts_with("mcp__plugin_baton_baton__") {
        return Ok(None);
    }
    let Some(resp) = v.get("tool_response") else {
        return Err(Error::invalid("PostToolUse input has no tool_response"));
    };
    if let Some(answer) = read::post_read(agent, tool, v, resp, env) {
        return Ok(answer);
    }
    let Some((text, shape)) = output_text(agent, tool, resp) else {
        return Ok(None);
    };
    let line = v
        .pointer("/tool_input/command")
        .and_then(Value::as_str)
        .unwrap_or("");
    // Each token is at least one byte: an output this short cannot be over the threshold. A
    // read of baton's own scratch file (the full output a summary named) is shown as it is, and
    // so is a routed command's answer: baton's already, recorded once by `baton mask`.
    if text.len() <= env.threshold || reads_scratch(line, env) || is_routed(line) {
        return Ok(redacted(agent, shape, &text));
    }
    let (command, outcome) = mask_output(env, line, &text)?;
    if !outcome.masked {
        return Ok(redacted(agent, shape, &text));
    }
    let mut summary = serde_json::to_string_pretty(&outcome.to_json())
        .map_err(|e| Error::internal(e.to_string()))?;
    if summary.len() > MAX_REPLY_CHARS {
        let cut = summary.floor_char_boundary(MAX_REPLY_CHARS);
        summary.truncate(cut);
        summary.push_str(&format!(
            "\n… (cut; the full output is in {})",
            outcome.scratch.display()
        ));
    }
    let note = "baton masked this output (over the token threshold); read the file named in \
                full_output_path for more.\n";
    // Claude's pointer to its own copy stays beside baton's (before the JSON document).
    let claude_copy = match &shape {
        Shape::ClaudeBash {
            persisted: Some(p), ..
        } => format!("Claude Code's own copy of the full output: {p}\n"),
        _ => String::new(),
    };
    let replaced = format!("{note}{claude_copy}{summary}\n");
    log_mask(agent, v, env, &outcome, &command, &replaced);
    Ok(Some(reply(agent, shape, replaced)))
}

/// Claude Code hands a command that exited non-zero to `PostToolUseFailure`, not
/// `PostToolUse`, with `error` holding only its output's first ~10,000 characters ("Exit code
/// N" and the head), and takes no replacement from this hook: only `additionalContext` beside
/// it. A routed command's error is baton's summary already (nothing to add). Otherwise a long
/// head is masked to scratch like any output, and the model is told plainly that what it sees
/// was cut by the CLI and how to see the whole run.
fn post_tool_use_failure(agent: HookAgent, v: &Value, env: &Env) -> Result<Option<Value>> {
    if agent != HookAgent::Claude || v.get("tool_name").and_then(Value::as_str) != Some("Bash") {
        return Ok(None);
    }
    let line = v
        .pointer("/tool_input/command")
        .and_then(Value::as_str)
        .unwrap_or("");
    if is_routed(line) || reads_scratch(line, env) {
        return Ok(None);
    }
    let Some(error) = v.get("error").and_then(Value::as_str) else {
        return Ok(None);
    };
    if v.get("is_interrupt").and_then(Value::as_bool) == Some(true) || error.len() < CLAUDE_CUT {
        // Whole as it is (no cut to speak of): the model has all of it.
        return Ok(None);
    }
    let (command, outcome) = mask_output(env, line, error)?;
    let rerun = format!("{} mask -- {line}", wiring::baton_command());
    let mut context = format!(
        "baton: Claude Code passed on only the first {} characters of this failed command's \
         output; the rest was cut before baton saw it, so the failure itself may be missing \
         above. To see a summary of the whole run (counts, the first failure and its message, \
         the full output in a file), run it again as: {rerun}\n",
        error.chars().count()
    );
    if outcome.masked {
        let summary = serde_json::to_string_pretty(&outcome.to_json())
            .map_err(|e| Error::internal(e.to_string()))?;
        let room = MAX_REPLY_CHARS.saturating_sub(context.len() + 40);
        context.push_str("What the part shown holds:\n");
        context.push_str(&summary[..summary.floor_char_boundary(room)]);
        log_mask(agent, v, env, &outcome, &command, &context);
    }
    Ok(Some(json!({"hookSpecificOutput": {
        "hookEventName": "PostToolUseFailure",
        "additionalContext": context,
    }})))
}

/// Claude Code's cut of a failed command's output (10,000 characters of output, "Exit code N"
/// before them): an `error` this long may have lost its end.
const CLAUDE_CUT: usize = 9_900;

/// Mask an output a CLI captured of `line` (its command line, which helps the detection),
/// under the project's threshold and settings: the command's words and the outcome.
fn mask_output(env: &Env, line: &str, text: &str) -> Result<(Vec<String>, mask::Outcome)> {
    let command: Vec<String> = line.split_whitespace().map(String::from).collect();
    let opts = capture::Options {
        local_dir: env.local_dir,
        threshold: env.threshold,
        kind: mask::Kind::Auto,
        redact_scratch: env.redact_scratch,
    };
    let outcome = capture::mask_bytes(&opts, &command, text.as_bytes())?;
    Ok((command, outcome))
}

/// Whether a command line reads baton's own scratch folder.
fn reads_scratch(command: &str, env: &Env) -> bool {
    mask::scratch::names_scratch(command, env.local_dir)
}

/// Who a hook masks for: the hook's agent, the payload's `session_id`, the run (if any) the
/// environment names.
fn origin(agent: HookAgent, v: &Value) -> mask::record::Origin {
    let mut origin = mask::record::Origin::from_env();
    origin.agent = Some(agent.name().to_string());
    origin.session = session_id(v).map(String::from);
    origin
}

/// The payload's `session_id`, when it is a plausible one.
fn session_id(v: &Value) -> Option<&str> {
    v.get("session_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= 128)
}

/// Note the mask in the project's mask log: the agent is the hook's, the session the
/// payload's `session_id`, the run (if any) the environment's. A log that cannot be written
/// costs the agent nothing.
fn log_mask(
    agent: HookAgent,
    v: &Value,
    env: &Env,
    outcome: &mask::Outcome,
    command: &[String],
    shown: &str,
) {
    use mask::record::{MaskRecord, Source};
    let origin = origin(agent, v);
    let tool = v.get("tool_name").and_then(Value::as_str).unwrap_or("tool");
    // An MCP tool's output has no command line: it is named by its tool.
    let named = if command.is_empty() {
        vec![tool.chars().take(64).collect()]
    } else {
        command.to_vec()
    };
    let rec = MaskRecord::of(outcome, Source::PostToolUse, origin, &named, shown);
    if let Err(e) = mask::record::append(env.local_dir, &rec) {
        eprintln!("baton: note: the mask log was not written: {e}");
    }
}

/// An output shown whole: the same text with its secrets redacted when it holds any (a token
/// in `env`'s output), else no answer, and the agent keeps the output untouched.
fn redacted(agent: HookAgent, shape: Shape, text: &str) -> Option<Value> {
    match mask::redact::redact(text) {
        std::borrow::Cow::Borrowed(_) => None,
        std::borrow::Cow::Owned(r) => Some(reply(agent, shape, r)),
    }
}

/// The answer that puts `replaced` in place of the tool's output, in the agent's own shape.
fn reply(agent: HookAgent, shape: Shape, replaced: String) -> Value {
    match shape {
        Shape::ClaudeBash { interrupted, .. } => json!({"hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedToolOutput": {
                "stdout": replaced, "stderr": "", "interrupted": interrupted, "isImage": false
            }
        }}),
        Shape::ClaudeMcp { blocks } => {
            let out = if blocks {
                json!([{"type": "text", "text": replaced}])
            } else {
                Value::String(replaced)
            };
            json!({"hookSpecificOutput": {
                "hookEventName": "PostToolUse", "updatedMCPToolOutput": out
            }})
        }
        Shape::Reason => {
            let decision = if agent == HookAgent::Gemini {
                "deny"
            } else {
                "block"
            };
            json!({"decision": decision, "reason": replaced})
        }
    }
}

/// The text of a tool's output, or None when it is not text baton should touch (an image, an
/// unknown shape: left to the agent).
fn output_text(agent: HookAgent, tool: &str, resp: &Value) -> Option<(String, Shape)> {
    let joined = |out: &str, err: &str| -> String {
        match (out.is_empty(), err.is_empty()) {
            (_, true) => out.to_string(),
            (true, false) => err.to_string(),
            (false, false) => format!("{out}\n[stderr]\n{err}"),
        }
    };
    let str_of = |k: &str| resp.get(k).and_then(Value::as_str);
    match agent {
        HookAgent::Claude if tool == "Bash" => {
            if resp.get("isImage").and_then(Value::as_bool) == Some(true) {
                return None;
            }
            let stdout = str_of("stdout")?;
            let persisted = str_of("persistedOutputPath").filter(|p| !p.is_empty());
            // Claude cut a large output to its head before this hook runs; the whole of it is in
            // its file. Without that file, the head is all there is.
            let full = persisted.and_then(|p| persisted_output(Path::new(p), stdout));
            let text = joined(
                full.as_deref().unwrap_or(stdout),
                str_of("stderr").unwrap_or(""),
            );
            // Boolean, as the tool's schema has it (a malformed value would void the answer).
            let interrupted = Value::Bool(
                resp.get("interrupted")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            );
            let persisted = full.and(persisted).map(String::from);
            Some((
                text,
                Shape::ClaudeBash {
                    interrupted,
                    persisted,
                },
            ))
        }
        HookAgent::Claude if tool.starts_with("mcp__") => match resp {
            Value::String(s) => Some((s.clone(), Shape::ClaudeMcp { blocks: false })),
            Value::Array(blocks) => {
                let mut text = String::new();
                for b in blocks {
                    // A non-text block (an image) would be lost: leave the whole result alone.
                    if b.get("type").and_then(Value::as_str) != Some("text") {
                        return None;
                    }
                    text.push_str(b.get("text").and_then(Value::as_str)?);
                }
                Some((text, Shape::ClaudeMcp { blocks: true }))
            }
            _ => None,
        },
        HookAgent::Claude => None,
        HookAgent::Codex => match resp {
            Value::String(s) => Some((s.clone(), Shape::Reason)),
            _ => {
                let text = match (str_of("stdout"), str_of("output")) {
                    (Some(o), _) => joined(o, str_of("stderr").unwrap_or("")),
                    (None, Some(o)) => o.to_string(),
                    _ => return None,
                };
                Some((text, Shape::Reason))
            }
        },
        HookAgent::Gemini => {
            let text = match resp {
                Value::String(s) => s.clone(),
                _ => str_of("llmContent")?.to_string(),
            };
            Some((text, Shape::Reason))
        }
    }
}

/// Claude's cap on the file it keeps (it truncates beyond 64 MiB).
const MAX_PERSISTED_BYTES: u64 = 64 << 20;

/// The whole output Claude Code saved at `path`, when it is what the hook was given the head of:
/// a regular file (no link followed), within Claude's cap, valid UTF-8, and starting with the
/// `head` the payload carries. Anything else is `None`, and the head is masked as it is: a
/// payload cannot make the hook show the model some other file.
fn persisted_output(path: &Path, head: &str) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_PERSISTED_BYTES {
        return None;
    }
    let mut text = String::new();
    f.take(MAX_PERSISTED_BYTES).read_to_string(&mut text).ok()?;
    let probe = &head[..head.floor_char_boundary(4096)];
    let strip = |s: &str| s.trim_start_matches(['\n', '\r', ' ', '\t']).len();
    // Claude may drop leading blank lines from the head it passes on.
    let (t, h) = (
        &text[text.len() - strip(&text)..],
        &probe[probe.len() - strip(probe)..],
    );
    (t.starts_with(h) && text.len() >= head.len()).then_some(text)
}

/// The current task's state, for a fresh or compacted session.
fn session_start(agent: HookAgent, env: &Env) -> Result<Option<Value>> {
    let Some(slug) = env.store.current()? else {
        return Ok(None);
    };
    let summary = baton_store::view::summary(&env.store.manifest(&slug)?).render();
    let text = format!(
        "baton task state (from the durable store; `baton status` for every run):\n{summary}"
    );
    let _ = agent;
    Ok(Some(json!({"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": text
    }})))
}

/// Record the compaction in the current task's history.
fn pre_compact(agent: HookAgent, v: &Value, env: &Env) -> Result<Option<Value>> {
    let Some(slug) = env.store.current()? else {
        return Ok(None);
    };
    let trigger = v
        .get("trigger")
        .and_then(Value::as_str)
        .filter(|t| {
            t.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        .unwrap_or("unknown");
    // The store must exist: a note on a task that is gone is an error, not a new file.
    env.store.manifest(&slug)?;
    env.store.note(
        &slug,
        &format!("COMPACT agent: {} trigger: {trigger}", agent.name()),
    )?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::route;

    fn r(cmd: &str) -> Option<String> {
        let routes: Vec<String> = baton_context::mask::route::DEFAULT_ROUTE
            .iter()
            .map(|s| s.to_string())
            .collect();
        route(cmd, &routes, "/opt/my tools/baton")
    }

    #[test]
    fn test_runs_and_builds_are_routed_through_baton_mask() {
        assert_eq!(
            r("cargo test --all 2>&1 | tail -5").as_deref(),
            Some(
                "'/opt/my tools/baton' mask --routed -- bash -c 'cargo test --all 2>&1 | tail -5'"
            )
        );
        assert_eq!(
            r("  pytest -k 'it works'").as_deref(),
            Some(r#"'/opt/my tools/baton' mask --routed -- bash -c 'pytest -k '\''it works'\'''"#)
        );
        assert!(r("git diff --staged").is_some());
        assert!(r("make").is_some());
    }

    #[test]
    fn other_commands_and_baton_itself_are_left_alone() {
        for cmd in [
            "ls -la",
            "cargo testing",
            "makeup",
            "head src/main.rs",
            "baton mask -- cargo test",
            "/usr/bin/baton mask -- cargo test",
            "",
        ] {
            assert_eq!(r(cmd), None, "{cmd}");
        }
        assert_eq!(route("cargo test", &[], "baton"), None, "an empty route");
    }
}
