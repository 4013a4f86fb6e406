//! The real `codex` CLI (codex 0.171.0) answered by the model double (the OpenAI Responses
//! API through a `model_providers` entry, as a user configures one): `baton run` commits an
//! epic under baton's defaults with the tests run through baton (by its path: codex's login
//! shell has its own PATH), baton's MCP tools are offered and callable, and the API's
//! failures are read as what they are.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::model_double::{ModelDouble, Reply, Request};
use crate::util::scripted_agent::{
    CODEX, epic_agent, failing_first, finished_phases, one_story_project, project_tests,
    story_commits,
};
use crate::util::{agent_cli, bin, demo_repo, git, path_with, text};

/// The user's codex: its own `CODEX_HOME` with the provider pointed at the double and a model
/// codex knows (with an unknown one codex offers the model no tools).
fn codex_env(mut c: Command, cli: &Path, dir: &Path, home: &Path, double: &ModelDouble) -> Command {
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = format!(
        "model = \"gpt-5-codex\"\nmodel_provider = \"double\"\n\n[model_providers.double]\n\
         name = \"double\"\nbase_url = \"{}/v1\"\nenv_key = \"BATON_DOUBLE_KEY\"\n\
         wire_api = \"responses\"\n",
        double.url
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    c.current_dir(dir)
        .env("HOME", home)
        .env("CODEX_HOME", &codex_home)
        .env("BATON_DOUBLE_KEY", "sk-double")
        // baton started by its path, not on PATH: the agents still reach it.
        .env("PATH", path_with(&[cli.parent().unwrap()]))
        .env_remove("OPENAI_API_KEY")
        .env_remove("BATON_RUN_DIR")
        .env_remove("BATON_RUN_PHASE");
    c
}

fn baton_run(dir: &Path, double: &ModelDouble, args: &[&str]) -> (Output, Duration) {
    let cli = agent_cli("codex").expect("checked by the caller");
    let home = dir.parent().unwrap().join("home");
    let started = Instant::now();
    let out = codex_env(Command::new(bin()), &cli, dir, &home, double)
        .arg("run")
        .args(args)
        .output()
        .unwrap();
    (out, started.elapsed())
}

#[test]
fn baton_run_commits_every_story_with_codex_under_batons_defaults() {
    if agent_cli("codex").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    demo_repo(&dir, "");
    std::fs::write(dir.join("run-tests.sh"), project_tests()).unwrap();
    git(&dir, &["add", "run-tests.sh"]);
    git(&dir, &["commit", "-q", "-m", "tests"]);
    let double = ModelDouble::openai(epic_agent(&dir, CODEX));
    let (out, _) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "codex"]);
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
    // The dev's test run (through baton, by its path, in codex's login shell) and the
    // reviewer's diff reached the model.
    assert!(
        results.iter().any(|t| t.contains("400 passed")),
        "{results:#?}"
    );
    assert!(
        results.iter().any(|t| t.contains("+story 1.1")),
        "{results:#?}"
    );
    // baton's MCP server came with every call, its tools offered.
    let tools = double.requests()[0].tools();
    assert!(tools.iter().any(|t| t == "mcp__baton__budget"), "{tools:?}");
    assert_eq!(git(&dir, &["status", "--porcelain"]), "");
}

#[test]
fn an_auth_failure_stops_the_run_within_seconds_and_commits_nothing() {
    if agent_cli("codex").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = ModelDouble::openai(Box::new(|_| Reply::error(401, "Incorrect API key")));
    let (out, took) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "codex"]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(story_commits(&dir), Vec::<String>::new());
}

#[test]
fn a_server_error_once_is_retried_without_spending_an_attempt() {
    if agent_cli("codex").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = ModelDouble::openai(failing_first(&dir, CODEX, 1, || {
        Reply::error(500, "internal")
    }));
    let (out, _) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "codex"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(story_commits(&dir).len(), 1);
    for e in finished_phases(&dir) {
        assert_eq!(e["attempt"], 1, "{e}");
    }
}

#[test]
fn batons_mcp_tool_call_round_trips_in_a_run() {
    if agent_cli("codex").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = ModelDouble::openai(Box::new(|r: &Request| {
        if r.turns() == 0 {
            Reply::tool("mcp__baton__budget", json!({"text": "hello world"}))
        } else {
            Reply::Text("IMPLEMENTATION BLOCKED: 1.1 - the double only counts tokens".into())
        }
    }));
    let _ = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "codex"]);
    let seen: Vec<String> = double
        .requests()
        .iter()
        .flat_map(|r| r.tool_results())
        .collect();
    assert!(
        seen.iter().any(|t| t.contains("tokens (o200k_base)")),
        "{seen:#?}"
    );
}
