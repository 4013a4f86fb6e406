//! Observation masking: run a command (or read stdin), stream its combined output to
//! a scratch file, and hand back either the output itself (under the token threshold) or a
//! ~200-token summary plus the scratch file's path.
//!
//! Memory stays flat whatever the output size: bytes go to the scratch file chunk by chunk;
//! summarizers ([`summarize`]) are line state machines with bounded state; at most
//! `threshold × 16` bytes are kept for the passthrough decision.

use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

pub mod binary;
pub mod capture;
pub mod detect;
pub mod gain;
pub mod record;
pub mod redact;
mod redact_anchors;
mod redact_commands;
mod redact_fallback;
mod redact_files;
mod redact_keep;
mod redact_logins;
mod redact_next;
mod redact_prefixes;
mod redact_providers;
mod redact_rule;
mod redact_rules;
pub mod retention;
pub mod route;
mod settings;
pub use settings::MaskConfig;
pub mod scratch;
mod spawn;
pub mod summarize;
pub mod tally;
pub mod timeout;
mod words;

pub use summarize::{Counts, Failure, Summary};

use summarize::Summarizer;

/// Default threshold in tokens: longer outputs are masked.
pub const DEFAULT_THRESHOLD: usize = 2000;
/// Read size: large reads keep syscalls few on gigabyte outputs.
const CHUNK: usize = 128 * 1024;
/// A line longer than this is handed to the summarizer in pieces (the scratch file keeps it whole).
const MAX_LINE: usize = 64 * 1024;
/// Bytes per token above which output is masked without an exact count. o200k averages about
/// 4 bytes per token on code and logs; 16 would take pathological text.
const BYTES_PER_TOKEN_CAP: usize = 16;
const PREFIX_MIN: usize = 4096;
const PREFIX_MAX: usize = 16 * 1024 * 1024;
/// An output too long to keep whole is estimated (or counted) on its first this many bytes,
/// and the figure scaled to its length: the savings the mask log reports are then within a
/// few percent (bytes/4 was 30 % off on test logs).
const SAMPLE_BYTES: usize = 1024 * 1024;

/// Output formats `baton mask` understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Auto,
    CargoTest,
    Nextest,
    Pytest,
    Jest,
    Vitest,
    NodeTest,
    GoTest,
    GitDiff,
    GitDiffStat,
    Rustc,
    Tsc,
    Unittest,
    Eslint,
    Generic,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Auto => "auto",
            Kind::CargoTest => "cargo-test",
            Kind::Nextest => "nextest",
            Kind::Pytest => "pytest",
            Kind::Jest => "jest",
            Kind::Vitest => "vitest",
            Kind::NodeTest => "node-test",
            Kind::GoTest => "go-test",
            Kind::GitDiff => "git-diff",
            Kind::GitDiffStat => "git-diff-stat",
            Kind::Rustc => "rustc",
            Kind::Tsc => "tsc",
            Kind::Unittest => "unittest",
            Kind::Eslint => "eslint",
            Kind::Generic => "generic",
        }
    }
}

/// The summarizer for `kind`; `Auto` detects from the first 64 KB (and the command, if any).
pub fn summarizer(kind: Kind, command: &[String]) -> Box<dyn Summarizer + Send> {
    match kind {
        Kind::Auto => Box::new(detect::Detector::new(detect::kind_from_command(command))),
        k => summarize::for_kind(k),
    }
}

/// Summarize a complete text (tests, and callers that already hold the output).
pub fn summarize_text(kind: Kind, text: &[u8]) -> Summary {
    summarize_command_output(kind, &[], text)
}

/// Summarize the output of `command` (its name helps `--kind auto`).
pub fn summarize_command_output(kind: Kind, command: &[String], text: &[u8]) -> Summary {
    let mut m = Masker::new(std::io::sink(), summarizer(kind, command), 0);
    for chunk in text.chunks(CHUNK) {
        m.feed(chunk);
    }
    m.finish().summary
}

/// How the command ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ExitInfo {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl ExitInfo {
    /// Shell convention: the code, or 128 + signal number.
    pub fn shell_code(&self) -> u8 {
        match (self.code, self.signal) {
            (Some(c), _) => (c & 0xff) as u8,
            (None, Some(s)) => (128 + s).clamp(0, 255) as u8,
            (None, None) => 1,
        }
    }
}

/// The streaming sink: scratch file + summarizer + passthrough prefix.
pub struct Masker<W: Write> {
    out: W,
    write_error: Option<std::io::Error>,
    summarizer: Box<dyn Summarizer + Send>,
    carry: Vec<u8>,
    prefix: Option<Vec<u8>>,
    prefix_cap: usize,
    /// The first [`SAMPLE_BYTES`] of an output the prefix could not hold.
    sample: Vec<u8>,
    bytes: u64,
    newlines: u64,
    /// Line breaks handed to the summarizer so far (real ones plus forced splits of huge lines).
    line_base: u64,
    ends_with_newline: bool,
    /// Private-key state across lines.
    pem: redact::Redactor,
    /// The first bytes, until binary or not is decided (then `None`).
    sniff: Option<Vec<u8>>,
    /// Binary output, with its format when the magic number tells it.
    binary: Option<Option<&'static str>>,
}

/// What the sink saw.
pub struct Finished<W> {
    pub out: W,
    pub write_error: Option<std::io::Error>,
    pub summary: Summary,
    /// The whole output, when it fit under the passthrough cap.
    pub prefix: Option<Vec<u8>>,
    /// Else its first [`SAMPLE_BYTES`] (the whole of it when `bytes` is no more).
    pub sample: Vec<u8>,
    pub bytes: u64,
    pub lines: u64,
    /// Binary output (the summary says so), with its format when recognized.
    pub binary: Option<Option<&'static str>>,
}

impl<W: Write> Masker<W> {
    pub fn new(out: W, summarizer: Box<dyn Summarizer + Send>, threshold: usize) -> Masker<W> {
        let prefix_cap = threshold
            .saturating_mul(BYTES_PER_TOKEN_CAP)
            .clamp(PREFIX_MIN, PREFIX_MAX);
        Masker {
            out,
            write_error: None,
            summarizer,
            carry: Vec::new(),
            prefix: Some(Vec::new()),
            prefix_cap,
            sample: Vec::new(),
            bytes: 0,
            newlines: 0,
            line_base: 0,
            ends_with_newline: true,
            pem: redact::Redactor::default(),
            sniff: Some(Vec::new()),
            binary: None,
        }
    }

    fn push_sample(&mut self, chunk: &[u8]) {
        let room = SAMPLE_BYTES.saturating_sub(self.sample.len());
        self.sample
            .extend_from_slice(&chunk[..room.min(chunk.len())]);
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.bytes += chunk.len() as u64;
        if self.write_error.is_none()
            && let Err(e) = self.out.write_all(chunk)
        {
            // Keep draining and summarizing so the command is not blocked; report at the end.
            self.write_error = Some(e);
        }
        match self.prefix.as_mut() {
            Some(p) if p.len() + chunk.len() <= self.prefix_cap => p.extend_from_slice(chunk),
            Some(_) => {
                self.sample = self.prefix.take().unwrap_or_default();
                self.push_sample(chunk);
            }
            None => self.push_sample(chunk),
        }
        self.ends_with_newline = chunk.last() == Some(&b'\n');
        let nl = memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.newlines += nl;
        if let Some(sniff) = self.sniff.as_mut() {
            let take = (binary::SNIFF - sniff.len()).min(chunk.len());
            sniff.extend_from_slice(&chunk[..take]);
            if sniff.len() >= binary::SNIFF {
                self.decide_binary();
            }
        }
        if self.binary.is_some() {
            return; // nothing to summarize in binary bytes
        }
        let Some(last) = memchr::memrchr(b'\n', chunk) else {
            self.carry.extend_from_slice(chunk);
            self.flush_long_carry();
            return;
        };
        let mut start = 0;
        let mut main_lines = nl;
        if !self.carry.is_empty() {
            let first = memchr::memchr(b'\n', chunk).unwrap_or(last);
            let mut carry = std::mem::take(&mut self.carry);
            carry.extend_from_slice(&chunk[..=first]);
            self.feed_block(&carry, 1);
            carry.clear();
            self.carry = carry;
            start = first + 1;
            main_lines -= 1;
        }
        if start <= last && main_lines > 0 {
            self.feed_block(&chunk[start..=last], main_lines);
        }
        self.carry.extend_from_slice(&chunk[last + 1..]);
        self.flush_long_carry();
    }

    fn flush_long_carry(&mut self) {
        if self.carry.len() >= MAX_LINE {
            let mut carry = std::mem::take(&mut self.carry);
            carry.push(b'\n');
            self.feed_block(&carry, 1);
            carry.clear();
            self.carry = carry;
        }
    }

    /// Hand complete lines to the summarizer, with private-key bodies blanked out first (a
    /// summary keeps single lines, so a PEM block's base64 lines would otherwise leak).
    fn feed_block(&mut self, block: &[u8], n_lines: u64) {
        let first_line = self.line_base + 1;
        self.line_base += n_lines;
        if !self.pem.in_key() && memchr::memmem::find(block, b"PRIVATE KEY-----").is_none() {
            self.summarizer.block(block, first_line, n_lines);
            return;
        }
        // One line out per line in, so line numbers stay right.
        let mut clean = Vec::with_capacity(block.len());
        self.pem.lines(block, &mut clean);
        self.summarizer.block(&clean, first_line, n_lines);
    }

    fn decide_binary(&mut self) {
        if let Some(head) = self.sniff.take()
            && binary::is_binary(&head)
        {
            self.binary = Some(binary::magic(&head));
        }
    }

    pub fn finish(mut self) -> Finished<W> {
        self.decide_binary();
        if !self.carry.is_empty() && self.binary.is_none() {
            let mut carry = std::mem::take(&mut self.carry);
            carry.push(b'\n');
            self.feed_block(&carry, 1);
        }
        if self.write_error.is_none()
            && let Err(e) = self.out.flush()
        {
            self.write_error = Some(e);
        }
        let mut summary = self.summarizer.finish();
        if let Some(kind) = self.binary {
            summary = Summary::new(Kind::Generic, binary::describe(self.bytes, kind));
            summary
                .notes
                .push("the bytes are in full_output_path".to_string());
        }
        let lines = self.newlines + u64::from(self.bytes > 0 && !self.ends_with_newline);
        Finished {
            out: self.out,
            write_error: self.write_error,
            summary,
            prefix: self.prefix,
            sample: self.sample,
            binary: self.binary,
            bytes: self.bytes,
            lines,
        }
    }
}

/// Buffers in flight between the reading and the summarizing thread (memory: 4 × CHUNK).
const IN_FLIGHT: usize = 4;

/// Read `reader` to the end: this thread reads and appends to `out` (the scratch file) while a
/// second thread runs the masker's line work, so scanning overlaps the kernel's copying.
/// Returns the read result, the first write error and what the masker saw.
pub fn pump_threaded<W: Write + Send>(
    mut reader: impl Read,
    out: &mut W,
    masker: Masker<std::io::Sink>,
) -> (
    std::io::Result<()>,
    Option<std::io::Error>,
    Finished<std::io::Sink>,
) {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT);
    let (back_tx, back_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::scope(|scope| {
        let worker = scope.spawn(move || {
            let mut m = masker;
            for buf in rx {
                m.feed(&buf);
                // Recycle the buffer; the reader may have finished, then it is just dropped.
                let _ = back_tx.send(buf);
            }
            m.finish()
        });
        let mut write_error = None;
        let read_result = loop {
            let mut buf = back_rx.try_recv().unwrap_or_default();
            buf.resize(CHUNK, 0);
            let n = match reader.read(&mut buf) {
                Ok(0) => break Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            };
            buf.truncate(n);
            if write_error.is_none()
                && let Err(e) = out.write_all(&buf)
            {
                // Keep draining so the command is not blocked; reported at the end.
                write_error = Some(e);
            }
            if tx.send(buf).is_err() {
                break Err(std::io::Error::other("summarizer thread stopped"));
            }
        };
        drop(tx);
        if write_error.is_none()
            && let Err(e) = out.flush()
        {
            write_error = Some(e);
        }
        let fin = match worker.join() {
            Ok(fin) => fin,
            // A summarizer bug must not lose the run: the scratch file is complete.
            Err(_) => Finished {
                out: std::io::sink(),
                write_error: None,
                summary: Summary::new(Kind::Generic, "summarizer failed".into()),
                prefix: None,
                sample: Vec::new(),
                bytes: 0,
                lines: 0,
                binary: None,
            },
        };
        (read_result, write_error, fin)
    })
}

/// Read `reader` to the end into the masker (single-threaded).
pub fn pump<W: Write>(mut reader: impl Read, masker: &mut Masker<W>) -> std::io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => masker.feed(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

pub use spawn::{Running, SpawnFailure, spawn, spawn_at, spawn_in, spawn_with, wait};

/// The decision and everything to print.
#[derive(Debug)]
pub struct Outcome {
    pub masked: bool,
    pub summary: Summary,
    /// Redacted output to print verbatim when not masked.
    pub passthrough: Option<Vec<u8>>,
    pub exit: Option<ExitInfo>,
    pub scratch: PathBuf,
    pub bytes: u64,
    pub lines: u64,
    pub tokens: u64,
    /// False when `tokens` is the bytes/4 estimate of an output too large to count.
    pub tokens_exact: bool,
    /// Binary output, with its format when recognized.
    pub binary: Option<Option<&'static str>>,
    /// The `--timeout` the command reached (it was stopped).
    pub timed_out: Option<std::time::Duration>,
    /// When the command printed a source file that has an outline: the cheaper command
    /// (see [`crate::outline::hint_for_command`]).
    pub outline_hint: Option<Value>,
}

/// Decide passthrough vs mask. Each token is at least one byte, so an output of at most
/// `threshold` bytes passes without counting; beyond, tokens are estimated, and counted
/// exactly (o200k_base via `bpe-openai`) only where the estimate cannot decide
/// ([`tally::tally`]), on the first [`SAMPLE_BYTES`] and scaled to the whole.
pub fn decide<W>(
    fin: Finished<W>,
    threshold: usize,
    exit: Option<ExitInfo>,
    scratch: PathBuf,
) -> Result<Outcome> {
    if let Some(e) = fin.write_error {
        return Err(Error::io(&scratch, e));
    }
    let (tokens, exact) = match &fin.prefix {
        Some(p) if p.len() <= threshold => (p.len() as u64, false),
        // Binary bytes are not text to count: masked whenever they are over the threshold.
        Some(_) if fin.binary.is_some() => (fin.bytes / 4, false),
        Some(p) => {
            let t = tally::tally(p, fin.bytes, threshold);
            (t.tokens, t.exact)
        }
        None if fin.binary.is_none() => {
            let t = tally::tally(&fin.sample, fin.bytes, threshold);
            (t.tokens, t.exact)
        }
        None => (fin.bytes / 4, false),
    };
    let masked = match &fin.prefix {
        Some(p) if p.len() <= threshold => false,
        Some(_) if fin.binary.is_some() => true,
        Some(_) => tokens > threshold as u64,
        None => true,
    };
    let passthrough = if masked {
        None
    } else {
        fin.prefix
            .as_deref()
            .map(|p| redact::redact_bytes(p).into_owned())
    };
    Ok(Outcome {
        masked,
        summary: fin.summary,
        passthrough,
        exit,
        scratch,
        bytes: fin.bytes,
        lines: fin.lines,
        tokens,
        tokens_exact: exact,
        binary: fin.binary,
        timed_out: None,
        outline_hint: None,
    })
}

/// Keys in a fixed, readable order (serde_json's map would sort them).
struct Ordered(Vec<(&'static str, Value)>);

impl Serialize for Ordered {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Signal names for the common cases (the number is always given too).
pub fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return None,
    })
}

impl Outcome {
    /// The JSON document: the masked form (`masked`, `summary`, `first_failure`,
    /// `full_output_path`) plus counts and sizes; or, unmasked, the output itself. Every string
    /// is redacted.
    pub fn to_json(&self) -> impl Serialize + use<> {
        let mut v: Vec<(&'static str, Value)> = vec![("masked", Value::Bool(self.masked))];
        let val = |x: &dyn erased::Ser| x.value();
        if self.masked {
            let mut summary = self.summary.summary.clone();
            if let Some(t) = self.timed_out {
                summary.push_str("; ");
                summary.push_str(&timeout::describe(t, self.exit.and_then(|e| e.signal)));
            } else if let Some(sig) = self.exit.and_then(|e| e.signal) {
                summary.push_str(&format!(
                    "; killed by signal {sig}{}",
                    signal_name(sig)
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default()
                ));
            }
            v.push(("summary", Value::String(summary)));
            if let Some(f) = &self.summary.first_failure {
                v.push(("first_failure", val(f)));
            }
            v.push(("kind", Value::String(self.summary.kind.name().into())));
            if let Some(kind) = self.binary {
                v.push(("binary", Value::Bool(true)));
                if let Some(k) = kind {
                    v.push(("binary_type", Value::String(k.into())));
                }
            }
            if let Some(c) = &self.summary.counts {
                v.push(("counts", val(c)));
            }
            if let Some(d) = &self.summary.diff {
                v.push(("diff", val(d)));
            }
            if !self.summary.error_lines.is_empty() {
                v.push(("error_lines", val(&self.summary.error_lines)));
            }
            if let Some(n) = self.summary.error_lines_total {
                v.push(("error_lines_total", Value::from(n)));
            }
            if !self.summary.head.is_empty() {
                v.push(("head", val(&self.summary.head)));
            }
            if !self.summary.tail.is_empty() {
                v.push(("tail", val(&self.summary.tail)));
            }
            if !self.summary.notes.is_empty() {
                v.push(("notes", val(&self.summary.notes)));
            }
        } else if let Some(p) = &self.passthrough {
            v.push((
                "output",
                Value::String(String::from_utf8_lossy(p).into_owned()),
            ));
        }
        if let Some(t) = self.timed_out {
            v.push(("timed_out", Value::Bool(true)));
            v.push(("timeout_secs", Value::from(t.as_secs_f64())));
        }
        if let Some(e) = self.exit {
            v.push(("exit_code", e.code.map_or(Value::Null, Value::from)));
            if let Some(s) = e.signal {
                v.push(("signal", Value::from(s)));
                if let Some(n) = signal_name(s) {
                    v.push(("signal_name", Value::String(n.into())));
                }
            }
        }
        v.push(("tokens", Value::from(self.tokens)));
        if !self.tokens_exact {
            v.push(("tokens_estimated", Value::Bool(true)));
        }
        v.push(("lines", Value::from(self.lines)));
        v.push(("bytes", Value::from(self.bytes)));
        if self.masked {
            v.push((
                "full_output_path",
                Value::String(self.scratch.display().to_string()),
            ));
            if let Some(h) = &self.outline_hint {
                v.push(("outline_hint", h.clone()));
            }
        }
        for (_, x) in v.iter_mut() {
            redact::redact_json(x);
        }
        Ordered(v)
    }
}

/// `serde_json::to_value` behind a trait object, for the field list above.
mod erased {
    pub trait Ser {
        fn value(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feeding_in_any_chunking_gives_the_same_summary() {
        let text = b"line one\nERROR two\n\nfour has no newline";
        let whole = summarize_text(Kind::Generic, text);
        for size in 1..text.len() {
            let mut m = Masker::new(Vec::new(), summarizer(Kind::Generic, &[]), 0);
            for c in text.chunks(size) {
                m.feed(c);
            }
            let fin = m.finish();
            assert_eq!(fin.out, text, "chunk {size}");
            assert_eq!(fin.lines, 4);
            assert_eq!(fin.summary.summary, whole.summary, "chunk {size}");
            assert_eq!(fin.summary.head, whole.head, "chunk {size}");
        }
        assert_eq!(whole.error_lines[0].line, 2);
    }

    #[test]
    fn private_key_bodies_never_reach_the_summary() {
        let text = b"start\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nend\n";
        let s = summarize_text(Kind::Generic, text);
        let all = s.head.join("\n");
        assert!(!all.contains("b3BlbnNzaC1rZXk"), "{all}");
        assert!(all.contains("start") && all.contains("end"));
    }

    #[test]
    fn huge_lines_are_split_for_the_summarizer_only() {
        let mut text = vec![b'x'; 3 * MAX_LINE];
        text.extend_from_slice(b"\nerror: at the end\n");
        let mut m = Masker::new(Vec::new(), summarizer(Kind::Generic, &[]), 0);
        for c in text.chunks(10_000) {
            m.feed(c);
        }
        let fin = m.finish();
        assert_eq!(fin.out, text);
        assert_eq!(fin.lines, 2);
        assert_eq!(fin.summary.error_lines.len(), 1);
    }

    #[test]
    fn shell_codes() {
        assert_eq!(
            ExitInfo {
                code: Some(3),
                signal: None
            }
            .shell_code(),
            3
        );
        assert_eq!(
            ExitInfo {
                code: None,
                signal: Some(9)
            }
            .shell_code(),
            137
        );
    }
}

#[cfg(test)]
mod prop;
