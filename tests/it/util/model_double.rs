//! The model double: a local stand-in of the model API a real agent CLI calls, so the real
//! `claude` runs whole sessions here with no network. It proves baton's plumbing (what the CLI
//! offers the model, what a tool result looks like once baton's hooks have run, how baton reads
//! the CLI's failures), not model quality.
//!
//! A test gives it a [`Script`]: for each request, what the "model" answers (a text, a tool
//! call, an HTTP error, a stream cut mid-message). Every request is recorded with the tools it
//! offered and the tool results as the model was shown them.
//!
//! Two APIs, as the CLIs call them:
//! - Anthropic Messages (claude-code 2.1.197, `ANTHROPIC_BASE_URL`): `POST /v1/messages?beta=true`
//!   streamed as server-sent events (`message_start`, `content_block_start`,
//!   `content_block_delta` with `text_delta` / `input_json_delta`, `content_block_stop`,
//!   `message_delta` with the stop reason, `message_stop`), or one JSON message when `stream`
//!   is false; `POST /v1/messages/count_tokens`.
//! - Gemini (gemini-cli 0.61.0, `GOOGLE_GEMINI_BASE_URL`): `POST /v1beta/models/M:streamGenerateContent?alt=sse`
//!   (each event a `GenerateContentResponse`: `candidates[0].content.parts` of `text` or
//!   `functionCall {name, args}`, `finishReason`, `usageMetadata`), the model router's
//!   `:generateContent` without tools (answered `{complexity_reasoning, complexity_score}`
//!   by the double itself, never the script), `:countTokens`.
//! - OpenAI Responses (codex 0.171.0, a `model_providers` entry with `wire_api = "responses"`):
//!   `POST /v1/responses`, streamed as `response.created`, `response.output_item.done` (a
//!   `message` with `output_text`, or a `function_call {name, arguments, call_id}`, codex's
//!   shell being `exec_command {cmd}`), `response.completed` with the usage; a tool's result
//!   comes back as a `function_call_output` input item.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

/// The model API a double speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    Gemini,
    /// The OpenAI Responses API, as codex 0.171.0 calls it.
    OpenAi,
}

impl Api {
    /// Where the CLI sends its model requests.
    pub fn path(self) -> &'static str {
        match self {
            Api::Anthropic => "/v1/messages",
            Api::Gemini => "/v1beta/models/",
            Api::OpenAi => "/v1/responses",
        }
    }
}

/// One request the CLI sent.
#[derive(Debug, Clone)]
pub struct Request {
    pub api: Api,
    pub path: String,
    pub body: Value,
    /// The body's size in bytes; the double reports `size / 4` as the request's input tokens.
    pub size: usize,
}

fn array<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v[key].as_array().into_iter().flatten()
}

impl Request {
    /// The names of the tools offered with this request.
    pub fn tools(&self) -> Vec<String> {
        if self.api == Api::OpenAi {
            // A namespace (an MCP server) holds its tools: `<namespace>__<tool>`.
            let mut out = Vec::new();
            for t in array(&self.body, "tools") {
                let name = t["name"].as_str().unwrap_or_default();
                match t["type"].as_str() {
                    Some("namespace") => out.extend(
                        array(t, "tools")
                            .filter_map(|x| x["name"].as_str())
                            .map(|x| format!("{name}__{x}")),
                    ),
                    _ => out.push(name.to_string()),
                }
            }
            return out;
        }
        let names: Vec<&Value> = match self.api {
            Api::Anthropic | Api::OpenAi => {
                array(&self.body, "tools").map(|t| &t["name"]).collect()
            }
            Api::Gemini => array(&self.body, "tools")
                .flat_map(|t| array(t, "functionDeclarations"))
                .map(|f| &f["name"])
                .collect(),
        };
        names
            .into_iter()
            .filter_map(|n| n.as_str().map(String::from))
            .collect()
    }

    /// Every text the user's turns hold (the prompt, system reminders), joined.
    pub fn user_text(&self) -> String {
        let mut out = String::new();
        let list = match self.api {
            Api::Anthropic => "messages",
            Api::Gemini => "contents",
            Api::OpenAi => "input",
        };
        let role = "user";
        for m in array(&self.body, list).filter(|m| m["role"] == role) {
            match (&m["content"], self.api) {
                (Value::String(s), Api::Anthropic) => out.push_str(s),
                (Value::Array(blocks), Api::Anthropic) => {
                    for b in blocks.iter().filter(|b| b["type"] == "text") {
                        out.push_str(b["text"].as_str().unwrap_or(""));
                        out.push('\n');
                    }
                }
                (Value::Array(parts), Api::OpenAi) => {
                    for p in parts {
                        if let Some(t) = p["text"].as_str() {
                            out.push_str(t);
                            out.push('\n');
                        }
                    }
                }
                _ => {
                    for part in array(m, "parts") {
                        if let Some(t) = part["text"].as_str() {
                            out.push_str(t);
                            out.push('\n');
                        }
                    }
                }
            }
        }
        out
    }

    /// The tool results the model is shown in this request, oldest first, each as its text.
    pub fn tool_results(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.api {
            Api::Anthropic => {
                for m in array(&self.body, "messages") {
                    for b in array(m, "content").filter(|b| b["type"] == "tool_result") {
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
            }
            Api::OpenAi => {
                for item in array(&self.body, "input") {
                    if item["type"] == "function_call_output" {
                        out.push(match &item["output"] {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        });
                    }
                }
            }
            Api::Gemini => {
                for c in array(&self.body, "contents") {
                    for part in array(c, "parts") {
                        let r = &part["functionResponse"]["response"];
                        if r.is_null() {
                            continue;
                        }
                        // A result, or the reason a hook gave for replacing it (`error`).
                        out.push(match r["output"].as_str().or(r["error"].as_str()) {
                            Some(s) => s.to_string(),
                            None => r.to_string(),
                        });
                    }
                }
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
    /// An HTTP error: status, extra headers, and the message of the API's error body.
    Status {
        code: u16,
        headers: Vec<(String, String)>,
        message: String,
    },
    /// A stream that starts a message and ends, mid-message, without `message_stop`.
    Cut,
    /// A spent usage limit, as each API answers it: Anthropic a 429 whose unified rate-limit
    /// headers say `rejected`, with the `five_hour` claim and `resets_at` (claude words it
    /// for a subscriber); OpenAI a 429 `usage_limit_reached` with the plan and `resets_at`
    /// (codex words it); Gemini a 429 whose `QuotaFailure` names a per-day quota (gemini-cli
    /// reads it as terminal; the API gives no time).
    QuotaSpent { resets_at: u64 },
    /// No answer at all: the request is read and the connection held open, never answered
    /// (until the double is dropped): a server that hangs.
    Silent,
}

impl Reply {
    pub fn tool(name: &str, input: Value) -> Reply {
        Reply::Tool {
            name: name.to_string(),
            input,
        }
    }

    /// An HTTP error `code` with the API's error body.
    pub fn error(code: u16, message: &str) -> Reply {
        Reply::Status {
            code,
            headers: Vec::new(),
            message: message.to_string(),
        }
    }

    /// A rate limit, asking to wait `retry_after` seconds.
    pub fn rate_limited(retry_after: u32) -> Reply {
        Reply::Status {
            code: 429,
            headers: vec![("retry-after".into(), retry_after.to_string())],
            message: "rate limited by the model double".into(),
        }
    }
}

/// Decides each answer from the request.
pub type Script = Box<dyn Fn(&Request) -> Reply + Send + Sync>;

type Held = Arc<Mutex<Vec<tiny_http::Request>>>;

/// `reply` is [`Reply::Silent`]: `req` is held open, never answered.
fn hold(held: &Held, req: tiny_http::Request, reply: &Reply) -> Option<tiny_http::Request> {
    if matches!(reply, Reply::Silent) {
        held.lock().unwrap().push(req);
        return None;
    }
    Some(req)
}

/// A running model double; stopped when dropped.
pub struct ModelDouble {
    pub url: String,
    log: Arc<Mutex<Vec<Request>>>,
    /// Requests answered [`Reply::Silent`], held open.
    held: Held,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl ModelDouble {
    /// An Anthropic Messages API on a free loopback port.
    pub fn anthropic(script: Script) -> ModelDouble {
        ModelDouble::start(Api::Anthropic, script)
    }

    /// An OpenAI Responses API on a free loopback port.
    pub fn openai(script: Script) -> ModelDouble {
        ModelDouble::start(Api::OpenAi, script)
    }

    /// A Gemini API on a free loopback port.
    pub fn gemini(script: Script) -> ModelDouble {
        ModelDouble::start(Api::Gemini, script)
    }

    fn start(api: Api, script: Script) -> ModelDouble {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind loopback"));
        let url = format!("http://{}", server.server_addr());
        let log = Arc::new(Mutex::new(Vec::new()));
        let held: Held = Arc::default();
        let (s, l, h) = (server.clone(), log.clone(), held.clone());
        let thread = std::thread::spawn(move || {
            for req in s.incoming_requests() {
                match api {
                    Api::Anthropic => serve(req, &script, &l, &h),
                    Api::Gemini => serve_gemini(req, &script, &l, &h),
                    Api::OpenAi => serve_openai(req, &script, &l, &h),
                }
            }
        });
        ModelDouble {
            url,
            log,
            held,
            server,
            thread: Some(thread),
        }
    }

    /// The model requests so far (not token counts, not gemini's router), oldest first.
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
        self.held.lock().unwrap().clear();
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

/// A POST to `api`'s path: the path, the body's size and the body as JSON (`Null` when it is
/// not JSON). Anything else is answered 404 here.
fn read_post(
    mut req: tiny_http::Request,
    api: Api,
) -> Option<(tiny_http::Request, String, usize, Value)> {
    let path = req.url().to_string();
    let mut raw = Vec::new();
    let _ = req.as_reader().read_to_end(&mut raw);
    if *req.method() != tiny_http::Method::Post || !path.starts_with(api.path()) {
        respond(req, 404, "text/plain", Vec::new());
        return None;
    }
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    Some((req, path, raw.len(), body))
}

fn serve(req: tiny_http::Request, script: &Script, log: &Mutex<Vec<Request>>, held: &Held) {
    let Some((req, path, size, body)) = read_post(req, Api::Anthropic) else {
        return;
    };
    // About four bytes a token: enough for a CLI's own estimates.
    let input_tokens = size / 4;
    if path.starts_with("/v1/messages/count_tokens") {
        let n = json!({"input_tokens": input_tokens}).to_string();
        return respond(req, 200, "application/json", n.into_bytes());
    }
    let request = Request {
        api: Api::Anthropic,
        path,
        body,
        size,
    };
    let reply = anthropic_quota(script(&request));
    let Some(req) = hold(held, req, &reply) else {
        log.lock().unwrap().push(request);
        return;
    };
    let stream = request.body["stream"].as_bool().unwrap_or(false);
    let model = request.body["model"]
        .as_str()
        .unwrap_or("claude-double")
        .to_string();
    log.lock().unwrap().push(request);
    match reply {
        Reply::Status {
            code,
            headers,
            message,
        } => {
            let kind = match code {
                401 => "authentication_error",
                403 => "permission_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                _ => "api_error",
            };
            let body = json!({"type": "error", "error": {"type": kind, "message": message}});
            respond_error(req, code, &headers, body);
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

fn respond_error(req: tiny_http::Request, code: u16, headers: &[(String, String)], body: Value) {
    let mut resp = tiny_http::Response::from_data(body.to_string().into_bytes())
        .with_status_code(code)
        .with_header(header("content-type", "application/json"));
    for (k, v) in headers {
        resp = resp.with_header(header(k, v));
    }
    let _ = req.respond(resp);
}

fn serve_gemini(req: tiny_http::Request, script: &Script, log: &Mutex<Vec<Request>>, held: &Held) {
    let Some((req, path, size, body)) = read_post(req, Api::Gemini) else {
        return;
    };
    let tokens = size / 4;
    if path.contains(":countTokens") {
        let n = json!({"totalTokens": tokens}).to_string();
        return respond(req, 200, "application/json", n.into_bytes());
    }
    let stream = path.contains(":streamGenerateContent");
    let request = Request {
        api: Api::Gemini,
        path,
        body,
        size,
    };
    // The model router's classification call: the CLI's, not the agent's turn.
    let reply = if !stream && request.tools().is_empty() {
        let verdict = json!({"complexity_reasoning": "a scripted turn", "complexity_score": 1});
        Reply::Text(verdict.to_string())
    } else {
        let reply = script(&request);
        log.lock().unwrap().push(request);
        reply
    };
    let Some(req) = hold(held, req, &reply) else {
        return;
    };
    let response = |parts: Value, finish: Option<&str>| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(f) = finish {
            candidate["finishReason"] = json!(f);
        }
        json!({"candidates": [candidate], "modelVersion": "gemini-double",
               "usageMetadata": {"promptTokenCount": tokens, "candidatesTokenCount": 10,
                                 "totalTokenCount": tokens + 10}})
    };
    let doc = match reply {
        Reply::Status {
            code,
            headers,
            message,
        } => {
            let status = match code {
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                _ => "INTERNAL",
            };
            let body = json!({"error": {"code": code, "message": message, "status": status}});
            return respond_error(req, code, &headers, body);
        }
        Reply::QuotaSpent { .. } => {
            let body = json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                "message": "Quota exceeded for quota metric 'Generate Content API requests per day' and limit 'GenerateContent request limit per day for a project'.",
                "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [{"quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                        "quotaId": "GenerateRequestsPerDayPerProjectPerModel"}]}]}});
            return respond_error(req, 429, &[], body);
        }
        Reply::Cut => {
            // A first chunk of text, then the stream ends without a finish reason.
            let first = response(json!([{"text": "I will"}]), None);
            let text = format!("data: {first}\n\n");
            return respond(req, 200, "text/event-stream", text.into_bytes());
        }
        Reply::Silent => unreachable!("held, never answered"),
        Reply::Text(t) => response(json!([{"text": t}]), Some("STOP")),
        Reply::Tool { name, input } => response(
            json!([{"functionCall": {"name": name, "args": input}}]),
            Some("STOP"),
        ),
    };
    if stream {
        respond(
            req,
            200,
            "text/event-stream",
            format!("data: {doc}\n\n").into_bytes(),
        );
    } else {
        respond(req, 200, "application/json", doc.to_string().into_bytes());
    }
}

fn serve_openai(req: tiny_http::Request, script: &Script, log: &Mutex<Vec<Request>>, held: &Held) {
    let Some((req, path, size, body)) = read_post(req, Api::OpenAi) else {
        return;
    };
    let tokens = size / 4;
    let request = Request {
        api: Api::OpenAi,
        path,
        body,
        size,
    };
    let reply = script(&request);
    log.lock().unwrap().push(request);
    let Some(req) = hold(held, req, &reply) else {
        return;
    };
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let created = event(
        "response.created",
        json!({"type": "response.created", "response": {"id": "resp_double"}}),
    );
    let item = match reply {
        Reply::Status {
            code,
            headers,
            message,
        } => {
            let kind = match code {
                401 => "invalid_request_error",
                429 => "rate_limit_exceeded",
                _ => "server_error",
            };
            let body = json!({"error": {"message": message, "type": kind, "code": kind}});
            return respond_error(req, code, &headers, body);
        }
        // Created, then nothing: the stream ends before `response.completed`.
        Reply::Cut => return respond(req, 200, "text/event-stream", created.into_bytes()),
        Reply::Silent => unreachable!("held, never answered"),
        Reply::QuotaSpent { resets_at } => {
            let body = json!({"error": {"type": "usage_limit_reached",
                "message": "The usage limit has been reached", "plan_type": "plus",
                "resets_at": resets_at}});
            return respond_error(req, 429, &[], body);
        }
        Reply::Text(t) => json!({"type": "message", "id": "msg_double", "role": "assistant",
            "content": [{"type": "output_text", "text": t, "annotations": []}]}),
        Reply::Tool { name, input } => {
            let mut call = json!({"type": "function_call", "id": "fc_double",
                "call_id": tool_use_id(), "name": name, "arguments": input.to_string()});
            // A tool of a namespace (an MCP server's) is called by its namespace and name.
            if let Some((ns, tool)) = name.rsplit_once("__").filter(|_| name.starts_with("mcp__")) {
                call["namespace"] = json!(ns);
                call["name"] = json!(tool);
            }
            call
        }
    };
    let done = event(
        "response.output_item.done",
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
    );
    let completed = event(
        "response.completed",
        json!({"type": "response.completed", "response": {"id": "resp_double", "usage": {
            "input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tokens + 10}}}),
    );
    let text = format!("{created}{done}{completed}");
    respond(req, 200, "text/event-stream", text.into_bytes());
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
        Reply::Status { .. } | Reply::Cut | Reply::QuotaSpent { .. } | Reply::Silent => {
            unreachable!("not a message")
        }
    }
}

/// Anthropic's spent limit: a 429 with the unified rate-limit headers a subscriber's claude
/// reads (status `rejected`, the claim, the reset).
fn anthropic_quota(r: Reply) -> Reply {
    match r {
        Reply::QuotaSpent { resets_at } => Reply::Status {
            code: 429,
            headers: vec![
                (
                    "anthropic-ratelimit-unified-status".into(),
                    "rejected".into(),
                ),
                (
                    "anthropic-ratelimit-unified-reset".into(),
                    resets_at.to_string(),
                ),
                (
                    "anthropic-ratelimit-unified-representative-claim".into(),
                    "five_hour".into(),
                ),
            ],
            message: "Number of requests has exceeded your rate limit".into(),
        },
        r => r,
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
