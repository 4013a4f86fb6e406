//! The context each phase's agent really held: recorded with every phase, shown live, in
//! `status` and in the report, and over budget when it passed the phase's context budget.

use serde_json::Value;

use crate::util::{EPIC_SIM, run_in, text};

fn journal(dir: &std::path::Path) -> Vec<Value> {
    let runs = dir.join(".baton/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::read_to_string(run.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_phase_whose_agent_held_more_than_its_budget_is_said_to_be_over_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    // Story 1.2's dev reads "a large file": one request of 50,000 tokens.
    crate::util::demo_repo(&dir, "[story.\"1.2\"]\ndev = [\"bigcontext\"]\n");
    let out = run_in(&dir, &EPIC_SIM, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let big = baton_agent::sim::BIG_CONTEXT;
    let mut over = vec![];
    for e in journal(&dir)
        .iter()
        .filter(|e| e["event"] == "phase_finished")
    {
        let o = &e["outcome"];
        let peak = o["context_peak_tokens"]
            .as_u64()
            .expect("every sim phase reports it");
        let budget = o["budget"].as_u64().unwrap();
        // The simulated agent has no floor of its own.
        assert_eq!(o["context_budget"].as_u64(), Some(budget), "{e}");
        assert_eq!(
            o["over_budget"].as_bool().unwrap_or(false),
            peak > budget,
            "{e}"
        );
        if o["over_budget"] == true {
            over.push((e["subject"]["id"].clone(), e["phase"].clone(), peak));
        }
    }
    assert_eq!(over, vec![("1.2".into(), "dev".into(), big)]);
    // Live: the run's own lines say it.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("context {big}/15000 OVER BUDGET")),
        "{stderr}"
    );
    // status, for machines and for people.
    let o = run_in(&dir, &["status", "--json"], &[]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["phases_over_budget"], 1);
    assert_eq!(run["context_peak"]["tokens"], big);
    assert_eq!(run["context_peak"]["budget"], 15000);
    assert_eq!(run["context_peak"]["phase"], "dev");
    let o = run_in(&dir, &["status"], &[]);
    let human = String::from_utf8_lossy(&o.stdout);
    assert!(
        human.contains(&format!(
            "largest context: {big} of 15000 tokens (story 1.2 dev); 1 phases over their context budget"
        )),
        "{human}"
    );
    // The report's phase table.
    let o = run_in(&dir, &["report"], &[]);
    assert!(o.status.success(), "{}", text(&o));
    let run_dir = std::fs::read_dir(dir.join(".baton/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    // (The report escapes `/` as HTML does not require but allows.)
    assert!(
        html.contains(&format!(" overtxt\" title=\"the agent&#x27;s largest request held {big} tokens: 333 % of the phase&#x27;s context budget of 15000")),
        "{html}"
    );
    assert!(
        html.contains(&format!(">{big}&#x2f;15000</td>")),
        "no context cell"
    );
    assert_eq!(
        html.matches("overtxt\"").count(),
        1,
        "one phase over budget"
    );
}
