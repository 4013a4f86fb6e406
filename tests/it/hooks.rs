//! `baton hook`: the documented input JSON of each event, and the exact answer (or none).

use serde_json::{Value, json};

use crate::util::{Proj, Test};

/// Claude Code's PostToolUse input for a Bash call (the documented fields).
fn bash_event(command: &str, stdout: &str, stderr: &str) -> Vec<u8> {
    json!({
        "session_id": "abc123",
        "transcript_path": "/home/u/.claude/projects/p/abc123.jsonl",
        "cwd": "/home/u/p",
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run it"},
        "tool_response": {"stdout": stdout, "stderr": stderr, "interrupted": false, "isImage": false},
        "tool_use_id": "toolu_01"
    })
    .to_string()
    .into_bytes()
}

fn long_log(lines: usize) -> String {
    (0..lines)
        .map(|i| format!("compiling unit {i} of the build\n"))
        .collect()
}

fn cargo_failure() -> String {
    let mut s = String::from("\nrunning 600 tests\n");
    for i in 0..600 {
        let r = if i == 7 { "FAILED" } else { "ok" };
        s.push_str(&format!("test store::tests::case_{i} ... {r}\n"));
    }
    s.push_str("\nfailures:\n\n---- store::tests::case_7 stdout ----\n");
    s.push_str("thread 'store::tests::case_7' panicked at src/store/mod.rs:10:5:\n");
    s.push_str("assertion `left == right` failed\n  left: 1\n right: 2\n\n");
    s.push_str("failures:\n    store::tests::case_7\n\n");
    s.push_str("test result: FAILED. 599 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.20s\n\n");
    s
}

#[test]
fn small_output_passes_with_no_answer() {
    Test::new()
        .args(["hook", "claude", "post-tool-use"])
        .stdin(bash_event("ls", "a\nb\n", ""))
        .run();
}

/// A token in a small output (`env`, a config file printed) is redacted: the answer is the
/// same text with the secret replaced, in each CLI's shape; the rest stays as it was.
#[test]
fn a_secret_in_a_small_output_is_redacted_in_each_clis_shape() {
    let env =
        "HOME=/home/u\nGITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\nSHELL=/bin/bash\n";
    let want = "HOME=/home/u\nGITHUB_TOKEN=[REDACTED]\nSHELL=/bin/bash\n";
    let ran = Test::new()
        .args(["hook", "claude", "post-tool-use"])
        .stdin(bash_event("env", env, ""))
        .any_stdout()
        .run();
    assert_eq!(
        ran.json(),
        json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {
            "stdout": want, "stderr": "", "interrupted": false, "isImage": false}}})
    );
    let codex = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "env"}, "tool_response": env})
    .to_string();
    let ran = Test::new()
        .args(["hook", "codex", "post-tool-use"])
        .stdin(codex)
        .any_stdout()
        .run();
    assert_eq!(ran.json(), json!({"decision": "block", "reason": want}));
    let gemini = json!({"hook_event_name": "AfterTool", "tool_name": "run_shell_command",
        "tool_input": {"command": "env"}, "tool_response": {"llmContent": env}})
    .to_string();
    let ran = Test::new()
        .args(["hook", "gemini", "post-tool-use"])
        .stdin(gemini)
        .any_stdout()
        .run();
    assert_eq!(ran.json(), json!({"decision": "deny", "reason": want}));
}

#[test]
fn large_output_is_replaced_in_the_bash_shape() {
    let ran = Test::new()
        .args(["hook", "claude", "post-tool-use"])
        .stdin(bash_event("make", &long_log(3000), "warning: x\n"))
        .any_stdout()
        .run();
    let v = ran.json();
    let out = &v["hookSpecificOutput"];
    assert_eq!(v.as_object().unwrap().len(), 1);
    assert_eq!(out["hookEventName"], "PostToolUse");
    let upd = out["updatedToolOutput"].as_object().unwrap();
    let mut keys: Vec<&str> = upd.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["interrupted", "isImage", "stderr", "stdout"]);
    assert_eq!(upd["interrupted"], false);
    assert_eq!(upd["isImage"], false);
    assert_eq!(upd["stderr"], "");
    let text = upd["stdout"].as_str().unwrap();
    assert!(text.len() < 9_500, "{}", text.len());
    let doc: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    assert_eq!(doc["masked"], true);
    // The scratch file holds the whole output, stderr after stdout.
    let shown = doc["full_output_path"].as_str().unwrap();
    let rel = shown
        .strip_prefix("[PROJECT]/")
        .expect("a scratch file in the project");
    let path = ran.path().join(rel);
    let kept = std::fs::read_to_string(path).unwrap();
    assert_eq!(kept, format!("{}\n[stderr]\nwarning: x\n", long_log(3000)));
}

#[test]
fn failing_tests_carry_the_counts_and_first_failure() {
    let ran = Test::new()
        .args(["hook", "claude", "post-tool-use", "--threshold", "500"])
        .stdin(bash_event("cargo test", &cargo_failure(), ""))
        .any_stdout()
        .run();
    let text = ran.json()["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("599 passed, 1 failed"), "{text}");
    assert!(text.contains("store::tests::case_7"), "{text}");
    assert!(text.contains("\"first_failure\""), "{text}");
}

#[test]
fn binary_output_is_masked_as_binary() {
    let bin: String = (0..20_000).map(|i| char::from((i % 32) as u8)).collect();
    let ran = Test::new()
        .args(["hook", "claude", "post-tool-use"])
        .stdin(bash_event("cat blob", &bin, ""))
        .any_stdout()
        .run();
    let text = ran.json()["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("\"binary\": true"), "{text}");
}

#[test]
fn bad_input_fails_open() {
    // Not JSON, a JSON that is not the event, an image: no answer, exit 0.
    Test::new()
        .args(["hook", "claude", "post-tool-use"])
        .stdin("{not json")
        .stderr_contains("hook input is not JSON")
        .run();
    Test::new()
        .args(["hook", "claude", "post-tool-use"])
        .stdin(r#"{"hook_event_name":"PostToolUse","tool_name":"Bash"}"#)
        .stderr_contains("no tool_response")
        .run();
    Test::new()
        .args(["hook", "claude", "post-tool-use"])
        .stdin(r#"[1,2]"#)
        .stderr_contains("not a JSON object")
        .run();
    let image = json!({"tool_name": "Bash", "tool_response":
        {"stdout": long_log(3000), "stderr": "", "interrupted": false, "isImage": true}});
    Test::new()
        .args(["hook", "claude", "post-tool-use"])
        .stdin(image.to_string())
        .run();
    // A broken baton.toml does not stop the agent either.
    Test::new()
        .write("baton.toml", "[nonsense\n")
        .args(["hook", "claude", "post-tool-use"])
        .stdin(bash_event("make", &long_log(3000), ""))
        .stderr_contains("baton.toml")
        .run();
}

#[test]
fn codex_and_gemini_get_their_replacement_fields() {
    let codex = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "turn_id": "t",
        "tool_input": {"command": "make"}, "tool_response": long_log(3000)});
    let v = Test::new()
        .args(["hook", "codex", "post-tool-use"])
        .stdin(codex.to_string())
        .any_stdout()
        .run()
        .json();
    assert_eq!(v["decision"], "block");
    assert!(v["reason"].as_str().unwrap().contains("full_output_path"));
    let gemini = json!({"hook_event_name": "AfterTool", "tool_name": "run_shell_command",
        "tool_input": {"command": "make"},
        "tool_response": {"llmContent": long_log(3000), "returnDisplay": "…"}});
    let v = Test::new()
        .args(["hook", "gemini", "post-tool-use"])
        .stdin(gemini.to_string())
        .any_stdout()
        .run()
        .json();
    assert_eq!(v["decision"], "deny");
    assert!(v["reason"].as_str().unwrap().contains("full_output_path"));
}

/// Codex 0.171's PreToolUse input for its shell tool.
fn codex_pre_tool_use(command: &str) -> String {
    json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "turn_id": "t", "cwd": "/p", "tool_input": {"command": command}})
    .to_string()
}

#[test]
fn codex_routes_a_test_run_through_baton_mask_and_nothing_else() {
    let v = Test::new()
        .args(["hook", "codex", "pre-tool-use"])
        .stdin(codex_pre_tool_use("cargo test -- --nocapture"))
        .any_stdout()
        .run()
        .json();
    // The only shape codex 0.171 takes a rewrite in: `allow` with the whole input.
    assert_eq!(
        v,
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": format!(
                "{} mask --routed -- bash -c 'cargo test -- --nocapture'",
                crate::util::bin().display()
            )}
        }})
    );
    for quiet in ["ls", "cat Cargo.toml", "baton mask -- cargo test"] {
        Test::new()
            .args(["hook", "codex", "pre-tool-use"])
            .stdin(codex_pre_tool_use(quiet))
            .run();
    }
    // The project's route replaces the default one; an empty one routes nothing.
    let p = Proj::new();
    p.write("baton.toml", "[mask]\nroute = []\n");
    p.test()
        .args(["hook", "codex", "pre-tool-use"])
        .stdin(codex_pre_tool_use("cargo test"))
        .run();
    // Claude and gemini get their whole output in their post-tool hooks: never rewritten.
    Test::new()
        .args(["hook", "claude", "pre-tool-use"])
        .stdin(codex_pre_tool_use("cargo test"))
        .run();
}

#[test]
fn session_start_injects_the_task_state_and_pre_compact_records_it() {
    let p = Proj::new();
    let start = r#"{"session_id":"s","transcript_path":"t","cwd":".","hook_event_name":"SessionStart","source":"compact"}"#;
    // No task yet: nothing to say.
    p.test()
        .args(["hook", "claude", "session-start"])
        .stdin(start)
        .run();
    p.test()
        .args(["task", "init", "Add login"])
        .any_stdout()
        .run();
    p.test()
        .args(["phase", "begin", "architect"])
        .any_stdout()
        .run();
    let v = p
        .test()
        .args(["hook", "claude", "session-start"])
        .stdin(start)
        .any_stdout()
        .run()
        .json();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(ctx.contains("task: add-login"), "{ctx}");
    assert!(ctx.contains("running: architect"), "{ctx}");
    assert!(ctx.contains("next: "), "{ctx}");
    p.test()
        .args(["hook", "claude", "pre-compact"])
        .stdin(r#"{"session_id":"s","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}"#)
        .run();
    let history = std::fs::read_to_string(p.store().join("context/history.md")).unwrap();
    assert!(
        history.contains("[add-login] COMPACT agent: claude trigger: auto"),
        "{history}"
    );
}

/// Claude Code's PostToolUse input for a Bash output it cut: the head in `stdout`, the whole
/// output in the file it names (`persistedOutputPath`, `persistedOutputSize`), as 2.1.197 sends it.
fn cut_bash_event(command: &str, head: &str, persisted: &std::path::Path, size: usize) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&bash_event(command, head, "")).unwrap();
    let r = &mut v["tool_response"];
    r["noOutputExpected"] = json!(false);
    r["persistedOutputPath"] = json!(persisted);
    r["persistedOutputSize"] = json!(size);
    v.to_string().into_bytes()
}

/// A 200 KB test run whose one failing test is the last line.
fn failing_last(lines: usize) -> String {
    let mut s: String = (0..lines)
        .map(|i| format!("test tests::case_{i:05} ... ok (padding padding padding)\n"))
        .collect();
    s.push_str("test tests::the_last_one ... FAILED\n");
    s
}

#[test]
fn claudes_cut_output_is_masked_from_its_full_copy() {
    let p = Proj::new();
    let full = failing_last(4000);
    assert!(full.len() > 200_000);
    let copy = p.path().join("claude-tool-results.txt");
    std::fs::write(&copy, &full).unwrap();
    let head = &full[..30_000];
    assert!(!head.contains("FAILED"));
    let ran = p
        .test()
        .args(["hook", "claude", "post-tool-use"])
        .stdin(cut_bash_event("cargo test", head, &copy, full.len()))
        .any_stdout()
        .run();
    let text = ran.json()["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    // The failure at the end, which the head lacks, reaches the model; so do both pointers.
    assert!(text.contains("tests::the_last_one"), "{text}");
    assert!(
        text.contains(
            "Claude Code's own copy of the full output: [PROJECT]/claude-tool-results.txt"
        ),
        "{text}"
    );
    let doc: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let rel = doc["full_output_path"].as_str().unwrap();
    let kept = std::fs::read_to_string(p.path().join(rel.strip_prefix("[PROJECT]/").unwrap()));
    assert_eq!(
        kept.unwrap(),
        full,
        "baton's scratch file holds the whole output"
    );
}

#[test]
fn a_persisted_path_that_is_not_the_output_is_not_read() {
    let p = Proj::new();
    let full = failing_last(4000);
    let head = &full[..30_000];
    // Another file (a secret, say), and a link to the real copy: neither is shown.
    let other = p.path().join("other.txt");
    std::fs::write(&other, "SECRET=hunter2\n".repeat(20_000)).unwrap();
    let real = p.path().join("real.txt");
    std::fs::write(&real, &full).unwrap();
    let link = p.path().join("link.txt");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    for path in [&other, &link, &p.path().join("missing.txt")] {
        let ran = p
            .test()
            .args(["hook", "claude", "post-tool-use"])
            .stdin(cut_bash_event("cargo test", head, path, full.len()))
            .any_stdout()
            .run();
        let text = ran.json()["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("the_last_one"), "{text}");
        assert!(!text.contains("own copy"), "{text}");
    }
}
