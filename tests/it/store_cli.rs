//! The task store through the real binary, command by command.

use crate::util::{Proj, Test, assert_manifest_is_replay};

fn new_task() -> Proj {
    let p = Proj::new();
    p.ok(&["task", "init", "Add Login Flow"]);
    p
}

#[test]
fn init_creates_the_store_layout_and_sets_the_current_task() {
    let p = Test::new()
        .args([
            "task",
            "init",
            "Add Login Flow",
            "--mode",
            "standard",
            "--workflow",
            "orchestrate",
        ])
        .stdout(
            "created task add-login-flow (standard mode, orchestrate workflow); it is now the current task\n  \
             [PROJECT]/docs/orchestrator/context/tasks/add-login-flow\n",
        )
        .run()
        .proj();
    let t = p.task_dir("add-login-flow");
    assert!(t.join("events.jsonl").is_file() && t.join("manifest.json").is_file());
    let m = p.manifest("add-login-flow");
    assert_eq!(m["name"], "add-login-flow");
    assert_eq!(m["status"], "running");
    assert_eq!(m["metrics"]["total_retries"], 0);
    assert_eq!(m["waves"]["execution"], serde_json::json!([]));
    let current = std::fs::read_to_string(p.store().join("context/current-task.md")).unwrap();
    assert!(current.contains("task: add-login-flow"));
    let hist = std::fs::read_to_string(p.store().join("context/history.md")).unwrap();
    assert!(
        hist.contains("[add-login-flow] INIT \"Add Login Flow\""),
        "{hist}"
    );
    assert!(p.store().join("memory/decisions.md").is_file());
    assert!(p.store().join("memory/patterns.md").is_file());
    // Every event carries a format version and a timestamp.
    let ev: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(t.join("events.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(ev["v"], 1);
    assert!(ev["ts"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn init_twice_and_bad_names_are_refused() {
    let p = new_task();
    p.test()
        .args(["task", "init", "add login flow"])
        .stderr(
            "error: task `add-login-flow` already exists\n  \
             hint: pick another name, or work on it with --task add-login-flow\n",
        )
        .status(3)
        .run();
    for bad in ["../escape", "a/b", "/etc/passwd"] {
        p.test()
            .args(["task", "init", bad])
            .stderr(&format!(
                "error: task name `{bad}` must not contain `/`, `\\` or `..`: \
                 it becomes a file name inside the store\n"
            ))
            .status(2)
            .run();
    }
    p.test()
        .args(["task", "init", "!!!"])
        .stderr("error: task name `!!!` has no letters or digits to make a slug from\n")
        .status(2)
        .run();
    // argv cannot carry a NUL byte; the command language on stdin can.
    let o = p.run(&["exec"], Some(b"INIT task: x\0y\n"));
    crate::util::assert_exit(&o, 2);
    assert!(String::from_utf8_lossy(&o.stdout).contains("NUL"));
}

#[test]
fn commands_before_init_say_what_to_do() {
    let p = Proj::new();
    for args in [
        &["phase", "start", "architect"][..],
        &["store", "spec"],
        &["retrieve", "--for", "spec"],
        &["task", "summary"],
        &["pause", "--reason", "x"],
    ] {
        p.test()
            .args(args)
            .stdin("content")
            .stderr(
                "error: no current task in [PROJECT]/docs/orchestrator\n  \
                 hint: create one first: baton task init <name> (or pass --task SLUG)\n",
            )
            .status(4)
            .run();
    }
    assert!(
        !p.store().join("context/tasks").exists(),
        "nothing was created"
    );
}

#[test]
fn phases_start_end_with_durations_attempts_and_retries() {
    let p = new_task();
    p.test()
        .args(["phase", "start", "architect"])
        .stdout("add-login-flow: started architect (attempt 1)\n")
        .run();
    p.test()
        .args(["phase", "end", "architect", "--status", "failed"])
        .stdout_regex(r"^add-login-flow: ended architect failed after \d+ms\n$")
        .run();
    p.test()
        .args(["phase", "start", "architect"])
        .stdout("add-login-flow: started architect (attempt 2)\n")
        .run();
    p.ok(&["phase", "end", "architect", "--status", "success"]);
    let m = p.manifest("add-login-flow");
    assert_eq!(m["metrics"]["total_retries"], 1);
    let c = m["completed_phases"].as_array().unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(c[1]["attempt"], 2);
    assert!(c[1]["duration_ms"].is_u64() && c[1]["ended_at"].is_string());
    assert_manifest_is_replay(&p.task_dir("add-login-flow"));
}

#[test]
fn parallel_phases_run_at_once() {
    let p = new_task();
    for id in ["1", "2", "3"] {
        p.ok(&["phase", "start", "implementation", "--task-id", id]);
    }
    let m = p.manifest("add-login-flow");
    assert_eq!(m["running_phases"].as_array().unwrap().len(), 3);
    p.test()
        .args(["phase", "start", "implementation", "--task-id", "2"])
        .stderr(
            "error: phase `implementation#2` is already running\n  \
             hint: end it first: baton phase end implementation --status success|failed\n",
        )
        .status(3)
        .run();
    for id in ["3", "1", "2"] {
        p.ok(&[
            "phase",
            "end",
            "implementation",
            "--task-id",
            id,
            "--status",
            "success",
        ]);
    }
    assert_eq!(
        p.manifest("add-login-flow")["running_phases"],
        serde_json::json!([])
    );
}

#[test]
fn end_of_a_phase_that_is_not_running_is_refused() {
    let p = new_task();
    p.test()
        .args(["phase", "end", "spec", "--status", "success"])
        .stderr(
            "error: phase `spec` is not running (no phase is running)\n  \
             hint: start it first: baton phase start spec\n",
        )
        .status(3)
        .run();
}

#[test]
fn begin_phase_returns_context_and_complete_phase_stores_it() {
    let p = new_task();
    let out = p.ok(&["phase", "begin", "architect", "--needs", "memory"]);
    assert!(
        out.contains("started architect") && out.contains("from memory/decisions.md"),
        "{out}"
    );
    let out = p.ok_in(
        &["phase", "complete", "architect", "--status", "success"],
        Some("# Design\n## Decisions\n- x\n"),
    );
    assert!(out.contains("stored architect.md"), "{out}");
    assert_eq!(
        std::fs::read_to_string(p.task_dir("add-login-flow").join("architect.md")).unwrap(),
        "# Design\n## Decisions\n- x\n"
    );
    let m = p.manifest("add-login-flow");
    assert_eq!(m["completed_phases"][0]["phase"], "architect");
    let json = p.json(&["phase", "begin", "spec", "--needs", "architect-output"]);
    assert!(
        json["context"]["parts"][0]["source"]
            .as_str()
            .unwrap()
            .starts_with("architect.md § Decisions"),
        "{json}"
    );
}

#[test]
fn complete_phase_from_a_file_and_without_content() {
    let p = new_task();
    let f = p.path().join("spec-draft.md");
    std::fs::write(&f, "# Spec\n").unwrap();
    p.ok(&["phase", "start", "spec"]);
    p.ok(&[
        "phase",
        "complete",
        "spec",
        "--status",
        "success",
        "--file",
        f.to_str().unwrap(),
    ]);
    assert!(p.task_dir("add-login-flow").join("spec.md").is_file());
    p.ok(&["phase", "start", "review"]);
    p.ok(&[
        "phase",
        "complete",
        "review",
        "--status",
        "failed",
        "--no-content",
    ]);
    assert_eq!(p.manifest("add-login-flow")["metrics"]["total_retries"], 1);
    // A phase outside STORE's list cannot take content: nothing changes.
    p.ok(&["phase", "start", "review"]);
    p.test()
        .args(["phase", "complete", "review", "--status", "success"])
        .stdin("notes")
        .stderr(&format!(
            "error: unknown STORE phase `review`\n{STORE_PHASES}"
        ))
        .status(2)
        .run();
}

/// The hint of an unknown STORE phase.
const STORE_PHASES: &str = "  hint: STORE takes one of: architect, spec, implementation, tests, \
    test-results, impl-audit, design-audit, architect-revision, implementation-fix, debt, \
    graduate-complete, discovery, plan\n";

#[test]
fn store_maps_every_phase_to_its_file() {
    let p = Proj::new();
    p.ok(&[
        "task",
        "init",
        "poc-task",
        "--mode",
        "poc",
        "--workflow",
        "poc",
    ]);
    let cases: &[(&[&str], &str)] = &[
        (&["store", "architect"], "architect.md"),
        (&["store", "spec"], "spec.md"),
        (
            &["store", "implementation", "--task-id", "3"],
            "implementations/task-3.md",
        ),
        (&["store", "tests", "--task-id", "3"], "tests/task-3.md"),
        (&["store", "test-results"], "test-results.md"),
        (&["store", "impl-audit"], "impl-audit.md"),
        (&["store", "design-audit"], "design-audit.md"),
        (&["store", "architect-revision"], "architect-revision-1.md"),
        (
            &["store", "architect-revision", "--iteration", "2"],
            "architect-revision-2.md",
        ),
        (
            &["store", "implementation-fix", "--iteration", "1"],
            "implementation-fix-1.md",
        ),
        (&["store", "debt"], "debt.md"),
        (&["store", "graduate-complete"], "graduate-complete.md"),
        (&["store", "spec"], "spec.v2.md"),
    ];
    for (args, file) in cases {
        let out = p.ok_in(args, Some(&format!("content for {file}\n")));
        assert!(out.contains(file), "{args:?} → {out}");
        let text = std::fs::read_to_string(p.task_dir("poc-task").join(file)).unwrap();
        assert_eq!(text, format!("content for {file}\n"));
    }
    // The first spec is still there, untouched: nothing is rewritten.
    assert_eq!(
        std::fs::read_to_string(p.task_dir("poc-task").join("spec.md")).unwrap(),
        "content for spec.md\n"
    );
    let err = p.fails_in(
        &["store", "architect-revision", "--iteration", "2"],
        Some(b"again"),
        3,
    );
    assert!(err.contains("never rewritten"), "{err}");
    assert_manifest_is_replay(&p.task_dir("poc-task"));
}

#[test]
fn store_refuses_bad_input_and_leaves_state_unchanged() {
    let p = new_task();
    p.test()
        .args(["store", "checkpoint"])
        .stdin("x")
        .stderr(&format!(
            "error: unknown STORE phase `checkpoint`\n{STORE_PHASES}"
        ))
        .status(2)
        .run();
    p.test()
        .args(["store", "debt"])
        .stdin("x")
        .stderr(
            "error: `debt` is stored only in poc mode; task `add-login-flow` is in standard mode\n  \
             hint: debt.md records shortcuts of a proof of concept; a standard task has none\n",
        )
        .status(3)
        .run();
    p.test()
        .args(["store", "implementation"])
        .stdin("x")
        .stderr(
            "error: STORE implementation needs a task id\n  \
             hint: pass --task-id N (the spec task this implementation belongs to)\n",
        )
        .status(2)
        .run();
    for bad in ["../../x", "a/b", ".."] {
        p.test()
            .args(["store", "implementation", "--task-id", bad])
            .stdin("x")
            .stderr(&format!(
                "error: task id `{bad}` must not contain `/`, `\\` or `..`: \
                 it becomes a file name inside the store\n"
            ))
            .status(2)
            .run();
    }
    p.test()
        .args(["store", "spec"])
        .stdin(&b"ok\xff\xfebad"[..])
        .stderr(
            "error: content from stdin is not UTF-8 text (invalid byte at offset 2)\n  \
             hint: store text (Markdown); convert the file to UTF-8 first\n",
        )
        .status(2)
        .run();
    p.test()
        .args(["store", "spec"])
        .stdin("  \n")
        .stderr(
            "error: nothing to store for `spec`: the content is empty\n  \
             hint: pass the content on stdin, with --file, or after `content:`\n",
        )
        .status(2)
        .run();
    let err = p.fails(&["store", "spec", "--file", "/nonexistent/spec.md"], 6);
    assert!(err.contains("/nonexistent/spec.md"), "{err}");
    p.test()
        .args(["store", "spec", "--file"])
        .arg(p.path())
        .stderr("error: [PROJECT] is a directory, not a file\n")
        .status(2)
        .run();
    for bad in ["../x", "a/b"] {
        p.test()
            .args(["phase", "start", bad])
            .stderr(&format!(
                "error: phase `{bad}` must not contain `/`, `\\` or `..`: \
                 it becomes a file name inside the store\n"
            ))
            .status(2)
            .run();
    }
    p.test()
        .args(["phase", "start", "Spec"])
        .stderr(
            "error: phase `Spec` is not a phase name (lowercase letters, digits, `-`, `_`, `.`)\n",
        )
        .status(2)
        .run();
    p.test()
        .args(["task", "summary", "--task", "../etc"])
        .stderr(
            "error: task slug `../etc` must not contain `/`, `\\` or `..`: \
             it becomes a file name inside the store\n",
        )
        .status(2)
        .run();
    p.test()
        .args(["task", "summary", "--task", "nope"])
        .stderr(
            "error: no task `nope` in [PROJECT]/docs/orchestrator/context/tasks\n  \
             hint: list the tasks with `baton task list`, or create it with `baton task init`\n",
        )
        .status(4)
        .run();
}

#[test]
fn pause_needs_ended_phases_and_retry_continues_from_the_failure() {
    let p = new_task();
    p.ok(&["phase", "start", "spec"]);
    p.test()
        .args(["pause", "--reason", "tests fail"])
        .stderr(
            "error: cannot pause: phases still running: spec\n  \
             hint: end every phase first: baton phase end <phase> --status success|failed\n",
        )
        .status(3)
        .run();
    p.ok(&["phase", "end", "spec", "--status", "failed"]);
    p.ok(&[
        "pause",
        "--reason",
        "tests fail",
        "--recommend",
        "fix fixture, rerun",
    ]);
    let m = p.manifest("add-login-flow");
    assert_eq!(m["status"], "paused");
    assert_eq!(
        m["failure_context"]["recommendations"],
        serde_json::json!(["fix fixture", "rerun"])
    );
    p.test()
        .args(["phase", "start", "spec"])
        .stderr(
            "error: cannot start phase `spec`: task `add-login-flow` is paused (tests fail)\n  \
             hint: resume it first: baton resume --decision retry\n",
        )
        .status(3)
        .run();
    p.test()
        .args(["resume", "--decision", "approve"])
        .stderr(
            "error: decision `approve` does not fit a paused task\n  \
             hint: decide one of: retry, reject\n",
        )
        .status(3)
        .run();
    p.test()
        .args(["resume", "--decision", "retry"])
        .stdout("add-login-flow: retry → running; continue at: spec\n")
        .run();
    p.ok(&["phase", "start", "spec"]);
}

#[test]
fn gates_follow_the_routing_table() {
    let expect: &[(&str, &str, &str, Option<&str>)] = &[
        ("design", "approve", "running", Some("spec")),
        ("design", "reject", "failed", None),
        ("investigation", "full", "running", Some("spec")),
        ("investigation", "lite", "running", Some("implementation")),
        ("investigation", "shelf", "shelved", None),
        ("investigation", "cancel", "cancelled", None),
        ("final", "approve", "completed", None),
        ("final", "reject", "failed", None),
    ];
    for (gate, decision, status, at) in expect {
        let p = new_task();
        p.ok_in(
            &["store", "architect"],
            Some("# A\n## Decisions\n- use redis\n## Rollout\nlater\n"),
        );
        p.ok(&[
            "gate",
            "set",
            gate,
            "--prompt",
            "Decide",
            "--artifacts",
            "architect.md",
        ]);
        let shown = p.json(&["gate", "show"]);
        assert_eq!(shown["gate"]["gate"], *gate);
        let v = p.json(&["resume", "--decision", decision]);
        assert_eq!(v["status"], *status, "{gate}+{decision}");
        assert_eq!(v["continue_at"].as_str(), *at, "{gate}+{decision}");
        let m = p.manifest("add-login-flow");
        assert_eq!(m["gate_context"], serde_json::Value::Null);
        if *decision == "lite" {
            assert_eq!(m["workflow"], "poc");
        }
        if *decision == "shelf" {
            let s = &m["shelf_context"];
            assert!(
                s["investigation_summary"]
                    .as_str()
                    .unwrap()
                    .contains("use redis"),
                "{s}"
            );
            assert!(
                !s["investigation_summary"]
                    .as_str()
                    .unwrap()
                    .contains("Rollout"),
                "{s}"
            );
            assert!(s["shelved_at"].is_string());
        }
        assert_manifest_is_replay(&p.task_dir("add-login-flow"));
    }
}

#[test]
fn decisions_that_do_not_fit_and_nothing_to_resume() {
    let p = new_task();
    p.test()
        .args(["resume", "--decision", "approve"])
        .stderr(
            "error: nothing to resume: task `add-login-flow` is running, \
             not paused or waiting at a gate\n  \
             hint: RESUME answers a PAUSE or a SET_GATE; see `baton task summary`\n",
        )
        .status(3)
        .run();
    p.test()
        .args(["gate", "show"])
        .stderr(
            "error: task `add-login-flow` is running, not waiting at a gate\n  \
             hint: see `baton task summary` for where it stands\n",
        )
        .status(3)
        .run();
    p.test()
        .args(["gate", "set", "design", "--prompt", "ok?"])
        .stdout(
            "add-login-flow: waiting at the design gate\n  \
             decide with: baton resume --decision approve|reject\n",
        )
        .run();
    for d in ["full", "lite", "shelf", "cancel", "retry"] {
        p.test()
            .args(["resume", "--decision", d])
            .stderr(&format!(
                "error: decision `{d}` does not fit the design gate\n  \
                 hint: decide one of: approve, reject\n"
            ))
            .status(3)
            .run();
    }
    p.test()
        .args(["phase", "start", "spec"])
        .stderr(
            "error: cannot start phase `spec`: task `add-login-flow` is waiting at the design gate\n  \
             hint: decide first: baton resume --decision <decision> (see baton task summary)\n",
        )
        .status(3)
        .run();
    // clap rejects unknown decisions.
    p.test()
        .args(["resume", "--decision", "maybe"])
        .stderr(
            "error: invalid value 'maybe' for '--decision <DECISION>'\n  \
             [possible values: approve, reject, retry, full, lite, shelf, cancel]\n\n\
             For more information, try '--help'.\n",
        )
        .status(2)
        .run();
}

#[test]
fn finished_tasks_take_no_more_phases() {
    for (gate, decision, status) in [
        ("final", "approve", "completed"),
        ("investigation", "cancel", "cancelled"),
        ("final", "reject", "failed"),
    ] {
        let p = new_task();
        p.ok(&["gate", "set", gate]);
        p.ok(&["resume", "--decision", decision]);
        let hint = "  hint: start a new task with baton task init\n";
        p.test()
            .args(["phase", "start", "spec"])
            .stderr(&format!(
                "error: cannot start phase `spec`: task `add-login-flow` is {status}\n{hint}"
            ))
            .status(3)
            .run();
        p.test()
            .args(["store", "spec"])
            .stdin("x")
            .stderr(&format!(
                "error: task `add-login-flow` is {status}: no more artifacts can be stored\n{hint}"
            ))
            .status(3)
            .run();
    }
}

#[test]
fn retrieve_condenses_by_target_phase() {
    let p = new_task();
    let spec = "# Spec\n## Overview\nLong prose.\n## Function Signatures\n- fn check()\n## Types\n- enum D\n## Edge Cases\n- skew\n```\n# not a heading\n```\n## Rollout\nflag\n## Files\n- src/a.rs\n";
    p.ok_in(&["store", "spec"], Some(spec));
    let out = p.ok(&["retrieve", "--for", "implementation"]);
    for want in [
        "fn check()",
        "enum D",
        "skew",
        "# not a heading",
        "src/a.rs",
    ] {
        assert!(out.contains(want), "missing {want}: {out}");
    }
    for unwanted in ["Long prose", "flag"] {
        assert!(
            !out.contains(unwanted),
            "implementation must not get {unwanted}: {out}"
        );
    }
    let out = p.ok(&["retrieve", "--for", "testing"]);
    assert!(
        out.contains("fn check()") && !out.contains("src/a.rs"),
        "{out}"
    );
    let out = p.ok(&["retrieve", "--for", "design-audit"]);
    assert!(out.contains("architect.md: not stored yet"), "{out}");
    let v = p.json(&["retrieve", "--for", "resume"]);
    assert_eq!(v["parts"][0]["source"], "manifest.json");
    let err = p.fails(&["retrieve", "--needs", "everything", "--for", "spec"], 2);
    assert!(err.contains("unknown need `everything`"), "{err}");
    std::fs::write(
        p.store().join("memory/patterns.md"),
        "# Patterns\n## Repository pattern\n",
    )
    .unwrap();
    let out = p.ok(&["retrieve", "--needs", "memory", "--for", "architect"]);
    assert!(out.contains("Repository pattern"), "{out}");
}

#[test]
fn metrics_list_summary_query_history() {
    let p = new_task();
    p.ok(&["phase", "start", "architect"]);
    p.ok_in(
        &["phase", "complete", "architect", "--status", "success"],
        Some("# A\nuses bcrypt hashing\n"),
    );
    let out = p.ok(&["metrics"]);
    assert!(
        out.contains("phases: 1 completed (1 succeeded, 0 failed)"),
        "{out}"
    );
    let out = p.ok(&["metrics", "--format", "detailed"]);
    assert!(out.contains("architect") && out.contains("runs"), "{out}");
    let v = p
        .test()
        .args(["metrics", "--format", "json"])
        .any_stdout()
        .run()
        .json();
    assert_eq!(v["phases_completed"], 1);
    p.ok(&[
        "task",
        "init",
        "second one",
        "--mode",
        "poc",
        "--workflow",
        "poc",
    ]);
    let list = p.json(&["task", "list"]);
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert!(
        p.ok(&["task", "list"]).contains("* second-one"),
        "the current task is marked"
    );
    p.ok(&["task", "use", "add-login-flow"]);
    let s = p.json(&["task", "summary"]);
    assert_eq!(s["task"], "add-login-flow");
    assert!(s["next"].as_str().unwrap().contains("baton phase begin"));
    let out = p.ok(&["query", "BCRYPT"]);
    assert!(
        out.contains("add-login-flow/architect.md:2: uses bcrypt hashing"),
        "{out}"
    );
    // Nothing found: silent, exit 1, like grep.
    p.test()
        .args(["query", "no-such-words-anywhere"])
        .status(1)
        .run();
    let h = p.json(&["history", "--tail", "2"]);
    let h = h.as_array().unwrap();
    assert_eq!(h.len(), 2);
    assert!(h[1].as_str().unwrap().contains("USE"), "{h:?}");
    let mine = p.json(&["history", "--tail", "5", "--task", "second-one"]);
    assert_eq!(mine.as_array().unwrap().len(), 1, "only second-one's INIT");
}

#[test]
fn a_stale_or_missing_manifest_is_rebuilt_from_events() {
    let p = new_task();
    p.ok(&["phase", "start", "architect"]);
    let t = p.task_dir("add-login-flow");
    let old = std::fs::read(t.join("manifest.json")).unwrap();
    p.ok(&["phase", "end", "architect", "--status", "success"]);
    // A crash between the event append and the manifest rewrite leaves the older manifest.
    std::fs::write(t.join("manifest.json"), &old).unwrap();
    let s = p.json(&["task", "summary"]);
    assert_eq!(
        s["completed"], 1,
        "the summary sees the event the manifest missed"
    );
    assert_manifest_is_replay(&t);
    std::fs::remove_file(t.join("manifest.json")).unwrap();
    p.ok(&["phase", "start", "spec"]);
    assert_manifest_is_replay(&t);
}

#[test]
fn a_corrupt_manifest_names_the_file_and_doctor_repairs_it() {
    let p = new_task();
    let t = p.task_dir("add-login-flow");
    std::fs::write(t.join("manifest.json"), "{\n  \"name\": \n").unwrap();
    p.test()
        .args(["task", "summary"])
        .stderr(
            "error: [PROJECT]/docs/orchestrator/context/tasks/add-login-flow/manifest.json line 3: \
             not a valid manifest: EOF while parsing a value at line 3 column 0\n  \
             hint: run `baton doctor` to check the store and rebuild manifests from events\n",
        )
        .status(5)
        .run();
    let out = p.ok(&["doctor"]);
    assert!(
        out.contains("repaired") && out.contains("rebuilt from events"),
        "{out}"
    );
    assert!(p.ok(&["task", "summary"]).contains("status: running"));
    assert_manifest_is_replay(&t);
    assert!(
        std::fs::read_dir(&t).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("damaged")),
        "the damaged file is kept"
    );
}

#[test]
fn a_corrupt_event_line_is_named_and_never_guessed() {
    let p = new_task();
    p.ok(&["phase", "start", "a"]);
    p.ok(&["phase", "end", "a", "--status", "success"]);
    let t = p.task_dir("add-login-flow");
    let text = std::fs::read_to_string(t.join("events.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(
        t.join("events.jsonl"),
        format!("{}\n{{broken\n{}\n", lines[0], lines[2]),
    )
    .unwrap();
    std::fs::remove_file(t.join("manifest.json")).unwrap();
    let err = p.fails(&["task", "summary"], 5);
    assert!(err.contains("events.jsonl line 2"), "{err}");
    let o = p.run(&["doctor"], None);
    crate::util::assert_exit(&o, 5);
    assert!(String::from_utf8_lossy(&o.stdout).contains("events.jsonl line 2"));
}

#[test]
fn a_torn_last_event_is_set_aside_and_work_goes_on() {
    let p = new_task();
    let t = p.task_dir("add-login-flow");
    // A power loss mid-append leaves half a line with no newline.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(t.join("events.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"v\":1,\"seq\":2,\"ts\":\"2026").unwrap();
    drop(f);
    p.ok(&["phase", "start", "architect"]);
    let text = std::fs::read_to_string(t.join("events.jsonl")).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert!(
        std::fs::read_to_string(t.join("events.jsonl.torn"))
            .unwrap()
            .contains("\"seq\":2,\"ts\":\"2026")
    );
    assert_manifest_is_replay(&t);
    let out = p.ok(&["doctor"]);
    assert!(out.contains("store is healthy"), "{out}");
}

#[test]
fn an_unwritable_store_gives_a_clear_error() {
    let p = Proj::new();
    // A store root under a regular file cannot be created, even by root.
    p.test()
        .write("blocker", "")
        .args(["task", "init", "x", "--root", "blocker/store"])
        .stderr("error: blocker/store/context/tasks: Not a directory (os error 20)\n")
        .status(6)
        .run();
}

#[test]
fn root_and_config_choose_the_store() {
    let p = Proj::new();
    std::fs::write(p.path().join("baton.toml"), "[paths]\nroot = \"state\"\n").unwrap();
    p.ok(&["task", "init", "configured"]);
    assert!(
        p.path()
            .join("state/context/tasks/configured/events.jsonl")
            .is_file()
    );
    // From a subdirectory, the project is still found.
    p.test()
        .write("sub/.keep", "")
        .current_dir("sub")
        .args(["task", "summary", "--json"])
        .stdout_contains("\"task\": \"configured\",\n")
        .run();
    p.test()
        .write("baton.toml", "[paths]\nroot = \"../outside\"\n")
        .args(["task", "list"])
        .stderr(
            "error: [PROJECT]/baton.toml: paths.root = \"../outside\": must not contain `..`\n  \
             hint: fix paths.root in [PROJECT]/baton.toml\n",
        )
        .status(5)
        .run();
}

#[test]
fn json_errors_are_machine_readable() {
    let ran = Test::new()
        .args(["task", "summary", "--json"])
        .stderr(concat!(
            r#"{"error":{"kind":"not_found","message":"no current task in [PROJECT]/docs/orchestrator","#,
            r#""hint":"create one first: baton task init <name> (or pass --task SLUG)"}}"#,
            "\n"
        ))
        .status(4)
        .run();
    let v: serde_json::Value = serde_json::from_str(&ran.stderr).unwrap();
    assert_eq!(v["error"]["kind"], "not_found");
}

#[test]
fn every_command_has_help_with_examples() {
    let p = Proj::new();
    let cmds: &[&[&str]] = &[
        &["task", "init"],
        &["task", "list"],
        &["task", "summary"],
        &["task", "use"],
        &["task", "show"],
        &["phase", "start"],
        &["phase", "end"],
        &["phase", "begin"],
        &["phase", "complete"],
        &["pause"],
        &["gate", "set"],
        &["gate", "show"],
        &["resume"],
        &["store"],
        &["retrieve"],
        &["metrics"],
        &["query"],
        &["history"],
        &["doctor"],
        &["exec"],
        &["walkthrough"],
    ];
    for c in cmds {
        p.test()
            .args(*c)
            .arg("--help")
            .stdout_contains("\nExamples:\n  baton ")
            .run();
    }
}

#[test]
fn walkthrough_runs_a_whole_task() {
    let p = Proj::new();
    let dir = p.path().join("wt");
    let out = p.ok(&["walkthrough", "--dir", dir.to_str().unwrap()]);
    assert!(out.contains("approve → completed"), "{out}");
    assert!(!out.contains("STATUS: error"), "{out}");
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.join("context/tasks/add-rate-limiting/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["status"], "completed");
    assert_eq!(m["metrics"]["total_retries"], 1);
    assert!(
        dir.join("context/tasks/add-rate-limiting/implementations/task-2.v2.md")
            .is_file()
    );
}

#[test]
fn a_lost_artifact_is_restored_from_its_event() {
    let p = new_task();
    p.ok_in(&["store", "spec"], Some("# Spec\n## Types\n- User\n"));
    let f = p.task_dir("add-login-flow").join("spec.md");
    std::fs::remove_file(&f).unwrap();
    let out = p.ok(&["doctor"]);
    assert!(out.contains("restored from event"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "# Spec\n## Types\n- User\n"
    );
}

/// A log a newer baton wrote (an event of a format this one does not know): reads refuse it,
/// and writes refuse it with the same words instead of appending after it.
#[test]
fn writes_refuse_a_log_that_reads_refuse() {
    let p = Proj::new();
    p.ok(&["task", "init", "Add login"]);
    p.ok(&["phase", "start", "architect"]);
    let log = p.task_dir("add-login").join("events.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(
        "{\"v\":9,\"seq\":3,\"ts\":\"2099-01-01T00:00:00.000Z\",\"event\":\"phase_ended\",\"phase\":\"architect\",\"status\":\"success\"}\n",
    );
    std::fs::write(&log, &text).unwrap();
    // The newer baton also brought the manifest up to its event, as it does after each one.
    let mf = p.task_dir("add-login").join("manifest.json");
    let m = std::fs::read_to_string(&mf).unwrap();
    assert!(m.contains("\"version\":2"), "{m}");
    std::fs::write(&mf, m.replace("\"version\":2", "\"version\":3")).unwrap();
    let read = p.fails(&["task", "summary"], 5);
    let write = p.fails(&["phase", "end", "architect", "--status", "success"], 5);
    assert!(
        read.contains("events.jsonl line 3: event format v9 is not supported"),
        "{read}"
    );
    assert_eq!(
        read.lines().next(),
        write.lines().next(),
        "the write's error is the read's"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        text,
        "nothing appended"
    );
}

/// Once a command's event is durable the command has succeeded: history.md that cannot be
/// written (here a directory in its place) is a warning, its lines wait, and doctor adds them.
#[test]
fn an_unwritable_history_is_a_warning_after_a_durable_event() {
    let p = Proj::new();
    p.ok(&["task", "init", "Add login"]);
    let history = p.store().join("context/history.md");
    std::fs::remove_file(&history).unwrap();
    std::fs::create_dir(&history).unwrap();
    let o = p.run(&["phase", "start", "architect"], None);
    let err = String::from_utf8_lossy(&o.stderr);
    crate::util::assert_exit(&o, 0);
    assert!(err.contains("warning: history.md not written"), "{err}");
    let m = p.manifest("add-login");
    assert_eq!(m["running_phases"][0]["phase"], "architect");
    let pending = p.task_dir("add-login").join("history.pending");
    assert!(
        std::fs::read_to_string(&pending)
            .unwrap()
            .contains("[add-login] START_PHASE architect")
    );
    // The disk is fine again: doctor adds the waiting line.
    std::fs::remove_dir(&history).unwrap();
    let out = p.ok(&["doctor"]);
    assert!(out.contains("history line(s) of task add-login"), "{out}");
    assert!(!pending.exists());
    let h = std::fs::read_to_string(&history).unwrap();
    assert!(h.contains("[add-login] START_PHASE architect"), "{h}");
}

/// A file where an artifact would be, which no event stored (a write whose event never came),
/// is named by doctor and left alone; the stored artifacts are not reported.
#[test]
fn doctor_names_an_artifact_file_no_event_stored() {
    let p = new_task();
    p.ok_in(&["store", "spec"], Some("# Spec\n"));
    p.ok_in(
        &["store", "implementation", "--task-id", "1"],
        Some("# Task 1\n"),
    );
    let dir = p.task_dir("add-login-flow");
    let stray = dir.join("implementations/task-2.md");
    std::fs::write(&stray, "# half a task\n").unwrap();
    let out = p.ok(&["doctor"]);
    assert!(
        out.contains("implementations/task-2.md") && out.contains("no event stored this file"),
        "{out}"
    );
    assert!(!out.contains("spec.md: no event"), "{out}");
    assert!(!out.contains("task-1.md: no event"), "{out}");
    assert!(stray.exists(), "doctor deletes nothing it did not make");
}
