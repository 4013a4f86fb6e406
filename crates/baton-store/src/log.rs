//! `events.jsonl`: the append-only source of truth of one task. One JSON event per line;
//! a line is acknowledged only once it and its newline are fsync'd.

use std::path::Path;

use super::machine;
use super::model::{EVENT_FORMAT, Event, Manifest};
use crate::error::{Error, Result};
use baton_core::error::io_err;
use baton_core::fs;

/// What the end of the log looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    /// `seq` of the last complete event (0 for an empty log).
    pub last_seq: u64,
    /// Bytes after the last newline: a write torn by a crash, never acknowledged.
    pub torn: Option<Vec<u8>>,
    pub len: u64,
}

/// Read only the end of the log: cost does not grow with history.
pub fn tail(path: &Path) -> Result<Tail> {
    let mut window = 8 * 1024;
    loop {
        let (buf, len) = fs::read_tail(path, window)?;
        if len == 0 {
            return Ok(Tail {
                last_seq: 0,
                torn: None,
                len,
            });
        }
        let complete_end = buf.iter().rposition(|&b| b == b'\n').map(|i| i + 1);
        let torn = match complete_end {
            Some(end) if end == buf.len() => None,
            Some(end) => Some(buf[end..].to_vec()),
            None if (buf.len() as u64) == len => Some(buf.clone()),
            None => {
                window *= 8; // one huge torn line: look further back
                continue;
            }
        };
        let Some(end) = complete_end else {
            return Ok(Tail {
                last_seq: 0,
                torn,
                len,
            });
        };
        let body = &buf[..end - 1];
        let start = body.iter().rposition(|&b| b == b'\n').map(|i| i + 1);
        if start.is_none() && (buf.len() as u64) < len {
            window *= 8;
            continue;
        }
        let line = &body[start.unwrap_or(0)..];
        let ev: Event = serde_json::from_slice(line).map_err(|e| {
            Error::corrupt(path, None, format!("the last event cannot be read ({e})"))
        })?;
        if ev.v != EVENT_FORMAT {
            // A write must refuse what a read refuses, with the same words: the full read
            // names the line (only on this error path does a write pay for it).
            return Err(read_all(path).err().unwrap_or_else(|| {
                Error::corrupt(
                    path,
                    None,
                    format!(
                        "event format v{} is not supported (this baton reads v{EVENT_FORMAT})",
                        ev.v
                    ),
                )
            }));
        }
        return Ok(Tail {
            last_seq: ev.seq,
            torn,
            len,
        });
    }
}

/// Move a torn tail aside (into `events.jsonl.torn`, never deleted) and cut the log back to
/// its last complete line. Returns whether anything was repaired.
pub fn repair_torn(path: &Path, t: &Tail) -> Result<bool> {
    let Some(torn) = &t.torn else {
        return Ok(false);
    };
    let aside = path.with_extension("jsonl.torn");
    let mut rec = torn.clone();
    rec.push(b'\n');
    fs::append_durable(&aside, &rec)?;
    let f = fs::open_own(path, std::fs::OpenOptions::new().write(true))?;
    f.set_len(t.len - torn.len() as u64).map_err(io_err(path))?;
    f.sync_data().map_err(io_err(path))?;
    Ok(true)
}

/// Append events in one write and fsync.
pub fn append(path: &Path, events: &[Event]) -> Result<()> {
    let mut buf = Vec::with_capacity(256 * events.len());
    for e in events {
        serde_json::to_writer(&mut buf, e).map_err(|e| Error::internal(e.to_string()))?;
        buf.push(b'\n');
    }
    Ok(fs::append_durable(path, &buf)?)
}

/// Every event, validated: each line parses, has a known format version and the next `seq`.
/// A torn last line (no newline) is ignored: it was never acknowledged.
pub fn read_all(path: &Path) -> Result<Vec<Event>> {
    let bytes = fs::read_no_link(path).map_err(|e| fs::no_link(path, e))?;
    let complete = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(i) => &bytes[..=i],
        None => &bytes[..0],
    };
    let mut events = Vec::new();
    for (i, line) in complete.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let n = i + 1;
        let ev: Event = serde_json::from_slice(line)
            .map_err(|e| Error::corrupt(path, Some(n), format!("not a valid event: {e}")))?;
        if ev.v != EVENT_FORMAT {
            return Err(Error::corrupt(
                path,
                Some(n),
                format!(
                    "event format v{} is not supported (this baton reads v{EVENT_FORMAT})",
                    ev.v
                ),
            ));
        }
        let expected = events.len() as u64 + 1;
        if ev.seq != expected {
            return Err(Error::corrupt(
                path,
                Some(n),
                format!(
                    "event seq {} where {expected} was expected (lost or duplicated event)",
                    ev.seq
                ),
            ));
        }
        events.push(ev);
    }
    Ok(events)
}

/// Rebuild the manifest by replaying every event through the state machine.
pub fn replay(path: &Path) -> Result<Option<Manifest>> {
    let events = read_all(path)?;
    let mut iter = events.iter().enumerate();
    let Some((_, first)) = iter.next() else {
        return Ok(None);
    };
    let bad = |i: usize, err: Error| {
        Error::corrupt(
            path,
            Some(i + 1),
            format!("event cannot be replayed: {err}"),
        )
    };
    let mut m = machine::create(first).map_err(|e| bad(0, e))?;
    for (i, e) in iter {
        machine::step(&mut m, e).map_err(|err| bad(i, err))?;
    }
    Ok(Some(m))
}
