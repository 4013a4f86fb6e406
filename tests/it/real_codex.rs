//! The real `codex` CLI (codex 0.171.0) answered by the model double (the OpenAI Responses
//! API through a `model_providers` entry, as a user configures one): `baton run` commits an
//! epic under baton's defaults with the tests run through baton (by its path: codex's login
//! shell has its own PATH), baton's MCP tools are offered and callable, a project's commands
//! likely to print a lot are routed through baton before codex cuts their output, and the
//! API's failures are read as what they are.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::util::model_double::{ModelDouble, Reply, Request};
use crate::util::real_agent::{
    CODEX, a_failing_api_pauses_the_run_naming_it, a_refused_connection_stops_the_run,
    an_auth_failure_stops_the_run, assert_masked_as, assert_red_reached, commits_every_story,
    generated, last_tool_result, mcp_tool_call_round_trips_in_a_run, one_call,
    pauses_on_a_rate_limit_past_the_backoff, recovers_from,
};
use crate::util::scripted_agent::{GEN, RED, one_story_project};
use crate::util::{Proj, text};

#[test]
fn baton_run_commits_every_story_with_codex_under_batons_defaults() {
    let Some(double) = commits_every_story(&CODEX) else {
        return;
    };
    // baton's MCP server came with every call, its tools offered.
    let tools = double.requests()[0].tools();
    assert!(tools.iter().any(|t| t == "mcp__baton__budget"), "{tools:?}");
}

#[test]
fn batons_mcp_tool_call_round_trips_in_a_run() {
    mcp_tool_call_round_trips_in_a_run(&CODEX, "mcp__baton__budget");
}

#[test]
fn an_auth_failure_stops_the_run_within_seconds_and_commits_nothing() {
    an_auth_failure_stops_the_run(&CODEX);
}

#[test]
fn a_refused_connection_stops_the_run_as_no_network_and_commits_nothing() {
    a_refused_connection_stops_the_run(&CODEX);
}

#[test]
fn a_server_error_once_is_retried_without_spending_an_attempt() {
    recovers_from(&CODEX, 1, || Reply::error(500, "internal"));
}

#[test]
fn a_short_rate_limit_is_waited_out_without_spending_an_attempt() {
    recovers_from(&CODEX, 2, || Reply::rate_limited(1));
}

#[test]
fn a_stream_cut_mid_message_is_retried_without_spending_an_attempt() {
    recovers_from(&CODEX, 1, || Reply::Cut);
}

/// What a user does in codex before a project's hooks run: trust the project
/// (`[projects."DIR"] trust_level = "trusted"`) and, in `/hooks`, each hook, which codex
/// records as `[hooks.state."KEY"] trusted_hash = "…"`, the hash codex computes itself (asked
/// here through `codex app-server`'s `hooks/list`, as `/hooks` shows it).
///
/// Returns the lines it added to `config.toml`, for a config written anew later.
fn trust_project_and_hooks(cli: &Path, codex_home: &Path, dir: &Path) -> String {
    let config = codex_home.join("config.toml");
    let before = std::fs::read_to_string(&config).unwrap();
    let mut text = before.clone();
    text.push_str(&format!(
        "\n[projects.{}]\ntrust_level = \"trusted\"\n",
        toml::Value::String(dir.display().to_string())
    ));
    std::fs::write(&config, &text).unwrap();
    let mut server = Command::new(cli)
        .arg("app-server")
        .current_dir(dir)
        .env("CODEX_HOME", codex_home)
        .env("HOME", codex_home.parent().unwrap())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut ask = |msg: Value| {
        writeln!(stdin, "{msg}").unwrap();
        let id = msg["id"].clone();
        loop {
            let line = lines.next().expect("codex app-server answered").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    ask(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"clientInfo": {"name": "baton-tests", "version": "1"}}}));
    let listed = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list",
                            "params": {"cwds": [dir]}}));
    let _ = server.kill();
    let _ = server.wait();
    let hooks = listed["result"]["data"][0]["hooks"]
        .as_array()
        .unwrap()
        .clone();
    assert!(hooks.len() >= 4, "{listed}");
    for h in &hooks {
        text.push_str(&format!(
            "\n[hooks.state.{}]\ntrusted_hash = {}\n",
            toml::Value::String(h["key"].as_str().unwrap().into()),
            toml::Value::String(h["currentHash"].as_str().unwrap().into())
        ));
    }
    std::fs::write(&config, &text).unwrap();
    text[before.len()..].to_string()
}

/// A session the user starts in the project: `codex exec PROMPT`, their config written for
/// `double` with the `trust` lines of [`trust_project_and_hooks`] after it.
fn session(cli: &Path, p: &Proj, home: &Path, double: &ModelDouble, trust: &str) -> Output {
    let c = CODEX.env(Command::new(cli), cli, p.path(), home, double);
    let config = home.join(".codex/config.toml");
    let mut cfg = std::fs::read_to_string(&config).unwrap();
    cfg.push_str(trust);
    std::fs::write(&config, cfg).unwrap();
    let mut c = c;
    c.args(["exec", "--json", "--sandbox", "workspace-write", "run it"])
        .output()
        .unwrap()
}

/// The user's codex config as codex has it, written anew (no trust lines): a provider whose
/// double is never asked (each session writes its own).
fn write_user_config(cli: &Path, dir: &Path, home: &Path) {
    let placeholder = CODEX.double(Box::new(|_| Reply::Text("unused".into())));
    CODEX.env(Command::new(cli), cli, dir, home, &placeholder);
}

/// A session that runs the project's test command failing at line `at`: the model sees it
/// routed through baton and masked, its failure kept, the whole output in the scratch file.
fn routed_and_masked(cli: &Path, p: &Proj, home: &Path, trust: &str, at: usize) {
    let cmd = json!({"cmd": format!("sh gen.sh {at}")});
    let double = CODEX.double(one_call("exec_command", cmd));
    let out = session(cli, p, home, &double, trust);
    assert!(out.status.success(), "{}", text(&out));
    assert_masked_as(
        &last_tool_result(&double),
        p.path(),
        &generated(p.path(), at),
        true,
    );
}

/// A project whose own test command (`sh gen.sh`, printing a lot) is routed through baton, as
/// `cargo test` is by default.
fn routed_project() -> Proj {
    let p = Proj::new();
    std::fs::write(p.path().join("gen.sh"), GEN).unwrap();
    std::fs::write(
        p.path().join("baton.toml"),
        "[mask]\nroute = [\"sh gen.sh\"]\n",
    )
    .unwrap();
    p
}

#[test]
fn after_init_a_large_output_is_routed_through_baton_and_batons_tools_answer() {
    let Some(cli) = CODEX.cli() else {
        return;
    };
    let p = routed_project();
    let o = p.cmd(&["init", "codex"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let home = tempfile::tempdir().unwrap();
    // The user's config as codex has it, then the project and baton's hooks trusted.
    write_user_config(&cli, p.path(), home.path());
    let trust = trust_project_and_hooks(&cli, &home.path().join(".codex"), p.path());
    for at in [0, 1850, 3699] {
        routed_and_masked(&cli, &p, home.path(), &trust, at);
    }
    // A command that prints little is not routed: the model sees it as it is.
    let double = CODEX.double(one_call("exec_command", json!({"cmd": "echo hello baton"})));
    let out = session(&cli, &p, home.path(), &double, &trust);
    assert!(out.status.success(), "{}", text(&out));
    let seen = last_tool_result(&double);
    assert!(
        seen.contains("hello baton") && !seen.contains("masked"),
        "{seen}"
    );
    // The project's MCP server (`baton init codex`): offered, and a call answered.
    let double = CODEX.double(one_call(
        "mcp__baton__budget",
        json!({"text": "hello world"}),
    ));
    let out = session(&cli, &p, home.path(), &double, &trust);
    assert!(out.status.success(), "{}", text(&out));
    let tools = double.requests()[0].tools();
    assert!(tools.iter().any(|t| t == "mcp__baton__budget"), "{tools:?}");
    assert!(
        last_tool_result(&double).contains("tokens (o200k_base)"),
        "{}",
        last_tool_result(&double)
    );
}

/// A red test run as the user runs it (`make test`, routed by default; the script exits 1,
/// make 2): the model gets the summary of all of it, the failing test and its assertion
/// message, once, with make's exit code.
#[test]
fn a_red_test_run_reaches_the_model_with_its_failure_and_message() {
    let Some(cli) = CODEX.cli() else {
        return;
    };
    let p = Proj::new();
    std::fs::write(p.path().join("red.sh"), RED).unwrap();
    std::fs::write(p.path().join("Makefile"), "test:\n\tsh red.sh\n").unwrap();
    let o = p.cmd(&["init", "codex"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let home = tempfile::tempdir().unwrap();
    write_user_config(&cli, p.path(), home.path());
    let trust = trust_project_and_hooks(&cli, &home.path().join(".codex"), p.path());
    let double = CODEX.double(one_call("exec_command", json!({"cmd": "make test"})));
    let out = session(&cli, &p, home.path(), &double, &trust);
    assert!(out.status.success(), "{}", text(&out));
    let seen = last_tool_result(&double);
    assert_red_reached(&seen);
    assert!(seen.contains("\"exit_code\": 2"), "{seen}");
    assert_eq!(p.mask_records(), 1, "one record for one output");
}

/// A Rust file of about 60 KB: 540 functions, each a few lines, then one more.
fn big_source() -> String {
    let mut s = String::from("//! A large module.\n\n");
    for i in 0..540 {
        s.push_str(&format!(
            "/// Adds {i}.\npub fn add_{i}(x: u64) -> u64 {{\n    let y = x + {i};\n    let z = y.wrapping_mul(3);\n    z - y * 2\n}}\n\n"
        ));
    }
    s.push_str("pub fn the_last_one() -> u8 {\n    42\n}\n");
    s
}

/// A whole read of a 60 KB file (`cat`, routed through baton after `baton init codex`)
/// reaches the model once, outline first, with every definition's line range and how to read
/// more, never masked again by baton's own hook; a second whole read in the session is the
/// whole file. One record for the first read, none for the second.
#[test]
fn a_whole_read_of_a_large_file_reaches_the_model_outline_first_once() {
    let Some(cli) = CODEX.cli() else {
        return;
    };
    let p = Proj::new();
    let source = big_source();
    assert!(
        source.len() > 55_000 && source.len() < 65_000,
        "{}",
        source.len()
    );
    p.write("src/big.rs", &source);
    let o = p.cmd(&["init", "codex"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let home = tempfile::tempdir().unwrap();
    write_user_config(&cli, p.path(), home.path());
    let trust = trust_project_and_hooks(&cli, &home.path().join(".codex"), p.path());
    let double = CODEX.double(Box::new(|r: &Request| match r.turns() {
        _ if r.tools().is_empty() => Reply::Text("ok".into()),
        0 | 1 => Reply::tool("exec_command", json!({"cmd": "cat src/big.rs"})),
        _ => Reply::Text("DONE".into()),
    }));
    let out = session(&cli, &p, home.path(), &double, &trust);
    assert!(out.status.success(), "{}", text(&out));
    let results = double.requests().last().unwrap().tool_results();
    assert_eq!(results.len(), 2, "{results:#?}");
    let first = &results[0];
    assert_eq!(first.matches("its outline follows").count(), 1, "{first}");
    assert!(first.contains("add_0"), "{first}");
    assert!(!first.contains("full_output_path"), "masked again: {first}");
    assert!(
        first.chars().count() < 12_000,
        "{} chars",
        first.chars().count()
    );
    assert!(!first.contains("    42\n}"), "the whole file: {first}");
    let second = &results[1];
    assert!(second.contains("pub fn the_last_one() -> u8 {"), "{second}");
    assert!(second.contains("add_539"), "{second}");
    assert_eq!(
        p.mask_records(),
        1,
        "one record for the outlined read, none for the whole one"
    );
}

/// `baton init codex --global` (in `$CODEX_HOME`, as codex reads it) reaches a project without
/// `baton init` once the user trusted the hooks; in one that has its own, an output is routed
/// and masked once (the user-level hooks step aside).
#[test]
fn user_level_wiring_routes_everywhere_and_never_twice() {
    let Some(cli) = CODEX.cli() else {
        return;
    };
    let p = routed_project();
    let home = tempfile::tempdir().unwrap();
    // The user's config as codex has it (written anew: the trust lines are added to it).
    let user_config = || write_user_config(&cli, p.path(), home.path());
    user_config();
    let codex_home = home.path().join(".codex");
    let o = p
        .cmd(&["init", "codex", "--global"])
        .env("HOME", home.path())
        .env("CODEX_HOME", &codex_home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(codex_home.join("hooks.json").is_file());
    let trust = trust_project_and_hooks(&cli, &codex_home, p.path());
    routed_and_masked(&cli, &p, home.path(), &trust, 0);
    assert_eq!(p.mask_records(), 1, "the user-level hooks routed it");
    let o = p.cmd(&["init", "codex"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    user_config();
    let trust = trust_project_and_hooks(&cli, &codex_home, p.path());
    routed_and_masked(&cli, &p, home.path(), &trust, 3699);
    assert_eq!(
        p.mask_records(),
        2,
        "once: the user-level hooks stepped aside"
    );
}

/// `baton doctor` asks codex itself whether baton's hooks are trusted (`codex app-server`'s
/// `hooks/list`): before `/hooks`, all of them are not, and doctor says what to do; after, all
/// are, and codex uses baton here.
#[test]
fn doctor_reads_codexs_own_verdict_on_batons_hooks() {
    let Some(cli) = CODEX.cli() else {
        return;
    };
    let p = Proj::new();
    let o = p.cmd(&["init", "codex"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let home = tempfile::tempdir().unwrap();
    // The user's codex config, written once (the environment helper writes it anew).
    write_user_config(&cli, p.path(), home.path());
    let doctor = || -> Value {
        let o = Command::new(crate::util::bin())
            .current_dir(p.path())
            .env("HOME", home.path())
            .env("CODEX_HOME", home.path().join(".codex"))
            .env("PATH", crate::util::path_with(&[cli.parent().unwrap()]))
            .args(["doctor", "--agents", "--json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["agent"] == "codex")
            .unwrap()
            .clone()
    };
    // The project trusted, the hooks not yet.
    let config = home.path().join(".codex/config.toml");
    let before = doctor();
    let kept = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!(
            "{kept}\n[projects.{}]\ntrust_level = \"trusted\"\n",
            toml::Value::String(p.path().display().to_string())
        ),
    )
    .unwrap();
    let untrusted = doctor();
    let statuses = |a: &Value| -> Vec<String> {
        a["hook_trust"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["status"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(before["wired_at"], json!(["project"]));
    let s = statuses(&untrusted);
    assert!(
        s.len() >= 4 && s.iter().all(|s| s != "trusted"),
        "{untrusted}"
    );
    assert!(
        untrusted["todo"].to_string().contains("run `/hooks`"),
        "{untrusted}"
    );
    std::fs::write(&config, &kept).unwrap();
    trust_project_and_hooks(&cli, &home.path().join(".codex"), p.path());
    let trusted = doctor();
    assert!(
        statuses(&trusted).iter().all(|s| s == "trusted"),
        "{trusted}"
    );
    assert!(!trusted["todo"].to_string().contains("/hooks"), "{trusted}");
}

/// codex would wait out a 429's `retry-after` itself (an hour here): baton stops it at its
/// first reconnect after the 429, backs off, pauses the run when the limit outlasts that, and
/// `--resume` finishes it.
#[test]
fn a_rate_limit_past_the_backoff_pauses_the_run_and_resume_finishes_it() {
    pauses_on_a_rate_limit_past_the_backoff(&CODEX);
}

/// A spent ChatGPT-plan limit, as the API answers it (a 429 `usage_limit_reached` with its
/// `resets_at`): codex words it ("You've hit your usage limit … try again at …"); baton pauses
/// the run naming the reset, and `--resume` finishes the story once the limit is lifted.
#[test]
fn a_spent_usage_limit_pauses_the_run_and_resume_finishes_it() {
    crate::util::real_agent::a_spent_limit_pauses_and_resume_finishes(
        &CODEX,
        "hit your usage limit",
    );
}

/// With `--wait-for-quota`, a spent limit whose reset codex names ("try again at 5:12 PM") is
/// waited out until that reset and the margin, then the run goes on by itself and commits the
/// story once. (The reset is this minute, so the wait stays short.)
#[test]
fn with_wait_for_quota_the_named_reset_is_waited_out_and_the_run_finishes() {
    if CODEX.cli().is_none() {
        return;
    }
    let resets_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let agent =
        crate::util::scripted_agent::epic_agent(&dir, crate::util::scripted_agent::Dialect::Codex);
    let refused = std::sync::atomic::AtomicBool::new(false);
    let double = CODEX.double(Box::new(move |r: &Request| {
        if r.tools().is_empty() {
            Reply::Text("ok".into())
        } else if !refused.swap(true, std::sync::atomic::Ordering::SeqCst) {
            Reply::QuotaSpent { resets_at }
        } else {
            agent(r)
        }
    }));
    let started = std::time::Instant::now();
    let (out, _) = CODEX.baton_run(
        &dir,
        &double,
        &["epic-execute", "1", "--agent", "codex", "--wait-for-quota"],
    );
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("codex's usage limit is spent: waiting until it resets"),
        "the reset was read, not the backoff: {said}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(180));
    assert_eq!(crate::util::scripted_agent::story_commits(&dir).len(), 1);
}

/// A model API answering 500 to every request: codex is not left retrying for minutes; the
/// run pauses, the server errors named as such.
#[test]
fn an_api_answering_500_pauses_the_run_naming_the_server_errors() {
    a_failing_api_pauses_the_run_naming_it(
        &CODEX,
        || Reply::error(500, "internal"),
        "the API answers with server errors",
        std::time::Duration::from_secs(120),
    );
}

/// A model API that takes every request and never answers: after `api_patience_secs` of
/// codex waiting with nothing heard, baton stops it and the run pauses naming it. About 25 s
/// where baton reads the sockets' received bytes; a kernel that does not let it (before 5.6,
/// a hardened ptrace scope) leaves the coarser measure, which codex's own reading of its
/// files for its first minute or two under load holds back: the bound allows for that.
#[test]
fn an_api_that_never_answers_pauses_the_run_naming_it() {
    a_failing_api_pauses_the_run_naming_it(
        &CODEX,
        || Reply::Silent,
        "no answer from the model API for 20 s",
        std::time::Duration::from_secs(240),
    );
}
