//! A conductor session through the real adapter: the simulated agent (the `baton` binary) is
//! started as `claude -p` would be, resumed with `--resume <session>`, and reports a context
//! that grows with each call; baton rotates the session when a trigger is crossed.

mod common;

use std::time::Duration;

use baton::workflow::agents::{Assignment, Request};
use baton::workflow::cli_agents::CliAgents;
use baton::workflow::conductor::{Conductor, Policy, Reason, Report};
use common::{Proj, bin};

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
    let r = Report {
        prompt: &prompt,
        fresh_prompt: &fresh,
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
            agent: "sim".into(),
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
