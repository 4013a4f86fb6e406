//! The real `claude` CLI (claude-code 2.1.197) answered by the model double: what the model is
//! really shown once baton's hooks have run, baton's MCP tools called for real, a whole epic
//! committed by `baton run` under baton's defaults, and the API's failures as baton reads them.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use baton::context::tokens::Encoding;
use serde_json::{Value, json};

use crate::util::model_double::{ModelDouble, Reply, Request, Script};
use crate::util::scripted_agent::{
    CLAUDE, GEN, epic_agent, failing_first, finished_phases, one_story_project, project_tests,
    story_commits,
};
use crate::util::{Proj, agent_cli, bin, demo_repo, git, path_with, text};

/// `claude` with the user's setup: an empty HOME of its own, the API at the double, baton on
/// PATH. Nothing of baton's loosened.
fn claude_cmd(cli: &Path, dir: &Path, home: &Path, double: &ModelDouble) -> Command {
    claude_env(Command::new(cli), cli, dir, home, double)
}

/// The user's environment for `claude` (`cli`), whatever `c` runs: claude itself or baton.
fn claude_env(
    mut c: Command,
    cli: &Path,
    dir: &Path,
    home: &Path,
    double: &ModelDouble,
) -> Command {
    c.current_dir(dir)
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", &double.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-double")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env(
            "PATH",
            path_with(&[bin().parent().unwrap(), cli.parent().unwrap()]),
        )
        .env_remove("CLAUDECODE")
        .env_remove("BATON_RUN_DIR")
        .env_remove("BATON_RUN_PHASE");
    c
}

/// A session the user starts in the project they trust (the trust dialog accepted, as claude
/// records it in `~/.claude.json`): `claude -p PROMPT`, with the user's own permission for the
/// one command the script runs.
fn session(cli: &Path, p: &Proj, home: &Path, double: &ModelDouble, allow: &str) -> Output {
    let trusted =
        json!({"projects": {p.path().to_string_lossy(): {"hasTrustDialogAccepted": true}}});
    std::fs::write(home.join(".claude.json"), trusted.to_string()).unwrap();
    claude_cmd(cli, p.path(), home, double)
        .args([
            "-p",
            "run the tests",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .args(["--allowedTools", allow])
        .output()
        .unwrap()
}

/// A model that makes one tool call, then ends its turn.
fn one_call(name: &str, input: Value) -> Script {
    let name = name.to_string();
    Box::new(move |r: &Request| {
        if r.tools().is_empty() || r.turns() > 0 {
            Reply::Text("DONE".into())
        } else {
            Reply::tool(&name, input.clone())
        }
    })
}

/// The tool result the model was shown, from the last request.
fn shown(double: &ModelDouble) -> String {
    let reqs = double.requests();
    let last = reqs.last().expect("claude sent requests");
    last.tool_results()
        .pop()
        .expect("a tool result was sent back")
}

fn init_claude(p: &Proj) {
    let o = p.cmd(&["init", "claude"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(p.path().join("gen.sh"), GEN).unwrap();
}

#[test]
fn a_large_output_reaches_the_model_masked_with_its_failure_wherever_it_is() {
    let Some(cli) = agent_cli("claude") else {
        return;
    };
    let p = Proj::new();
    init_claude(&p);
    let home = tempfile::tempdir().unwrap();
    for at in [0, 1850, 3699] {
        let cmd = format!("sh gen.sh {at}");
        let double = ModelDouble::anthropic(one_call(
            "Bash",
            json!({"command": cmd, "description": "run the tests"}),
        ));
        let out = session(&cli, &p, home.path(), &double, &format!("Bash({cmd})"));
        assert!(out.status.success(), "{}", text(&out));
        let seen = shown(&double);
        let tokens = Encoding::O200kBase.count(&seen);
        assert!(tokens <= 2_000, "{tokens} tokens shown: {seen}");
        assert!(seen.contains("tests::the_failing_one"), "at {at}: {seen}");
        // The summary names baton's file, which holds the whole output.
        let doc: Value = serde_json::from_str(&seen[seen.find('{').unwrap()..]).unwrap();
        let full = p.path().join(doc["full_output_path"].as_str().unwrap());
        let expected = Command::new("sh")
            .args(["gen.sh", &at.to_string()])
            .current_dir(p.path())
            .output()
            .unwrap()
            .stdout;
        assert!(expected.len() > 200_000);
        assert_eq!(
            std::fs::read(&full).unwrap(),
            expected,
            "{}",
            full.display()
        );
        // Claude's own pointer is kept.
        assert!(
            seen.contains("Claude Code's own copy of the full output: "),
            "{seen}"
        );
    }
}

#[test]
fn a_small_output_reaches_the_model_unchanged() {
    let Some(cli) = agent_cli("claude") else {
        return;
    };
    let p = Proj::new();
    init_claude(&p);
    let home = tempfile::tempdir().unwrap();
    let double = ModelDouble::anthropic(one_call(
        "Bash",
        json!({"command": "echo hello baton", "description": "say hello"}),
    ));
    let out = session(&cli, &p, home.path(), &double, "Bash(echo hello baton)");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(shown(&double), "hello baton");
}

#[test]
fn batons_mcp_tools_are_offered_and_a_call_round_trips() {
    let Some(cli) = agent_cli("claude") else {
        return;
    };
    let p = Proj::new();
    init_claude(&p);
    let home = tempfile::tempdir().unwrap();
    let double = ModelDouble::anthropic(one_call(
        "mcp__baton__budget",
        json!({"text": "hello world"}),
    ));
    // No permission of the user's: `baton init claude` granted baton's own tools.
    let out = session(&cli, &p, home.path(), &double, "Read");
    assert!(out.status.success(), "{}", text(&out));
    let tools = double.requests().last().unwrap().tools();
    for t in [
        "mcp__baton__budget",
        "mcp__baton__mask",
        "mcp__baton__status",
    ] {
        assert!(tools.iter().any(|x| x == t), "{t} not in {tools:?}");
    }
    let seen = shown(&double);
    assert!(seen.contains("STATUS: success"), "{seen}");
    assert!(seen.contains("tokens (o200k_base)"), "{seen}");
}

#[test]
fn baton_run_commits_every_story_with_claude_under_batons_defaults() {
    let Some(cli) = agent_cli("claude") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    demo_repo(&dir, "");
    std::fs::write(dir.join("run-tests.sh"), project_tests()).unwrap();
    git(&dir, &["add", "run-tests.sh"]);
    git(&dir, &["commit", "-q", "-m", "tests"]);
    let home = tempfile::tempdir().unwrap();
    let double = ModelDouble::anthropic(epic_agent(&dir, CLAUDE));
    let out = claude_env(Command::new(bin()), &cli, &dir, home.path(), &double)
        // baton started by its path, not on PATH: the agents still reach it.
        .env("PATH", path_with(&[cli.parent().unwrap()]))
        .args(["run", "epic-execute", "1", "--agent", "claude"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let log = git(&dir, &["log", "--format=%s"]);
    for id in ["1.1", "1.2", "1.3", "1.4"] {
        assert!(log.contains(id), "story {id} not committed: {log}");
        let f = &dir.join(format!("src/story_{}.txt", id.replace('.', "_")));
        assert!(f.is_file(), "{}", f.display());
    }
    // The dev phase's test run reached the model, through baton mask.
    let runs: Vec<String> = double
        .requests()
        .iter()
        .flat_map(|r| r.tool_results())
        .filter(|t| t.contains("400 passed"))
        .collect();
    assert!(
        !runs.is_empty(),
        "no test run reached the model: {:#?}",
        double
            .requests()
            .iter()
            .map(|r| r.tool_results())
            .max_by_key(|t| t.len())
    );
    assert!(&dir.join("docs/uat/epic-1-uat.md").is_file());
    assert_eq!(git(&dir, &["status", "--porcelain"]), "");
}

/// Runs `baton run epic-execute 1 --agent claude` against `script`; its output and how long.
/// `baton run ARGS` in `dir` with claude answered by `double`; its output and how long.
fn baton_run(dir: &Path, double: &ModelDouble, args: &[&str]) -> (Output, Duration) {
    let cli = agent_cli("claude").expect("checked by the caller");
    let home = dir.parent().unwrap().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let started = Instant::now();
    let out = claude_env(Command::new(bin()), &cli, dir, &home, double)
        // baton started by its path, not on PATH: the agents still reach it.
        .env("PATH", path_with(&[cli.parent().unwrap()]))
        .arg("run")
        .args(args)
        .output()
        .unwrap();
    (out, started.elapsed())
}

/// Runs `baton run epic-execute 1 --agent claude` against `script`.
fn run_against(script: Script) -> (tempfile::TempDir, Output, Duration, ModelDouble) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = ModelDouble::anthropic(script);
    let (out, took) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "claude"]);
    (tmp, out, took, double)
}

#[test]
fn an_auth_failure_stops_the_run_within_seconds_and_commits_nothing() {
    if agent_cli("claude").is_none() {
        return;
    }
    let (tmp, out, took, _d) = run_against(Box::new(|_| Reply::error(401, "invalid x-api-key")));
    let dir = tmp.path().join("p");
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert!(text(&out).contains("log in"), "{}", text(&out));
    assert_eq!(story_commits(&dir), Vec::<String>::new());
}

#[test]
fn a_refused_connection_stops_the_run_within_seconds_as_no_network() {
    if agent_cli("claude").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    // A double that is gone: its port refuses connections.
    let mut gone = ModelDouble::anthropic(Box::new(|_| Reply::Text("never".into())));
    gone.url = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let (out, took) = baton_run(&dir, &gone, &["epic-execute", "1", "--agent", "claude"]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    assert!(took < Duration::from_secs(45), "{took:?}");
    assert!(text(&out).contains("no network"), "{}", text(&out));
    assert_eq!(story_commits(&dir), Vec::<String>::new());
}

#[test]
fn rate_limits_and_server_errors_are_waited_out_without_spending_an_attempt() {
    if agent_cli("claude").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let limited = || Reply::rate_limited(1);
    let double = ModelDouble::anthropic(failing_first(&dir, CLAUDE, 2, limited));
    let (out, _) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "claude"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(story_commits(&dir).len(), 1, "{:?}", story_commits(&dir));
}

/// One story run through a model whose first answer is `fail`: claude's own retries carry it.
fn recovers_from(fail: fn() -> Reply) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = ModelDouble::anthropic(failing_first(&dir, CLAUDE, 1, fail));
    let (out, took) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "claude"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(took < Duration::from_secs(90), "{took:?}");
    assert_eq!(story_commits(&dir).len(), 1);
    assert!(
        double
            .requests()
            .iter()
            .all(|r| r.path.starts_with("/v1/messages"))
    );
    let finished = finished_phases(&dir);
    assert!(finished.len() >= 3, "{finished:?}");
    for e in finished {
        assert_eq!(e["attempt"], 1, "{e}");
    }
}

#[test]
fn a_server_error_is_retried_without_spending_an_attempt() {
    if agent_cli("claude").is_some() {
        recovers_from(|| Reply::error(500, "internal"));
    }
}

#[test]
fn a_stream_cut_mid_message_is_retried_without_spending_an_attempt() {
    if agent_cli("claude").is_some() {
        recovers_from(|| Reply::Cut);
    }
}

#[test]
fn a_rate_limit_past_the_backoff_pauses_the_run_and_resume_finishes_it() {
    if agent_cli("claude").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let limited = || Reply::rate_limited(3600);
    // The first call and its three retries are refused; the resumed run's calls are answered.
    let double = ModelDouble::anthropic(failing_first(&dir, CLAUDE, 4, limited));
    let (out, _) = baton_run(&dir, &double, &["epic-execute", "1", "--agent", "claude"]);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("is paused in the dev phase"), "{said}");
    assert!(said.contains("baton run --resume"), "{said}");
    assert_eq!(story_commits(&dir), Vec::<String>::new());
    // Every call kept its own log.
    let runs: Vec<_> = std::fs::read_dir(dir.join(".baton/runs"))
        .unwrap()
        .collect();
    assert_eq!(runs.len(), 1);
    let logs = runs[0].as_ref().unwrap().path().join("logs");
    let n = std::fs::read_dir(&logs)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".log")
        })
        .count();
    assert!(n >= 4, "{n} logs in {}", logs.display());
    let run_id = runs[0].as_ref().unwrap().file_name();
    let run_id = run_id.to_string_lossy();
    let (out, _) = baton_run(&dir, &double, &["--resume", &run_id]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(story_commits(&dir).len(), 1);
}
