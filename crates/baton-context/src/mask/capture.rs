//! Masking as a library call, for callers that are not `baton mask` itself: the hooks (an
//! output the agent CLI already captured) and the MCP server (a command it runs, with no
//! terminal and its stdin taken by the protocol).

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use super::{Kind, Masker, Outcome, decide, scratch, summarizer};
use crate::error::{Error, Result};

/// Where and how to mask: the project's `.baton/` and the threshold in tokens.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    pub local_dir: &'a Path,
    pub threshold: usize,
    pub kind: Kind,
    /// Redact secrets in the scratch file too.
    pub redact_scratch: bool,
}

/// Mask an output already in memory. `command` (the command line that produced it, if known)
/// helps the summarizer's detection. The scratch file is kept only when the output is masked.
pub fn mask_bytes(opts: &Options, command: &[String], text: &[u8]) -> Result<Outcome> {
    let dir = scratch::scratch_dir(opts.local_dir)?;
    let label = command
        .first()
        .and_then(|c| Path::new(c).file_name())
        .map_or_else(
            || "output".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
    let (file, path) = scratch::create(&dir, &label)?;
    let mut masker = Masker::new(
        Sink::new(file, opts.redact_scratch),
        summarizer(opts.kind, command),
        opts.threshold,
    );
    for chunk in text.chunks(128 * 1024) {
        masker.feed(chunk);
    }
    let mut fin = masker.finish();
    let sink_error = std::mem::replace(&mut fin.out, Sink::Done).finish().err();
    fin.write_error = fin.write_error.take().or(sink_error);
    let outcome = decide(fin, opts.threshold, None, path.clone())?;
    if !outcome.masked {
        let _ = std::fs::remove_file(&path);
    }
    Ok(outcome)
}

/// Run `argv` (no shell, stdin closed) and mask its combined output; stopped after `timeout`
/// (SIGTERM to its process group, then SIGKILL), as `baton mask --timeout` does.
/// `started` is told the command's process group as soon as it runs (the MCP server stops it
/// there when the client cancels the call).
pub fn mask_command(
    opts: &Options,
    argv: &[String],
    timeout: Duration,
    started: &dyn Fn(i32),
) -> Result<Outcome> {
    mask_command_at(opts, argv, argv, None, timeout, started)
}

/// [`mask_command`] in `dir`, the summarizer told the command by `named` (the command line a
/// `sh -c` runs, say: the shell's name says nothing of the output).
pub fn mask_command_in(
    opts: &Options,
    argv: &[String],
    named: &[String],
    dir: &Path,
    timeout: Duration,
    started: &dyn Fn(i32),
) -> Result<Outcome> {
    mask_command_at(opts, argv, named, Some(dir), timeout, started)
}

fn mask_command_at(
    opts: &Options,
    argv: &[String],
    named: &[String],
    dir: Option<&Path>,
    timeout: Duration,
    started: &dyn Fn(i32),
) -> Result<Outcome> {
    let os: Vec<OsString> = argv.iter().map(OsString::from).collect();
    // The scratch file first: a command started before it failed would be left running.
    let scratch_dir = scratch::scratch_dir(opts.local_dir)?;
    let label = named
        .first()
        .and_then(|c| Path::new(c).file_name())
        .map_or_else(|| "cmd".to_string(), |n| n.to_string_lossy().into_owned());
    let (file, path) = scratch::create(&scratch_dir, &label)?;
    let mut running = match super::spawn_at(&os, true, Stdio::null(), dir) {
        Ok(r) => r,
        Err(f) => {
            let _ = std::fs::remove_file(&path);
            return Err(f.error);
        }
    };
    let pid = running.child.id();
    started(pid as i32);
    let dog = super::timeout::Watchdog::start(pid as i32, timeout, super::timeout::GRACE);
    let masker = Masker::new(
        std::io::sink(),
        summarizer(opts.kind, named),
        opts.threshold,
    );
    let mut sink = Sink::new(file, opts.redact_scratch);
    let (read, write_error, mut fin) = super::pump_threaded(&mut running.output, &mut sink, masker);
    let _ = super::timeout::wait_exited(pid);
    let timed_out = dog.stop();
    let exit = super::wait(&mut running.child)?;
    read.map_err(|e| Error::io("<command output>", e))?;
    fin.write_error = write_error.or_else(|| sink.finish().err());
    let mut outcome = decide(fin, opts.threshold, Some(exit), path.clone())?;
    if timed_out {
        outcome.timed_out = Some(timeout);
    }
    if outcome.masked {
        outcome.outline_hint = crate::outline::hint_for_command(named);
    } else {
        let _ = std::fs::remove_file(&path);
    }
    Ok(outcome)
}

/// The scratch file, raw or through the streaming redactor.
enum Sink {
    Raw(std::fs::File),
    Redacted(super::redact::RedactWriter<std::fs::File>),
    Done,
}

impl Sink {
    fn new(file: std::fs::File, redact: bool) -> Sink {
        if redact {
            Sink::Redacted(super::redact::RedactWriter::new(file))
        } else {
            Sink::Raw(file)
        }
    }

    /// Write out the redactor's last, unterminated line.
    fn finish(self) -> std::io::Result<()> {
        match self {
            Sink::Redacted(w) => w.finish().map(drop),
            _ => Ok(()),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Raw(f) => f.write(buf),
            Sink::Redacted(w) => w.write(buf),
            Sink::Done => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Raw(f) => f.flush(),
            Sink::Redacted(w) => w.flush(),
            Sink::Done => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(dir: &Path) -> Options<'_> {
        Options {
            local_dir: dir,
            threshold: 50,
            kind: Kind::Auto,
            redact_scratch: false,
        }
    }

    #[test]
    fn small_text_passes_and_leaves_no_scratch() {
        let tmp = tempfile::tempdir().unwrap();
        let o = mask_bytes(&opts(tmp.path()), &[], b"ok\n").unwrap();
        assert!(!o.masked);
        assert_eq!(o.passthrough.as_deref(), Some(&b"ok\n"[..]));
        assert_eq!(
            std::fs::read_dir(tmp.path().join("scratch"))
                .unwrap()
                .count(),
            0
        );
    }

    #[test]
    fn large_text_is_kept_whole_in_scratch() {
        let tmp = tempfile::tempdir().unwrap();
        let text: String = (0..500).map(|i| format!("line {i} of output\n")).collect();
        let o = mask_bytes(&opts(tmp.path()), &["make".into()], text.as_bytes()).unwrap();
        assert!(o.masked);
        assert_eq!(std::fs::read_to_string(&o.scratch).unwrap(), text);
    }

    #[test]
    fn a_command_past_its_timeout_is_stopped() {
        let tmp = tempfile::tempdir().unwrap();
        let argv = ["sleep".to_string(), "30".to_string()];
        let t0 = std::time::Instant::now();
        let o = mask_command(
            &opts(tmp.path()),
            &argv,
            Duration::from_millis(200),
            &|_| {},
        )
        .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(10));
        assert_eq!(o.timed_out, Some(Duration::from_millis(200)));
    }
}
