//! Several processes writing one task at once lose nothing, and a process killed at any
//! point leaves a store that `baton doctor` passes and every later command works on.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::{Proj, assert_manifest_is_replay, bin};

const PROCS: usize = 16;
const OPS: usize = 200;

/// 200 mixed operations of one worker: start, store, end, read — 150 of them write an event.
fn worker_script(w: usize) -> String {
    let mut s = String::new();
    for i in 0..OPS / 4 {
        s.push_str(&format!(
            "START_PHASE phase: implementation task_id: w{w}\n"
        ));
        s.push_str(&format!(
            "STORE phase: implementation task_id: w{w}-{i} content: worker {w} op {i}\n"
        ));
        s.push_str(&format!(
            "END_PHASE phase: implementation task_id: w{w} status: {}\n",
            if i % 5 == 0 { "failed" } else { "success" }
        ));
        s.push_str("SUMMARY\n");
    }
    s
}

#[test]
fn sixteen_processes_lose_no_event() {
    let p = Proj::new();
    p.ok(&["task", "init", "busy"]);
    let children: Vec<_> = (0..PROCS)
        .map(|w| {
            let mut c = Command::new(bin())
                .arg("exec")
                .current_dir(p.path())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            c.stdin
                .take()
                .unwrap()
                .write_all(worker_script(w).as_bytes())
                .unwrap();
            c
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "a worker failed: {}",
            out.lines().rev().take(4).collect::<Vec<_>>().join("\n")
        );
        assert_eq!(out.matches("STATUS: success").count(), OPS);
    }
    let t = p.task_dir("busy");
    let events = baton_store::log::read_all(&t.join("events.jsonl")).unwrap();
    assert_eq!(
        events.len(),
        1 + PROCS * OPS / 4 * 3,
        "every write is one event, none lost"
    );
    assert_manifest_is_replay(&t);
    let m = p.manifest("busy");
    assert_eq!(
        m["completed_phases"].as_array().unwrap().len(),
        PROCS * OPS / 4
    );
    assert_eq!(m["metrics"]["total_retries"], (PROCS * OPS / 4 / 5) as u64);
    let stored = std::fs::read_dir(t.join("implementations"))
        .unwrap()
        .count();
    assert_eq!(stored, PROCS * OPS / 4);
    let history = std::fs::read_to_string(p.store().join("context/history.md")).unwrap();
    assert_eq!(
        history.lines().filter(|l| l.starts_with("- ")).count(),
        1 + PROCS * OPS / 4 * 3
    );
    assert!(p.ok(&["doctor"]).contains("store is healthy"));
}

/// A tiny deterministic generator, so a failing run can be replayed.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn sigkill_at_random_points_leaves_a_store_doctor_passes() {
    let p = Proj::new();
    p.ok(&["task", "init", "crashy"]);
    let t = p.task_dir("crashy");
    let mut rng = Lcg(0x5eed);
    let mut killed_mid_run = 0;
    for round in 0..25 {
        // A long script of writes; killed after a random delay, mid-command somewhere.
        let mut script = String::new();
        for i in 0..400 {
            script.push_str(&format!(
                "BEGIN_PHASE phase: implementation task_id: r{round}-{i} needs: memory\n"
            ));
            script.push_str(&format!("COMPLETE_PHASE phase: implementation status: success task_id: r{round}-{i} content: round {round} item {i}\n"));
        }
        let mut child = Command::new(bin())
            .arg("exec")
            .current_dir(p.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(script.as_bytes());
        drop(stdin);
        std::thread::sleep(Duration::from_millis(5 + rng.next(60)));
        if child.try_wait().unwrap().is_none() {
            killed_mid_run += 1;
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();

        // Some rounds also simulate a power loss: the last event line torn in half.
        if round % 5 == 4 {
            let path = t.join("events.jsonl");
            let len = std::fs::metadata(&path).unwrap().len();
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            f.set_len(len - 7).unwrap();
        }
        let o = p.run(&["doctor"], None);
        assert!(
            o.status.success(),
            "round {round}: doctor failed:\n{}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert_manifest_is_replay(&t);
        // Every later command works.
        p.ok(&["phase", "start", &format!("after-{round}")]);
        p.ok(&[
            "phase",
            "end",
            &format!("after-{round}"),
            "--status",
            "success",
        ]);
        p.ok(&["task", "summary"]);
    }
    assert!(
        killed_mid_run >= 10,
        "the kills must land mid-run to test anything ({killed_mid_run})"
    );
    let out = p.ok(&["doctor"]);
    assert!(
        out.contains("store is healthy") && !out.contains("ERROR"),
        "{out}"
    );
    // No event was recorded twice and every stored artifact exists.
    let events = baton_store::log::read_all(&t.join("events.jsonl")).unwrap();
    for e in &events {
        if let baton_store::model::EventKind::ArtifactStored { path, .. } = &e.kind {
            assert!(t.join(path).is_file(), "{path} recorded but missing");
        }
    }
}
