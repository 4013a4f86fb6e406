//! `baton mcp`: the tool list's size, and a real client this project did not write (the
//! official Python SDK, `mcp` on PyPI) listing the tools and calling every one.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{Proj, bin};

/// The whole `tools/list` answer, as a client receives it.
fn tools_list_answer() -> String {
    let result = rmcp_free_list();
    json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": result}}).to_string()
}

fn rmcp_free_list() -> Value {
    serde_json::to_value(baton_mcp::tool_list()).unwrap()
}

#[test]
fn the_tool_list_costs_at_most_3000_tokens() {
    let tools = rmcp_free_list();
    let n = tools.as_array().unwrap().len();
    assert!(n <= 12, "{n} tools");
    let tokens = baton_context::tokens::Encoding::O200kBase.count(&tools_list_answer());
    println!("tools/list: {n} tools, {tokens} o200k tokens");
    assert!(tokens <= 3000, "tools/list costs {tokens} tokens");
}

/// The Python with the `mcp` SDK: BATON_MCP_PYTHON, else python3 if it has it. CI sets
/// BATON_REQUIRE_MCP_CLIENT=1, so a missing client fails there instead of skipping.
fn python() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("BATON_MCP_PYTHON") {
        Some(p) => vec![p.into()],
        None => vec!["python3".into()],
    };
    let found = candidates.into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import mcp"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        let why =
            "skipped: no Python with the `mcp` SDK (pip install mcp; or set BATON_MCP_PYTHON)";
        assert!(
            std::env::var_os("BATON_REQUIRE_MCP_CLIENT").is_none(),
            "{why}, and BATON_REQUIRE_MCP_CLIENT is set"
        );
        println!("{why}");
    }
    found
}

#[test]
fn the_python_sdk_lists_and_calls_every_tool() {
    let Some(py) = python() else { return };
    let p = Proj::new();
    p.write(
        "spec.md",
        "# Spec\n\n## Data Model\nUser { id, name }\n\n## API\nPOST /login\n",
    );
    p.write("lib.py", "def login(user):\n    return user\n");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/it/mcp_client.py");
    let o = Command::new(py)
        .arg(&script)
        .arg(bin())
        .arg(p.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "client failed:\n{stderr}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["server"], "baton");
    let listed: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let ours: Vec<String> = baton_mcp::tools::list()
        .iter()
        .map(|t| t.0.to_string())
        .collect();
    assert_eq!(listed, ours);
    let tokens =
        baton_context::tokens::Encoding::O200kBase.count(v["tools_json"].as_str().unwrap());
    assert!(tokens <= 3000, "{tokens}");

    let calls = v["calls"].as_array().unwrap();
    let called: std::collections::BTreeSet<&str> =
        calls.iter().map(|c| c["tool"].as_str().unwrap()).collect();
    assert_eq!(called.len(), ours.len(), "every tool is called: {called:?}");
    let call = |i: usize| &calls[i];
    let text = |i: usize| call(i)["text"].as_str().unwrap_or_default().to_string();
    // The first 16 calls succeed, in STATUS/TASK/DATA form.
    for i in 0..16 {
        if i == 6 || i == 7 {
            continue; // the gate pair, checked below
        }
        assert_eq!(call(i)["is_error"], false, "call {i}: {}", call(i));
        assert!(
            text(i).starts_with("STATUS: success\n"),
            "call {i}: {}",
            text(i)
        );
    }
    assert!(text(0).contains("TASK: add-login"), "{}", text(0));
    assert!(text(5).contains("## Signatures"), "{}", text(5));
    assert_eq!(call(6)["is_error"], false, "{}", call(6));
    assert!(text(7).contains("approve"), "{}", text(7));
    assert!(text(9).contains("User { id, name }"), "{}", text(9));
    // The outline: the lines `baton extract --outline` prints.
    let cli = p.ok(&["extract", "spec.md", "--outline"]);
    assert!(cli.contains("  ## Data Model  (lines 3-"), "{cli}");
    for line in cli.lines().filter(|l| l.contains("(lines ")) {
        assert!(text(10).lines().any(|l| l == line), "{line}\n{}", text(10));
    }
    assert!(text(11).contains("def login(user)"), "{}", text(11));
    assert!(text(14).ends_with("exit code 0\nsmall\n"), "{}", text(14));
    // The long command: masked, with its scratch file, and progress was reported.
    assert!(text(15).contains("\"masked\": true"), "{}", text(15));
    assert!(text(15).contains("full_output_path"), "{}", text(15));
    assert!(
        !call(15)["progress"].as_array().unwrap().is_empty(),
        "{}",
        call(15)
    );
    // Errors come back as tool errors the model reads, not crashes.
    for i in 16..calls.len() {
        assert_eq!(call(i)["is_error"], true, "call {i}: {}", call(i));
        assert!(
            text(i).starts_with("STATUS: error\n"),
            "call {i}: {}",
            text(i)
        );
    }
    assert!(
        text(17).contains("unknown argument `bogus`"),
        "{}",
        text(17)
    );
    assert!(text(19).contains("command not found"), "{}", text(19));
    // An unknown tool is a protocol error; the server lives on.
    assert!(
        v["unknown_tool"]
            .as_str()
            .unwrap()
            .starts_with("protocol error"),
        "{}",
        v["unknown_tool"]
    );
    assert_eq!(v["alive"], true);
    // Logging went to stderr, never into the protocol stream.
    assert!(stderr.contains("baton mcp: mask"), "{stderr}");
}

/// The initialize request and the initialized notification a session starts with.
fn handshake() -> [Value; 2] {
    [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

/// `baton mcp` in `p` fed the handshake then `lines` (raw: not all of them JSON), its input
/// closed; it must exit 0; every line it answered, parsed.
fn session(p: &Proj, lines: &[String]) -> Vec<Value> {
    let mut text: String = handshake().iter().map(|m| format!("{m}\n")).collect();
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    let o = p.run(&["mcp"], Some(text.as_bytes()));
    // Whatever the client sent, the server ends cleanly when its input does.
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// [`session`] with JSON messages; the answers by id.
pub(crate) fn rpc(p: &Proj, messages: &[Value]) -> std::collections::BTreeMap<u64, Value> {
    let lines: Vec<String> = messages.iter().map(Value::to_string).collect();
    session(p, &lines)
        .into_iter()
        .filter_map(|v| Some((v["id"].as_u64()?, v)))
        .collect()
}

/// `baton mcp` in `p`, running: messages sent one at a time, answers read as they come.
struct Live {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    answers: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Live {
    fn start(p: &Proj) -> Live {
        use std::io::BufRead;
        let mut child = p
            .cmd(&["mcp"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let answers = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut live = Live {
            child,
            stdin,
            answers,
        };
        for m in handshake() {
            live.send(m);
        }
        live
    }

    fn send(&mut self, v: Value) {
        use std::io::Write;
        writeln!(self.stdin, "{v}").unwrap();
    }

    /// The next answer that is not the handshake's.
    fn next(&mut self) -> Value {
        self.answers
            .by_ref()
            .map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap())
            .find(|v| v["id"] != 0)
            .unwrap()
    }

    /// The answer to request `id` (others before it are passed over).
    fn answer(&mut self, id: u64) -> Value {
        loop {
            let v = self.next();
            if v["id"] == id {
                return v;
            }
        }
    }

    fn close(self) {
        let Live {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        child.wait().unwrap();
    }
}

#[test]
fn tools_say_whether_they_only_read_and_outline_takes_a_directory() {
    let tools = rmcp_free_list();
    let notes = |name: &str| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["annotations"]
            .clone()
    };
    assert_eq!(notes("retrieve")["readOnlyHint"], true);
    assert_eq!(notes("outline")["readOnlyHint"], true);
    assert_eq!(notes("store")["readOnlyHint"], false);
    assert_eq!(
        notes("store")["destructiveHint"],
        false,
        "a store never overwrites"
    );
    assert_eq!(
        notes("mask")["destructiveHint"],
        true,
        "it runs any command"
    );
    let p = Proj::new();
    p.write(
        "src/a.py",
        "def f(x):\n    return x\n\nclass A:\n    def m(self):\n        pass\n",
    );
    p.write("src/b.rs", "fn main() {}\n");
    crate::util::git(p.path(), &["add", "-A"]);
    let answers = rpc(
        &p,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "outline", "arguments": {"file": "src"}}}),
        ],
    );
    let text = answers[&1]["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(answers[&1]["result"]["isError"], false, "{text}");
    assert!(text.contains("src/a.py  (python, 6 lines"), "{text}");
    assert!(text.contains("4-6 class A"), "{text}");
    assert!(text.contains("src/b.rs  (rust, 1 lines"), "{text}");
}

/// What the SDK would drop or answer without the request's id is answered in JSON-RPC's own
/// terms: a line that is not JSON `-32700`, `params` that is not an object `-32602` with the
/// request's id, a message over the limit `-32600` naming it; the server goes on answering.
#[test]
fn malformed_messages_get_json_rpc_errors_and_the_server_goes_on() {
    let p = Proj::new();
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{{\"name\":\"query\",\"arguments\":{{\"query\":\"{}\"}}}}}}",
        "x".repeat(5 << 20)
    );
    let answers = session(
        &p,
        &[
            "this is not json".to_string(),
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": "oops"})
                .to_string(),
            big,
            "[".repeat(200_000),
            json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}).to_string(),
        ],
    );
    let code_of = |id: Value| {
        answers
            .iter()
            .filter(|a| a["id"] == id)
            .map(|a| a["error"]["code"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(code_of(json!(5)), [json!(-32602)]);
    // The not-JSON line, the too-deep one and the too-large one: id null (none can be read).
    let mut nulls = code_of(Value::Null);
    nulls.sort_by_key(|c| c.as_i64());
    assert_eq!(nulls, [json!(-32700), json!(-32700), json!(-32600)]);
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 6 && a["result"] == json!({})),
        "{answers:?}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 0 && a["result"]["serverInfo"]["name"] == "baton")
    );
}

/// A `mask` call the client cancels stops its command's process group at once (it would run
/// on unseen), and the server goes on answering.
#[test]
fn a_cancelled_mask_call_stops_its_command() {
    let p = Proj::new();
    let pidfile = p.path().join("pid");
    let mut live = Live::start(&p);
    let script = format!("echo $$ > {}; sleep 60", pidfile.display());
    live.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mask", "arguments": {"command": ["sh", "-c", script]}}}),
    );
    let t = std::time::Instant::now();
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
        {
            break pid;
        }
        assert!(t.elapsed().as_secs() < 20, "the command never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // SAFETY: kill(2) with signal 0 only asks whether the process exists.
    let alive = |pid: i32| unsafe { libc::kill(pid, 0) } == 0;
    assert!(alive(pid));
    live.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "test"}}),
    );
    let t = std::time::Instant::now();
    while alive(pid) {
        assert!(
            t.elapsed().as_secs() < 5,
            "the cancelled command still runs"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    live.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(live.answer(2)["result"], json!({}));
    live.close();
}

/// A ping sent while a tool call runs is answered at once, not after the call.
#[test]
fn a_ping_during_a_running_tool_call_is_answered_within_a_second() {
    let p = Proj::new();
    let mut live = Live::start(&p);
    live.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mask", "arguments": {"command": ["sleep", "4"]}}}),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let sent = std::time::Instant::now();
    live.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    let first = live.next();
    let waited = sent.elapsed();
    assert_eq!(first["id"], 2, "the ping is answered before the call ends");
    assert!(waited < std::time::Duration::from_secs(1), "{waited:?}");
    let call = live.answer(1);
    assert_eq!(call["result"]["isError"], false, "{call}");
    live.close();
}

/// Hostile messages by the hundred — not JSON, wrong types, unknown tools and arguments, huge
/// strings, deep nesting, paths leaving the project through every argument that takes one — and
/// the server: answers every request that has an id with that id, reads and writes nothing
/// outside the project, and still answers a ping at the end.
#[test]
fn hostile_messages_get_answers_and_nothing_leaves_the_project() {
    let outer = tempfile::tempdir().unwrap();
    let secret = outer.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET-CONTENT").unwrap();
    let p = Proj::new();
    let escapes = [
        "../secret.txt".to_string(),
        "/etc/passwd".to_string(),
        secret.display().to_string(),
        "docs/../../secret.txt".to_string(),
        "\u{0}".to_string(),
        "".to_string(),
    ];
    let mut messages: Vec<String> = Vec::new();
    let mut ids: Vec<u64> = Vec::new();
    let mut id = 100u64;
    let mut request = |messages: &mut Vec<String>, params: Value| {
        id += 1;
        ids.push(id);
        messages.push(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
                .to_string(),
        );
    };
    for tool in ["extract", "outline", "budget"] {
        for e in &escapes {
            request(
                &mut messages,
                json!({"name": tool, "arguments": {"file": e}}),
            );
        }
    }
    for tool in [
        "task_init",
        "phase_begin",
        "phase_complete",
        "gate",
        "store",
        "retrieve",
        "status",
        "query",
        "mask",
        "extract",
        "outline",
        "budget",
        "nope",
    ] {
        for args in [
            json!(null),
            json!([]),
            json!("text"),
            json!({"task": 7}),
            json!({"unknown": "x"}),
            json!({"task": "../../etc"}),
            json!({"phase": "x".repeat(100_000)}),
            json!({"command": "not-an-array"}),
            json!({"command": [1, 2]}),
            json!({"query": {"deep": [[[[[[1]]]]]]}}),
        ] {
            request(&mut messages, json!({"name": tool, "arguments": args}));
        }
    }
    for bad in [
        "{",
        "null",
        "[]",
        "\"str\"",
        "{\"jsonrpc\":\"2.0\"}",
        "{\"id\":{}}",
    ] {
        messages.push(bad.to_string());
    }
    messages.push("[".repeat(50_000));
    messages.push(format!("{{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"tools/call\",\"params\":{{\"name\":\"query\",\"arguments\":{{\"query\":\"{}\"}}}}}}", "y".repeat(3 << 20)));
    ids.push(99);
    assert!(messages.len() >= 150, "{}", messages.len());
    messages.push(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string());
    let answers = session(&p, &messages);
    let answered: std::collections::BTreeSet<u64> =
        answers.iter().filter_map(|a| a["id"].as_u64()).collect();
    let missing: Vec<&u64> = ids.iter().filter(|i| !answered.contains(i)).collect();
    assert!(
        missing.is_empty(),
        "requests without an answer: {missing:?}"
    );
    assert!(answered.contains(&1), "the last ping");
    let all = answers.iter().map(Value::to_string).collect::<String>();
    assert!(
        !all.contains("TOP-SECRET-CONTENT"),
        "a file outside was read"
    );
    assert!(!all.contains("root:x:0:0"), "/etc/passwd was read");
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "TOP-SECRET-CONTENT"
    );
    let outside: Vec<_> = std::fs::read_dir(outer.path()).unwrap().collect();
    assert_eq!(outside.len(), 1, "nothing written beside the project");
}

/// The mask tool that cannot make its scratch file answers with the error and never starts the
/// command (it used to start it first, and leave it running unwaited).
#[test]
fn the_mask_tool_without_a_scratch_file_starts_nothing() {
    let p = Proj::new();
    p.write(".baton/scratch", "in the way");
    let marker = p.path().join("ran");
    let script = format!(": > '{}'", marker.display());
    let answers = rpc(
        &p,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mask", "arguments": {"command": ["sh", "-c", script]}}}),
        ],
    );
    let text = answers[&1]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(answers[&1]["result"]["isError"], true, "{text}");
    assert!(
        text.contains("scratch: exists but is not a directory"),
        "{text}"
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!marker.exists(), "the command ran");
}
