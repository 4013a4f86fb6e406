//! The context-manager command language, answered in its STATUS/TASK/DATA format.

use crate::util::Proj;

fn exec(p: &Proj, script: &str) -> (i32, String) {
    let o = p.run(&["exec"], Some(script.as_bytes()));
    (
        o.status.code().unwrap(),
        String::from_utf8(o.stdout).unwrap(),
    )
}

#[test]
fn commands_of_the_language_work_verbatim() {
    let p = Proj::new();
    let out = p.ok(&[
        "exec",
        "INIT task: add-login mode: standard workflow: orchestrate",
    ]);
    assert_eq!(out.lines().next(), Some("STATUS: success"));
    assert!(
        out.contains("TASK: add-login\nDATA: created task add-login"),
        "{out}"
    );
    let out = p.ok(&["exec", "BEGIN_PHASE phase: architect needs: memory"]);
    assert!(
        out.contains("STATUS: success\nTASK: add-login\nDATA: phase architect started"),
        "{out}"
    );
    assert!(out.contains("memory/decisions.md"));
    let out = p.ok(&[
        "exec",
        "COMPLETE_PHASE phase: architect status: success content: ## Design...",
    ]);
    assert!(out.contains("stored architect.md"), "{out}");
    assert_eq!(
        std::fs::read_to_string(p.task_dir("add-login").join("architect.md")).unwrap(),
        "## Design...\n"
    );
    for line in [
        "BEGIN_PHASE phase: design-audit needs: architect-output",
        "END_PHASE phase: design-audit status: success",
        "SET_GATE gate: design prompt: Review before spec writing artifacts: architect.md, design-audit.md",
        "RESUME decision: approve",
        "BEGIN_PHASE phase: spec needs: architect-output",
        "COMPLETE_PHASE phase: spec status: success content: # Spec\n## Types\n- User",
        "BEGIN_PHASE phase: implementation needs: spec-signatures",
        "COMPLETE_PHASE phase: implementation status: success task_id: 1 content: ## Task 1...",
        "STORE phase: tests task_id: 1 iteration: 1 content: ## Tests",
        "RETRIEVE needs: memory for_phase: impl-audit",
        "PAUSE reason: flaky test recommendations: rerun, quarantine",
        "RESUME decision: retry",
        "METRICS format: summary",
        "METRICS format: json",
        "LIST",
        "SUMMARY",
        "QUERY Task 1",
        "HISTORY tail: 3",
    ] {
        let (code, out) = exec(&p, line);
        assert_eq!(code, 0, "{line}: {out}");
        assert!(
            out.starts_with("STATUS: success\nTASK: add-login\nDATA: "),
            "{line}: {out}"
        );
    }
    let m = p.manifest("add-login");
    assert_eq!(m["completed_phases"].as_array().unwrap().len(), 4);
    assert!(
        p.task_dir("add-login")
            .join("implementations/task-1.md")
            .is_file()
    );
    assert!(p.task_dir("add-login").join("tests/task-1.md").is_file());
    let g = &m["gate_context"];
    assert!(g.is_null());
    let (_, out) = exec(&p, "RETRIEVE needs: memory for_phase: impl-audit");
    assert!(
        out.contains("from implementations/task-1.md") && out.contains("from spec.md"),
        "{out}"
    );
}

#[test]
fn several_lines_from_stdin_with_multiline_content() {
    let p = Proj::new();
    let script = "INIT task: multi mode: poc workflow: poc\n\
START_PHASE phase: architect\n\
END_PHASE phase: architect status: success\n\
STORE phase: debt content: # Debt\n\
## Shortcuts\n\
- no retries yet\n\
\n\
SUMMARY\n";
    let (code, out) = exec(&p, script);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.matches("STATUS: success").count(), 5, "{out}");
    assert_eq!(
        std::fs::read_to_string(p.task_dir("multi").join("debt.md")).unwrap(),
        "# Debt\n## Shortcuts\n- no retries yet\n"
    );
}

#[test]
fn errors_answer_in_the_language_format_and_stop_the_script() {
    let p = Proj::new();
    let (code, out) = exec(&p, "START_PHASE phase: architect\n");
    assert_eq!(code, 4);
    assert!(
        out.starts_with("STATUS: error\nTASK: -\nDATA: no current task"),
        "{out}"
    );
    p.ok(&["exec", "INIT task: t"]);
    let before = p.snapshot();
    let (code, out) = exec(
        &p,
        "END_PHASE phase: spec status: success\nSTART_PHASE phase: spec\n",
    );
    assert_eq!(code, 3);
    assert_eq!(
        out.matches("STATUS:").count(),
        1,
        "stops at the first error: {out}"
    );
    assert!(
        out.contains("STATUS: error\nTASK: t\nDATA: phase `spec` is not running"),
        "{out}"
    );
    assert_eq!(before, p.snapshot());
    let (code, out) = exec(&p, "STORE phase: debt content: x");
    assert_eq!(code, 3);
    assert!(out.contains("only in poc mode"));
    let (code, out) = exec(&p, "DANCE phase: x");
    assert_eq!(code, 2);
    assert!(out.contains("line 1: `DANCE` is not a command"), "{out}");
    let (code, out) = exec(&p, "START_PHASE");
    assert_eq!(code, 2);
    assert!(out.contains("START_PHASE needs `phase:`"), "{out}");
    let (code, out) = exec(&p, "RESUME decision: maybe");
    assert_eq!(code, 2);
    assert!(out.contains("unknown decision `maybe`"), "{out}");
}

#[test]
fn json_responses() {
    let p = Proj::new();
    let v: serde_json::Value =
        serde_json::from_str(&p.ok(&["exec", "--json", "INIT task: j", "LIST"])).unwrap();
    assert_eq!(v[0]["status"], "success");
    assert_eq!(v[1]["task"], "j");
}
