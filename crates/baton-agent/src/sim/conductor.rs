//! The simulated conductor: a session that lives across calls. Like a real resumed
//! conversation, its context grows with every call — by the prompt and by the scenario's
//! `[conductor] growth_tokens` — and a call without `--resume` starts a new, empty session.
//! The session's size is kept in `.baton/sim-sessions/<id>` under the working directory, so
//! separate processes (one per call, as with `claude -p --resume`) share it.

use std::io::Write;
use std::path::Path;

use super::{Scenario, emit_usage};
use crate::error::{Error, Result};

/// The prompt line that makes a prompt a conductor report.
pub const MARKER: &str = "Conductor report for task:";

pub fn run(
    prompt: &str,
    cwd: &Path,
    scenario: &Scenario,
    mut out: &mut dyn Write,
) -> Result<Option<u8>> {
    let Some(task) = prompt
        .lines()
        .find_map(|l| l.trim().strip_prefix(MARKER))
        .map(|t| t.trim().to_string())
    else {
        return Ok(None);
    };
    let args: Vec<String> = std::env::args().collect();
    let resumed = args
        .iter()
        .position(|a| a == "--resume")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let dir = cwd.join(".baton/sim-sessions");
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let (session, before) = match resumed {
        Some(id) => {
            let held = std::fs::read_to_string(dir.join(&id))
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0);
            (id, held)
        }
        None => {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            (format!("sim-conductor-{}-{nanos}", std::process::id()), 0)
        }
    };
    let context = before + prompt.len() as u64 / 4 + scenario.conductor.growth_tokens;
    let file = dir.join(&session);
    std::fs::write(&file, context.to_string()).map_err(|e| Error::io(&file, e))?;
    // The notes the conductor keeps for the implementers of later waves.
    if let Some(notes) = prompt
        .lines()
        .find_map(|l| l.trim().strip_prefix("Notes file:"))
        .map(|p| cwd.join(p.trim()))
    {
        if let Some(d) = notes.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        let news = prompt
            .lines()
            .find_map(|l| l.trim().strip_prefix("News:"))
            .unwrap_or("(no news)")
            .trim()
            .to_string();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&notes)
            .map_err(|e| Error::io(&notes, e))?;
        writeln!(f, "- {news} (simulated conductor, session {session})")
            .map_err(|e| Error::io(&notes, e))?;
    }
    let text = format!("(simulated conductor)\nCONDUCTOR UPDATED: {task}");
    let _ = writeln!(
        out,
        "{}",
        serde_json::json!({"type": "system", "subtype": "init", "session_id": session, "model": "baton-sim"})
    );
    emit_usage(&mut out, &session, context, &text, 0).map(Some)
}
