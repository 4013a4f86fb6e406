//! `baton mcp`'s input lines, raw or built from JSON-RPC's shape (ids of every JSON type,
//! methods the server knows and does not, params of every type, baton's tools with hostile
//! arguments): the gate in front of the SDK, then the SDK's own decoding of what the gate
//! forwards. Every answer the gate gives is a JSON-RPC error with the request's id when it had
//! one.
#![no_main]

use arbitrary::Arbitrary;
use baton_mcp::gate::{Verdict, judge};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "notifications/initialized",
    "notifications/cancelled",
    "resources/list",
    "prompts/get",
    "",
    "x",
];
const TOOLS: &[&str] = &[
    "mask",
    "extract",
    "outline",
    "tokens",
    "retrieve",
    "status",
    "gain",
    "begin_phase",
    "complete_phase",
    "store",
    "nope",
];

#[derive(Arbitrary, Debug)]
enum Id {
    None,
    Null,
    Int(i64),
    Float(f64),
    Str(String),
    Obj,
}

#[derive(Arbitrary, Debug)]
enum Params {
    None,
    Null,
    Number(i64),
    Text(String),
    List(Vec<String>),
    Call {
        tool: u8,
        args: Vec<(String, String)>,
        nested: u8,
    },
}

#[derive(Arbitrary, Debug)]
enum Line {
    Raw(Vec<u8>),
    Shaped {
        jsonrpc: bool,
        id: Id,
        method: u8,
        params: Params,
        batch: bool,
    },
}

fn nested(depth: u8) -> Value {
    let mut v = json!("deep");
    for _ in 0..depth {
        v = json!([v]);
    }
    v
}

fn shaped(jsonrpc: bool, id: Id, method: u8, params: Params, batch: bool) -> Vec<u8> {
    let mut m = serde_json::Map::new();
    if jsonrpc {
        m.insert("jsonrpc".into(), json!("2.0"));
    }
    match id {
        Id::None => {}
        Id::Null => {
            m.insert("id".into(), Value::Null);
        }
        Id::Int(i) => {
            m.insert("id".into(), json!(i));
        }
        Id::Float(f) => {
            m.insert("id".into(), json!(f));
        }
        Id::Str(s) => {
            m.insert("id".into(), json!(s));
        }
        Id::Obj => {
            m.insert("id".into(), json!({"a": 1}));
        }
    }
    m.insert(
        "method".into(),
        json!(METHODS[method as usize % METHODS.len()]),
    );
    let p = match params {
        Params::None => None,
        Params::Null => Some(Value::Null),
        Params::Number(n) => Some(json!(n)),
        Params::Text(t) => Some(json!(t)),
        Params::List(l) => Some(json!(l)),
        Params::Call {
            tool,
            args,
            nested: depth,
        } => {
            let mut a = serde_json::Map::new();
            for (k, v) in args {
                a.insert(k, json!(v));
            }
            a.insert("deep".into(), nested(depth));
            Some(json!({"name": TOOLS[tool as usize % TOOLS.len()], "arguments": a}))
        }
    };
    if let Some(p) = p {
        m.insert("params".into(), p);
    }
    let v = Value::Object(m);
    let v = if batch { json!([v]) } else { v };
    v.to_string().into_bytes()
}

fuzz_target!(|line: Line| {
    let line = match line {
        Line::Raw(b) => b,
        Line::Shaped {
            jsonrpc,
            id,
            method,
            params,
            batch,
        } => shaped(jsonrpc, id, method, params, batch),
    };
    match judge(&line) {
        Verdict::Skip => assert!(line.iter().all(u8::is_ascii_whitespace)),
        Verdict::Answer(v) => {
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            let code = v["error"]["code"].as_i64().expect("an error code");
            assert!((-32700..=-32600).contains(&code), "{v}");
            if let Ok(Value::Object(m)) = serde_json::from_slice(&line)
                && let Some(id) = m.get("id")
            {
                assert_eq!(&v["id"], id, "the answer keeps the request's id");
            }
        }
        Verdict::Forward => {
            let _ = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(&line);
        }
    }
});
