//! The real `gemini` CLI (gemini-cli 0.61.0) answered by the model double: under baton's
//! defaults it may run the tests and `git diff` (and only baton's and git's read commands), a
//! session in a folder the user trusts masks through baton's hook and calls baton's MCP tools,
//! and its API failures are read as what they are.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use baton::context::tokens::Encoding;
use serde_json::{Value, json};

use crate::util::model_double::{ModelDouble, Reply, Request, Script};
use crate::util::scripted_agent::{
    GEMINI, GEN, epic_agent, failing_first, finished_phases, one_story_project, project_tests,
    story_commits,
};
use crate::util::{Proj, agent_cli, bin, demo_repo, git, path_with, text};

/// The user's environment for gemini, logged in with an API key (the settings gemini needs for
/// that), whatever `c` runs: gemini itself or baton.
fn gemini_env(
    mut c: Command,
    cli: &Path,
    dir: &Path,
    home: &Path,
    double: &ModelDouble,
) -> Command {
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let user = json!({"security": {"auth": {"selectedType": "gemini-api-key"}}});
    std::fs::write(home.join(".gemini/settings.json"), user.to_string()).unwrap();
    c.current_dir(dir)
        .env("HOME", home)
        .env("GOOGLE_GEMINI_BASE_URL", &double.url)
        .env("GEMINI_API_KEY", "gemini-double-key")
        .env(
            "PATH",
            path_with(&[bin().parent().unwrap(), cli.parent().unwrap()]),
        )
        .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
        .env_remove("BATON_RUN_DIR")
        .env_remove("BATON_RUN_PHASE");
    c
}

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
    gemini_env(Command::new(cli), cli, p.path(), home, double)
        .args(["-p", "run the tests", "--output-format", "json"])
        .args(["--approval-mode", "auto_edit"])
        .arg(format!("--allowed-tools={allow}"))
        .output()
        .unwrap()
}

/// A model that makes one tool call, then ends its turn.
fn one_call(name: &str, input: Value) -> Script {
    let name = name.to_string();
    Box::new(move |r: &Request| {
        if r.turns() > 0 {
            Reply::Text("DONE".into())
        } else {
            Reply::tool(&name, input.clone())
        }
    })
}

fn shown(double: &ModelDouble) -> String {
    let reqs = double.requests();
    let last = reqs.last().expect("gemini sent requests");
    last.tool_results()
        .pop()
        .expect("a tool result was sent back")
}

fn init_gemini(p: &Proj) {
    let o = p.cmd(&["init", "gemini"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(p.path().join("gen.sh"), GEN).unwrap();
}

#[test]
fn a_large_output_reaches_the_model_masked_with_its_failure_wherever_it_is() {
    let Some(cli) = agent_cli("gemini") else {
        return;
    };
    let p = Proj::new();
    init_gemini(&p);
    let home = tempfile::tempdir().unwrap();
    let path_re = regex::Regex::new(r#""full_output_path": "([^"]+)""#).unwrap();
    for at in [0, 1850, 3699] {
        let cmd = format!("sh gen.sh {at}");
        let double = ModelDouble::gemini(one_call(
            "run_shell_command",
            json!({"command": cmd, "description": "run the tests"}),
        ));
        let out = session(&cli, &p, home.path(), &double, "run_shell_command(sh)");
        assert!(out.status.success(), "{}", text(&out));
        let seen = shown(&double);
        let tokens = Encoding::O200kBase.count(&seen);
        assert!(tokens <= 2_000, "{tokens} tokens shown: {seen}");
        assert!(seen.contains("tests::the_failing_one"), "at {at}: {seen}");
        // gemini wraps the hook's text in its own lines: the path is read from the summary.
        let path = path_re
            .captures(&seen)
            .unwrap_or_else(|| panic!("no full_output_path in {seen}"))[1]
            .to_string();
        let kept = std::fs::read_to_string(p.path().join(path)).unwrap();
        // gemini hands its hook the output with its own lines around it: all of it is kept.
        assert!(kept.len() > 200_000, "{}", kept.len());
        assert!(kept.contains("tests::case_00001 ") && kept.contains("tests::case_03698 "));
        assert!(kept.contains("tests::the_failing_one"));
    }
}

#[test]
fn a_small_output_reaches_the_model_unmasked() {
    let Some(cli) = agent_cli("gemini") else {
        return;
    };
    let p = Proj::new();
    init_gemini(&p);
    let home = tempfile::tempdir().unwrap();
    let double = ModelDouble::gemini(one_call(
        "run_shell_command",
        json!({"command": "echo hello baton", "description": "say hello"}),
    ));
    let out = session(&cli, &p, home.path(), &double, "run_shell_command(echo)");
    assert!(out.status.success(), "{}", text(&out));
    let seen = shown(&double);
    assert!(seen.contains("hello baton"), "{seen}");
    assert!(!seen.contains("masked"), "{seen}");
}

#[test]
fn batons_mcp_tools_are_offered_and_a_call_round_trips() {
    let Some(cli) = agent_cli("gemini") else {
        return;
    };
    let p = Proj::new();
    init_gemini(&p);
    let home = tempfile::tempdir().unwrap();
    let double = ModelDouble::gemini(one_call("mcp_baton_budget", json!({"text": "hello world"})));
    let out = session(&cli, &p, home.path(), &double, "read_file");
    assert!(out.status.success(), "{}", text(&out));
    let tools = double.requests().last().unwrap().tools();
    for t in ["mcp_baton_budget", "mcp_baton_mask", "mcp_baton_status"] {
        assert!(tools.iter().any(|x| x == t), "{t} not in {tools:?}");
    }
    let seen = shown(&double);
    assert!(seen.contains("STATUS: success"), "{seen}");
    assert!(seen.contains("tokens (o200k_base)"), "{seen}");
}

/// `baton run ARGS` in `dir` with gemini answered by `double`; its output and how long.
fn baton_run(dir: &Path, double: &ModelDouble, args: &[&str]) -> (Output, Duration) {
    let cli = agent_cli("gemini").expect("checked by the caller");
    let home = dir.parent().unwrap().join("home");
    let started = Instant::now();
    let out = gemini_env(Command::new(bin()), &cli, dir, &home, double)
        // baton started by its path, not on PATH: the agents still reach it.
        .env("PATH", path_with(&[cli.parent().unwrap()]))
        .arg("run")
        .args(args)
        .output()
        .unwrap();
    (out, started.elapsed())
}

#[test]
fn baton_run_commits_every_story_with_gemini_under_batons_defaults() {
    if agent_cli("gemini").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    demo_repo(&dir, "");
    std::fs::write(dir.join("run-tests.sh"), project_tests()).unwrap();
    git(&dir, &["add", "run-tests.sh"]);
    git(&dir, &["commit", "-q", "-m", "tests"]);
    let double = ModelDouble::gemini(epic_agent(&dir, GEMINI));
    let (out, _) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "gemini"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(story_commits(&dir).len(), 4, "{:?}", story_commits(&dir));
    for id in ["1.1", "1.2", "1.3", "1.4"] {
        let f = dir.join(format!("src/story_{}.txt", id.replace('.', "_")));
        assert!(f.is_file(), "{}", f.display());
    }
    let results: Vec<String> = double
        .requests()
        .iter()
        .flat_map(|r| r.tool_results())
        .collect();
    // The dev's test run and the reviewer's diff reached the model.
    assert!(
        results.iter().any(|t| t.contains("400 passed")),
        "{results:#?}"
    );
    assert!(
        results.iter().any(|t| t.contains("+story 1.1")),
        "{results:#?}"
    );
    assert_eq!(git(&dir, &["status", "--porcelain"]), "");
}

#[test]
fn an_auth_failure_stops_the_run_within_seconds_and_commits_nothing() {
    if agent_cli("gemini").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = ModelDouble::gemini(Box::new(|_| Reply::error(401, "API key not valid")));
    let (out, took) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "gemini"]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(story_commits(&dir), Vec::<String>::new());
}

/// One story through a model whose first answers are `fail`: the CLI's own retries, or baton's
/// backoff, carry it, and no attempt is spent.
fn recovers_from(first: usize, fail: fn() -> Reply) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = ModelDouble::gemini(failing_first(&dir, GEMINI, first, fail));
    let (out, took) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "gemini"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(took < Duration::from_secs(120), "{took:?}");
    assert_eq!(story_commits(&dir).len(), 1);
    let finished = finished_phases(&dir);
    assert!(finished.len() >= 3, "{finished:?}");
    for e in finished {
        assert_eq!(e["attempt"], 1, "{e}");
    }
}

#[test]
fn a_server_error_once_is_retried_without_spending_an_attempt() {
    if agent_cli("gemini").is_some() {
        recovers_from(1, || Reply::error(500, "internal"));
    }
}

#[test]
fn a_short_rate_limit_is_waited_out_without_spending_an_attempt() {
    if agent_cli("gemini").is_some() {
        recovers_from(2, || Reply::rate_limited(1));
    }
}

#[test]
fn a_stream_cut_mid_message_is_retried_without_spending_an_attempt() {
    if agent_cli("gemini").is_some() {
        recovers_from(1, || Reply::Cut);
    }
}

#[test]
fn a_refused_connection_stops_the_run_as_no_network_and_commits_nothing() {
    if agent_cli("gemini").is_none() {
        return;
    }
    // Nothing listens: gemini cannot send a request.
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let mut gone = ModelDouble::gemini(Box::new(|_| Reply::Text("never".into())));
    gone.url = format!(
        "http://{}",
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    );
    let (out, took) = baton_run(&dir, &gone, &["epic-execute", "1", "--agent", "gemini"]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    assert!(text(&out).contains("no network"), "{}", text(&out));
    assert!(took < Duration::from_secs(90), "{took:?}");
    assert_eq!(story_commits(&dir), Vec::<String>::new());
}
