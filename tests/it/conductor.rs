//! A conductor session through the real adapter: the simulated agent (the `baton` binary) is
//! started as `claude -p` would be, resumed with `--resume <session>`, and reports a context
//! that grows with each call; baton rotates the session when a trigger is crossed.

use std::time::Duration;

use crate::util::{Proj, bin};
use baton_engine::agents::{Assignment, Request};
use baton_engine::cli_agents::CliAgents;
use baton_engine::conductor::{Conductor, Policy, Reason, Report};

fn agents(p: &Proj, growth: u64) -> CliAgents {
    let sc = p.path().join("sim.toml");
    std::fs::write(&sc, format!("[conductor]\ngrowth_tokens = {growth}\n")).unwrap();
    CliAgents::new(p.path(), Some(sc)).sim_program(bin())
}

fn call(p: &Proj, a: &CliAgents, c: &mut Conductor, n: usize, tasks: u64) -> Option<Reason> {
    let prompt =
        format!("Conductor report for task: demo\nNotes file: notes.md\nNews: report {n}\n");
    let fresh = format!("State: the task summary\n{prompt}");
    let req = Request {
        name: format!("conductor-{n}"),
        prompt: "",
        cwd: p.path().to_path_buf(),
        log_dir: p.path().join("logs"),
        timeout: Duration::from_secs(30),
        grace: Duration::from_secs(1),
        resume: None,
    };
    let make = |is_fresh: bool| {
        Ok(if is_fresh {
            fresh.clone()
        } else {
            prompt.clone()
        })
    };
    let r = Report {
        prompt: &make,
        tasks,
        feedback_bytes: 0,
    };
    let (reply, rot) = c.report(a, &req, &r).unwrap();
    assert!(reply.ok, "{:?}", reply.error);
    assert!(
        reply.text.contains("CONDUCTOR UPDATED: demo"),
        "{}",
        reply.text
    );
    rot.map(|r| r.reason)
}

fn conductor() -> Conductor {
    Conductor::new(
        Assignment {
            agent: baton_agent::AgentKind::Sim.into(),
            tier: None,
            model: None,
        },
        Policy::from_budget(&Default::default()),
    )
}

fn sessions(p: &Proj) -> usize {
    std::fs::read_dir(p.path().join(".baton/sim-sessions"))
        .unwrap()
        .count()
}

#[test]
fn reported_usage_past_seventy_percent_rotates_once() {
    let p = Proj::new();
    let a = agents(&p, 50_000);
    let mut c = conductor();
    let reasons: Vec<_> = (1..=5).map(|n| call(&p, &a, &mut c, n, 0)).collect();
    // The session reports ~50K, ~100K, ~150K (> 70% of 200K): rotated after the third call;
    // the fresh session is at ~50K and ~100K after the fourth and fifth.
    assert_eq!(reasons, [None, None, Some(Reason::Usage), None, None]);
    assert_eq!(sessions(&p), 2, "one rotation, two sessions");
    assert!(c.meter.context_tokens >= 100_000 && c.meter.context_tokens < 140_000);
    let notes = std::fs::read_to_string(p.path().join("notes.md")).unwrap();
    assert_eq!(notes.lines().count(), 5, "{notes}");
}

#[test]
fn five_completed_tasks_rotate_with_reason_tasks() {
    let p = Proj::new();
    let a = agents(&p, 10);
    let mut c = conductor();
    let reasons: Vec<_> = (1..=6).map(|n| call(&p, &a, &mut c, n, 1)).collect();
    assert_eq!(reasons, [None, None, None, None, Some(Reason::Tasks), None]);
    assert_eq!(sessions(&p), 2);
}

// ---- through `baton run orchestrate` ----------------------------------------------------------

/// A task run by `baton run orchestrate` with the simulated agent and no gates (a project's
/// workflow override), so the run goes from architect to completed in one go.
fn orchestrate(scenario: &str) -> (Proj, Vec<serde_json::Value>) {
    orchestrate_crashing(scenario, None, "")
}

/// `orchestrate`, with the first run killed right after journal event `crash_after` (then run
/// again to the end).
fn orchestrate_crashing(
    scenario: &str,
    crash_after: Option<u64>,
    conductor_extra: &str,
) -> (Proj, Vec<serde_json::Value>) {
    let p = Proj::new();
    std::fs::create_dir_all(p.path().join(".baton/workflows")).unwrap();
    std::fs::write(p.path().join(".baton/sim.toml"), scenario).unwrap();
    let show = p.run(&["workflow", "show", "orchestrate"], None);
    let wf = String::from_utf8(show.stdout).unwrap().replace(
        "gates = [\"investigation\", \"design\", \"final\"]",
        "gates = []",
    );
    assert!(wf.contains("gates = []"));
    let wf = wf.replace(
        "[conductor]\nrole = \"conductor\"\n",
        &format!("[conductor]\nrole = \"conductor\"\n{conductor_extra}"),
    );
    std::fs::write(p.path().join(".baton/workflows/orchestrate.toml"), wf).unwrap();
    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    if let Some(n) = crash_after {
        let o = p
            .cmd(&["run", "orchestrate", "add-login", "--agent", "sim"])
            .env("BATON_CRASH_AFTER_EVENT", n.to_string())
            .output()
            .unwrap();
        assert!(!o.status.success(), "the run was to be killed");
    }
    let o = p.run(&["run", "orchestrate", "add-login", "--agent", "sim"], None);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    assert_eq!(p.manifest("add-login")["status"], "completed", "{text}");
    let runs = p.path().join(".baton/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let events = std::fs::read_to_string(run.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (p, events)
}

fn rotations(events: &[serde_json::Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["event"] == "conductor_rotated")
        .map(|e| e["rotation"]["reason"].as_str().unwrap().to_string())
        .collect()
}

fn reports(events: &[serde_json::Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["event"] == "conductor_called")
        .map(|e| e["key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn orchestrate_conductor_rotates_once_on_usage() {
    // 3 spec tasks + the passing audit = 4 reports; the session grows ~50K a call, so it is
    // past 140K (70 % of 200K) after the third and rotated once.
    let (p, ev) = orchestrate("[task]\nspec = [\"tasks=3\"]\n[conductor]\ngrowth_tokens = 50000\n");
    assert_eq!(reports(&ev).len(), 4, "{:?}", reports(&ev));
    assert_eq!(rotations(&ev), ["usage"]);
    let rot = ev
        .iter()
        .find(|e| e["event"] == "conductor_rotated")
        .unwrap();
    assert!(rot["rotation"]["context_tokens"].as_u64().unwrap() > 140_000);
    // The fourth report went to a fresh session seeded with the task's state.
    let prompts = p.path().join(".baton/runs");
    let run = std::fs::read_dir(&prompts)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let last = std::fs::read_to_string(run.join("prompts/conductor-impl-audit-1.md")).unwrap();
    assert!(
        last.contains("A previous conductor session was retired (reason: usage)"),
        "{last}"
    );
    assert!(last.contains("Where the task stands"), "{last}");
    // The history tells of it; the implementers of later tasks are pointed at the notes.
    let h = p.run(&["history", "--tail", "100"], None);
    assert!(String::from_utf8_lossy(&h.stdout).contains("CONDUCTOR rotated (usage)"));
}

#[test]
fn orchestrate_conductor_rotates_once_after_five_tasks() {
    let (_p, ev) = orchestrate("[task]\nspec = [\"tasks=5\"]\n");
    assert_eq!(reports(&ev).len(), 6, "{:?}", reports(&ev));
    assert_eq!(rotations(&ev), ["tasks"]);
    let rot = ev
        .iter()
        .find(|e| e["event"] == "conductor_rotated")
        .unwrap();
    assert_eq!(rot["rotation"]["tasks"], 5);
}

#[test]
fn orchestrate_conductor_rotates_once_on_feedback() {
    // A failed audit with 120 findings (~12 KB) is more than 10 KB of feedback.
    let (_p, ev) = orchestrate(
        "[task]\nspec = [\"tasks=2\"]\nimpl-audit = [\"fail findings=120\", \"pass\"]\n",
    );
    assert_eq!(rotations(&ev), ["feedback"]);
    let rot = ev
        .iter()
        .find(|e| e["event"] == "conductor_rotated")
        .unwrap();
    assert!(rot["rotation"]["feedback_bytes"].as_u64().unwrap() > 10 * 1024);
    // Reports: the 2 tasks (in the order their parallel phases ended), the failed audit
    // (rotates), the passing audit (a fresh session).
    let mut r = reports(&ev);
    r[..2].sort();
    assert_eq!(
        r,
        [
            "implementation#1@1",
            "implementation#2@1",
            "impl-audit@1",
            "impl-audit@2"
        ]
    );
}

#[test]
fn a_killed_run_continues_the_conductor_session_and_counts() {
    let sc = "[task]\nspec = [\"tasks=3\"]\n[conductor]\ngrowth_tokens = 50000\n";
    let (_p, whole) = orchestrate(sc);
    let seq = |e: &serde_json::Value| e["seq"].as_u64().unwrap();
    let calls: Vec<u64> = whole
        .iter()
        .filter(|e| e["event"] == "conductor_called")
        .map(seq)
        .collect();
    // Killed right after the second report: the resumed run must not report it again, and the
    // session's count goes on (still one usage rotation, after the third report).
    let (_p, ev) = orchestrate_crashing(sc, Some(calls[1]), "");
    let mut keys = reports(&ev);
    assert_eq!(keys.len(), 4, "{keys:?}");
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 4, "a report was repeated");
    assert_eq!(rotations(&ev), ["usage"]);
}

#[test]
fn a_conductor_that_cannot_run_is_reported_and_the_run_goes_on() {
    // A template that does not exist: every report fails, the task still completes.
    let (_p, ev) = orchestrate_crashing(
        "[task]\nspec = [\"tasks=2\"]\n",
        None,
        "template = \"no-such-template\"\n",
    );
    let calls: Vec<&serde_json::Value> = ev
        .iter()
        .filter(|e| e["event"] == "conductor_called")
        .collect();
    assert_eq!(calls.len(), 3, "2 tasks and the audit were still reported");
    for c in calls {
        assert_eq!(c["ok"], false);
        assert!(
            c["detail"].as_str().unwrap().contains("no-such-template"),
            "{c}"
        );
    }
    assert!(rotations(&ev).is_empty());
}
