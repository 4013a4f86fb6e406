//! Token use of an interactive agent session, read from the transcript the CLI writes itself:
//! Claude Code `~/.claude/projects/<project>/<session>.jsonl` (`message.usage` of each
//! assistant message), codex `~/.codex/sessions/…/rollout-*.jsonl` (`event_msg` lines whose
//! `payload.type` is `token_count`), gemini `~/.gemini/tmp/<project>/chats/session-*.json`
//! (`messages[].tokens`). The roots follow `CLAUDE_CONFIG_DIR`, `CODEX_HOME` and `HOME`, so a
//! test (or a second account) points them elsewhere. Formats change between versions: unknown
//! lines are skipped, and a session whose transcript is not found is simply not metered.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::AgentKind;

/// Where `kind` keeps its session transcripts, from the environment `var` reads.
pub fn root(kind: AgentKind, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    use crate::wiring::HookAgent;
    use crate::wiring::config_dir;
    match kind {
        AgentKind::Claude => Some(config_dir(HookAgent::Claude, var)?.join("projects")),
        AgentKind::Codex => Some(config_dir(HookAgent::Codex, var)?.join("sessions")),
        AgentKind::Gemini => Some(config_dir(HookAgent::Gemini, var)?.join("tmp")),
        AgentKind::Command | AgentKind::Sim => None,
    }
}

/// Whether `path` is a transcript file of `kind`.
fn is_transcript(kind: AgentKind, path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match kind {
        AgentKind::Claude => name.ends_with(".jsonl"),
        AgentKind::Codex => name.starts_with("rollout-") && name.ends_with(".jsonl"),
        // gemini 0.61 writes `.jsonl` (a record a line), earlier versions one `.json` document.
        AgentKind::Gemini => {
            (name.ends_with(".json") || name.ends_with(".jsonl"))
                && path
                    .parent()
                    .and_then(|p| p.file_name())
                    .is_some_and(|p| p == "chats")
        }
        AgentKind::Command | AgentKind::Sim => false,
    }
}

/// The transcript of `kind` last written at or after `since` whose name contains `name` (the
/// session's id: claude's `<id>.jsonl`, codex's `rollout-<time>-<id>.jsonl`, gemini's
/// `session-<time>-<first 8 of the id>.jsonl`); without one, the newest such file (another
/// session started meanwhile could then be taken).
pub fn newest(
    kind: AgentKind,
    root: &Path,
    name: Option<&str>,
    since: SystemTime,
) -> Option<PathBuf> {
    fn walk(
        dir: &Path,
        depth: usize,
        out: &mut Vec<(SystemTime, PathBuf)>,
        kind: AgentKind,
        name: Option<&str>,
    ) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() && depth < 5 {
                walk(&p, depth + 1, out, kind, name);
            } else if ft.is_file()
                && is_transcript(kind, &p)
                && name.is_none_or(|n| {
                    p.file_name()
                        .is_some_and(|f| f.to_string_lossy().contains(n))
                })
                && let Ok(m) = e.metadata().and_then(|m| m.modified())
            {
                out.push((m, p));
            }
        }
    }
    let mut found = vec![];
    walk(root, 0, &mut found, kind, name);
    found
        .into_iter()
        .filter(|(m, _)| *m >= since)
        .max()
        .map(|(_, p)| p)
}

/// The session's context size in tokens, as its transcript last reports it.
pub fn context_tokens(kind: AgentKind, text: &str) -> Option<u64> {
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    match kind {
        AgentKind::Claude => text.lines().rev().find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            let u = v.get("message")?.get("usage")?;
            u.is_object().then(|| crate::claude::usage(u).total())
        }),
        AgentKind::Codex => text.lines().rev().find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            let p = v.get("payload")?;
            if p.get("type")?.as_str()? != "token_count" {
                return None;
            }
            let info = p.get("info")?;
            let u = info
                .get("last_token_usage")
                .or_else(|| info.get("total_token_usage"))?;
            Some(match u.get("total_tokens").and_then(Value::as_u64) {
                Some(t) => t,
                None => n(u, "input_tokens").saturating_add(n(u, "output_tokens")),
            })
        }),
        AgentKind::Gemini => gemini_messages(text).iter().rev().find_map(|m| {
            let t = m.get("tokens")?;
            Some(match t.get("total").and_then(Value::as_u64) {
                Some(total) => total,
                None => n(t, "input").saturating_add(n(t, "output")),
            })
        }),
        AgentKind::Command | AgentKind::Sim => None,
    }
}

/// A gemini transcript's messages: the `messages` of a `.json` document, or the records of a
/// `.jsonl` file (a message rewritten with its tokens is a later line with the same id).
fn gemini_messages(text: &str) -> Vec<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return match v.get("messages").and_then(Value::as_array) {
            Some(m) => m.clone(),
            None => vec![v],
        };
    }
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

/// The largest single model request of a session, in prompt tokens (what one request put in
/// the model's context: claude's input + cache creation + cache read of an assistant message,
/// codex's `last_token_usage.input_tokens`, which counts the cached part, gemini's
/// `tokens.input`, its `promptTokenCount`).
pub fn peak_tokens(kind: AgentKind, text: &str) -> Option<u64> {
    let lines = || {
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    };
    match kind {
        AgentKind::Claude => lines()
            .filter_map(|v| {
                let u = v.get("message")?.get("usage")?;
                u.is_object()
                    .then(|| crate::claude::usage(u).prompt_tokens())
            })
            .max(),
        AgentKind::Codex => lines()
            .filter_map(|v| {
                let p = v.get("payload")?;
                (p.get("type")?.as_str()? == "token_count").then_some(())?;
                let u = p.get("info")?.get("last_token_usage")?;
                u.get("input_tokens")?.as_u64()
            })
            .max(),
        AgentKind::Gemini => gemini_messages(text)
            .iter()
            .filter(|m| m.get("type").and_then(Value::as_str) == Some("gemini"))
            .filter_map(|m| m.get("tokens")?.get("input")?.as_u64())
            .max(),
        AgentKind::Command | AgentKind::Sim => None,
    }
}

/// Larger transcripts are not read.
const MAX_TRANSCRIPT_BYTES: u64 = 256 << 20;

/// The context of the headless session `session_id` of `kind` that started at `since`, from
/// the transcript the CLI wrote under the roots `env` (the agent's own environment, over
/// baton's) names: its latest size ([`context_tokens`]) and its peak ([`peak_tokens`]). For
/// codex and gemini, whose headless output reports only sums.
pub fn session_context(
    kind: AgentKind,
    env: &[(String, String)],
    session_id: &str,
    since: SystemTime,
) -> Option<(Option<u64>, Option<u64>)> {
    let var = |k: &str| {
        env.iter()
            .rev()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(k).ok())
    };
    let id = match kind {
        AgentKind::Gemini => session_id.get(..8)?,
        _ => session_id,
    };
    // A session id names a file: nothing that could step out of the folder.
    if id.is_empty() || id.contains(['/', '\\', '\0']) || id.starts_with('.') {
        return None;
    }
    let path = newest(kind, &root(kind, &var)?, Some(id), since)?;
    // A transcript is the CLI's own file, but bounded all the same (and never through a link).
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_TRANSCRIPT_BYTES {
        return None;
    }
    let bytes = baton_core::fs::read_no_link(&path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some((context_tokens(kind, &text), peak_tokens(kind, &text)))
}

/// A thread that polls the session's transcript while it runs: it keeps the latest context
/// size and calls `warn` once when it passes `budget`.
pub struct Watcher {
    stop: Arc<AtomicBool>,
    tokens: Arc<AtomicU64>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    pub fn start(
        kind: AgentKind,
        root: PathBuf,
        name: Option<String>,
        since: SystemTime,
        budget: Option<u64>,
        every: Duration,
        warn: Box<dyn Fn(u64, u64) + Send>,
    ) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let tokens = Arc::new(AtomicU64::new(0));
        let (s, t) = (stop.clone(), tokens.clone());
        let handle = std::thread::spawn(move || {
            let mut warned = false;
            loop {
                let done = s.load(Ordering::SeqCst);
                if let Some(n) = newest(kind, &root, name.as_deref(), since)
                    .and_then(|p| std::fs::read_to_string(p).ok())
                    .and_then(|text| context_tokens(kind, &text))
                {
                    t.store(n, Ordering::SeqCst);
                    if let Some(b) = budget
                        && n > b
                        && !warned
                    {
                        warned = true;
                        warn(n, b);
                    }
                }
                if done {
                    return;
                }
                std::thread::sleep(every);
            }
        });
        Watcher {
            stop,
            tokens,
            handle: Some(handle),
        }
    }

    /// Stop polling (after one last read) and return the session's last known context size.
    pub fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.tokens.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_cli_s_latest_usage() {
        let claude = r#"{"type":"user","message":{"role":"user","content":"hi"}}
{"type":"assistant","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":5}}}
{"type":"assistant","message":{"usage":{"input_tokens":20,"cache_creation_input_tokens":200,"cache_read_input_tokens":2000,"output_tokens":7}}}
not json
"#;
        assert_eq!(context_tokens(AgentKind::Claude, claude), Some(2227));
        let codex = r#"{"type":"session_meta","payload":{"id":"x"}}
{"type":"event_msg","payload":{"type":"token_count","info":null}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"total_tokens":9000},"last_token_usage":{"input_tokens":4000,"output_tokens":300,"total_tokens":4300}}}}
{"type":"event_msg","payload":{"type":"agent_message","message":"ok"}}
"#;
        assert_eq!(context_tokens(AgentKind::Codex, codex), Some(4300));
        let gemini = r#"{"sessionId":"s","messages":[{"type":"user","content":"q"},{"type":"gemini","tokens":{"input":900,"output":40,"total":950}},{"type":"user","content":"a"}]}"#;
        assert_eq!(context_tokens(AgentKind::Gemini, gemini), Some(950));
        assert_eq!(context_tokens(AgentKind::Claude, "{}\n"), None);
        assert_eq!(context_tokens(AgentKind::Command, claude), None);
    }

    #[test]
    fn reads_each_cli_s_largest_request() {
        let claude = r#"{"type":"assistant","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":5000,"output_tokens":5}}}
{"type":"assistant","message":{"usage":{"input_tokens":20,"cache_creation_input_tokens":200,"cache_read_input_tokens":2000,"output_tokens":7}}}
"#;
        assert_eq!(peak_tokens(AgentKind::Claude, claude), Some(5110));
        let codex = r#"{"type":"event_msg","payload":{"type":"token_count","info":null}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":90000},"last_token_usage":{"input_tokens":31000,"cached_input_tokens":30000,"output_tokens":300}}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":99000},"last_token_usage":{"input_tokens":9000,"output_tokens":30}}}}
"#;
        assert_eq!(peak_tokens(AgentKind::Codex, codex), Some(31000));
        // gemini 0.61: a record a line; a message is written again once its tokens are known.
        let gemini_jsonl = r#"{"sessionId":"s","kind":"main"}
{"id":"m1","type":"user","content":"q"}
{"id":"m2","type":"gemini","content":"a"}
{"id":"m2","type":"gemini","content":"a","tokens":{"input":12000,"output":40,"total":12040}}
{"id":"m3","type":"gemini","content":"b","tokens":{"input":8000,"output":40,"total":8040}}
"#;
        assert_eq!(peak_tokens(AgentKind::Gemini, gemini_jsonl), Some(12000));
        let gemini_json = r#"{"messages":[{"type":"gemini","tokens":{"input":700}},{"type":"user","tokens":{"input":99999}}]}"#;
        assert_eq!(peak_tokens(AgentKind::Gemini, gemini_json), Some(700));
        assert_eq!(peak_tokens(AgentKind::Codex, "not json\n"), None);
    }

    #[test]
    fn a_headless_session_s_peak_is_read_from_its_own_transcript() {
        let home = tempfile::tempdir().unwrap();
        let day = home.path().join(".codex/sessions/2026/11/27");
        std::fs::create_dir_all(&day).unwrap();
        let line = |n: u64| {
            format!(
                "{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"token_count\",\"info\":{{\"last_token_usage\":{{\"input_tokens\":{n}}}}}}}}}\n"
            )
        };
        std::fs::write(
            day.join("rollout-2026-11-27T10-00-00-aaaa-1111.jsonl"),
            line(500),
        )
        .unwrap();
        std::fs::write(
            day.join("rollout-2026-11-27T10-00-01-bbbb-2222.jsonl"),
            line(900),
        )
        .unwrap();
        let env = vec![("HOME".to_string(), home.path().display().to_string())];
        let since = SystemTime::now() - Duration::from_secs(60);
        let peak = |id: &str| session_context(AgentKind::Codex, &env, id, since).and_then(|c| c.1);
        assert_eq!(peak("aaaa-1111"), Some(500));
        assert_eq!(peak("bbbb-2222"), Some(900));
        assert_eq!(peak("cccc-3333"), None);
        assert_eq!(peak("../x"), None);
        let chats = home.path().join(".gemini/tmp/proj/chats");
        std::fs::create_dir_all(&chats).unwrap();
        std::fs::write(
            chats.join("session-2026-11-27T10-00-12345678.jsonl"),
            "{\"type\":\"gemini\",\"tokens\":{\"input\":4321,\"output\":40}}\n",
        )
        .unwrap();
        assert_eq!(
            session_context(AgentKind::Gemini, &env, "12345678-aaaa-bbbb", since),
            Some((Some(4361), Some(4321)))
        );
    }

    #[test]
    fn roots_follow_the_environment() {
        let env = |k: &str| match k {
            "HOME" => Some("/h".to_string()),
            "CODEX_HOME" => Some("/c".to_string()),
            _ => None,
        };
        assert_eq!(
            root(AgentKind::Claude, &env),
            Some(PathBuf::from("/h/.claude/projects"))
        );
        assert_eq!(
            root(AgentKind::Codex, &env),
            Some(PathBuf::from("/c/sessions"))
        );
        assert_eq!(
            root(AgentKind::Gemini, &env),
            Some(PathBuf::from("/h/.gemini/tmp"))
        );
        assert_eq!(root(AgentKind::Command, &env), None);
    }

    #[test]
    fn finds_the_session_written_since_the_start() {
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("proj/old.jsonl");
        std::fs::create_dir_all(old.parent().unwrap()).unwrap();
        std::fs::write(&old, "{}").unwrap();
        let since = SystemTime::now() + Duration::from_secs(3600);
        assert_eq!(newest(AgentKind::Claude, d.path(), None, since), None);
        let since = SystemTime::now() - Duration::from_secs(3600);
        assert_eq!(newest(AgentKind::Claude, d.path(), None, since), Some(old));
        assert_eq!(newest(AgentKind::Codex, d.path(), None, since), None);
        // A session whose id baton chose: that file, however new another one is.
        let ours = d.path().join("proj/ours.jsonl");
        std::fs::write(&ours, "{}").unwrap();
        let other = d.path().join("proj/other.jsonl");
        std::fs::write(&other, "{}").unwrap();
        let newer = SystemTime::now() + Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&other)
            .unwrap()
            .set_modified(newer)
            .unwrap();
        assert_eq!(
            newest(AgentKind::Claude, d.path(), None, since),
            Some(other)
        );
        assert_eq!(
            newest(AgentKind::Claude, d.path(), Some("ours.jsonl"), since),
            Some(ours)
        );
    }
}
