//! The mask log and `baton gain`: every output masked, wherever it was masked (a hook, `baton
//! mask` run by a person or routed by a hook, the MCP tool), is one record; `gain` totals them.

use serde_json::{Value, json};

use crate::util::Proj;

/// The agents' own markers, removed so the test's environment cannot name an agent.
const AGENT_MARKERS: [&str; 5] = [
    "CLAUDECODE",
    "CODEX_THREAD_ID",
    "GEMINI_CLI",
    "BATON_RUN_DIR",
    "BATON_RUN_AGENT",
];

fn cmd(p: &Proj, args: &[&str]) -> std::process::Command {
    let mut c = p.cmd(args);
    for k in AGENT_MARKERS {
        c.env_remove(k);
    }
    c
}

fn log(p: &Proj) -> Vec<Value> {
    std::fs::read_to_string(p.path().join(".baton/masks.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A run that started and has not finished (its journal holds only `run_started`): its id
/// and folder.
fn unfinished_run(p: &Proj) -> (&'static str, std::path::PathBuf) {
    let id = "20990101T000000-abcdef";
    let run = p.path().join(".baton/runs").join(id);
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("events.jsonl"),
        format!("{{\"v\":2,\"seq\":1,\"ts\":\"2099-01-01T00:00:00Z\",\"event\":\"run_started\",\"run_id\":\"{id}\",\"workflow\":\"epic-execute\",\"subjects\":[\"1\"],\"options\":{{}}}}\n"),
    )
    .unwrap();
    (id, run)
}

fn gain(p: &Proj, args: &[&str]) -> Value {
    let mut all = vec!["gain", "--json"];
    all.extend_from_slice(args);
    let o = cmd(p, &all).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn o200k(text: &str) -> u64 {
    baton_context::tokens::Encoding::O200kBase.count(text) as u64
}

/// What the agent read instead of an output is estimated (never the vocabulary's load for
/// a summary), within a tenth of the exact count.
fn shown_tokens(rec: &Value, text: &str) -> u64 {
    let logged = rec["masked_tokens"].as_u64().unwrap();
    // (What was shown may differ from `text` in a line break around it.)
    let guess = baton_context::tokens::estimate(text) as u64;
    assert!(logged.abs_diff(guess) <= 2, "{rec}: estimate {guess}");
    let exact = o200k(text) as f64;
    assert!(
        (logged as f64 / exact - 1.0).abs() < 0.1,
        "{logged} vs {exact}"
    );
    logged
}

#[test]
fn every_mask_is_logged_wherever_it_happened_and_gain_totals_them() {
    let p = Proj::new();
    assert_eq!(gain(&p, &[])["count"], 0);

    // A person's `baton mask`.
    let o = cmd(&p, &["mask", "--", "seq", "1", "5000"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let shown = String::from_utf8(o.stdout).unwrap();
    // A command codex's pre-tool hook routed, in a codex session.
    let o = cmd(&p, &["mask", "--routed", "--", "bash", "-c", "seq 1 6000"])
        .env("CODEX_THREAD_ID", "thread-7")
        .output()
        .unwrap();
    assert!(o.status.success());
    // Claude's post-tool hook on a large Bash output.
    let big: String = (1..4000)
        .map(|i| format!("test case_{i} ... ok\n"))
        .collect();
    let payload = json!({
        "session_id": "claude-s1", "tool_name": "Bash",
        "tool_input": {"command": "cargo test --all"},
        "tool_response": {"stdout": big, "stderr": "", "interrupted": false, "isImage": false}
    });
    let o = p.run(
        &["hook", "claude", "post-tool-use"],
        Some(payload.to_string().as_bytes()),
    );
    let answer: Value = serde_json::from_slice(&o.stdout).unwrap();
    let replaced = answer["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    // A small output is not a mask: nothing is logged for it.
    let small = json!({
        "session_id": "claude-s1", "tool_name": "Bash", "tool_input": {"command": "ls"},
        "tool_response": {"stdout": "a\nb\n", "stderr": "", "interrupted": false, "isImage": false}
    });
    let o = p.run(
        &["hook", "claude", "post-tool-use"],
        Some(small.to_string().as_bytes()),
    );
    assert!(o.stdout.is_empty());

    let recs = log(&p);
    assert_eq!(recs.len(), 3, "{recs:?}");
    let by_source = |s: &str| recs.iter().find(|r| r["source"] == s).unwrap().clone();
    let cli = by_source("cli");
    assert_eq!(cli["command"], "seq");
    assert!(cli.get("agent").is_none());
    shown_tokens(&cli, &shown);
    let routed = by_source("pre-tool-use");
    assert_eq!(routed["agent"], "codex");
    assert_eq!(routed["session"], "thread-7");
    assert_eq!(routed["command"], "seq");
    let hook = by_source("post-tool-use");
    assert_eq!(hook["agent"], "claude");
    assert_eq!(hook["session"], "claude-s1");
    // Only the program and its subcommand: `--all` is an argument.
    assert_eq!(hook["command"], "cargo test");
    shown_tokens(&hook, &replaced);
    // Far over the threshold: the estimate decides, and the record says so.
    assert_eq!(hook["tokens_estimated"], true, "{hook}");
    let (logged, exact) = (hook["tokens"].as_u64().unwrap() as f64, o200k(&big) as f64);
    assert!((logged / exact - 1.0).abs() < 0.15, "{logged} vs {exact}");
    for r in &recs {
        let scratch = std::path::Path::new(r["scratch"].as_str().unwrap());
        assert!(scratch.starts_with(p.path().join(".baton/scratch")), "{r}");
        assert!(scratch.is_file(), "{r}");
    }

    let g = gain(&p, &[]);
    let saved: u64 = recs
        .iter()
        .map(|r| r["tokens"].as_u64().unwrap() - r["masked_tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(g["count"], 3);
    assert_eq!(g["saved_tokens"], saved);
    assert_eq!(g["masked"].as_array().unwrap().len(), 3);
    let keys = |k: &str| -> Vec<String> {
        let mut v: Vec<String> = g[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["key"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(keys("by_source"), ["cli", "post-tool-use", "pre-tool-use"]);
    assert_eq!(keys("by_agent"), ["(unknown)", "claude", "codex"]);
    assert_eq!(keys("by_command"), ["cargo test", "seq"]);
    assert_eq!(g["by_day"].as_array().unwrap().len(), 1);

    // Filters and history.
    assert_eq!(gain(&p, &["--agent", "codex"])["count"], 1);
    assert_eq!(gain(&p, &["--session", "claude-s1"])["count"], 1);
    assert_eq!(gain(&p, &["--since", "2099-01-01"])["count"], 0);
    assert_eq!(gain(&p, &["--since", "1h"])["count"], 3);
    let latest = gain(&p, &["--history", "1"]);
    assert_eq!(
        latest["count"], 3,
        "history limits the list, not the totals"
    );
    assert_eq!(latest["masked"].as_array().unwrap().len(), 1);
    assert_eq!(latest["masked"][0]["source"], "post-tool-use");

    // For people: the total first, then the tables and the chart.
    let human = String::from_utf8(
        cmd(&p, &["gain", "--history", "2"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let first = human.lines().next().unwrap();
    assert!(
        first.starts_with(&format!("{} tokens saved", thousands(saved))),
        "{human}"
    );
    assert!(first.contains("3 outputs masked"), "{human}");
    for part in ["by command", "by agent", "by day", "latest 2", "█"] {
        assert!(human.contains(part), "{part}: {human}");
    }
}

fn thousands(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn the_mcp_mask_tool_logs_its_masks() {
    let p = Proj::new();
    let answers = crate::mcp::rpc(
        &p,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mask", "arguments": {"command": ["seq", "1", "5000"]}}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "mask", "arguments": {"command": ["echo", "small"]}}}),
        ],
    );
    let text = answers[&1]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("\"masked\": true"), "{text}");
    let recs = log(&p);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0]["source"], "mcp");
    assert_eq!(recs[0]["command"], "seq");
    shown_tokens(&recs[0], text);
}

#[test]
fn bad_gain_input_is_refused_and_a_torn_log_line_is_counted() {
    let p = Proj::new();
    let o = cmd(&p, &["gain", "--since", "last tuesday"])
        .output()
        .unwrap();
    crate::util::assert_exit(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--since") && err.contains("7d"), "{err}");
    let o = cmd(&p, &["mask", "--", "seq", "1", "5000"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let log = p.path().join(".baton/masks.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("{\"v\":2,\"ts\":\"2026");
    std::fs::write(&log, text).unwrap();
    let g = gain(&p, &[]);
    assert_eq!(g["count"], 1);
    assert_eq!(g["unreadable_lines"], 1);
    let human = String::from_utf8(cmd(&p, &["gain"]).output().unwrap().stdout).unwrap();
    assert!(
        human.contains("1 lines of the mask log could not be read"),
        "{human}"
    );
}

#[test]
fn status_shows_what_masking_saved_for_each_run_and_the_project() {
    let p = Proj::new();
    let (id, run) = unfinished_run(&p);
    // One output masked by an agent of the run, one outside it.
    let o = cmd(&p, &["mask", "--", "seq", "1", "5000"])
        .env("BATON_RUN_DIR", &run)
        .env("BATON_RUN_PHASE", "1-1.1-dev-1")
        .env("BATON_RUN_AGENT", "codex")
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = cmd(&p, &["mask", "--", "seq", "1", "9000"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let recs = log(&p);
    assert_eq!(recs[0]["run"], id);
    assert_eq!(recs[0]["agent"], "codex");
    let saved = |r: &Value| r["tokens"].as_u64().unwrap() - r["masked_tokens"].as_u64().unwrap();
    let o = cmd(&p, &["status", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"][0]["masked"], 1);
    assert_eq!(v["runs"][0]["saved_tokens"], saved(&recs[0]));
    assert_eq!(v["masking"]["count"], 2);
    assert_eq!(
        v["masking"]["saved_tokens"],
        saved(&recs[0]) + saved(&recs[1])
    );
    let human = String::from_utf8(cmd(&p, &["status"]).output().unwrap().stdout).unwrap();
    assert!(
        human.contains(&format!(
            "    masking saved {} tokens in 1 outputs",
            saved(&recs[0])
        )),
        "{human}"
    );
    assert!(human.contains("in 2 outputs"), "{human}");
    assert_eq!(gain(&p, &["--run", id])["count"], 1);
}

#[test]
fn a_mask_log_that_cannot_be_read_is_said_and_gc_removes_nothing_on_a_guess() {
    let p = Proj::new();
    // A run that has not finished: its scratch files are still its own.
    let (_, run) = unfinished_run(&p);
    let o = cmd(&p, &["mask", "--", "seq", "1", "5000"])
        .env("BATON_RUN_DIR", &run)
        .output()
        .unwrap();
    assert!(o.status.success());
    let scratch = log(&p)[0]["scratch"].as_str().unwrap().to_string();
    let scratch = p.path().join(scratch);
    assert!(scratch.is_file(), "{}", scratch.display());
    // An hour old: past gc's ten-minute grace, so only the run's record of it keeps it.
    std::fs::File::options()
        .write(true)
        .open(&scratch)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
    // The log replaced by a link (a store file baton never reads through).
    let log_file = p.path().join(".baton/masks.jsonl");
    let outside = tempfile::tempdir().unwrap();
    std::fs::rename(&log_file, outside.path().join("masks.jsonl")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("masks.jsonl"), &log_file).unwrap();

    let g = gain(&p, &[]);
    assert_eq!(g["count"], 0);
    let files = g["unreadable_files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{g}");
    assert!(
        files[0]
            .as_str()
            .unwrap()
            .contains("masks.jsonl is a symbolic link"),
        "{g}"
    );
    let human = String::from_utf8(cmd(&p, &["gain"]).output().unwrap().stdout).unwrap();
    assert!(
        human.contains("this mask log could not be read and its records are left out"),
        "{human}"
    );

    let o = cmd(&p, &["gc", "--older-than", "0s", "--max-mb", "0"])
        .output()
        .unwrap();
    crate::util::assert_exit(&o, 3);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the scratch files unfinished runs use are not known"),
        "{err}"
    );
    assert!(scratch.is_file(), "gc removed a scratch file on a guess");
}
