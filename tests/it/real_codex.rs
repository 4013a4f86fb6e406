//! The real `codex` CLI (codex 0.171.0) answered by the model double (the OpenAI Responses
//! API through a `model_providers` entry, as a user configures one): `baton run` commits an
//! epic under baton's defaults with the tests run through baton (by its path: codex's login
//! shell has its own PATH), baton's MCP tools are offered and callable, and the API's
//! failures are read as what they are.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use baton::context::tokens::Encoding;
use serde_json::{Value, json};

use crate::util::model_double::{ModelDouble, Reply, Request, Script};
use crate::util::scripted_agent::{
    CODEX, GEN, epic_agent, failing_first, finished_phases, one_story_project, project_tests,
    story_commits,
};
use crate::util::{Proj, agent_cli, bin, demo_repo, git, path_with, text};

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

/// One story through a model whose first answers are `fail`: the CLI's own retries, or baton's
/// backoff, carry it, and no attempt is spent.
fn recovers_from(first: usize, fail: fn() -> Reply) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = ModelDouble::openai(failing_first(&dir, CODEX, first, fail));
    let (out, took) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "codex"]);
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
    if agent_cli("codex").is_some() {
        recovers_from(1, || Reply::error(500, "internal"));
    }
}

#[test]
fn a_short_rate_limit_is_waited_out_without_spending_an_attempt() {
    if agent_cli("codex").is_some() {
        recovers_from(2, || Reply::rate_limited(1));
    }
}

#[test]
fn a_stream_cut_mid_message_is_retried_without_spending_an_attempt() {
    if agent_cli("codex").is_some() {
        recovers_from(1, || Reply::Cut);
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

/// A model that runs one command, then ends its turn.
fn one_command(cmd: &str) -> Script {
    let cmd = cmd.to_string();
    Box::new(move |r: &Request| {
        if r.turns() > 0 {
            Reply::Text("DONE".into())
        } else {
            Reply::tool("exec_command", json!({"cmd": cmd}))
        }
    })
}

#[test]
fn after_init_a_large_output_is_routed_through_baton_and_batons_tools_answer() {
    let Some(cli) = agent_cli("codex") else {
        return;
    };
    let p = Proj::new();
    let o = p.cmd(&["init", "codex"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(p.path().join("gen.sh"), GEN).unwrap();
    // The project's own test command, routed as `cargo test` is by default.
    std::fs::write(
        p.path().join("baton.toml"),
        "[mask]\nroute = [\"sh gen.sh\"]\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let path_re = regex::Regex::new(r#""full_output_path": "([^"]+)""#).unwrap();
    let codex_home = home.path().join(".codex");
    let config = codex_home.join("config.toml");
    let mut trust: Option<String> = None;
    for at in [0, 1850, 3699] {
        let double = ModelDouble::openai(one_command(&format!("sh gen.sh {at}")));
        let mut c = codex_env(Command::new(&cli), &cli, p.path(), home.path(), &double);
        // The user's shell has baton on PATH (`baton init` names it so).
        c.env(
            "PATH",
            path_with(&[bin().parent().unwrap(), cli.parent().unwrap()]),
        );
        match &trust {
            None => trust = Some(trust_project_and_hooks(&cli, &codex_home, p.path())),
            Some(t) => {
                let mut cfg = std::fs::read_to_string(&config).unwrap();
                cfg.push_str(t);
                std::fs::write(&config, cfg).unwrap();
            }
        }
        let out = c
            .args([
                "exec",
                "--json",
                "--sandbox",
                "workspace-write",
                "run the tests",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let seen = double
            .requests()
            .last()
            .unwrap()
            .tool_results()
            .pop()
            .unwrap();
        let tokens = Encoding::O200kBase.count(&seen);
        assert!(tokens <= 2_000, "{tokens} tokens shown: {seen}");
        assert!(seen.contains("tests::the_failing_one"), "at {at}: {seen}");
        let full = path_re
            .captures(&seen)
            .unwrap_or_else(|| panic!("no full_output_path in {seen}"))[1]
            .to_string();
        let expected = Command::new("sh")
            .args(["gen.sh", &at.to_string()])
            .current_dir(p.path())
            .output()
            .unwrap()
            .stdout;
        assert_eq!(std::fs::read(p.path().join(full)).unwrap(), expected);
    }
    // A command that prints little is not routed: the model sees it as it is.
    let double = ModelDouble::openai(one_command("echo hello baton"));
    let mut c = codex_env(Command::new(&cli), &cli, p.path(), home.path(), &double);
    let mut cfg = std::fs::read_to_string(&config).unwrap();
    cfg.push_str(trust.as_deref().unwrap());
    std::fs::write(&config, cfg).unwrap();
    let out = c
        .env(
            "PATH",
            path_with(&[bin().parent().unwrap(), cli.parent().unwrap()]),
        )
        .args([
            "exec",
            "--json",
            "--sandbox",
            "workspace-write",
            "say hello",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let seen = double
        .requests()
        .last()
        .unwrap()
        .tool_results()
        .pop()
        .unwrap();
    assert!(
        seen.contains("hello baton") && !seen.contains("masked"),
        "{seen}"
    );
    // The project's MCP server (`baton init codex`): offered, and a call answered.
    let double = ModelDouble::openai(Box::new(|r: &Request| {
        if r.turns() > 0 {
            Reply::Text("DONE".into())
        } else {
            Reply::tool("mcp__baton__budget", json!({"text": "hello world"}))
        }
    }));
    let mut c = codex_env(Command::new(&cli), &cli, p.path(), home.path(), &double);
    let mut cfg = std::fs::read_to_string(&config).unwrap();
    cfg.push_str(trust.as_deref().unwrap());
    std::fs::write(&config, cfg).unwrap();
    let out = c
        .env(
            "PATH",
            path_with(&[bin().parent().unwrap(), cli.parent().unwrap()]),
        )
        .args(["exec", "--json", "--sandbox", "workspace-write", "count"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let tools = double.requests()[0].tools();
    assert!(tools.iter().any(|t| t == "mcp__baton__budget"), "{tools:?}");
    let seen = double
        .requests()
        .last()
        .unwrap()
        .tool_results()
        .pop()
        .unwrap();
    assert!(seen.contains("tokens (o200k_base)"), "{seen}");
}

#[test]
fn a_refused_connection_stops_the_run_as_no_network_and_commits_nothing() {
    if agent_cli("codex").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let mut gone = ModelDouble::openai(Box::new(|_| Reply::Text("never".into())));
    gone.url = format!(
        "http://{}",
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
    );
    let (out, took) = baton_run(&dir, &gone, &["epic-execute", "1", "--agent", "codex"]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    assert!(text(&out).contains("no network"), "{}", text(&out));
    assert!(took < Duration::from_secs(90), "{took:?}");
    assert_eq!(story_commits(&dir), Vec::<String>::new());
}
