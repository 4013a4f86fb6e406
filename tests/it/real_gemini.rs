//! The real `gemini` CLI (gemini-cli 0.61.0) answered by the model double: under baton's
//! defaults it may run the tests and `git diff` (and only baton's and git's read commands), a
//! session in a folder the user trusts masks through baton's hook and calls baton's MCP tools,
//! and its API failures are read as what they are.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use crate::util::model_double::{ModelDouble, Reply};
use crate::util::real_agent::{
    GEMINI, a_failing_api_pauses_the_run_naming_it, a_refused_connection_stops_the_run,
    an_auth_failure_stops_the_run, assert_masked, assert_red_reached, commits_every_story,
    generated, last_tool_result, mcp_tool_call_round_trips_in_a_run, one_call,
    pauses_on_a_rate_limit_past_the_backoff, recovers_from,
};
use crate::util::scripted_agent::{GEN, RED};
use crate::util::{Proj, text};

/// A session the user starts in a folder they trust (`~/.gemini/trustedFolders.json`), with
/// their own permission for the one command the script runs.
fn session(cli: &Path, p: &Proj, home: &Path, double: &ModelDouble, allow: &str) -> Output {
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let trusted = json!({p.path().to_string_lossy(): "TRUST_FOLDER"});
    std::fs::write(
        home.join(".gemini/trustedFolders.json"),
        trusted.to_string(),
    )
    .unwrap();
    GEMINI
        .env(Command::new(cli), cli, p.path(), home, double)
        .args(["-p", "run the tests", "--output-format", "json"])
        .args(["--approval-mode", "auto_edit"])
        .arg(format!("--allowed-tools={allow}"))
        .output()
        .unwrap()
}

fn init_gemini(p: &Proj) {
    let o = p.cmd(&["init", "gemini"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(p.path().join("gen.sh"), GEN).unwrap();
}

#[test]
fn a_large_output_reaches_the_model_masked_with_its_failure_wherever_it_is() {
    let Some(cli) = GEMINI.cli() else {
        return;
    };
    let p = Proj::new();
    init_gemini(&p);
    let home = tempfile::tempdir().unwrap();
    for at in [0, 1850, 3699] {
        let double = GEMINI.double(one_call(
            "run_shell_command",
            json!({"command": format!("sh gen.sh {at}"), "description": "run the tests"}),
        ));
        let out = session(&cli, &p, home.path(), &double, "run_shell_command(sh)");
        assert!(out.status.success(), "{}", text(&out));
        // gemini hands its hook the output with lines of its own around it: kept too.
        assert_masked(
            &last_tool_result(&double),
            p.path(),
            &generated(p.path(), at),
        );
    }
}

/// A red test run (the script exits 1): gemini's hook gets it whole; the model gets the
/// summary, the failing test and its assertion message, once.
#[test]
fn a_red_test_run_reaches_the_model_with_its_failure_and_message() {
    let Some(cli) = GEMINI.cli() else {
        return;
    };
    let p = Proj::new();
    init_gemini(&p);
    std::fs::write(p.path().join("red.sh"), RED).unwrap();
    let home = tempfile::tempdir().unwrap();
    let double = GEMINI.double(one_call(
        "run_shell_command",
        json!({"command": "sh red.sh", "description": "run the tests"}),
    ));
    let out = session(&cli, &p, home.path(), &double, "run_shell_command(sh)");
    assert!(out.status.success(), "{}", text(&out));
    assert_red_reached(&last_tool_result(&double));
    assert_eq!(p.mask_records(), 1, "one record for one output");
}

#[test]
fn a_small_output_reaches_the_model_unmasked() {
    let Some(cli) = GEMINI.cli() else {
        return;
    };
    let p = Proj::new();
    init_gemini(&p);
    let home = tempfile::tempdir().unwrap();
    let double = GEMINI.double(one_call(
        "run_shell_command",
        json!({"command": "echo hello baton", "description": "say hello"}),
    ));
    let out = session(&cli, &p, home.path(), &double, "run_shell_command(echo)");
    assert!(out.status.success(), "{}", text(&out));
    let seen = last_tool_result(&double);
    assert!(seen.contains("hello baton"), "{seen}");
    assert!(!seen.contains("masked"), "{seen}");
}

#[test]
fn batons_mcp_tools_are_offered_and_a_call_round_trips() {
    let Some(cli) = GEMINI.cli() else {
        return;
    };
    let p = Proj::new();
    init_gemini(&p);
    let home = tempfile::tempdir().unwrap();
    let double = GEMINI.double(one_call("mcp_baton_budget", json!({"text": "hello world"})));
    let out = session(&cli, &p, home.path(), &double, "read_file");
    assert!(out.status.success(), "{}", text(&out));
    let tools = double.requests().last().unwrap().tools();
    for t in ["mcp_baton_budget", "mcp_baton_mask", "mcp_baton_status"] {
        assert!(tools.iter().any(|x| x == t), "{t} not in {tools:?}");
    }
    let seen = last_tool_result(&double);
    assert!(seen.contains("STATUS: success"), "{seen}");
    assert!(seen.contains("tokens (o200k_base)"), "{seen}");
}

/// Under `baton run`, with nothing of baton in the project's or the user's settings, gemini
/// is offered baton's MCP tools as claude and codex are, and a call is answered.
#[test]
fn batons_mcp_tool_call_round_trips_in_a_run() {
    mcp_tool_call_round_trips_in_a_run(&GEMINI, "mcp_baton_budget");
}

#[test]
fn baton_run_commits_every_story_with_gemini_under_batons_defaults() {
    commits_every_story(&GEMINI);
}

#[test]
fn an_auth_failure_stops_the_run_within_seconds_and_commits_nothing() {
    an_auth_failure_stops_the_run(&GEMINI);
}

#[test]
fn a_refused_connection_stops_the_run_as_no_network_and_commits_nothing() {
    a_refused_connection_stops_the_run(&GEMINI);
}

#[test]
fn a_server_error_once_is_retried_without_spending_an_attempt() {
    recovers_from(&GEMINI, 1, || Reply::error(500, "internal"));
}

#[test]
fn a_short_rate_limit_is_waited_out_without_spending_an_attempt() {
    recovers_from(&GEMINI, 2, || Reply::rate_limited(1));
}

#[test]
fn a_stream_cut_mid_message_is_retried_without_spending_an_attempt() {
    recovers_from(&GEMINI, 1, || Reply::Cut);
}

/// A spent daily quota, as the API answers it: gemini says so and gives up; baton pauses the
/// run as a spent limit (exit 7) until the next midnight Pacific time, and `--resume` finishes it.
#[test]
fn a_spent_daily_quota_pauses_the_run_and_resume_finishes_it() {
    crate::util::real_agent::a_spent_limit_pauses_and_resume_finishes(
        &GEMINI,
        "exhausted your daily quota",
    );
}

/// A large file read whole with read_file reaches the model outline first (gemini shows a
/// hook's replacement as the tool's error text); the same file asked for by line range, whole.
#[test]
fn a_large_file_read_reaches_the_model_outline_first() {
    let Some(cli) = GEMINI.cli() else {
        return;
    };
    let p = Proj::new();
    init_gemini(&p);
    let src = crate::real_claude::big_source(150);
    let file = p.write("src/lib.rs", &src);
    let lines = src.lines().count();
    let home = tempfile::tempdir().unwrap();
    let path = file.display().to_string();
    let double = GEMINI.double(Box::new(
        move |r: &crate::util::model_double::Request| match (r.tools().is_empty(), r.turns()) {
            (false, 0) => Reply::tool("read_file", json!({"file_path": path})),
            (false, 1) => Reply::tool(
                "read_file",
                json!({"file_path": path, "start_line": 1, "end_line": lines}),
            ),
            _ => Reply::Text("DONE".into()),
        },
    ));
    let out = session(&cli, &p, home.path(), &double, "read_file");
    assert!(out.status.success(), "{}", text(&out));
    let results = double.requests().last().unwrap().tool_results();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].contains("//! A module."), "{}", results[0]);
    assert!(
        results[0].contains("baton extract FILE --symbol NAME"),
        "{}",
        results[0]
    );
    // The outline names every function; the body of the last is not shown.
    assert!(
        results[0].contains("pub fn function_149("),
        "{}",
        results[0]
    );
    assert!(!results[0].contains("x + 149;"), "{}", results[0]);
    assert!(results[1].contains("x + 149;"), "{}", results[1]);
}

/// gemini retries a 429 itself for about four minutes: still refused after baton's patience,
/// it is stopped, baton backs off, pauses the run when the limit outlasts that, and `--resume`
/// finishes it.
#[test]
fn a_rate_limit_past_the_backoff_pauses_the_run_and_resume_finishes_it() {
    pauses_on_a_rate_limit_past_the_backoff(&GEMINI);
}

/// `baton init gemini --global` reaches a project without `baton init` (a folder gemini trusts
/// or not: the user's settings need no trust); in one that has its own, an output is masked
/// once (the user-level hook steps aside).
#[test]
fn user_level_wiring_masks_everywhere_and_never_twice() {
    let Some(cli) = GEMINI.cli() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let p = Proj::new();
    let o = p
        .cmd(&["init", "gemini", "--global"])
        .env("HOME", h)
        .env_remove("GEMINI_CLI_HOME")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(p.path().join("gen.sh"), GEN).unwrap();
    let masked = |at: usize| {
        let double = GEMINI.double(one_call(
            "run_shell_command",
            json!({"command": format!("sh gen.sh {at}"), "description": "run the tests"}),
        ));
        let out = session(&cli, &p, h, &double, "run_shell_command(sh)");
        assert!(out.status.success(), "{}", text(&out));
        assert_masked(
            &last_tool_result(&double),
            p.path(),
            &generated(p.path(), at),
        );
    };
    masked(0);
    assert_eq!(p.mask_records(), 1, "the user-level hook masked it");
    init_gemini(&p);
    masked(3699);
    assert_eq!(
        p.mask_records(),
        2,
        "once: the user-level hook stepped aside"
    );
}

/// A model API answering 500 to every request: gemini is not left retrying for minutes; the
/// run pauses, the server errors named as such.
#[test]
fn an_api_answering_500_pauses_the_run_naming_the_server_errors() {
    a_failing_api_pauses_the_run_naming_it(
        &GEMINI,
        || Reply::error(500, "internal"),
        "the API answers 500 (a server error) to every request: gemini retried",
        std::time::Duration::from_secs(120),
    );
}

/// A model API that takes every request and never answers: gemini prints nothing until its
/// end, so baton watches its group (no tool's process running, nothing received) and after
/// `api_patience_secs` stops it; the run pauses naming it (not "no network").
#[test]
fn an_api_that_never_answers_pauses_the_run_naming_it() {
    a_failing_api_pauses_the_run_naming_it(
        &GEMINI,
        || Reply::Silent,
        "no answer from the model API",
        std::time::Duration::from_secs(90),
    );
}
