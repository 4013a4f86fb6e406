//! The simulated agent for task workflows (orchestrate, poc, graduate): architect, design audit, spec,
//! implementation, tests, audits — recognised by the prompt's own marker lines
//! (`Baton phase:`, `Baton task:`, `Task id:`, `Attempt:`, `Output file:`, `Signal:`).
//!
//! Scenario (`[task]` of the sim TOML): actions per phase — or per `implementation#<id>` —,
//! one per attempt, the last repeating. Words of an action, space-separated:
//! `ok`/`pass` (default), `fail` (prints the fail signal: an audit's failed verdict),
//! `crash` (exits 3, no signal), `nosignal` (writes the file, no signal), `nofile` (signals,
//! writes nothing), `wrongid` (signals for another task), `ratelimit` / `quota` (the first call is
//! refused as rate-limited / as a spent usage limit, the next goes on), `sleep=<ms>` (latency), `findings=<n>` (an audit with n findings of
//! ~100 bytes each), and for `spec` (or a poc's `architect`):
//! `tasks=<n>` (default 2, independent; `plan` too), `deps=2:1;3:1+2`, `cycle`, `unknown-dep`.
//!
//! ```toml
//! [task]
//! design-audit = ["fail", "pass"]
//! spec = ["tasks=4"]
//! implementation = ["ok sleep=400"]
//! ```

use std::io::Write;
use std::path::Path;

use super::Scenario;
use crate::error::Result;

#[derive(Debug, Default)]
struct Ask {
    phase: String,
    task: String,
    task_id: Option<String>,
    attempt: usize,
    output: String,
    signal: String,
    fail_signal: Option<String>,
}

fn read(prompt: &str) -> Option<Ask> {
    let mut a = Ask::default();
    for l in prompt.lines() {
        let l = l.trim();
        let val = |p: &str| l.strip_prefix(p).map(|v| v.trim().to_string());
        if let Some(v) = val("Baton phase:") {
            a.phase = v;
        } else if let Some(v) = val("Baton task:") {
            a.task = v;
        } else if let Some(v) = val("Task id:") {
            a.task_id = Some(v);
        } else if let Some(v) = val("Attempt:") {
            a.attempt = v.parse().unwrap_or(1);
        } else if let Some(v) = val("Output file:") {
            a.output = v;
        } else if let Some(v) = val("Signal:") {
            a.signal = v;
        } else if let Some(v) = val("Fail signal:") {
            a.fail_signal = Some(v.split(" - ").next().unwrap_or(&v).to_string());
        }
    }
    (!a.phase.is_empty() && !a.output.is_empty()).then_some(a)
}

fn action(s: &Scenario, a: &Ask) -> String {
    let keys = [
        a.task_id
            .as_ref()
            .map(|id| format!("{}#{id}", a.phase))
            .unwrap_or_default(),
        a.phase.clone(),
    ];
    for k in keys {
        if let Some(l) = s.task.get(&k)
            && !l.is_empty()
        {
            return l[(a.attempt.max(1) - 1).min(l.len() - 1)].clone();
        }
    }
    "ok".into()
}

/// The `## Tasks` of a simulated spec, in the shape the spec prompt asks for.
pub fn tasks_md(words: &[&str]) -> String {
    let mut n = 2usize;
    let mut deps: Vec<(usize, String)> = vec![];
    for w in words {
        if let Some(v) = w.strip_prefix("tasks=") {
            n = v.parse().unwrap_or(2);
        } else if let Some(v) = w.strip_prefix("deps=") {
            for d in v.split(';') {
                if let Some((t, on)) = d.split_once(':') {
                    deps.push((t.parse().unwrap_or(0), on.replace('+', ", ")));
                }
            }
        } else if *w == "cycle" {
            n = n.max(2);
            deps.push((1, "2".into()));
            deps.push((2, "1".into()));
        } else if *w == "unknown-dep" {
            deps.push((1, "99".into()));
        }
    }
    let mut out = String::from("\n## Tasks\n");
    for i in 1..=n {
        let d = deps
            .iter()
            .find(|(t, _)| *t == i)
            .map(|(_, on)| on.clone())
            .unwrap_or_else(|| "none".into());
        out.push_str(&format!(
            "\n### Task {i}: simulated part {i}\nDepends on: {d}\nFiles: src/sim_part_{i}.rs\n"
        ));
    }
    out
}

/// Act on `prompt` if it is one of ours; `None` when it is not.
pub fn run(
    prompt: &str,
    cwd: &Path,
    scenario: &Scenario,
    mut out: &mut dyn Write,
) -> Result<Option<u8>> {
    let Some(a) = read(prompt) else {
        return Ok(None);
    };
    let act = action(scenario, &a);
    let words: Vec<&str> = act.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    let sleep = words
        .iter()
        .find_map(|w| w.strip_prefix("sleep="))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(scenario.latency_ms);
    if sleep > 0 {
        std::thread::sleep(std::time::Duration::from_millis(sleep));
    }
    let session = super::init(&mut out, cwd);
    for refusal in ["ratelimit", "quota"] {
        if has(refusal)
            && let Some(code) = super::refused_once(
                refusal,
                &mut out,
                &session,
                cwd,
                &format!("{}/{}/{:?}/{}", a.task, a.phase, a.task_id, a.attempt),
            )
        {
            return code.map(Some);
        }
    }
    if has("crash") {
        return super::emit(
            &mut out,
            &session,
            prompt,
            "(simulated agent) crashing mid-phase",
            3,
        )
        .map(Some);
    }
    let fail = has("fail") && a.fail_signal.is_some();
    let id = a.task_id.as_deref().unwrap_or("");
    let verdict = if fail { "FAILED" } else { "PASSED" };
    let body = match a.phase.as_str() {
        "architect" | "architect-revision" => {
            let mut b = format!(
                "# Design: {}\n\n_Simulated agent (baton sim), attempt {}._\n\n## Summary\nAdd the feature behind a small service (simulated investigation).\n\n## Decisions\n- Keep the existing module layout.\n\n## Files\n- src/sim_part_1.rs\n\n## Patterns\n- Repository pattern.\n\n## Risks\n- None found by the simulation.\n",
                a.task, a.attempt
            );
            if a.phase == "architect-revision" {
                b.push_str("\n## Changes\n- Answered every finding of the audit.\n");
            }
            if prompt.contains("(poc workflow)") {
                b.push_str(&tasks_md(&words));
            }
            b
        }
        "design-audit" | "impl-audit" => {
            // `findings=<n>`: a long audit (n findings of ~100 bytes), for feedback volume.
            let n = words
                .iter()
                .find_map(|w| w.strip_prefix("findings="))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(usize::from(fail));
            let findings = if n == 0 {
                "None.".to_string()
            } else {
                (1..=n)
                    .map(|i| format!("{i}. (simulated) error handling is missing in the path that finding {i} names; add it and a test.\n"))
                    .collect()
            };
            format!(
                "# {} audit: {}\n\n## Verdict\n{verdict}\n\n## Findings\n{findings}\n\n## Preserve\n- The module layout.\n",
                if a.phase == "design-audit" { "Design" } else { "Implementation" },
                a.task,
            )
        }
        // `plan` writes the same task breakdown as the spec phase (from discovery's specs).
        "spec" | "plan" => format!(
            "# Spec: {}\n\n## Signatures\n- `fn part() -> Result<()>`\n\n## Types\n- `Part`\n\n## Edge Cases\n- empty input\n\n## Errors\n- `Error::Invalid`\n{}",
            a.task,
            tasks_md(&words)
        ),
        "implementation" => {
            let f = cwd.join(format!("src/sim_part_{id}.rs"));
            if let Some(d) = f.parent() {
                let _ = std::fs::create_dir_all(d);
            }
            let _ = std::fs::write(&f, format!("// part {id}: simulated implementation\n"));
            format!(
                "# Task {id}\n\n## Summary\nImplemented part {id} (simulated).\n\n## Files Changed\n- src/sim_part_{id}.rs\n"
            )
        }
        "tests" => format!("# Tests of task {id}\n\n## Tests\n- part_{id}_works\n"),
        "test-results" => {
            "# Test results\n\n## Summary\n3 passed, 0 failed (simulated)\n".to_string()
        }
        "implementation-fix" => {
            "# Fix\n\n## Fixes\n- 1 → added the error handling (simulated)\n".to_string()
        }
        "debt" => "# Debt\n\n## Shortcuts\n- No input validation (simulated).\n\n## Before Production\n- Validate input.\n".to_string(),
        _ => format!("# {}\n\n(simulated)\n", a.phase),
    };
    if !has("nofile") {
        let p = cwd.join(&a.output);
        if let Some(d) = p.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        let _ = std::fs::write(&p, body);
    }
    let text = if has("nosignal") {
        "(simulated agent) done, but I forgot to say so.".to_string()
    } else if fail {
        format!(
            "(simulated agent)\n{} - simulated finding",
            a.fail_signal.clone().unwrap_or_default()
        )
    } else if has("wrongid") {
        // The signal of another task: it must not pass for this one.
        let slug = a.signal.rsplit(": ").next().unwrap_or_default();
        let other = a.signal.replace(slug, "some-other-task");
        format!("(simulated agent)\n{other}")
    } else {
        format!("(simulated agent)\n{}", a.signal)
    };
    super::emit(&mut out, &session, prompt, &text, 0).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_markers_and_picks_actions() {
        let p = "…\nBaton phase: implementation\nBaton task: add-login\nTask id: 2\nAttempt: 2\nOutput file: .baton/runs/x/out/implementation-2-2.md\nSignal: IMPLEMENTATION COMPLETE: add-login/2\nFail signal: IMPLEMENTATION BLOCKED: add-login/2 - <why>\n";
        let a = read(p).unwrap();
        assert_eq!(
            (a.phase.as_str(), a.task_id.as_deref(), a.attempt),
            ("implementation", Some("2"), 2)
        );
        assert_eq!(
            a.fail_signal.as_deref(),
            Some("IMPLEMENTATION BLOCKED: add-login/2")
        );
        let s: Scenario = toml::from_str(
            "[task]\nimplementation = [\"crash\", \"ok\"]\n\"implementation#2\" = [\"nosignal\"]\n",
        )
        .unwrap();
        assert_eq!(action(&s, &a), "nosignal");
        let mut a1 = read(p).unwrap();
        a1.task_id = Some("1".into());
        a1.attempt = 1;
        assert_eq!(action(&s, &a1), "crash");
        assert!(read("Story ID: 1.2\n").is_none());
    }
}
