//! Every case of the shared test-output corpus (`$BATON_CORPUS/test-outputs`, real runs of
//! real runners with ground truth from their machine-readable reports) through the summarizer
//! of its runner, explicitly and with `--kind auto`: counts and the first failure must match.
//!
//! Where the text cannot know what the label knows, the exception is asserted (not skipped) and
//! the reason is written next to it.

use std::path::{Path, PathBuf};

use baton_context::mask::{Kind, Summary, summarize_command_output};
use serde_json::Value;

use crate::util::corpus_or_skip;

/// The cases of `<corpus>/test-outputs` (and its `large/`), by id.
fn cases(corpus: &Path) -> Vec<(String, PathBuf, Option<Value>)> {
    let corpus = corpus.join("test-outputs");
    let mut out = Vec::new();
    for dir in [corpus.clone(), corpus.join("large")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().and_then(|x| x.to_str()) != Some("log") {
                continue;
            }
            let label_path = p.with_extension("json");
            let label = std::fs::read_to_string(&label_path)
                .ok()
                .map(|t| serde_json::from_str(&t).expect("label is JSON"));
            let id = p.file_stem().unwrap().to_string_lossy().into_owned();
            out.push((id, p, label));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn kind_of(runner: &str) -> Kind {
    match runner {
        "pytest" => Kind::Pytest,
        "cargo test" => Kind::CargoTest,
        "cargo nextest" => Kind::Nextest,
        "go test" => Kind::GoTest,
        "jest" => Kind::Jest,
        "vitest" => Kind::Vitest,
        "node --test" => Kind::NodeTest,
        other => panic!("corpus runner {other:?} has no summarizer"),
    }
}

fn n(label: &Value, key: &str) -> Option<u64> {
    label.get(key).and_then(Value::as_u64)
}

/// The label failure our first failure must equal, with the reason when it is not `failures[0]`.
fn expected_first<'a>(id: &str, label: &'a Value, ours: Option<&str>) -> Option<&'a Value> {
    let failures = label["failures"].as_array()?;
    let runner = label["runner"].as_str().unwrap_or("");
    if runner == "go test" {
        // The label (from `go test -json`) lists failures sorted by test name, not in log
        // order; ours is the first `--- FAIL` of the log. It must be one of the label's.
        return failures.iter().find(|f| f["test"].as_str() == ours);
    }
    if id == "pytest-dateutil-internalerror" {
        // The terminal output never names the file whose collection failed (junit does):
        // the first failure the text shows is the INTERNALERROR, which junit records as
        // `pytest::internal`.
        return failures
            .iter()
            .find(|f| f["test"].as_str() == Some("pytest::internal"));
    }
    failures.first()
}

/// nextest's JUnit names stress iterations `binary@stress-N test`; the text has no such suffix.
fn normalize_test(runner: &str, t: &str) -> String {
    if runner == "cargo nextest"
        && let Some(at) = t.find("@stress-")
    {
        let rest = &t[at + "@stress-".len()..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        return format!("{}{}", &t[..at], &rest[digits..]);
    }
    t.to_string()
}

/// Our message holds the label's first line (spaces as the text has them).
fn message_matches(ours: Option<&str>, want: &str) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    ours.is_some_and(|m| squash(m).contains(&squash(want)))
}

fn check(id: &str, mode: &str, label: &Value, log: &str, s: &Summary) -> Vec<String> {
    let mut errs = Vec::new();
    let runner = label["runner"].as_str().unwrap_or("");
    let c = s.counts.clone().unwrap_or_default();
    let build_failed_as_rustc = s.kind == Kind::Rustc;
    let go_plain = runner == "go test" && !log.contains("=== RUN");
    for (key, ours) in [
        ("passed", c.passed),
        ("failed", c.failed),
        ("skipped", c.skipped),
        ("errors", c.errors),
        ("xfailed", c.xfailed),
    ] {
        let Some(want) = n(label, key) else { continue };
        if build_failed_as_rustc && key != "errors" {
            // Auto without the command sees plain rustc output: a build, not a test run, so
            // test counts are unknown rather than zero. The label says no test ran.
            if ours.is_some() || want != 0 {
                errs.push(format!(
                    "{key}: rustc kind should not report it (label {want})"
                ));
            }
            continue;
        }
        if go_plain && (key == "passed" || key == "skipped") {
            // go test without -v prints no PASS/SKIP lines: unknowable from the text.
            if ours.is_some() {
                errs.push(format!("{key}: {ours:?} invented for go without -v"));
            }
            continue;
        }
        if ours != Some(want) {
            errs.push(format!("{key}: got {ours:?}, label {want}"));
        }
    }
    let ours = s.first_failure.as_ref();
    let ours_test = ours.and_then(|f| f.test.clone());
    match expected_first(id, label, ours_test.as_deref()) {
        None if label["failures"].as_array().is_some_and(|a| a.is_empty()) => {
            if ours.is_some() {
                errs.push(format!("first_failure {ours:?} on a green run"));
            }
        }
        None => errs.push(format!("first failure {ours_test:?} is not in the label")),
        Some(want) => {
            let want_test = normalize_test(runner, want["test"].as_str().unwrap_or(""));
            let f = ours.cloned().unwrap_or_default();
            if f.test.as_deref() != Some(want_test.as_str()) {
                errs.push(format!("test: got {:?}, label {want_test:?}", f.test));
            }
            let want_file = want["file"].as_str();
            if f.file.as_deref() != want_file {
                errs.push(format!("file: got {:?}, label {want_file:?}", f.file));
            }
            // The line where the text gives one: the assertion line for every runner but
            // pytest --tb=line (label gives the test's definition line; the text has none).
            if let (Some(ours_line), Some(want_line)) = (f.line, want["line"].as_u64())
                && ours_line != want_line
            {
                errs.push(format!("line: got {ours_line}, label {want_line}"));
            }
            // Why it failed, not only what: the message's first line as the report has it.
            let want_msg = want["message_first_line"].as_str();
            if let Some(placeholder @ ("collection failure" | "internal error")) = want_msg {
                // pytest's junit puts only this placeholder in the message of a collection
                // error or an INTERNALERROR; the text holds the exception itself, which ours
                // must be (a line the log really has).
                let m = f.message.as_deref().unwrap_or("");
                if m.trim().is_empty() || !log.contains(m) {
                    errs.push(format!(
                        "message: got {:?}, not the exception behind junit's {placeholder:?}",
                        f.message
                    ));
                }
            } else if let Some(want_msg) = want_msg
                && !message_matches(f.message.as_deref(), want_msg)
            {
                errs.push(format!("message: got {:?}, label {want_msg:?}", f.message));
            }
        }
    }
    errs.into_iter()
        .map(|e| format!("{id} [{mode}]: {e}"))
        .collect()
}

#[test]
fn every_corpus_case_matches_its_label() {
    let corpus = corpus_or_skip!(every_corpus_case_matches_its_label);
    let cases = cases(&corpus);
    assert!(
        cases.len() >= 30,
        "only {} cases under {}/test-outputs",
        cases.len(),
        corpus.display()
    );
    let mut errors = Vec::new();
    let mut checked = 0;
    for (id, log_path, label) in &cases {
        let bytes = std::fs::read(log_path).unwrap();
        let log = String::from_utf8_lossy(&bytes);
        let Some(label) = label else {
            // No ground truth (large-node-test-commander-tap-x4): it must still summarize.
            let s = summarize_command_output(Kind::Auto, &[], &bytes);
            assert_eq!(s.kind, Kind::NodeTest, "{id}");
            continue;
        };
        let kind = kind_of(label["runner"].as_str().unwrap_or(""));
        let command: Vec<String> = label["command"]
            .as_str()
            .unwrap_or("")
            .split_whitespace()
            .map(String::from)
            .collect();
        let explicit = summarize_command_output(kind, &[], &bytes);
        errors.extend(check(id, "explicit", label, &log, &explicit));
        // Stdin mode: the text alone.
        let auto = summarize_command_output(Kind::Auto, &[], &bytes);
        if auto.kind != kind && auto.kind != Kind::Rustc {
            errors.push(format!(
                "{id} [auto]: detected {:?}, want {kind:?}",
                auto.kind
            ));
        }
        if auto.kind == Kind::Rustc && label["build_failed"] != Value::Bool(true) {
            errors.push(format!("{id} [auto]: detected rustc on a run that built"));
        }
        errors.extend(check(id, "auto", label, &log, &auto));
        // Command mode: the command name breaks the tie (a failed build under `cargo test`).
        let hinted = summarize_command_output(Kind::Auto, &command, &bytes);
        if hinted.kind != kind {
            errors.push(format!(
                "{id} [auto+cmd]: detected {:?}, want {kind:?}",
                hinted.kind
            ));
        }
        errors.extend(check(id, "auto+cmd", label, &log, &hinted));
        checked += 1;
    }
    assert!(checked >= 33, "only {checked} labelled cases checked");
    assert!(
        errors.is_empty(),
        "{} mismatches:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn summaries_are_small() {
    // The point of masking: a summary of ~100-200 tokens, whatever the log.
    let corpus = corpus_or_skip!(summaries_are_small);
    for (id, log_path, _) in cases(&corpus) {
        let bytes = std::fs::read(&log_path).unwrap();
        let s = summarize_command_output(Kind::Auto, &[], &bytes);
        let json = serde_json::to_string(&s).unwrap();
        assert!(
            json.len() < 6000,
            "{id}: summary is {} bytes: {json}",
            json.len()
        );
    }
}
