//! The simulated agent (`baton agent-sim`), for demos and tests — clearly labelled as such in
//! everything it writes. Like a real agent it gets only the prompt (on stdin) and a working
//! directory, reads the story path and the signal it is asked for from the prompt, writes
//! files, stages them, appends its record to the story file and prints the signal — in Claude
//! Code's `stream-json` format, so the engine parses it exactly as it parses `claude -p`.
//!
//! What it does is set by a scenario (TOML; `--scenario FILE` or `BATON_SIM_SCENARIO`):
//!
//! ```toml
//! latency_ms = 0                 # sleep before answering
//! [story."1.2"]
//! dev = ["block", "ok"]          # one action per attempt; the last repeats
//! review = ["fail", "pass"]
//! ```
//!
//! Actions: `ok`/`pass`, `block` (dev), `fail` (review), `fix` (review passes with a fix),
//! `hang`, `crash`, `flood` (50 MB of output), `ratelimit` and `quota` (the first call is
//! refused as rate-limited, or as a spent usage limit in Claude Code's words; the next goes on), `nosignal`, `nostage` (dev claims completion
//! but stages nothing), `norecord` (completes without appending its record), `secret` (dev
//! stages a `.env`), `escalate` (a failure analysis recommends escalating), `bigcontext` (one
//! request of [`BIG_CONTEXT`] tokens, then the phase's
//! work).

pub mod build_auto;
pub mod conductor;
pub mod task;
pub mod verify;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::error::{Error, Result};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub latency_ms: u64,
    /// Verify phases: a pause before each section the agent appends to its output file.
    #[serde(default)]
    pub append_ms: u64,
    #[serde(default)]
    pub story: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    /// Actions for the epic phases (`uat`, `retro`).
    #[serde(default)]
    pub epic: BTreeMap<String, Vec<String>>,
    /// Task workflows (orchestrate, poc, graduate): actions per phase (`sim_task.rs`).
    #[serde(default)]
    pub task: BTreeMap<String, Vec<String>>,
    /// Verify queues: actions per phase id or `item/phase` (`sim_verify.rs`).
    #[serde(default)]
    pub verify: BTreeMap<String, Vec<String>>,
    /// bmad-build-auto dispatches: actions per story id (`sim/build_auto.rs`).
    #[serde(default)]
    pub build: BTreeMap<String, Vec<String>>,
    /// A conductor session (resumed across calls).
    #[serde(default)]
    pub conductor: ConductorSim,
}

/// How the simulated conductor's context grows.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConductorSim {
    /// Tokens a session's context grows by on each call, on top of the prompt.
    #[serde(default)]
    pub growth_tokens: u64,
}

impl Scenario {
    pub fn load(path: Option<&Path>) -> Result<Scenario> {
        let path = path
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("BATON_SIM_SCENARIO").map(PathBuf::from));
        let Some(path) = path else {
            return Ok(Scenario::default());
        };
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        toml::from_str(&text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1);
            Error::corrupt(&path, line, e.message().to_string())
        })
    }

    fn action(&self, story: Option<&str>, phase: &str, attempt: usize) -> String {
        let list = match story {
            Some(id) => self.story.get(id).and_then(|m| m.get(phase)),
            None => self.epic.get(phase),
        };
        match list {
            Some(l) if !l.is_empty() => l[(attempt.max(1) - 1).min(l.len() - 1)].clone(),
            _ => "ok".to_string(),
        }
    }
}

/// What the prompt asks for.
#[derive(Debug, Default)]
struct Ask {
    phase: &'static str,
    story_id: Option<String>,
    story_file: Option<String>,
    epic: Option<String>,
    writes: Vec<String>,
}

const PHASES: &[(&str, &str)] = &[
    ("IMPLEMENTATION COMPLETE:", "dev"),
    ("REVIEW PASSED:", "review"),
    ("KICKOFF COMPLETE:", "kickoff"),
    ("ANALYSIS COMPLETE:", "failure-analysis"),
    ("UAT COMPLETE:", "uat"),
    ("RETRO COMPLETE:", "retro"),
];

fn read_prompt(prompt: &str) -> Ask {
    let mut ask = Ask::default();
    for line in prompt.lines() {
        let l = line.trim();
        if let Some(v) = l.strip_prefix("Story ID:") {
            ask.story_id = Some(v.trim().to_string());
        } else if let Some(v) = l.strip_prefix("Story file:") {
            ask.story_file = Some(v.split_whitespace().next().unwrap_or("").to_string());
        } else if let Some(v) = l
            .strip_prefix("Epic:")
            .or_else(|| l.strip_prefix("Epic file:").map(|_| ""))
        {
            if !v.trim().is_empty() && ask.epic.is_none() {
                ask.epic = Some(v.split_whitespace().next().unwrap_or("").to_string());
            }
        } else if let Some(v) = l.strip_prefix("Files to write:") {
            ask.writes = v
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
        }
        if ask.phase.is_empty()
            && let Some((_, p)) = PHASES.iter().find(|(sig, _)| l.starts_with(sig))
        {
            ask.phase = p;
            if ask.epic.is_none() && (*p == "uat" || *p == "retro") {
                ask.epic = l.rsplit(' ').next().map(str::to_string);
            }
        }
    }
    ask
}

fn git(cwd: &Path, args: &[&str]) {
    let _ = Command::new("git").arg("-C").arg(cwd).args(args).output();
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().append(true).open(path)?;
    f.write_all(text.as_bytes())
}

/// The `ratelimit` and `quota` actions: the first call of a prompt is refused the way the API
/// refuses an account over its rate limit (`ratelimit`), or the way Claude Code tells a
/// subscriber their usage limit is spent (`quota`, its words and `api_error_status`); the same
/// call made again (after the engine's backoff or quota wait, or by a resumed run) goes on. A
/// marker file per call (`key`: its subject, phase and attempt) remembers the refusal across
/// the separate processes. None for other actions.
pub(crate) fn refused_once(
    action: &str,
    out: &mut impl Write,
    session: &str,
    cwd: &Path,
    key: &str,
) -> Option<Result<u8>> {
    use std::hash::{Hash, Hasher};
    let (result, status) = match action {
        "ratelimit" => (
            "API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"This request would exceed the rate limit (simulated)\"}}",
            None,
        ),
        "quota" => ("You\u{2019}ve hit your usage limit.", Some(429)),
        _ => return None,
    };
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    let dir = cwd.join(".baton/sim-sessions");
    let marker = dir.join(format!("{action}-{:016x}", h.finish()));
    if marker.exists() {
        return None;
    }
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(&marker, "refused once\n");
    let mut line = serde_json::json!({"type": "result", "subtype": "success", "is_error": true,
        "result": result, "session_id": session, "total_cost_usd": 0.0,
        "usage": {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0}});
    if let Some(s) = status {
        line["api_error_status"] = s.into();
    }
    let _ = writeln!(out, "{line}");
    Some(Ok(1))
}

/// Run the simulated agent: prompt in, stream-json out (to `out`, the process's stdout).
/// Returns the process exit code.
pub fn run(prompt: &str, cwd: &Path, scenario: &Scenario, mut out: &mut dyn Write) -> Result<u8> {
    if let Some(code) = conductor::run(prompt, cwd, scenario, out)? {
        return Ok(code);
    }
    if let Some(code) = build_auto::run(prompt, cwd, scenario, out)? {
        return Ok(code);
    }
    if let Some(code) = task::run(prompt, cwd, scenario, out)? {
        return Ok(code);
    }
    if let Some(code) = verify::run(prompt, cwd, scenario, out)? {
        return Ok(code);
    }
    let ask = read_prompt(prompt);
    let session = init(&mut out, cwd);
    if ask.phase.is_empty() {
        return emit(
            &mut out,
            &session,
            prompt,
            "(simulated agent) The prompt asks for no signal I know.",
            1,
        );
    }
    let story_path = ask.story_file.as_ref().map(|p| cwd.join(p));
    let story_text = story_path
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let record_count = |title: &str| story_text.matches(&format!("## {title}")).count();
    let attempt = match ask.phase {
        "dev" => record_count("Dev Agent Record") + 1,
        "review" => record_count("Code Review Record") + 1,
        "kickoff" => record_count("Story Kickoff Insights") + 1,
        "failure-analysis" => record_count("Failure Analysis Record") + 1,
        _ => 1,
    };
    let action = scenario.action(ask.story_id.as_deref(), ask.phase, attempt);
    if scenario.latency_ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(scenario.latency_ms));
    }
    let id = ask.story_id.clone().unwrap_or_default();
    let key = format!("{:?}/{:?}/{}/{attempt}", ask.epic, ask.story_id, ask.phase);
    if let Some(code) = refused_once(&action, &mut out, &session, cwd, &key) {
        return code;
    }
    match action.as_str() {
        "hang" => {
            // A child that would outlive us unless the whole process group is killed.
            if let Ok(child) = Command::new("sleep").arg("3600").spawn() {
                // Tests check this pid is gone once the engine killed the process group.
                let _ = std::fs::create_dir_all(cwd.join(".baton"));
                let _ = std::fs::write(cwd.join(".baton/sim-hang.pid"), child.id().to_string());
            }
            std::thread::sleep(std::time::Duration::from_secs(3600));
            return Ok(0);
        }
        "crash" => {
            let _ = writeln!(
                out,
                "{}",
                serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "(simulated agent) crashing mid-phase"}]}})
            );
            return Ok(3);
        }
        // One request of 50,000 tokens, as an agent that read a large file holds it.
        "bigcontext" => {
            let usage = serde_json::json!({"input_tokens": BIG_CONTEXT, "output_tokens": 1});
            let _ = writeln!(
                out,
                "{}",
                serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "(simulated agent) reading a large file"}], "usage": usage}, "session_id": session})
            );
        }
        "flood" => {
            let line = serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "x".repeat(1000)}]}}).to_string();
            for _ in 0..50_000 {
                if writeln!(out, "{line}").is_err() {
                    break;
                }
            }
        }
        _ => {}
    }
    let mut files = Vec::new();
    let (record, signal) = match ask.phase {
        "dev" => {
            let slug = id.replace(['.', '-'], "_");
            let file = format!("src/story_{slug}.txt");
            if action != "nostage" {
                let p = cwd.join(&file);
                if let Some(d) = p.parent() {
                    let _ = std::fs::create_dir_all(d);
                }
                let _ = std::fs::OpenOptions::new().create(true).append(true).open(&p).and_then(|mut f| writeln!(f, "story {id}: implemented by the simulated agent (attempt {attempt})"));
                files.push(file.clone());
                if action == "secret" {
                    let _ = std::fs::write(cwd.join(".env"), "API_KEY=sim-not-a-real-key\n");
                }
                git(cwd, &["add", "-A"]);
            }
            let blocked = action == "block";
            let record = format!(
                "\n## Dev Agent Record\n\n_Simulated agent (baton sim), attempt {attempt}._\n\n### Implementation Summary\n{}\n\n### Files Created\n{}\n",
                if blocked { "Blocked: the simulated scenario says this story cannot be done." } else { "Implemented the story (simulated)." },
                files.iter().map(|f| format!("- {f}")).collect::<Vec<_>>().join("\n")
            );
            let signal = if blocked {
                format!("IMPLEMENTATION BLOCKED: {id} - simulated blocker")
            } else {
                format!("```json\n{{\"status\": \"COMPLETE\", \"story_id\": \"{id}\", \"summary\": \"simulated\", \"files_changed\": {}, \"tests_added\": 1}}\n```\nIMPLEMENTATION COMPLETE: {id}", serde_json::to_string(&files).unwrap_or_default())
            };
            (Some(record), signal)
        }
        "review" => {
            let signal = match action.as_str() {
                "fail" => format!("REVIEW FAILED: {id} - simulated: the acceptance criteria are not covered by tests"),
                "fix" => {
                    let slug = id.replace(['.', '-'], "_");
                    let p = cwd.join(format!("src/story_{slug}.txt"));
                    let _ = append(&p, "reviewed: fixed a simulated issue\n");
                    git(cwd, &["add", "-A"]);
                    format!("REVIEW PASSED WITH FIXES: {id} - Fixed 1 issues")
                }
                _ => format!("REVIEW PASSED: {id}"),
            };
            let record = format!("\n## Code Review Record\n\n_Simulated agent (baton sim), review {attempt}._\n\n- Verdict: {}\n", signal.split(':').next().unwrap_or(""));
            (Some(record), signal)
        }
        "kickoff" => (
            Some(("\n## Story Kickoff Insights\n\n**Discussion Date**: simulated\n**Participants**: Winston (Architect), Amelia (Developer), Murat (Test Architect)\n\n### Architectural Notes\n- (simulated) follow the existing module layout\n### Implementation Strategy\n- (simulated) smallest change first\n### Testing Approach\n- (simulated) unit tests for each criterion\n### Identified Risks\n- (simulated) none\n").to_string()),
            format!("KICKOFF COMPLETE: {id}"),
        ),
        "failure-analysis" => {
            // `escalate`: the analysis asks for a human.
            let rec = if action == "escalate" { "Escalate" } else { "Retry" };
            (
                Some(format!("\n## Failure Analysis Record\n\n_Simulated agent (baton sim)._\n\n- Root cause: (simulated) the scenario made the phase fail.\n- Recommendation: {rec}\n")),
                format!("ANALYSIS COMPLETE: {id} - {rec}"),
            )
        }
        "uat" | "retro" => {
            let epic = ask.epic.clone().unwrap_or_default();
            for w in &ask.writes {
                let p = cwd.join(w);
                if let Some(d) = p.parent() {
                    let _ = std::fs::create_dir_all(d);
                }
                let _ = std::fs::write(&p, format!("# {} — epic {epic}\n\n_Written by the simulated agent (baton sim)._\n", if ask.phase == "uat" { "UAT" } else if w.contains("handoff") { "Handoff" } else { "Retrospective" }));
            }
            let sig = if ask.phase == "uat" { "UAT COMPLETE" } else { "RETRO COMPLETE" };
            (None, format!("{sig}: Epic {epic}"))
        }
        _ => (None, String::new()),
    };
    if action != "norecord"
        && let (Some(r), Some(p)) = (record, story_path.as_ref())
    {
        let _ = append(p, &r);
    }
    let text = match action.as_str() {
        "nosignal" => "(simulated agent) done, but I forgot to say so.".to_string(),
        // The signal of another story: it must not pass for this one.
        "wrongid" if !id.is_empty() => {
            format!("(simulated agent)\n{}", signal.replace(id.as_str(), "9.99"))
        }
        _ => format!("(simulated agent)\n{signal}"),
    };
    emit(&mut out, &session, prompt, &text, 0)
}

/// The stream's first line, as Claude Code's `system/init`; returns the session id.
pub(crate) fn init(out: &mut impl Write, cwd: &Path) -> String {
    let session = format!("sim-{}", std::process::id());
    let _ = writeln!(
        out,
        "{}",
        serde_json::json!({"type": "system", "subtype": "init", "session_id": session, "model": "baton-sim", "cwd": cwd})
    );
    session
}

/// The request size the `bigcontext` action reports.
pub const BIG_CONTEXT: u64 = 50_000;

/// The assistant message and the final `result` line, shaped like Claude Code's stream-json.
pub(crate) fn emit(
    out: &mut impl Write,
    session: &str,
    prompt: &str,
    text: &str,
    code: u8,
) -> Result<u8> {
    emit_usage(out, session, (prompt.len() / 4) as u64, text, code)
}

/// [`emit`] with the context size to report (a resumed session holds more than its prompt).
pub(crate) fn emit_usage(
    out: &mut impl Write,
    session: &str,
    input: u64,
    text: &str,
    code: u8,
) -> Result<u8> {
    let output = (text.len() / 4) as u64 + 1;
    let usage = serde_json::json!({"input_tokens": input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": output});
    let _ = writeln!(
        out,
        "{}",
        serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": text}], "usage": usage}, "session_id": session})
    );
    let cost = (input as f64 * 3.0 + output as f64 * 15.0) / 1_000_000.0;
    let _ = writeln!(
        out,
        "{}",
        serde_json::json!({"type": "result", "subtype": "success", "is_error": code != 0, "result": text, "num_turns": 1, "session_id": session, "total_cost_usd": cost, "usage": usage})
    );
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_the_prompt_asks() {
        let a = read_prompt(
            "Story ID: 1.2\nStory file: docs/stories/1.2.x.md\nEpic: 1\n...\nIMPLEMENTATION COMPLETE: 1.2\n",
        );
        assert_eq!(
            (
                a.phase,
                a.story_id.as_deref(),
                a.story_file.as_deref(),
                a.epic.as_deref()
            ),
            ("dev", Some("1.2"), Some("docs/stories/1.2.x.md"), Some("1"))
        );
        let a = read_prompt("Files to write: docs/uat/epic-3-uat.md\nUAT COMPLETE: Epic 3\n");
        assert_eq!(
            (a.phase, a.epic.as_deref(), a.writes.len()),
            ("uat", Some("3"), 1)
        );
    }

    #[test]
    fn actions_by_attempt_and_the_last_repeats() {
        let s: Scenario = toml::from_str("[story.\"1.2\"]\ndev = [\"block\", \"ok\"]\n").unwrap();
        assert_eq!(s.action(Some("1.2"), "dev", 1), "block");
        assert_eq!(s.action(Some("1.2"), "dev", 2), "ok");
        assert_eq!(s.action(Some("1.2"), "dev", 7), "ok");
        assert_eq!(s.action(Some("1.3"), "dev", 1), "ok");
    }
}
