//! Verify queues end to end: the real binary, a temp git repository, the simulated
//! agent. Every prompt the orchestrator sends is in `.baton/runs/<id>/prompts/`; the sim agent
//! copies the item's state file as each phase starts (`BATON_SIM_VERIFY_SNAPSHOTS`).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::assert_exit;
use crate::util::text;
use crate::util::{Proj, Test};
use serde_json::Value;

const FOUR: &str = r#"name = "verify"
[[phase]]
id = "1a"
agent = "SEC Researcher"
output = "{item}-ground-truth.md"
task = "ground truth"
[[phase]]
id = "1b"
agent = "Extraction Adversary"
output = "{item}-adversary.md"
inputs = ["1a"]
[[phase]]
id = "4c"
agent = "Reviewer"
output = "{item}-review.md"
inputs = ["1a", "1b"]
[[phase]]
id = "5"
agent = "Final Verifier"
output = "{item}-final.md"
inputs = ["1b", "4c"]
"#;

struct T {
    p: Proj,
    snaps: PathBuf,
}

fn setup(scenario: &str) -> T {
    let p = Proj::new();
    std::fs::create_dir_all(p.path().join(".baton/workflows")).unwrap();
    std::fs::write(p.path().join(".baton/sim.toml"), scenario).unwrap();
    let snaps = p.path().join("snaps");
    T { p, snaps }
}

impl T {
    fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[])
    }
    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = self.p.cmd(args);
        c.env_remove("BATON_AGENT_SIM")
            .env("BATON_SIM_VERIFY_SNAPSHOTS", &self.snaps);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }
    fn verify(&self) -> Output {
        self.run(&["run", "verify", "--queue", "q", "--agent", "sim"])
    }
    fn state(&self, item: &str) -> Value {
        read_json(&self.item_dir(item).join("verification-state.json"))
    }
    fn item_dir(&self, item: &str) -> PathBuf {
        self.p.path().join(".baton/queues/q/items").join(item)
    }
    fn snap(&self, name: &str) -> Value {
        read_json(&self.snaps.join(format!("{name}.json")))
    }
    /// Runs, oldest first (ids sort by time).
    fn runs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(self.p.path().join(".baton/runs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort_by_key(|r| self.events(r)[0]["ts"].as_str().unwrap().to_string());
        v
    }
    fn prompts(&self, run: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(run.join("prompts"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }
    fn prompt(&self, run: &Path, label: &str) -> String {
        std::fs::read_to_string(run.join("prompts").join(format!("{label}.md"))).unwrap()
    }
    fn events(&self, run: &Path) -> Vec<Value> {
        std::fs::read_to_string(run.join("events.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

fn assert_complete_phase(st: &Value, id: &str) {
    let ph = &st["phases"][id];
    assert_eq!(ph["status"], "complete", "{id}: {ph}");
    assert!(ph["completedAt"].is_string(), "{id}: {ph}");
    assert!(ph["tokensBurned"].as_u64().unwrap() > 0, "{id}: {ph}");
    let s = &ph["summary"];
    assert_eq!(s["status"], "Complete", "{id}: {s}");
    assert!(!s["keyFindings"].as_array().unwrap().is_empty(), "{s}");
    assert!(s["issuesNoted"].as_u64().is_some(), "{s}");
    // Relative paths: they hold from any session.
    assert!(!ph["outputFile"].as_str().unwrap().contains('/'), "{ph}");
}

#[test]
fn three_items_through_four_phases_with_a_state_file_after_every_phase() {
    let t = setup("");
    std::fs::write(t.p.path().join(".baton/workflows/verify.toml"), FOUR).unwrap();
    let out = t.p.ok(&["queue", "add", "q", "BMNR", "MARA", "XXI"]);
    assert!(out.contains("added BMNR, MARA, XXI"), "{out}");
    let o = t.verify();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("queue q: 3 complete, 0 failed"),
        "{}",
        text(&o)
    );
    let ids = ["1a", "1b", "4c", "5"];
    for item in ["BMNR", "MARA", "XXI"] {
        // As each phase starts, the one before is complete on disk and this one in progress.
        for (k, id) in ids.iter().enumerate() {
            let s = t.snap(&format!("{item}-{id}-1"));
            assert_eq!(s["item"], item);
            assert_eq!(s["status"], "in-progress");
            assert_eq!(s["phases"][id]["status"], "in-progress", "{s}");
            assert_eq!(s["phases"][id]["attempts"], 1);
            for done in &ids[..k] {
                assert_complete_phase(&s, done);
            }
            for later in &ids[k + 1..] {
                assert_eq!(s["phases"][later]["status"], "not-started");
            }
            let c = &s["contextEstimate"];
            assert_eq!(c["sessionLimit"], 195000);
            assert_eq!(c["rotationThreshold"], 120000);
            assert_eq!(c["systemOverhead"], 15000);
            assert_eq!(
                c["totalEstimate"].as_u64().unwrap(),
                15000 + c["conversationTokens"].as_u64().unwrap()
            );
            assert_eq!(s["queue"]["name"], "q");
        }
        let st = t.state(item);
        assert_eq!(st["status"], "complete");
        for id in ids {
            assert_complete_phase(&st, id);
            let f = st["phases"][id]["outputFile"].as_str().unwrap();
            assert!(t.item_dir(item).join(f).is_file(), "{f}");
        }
        assert_eq!(
            st["phases"]["5"]["inputFiles"],
            serde_json::json!([
                format!("{}-adversary.md", item.to_lowercase()),
                format!("{}-review.md", item.to_lowercase())
            ])
        );
    }
    let x = t.state("XXI");
    assert_eq!(x["completed"], serde_json::json!(["BMNR", "MARA"]));
    assert_eq!(
        t.state("BMNR")["queue"]["next"],
        serde_json::json!(["MARA", "XXI"])
    );
    // Prompts pass paths, never contents.
    let run = &t.runs()[0];
    assert_eq!(t.prompts(run).len(), 12);
    let p = t.prompt(run, "MARA-4c-1");
    assert!(
        p.contains("Output file: .baton/queues/q/items/MARA/mara-review.md"),
        "{p}"
    );
    assert!(
        p.contains("- .baton/queues/q/items/MARA/mara-ground-truth.md (phase 1a"),
        "{p}"
    );
    assert!(p.contains("You MUST end with a Summary block"), "{p}");
    assert!(p.contains("under 50 lines"), "{p}");
    assert!(
        p.contains("write your findings") || p.contains("Write incrementally"),
        "{p}"
    );
    let gt = std::fs::read_to_string(t.item_dir("MARA").join("mara-ground-truth.md")).unwrap();
    assert!(
        !p.contains(gt.lines().next().unwrap()),
        "the prompt holds no file content"
    );

    // state show: human and --json.
    let s = t.p.ok(&["state", "show", "MARA"]);
    assert!(s.contains("MARA (queue q): complete"), "{s}");
    assert!(
        s.contains("1b   complete") && s.contains("mara-adversary.md"),
        "{s}"
    );
    assert!(
        s.contains("context: ~") && s.contains("rotation at 120000"),
        "{s}"
    );
    let j = t.p.json(&["state", "show", "MARA"]);
    assert_eq!(j, t.state("MARA"));
    let q = t.p.json(&["queue", "show", "q"]);
    assert_eq!(q["queue"]["complete"], 3);
    assert_eq!(q["items"][2]["status"], "complete");
    let st = t.p.ok(&["status"]);
    assert!(st.contains("queue q  3 complete, 0 failed"), "{st}");
    // A rerun has nothing left to do.
    let o = t.verify();
    assert!(text(&o).contains("3 already complete"), "{}", text(&o));
}

#[test]
fn a_missing_summary_block_is_retried_once_with_the_reminder_then_fails() {
    let t =
        setup("[verify]\n\"BMNR/1b\" = [\"nosummary\"]\n\"MARA/1b\" = [\"nosummary\", \"ok\"]\n");
    t.p.ok(&["queue", "add", "q", "BMNR", "MARA"]);
    let o = t.verify();
    assert_exit(&o, 1);
    let out = text(&o);
    assert!(out.contains("BMNR failed: phase 1b: the answer has no `## Summary` block (after a retry with the format reminder)"), "{out}");
    let run = &t.runs()[0];
    let second = t.prompt(run, "BMNR-1b-2");
    assert!(second.contains("FORMAT REMINDER"), "{second}");
    assert!(
        second.contains("the answer has no `## Summary` block"),
        "{second}"
    );
    assert!(
        !t.prompts(run).contains(&"BMNR-1b-3.md".to_string()),
        "one retry only"
    );
    assert!(!t.prompts(run).iter().any(|p| p.starts_with("BMNR-4c")));
    let b = t.state("BMNR");
    assert_eq!(b["status"], "failed");
    assert_eq!(b["phases"]["1b"]["status"], "failed");
    assert!(b["failure"].as_str().unwrap().contains("phase 1b"));
    // The next item runs; its first answer lacks the block, the reminder fixes it.
    let m = t.state("MARA");
    assert_eq!(m["status"], "complete");
    assert_eq!(m["phases"]["1b"]["attempts"], 2);
    assert!(t.prompt(run, "MARA-1b-2").contains("FORMAT REMINDER"));
    let q = t.p.ok(&["queue", "show", "q"]);
    assert!(q.contains("BMNR         failed: phase 1b"), "{q}");
    assert!(t.p.ok(&["status"]).contains("BMNR failed"));
}

#[test]
fn an_orchestrator_killed_mid_phase_resumes_there_and_notices_the_partial_output() {
    let t = setup("[verify]\n\"MARA/4c\" = [\"kill-orchestrator\", \"ok\"]\n");
    t.p.ok(&["queue", "add", "q", "BMNR", "MARA"]);
    let o = t.verify();
    assert_eq!(o.status.code(), None, "killed by a signal: {}", text(&o));
    let m = t.state("MARA");
    assert_eq!(m["status"], "in-progress");
    assert_eq!(m["phases"]["4c"]["status"], "in-progress");
    assert_complete_phase(&m, "1b");
    let partial = t.item_dir("MARA").join("mara-data-review.md");
    assert!(partial.is_file());
    let st = t.p.ok(&["status"]);
    assert!(st.contains("interrupted: MARA at phase 4c"), "{st}");
    let show = t.p.ok(&["state", "show", "MARA"]);
    assert!(
        show.contains("4c   in-progress") && show.contains("baton run verify --queue q"),
        "{show}"
    );

    let o = t.verify();
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    let set_aside = format!(
        ".baton/runs/{}/set-aside/MARA/mara-data-review.md.attempt-1",
        t.runs()[0].file_name().unwrap().to_string_lossy()
    );
    assert!(
        out.contains("a previous attempt left a partial output (")
            && out.contains(&format!(
                "it is set aside at {set_aside} and the phase starts afresh"
            )),
        "{out}"
    );
    assert!(out.contains("1 already complete"), "{out}");
    // The rerun continued the same run; only the interrupted phase and the ones after it ran
    // again (each prompt is saved under its phase and attempt: none was sent twice).
    let runs = t.runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    let mara: Vec<String> = t
        .prompts(run)
        .into_iter()
        .filter(|p| p.starts_with("MARA"))
        .collect();
    assert_eq!(
        mara,
        [
            "MARA-1a-1.md",
            "MARA-1b-1.md",
            "MARA-4c-1.md",
            "MARA-4c-2.md",
            "MARA-4d-1.md",
            "MARA-5-1.md"
        ]
    );
    assert!(out.contains("continuing the unfinished run"), "{out}");
    let p = t.prompt(run, "MARA-4c-2");
    assert!(
        p.contains("A previous attempt was cut off after writing") && p.contains(&set_aside),
        "{p}"
    );
    let m = t.state("MARA");
    assert_eq!(m["status"], "complete");
    assert_eq!(m["phases"]["4c"]["partialOutput"]["attempt"], 1);
    assert!(
        m["phases"]["4c"]["partialOutput"]["lines"]
            .as_u64()
            .unwrap()
            > 0
    );
    // The rerun wrote the file afresh, once; what the cut-off attempt wrote is kept aside.
    let text4c = std::fs::read_to_string(&partial).unwrap();
    assert!(
        !text4c.contains("(partial: the session died here)")
            && !text4c.contains("continuing the partial output"),
        "{text4c}"
    );
    let headings: Vec<&str> = text4c.lines().filter(|l| l.starts_with("## ")).collect();
    let unique: std::collections::BTreeSet<&&str> = headings.iter().collect();
    assert_eq!(
        headings.len(),
        unique.len(),
        "a section written twice: {text4c}"
    );
    let aside = std::fs::read_to_string(t.p.path().join(&set_aside)).unwrap();
    assert!(
        aside.contains("(partial: the session died here)"),
        "{aside}"
    );
}

#[test]
fn an_agent_crash_fails_the_item_and_a_rerun_resumes_at_that_phase() {
    let t = setup("[verify]\n\"BMNR/1b\" = [\"crash\", \"ok\"]\n");
    t.p.ok(&["queue", "add", "q", "BMNR", "MARA"]);
    let o = t.verify();
    assert_exit(&o, 1);
    assert!(
        text(&o).contains("BMNR failed: phase 1b: exited with code 3"),
        "{}",
        text(&o)
    );
    assert_eq!(t.state("MARA")["status"], "complete", "the queue goes on");
    // A state write a killed baton cut short (no pid is that high) is removed by the next run.
    let cut_short = t.item_dir("BMNR").join(".baton-tmp-99999999-Ab12Cd");
    std::fs::write(&cut_short, "{\"status\":").unwrap();
    let o = t.verify();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("note: removed .baton/queues/q/items/BMNR/.baton-tmp-99999999-Ab12Cd"),
        "{}",
        text(&o)
    );
    assert!(!cut_short.exists());
    let runs = t.runs();
    assert_eq!(t.prompts(&runs[1])[0], "BMNR-1b-2.md");
    assert!(
        !t.prompts(&runs[1])
            .iter()
            .any(|p| p.contains("-1a-") || p.starts_with("MARA"))
    );
    assert!(
        t.prompt(&runs[1], "BMNR-1b-2")
            .contains("A previous attempt was cut off after writing")
    );
    // The resumed item's state knows MARA was done before it, and nothing is left after it.
    let b = t.state("BMNR");
    assert_eq!(b["completed"], serde_json::json!(["MARA"]));
    assert_eq!(b["queue"]["next"], serde_json::json!([]));
}

#[test]
fn the_orchestrator_rotates_at_the_threshold_and_never_carries_an_item_into_the_next() {
    let t = setup("");
    std::fs::write(
        t.p.path().join("baton.toml"),
        "[verify]\nsystem_overhead = 10000\nmessage_tokens = 10000\nrotation_threshold = 35000\n",
    )
    .unwrap();
    t.p.ok(&["queue", "add", "q", "BMNR", "MARA"]);
    let o = t.verify();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("2 rotations"), "{}", text(&o));
    let run = &t.runs()[0];
    let rot: Vec<Value> = t
        .events(run)
        .into_iter()
        .filter(|e| e["event"] == "rotated")
        .collect();
    // Each phase adds >= 10000: after 1a ~20K, 1b ~31K, 4c ~41K > 35K: one rotation per item,
    // before 4d; after it ~11K, 4d ~22K, 5 ~32K.
    assert_eq!(rot.len(), 2, "{rot:?}");
    for (e, item) in rot.iter().zip(["BMNR", "MARA"]) {
        assert_eq!(e["item"], item);
        assert_eq!(e["after_phase"], "4c");
        assert_eq!(e["next_phase"], "4d");
        assert!(e["estimate"].as_u64().unwrap() > 35000);
        assert!(
            e["reason"]
                .as_str()
                .unwrap()
                .contains("> rotation threshold 35000"),
            "{e}"
        );
        // The next phase's context is the overhead + the state file, nothing else.
        let s = t.snap(&format!("{item}-4d-1"));
        assert_eq!(s["rotations"], 1);
        assert_eq!(s["contextEstimate"]["totalEstimate"], e["reset_to"]);
        assert_eq!(
            s["contextEstimate"]["conversationTokens"].as_u64().unwrap(),
            e["state_tokens"].as_u64().unwrap()
        );
        assert!(e["reset_to"].as_u64().unwrap() < 10000 + 3000, "{e}");
        assert_complete_phase(&s, "4c");
    }
    // Between items the context starts afresh: MARA's first phase starts where BMNR's did,
    // and nothing of BMNR is in any MARA prompt.
    let b = t.snap("BMNR-1a-1")["contextEstimate"]["totalEstimate"]
        .as_u64()
        .unwrap();
    let m = t.snap("MARA-1a-1")["contextEstimate"]["totalEstimate"]
        .as_u64()
        .unwrap();
    assert!(m.abs_diff(b) < 200, "{b} vs {m}");
    let last_b = t.state("BMNR")["contextEstimate"]["totalEstimate"]
        .as_u64()
        .unwrap();
    assert!(m + 10000 < last_b, "{m} vs {last_b}");
    for p in t.prompts(run).iter().filter(|p| p.starts_with("MARA")) {
        let text = t.prompt(run, p.trim_end_matches(".md"));
        assert!(!text.to_lowercase().contains("bmnr"), "{p}: {text}");
    }
}

#[test]
fn a_state_file_names_at_most_twenty_items_on_each_side_and_counts_the_rest() {
    let t = setup("");
    std::fs::write(
        t.p.path().join(".baton/workflows/verify.toml"),
        "name = \"verify\"\n[[phase]]\nid = \"1\"\nagent = \"Checker\"\noutput = \"{item}.md\"\ntask = \"check\"\n",
    )
    .unwrap();
    let ids: Vec<String> = (0..50).map(|i| format!("ITEM{i:03}")).collect();
    let mut add = vec!["queue", "add", "q"];
    add.extend(ids.iter().map(String::as_str));
    t.p.ok(&add);
    let o = t.verify();
    assert!(o.status.success(), "{}", text(&o));
    let names = |r: std::ops::Range<usize>| Value::from(ids[r].to_vec());
    // ITEM020 started with 20 complete (all named) and 29 to do: 20 named, 9 more.
    let s = t.state("ITEM020");
    assert_eq!(s["completed"], names(0..20));
    assert_eq!(s["completedMore"], Value::Null);
    assert_eq!(s["queue"]["next"], names(21..41));
    assert_eq!(s["queue"]["more"], 9);
    // ITEM029: the latest 20 of 29 complete, 9 before them; the 20 after it, no more.
    let s = t.state("ITEM029");
    assert_eq!(s["completed"], names(9..29));
    assert_eq!(s["completedMore"], 9);
    assert_eq!(s["queue"]["next"], names(30..50));
    assert_eq!(s["queue"]["more"], Value::Null);
}

#[test]
fn a_queue_is_added_and_shown() {
    let p = Test::new()
        .args(["queue", "add", "q", "BMNR", "MARA"])
        .stdout("queue q: added BMNR, MARA (2 items now)\nrun it: baton run verify --queue q\n")
        .run()
        .proj();
    p.test()
        .args(["queue", "show", "q"])
        .stdout(
            "queue q: 2 items — 0 complete, 0 failed, 0 in progress, 2 pending\n  \
             BMNR         pending\n  \
             MARA         pending\n\
             next: 2 pending — start with: baton run verify --queue q\n",
        )
        .run();
    p.test()
        .args(["queue", "show", "q", "--json"])
        .stdout_json(serde_json::json!({
            "items": [
                {"item": "BMNR", "phases": 0, "phases_done": 0, "status": "pending"},
                {"item": "MARA", "phases": 0, "phases_done": 0, "status": "pending"},
            ],
            "queue": {
                "complete": 0, "failed": 0, "in_progress": 0, "items": 2, "name": "q",
                "next": "2 pending — start with: baton run verify --queue q", "pending": 2,
            },
        }))
        .run();
}

#[test]
fn bad_input_gets_clear_errors_and_changes_nothing() {
    let t = setup("");
    t.p.ok(&["queue", "add", "q", "BMNR", "MARA"]);
    let qf = t.p.path().join(".baton/queues/q/queue.json");
    let before = std::fs::read(&qf).unwrap();
    t.p.test()
        .args(["queue", "add", "q", "XXI", "MARA"])
        .stderr(
            "error: item `MARA` is already in queue `q`\n  \
             hint: nothing was added; see the queue with `baton queue show q`\n",
        )
        .status(3)
        .run();
    assert_eq!(std::fs::read(&qf).unwrap(), before, "all or nothing");
    t.p.test()
        .args(["queue", "add", "q", "../etc"])
        .stderr(
            "error: `../etc` is not an item id (letters, digits, `.`, `-`, `_`; at most 64)\n  \
             hint: items are ids like BMNR or 2026-q1.report\n",
        )
        .status(2)
        .run();
    t.p.test()
        .args(["queue", "add", "Bad Name", "X"])
        .stderr(
            "error: `Bad Name` is not a queue name (lowercase letters, digits, `-`, `_`; at most 64)\n  \
             hint: e.g. baton queue add dat-q1 BMNR MARA\n",
        )
        .status(2)
        .run();
    let no_queue =
        "error: no queue `nope`\n  hint: queues: q; or create it: baton queue add nope ITEM…\n";
    t.p.test()
        .args(["queue", "show", "nope"])
        .stderr(no_queue)
        .status(4)
        .run();
    t.p.test()
        .args(["run", "verify", "--queue", "nope", "--agent", "sim"])
        .stderr(no_queue)
        .status(4)
        .run();
    t.p.test()
        .args(["run", "verify", "--agent", "sim"])
        .stderr_contains("the following required arguments were not provided:\n  --queue <NAME>")
        .status(2)
        .run();
    t.p.test()
        .args(["state", "show", "ZZZ"])
        .stderr(
            "error: no queue holds item `ZZZ`\n  \
             hint: add it: baton queue add NAME ITEM (see the queues: baton queue list)\n",
        )
        .status(4)
        .run();

    let wf = t.p.path().join(".baton/workflows/verify.toml");
    std::fs::write(&wf, FOUR.replace("inputs = [\"1a\"]", "inputs = [\"9z\"]")).unwrap();
    let o = t.verify();
    assert_exit(&o, 5);
    let e = text(&o);
    assert!(
        e.contains("verify.toml line 8") && e.contains("`9z`"),
        "{e}"
    );
    std::fs::write(
        &wf,
        FOUR.replace("task = \"ground truth\"", "inputs = [\"5\"]"),
    )
    .unwrap();
    let e = text(&t.verify());
    assert!(
        e.contains("verify.toml line 3") && e.contains("dependency cycle: 1a → 5"),
        "{e}"
    );
    assert!(
        !t.p.path().join(".baton/runs").exists(),
        "no run was started"
    );
    assert!(!t.item_dir("BMNR").exists());
    let w = t.p.ok(&["workflow", "show", "verify"]);
    assert!(w.contains("9z") || w.contains("inputs = [\"5\"]"));
}

#[test]
fn an_answer_for_another_item_does_not_pass_the_phase() {
    let t = setup("[verify]\n\"BMNR/1a\" = [\"wrongid\"]\n");
    t.p.ok(&["queue", "add", "q", "BMNR"]);
    let o = t.verify();
    assert_exit(&o, 1);
    let b = t.state("BMNR");
    assert_eq!(b["status"], "failed");
    assert_eq!(b["phases"]["1a"]["status"], "failed");
    let why = b["phases"]["1a"]["error"].as_str().unwrap();
    assert!(
        why.contains("names another output file") && why.contains("bmnr-ground-truth.md"),
        "{why}"
    );
    let run = &t.runs()[0];
    let finished: Vec<Value> = t
        .events(run)
        .into_iter()
        .filter(|e| e["event"] == "phase_finished")
        .collect();
    assert_eq!(
        finished.len(),
        1,
        "a wrong answer is no format error: no retry"
    );
    assert_eq!(finished[0]["subject"]["kind"], "item");
    assert_eq!(finished[0]["outcome"]["judged"], "broken");
}

#[test]
fn a_rate_limited_call_is_waited_out_and_the_run_streams_json_events() {
    let t = setup("[verify]\n\"1a\" = [\"ratelimit\"]\n");
    crate::util::no_backoff(t.p.path(), "verify");
    t.p.ok(&["queue", "add", "q", "BMNR"]);
    let o = t.run(&["run", "verify", "--queue", "q", "--agent", "sim", "--json"]);
    assert_exit(&o, 0);
    let lines: Vec<Value> = crate::util::json_lines(&o.stdout);
    let kinds: Vec<&str> = lines.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"run_started"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"run_finished"), "{kinds:?}");
    for k in [
        "phase_started",
        "phase_retrying",
        "phase_finished",
        "subject_finished",
    ] {
        assert!(kinds.contains(&k), "{k} missing: {kinds:?}");
    }
    let retry = lines
        .iter()
        .find(|e| e["event"] == "phase_retrying")
        .unwrap();
    assert_eq!(
        retry["subject"],
        serde_json::json!({"kind": "item", "id": "BMNR"})
    );
    assert_eq!(retry["phase"], "1a");
    // The item's end in the stream says what the journal says (it once said "complete").
    let ended = lines
        .iter()
        .find(|e| e["event"] == "subject_finished")
        .unwrap();
    assert_eq!(ended["result"], "done", "{ended}");
    let journaled = t
        .events(&t.runs()[0])
        .into_iter()
        .find(|e| e["event"] == "subject_finished")
        .unwrap();
    assert_eq!(journaled["result"], "done", "{journaled}");
    assert_eq!(lines.last().unwrap()["summary"]["report"]["done"], 1);
    let st = t.state("BMNR");
    assert_eq!(st["status"], "complete");
    assert_eq!(st["phases"]["1a"]["attempts"], 1, "the wait is no attempt");
}

/// Kill the orchestrator right after each journal event of a run in turn (a crash between the
/// journal and the state file included), rerun the same command, and check the queue ends as
/// an uninterrupted run does, with no finished sub-agent call made twice.
#[test]
fn a_crash_at_every_event_boundary_repeats_no_finished_call() {
    let clean = setup("");
    clean.p.ok(&["queue", "add", "q", "BMNR", "MARA"]);
    assert_eq!(clean.verify().status.code(), Some(0));
    let run = &clean.runs()[0];
    let total = clean.events(run).len();
    // (finished calls, the phases that passed): every call key once; the passes as in a
    // clean run. A call killed before it finished is made again as the next attempt.
    let calls = |t: &T| -> (Vec<String>, Vec<String>) {
        let finished: Vec<Value> = t
            .runs()
            .iter()
            .flat_map(|r| t.events(r))
            .filter(|e| e["event"] == "phase_finished")
            .collect();
        let mut keys: Vec<String> = finished
            .iter()
            .map(|e| format!("{}-{}-{}", e["subject"]["id"], e["phase"], e["attempt"]))
            .collect();
        let all = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), all, "a finished call was made twice: {keys:?}");
        let mut passed: Vec<String> = finished
            .iter()
            .filter(|e| e["outcome"]["ok"] == true)
            .map(|e| format!("{}-{}", e["subject"]["id"], e["phase"]))
            .collect();
        passed.sort();
        (keys, passed)
    };
    let (_, want) = calls(&clean);
    assert!(total > 20, "{total}");
    for n in 2..total {
        let t = setup("");
        t.p.ok(&["queue", "add", "q", "BMNR", "MARA"]);
        let o = t.run_env(
            &["run", "verify", "--queue", "q", "--agent", "sim"],
            &[("BATON_CRASH_AFTER_EVENT", &n.to_string())],
        );
        assert_eq!(o.status.code(), None, "killed after event {n}");
        let o = t.verify();
        assert_eq!(
            o.status.code(),
            Some(0),
            "rerun after event {n}: {}",
            text(&o)
        );
        for item in ["BMNR", "MARA"] {
            assert_eq!(
                t.state(item)["status"],
                "complete",
                "{item} after event {n}"
            );
        }
        assert_eq!(
            calls(&t).1,
            want,
            "passed phases after a crash at event {n}"
        );
    }
}

/// A spent usage limit in a verify run: the run pauses (exit 7), the notifier hears why and
/// the command that continues, and that command finishes the item with no attempt spent.
/// With `--wait-for-quota` the limit is waited out by itself; the notifier hears the item
/// that failed (with its reason) and the run's end.
#[test]
fn a_verify_run_tells_the_notifier_and_waits_out_a_spent_limit() {
    let t = setup("[verify]\n\"1a\" = [\"quota\"]\n");
    crate::util::no_backoff(t.p.path(), "verify");
    std::fs::write(t.p.path().join("baton.toml"), crate::util::NOTIFY_TO_FILE).unwrap();
    t.p.ok(&["queue", "add", "q", "BMNR"]);
    let o = t.verify();
    assert_exit(&o, 7);
    let err = text(&o);
    assert!(err.contains("hit your usage limit"), "{err}");
    let heard = crate::util::heard(t.p.path());
    let names: Vec<&str> = heard.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["run_paused"], "{heard:?}");
    let run = t.runs().pop().unwrap();
    let id = run.file_name().unwrap().to_str().unwrap().to_string();
    assert_eq!(heard[0]["resume"], format!("baton run --resume {id}"));
    assert!(
        heard[0]["reason"].as_str().unwrap().contains("usage limit"),
        "{heard:?}"
    );
    let attention = std::fs::read_to_string(t.p.path().join(".baton/ATTENTION.md")).unwrap();
    assert!(
        attention.contains(&format!("baton run --resume {id}")),
        "{attention}"
    );
    let o = t.run(&["run", "--resume", &id]);
    assert_exit(&o, 0);
    let finished: Vec<Value> = t
        .events(&run)
        .into_iter()
        .filter(|e| e["event"] == "phase_finished" && e["phase"] == "1a")
        .collect();
    assert_eq!(finished.len(), 1, "{finished:?}");
    assert_eq!(finished[0]["attempt"], 1, "the spent limit was no attempt");
    assert!(
        !t.p.path().join(".baton/ATTENTION.md").exists(),
        "nothing waits once the run ended"
    );

    // --wait-for-quota: waited out in the same run; a failing item and the end are told.
    let t = setup("[verify]\n\"1a\" = [\"quota\"]\n\"1b\" = [\"nooutput\"]\n");
    crate::util::no_backoff(t.p.path(), "verify");
    std::fs::write(t.p.path().join("baton.toml"), crate::util::NOTIFY_TO_FILE).unwrap();
    t.p.ok(&["queue", "add", "q", "BMNR"]);
    let o = t.run(&[
        "run",
        "verify",
        "--queue",
        "q",
        "--agent",
        "sim",
        "--wait-for-quota",
    ]);
    assert_exit(&o, 1);
    let err = text(&o);
    assert!(
        err.contains("usage limit is spent (no reset time in its message): trying again at"),
        "{err}"
    );
    let heard = crate::util::heard(t.p.path());
    let names: Vec<&str> = heard.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["item_failed", "run_ended"], "{heard:?}");
    assert_eq!(heard[0]["subject"]["id"], "BMNR");
    assert!(
        heard[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("item BMNR failed: "),
        "{heard:?}"
    );
    assert_eq!(
        (heard[1]["done"].as_u64(), heard[1]["failed"].as_u64()),
        (Some(0), Some(1))
    );
}
