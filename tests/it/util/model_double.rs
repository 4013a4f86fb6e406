//! The model double: a local stand-in of the model API a real agent CLI calls, so the real
//! `claude` runs whole sessions here with no network. It proves baton's plumbing (what the CLI
//! offers the model, what a tool result looks like once baton's hooks have run, how baton reads
//! the CLI's failures), not model quality.
//!
//! A test gives it a [`Script`]: for each request, what the "model" answers (a text, a tool
//! call, an HTTP error, a stream cut mid-message). Every request is recorded with the tools it
//! offered and the tool results as the model was shown them.
//!
//! The Anthropic Messages API, as claude-code 2.1.197 calls it: `POST /v1/messages?beta=true`
//! (streamed as server-sent events: `message_start`, `content_block_start`,
//! `content_block_delta` with `text_delta` / `input_json_delta`, `content_block_stop`,
//! `message_delta` with the stop reason, `message_stop`; or one JSON message when `stream` is
//! false) and `POST /v1/messages/count_tokens`.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

/// One request the CLI sent.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub body: Value,
}

impl Request {
    /// The names of the tools offered with this request.
    pub fn tools(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect()
    }

    fn messages(&self) -> impl Iterator<Item = &Value> {
        self.body["messages"].as_array().into_iter().flatten()
    }

    /// Every text block of the user's messages (the prompt, system reminders), joined.
    pub fn user_text(&self) -> String {
        let mut out = String::new();
        for m in self.messages().filter(|m| m["role"] == "user") {
            match &m["content"] {
                Value::String(s) => out.push_str(s),
                Value::Array(blocks) => {
                    for b in blocks.iter().filter(|b| b["type"] == "text") {
                        out.push_str(b["text"].as_str().unwrap_or(""));
                        out.push('\n');
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The tool results the model is shown in this request, oldest first, each as its text.
    pub fn tool_results(&self) -> Vec<String> {
        let mut out = Vec::new();
        for m in self.messages() {
            for b in m["content"].as_array().into_iter().flatten() {
                if b["type"] != "tool_result" {
                    continue;
                }
                out.push(match &b["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                });
            }
        }
        out
    }

    /// How many tool calls the model made before this request.
    pub fn turns(&self) -> usize {
        self.tool_results().len()
    }
}

/// What the model answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A text, ending the turn.
    Text(String),
    /// A call of `name` with `input`.
    Tool { name: String, input: Value },
    /// An HTTP error: status, extra headers, and the API's error body.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        body: Value,
    },
    /// A stream that starts a message and ends, mid-message, without `message_stop`.
    Cut,
}

impl Reply {
    pub fn tool(name: &str, input: Value) -> Reply {
        Reply::Tool {
            name: name.to_string(),
            input,
        }
    }

    /// The Anthropic error body for `code`.
    pub fn error(code: u16, kind: &str, message: &str) -> Reply {
        Reply::Status {
            code,
            headers: Vec::new(),
            body: json!({"type": "error", "error": {"type": kind, "message": message}}),
        }
    }
}

/// Decides each answer from the request.
pub type Script = Box<dyn Fn(&Request) -> Reply + Send + Sync>;

/// A running model double; stopped when dropped.
pub struct ModelDouble {
    pub url: String,
    log: Arc<Mutex<Vec<Request>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl ModelDouble {
    /// An Anthropic Messages API on a free loopback port.
    pub fn anthropic(script: Script) -> ModelDouble {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind loopback"));
        let url = format!("http://{}", server.server_addr());
        let log = Arc::new(Mutex::new(Vec::new()));
        let (s, l) = (server.clone(), log.clone());
        let thread = std::thread::spawn(move || {
            for req in s.incoming_requests() {
                serve(req, &script, &l);
            }
        });
        ModelDouble {
            url,
            log,
            server,
            thread: Some(thread),
        }
    }

    /// The model requests (`/v1/messages`) so far, oldest first.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for ModelDouble {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

fn respond(req: tiny_http::Request, code: u16, content_type: &str, body: Vec<u8>) {
    let resp = tiny_http::Response::from_data(body)
        .with_status_code(code)
        .with_header(header("content-type", content_type));
    let _ = req.respond(resp);
}

fn serve(mut req: tiny_http::Request, script: &Script, log: &Mutex<Vec<Request>>) {
    let path = req.url().to_string();
    let mut raw = Vec::new();
    let _ = req.as_reader().read_to_end(&mut raw);
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    if *req.method() != tiny_http::Method::Post {
        return respond(req, 404, "text/plain", Vec::new());
    }
    if path.starts_with("/v1/messages/count_tokens") {
        // About four bytes a token: enough for a CLI's own estimates.
        let n = raw.len() / 4;
        return respond(
            req,
            200,
            "application/json",
            json!({"input_tokens": n}).to_string().into_bytes(),
        );
    }
    if !path.starts_with("/v1/messages") {
        return respond(req, 404, "text/plain", Vec::new());
    }
    let request = Request { path, body };
    let reply = script(&request);
    let stream = request.body["stream"].as_bool().unwrap_or(false);
    let model = request.body["model"]
        .as_str()
        .unwrap_or("claude-double")
        .to_string();
    let input_tokens = raw.len() / 4;
    log.lock().unwrap().push(request);
    match reply {
        Reply::Status {
            code,
            headers,
            body,
        } => {
            let mut resp = tiny_http::Response::from_data(body.to_string().into_bytes())
                .with_status_code(code)
                .with_header(header("content-type", "application/json"));
            for (k, v) in headers {
                resp = resp.with_header(header(&k, &v));
            }
            let _ = req.respond(resp);
        }
        Reply::Cut => {
            let start = message_start(&model, input_tokens);
            let text = sse(&[
                ("message_start", start),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0,
                           "content_block": {"type": "text", "text": ""}}),
                ),
            ]);
            // The stream ends, complete as HTTP, after its first events: no `message_stop`.
            let resp = tiny_http::Response::from_data(text.into_bytes())
                .with_header(header("content-type", "text/event-stream"));
            let _ = req.respond(resp);
        }
        reply if stream => {
            let body = sse(&events(&reply, &model, input_tokens));
            respond(req, 200, "text/event-stream", body.into_bytes());
        }
        reply => {
            let mut msg = message_start(&model, input_tokens)["message"].clone();
            let (block, stop) = block_of(&reply);
            msg["content"] = json!([block]);
            msg["stop_reason"] = json!(stop);
            respond(req, 200, "application/json", msg.to_string().into_bytes());
        }
    }
}

fn message_start(model: &str, input_tokens: usize) -> Value {
    json!({"type": "message_start", "message": {
        "id": "msg_double", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    }})
}

/// The finished content block of a reply, and its stop reason.
fn block_of(reply: &Reply) -> (Value, &'static str) {
    match reply {
        Reply::Text(t) => (json!({"type": "text", "text": t}), "end_turn"),
        Reply::Tool { name, input } => (
            json!({"type": "tool_use", "id": tool_use_id(), "name": name, "input": input}),
            "tool_use",
        ),
        Reply::Status { .. } | Reply::Cut => unreachable!("not a message"),
    }
}

fn tool_use_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!("toolu_double_{:04}", N.fetch_add(1, Ordering::Relaxed))
}

/// The stream events of one message.
fn events(reply: &Reply, model: &str, input_tokens: usize) -> Vec<(&'static str, Value)> {
    let (block, stop) = block_of(reply);
    let (start, delta) = match reply {
        Reply::Text(t) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": t}),
        ),
        _ => {
            let mut empty = block.clone();
            empty["input"] = json!({});
            (
                empty,
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            )
        }
    };
    vec![
        ("message_start", message_start(model, input_tokens)),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": start}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": 10}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}
