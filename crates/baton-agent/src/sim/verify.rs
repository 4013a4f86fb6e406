//! The simulated agent for verify-queue phases: writes its output file incrementally and ends with
//! the summary block (or omits it, or dies mid-phase, as the scenario says).
//!
//! It recognises a verify prompt by its marker lines (`Verify phase: 1b`, `Item: BMNR`,
//! `Attempt: 1`, `Output file: <path>`, the `- <path> (phase …)` input lines). Actions, from
//! `[verify]` of the scenario by `"ITEM/phase"` or `"phase"`, one per attempt (the last
//! repeats):
//!
//! ```toml
//! [verify]
//! "1b" = ["nosummary", "ok"]     # every item: the first answer lacks the block
//! "MARA/4c" = ["crash", "ok"]    # writes part of its output, then exits 3
//! ```
//!
//! `ok`, `nosummary` (no block), `badsummary` (a block that fails validation), `nooutput`
//! (answers but writes no file), `crash` (partial output, exit 3), `kill-orchestrator` (partial
//! output, then SIGKILL to the process that started it: the orchestrator dies mid-phase),
//! `hang`, `wrongid` (the summary names another item's output file), `ratelimit` / `quota` (the
//! first call is refused as rate-limited / as a spent usage limit, the next goes on). With `BATON_SIM_VERIFY_SNAPSHOTS=DIR` it first copies the item's state file to
//! `DIR/<item>-<phase>-<attempt>.json` (tests look at the state as each phase starts).

use std::io::Write;
use std::path::Path;

use super::{Scenario, emit};
use crate::error::Result;

#[derive(Debug, Default, PartialEq)]
struct Ask {
    phase: String,
    item: String,
    attempt: usize,
    output: String,
    inputs: Vec<String>,
    reminder: bool,
}

fn read_prompt(prompt: &str) -> Option<Ask> {
    let mut ask = Ask::default();
    let mut in_inputs = false;
    for line in prompt.lines() {
        let l = line.trim();
        if let Some(v) = l.strip_prefix("Verify phase:") {
            ask.phase = v.trim().to_string();
        } else if let Some(v) = l.strip_prefix("Item:") {
            ask.item = v.trim().to_string();
        } else if let Some(v) = l.strip_prefix("Attempt:") {
            ask.attempt = v.trim().parse().unwrap_or(1);
        } else if let Some(v) = l.strip_prefix("Output file:") {
            ask.output = v.trim().to_string();
        } else if l.starts_with("Format reminder:") {
            ask.reminder = true;
        } else if l.starts_with("Input files:") {
            in_inputs = true;
            continue;
        }
        if in_inputs {
            match l.strip_prefix("- ") {
                Some(v) => ask
                    .inputs
                    .push(v.split(" (").next().unwrap_or("").to_string()),
                None => in_inputs = false,
            }
        }
    }
    (!ask.phase.is_empty() && !ask.item.is_empty() && !ask.output.is_empty()).then_some(ask)
}

fn action(scenario: &Scenario, ask: &Ask) -> String {
    let list = scenario
        .verify
        .get(&format!("{}/{}", ask.item, ask.phase))
        .or_else(|| scenario.verify.get(&ask.phase));
    match list {
        Some(l) if !l.is_empty() => l[(ask.attempt.max(1) - 1).min(l.len() - 1)].clone(),
        _ => "ok".into(),
    }
}

fn append(path: &Path, text: &str) {
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(text.as_bytes());
    }
}

/// Act on `prompt` if it is one of ours; `None` when it is not.
pub fn run(
    prompt: &str,
    cwd: &Path,
    scenario: &Scenario,
    mut out: &mut dyn Write,
) -> Result<Option<u8>> {
    let Some(ask) = read_prompt(prompt) else {
        return Ok(None);
    };
    let output = cwd.join(&ask.output);
    if let Some(dir) = std::env::var_os("BATON_SIM_VERIFY_SNAPSHOTS")
        && let Some(state) = output.parent().map(|d| d.join("verification-state.json"))
    {
        let dir = Path::new(&dir);
        let _ = std::fs::create_dir_all(dir);
        let _ = std::fs::copy(
            state,
            dir.join(format!("{}-{}-{}.json", ask.item, ask.phase, ask.attempt)),
        );
    }
    let act = action(scenario, &ask);
    if scenario.latency_ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(scenario.latency_ms));
    }
    let session = super::init(&mut out, cwd);
    let (item, phase) = (&ask.item, &ask.phase);
    let key = format!("{item}/{phase}/{}", ask.attempt);
    if let Some(code) = super::refused_once(&act, &mut out, &session, cwd, &key) {
        return code.map(Some);
    }
    if act == "hang" {
        std::thread::sleep(std::time::Duration::from_secs(3600));
        return Ok(Some(0));
    }
    // Incremental output: a header, then one section per input read, then the summary.
    if !ask.reminder && act != "nooutput" {
        if let Some(d) = output.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        if !output.is_file() {
            append(
                &output,
                &format!(
                    "# {item} — phase {phase}\n\n_Written by the simulated agent (baton sim), incrementally._\n"
                ),
            );
        } else {
            append(
                &output,
                &format!(
                    "\n_Attempt {}: continuing the partial output._\n",
                    ask.attempt
                ),
            );
        }
        for (k, input) in ask.inputs.iter().enumerate() {
            // A slow agent writes section after section: a kill may land between them.
            if scenario.append_ms > 0 {
                std::thread::sleep(std::time::Duration::from_millis(scenario.append_ms));
            }
            let lines = std::fs::read_to_string(cwd.join(input))
                .map(|t| t.lines().count())
                .unwrap_or(0);
            append(
                &output,
                &format!(
                    "\n## From {input}\n\n- read {lines} lines; finding {k} for {item} holds (simulated)\n"
                ),
            );
            if k == 0 && (act == "crash" || act == "kill-orchestrator") {
                break;
            }
        }
        if act == "crash" || act == "kill-orchestrator" {
            append(&output, "\n(partial: the session died here)\n");
            if act == "kill-orchestrator" {
                #[cfg(unix)]
                // SAFETY: kill(2) on our parent, the orchestrator, as a crash test asks.
                unsafe {
                    libc::kill(libc::getppid(), libc::SIGKILL);
                }
            }
            let _ = writeln!(
                out,
                "{}",
                serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "(simulated agent) crashing mid-phase"}]}})
            );
            return Ok(Some(3));
        }
        append(
            &output,
            &format!(
                "\n## Findings\n\n- {item} phase {phase}: 2 findings, 1 issue (simulated)\n\n## Summary\n\nDone (simulated).\n"
            ),
        );
    }
    let lines = std::fs::read_to_string(&output)
        .map(|t| t.lines().count())
        .unwrap_or(0);
    let block = format!(
        "## Summary\n\n**Status:** Complete\n**Output file:** `{}`\n**Lines written:** {lines}\n\n\
### Key Findings\n- {item} phase {phase}: the numbers hold (simulated)\n- one figure is estimated\n\n\
### Issues Found\n| # | Severity | Description |\n|---|----------|-------------|\n| 1 | High | {item} {phase}: a stale figure (simulated) |\n\n\
### Key Numbers\n| Metric | Value | Source |\n|--------|-------|--------|\n| Holdings | 1,000 | sim {phase} |\n\n\
### Next Phase Needs\n- check the stale figure of {item} found in {phase}\n",
        if act == "wrongid" {
            // Another item's file: the answer is not this phase's.
            ask.output.replace(&item.to_lowercase(), "other")
        } else {
            ask.output.clone()
        }
    );
    let text = match act.as_str() {
        "nosummary" => format!("(simulated agent) {item} {phase} done; findings are in the file."),
        "badsummary" => format!(
            "(simulated agent)\n\n## Summary\n\n**Status:** Maybe\n**Output file:** `{}`\n",
            ask.output
        ),
        _ => format!("(simulated agent) {item} {phase} done.\n\n{block}"),
    };
    emit(&mut out, &session, prompt, &text, 0).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_markers_and_picks_actions_per_attempt() {
        let a = read_prompt(
            "Verify phase: 1b\nItem: BMNR\nAttempt: 2\nOutput file: q/bmnr-x.md\nInput files:\n- q/bmnr-gt.md (phase 1a, R)\n\n## Your task\n",
        )
        .unwrap();
        assert_eq!(
            (a.phase.as_str(), a.item.as_str(), a.attempt, a.inputs.len()),
            ("1b", "BMNR", 2, 1)
        );
        assert_eq!(a.inputs[0], "q/bmnr-gt.md");
        let s: Scenario = toml::from_str(
            "[verify]\n\"1b\" = [\"nosummary\", \"ok\"]\n\"BMNR/1b\" = [\"crash\"]\n",
        )
        .unwrap();
        assert_eq!(action(&s, &a), "crash");
        let mut b = a;
        b.item = "MARA".into();
        assert_eq!(action(&s, &b), "ok");
        b.attempt = 1;
        assert_eq!(action(&s, &b), "nosummary");
        assert!(read_prompt("Story ID: 1.2\n").is_none());
    }
}
