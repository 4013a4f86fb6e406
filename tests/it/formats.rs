//! The on-disk formats of baton 0.1.0 (`tests/fixtures/formats/`, see its README) are still read:
//! each fixture is copied into a fresh temp project and read through the binary. The checks are
//! on ids, workflows, statuses and counts, not on the wording of human output.

use std::path::Path;

use serde_json::Value;

use crate::util::{Proj, assert_manifest_is_replay, copy_dir, fixture, snapshot};

const EPIC_RUN: &str = "20261123T104845-d4556e";
const TASK_RUN: &str = "20261123T104844-41d161";
const VERIFY_RUN: &str = "20261123T104845-7a14ba";

/// A fresh project holding every fixture where baton keeps it.
fn project() -> Proj {
    let p = Proj::new();
    copy_dir(&fixture("formats/store"), &p.store());
    copy_dir(&fixture("formats/runs"), &p.path().join(".baton/runs"));
    copy_dir(&fixture("formats/queues"), &p.path().join(".baton/queues"));
    p
}

fn json(p: &Proj, args: &[&str]) -> Value {
    p.test().args(args).arg("--json").any_stdout().run().json()
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

#[test]
fn the_task_store_is_read_and_replays_to_its_manifest() {
    let p = project();
    let t = p.task_dir("add-login");
    // The library replays the old events to exactly the old manifest.
    assert_manifest_is_replay(&t);

    let s = json(&p, &["task", "summary"]);
    assert_eq!(s["task"], "add-login", "{s}");
    assert_eq!(s["mode"], "standard");
    assert_eq!(s["workflow"], "orchestrate");
    assert_eq!(s["status"], "completed");
    assert_eq!(s["completed"], 9);
    assert_eq!(s["failed"], 0);
    assert_eq!(s["running"], serde_json::json!([]));
    assert_eq!(s["last_completed"], "impl-audit success");
    assert_eq!(s["updated_at"], "2026-11-23T10:48:45.078Z");

    let m = json(&p, &["metrics"]);
    assert_eq!(m["task"], "add-login", "{m}");
    assert_eq!(m["status"], "completed");
    assert_eq!(m["phases_completed"], 9);
    assert_eq!(m["phases_succeeded"], 9);
    assert_eq!(m["phases_failed"], 0);
    assert_eq!(m["total_retries"], 0);
    assert_eq!(m["total_duration_ms"], 155);
    assert_eq!(m["parallelization_savings_ms"], 12);
    let per_phase: Vec<(&str, u64)> = m["per_phase"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["phase"].as_str().unwrap(), r["runs"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        per_phase,
        [
            ("architect", 1),
            ("design-audit", 1),
            ("spec", 1),
            ("implementation", 2),
            ("tests", 2),
            ("test-results", 1),
            ("impl-audit", 1),
        ]
    );

    // The current-task pointer and the history are read too.
    let list = json(&p, &["task", "list"]);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let h = json(&p, &["history", "--tail", "3"]);
    assert_eq!(
        strings(&h),
        [
            "- 2026-11-23T10:48:45.061Z [add-login] COMPLETE_PHASE impl-audit success",
            "- 2026-11-23T10:48:45.068Z [add-login] SET_GATE final",
            "- 2026-11-23T10:48:45.078Z [add-login] RESUME approve → completed",
        ]
    );
    // An artifact, through RETRIEVE.
    let r = json(&p, &["retrieve", "--for", "implementation"]);
    assert!(
        r["parts"][0]["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("spec.md")),
        "{r}"
    );
}

#[test]
fn doctor_calls_the_old_store_healthy_and_changes_no_byte() {
    let p = project();
    let before = snapshot(&p.store());
    let v = json(&p, &["doctor"]);
    assert_eq!(v["tasks"], 1, "{v}");
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v}");
    assert_eq!(findings[0]["level"], "ok", "{v}");
    assert!(
        findings[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("context/tasks/add-login"),
        "{v}"
    );
    p.test()
        .args(["doctor"])
        .stdout_contains("store is healthy")
        .run();
    // Byte for byte, and no file added or removed (lock files aside).
    assert!(before == snapshot(&p.store()), "doctor changed the store");
}

#[test]
fn status_lists_each_run_with_its_workflow_and_outcome() {
    let p = project();
    let v = json(&p, &["status"]);
    let runs: Vec<(&str, &str, &str, Vec<&str>)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["run_id"].as_str().unwrap(),
                r["workflow"].as_str().unwrap(),
                r["state"].as_str().unwrap(),
                strings(&r["epics"]),
            )
        })
        .collect();
    assert_eq!(
        runs,
        [
            (TASK_RUN, "orchestrate", "completed", vec!["add-login"]),
            (VERIFY_RUN, "verify", "finished", vec!["q"]),
            (EPIC_RUN, "epic-execute", "finished", vec!["1"]),
        ],
        "{v}"
    );
    let run = |id: &str| {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["run_id"] == id)
            .unwrap()
            .clone()
    };
    let epic = run(EPIC_RUN);
    assert_eq!(
        (&epic["done"], &epic["failed"], &epic["agent_calls"]),
        (&3.into(), &1.into(), &11.into()),
        "{epic}"
    );
    assert_eq!(epic["started_at"], "2026-11-23T10:48:45.435Z");
    let verify = run(VERIFY_RUN);
    assert_eq!(
        (&verify["done"], &verify["failed"], &verify["agent_calls"]),
        (&2.into(), &0.into(), &11.into()),
        "{verify}"
    );
    assert_eq!(run(TASK_RUN)["agent_calls"], 9);
    for id in [EPIC_RUN, VERIFY_RUN, TASK_RUN] {
        assert_eq!(run(id)["next"], Value::Null, "{id}: nothing left to do");
    }

    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{v}");
    assert_eq!(tasks[0]["task"], "add-login");
    assert_eq!(tasks[0]["status"], "completed");
    let queues = v["queues"].as_array().unwrap();
    assert_eq!(queues.len(), 1, "{v}");
    assert_eq!(queues[0]["name"], "q");
    assert_eq!(
        (&queues[0]["complete"], &queues[0]["items"]),
        (&2.into(), &2.into())
    );
}

#[test]
fn the_verify_queue_and_its_state_files_are_read() {
    let p = project();
    let q = json(&p, &["queue", "show", "q"]);
    assert_eq!(q["queue"]["name"], "q", "{q}");
    assert_eq!(q["queue"]["items"], 2);
    assert_eq!(q["queue"]["complete"], 2);
    assert_eq!(q["queue"]["failed"], 0);
    assert_eq!(q["queue"]["pending"], 0);
    assert_eq!(q["queue"]["in_progress"], 0);
    let items: Vec<(&str, &str, u64, u64)> = q["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["item"].as_str().unwrap(),
                i["status"].as_str().unwrap(),
                i["phases"].as_u64().unwrap(),
                i["phases_done"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        items,
        [("BMNR", "complete", 5, 5), ("MARA", "complete", 5, 5)]
    );

    for (item, retried) in [("BMNR", None), ("MARA", Some("1b"))] {
        let s = json(&p, &["state", "show", item]);
        assert_eq!(s["item"], item, "{s}");
        assert_eq!(s["status"], "complete", "{s}");
        assert_eq!(s["runId"], VERIFY_RUN, "{s}");
        assert_eq!(s["queue"]["name"], "q", "{s}");
        assert_eq!(s["rotations"], 0, "{s}");
        let phases = s["phases"].as_object().unwrap();
        assert_eq!(
            phases.keys().map(String::as_str).collect::<Vec<_>>(),
            ["1a", "1b", "4c", "4d", "5"],
            "{s}"
        );
        for (id, ph) in phases {
            assert_eq!(ph["status"], "complete", "{item} {id}: {ph}");
            let attempts = if retried == Some(id.as_str()) { 2 } else { 1 };
            assert_eq!(ph["attempts"], attempts, "{item} {id}: {ph}");
            assert_eq!(ph["summary"]["status"], "Complete", "{item} {id}: {ph}");
            assert!(
                ph["outputFile"]
                    .as_str()
                    .unwrap()
                    .starts_with(&item.to_lowercase()),
                "{item} {id}: {ph}"
            );
        }
        assert_eq!(s["contextEstimate"]["sessionLimit"], 195_000, "{s}");
    }
    assert_eq!(
        json(&p, &["state", "show", "MARA"])["completed"],
        serde_json::json!(["BMNR"])
    );
}

#[test]
fn resuming_a_finished_run_says_so_and_runs_nothing() {
    let p = project();
    let runs = p.path().join(".baton/runs");
    // A write in `.baton/` that a kill cut short after the run's last event (no pid is that
    // high), and a live writer's (this test's): the resume, the user's only next step, removes
    // the first and says so; the second may be a write in progress and stays.
    let cut_short = p.path().join(".baton/.baton-tmp-99999999-Ab12Cd");
    let live = p
        .path()
        .join(format!(".baton/.baton-tmp-{}-Ef34Gh", std::process::id()));
    std::fs::write(&cut_short, "# Waiting").unwrap();
    std::fs::write(&live, "# Waiting").unwrap();
    p.test()
        .args(["run", "--resume", EPIC_RUN])
        .stderr_contains(
            "note: removed .baton/.baton-tmp-99999999-Ab12Cd, left by a write that was cut short",
        )
        .stderr_contains(&format!("run {EPIC_RUN} already finished"))
        .status(3)
        .run();
    assert!(!cut_short.exists() && live.exists());
    std::fs::remove_file(&live).unwrap();
    for (id, hint) in [
        (EPIC_RUN, "see its summary with `baton status`"),
        (TASK_RUN, "see where its task stands with `baton status`"),
        (
            VERIFY_RUN,
            "to work on the queue again: baton run verify --queue NAME (complete items are skipped)",
        ),
    ] {
        let before = (snapshot(&runs), snapshot(&p.store()));
        // A finished run is refused before any agent could start, and nothing is written.
        p.test()
            .args(["run", "--resume", id])
            .stderr_contains(&format!("run {id} already finished"))
            .stderr_contains(hint)
            .status(3)
            .run();
        assert!(
            before == (snapshot(&runs), snapshot(&p.store())),
            "resuming {id} changed the runs or the store"
        );
        assert_only_journal(&runs.join(id));
    }
}

/// The run directory still holds its journal only: no prompt, no log, no output was written.
fn assert_only_journal(run: &Path) {
    let names: Vec<String> = std::fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert_eq!(names, ["events.jsonl"], "{}", run.display());
}

#[test]
fn the_fixtures_are_the_old_formats() {
    // Guards against a regenerated fixture: these are the versions and kinds 0.1.0 wrote.
    let first = |rel: &str| -> Value {
        let text = std::fs::read_to_string(fixture(rel)).unwrap();
        serde_json::from_str(text.lines().next().unwrap()).unwrap()
    };
    for (id, workflow) in [
        (EPIC_RUN, "epic-execute"),
        (TASK_RUN, "orchestrate"),
        (VERIFY_RUN, "verify"),
    ] {
        let e = first(&format!("formats/runs/{id}/events.jsonl"));
        assert_eq!(
            (&e["v"], &e["event"], &e["workflow"], &e["run_id"]),
            (
                &1.into(),
                &"run_started".into(),
                &workflow.into(),
                &id.into()
            ),
            "{e}"
        );
        assert!(
            e.get("epics").is_some(),
            "0.1.0 names a run's subject `epics`: {e}"
        );
    }
    let e = first("formats/store/context/tasks/add-login/events.jsonl");
    assert_eq!((&e["v"], &e["event"]), (&1.into(), &"task_created".into()));
    let q: Value =
        serde_json::from_slice(&std::fs::read(fixture("formats/queues/q/queue.json")).unwrap())
            .unwrap();
    assert_eq!(q["v"], 1);
}
