//! What reaches the MCP SDK: every line from the client is looked at first, and what the SDK
//! would drop or answer without the request's id is answered here, in JSON-RPC's own terms.
//! A line that is not JSON gets `-32700` (id null), one over the size limit `-32600` naming the
//! limit, a request whose `params` is neither an object nor an array `-32602` with its id.
//! Everything else goes on to the SDK unchanged; the SDK's answers and these share stdout one
//! whole line at a time.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The largest message taken (a tool's arguments included).
pub const MAX_LINE: usize = 4 << 20;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to the SDK.
    Forward,
    /// Answer it here with this response.
    Answer(Value),
    /// Nothing (a blank line).
    Skip,
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// The verdict on one line (without its newline).
pub fn judge(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    if line.len() > MAX_LINE {
        return Verdict::Answer(error(
            Value::Null,
            -32600,
            format!(
                "request too large: {} bytes, the limit is {MAX_LINE} bytes",
                line.len()
            ),
        ));
    }
    let v: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return Verdict::Answer(error(Value::Null, -32700, format!("parse error: {e}"))),
    };
    let Value::Object(m) = &v else {
        // A batch, or not a message at all: the SDK answers what it knows.
        return Verdict::Forward;
    };
    let id = m.get("id").cloned();
    match (id, m.get("params")) {
        (Some(id), Some(p)) if !p.is_object() && !p.is_array() && !p.is_null() => {
            Verdict::Answer(error(
                id,
                -32602,
                "invalid params: `params` must be an object".to_string(),
            ))
        }
        _ => Verdict::Forward,
    }
}

/// Pump `client` (the process's stdin) through [`judge`] into `sdk_in`, and the SDK's output
/// `sdk_out` together with the gate's own answers to `out` (stdout), line by line.
pub async fn run(
    client: impl AsyncRead + Unpin + Send + 'static,
    mut sdk_in: impl AsyncWrite + Unpin + Send + 'static,
    sdk_out: impl AsyncRead + Unpin + Send + 'static,
    mut out: impl AsyncWrite + Unpin + Send + 'static,
) {
    let (answers, mut answered) = mpsc::unbounded_channel::<Value>();
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(client);
        let mut line = Vec::new();
        loop {
            line.clear();
            // Read at most one byte past the limit into memory; the rest of a longer line is
            // skipped up to its newline.
            match read_bounded(&mut lines, &mut line).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => break,
            }
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            match judge(body) {
                Verdict::Forward => {
                    if sdk_in.write_all(body).await.is_err()
                        || sdk_in.write_all(b"\n").await.is_err()
                    {
                        break;
                    }
                    let _ = sdk_in.flush().await;
                }
                Verdict::Answer(a) => {
                    let _ = answers.send(a);
                }
                Verdict::Skip => {}
            }
        }
        // The client closed: so does the SDK's input.
        let _ = sdk_in.shutdown().await;
    });
    let mut sdk_lines = BufReader::new(sdk_out).lines();
    // Until both are done: the SDK's answers, and the gate's own (whose sender goes with the
    // reader, at the client's end of input).
    let (mut sdk_open, mut gate_open) = (true, true);
    while sdk_open || gate_open {
        tokio::select! {
            line = sdk_lines.next_line(), if sdk_open => match line {
                Ok(Some(l)) => {
                    if out.write_all(l.as_bytes()).await.is_err() || out.write_all(b"\n").await.is_err() {
                        break;
                    }
                    let _ = out.flush().await;
                }
                _ => sdk_open = false,
            },
            a = answered.recv(), if gate_open => match a {
                Some(a) => {
                    let text = format!("{a}\n");
                    if out.write_all(text.as_bytes()).await.is_err() {
                        break;
                    }
                    let _ = out.flush().await;
                }
                None => gate_open = false,
            },
        }
    }
    reader.abort();
}

/// One line into `buf`, keeping at most [`MAX_LINE`] + 1 bytes of it.
async fn read_bounded<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(total);
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = (MAX_LINE + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        total += take;
        r.consume(take);
        if done {
            return Ok(total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_sdk_would_drop_or_answer_without_an_id_is_answered_here() {
        assert_eq!(judge(b"  "), Verdict::Skip);
        let Verdict::Answer(a) = judge(b"{not json") else {
            panic!()
        };
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (Value::Null, json!(-32700))
        );
        let Verdict::Answer(a) =
            judge(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"x"}"#)
        else {
            panic!()
        };
        assert_eq!(
            (a["id"].clone(), a["error"]["code"].clone()),
            (json!(7), json!(-32602))
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Forward
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{}}"#),
            Verdict::Forward
        );
        let big = vec![b' '; MAX_LINE + 1];
        let mut big = big;
        big[0] = b'{';
        let Verdict::Answer(a) = judge(&big) else {
            panic!()
        };
        assert!(
            a["error"]["message"]
                .as_str()
                .unwrap()
                .contains("the limit is 4194304 bytes")
        );
        // Nesting deeper than serde_json's limit is a parse error, not a stack overflow.
        let deep = "[".repeat(100_000);
        assert!(matches!(judge(deep.as_bytes()), Verdict::Answer(_)));
    }
}
