//! Agent adapters against fake `claude`/`codex`/`gemini` executables: shell scripts that record
//! their argv, stdin and environment, replay a fixture from `tests/fixtures/agents/` and exit
//! with a chosen code. Also: timeouts kill the whole process group, no orphans, missing
//! binaries, non-UTF-8 output.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use baton_agent::{
    AgentKind, AgentOutcome, AgentRequest, AgentSpec, CancelToken, ExitKind, FailureKind, Usage,
    run,
};
use baton_context::signals::{SignalKind, parse_signal};
use baton_core::error::{Fault, Kind};

/// `tests/fixtures/agents/<rel>`.
fn fixture(rel: &str) -> PathBuf {
    crate::util::fixture("agents").join(rel)
}

struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new() -> Fake {
        Fake {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    /// Write an executable script `bin/<name>`.
    fn script(&self, name: &str, body: &str) -> PathBuf {
        let bin = self.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }
    /// A fake CLI that records what it got and replays `$FIXTURE`, exiting `$FAKE_EXIT`.
    fn replayer(&self, name: &str) -> PathBuf {
        self.script(
            name,
            r#"printf '%s\n' "$@" > "$REC/argv"
cat > "$REC/stdin"
env > "$REC/env"
cat "$FIXTURE"
echo "fake $0 on stderr" >&2
if [ -n "$STDERR_FIXTURE" ]; then cat "$STDERR_FIXTURE" >&2; fi
exit "${FAKE_EXIT:-0}""#,
        )
    }
    fn request(&self, prompt: &str, fixture_rel: &str, exit: i32) -> AgentRequest {
        let mut req = AgentRequest::new(prompt, self.path(), self.path().join("logs"), "call");
        req.env = vec![
            ("REC".into(), self.path().display().to_string()),
            ("FIXTURE".into(), fixture(fixture_rel).display().to_string()),
            ("FAKE_EXIT".into(), exit.to_string()),
        ];
        req
    }
    fn rec(&self, what: &str) -> String {
        std::fs::read_to_string(self.path().join(what)).unwrap()
    }
    fn spec(&self, kind: AgentKind) -> AgentSpec {
        let mut s = AgentSpec::new(kind);
        s.program = Some(self.replayer(kind.name()));
        s.timeout = Duration::from_secs(20);
        s.grace = Duration::from_millis(500);
        s
    }
}

fn replay(kind: AgentKind, fixture_rel: &str, exit: i32) -> (Fake, AgentOutcome) {
    let f = Fake::new();
    let spec = f.spec(kind);
    let out = run(&spec, &f.request("the prompt", fixture_rel, exit)).unwrap();
    (f, out)
}

#[test]
fn claude_success_stream() {
    let f = Fake::new();
    let mut spec = f.spec(AgentKind::Claude);
    spec.model = Some("sonnet".into());
    // Configuration cannot smuggle CLAUDECODE into the child.
    spec.env = vec![("CLAUDECODE".into(), "1".into())];
    let prompt = "Implement story 1.2.\n$(rm -rf /) `not a shell` 'quotes'\n";
    let out = run(&spec, &f.request(prompt, "claude/success.jsonl", 0)).unwrap();

    assert_eq!(out.exit, ExitKind::Exited(0));
    assert!(!out.is_error(), "{:?}", out.error);
    assert_eq!(
        out.session_id.as_deref(),
        Some("6f1c2a9e-0000-4000-8000-000000000001")
    );
    assert_eq!(
        out.usage,
        Usage {
            input: 6,
            cache_creation: 1500,
            cache_read: 19200,
            output: 65
        }
    );
    // Context size = the latest assistant message's prompt, not the summed result usage.
    assert_eq!(out.context_tokens, Some(2 + 300 + 10200));
    assert_eq!(out.cost_usd, Some(0.0374));
    assert_eq!(out.num_turns, Some(2));
    assert_eq!(out.model.as_deref(), Some("claude-sonnet-4-6"));
    assert_eq!(out.text_tail, "Done.\n\nIMPLEMENTATION COMPLETE: 1.2");
    let sig = parse_signal(&out.text_tail, "story-1-2").signal.unwrap();
    assert_eq!(sig.kind, SignalKind::ImplementationComplete);

    // The prompt went to stdin byte for byte; argv has exactly the configured flags, and
    // baton's hooks and MCP server (naming the running binary: here the test's).
    let claude_settings = baton_agent::wiring::claude_run_args();
    assert_eq!(f.rec("stdin"), prompt);
    assert_eq!(
        f.rec("argv").lines().collect::<Vec<_>>(),
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "sonnet",
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Bash(git status:*),Bash(git diff:*),Bash(git log:*),Bash(git show:*),Bash(baton:*),mcp__baton",
            "--settings",
            &claude_settings[1],
            "--mcp-config",
            &claude_settings[3],
        ]
    );
    assert!(!f.rec("env").lines().any(|l| l.starts_with("CLAUDECODE=")));
    // Logs hold the raw streams.
    assert_eq!(
        std::fs::read(&out.log_path).unwrap(),
        std::fs::read(fixture("claude/success.jsonl")).unwrap()
    );
    assert_eq!(out.log_path, f.path().join("logs/call.log"));
    assert!(
        std::fs::read_to_string(&out.stderr_path)
            .unwrap()
            .contains("on stderr")
    );
}

#[test]
fn claude_found_on_path_by_default_name() {
    let f = Fake::new();
    f.replayer("claude");
    let spec = AgentSpec::new(AgentKind::Claude); // no program override
    let mut req = f.request("p", "claude/success.jsonl", 0);
    let path = format!(
        "{}:{}",
        f.path().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    req.env.push(("PATH".into(), path));
    let out = run(&spec, &req).unwrap();
    assert!(!out.is_error(), "{:?}", out.error);
    assert_eq!(out.num_turns, Some(2));
}

#[test]
fn claude_is_error_with_success_subtype() {
    let (_f, out) = replay(AgentKind::Claude, "claude/not_logged_in.jsonl", 1);
    assert_eq!(out.failure, Some(FailureKind::Auth));
    assert_eq!(
        out.error.as_deref(),
        Some("Not logged in · Please run /login")
    );
    assert!(!out.transient);
    // Same line with exit 0: still an error, is_error decides.
    let (_f, out) = replay(AgentKind::Claude, "claude/not_logged_in.jsonl", 0);
    assert_eq!(out.failure, Some(FailureKind::Auth));
}

#[test]
fn claude_overloaded_is_transient() {
    let (_f, out) = replay(AgentKind::Claude, "claude/overloaded.jsonl", 1);
    assert_eq!(out.failure, Some(FailureKind::Api));
    assert!(out.transient);
    assert!(out.error.unwrap().contains("529"));
}

#[test]
fn claude_max_turns() {
    let (_f, out) = replay(AgentKind::Claude, "claude/max_turns.jsonl", 1);
    assert_eq!(out.failure, Some(FailureKind::TurnLimit));
    assert_eq!(
        out.error.as_deref(),
        Some("Reached maximum number of turns (3)")
    );
    assert_eq!(out.cost_usd, Some(0.21));
    assert_eq!(out.context_tokens, Some(50010));
    // No result text: the assistant's text is what is left for signal parsing.
    assert_eq!(out.text_tail, "Still working on it.");
    assert!(!out.transient);
}

#[test]
fn claude_without_result_line_is_no_result() {
    let f = Fake::new();
    let mut spec = f.spec(AgentKind::Claude);
    spec.program = Some(f.script(
        "claude",
        r#"echo '{"type":"system","subtype":"init","session_id":"s-9"}'"#,
    ));
    let out = run(&spec, &f.request("p", "claude/success.jsonl", 0)).unwrap();
    assert_eq!(out.failure, Some(FailureKind::NoResult));
    assert_eq!(out.session_id.as_deref(), Some("s-9"));
}

#[test]
fn codex_success() {
    let (f, out) = replay(AgentKind::Codex, "codex/success.jsonl", 0);
    assert!(!out.is_error(), "{:?}", out.error);
    assert_eq!(
        out.session_id.as_deref(),
        Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
    );
    assert_eq!(
        out.usage,
        Usage {
            input: 24763 - 24448,
            cache_creation: 0,
            cache_read: 24448,
            output: 122
        }
    );
    assert_eq!(
        out.text_tail,
        "All tests pass.\nIMPLEMENTATION COMPLETE: 1.2"
    );
    assert_eq!(out.cost_usd, None);
    assert_eq!(
        f.rec("argv").lines().collect::<Vec<_>>(),
        [
            "exec",
            "--json",
            "--sandbox",
            "workspace-write",
            "-c",
            "mcp_servers.baton={command=\"baton\",args=[\"mcp\"],default_tools_approval_mode=\"approve\"}",
            "-"
        ]
    );
    assert_eq!(f.rec("stdin"), "the prompt");
}

#[test]
fn codex_turn_failed() {
    let (_f, out) = replay(AgentKind::Codex, "codex/turn_failed.jsonl", 1);
    assert_eq!(out.failure, Some(FailureKind::Api));
    assert_eq!(
        out.error.as_deref(),
        Some("exceeded retry limit, last status: 429 Too Many Requests")
    );
    assert!(out.transient);
    assert_eq!(out.text_tail, "");
}

#[test]
fn gemini_success() {
    let (f, out) = replay(AgentKind::Gemini, "gemini/success.json", 0);
    assert!(!out.is_error(), "{:?}", out.error);
    assert_eq!(out.text_tail, "Reviewed.\n\nREVIEW PASSED: 1.2");
    assert_eq!(
        out.session_id.as_deref(),
        Some("c2a5a1f0-0000-4000-8000-00000000000a")
    );
    assert_eq!(
        out.usage,
        Usage {
            input: 1200,
            cache_creation: 0,
            cache_read: 8200,
            output: 200
        }
    );
    assert_eq!(
        f.rec("argv").lines().collect::<Vec<_>>(),
        [
            "--output-format",
            "json",
            "--skip-trust",
            "--approval-mode",
            "auto_edit",
            "--allowed-tools=run_shell_command(git status),run_shell_command(git diff),\
             run_shell_command(git log),run_shell_command(git show),run_shell_command(baton)"
        ]
    );
    // The project's .gemini/settings.json counts only in a trusted folder.
    assert!(
        f.rec("env")
            .lines()
            .any(|l| l == "GEMINI_CLI_TRUST_WORKSPACE=true")
    );
    assert_eq!(f.rec("stdin"), "the prompt");
}

#[test]
fn gemini_exit_codes_map_to_kinds() {
    // The error document names the failure...
    let (_f, out) = replay(AgentKind::Gemini, "gemini/auth_error.json", 41);
    assert_eq!(out.failure, Some(FailureKind::Auth));
    assert!(out.error.unwrap().contains("GEMINI_API_KEY"));
    // ...and without one, the documented exit code does.
    for (code, kind) in [
        (41, FailureKind::Auth),
        (42, FailureKind::InvalidInput),
        (44, FailureKind::Sandbox),
        (52, FailureKind::Config),
        (53, FailureKind::TurnLimit),
        (55, FailureKind::Untrusted),
        (54, FailureKind::Tool),
        (130, FailureKind::Interrupted),
        (1, FailureKind::Api),
        (7, FailureKind::ExitCode),
    ] {
        let (_f, out) = replay(AgentKind::Gemini, "README.md", code);
        assert_eq!(out.exit, ExitKind::Exited(code));
        assert_eq!(out.failure, Some(kind), "exit {code}");
        let err = out.error.unwrap();
        assert!(err.contains(&format!("code {code}")), "{err}");
        assert!(err.contains("on stderr"), "stderr is the reason: {err}");
    }
}

#[test]
fn gemini_error_document_on_stderr_is_the_message() {
    // gemini 0.61.0 -o json: nothing on stdout, the error document on stderr, exit 41.
    let f = Fake::new();
    let spec = f.spec(AgentKind::Gemini);
    let mut req = f.request("p", "gemini/empty.json", 41);
    req.env.push((
        "STDERR_FIXTURE".into(),
        fixture("gemini/auth_error.stderr").display().to_string(),
    ));
    let out = run(&spec, &req).unwrap();
    assert_eq!(out.failure, Some(FailureKind::Auth));
    assert!(out.is_fatal());
    let err = out.error.clone().unwrap();
    assert!(err.starts_with("Please set an Auth method"), "{err}");
    assert!(out.next_step().unwrap().contains("GEMINI_API_KEY"));
}

#[test]
fn gemini_untrusted_folder_is_fatal() {
    let f = Fake::new();
    let spec = f.spec(AgentKind::Gemini);
    let mut req = f.request("p", "gemini/empty.json", 55);
    req.env.push((
        "STDERR_FIXTURE".into(),
        fixture("gemini/untrusted.stderr").display().to_string(),
    ));
    let out = run(&spec, &req).unwrap();
    assert_eq!(out.failure, Some(FailureKind::Untrusted));
    assert!(out.is_fatal() && !out.transient);
    let err = out.error.clone().unwrap();
    assert!(err.contains("not running in a trusted directory"), "{err}");
    assert!(!err.contains('\x1b'), "colour codes are stripped: {err:?}");
    assert!(out.next_step().unwrap().contains("--skip-trust"));
}

#[test]
fn claude_permission_denials_are_shown() {
    let (_f, out) = replay(AgentKind::Claude, "claude/permission_denied.jsonl", 1);
    assert_eq!(out.failure, Some(FailureKind::Execution));
    assert!(!out.is_fatal());
    assert_eq!(
        out.error.as_deref(),
        Some("could not complete the task; denied: Edit(src/x.rs), Bash(git add -A)")
    );
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("refused: Edit(src/x.rs), Bash(git add -A)")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn claude_not_logged_in_is_fatal_with_a_next_step() {
    let (_f, out) = replay(AgentKind::Claude, "claude/not_logged_in.jsonl", 1);
    assert!(out.is_fatal());
    assert_eq!(
        out.next_step().as_deref(),
        Some("log in: run `claude` once interactively (or set ANTHROPIC_API_KEY)")
    );
    // A failure of the work itself is not fatal.
    let (_f, out) = replay(AgentKind::Claude, "claude/max_turns.jsonl", 1);
    assert!(!out.is_fatal());
    assert_eq!(out.next_step(), None);
}

/// A fake codex that prints `fixture` and then, like codex 0.169 without a network, keeps
/// printing "waiting for network" and never exits.
fn endless_codex(f: &Fake, fixture_rel: &str) -> AgentSpec {
    let mut spec = f.spec(AgentKind::Codex);
    spec.program = Some(f.script(
        "codex",
        &format!(
            r#"printf '%s\n' "$@" > "$REC/argv"
cat "{}"
sleep 1000 &
echo $! > "$REC/grandchild.pid"
while :; do
  echo '{{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}}'
  sleep 0.2
done"#,
            fixture(fixture_rel).display()
        ),
    ));
    spec.timeout = Duration::from_secs(120);
    spec
}

#[test]
fn codex_without_network_is_stopped_soon_as_network_failure() {
    let f = Fake::new();
    let spec = endless_codex(&f, "codex/no_network.jsonl");
    let err = stopped_offline(&spec, &f.request("p", "codex/no_network.jsonl", 0), "codex");
    assert!(
        err.contains("waiting for network") && err.contains("baton stopped"),
        "{err}"
    );
    let gc = read_pid(&f.path().join("grandchild.pid"));
    assert!(!running(gc), "grandchild {gc} survived the stop");
    assert!(!f.rec("argv").lines().any(|a| a == "--full-auto"));
}

/// Like gemini 0.61.0 without a network: its stderr says each request could not be sent,
/// ever slower, and it never ends by itself.
#[test]
fn gemini_without_network_is_stopped_as_network_failure() {
    let f = Fake::new();
    let mut spec = f.spec(AgentKind::Gemini);
    spec.program = Some(f.script(
        "gemini",
        &format!(
            r#"cat > /dev/null
while :; do
  cat "{}" >&2
  sleep 0.3
done"#,
            fixture("gemini/offline.stderr").display()
        ),
    ));
    spec.timeout = Duration::from_secs(120);
    let err = stopped_offline(&spec, &f.request("p", "gemini/empty.json", 0), "gemini");
    assert!(
        err.starts_with("no network: gemini could not send a request 3 times")
            && err.contains("fetch failed")
            && err.ends_with("baton stopped the process group"),
        "{err}"
    );
}

/// Run a CLI that cannot reach its API and never ends by itself: baton stops it soon, long
/// before its timeout, as a network failure that stops the run; the error.
fn stopped_offline(spec: &AgentSpec, req: &AgentRequest, cli: &str) -> String {
    let t = Instant::now();
    let out = run(spec, req).unwrap();
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    assert_eq!(out.exit, ExitKind::Stopped);
    assert_eq!(out.failure, Some(FailureKind::Network));
    assert!(out.is_fatal() && !out.transient);
    assert_eq!(
        out.next_step(),
        Some(format!("check the network: {cli} cannot reach its API"))
    );
    out.error.unwrap()
}

#[test]
fn codex_given_a_claude_model_is_a_model_failure() {
    let f = Fake::new();
    let mut spec = endless_codex(&f, "codex/model_not_found.jsonl");
    spec.model = Some("sonnet".into());
    let t = Instant::now();
    let out = run(&spec, &f.request("p", "codex/no_network.jsonl", 0)).unwrap();
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    assert_eq!(out.failure, Some(FailureKind::Model));
    assert!(out.is_fatal());
    let err = out.error.clone().unwrap();
    assert!(err.contains("`sonnet`") && err.contains("model"), "{err}");
    assert!(out.next_step().unwrap().contains("[run.roles]"));
    assert_eq!(
        f.rec("argv").lines().collect::<Vec<_>>(),
        [
            "exec",
            "--json",
            "--model",
            "sonnet",
            "--sandbox",
            "workspace-write",
            "-c",
            "mcp_servers.baton={command=\"baton\",args=[\"mcp\"],default_tools_approval_mode=\"approve\"}",
            "-"
        ]
    );
}

#[test]
fn rejected_arguments_and_unrunnable_clis_are_fatal() {
    // codex 0.169.0's own answer to `--full-auto`.
    let f = Fake::new();
    let mut spec = f.spec(AgentKind::Codex);
    spec.program = Some(f.script(
        "codex",
        r#"echo "error: unexpected argument '--full-auto' found" >&2
echo "Usage: codex exec [OPTIONS] [PROMPT]" >&2
exit 2"#,
    ));
    let out = run(&spec, &f.request("p", "README.md", 0)).unwrap();
    assert_eq!(out.failure, Some(FailureKind::InvalidInput));
    assert!(out.is_fatal());
    assert!(out.error.unwrap().contains("unexpected argument"));
    // `#!/usr/bin/env node` without node: exit 127.
    spec.program = Some(f.script(
        "codex",
        "echo \"env: 'node': No such file or directory\" >&2; exit 127",
    ));
    let out = run(&spec, &f.request("p", "README.md", 0)).unwrap();
    assert_eq!(out.failure, Some(FailureKind::NotInstalled));
    assert!(out.next_step().unwrap().contains("node"));
}

/// `/proc/<pid>` gone or a zombie nobody reaped: either way, not running.
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

fn read_pid(path: &Path) -> u32 {
    // The fake writes it first thing; give it a moment on a loaded machine.
    for _ in 0..200 {
        if let Ok(s) = std::fs::read_to_string(path)
            && let Ok(pid) = s.trim().parse()
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no pid file {}", path.display());
}

fn hanging_agent(body: &str) -> (Fake, AgentSpec, AgentRequest) {
    let f = Fake::new();
    let mut spec = AgentSpec::command(f.script("agent", body), &[]);
    spec.timeout = Duration::from_millis(800);
    spec.grace = Duration::from_millis(500);
    let mut req = AgentRequest::new("p", f.path(), f.path().join("logs"), "hang");
    req.env = vec![("REC".into(), f.path().display().to_string())];
    (f, spec, req)
}

#[test]
fn timeout_kills_the_whole_group() {
    let (f, spec, req) = hanging_agent(
        r#"sleep 1000 &
echo $! > "$REC/grandchild.pid"
echo started
wait"#,
    );
    let t = Instant::now();
    let out = run(&spec, &req).unwrap();
    assert_eq!(out.exit, ExitKind::TimedOut);
    assert!(out.timed_out());
    assert_eq!(out.failure, Some(FailureKind::TimedOut));
    assert!(!out.transient);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(out.text_tail, "started\n");
    let gc = read_pid(&f.path().join("grandchild.pid"));
    assert!(!running(gc), "grandchild {gc} survived the timeout");
}

#[test]
fn timeout_escalates_to_sigkill_when_term_is_ignored() {
    let (f, spec, req) = hanging_agent(
        r#"trap '' TERM
sleep 1000 &
echo $! > "$REC/grandchild.pid"
while :; do sleep 1; done"#,
    );
    let t = Instant::now();
    let out = run(&spec, &req).unwrap();
    assert_eq!(out.exit, ExitKind::TimedOut);
    // Timeout, then the grace period before SIGKILL.
    assert!(
        t.elapsed() >= Duration::from_millis(1300),
        "{:?}",
        t.elapsed()
    );
    let gc = read_pid(&f.path().join("grandchild.pid"));
    assert!(!running(gc), "grandchild {gc} survived SIGKILL");
}

#[test]
fn cancel_stops_the_group_promptly() {
    let (f, mut spec, mut req) = hanging_agent(
        r#"sleep 1000 &
echo $! > "$REC/grandchild.pid"
wait"#,
    );
    spec.timeout = Duration::from_secs(60);
    let token = CancelToken::new();
    req.cancel = Some(token.clone());
    let pid_file = f.path().join("grandchild.pid");
    let t = Instant::now();
    let handle = std::thread::spawn(move || run(&spec, &req).unwrap());
    let gc = read_pid(&pid_file);
    token.cancel();
    let out = handle.join().unwrap();
    assert_eq!(out.exit, ExitKind::Cancelled);
    assert_eq!(out.failure, Some(FailureKind::Cancelled));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(!running(gc), "grandchild {gc} survived the cancel");
}

#[test]
fn leftover_processes_are_terminated_after_a_normal_exit() {
    let (f, spec, req) = hanging_agent(
        r#"sleep 1000 >/dev/null 2>&1 &
echo $! > "$REC/grandchild.pid"
echo 'REVIEW PASSED: 1.2'"#,
    );
    let out = run(&spec, &req).unwrap();
    assert_eq!(out.exit, ExitKind::Exited(0));
    assert!(!out.is_error());
    assert!(
        out.warnings.iter().any(|w| w.contains("left processes")),
        "{:?}",
        out.warnings
    );
    let gc = read_pid(&f.path().join("grandchild.pid"));
    assert!(!running(gc), "background process {gc} outlived the agent");
}

#[test]
fn missing_binary_and_cwd_are_clear_errors() {
    let f = Fake::new();
    let mut spec = AgentSpec::new(AgentKind::Claude);
    spec.program = Some(f.path().join("no-such-claude"));
    let req = AgentRequest::new("p", f.path(), f.path().join("logs"), "x");
    let e = run(&spec, &req).unwrap_err();
    assert!(matches!(e, baton_agent::Error::Unavailable { .. }), "{e:?}");
    assert_eq!(e.kind(), Kind::Agent, "a CLI that is not there is exit 7");
    assert!(e.to_string().contains("no-such-claude"), "{e}");
    assert!(e.hint_text().unwrap().contains("PATH"));

    let spec = AgentSpec::command("/bin/true", &[]);
    let req = AgentRequest::new("p", f.path().join("gone"), f.path().join("logs"), "x");
    let e = run(&spec, &req).unwrap_err();
    assert_eq!(e.kind(), Kind::NotFound);
    assert!(e.to_string().contains("working directory"), "{e}");

    let req = AgentRequest::new("p", f.path(), f.path().join("logs"), "../escape");
    assert_eq!(run(&spec, &req).unwrap_err().kind(), Kind::Invalid);
}

#[test]
fn non_utf8_output_is_decoded_lossily_and_logged_raw() {
    let f = Fake::new();
    let spec = AgentSpec::command(
        f.script("agent", r"printf 'ok \377\376 bytes\nREVIEW PASSED: 1.2\n'"),
        &[],
    );
    let req = AgentRequest::new("p", f.path(), f.path().join("logs"), "bin");
    let out = run(&spec, &req).unwrap();
    assert!(!out.is_error());
    assert!(
        out.text_tail.starts_with("ok \u{FFFD}\u{FFFD} bytes\n"),
        "{:?}",
        out.text_tail
    );
    assert_eq!(
        std::fs::read(&out.log_path).unwrap(),
        b"ok \xff\xfe bytes\nREVIEW PASSED: 1.2\n"
    );
    assert!(parse_signal(&out.text_tail, "1.2").signal.is_some());

    // Invalid bytes inside a claude JSON string do not lose the line.
    let mut spec = AgentSpec::new(AgentKind::Claude);
    spec.program = Some(f.script(
        "claude",
        r#"printf '{"type":"result","subtype":"success","is_error":false,"result":"caf\351 done","num_turns":1}\n'"#,
    ));
    let out = run(&spec, &req).unwrap();
    assert!(!out.is_error(), "{:?}", out.error);
    assert_eq!(out.text_tail, "caf\u{FFFD} done");
}

#[test]
fn command_nonzero_exit_reports_stderr() {
    let f = Fake::new();
    let spec = AgentSpec::command(
        f.script(
            "agent",
            "cat >/dev/null; echo 'HTTP 503 Service Unavailable' >&2; exit 3",
        ),
        &[],
    );
    let req = AgentRequest::new("p", f.path(), f.path().join("logs"), "c");
    let out = run(&spec, &req).unwrap();
    assert_eq!(out.failure, Some(FailureKind::ExitCode));
    assert!(out.transient);
    assert_eq!(
        out.error.as_deref(),
        Some("exited with code 3: HTTP 503 Service Unavailable")
    );
}

#[test]
fn outcome_round_trips_through_json() {
    let (_f, out) = replay(AgentKind::Claude, "claude/success.jsonl", 0);
    let json = serde_json::to_string(&out).unwrap();
    let back: AgentOutcome = serde_json::from_str(&json).unwrap();
    assert_eq!(back, out);
}

/// `read_output` (a recorded call read again, what the fuzzer drives) concludes what the live
/// run concluded from the same bytes, for every recorded stream.
#[test]
fn a_recorded_output_reads_as_the_live_call_did() {
    let cases: &[(AgentKind, &str, Option<&str>, i32)] = &[
        (AgentKind::Claude, "claude/success.jsonl", None, 0),
        (AgentKind::Claude, "claude/not_logged_in.jsonl", None, 1),
        (AgentKind::Claude, "claude/overloaded.jsonl", None, 1),
        (AgentKind::Claude, "claude/max_turns.jsonl", None, 1),
        (AgentKind::Claude, "claude/permission_denied.jsonl", None, 0),
        (AgentKind::Codex, "codex/success.jsonl", None, 0),
        (AgentKind::Codex, "codex/turn_failed.jsonl", None, 1),
        (AgentKind::Codex, "codex/model_not_found.jsonl", None, 1),
        (AgentKind::Gemini, "gemini/success.json", None, 0),
        (AgentKind::Gemini, "gemini/empty.json", None, 0),
        (
            AgentKind::Gemini,
            "gemini/auth_error.json",
            Some("gemini/auth_error.stderr"),
            41,
        ),
        (
            AgentKind::Gemini,
            "gemini/empty.json",
            Some("gemini/untrusted.stderr"),
            55,
        ),
    ];
    for &(kind, stdout, stderr, code) in cases {
        let f = Fake::new();
        let spec = f.spec(kind);
        let mut req = f.request("p", stdout, code);
        if let Some(e) = stderr {
            req.env
                .push(("STDERR_FIXTURE".into(), fixture(e).display().to_string()));
        }
        let live = run(&spec, &req).unwrap();
        let mut err = format!(
            "fake {} on stderr\n",
            spec.program.as_ref().unwrap().display()
        )
        .into_bytes();
        if let Some(e) = stderr {
            err.extend(std::fs::read(fixture(e)).unwrap());
        }
        let read = baton_agent::read_output(
            &spec,
            &std::fs::read(fixture(stdout)).unwrap(),
            &err,
            live.exit,
        );
        let what = format!("{kind:?} {stdout} {stderr:?}");
        assert_eq!(read.failure, live.failure, "{what}");
        assert_eq!(read.error, live.error, "{what}");
        assert_eq!(read.transient, live.transient, "{what}");
        assert_eq!(read.session_id, live.session_id, "{what}");
        assert_eq!(read.usage, live.usage, "{what}");
        assert_eq!(read.context_peak_tokens, live.context_peak_tokens, "{what}");
        assert_eq!(read.cost_usd, live.cost_usd, "{what}");
        assert_eq!(read.text_tail, live.text_tail, "{what}");
        assert_eq!(read.warnings, live.warnings, "{what}");
        assert_eq!(read.stdout_bytes, live.stdout_bytes, "{what}");
    }
}

/// Found by the `agent_streams` fuzz target: a failure whose message the CLI left empty
/// (codex's `turn.failed` with `"message": ""`) is said with what is known, never as "".
#[test]
fn a_failure_the_cli_left_without_a_message_still_says_something() {
    let stdout = br#"{"type":"thread.started","thread_id":"t1"}
{"type":"turn.failed","error":{"message":""}}
"#;
    let spec = AgentSpec::new(AgentKind::Codex);
    let out = baton_agent::read_output(&spec, stdout, b"", ExitKind::Exited(1));
    assert!(out.is_error());
    assert_eq!(
        out.error.as_deref(),
        Some("codex reported a failure without a message")
    );
    let out = baton_agent::read_output(&spec, stdout, b"quota exceeded\n", ExitKind::Exited(1));
    assert_eq!(out.error.as_deref(), Some("quota exceeded"));
}

/// Found by the `agent_streams` fuzz target: token counts a stream makes up (any u64) saturate
/// instead of overflowing their sum.
#[test]
fn token_counts_at_the_limit_do_not_overflow() {
    let stdout = br#"{"type":"assistant","message":{"usage":{"input_tokens":18446744073709551615,"cache_read_input_tokens":5,"output_tokens":1}}}
{"type":"result","subtype":"success","is_error":false,"result":"ok","usage":{"input_tokens":18446744073709551615,"cache_creation_input_tokens":9,"output_tokens":18446744073709551615}}
"#;
    let out = baton_agent::read_output(
        &AgentSpec::new(AgentKind::Claude),
        stdout,
        b"",
        ExitKind::Exited(0),
    );
    assert_eq!(out.context_peak_tokens, Some(u64::MAX));
    assert_eq!(out.usage.total(), u64::MAX);
}
