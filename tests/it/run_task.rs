//! orchestrate, poc and graduate end to end: the real binary, a real git repository, the
//! simulated agent, decisions given by a second process while the run waits.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util::assert_exit;
use crate::util::text as out;
use crate::util::{Proj, bin};
use serde_json::Value;

fn proj(scenario: &str, workflow: &str) -> Proj {
    let p = Proj::new();
    std::fs::create_dir_all(p.path().join(".baton")).unwrap();
    std::fs::write(p.path().join(".baton/sim.toml"), scenario).unwrap();
    let mode = if workflow == "poc" { "poc" } else { "standard" };
    p.ok(&[
        "task",
        "init",
        "Add login",
        "--mode",
        mode,
        "--workflow",
        workflow,
    ]);
    p
}

fn cmd(p: &Proj, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(p.path())
        .env_remove("BATON_AGENT_SIM")
        .stdin(Stdio::null());
    c
}

fn run(p: &Proj, args: &[&str]) -> Output {
    cmd(p, args).output().unwrap()
}

fn spawn(p: &Proj, args: &[&str]) -> Child {
    cmd(p, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait until the task waits at `gate` (or is in `status`).
fn wait_for(p: &Proj, check: impl Fn(&Value) -> bool) -> Value {
    let t = Instant::now();
    loop {
        if p.task_dir("add-login").join("manifest.json").exists() {
            let m = p.manifest("add-login");
            if check(&m) {
                return m;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "timed out; manifest: {}",
            p.manifest("add-login")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn at_gate(p: &Proj, gate: &str) -> Value {
    wait_for(p, |m| {
        m["status"] == "waiting_gate" && m["gate_context"]["gate"] == gate
    })
}

fn decide(p: &Proj, d: &str) {
    p.ok(&["resume", "--task", "add-login", "--decision", d]);
}

fn labels(m: &Value) -> Vec<String> {
    m["completed_phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let l = c["phase"].as_str().unwrap().to_string();
            match c["task_id"].as_str() {
                Some(id) => format!("{l}#{id}"),
                None => l,
            }
        })
        .collect()
}

fn events(p: &Proj) -> Vec<Value> {
    let runs = p.path().join(".baton/runs");
    let mut ids: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    ids.sort();
    std::fs::read_to_string(ids.last().unwrap().join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// No agent call finished twice.
fn no_repeated_calls(p: &Proj) {
    let mut keys: Vec<String> = events(p)
        .iter()
        .filter(|e| e["event"] == "phase_finished")
        .map(|e| format!("{}-{}-{}", e["subject"]["unit"], e["phase"], e["attempt"]))
        .collect();
    let all = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), all, "an agent call was repeated");
}

#[test]
fn orchestrate_waits_at_both_gates_for_another_process() {
    let p = proj("[task]\nspec = [\"tasks=3 deps=3:1+2\"]\n", "orchestrate");
    let child = spawn(&p, &["run", "orchestrate", "add-login", "--agent", "sim"]);
    let m = at_gate(&p, "investigation");
    assert_eq!(labels(&m), ["architect", "design-audit"]);
    let show = p.ok(&["gate", "show", "--task", "add-login"]);
    assert!(
        show.contains("artifact: docs/orchestrator/context/tasks/add-login/architect.md")
            && show
                .contains("baton resume --task add-login --decision full|lite|shelf|cancel|reject"),
        "{show}"
    );
    // A decision that does not fit the open gate: refused, nothing changes.
    let e = p.fails(
        &["resume", "--task", "add-login", "--decision", "approve"],
        3,
    );
    assert!(e.contains("does not fit the investigation gate"), "{e}");
    decide(&p, "full");
    at_gate(&p, "design");
    decide(&p, "approve");
    let m = at_gate(&p, "final");
    assert_eq!(
        m["waves"]["task_breakdown"]["waves"],
        serde_json::json!([["1", "2"], ["3"]])
    );
    assert_eq!(m["waves"]["execution"].as_array().unwrap().len(), 2);
    decide(&p, "approve");
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", out(&o));
    assert!(out(&o).contains("task add-login: completed"), "{}", out(&o));
    let m = p.manifest("add-login");
    assert_eq!(m["status"], "completed");
    let l = labels(&m);
    for want in [
        "architect",
        "design-audit",
        "spec",
        "implementation#1",
        "implementation#2",
        "implementation#3",
        "tests#1",
        "test-results",
        "impl-audit",
    ] {
        assert!(l.contains(&want.to_string()), "{want} in {l:?}");
    }
    let dir = p.task_dir("add-login");
    for f in [
        "architect.md",
        "design-audit.md",
        "spec.md",
        "implementations/task-3.md",
        "tests/task-2.md",
        "test-results.md",
        "impl-audit.md",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let metrics = p.ok(&["metrics", "--task", "add-login", "--format", "detailed"]);
    for w in [
        "architect",
        "design-audit",
        "spec",
        "implementation",
        "tests",
        "test-results",
        "impl-audit",
        "saved by parallel",
    ] {
        assert!(metrics.contains(w), "{w}: {metrics}");
    }
    let history = p.ok(&["history", "--tail", "100"]);
    for w in [
        "BEGIN_PHASE architect",
        "COMPLETE_PHASE spec",
        "SET_GATE final",
        "RESUME approve",
    ] {
        assert!(history.contains(w), "{w}: {history}");
    }
    crate::util::assert_manifest_is_replay(&dir);
    let st = p.ok(&["status"]);
    assert!(
        st.contains("orchestrate task add-login") && st.contains("completed"),
        "{st}"
    );
    // A finished task says so.
    p.test()
        .args(["run", "orchestrate", "add-login", "--agent", "sim"])
        .stderr_contains("completed")
        .status(3)
        .run();
    // No gate is open any more.
    let e = p.fails(
        &["resume", "--task", "add-login", "--decision", "approve"],
        3,
    );
    assert!(e.contains("nothing to resume"), "{e}");
}

/// Run with --no-wait until the task waits at `gate`.
fn no_wait_to(p: &Proj, args: &[&str], gate: &str) {
    let o = run(p, args);
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains(&format!("waiting at the {gate} gate")),
        "{}",
        out(&o)
    );
}

const RUN: &[&str] = &[
    "run",
    "orchestrate",
    "add-login",
    "--agent",
    "sim",
    "--no-wait",
];

#[test]
fn investigation_decisions_route_as_the_routing_table_says() {
    // lite: the task becomes a poc, implementation then debt.md, completed.
    let p = proj("", "orchestrate");
    no_wait_to(&p, RUN, "investigation");
    decide(&p, "lite");
    let o = run(&p, RUN);
    assert!(o.status.success(), "{}", out(&o));
    let m = p.manifest("add-login");
    assert_eq!(
        (
            m["status"].as_str(),
            m["workflow"].as_str(),
            m["mode"].as_str()
        ),
        (Some("completed"), Some("poc"), Some("poc"))
    );
    let l = labels(&m);
    assert!(!l.contains(&"spec".to_string()), "{l:?}");
    assert!(
        l.contains(&"implementation#1".to_string()) && l.last().unwrap() == "debt",
        "{l:?}"
    );
    assert!(p.task_dir("add-login").join("debt.md").is_file());

    // shelf: shelved, shelf_context holds the investigation summary from architect.md.
    let p = proj("", "orchestrate");
    no_wait_to(&p, RUN, "investigation");
    decide(&p, "shelf");
    let o = run(&p, RUN);
    assert!(o.status.success(), "{}", out(&o));
    let m = p.manifest("add-login");
    assert_eq!(m["status"], "shelved");
    let s = m["shelf_context"]["investigation_summary"]
        .as_str()
        .unwrap();
    assert!(
        s.contains("## Summary") && s.contains("simulated investigation"),
        "{s}"
    );
    let st = p.ok(&["status"]);
    assert!(st.contains("shelved"), "{st}");

    // cancel: cancelled, the run ends.
    let p = proj("", "orchestrate");
    no_wait_to(&p, RUN, "investigation");
    decide(&p, "cancel");
    let o = run(&p, RUN);
    assert!(
        o.status.success() && out(&o).contains("cancelled"),
        "{}",
        out(&o)
    );
    assert_eq!(p.manifest("add-login")["status"], "cancelled");
    assert_eq!(events(&p).last().unwrap()["event"], "run_finished");

    // full: continues to spec (then waits at the design gate).
    let p = proj("", "orchestrate");
    no_wait_to(&p, RUN, "investigation");
    decide(&p, "full");
    no_wait_to(&p, RUN, "design");
    decide(&p, "approve");
    no_wait_to(&p, RUN, "final");
    assert!(labels(&p.manifest("add-login")).contains(&"spec".to_string()));
    // reject at the final gate fails the task.
    decide(&p, "reject");
    let o = run(&p, RUN);
    assert_exit(&o, 1);
    assert_eq!(p.manifest("add-login")["status"], "failed");
}

#[test]
fn reject_at_the_design_gate_fails_the_task() {
    let p = proj("", "orchestrate");
    no_wait_to(&p, RUN, "investigation");
    decide(&p, "full");
    let o = run(&p, &["run", "--resume", &run_id(&p), "--no-wait"]);
    assert!(
        out(&o).contains("waiting at the design gate"),
        "{}",
        out(&o)
    );
    decide(&p, "reject");
    std::fs::write(p.path().join("baton.toml"), crate::util::NOTIFY_TO_FILE).unwrap();
    let o = run(&p, RUN);
    assert_exit(&o, 1);
    let m = p.manifest("add-login");
    assert_eq!(m["status"], "failed");
    assert!(!labels(&m).contains(&"spec".to_string()));
    // The notifier heard the failed task (a human to look), then the run's end.
    let heard = crate::util::heard(p.path());
    let names: Vec<&str> = heard.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["task_failed", "run_ended"], "{heard:?}");
    assert_eq!(heard[0]["task"], "add-login");
    assert_eq!(heard[1]["status"], "failed");
    let attention = std::fs::read_to_string(p.path().join(".baton/ATTENTION.md")).unwrap();
    assert!(attention.contains("task add-login failed"), "{attention}");
}

/// Resumed, a task run removes the temp files of store writes a killed baton cut short (no
/// pid is that high); a live writer's (this test's) may be a write in progress and stays.
#[test]
fn a_resumed_task_run_removes_the_writes_a_killed_baton_cut_short() {
    let p = proj("", "orchestrate");
    no_wait_to(&p, RUN, "investigation");
    let task = p.task_dir("add-login");
    let cut_short = task.join(".baton-tmp-99999999-Ab12Cd");
    let live = task.join(format!(".baton-tmp-{}-Ef34Gh", std::process::id()));
    std::fs::write(&cut_short, "{\"half\":").unwrap();
    std::fs::write(&live, "{\"in progress\":").unwrap();
    decide(&p, "full");
    let o = run(&p, &["run", "--resume", &run_id(&p), "--no-wait"]);
    let text = out(&o);
    assert!(text.contains("waiting at the design gate"), "{text}");
    assert!(
        text.contains(
            "tasks/add-login/.baton-tmp-99999999-Ab12Cd, left by a write that was cut short"
        ),
        "{text}"
    );
    assert!(!cut_short.exists() && live.exists());
}

fn run_id(p: &Proj) -> String {
    events(p)[0]["run_id"].as_str().unwrap().to_string()
}

#[test]
fn a_failing_phase_pauses_and_retry_continues_from_it() {
    let p = proj(
        "[task]\nspec = [\"crash\", \"nosignal\", \"ok\"]\n",
        "orchestrate",
    );
    no_wait_to(&p, RUN, "investigation");
    decide(&p, "full");
    no_wait_to(&p, RUN, "design");
    decide(&p, "approve");
    let o = run(&p, RUN);
    assert_exit(&o, 1);
    assert!(
        out(&o).contains("paused") && out(&o).contains("--decision retry"),
        "{}",
        out(&o)
    );
    let m = p.manifest("add-login");
    assert_eq!(m["status"], "paused");
    assert_eq!(m["failure_context"]["failed_phase"], "spec");
    let st = p.ok(&["status"]);
    assert!(
        st.contains("paused") && st.contains("--decision retry"),
        "{st}"
    );
    // Rerunning a paused task before deciding says what to do.
    let o = run(&p, RUN);
    assert_exit(&o, 1);
    decide(&p, "retry");
    no_wait_to(&p, RUN, "final");
    let l = labels(&p.manifest("add-login"));
    assert_eq!(l.iter().filter(|x| *x == "architect").count(), 1, "{l:?}");
    assert_eq!(l.iter().filter(|x| *x == "spec").count(), 3, "{l:?}");
    no_repeated_calls(&p);
    // reject of a paused task fails it — here via the final gate.
    decide(&p, "reject");
    let o = run(&p, RUN);
    assert_exit(&o, 1);
}

#[test]
fn revision_and_fix_loops_write_their_artifacts() {
    let p = proj(
        "[task]\ndesign-audit = [\"fail\", \"pass\"]\nimpl-audit = [\"fail\", \"pass\"]\n",
        "orchestrate",
    );
    no_wait_to(&p, RUN, "investigation");
    let dir = p.task_dir("add-login");
    assert!(dir.join("architect-revision-1.md").is_file());
    assert!(dir.join("design-audit.v2.md").is_file());
    decide(&p, "full");
    no_wait_to(&p, RUN, "design");
    decide(&p, "approve");
    no_wait_to(&p, RUN, "final");
    assert!(dir.join("implementation-fix-1.md").is_file());
    assert!(dir.join("impl-audit.v2.md").is_file());
    let l = labels(&p.manifest("add-login"));
    let pos = |x: &str| l.iter().position(|y| y == x).unwrap();
    assert!(pos("architect-revision") > pos("design-audit"));
    assert!(pos("implementation-fix") > pos("impl-audit"));

    // A design audit failing beyond max_revisions pauses the task.
    let p = proj("[task]\ndesign-audit = [\"fail\"]\n", "orchestrate");
    let o = run(&p, RUN);
    assert_exit(&o, 1);
    let m = p.manifest("add-login");
    assert_eq!(m["status"], "paused");
    assert!(
        m["failure_context"]["reason"]
            .as_str()
            .unwrap()
            .contains("design-audit failed after 2 repairs"),
        "{m}"
    );
    assert!(
        p.task_dir("add-login")
            .join("architect-revision-2.md")
            .is_file()
    );
}

#[test]
fn poc_then_graduate() {
    let p = proj("[task]\narchitect = [\"tasks=2\"]\n", "poc");
    let o = run(&p, &["run", "poc", "add-login", "--agent", "sim"]);
    assert!(o.status.success(), "{}", out(&o));
    let m = p.manifest("add-login");
    assert_eq!(m["status"], "completed");
    let mut l = labels(&m);
    l[1..3].sort();
    assert_eq!(
        l,
        ["architect", "implementation#1", "implementation#2", "debt"]
    );
    assert!(p.task_dir("add-login").join("debt.md").is_file());
    // Graduate: a new standard task from the poc, through the rest of the standard path.
    let g = spawn(&p, &["run", "graduate", "add-login", "--agent", "sim"]);
    let t = Instant::now();
    while !(p
        .task_dir("add-login-graduate")
        .join("manifest.json")
        .exists()
        && serde_json::from_slice::<Value>(
            &std::fs::read(p.task_dir("add-login-graduate").join("manifest.json")).unwrap(),
        )
        .unwrap()["status"]
            == "waiting_gate")
    {
        assert!(t.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(50));
    }
    p.ok(&[
        "resume",
        "--task",
        "add-login-graduate",
        "--decision",
        "approve",
    ]);
    let o = g.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", out(&o));
    let dir = p.task_dir("add-login-graduate");
    let m: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        (
            m["status"].as_str(),
            m["workflow"].as_str(),
            m["mode"].as_str()
        ),
        (Some("completed"), Some("graduate"), Some("standard"))
    );
    assert!(dir.join("graduate-complete.md").is_file());
    assert!(dir.join("spec.md").is_file() && dir.join("impl-audit.md").is_file());
    let prompts = p.path().join(".baton/runs");
    let mut found = false;
    for r in std::fs::read_dir(prompts).unwrap() {
        let f = r.unwrap().path().join("prompts/spec-1.md");
        if let Ok(t) = std::fs::read_to_string(f) {
            found |= t.contains("docs/orchestrator/context/tasks/add-login/debt.md");
        }
    }
    assert!(found, "the graduate spec prompt names the poc's debt.md");
}

#[test]
fn a_wave_of_four_runs_in_parallel_and_savings_match() {
    let p = proj(
        "[task]\nspec = [\"tasks=4\"]\nimplementation = [\"ok sleep=400\"]\n",
        "orchestrate",
    );
    no_wait_to(&p, RUN, "investigation");
    decide(&p, "full");
    no_wait_to(&p, RUN, "design");
    decide(&p, "approve");
    // Timed from outside: the whole rest of the run (spec, the wave, tests, audit). No
    // threshold on it (a loaded machine can slow anything): parallelism is read from the
    // phases' own intervals below.
    let started = Instant::now();
    no_wait_to(&p, RUN, "final");
    let elapsed = started.elapsed().as_millis() as u64;
    let m = p.manifest("add-login");
    let wave = &m["waves"]["execution"][0];
    assert_eq!(wave["tasks"].as_array().unwrap().len(), 4);
    let wall = wave["wall_ms"].as_u64().unwrap();
    let sum: u64 = m["completed_phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["phase"] == "implementation")
        .map(|c| c["duration_ms"].as_u64().unwrap())
        .sum();
    assert!(sum >= 4 * 400, "{sum}");
    assert!(
        wall < sum,
        "the wave ran in parallel: {wall} ms wall for {sum} ms of work"
    );
    assert_eq!(wave["sum_task_ms"].as_u64().unwrap(), sum);
    assert_eq!(wave["savings_ms"].as_u64().unwrap(), sum - wall);
    // The recorded wall time fits in what was measured from outside, so the recorded savings
    // are at least the work minus that measured time.
    assert!(
        wall <= elapsed,
        "recorded wall {wall} ms > measured {elapsed} ms"
    );
    assert!(wave["savings_ms"].as_u64().unwrap() >= sum - elapsed);
    // The store's savings cover every overlap: this wave's, and the tests phases' (they run
    // at once too). Measured here from the phase records themselves.
    let span = |phase: &str| -> (u64, u64) {
        let ts = |s: &Value| {
            s.as_str()
                .unwrap()
                .parse::<jiff::Timestamp>()
                .unwrap()
                .as_millisecond()
        };
        let mut v: Vec<(i64, i64)> = m["completed_phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["phase"] == phase)
            .map(|c| (ts(&c["started_at"]), ts(&c["ended_at"])))
            .collect();
        v.sort();
        let sum: i64 = v.iter().map(|(a, b)| b - a).sum();
        let (mut union, mut cur) = (0, None::<(i64, i64)>);
        for (a, b) in v {
            cur = match cur {
                Some((x, y)) if a <= y => Some((x, y.max(b))),
                Some((x, y)) => {
                    union += y - x;
                    Some((a, b))
                }
                None => Some((a, b)),
            };
        }
        union += cur.map_or(0, |(x, y)| y - x);
        (sum as u64, union as u64)
    };
    let (isum, iwall) = span("implementation");
    assert_eq!(
        (isum, iwall),
        (sum, wall),
        "the wave's figures are the phases' own"
    );
    let (tsum, twall) = span("tests");
    let saved = m["metrics"]["parallelization_savings_ms"].as_u64().unwrap();
    let want = (sum - wall) + (tsum - twall);
    assert!(
        saved.abs_diff(want) <= 5,
        "metrics {saved} vs measured {want}"
    );
    crate::util::assert_manifest_is_replay(&p.task_dir("add-login"));
}

#[test]
fn killed_runs_resume_without_repeating_an_agent_call() {
    // A clean run to count its journal events.
    let scenario = "[task]\nspec = [\"tasks=3\"]\n";
    let p = proj(scenario, "orchestrate");
    no_wait_to(&p, RUN, "investigation");
    decide(&p, "full");
    no_wait_to(&p, RUN, "design");
    decide(&p, "approve");
    no_wait_to(&p, RUN, "final");
    let total = events(&p).len();
    let want = labels(&p.manifest("add-login"));
    // Crash points: early, at the gates, mid-wave, late.
    let first_impl = events(&p)
        .iter()
        .position(|e| e["event"] == "phase_finished" && e["phase"] == "implementation")
        .unwrap()
        + 1;
    // Right after the journal says a gate is being opened, before the store has it: resuming
    // sets it once, and a gate a human already answered is never asked again.
    let gate_points: Vec<usize> = events(&p)
        .iter()
        .enumerate()
        .filter(|(_, e)| e["event"] == "task_gate_opened")
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(gate_points.len(), 3, "investigation, design, final");
    let mut points = vec![2, 4, first_impl, first_impl + 1, total - 3, total - 1];
    points.extend(gate_points);
    for n in points {
        let p = proj(scenario, "orchestrate");
        let mut decided = 0;
        let mut crashed = false;
        for _ in 0..12 {
            let m = p.manifest("add-login");
            if m["status"] == "waiting_gate" {
                let d = if m["gate_context"]["gate"] == "investigation" {
                    "full"
                } else {
                    "approve"
                };
                if m["gate_context"]["gate"] == "final" {
                    break;
                }
                decide(&p, d);
                decided += 1;
            }
            let mut c = cmd(&p, RUN);
            if !crashed {
                c.env("BATON_CRASH_AFTER_EVENT", n.to_string());
            }
            let o = c.output().unwrap();
            if o.status.code().is_none() {
                crashed = true;
            } else {
                assert!(o.status.success(), "after crash at {n}: {}", out(&o));
            }
        }
        assert!(crashed, "event {n} was reached");
        assert_eq!(decided, 2);
        let m = p.manifest("add-login");
        assert_eq!(m["gate_context"]["gate"], "final", "crash at {n}: {m}");
        assert_eq!(
            labels(&m).len(),
            want.len(),
            "crash at {n}: {:?}",
            labels(&m)
        );
        no_repeated_calls(&p);
        let log = std::fs::read_to_string(p.task_dir("add-login").join("events.jsonl")).unwrap();
        let mut gates: Vec<String> = log
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["event"] == "gate_set")
            .map(|e| e["gate"].as_str().unwrap().to_string())
            .collect();
        gates.sort();
        assert_eq!(gates, ["design", "final", "investigation"], "crash at {n}");
        crate::util::assert_manifest_is_replay(&p.task_dir("add-login"));
    }
}

#[test]
fn bad_input_is_refused_clearly() {
    let p = proj("", "orchestrate");
    // Every refusal below leaves the store as it was and starts no run.
    let before = p.snapshot();
    let no_runs =
        |p: &Proj| std::fs::read_dir(p.path().join(".baton/runs")).map_or(0, |d| d.count()) == 0;
    // A missing task.
    p.test()
        .args(["run", "orchestrate", "nosuch", "--agent", "sim"])
        .stderr(
            "error: no task `nosuch`\n  \
             hint: create it: baton task init \"nosuch\" --workflow orchestrate \
             (list: baton task list)\n",
        )
        .status(4)
        .run();
    // A task whose workflow does not fit.
    p.test()
        .args(["run", "poc", "add-login", "--agent", "sim"])
        .stderr(
            "error: task `add-login` is a orchestrate task in standard mode: \
             `baton run poc` does not fit it\n  \
             hint: run it with: baton run orchestrate add-login\n",
        )
        .status(2)
        .run();
    // A decision while no gate is open.
    p.test()
        .args(["resume", "--task", "add-login", "--decision", "approve"])
        .stderr(
            "error: nothing to resume: task `add-login` is running, \
             not paused or waiting at a gate\n  \
             hint: RESUME answers a PAUSE or a SET_GATE; see `baton task summary`\n",
        )
        .status(3)
        .run();
    // An override naming an unknown phase, and one with a cycle: file and line.
    let text = p.ok(&["workflow", "show", "orchestrate"]);
    let wdir = p.path().join(".baton/workflows");
    std::fs::create_dir_all(&wdir).unwrap();
    let bad = text.replace("after = [\"tests\"]", "after = [\"testz\"]");
    std::fs::write(wdir.join("orchestrate.toml"), &bad).unwrap();
    let o = run(&p, &["run", "orchestrate", "add-login", "--agent", "sim"]);
    assert_exit(&o, 5);
    assert!(
        out(&o).contains(".baton/workflows/orchestrate.toml line") && out(&o).contains("testz"),
        "{}",
        out(&o)
    );
    let bad = text.replace(
        "name = \"architect\"\n",
        "name = \"architect\"\nafter = [\"spec\"]\n",
    );
    std::fs::write(wdir.join("orchestrate.toml"), &bad).unwrap();
    let o = run(&p, &["run", "orchestrate", "add-login", "--agent", "sim"]);
    assert!(
        out(&o).contains("dependency cycle") && out(&o).contains("orchestrate.toml line"),
        "{}",
        out(&o)
    );
    let bad =
        format!("{text}\n[[phase]]\nname = \"deploy\"\nrole = \"architect\"\nsignal = \"X\"\n");
    std::fs::write(wdir.join("orchestrate.toml"), &bad).unwrap();
    let o = run(&p, &["run", "orchestrate", "add-login", "--agent", "sim"]);
    assert!(
        out(&o).contains("unknown phase `deploy`") && out(&o).contains("line"),
        "{}",
        out(&o)
    );
    assert_exit(&o, 5);
    assert!(
        out(&o).contains("delete it to use the built-in"),
        "{}",
        out(&o)
    );
    let list = p.ok(&["workflow", "list"]);
    assert!(
        list.contains("orchestrate  (project's own") && list.contains("graduate  (built-in)"),
        "{list}"
    );
    std::fs::remove_file(wdir.join("orchestrate.toml")).unwrap();
    // A broken poc override (the one a `lite` decision switches to), an agent baton cannot
    // run, and flags only epic runs know: refused before a run exists.
    let poc = p
        .ok(&["workflow", "show", "poc"])
        .replace("name = \"debt\"", "name = \"dept\"");
    std::fs::write(wdir.join("poc.toml"), &poc).unwrap();
    let o = run(&p, &["run", "orchestrate", "add-login", "--agent", "sim"]);
    assert_exit(&o, 5);
    assert!(out(&o).contains("poc.toml"), "{}", out(&o));
    std::fs::remove_file(wdir.join("poc.toml")).unwrap();
    p.test()
        .args(["run", "orchestrate", "add-login", "--agent", "nosuch"])
        .stderr_contains("unknown agent `nosuch`")
        .status(2)
        .run();
    // Flags of epic runs are not flags of task runs: clap refuses them.
    for flag in ["--dry-run", "--party-all"] {
        p.test()
            .args(["run", "orchestrate", "add-login", flag])
            .stderr_contains(&format!("unexpected argument '{flag}' found"))
            .status(2)
            .run();
    }
    assert_eq!(p.snapshot(), before, "a refusal changed the store");
    assert!(no_runs(&p), "a refusal left a run behind");
    // An unfinished orchestrate run is not continued by `baton run poc`.
    let o = run(
        &p,
        &[
            "run",
            "orchestrate",
            "add-login",
            "--agent",
            "sim",
            "--no-wait",
        ],
    );
    assert!(o.status.success(), "{}", out(&o));
    let mid = p.snapshot();
    let o = run(&p, &["run", "poc", "add-login", "--agent", "sim"]);
    assert_exit(&o, 2);
    assert!(
        out(&o).contains("unfinished orchestrate run"),
        "{}",
        out(&o)
    );
    assert_eq!(p.snapshot(), mid);
    // A spec whose tasks form a cycle pauses the task, naming spec.md.
    let p = proj("[task]\nspec = [\"cycle\"]\n", "orchestrate");
    no_wait_to(&p, RUN, "investigation");
    decide(&p, "full");
    no_wait_to(&p, RUN, "design");
    decide(&p, "approve");
    let o = run(&p, RUN);
    assert_exit(&o, 1);
    let m = p.manifest("add-login");
    assert_eq!(m["status"], "paused");
    let r = m["failure_context"]["reason"].as_str().unwrap();
    assert!(r.contains("spec.md: dependency cycle"), "{r}");
}

#[test]
fn a_test_command_is_run_by_baton_and_masked() {
    let p = proj("", "orchestrate");
    let text = p.ok(&["workflow", "show", "orchestrate"]);
    let wdir = p.path().join(".baton/workflows");
    std::fs::create_dir_all(&wdir).unwrap();
    let own = text
        .replace(
            "gates = [\"investigation\", \"design\", \"final\"]",
            "gates = []",
        )
        .replace(
            "test_command = []",
            "test_command = [\"sh\", \"-c\", \"echo 'test a ... ok'; echo 'test result: ok. 1 passed; 0 failed'\"]",
        );
    std::fs::write(wdir.join("orchestrate.toml"), &own).unwrap();
    let o = run(&p, &["run", "orchestrate", "add-login", "--agent", "sim"]);
    assert!(o.status.success(), "{}", out(&o));
    let m = p.manifest("add-login");
    assert_eq!(
        m["status"], "completed",
        "no gate configured: baton passes the final gate"
    );
    let r = std::fs::read_to_string(p.task_dir("add-login").join("test-results.md")).unwrap();
    assert!(r.contains("run by baton") && r.contains("Exit: 0"), "{r}");
    assert!(
        !events(&p).iter().any(|e| e["event"] == "phase_finished"
            && e["phase"] == "test-results"
            && e["outcome"]["usage"]["output_tokens"].as_u64().unwrap_or(0) > 0),
        "no agent ran the tests"
    );
    // A failing command fails the phase: retried, then the task is paused.
    let p = proj("", "orchestrate");
    std::fs::create_dir_all(p.path().join(".baton/workflows")).unwrap();
    let own = own.replace(
        "echo 'test result: ok. 1 passed; 0 failed'",
        "echo FAIL; exit 1",
    );
    std::fs::write(p.path().join(".baton/workflows/orchestrate.toml"), &own).unwrap();
    let o = run(&p, &["run", "orchestrate", "add-login", "--agent", "sim"]);
    assert_exit(&o, 1);
    let m = p.manifest("add-login");
    assert_eq!(m["status"], "paused");
    assert_eq!(m["failure_context"]["failed_phase"], "test-results");
}

#[test]
fn a_signal_for_another_task_does_not_pass_the_phase() {
    let p = proj("[task]\narchitect = [\"wrongid\"]\n", "orchestrate");
    let o = run(
        &p,
        &[
            "run",
            "orchestrate",
            "add-login",
            "--agent",
            "sim",
            "--no-wait",
        ],
    );
    assert_exit(&o, 1);
    let archs: Vec<Value> = events(&p)
        .into_iter()
        .filter(|e| e["event"] == "phase_finished" && e["phase"] == "architect")
        .collect();
    assert_eq!(archs.len(), 2, "both attempts ran: {archs:?}");
    for e in &archs {
        assert_eq!(e["subject"]["kind"], "task");
        assert_eq!(e["outcome"]["ok"], false);
        let detail = e["outcome"]["detail"].as_str().unwrap();
        assert!(
            detail.contains("no completion signal") && detail.contains("some-other-task"),
            "{detail}"
        );
    }
    let m = p.manifest("add-login");
    assert_eq!(m["status"], "paused");
    assert_eq!(m["failure_context"]["failed_phase"], "architect");
}

#[test]
fn a_rate_limited_call_is_waited_out_and_the_run_streams_json_events() {
    let p = proj("[task]\narchitect = [\"ratelimit\"]\n", "orchestrate");
    crate::util::no_backoff(p.path(), "orchestrate");
    let o = run(
        &p,
        &[
            "run",
            "orchestrate",
            "add-login",
            "--agent",
            "sim",
            "--no-wait",
            "--json",
        ],
    );
    assert_exit(&o, 0);
    let lines: Vec<Value> = crate::util::json_lines(&o.stdout);
    let kinds: Vec<&str> = lines.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"run_started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"run_finished"), "{kinds:?}");
    // The same event types as epic-execute's stream.
    for k in [
        "phase_started",
        "phase_retrying",
        "phase_finished",
        "gate_opened",
    ] {
        assert!(kinds.contains(&k), "{k} missing: {kinds:?}");
    }
    let retry = lines
        .iter()
        .find(|e| e["event"] == "phase_retrying")
        .unwrap();
    assert_eq!(retry["phase"], "architect");
    assert_eq!(retry["subject"]["id"], "add-login");
    assert_eq!(lines.last().unwrap()["result"], "waiting");
    // The architect attempt passed once, after the wait; nothing was counted as failed.
    let archs: Vec<Value> = events(&p)
        .into_iter()
        .filter(|e| e["event"] == "phase_finished" && e["phase"] == "architect")
        .collect();
    assert_eq!(archs.len(), 1, "{archs:?}");
    assert_eq!(archs[0]["outcome"]["ok"], true);
    // Nothing but events on stdout.
    assert!(!String::from_utf8_lossy(&o.stdout).contains("waiting at the"));
}

/// A spent usage limit in a task run pauses it (exit 7), telling the notifier the command that
/// continues; with `--wait-for-quota` it is waited out, and a gate that waits for a decision
/// is told with the decision to make.
#[test]
fn a_task_run_tells_the_notifier_of_a_pause_and_a_waiting_gate() {
    let p = proj("[task]\narchitect = [\"quota\"]\n", "orchestrate");
    crate::util::no_backoff(p.path(), "orchestrate");
    std::fs::write(p.path().join("baton.toml"), crate::util::NOTIFY_TO_FILE).unwrap();
    let o = run(
        &p,
        &[
            "run",
            "orchestrate",
            "add-login",
            "--agent",
            "sim",
            "--no-wait",
        ],
    );
    assert_exit(&o, 7);
    let heard = crate::util::heard(p.path());
    let names: Vec<&str> = heard.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["run_paused"], "{heard:?}");
    assert!(
        heard[0]["resume"]
            .as_str()
            .unwrap()
            .starts_with("baton run --resume "),
        "{heard:?}"
    );

    let p = proj("[task]\narchitect = [\"quota\"]\n", "orchestrate");
    crate::util::no_backoff(p.path(), "orchestrate");
    std::fs::write(p.path().join("baton.toml"), crate::util::NOTIFY_TO_FILE).unwrap();
    let o = run(
        &p,
        &[
            "run",
            "orchestrate",
            "add-login",
            "--agent",
            "sim",
            "--no-wait",
            "--wait-for-quota",
        ],
    );
    assert_exit(&o, 0);
    let err = out(&o);
    assert!(err.contains("usage limit is spent"), "{err}");
    let archs: Vec<Value> = events(&p)
        .into_iter()
        .filter(|e| e["event"] == "phase_finished" && e["phase"] == "architect")
        .collect();
    assert_eq!(
        archs.len(),
        1,
        "one architect call, after the wait: {archs:?}"
    );
    let heard = crate::util::heard(p.path());
    let names: Vec<&str> = heard.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["gate_waiting"], "{heard:?}");
    let next = heard[0]["resume"].as_str().unwrap();
    assert!(
        next.contains("baton resume --task add-login --decision"),
        "{next}"
    );
    let attention = std::fs::read_to_string(p.path().join(".baton/ATTENTION.md")).unwrap();
    assert!(attention.contains("gate of task add-login"), "{attention}");
}
