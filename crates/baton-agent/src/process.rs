//! The common runner: spawn in a new process group, stream stdout/stderr to log files while
//! parsing, enforce the timeout on the whole group, and make sure nothing of the group survives.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use baton_core::process::signal_group;

use super::silence::{Silence, Waiting, group_pids, heard, tool_running};

use super::{CancelToken, ExitKind, Invocation, OutputParser, Parsed, TEXT_TAIL_BYTES};
use crate::error::{Error, Result};
use baton_core::error::io_err;

/// Longest stdout line handed to a parser; longer lines stay in the log but are not parsed.
/// Bounds memory: a stream-json line carrying a huge tool result must not be held whole.
const MAX_LINE: usize = 8 * 1024 * 1024;
const STDERR_TAIL: usize = 8 * 1024;
const CHUNK: usize = 64 * 1024;

pub(super) struct Job<'a> {
    pub inv: &'a Invocation,
    pub prompt: &'a str,
    pub cwd: &'a Path,
    pub log_dir: &'a Path,
    pub name: &'a str,
    pub env: &'a [(String, String)],
    pub timeout: Duration,
    pub grace: Duration,
    pub cancel: Option<&'a CancelToken>,
    /// See [`super::AgentSpec::api_patience`]; zero: never stopped for silence.
    pub api_patience: Duration,
    pub parser: Box<dyn OutputParser>,
    /// Watches stderr lines the same way (gemini reports its retries there); its failure is
    /// used when the stdout parser has none.
    pub stderr_watch: Option<Box<dyn OutputParser>>,
}

pub(super) struct Raw {
    pub exit: ExitKind,
    pub parsed: Parsed,
    pub stdout_tail: Vec<u8>,
    pub stderr_tail: Vec<u8>,
    pub stdout_bytes: u64,
    pub duration: Duration,
    pub log_path: PathBuf,
    pub stderr_path: PathBuf,
    pub warnings: Vec<String>,
}

/// The last `cap` bytes of a stream, amortised: at most 2 × cap held.
struct Tail {
    buf: Vec<u8>,
    cap: usize,
}

impl Tail {
    fn new(cap: usize) -> Tail {
        Tail {
            buf: Vec::new(),
            cap,
        }
    }
    fn push(&mut self, data: &[u8]) {
        let data = &data[data.len().saturating_sub(self.cap)..];
        self.buf.extend_from_slice(data);
        if self.buf.len() > 2 * self.cap {
            let cut = self.buf.len() - self.cap;
            self.buf.drain(..cut);
        }
    }
    fn snapshot(&self) -> Vec<u8> {
        let start = self.buf.len().saturating_sub(self.cap);
        self.buf[start..].to_vec()
    }
}

/// State of one output stream, shared between its reader thread and the runner (so what was
/// read is not lost even if the reader has to be abandoned).
struct Stream {
    tail: Tail,
    bytes: u64,
    log_error: Option<String>,
    line: Vec<u8>,
    line_overflow: bool,
    oversized_lines: u64,
    parser: Option<Box<dyn OutputParser>>,
}

impl Stream {
    fn new(tail: usize, parser: Option<Box<dyn OutputParser>>) -> Stream {
        Stream {
            tail: Tail::new(tail),
            bytes: 0,
            log_error: None,
            line: Vec::new(),
            line_overflow: false,
            oversized_lines: 0,
            parser,
        }
    }

    fn feed(&mut self, data: &[u8]) {
        self.bytes += data.len() as u64;
        self.tail.push(data);
        let Some(parser) = self.parser.as_deref_mut() else {
            return;
        };
        let mut rest = data;
        while !rest.is_empty() {
            let (seg, nl) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = &rest[(seg.len() + usize::from(nl)).min(rest.len())..];
            if !self.line_overflow {
                if self.line.len() + seg.len() > MAX_LINE {
                    self.line_overflow = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(seg);
                }
            }
            if nl {
                emit(
                    parser,
                    &mut self.line,
                    &mut self.line_overflow,
                    &mut self.oversized_lines,
                );
            }
        }
    }
    fn end(&mut self) {
        if let Some(parser) = self.parser.as_deref_mut()
            && (!self.line.is_empty() || self.line_overflow)
        {
            emit(
                parser,
                &mut self.line,
                &mut self.line_overflow,
                &mut self.oversized_lines,
            );
        }
    }
}

fn emit(
    parser: &mut dyn OutputParser,
    line: &mut Vec<u8>,
    overflow: &mut bool,
    oversized: &mut u64,
) {
    if *overflow {
        *oversized += 1;
    } else {
        let l = line.strip_suffix(b"\r").unwrap_or(line);
        parser.line(&String::from_utf8_lossy(l));
    }
    line.clear();
    *overflow = false;
}

fn lock(m: &Mutex<Stream>) -> MutexGuard<'_, Stream> {
    // A panic in a reader would be a bug; the data it left is still the best we have.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn pump(mut src: impl Read, mut log: File, state: &Mutex<Stream>) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut st = lock(state);
        // Keep draining after a log error: a blocked pipe would stall the agent.
        if st.log_error.is_none()
            && let Err(e) = log.write_all(&buf[..n])
        {
            st.log_error = Some(e.to_string());
        }
        st.feed(&buf[..n]);
    }
    lock(state).end();
}

/// Whether a live (non-zombie) process is still in group `pgid`. On Linux this reads /proc, so
/// zombies nobody reaps do not count; elsewhere `kill(-pgid, 0)`.
fn group_alive(pgid: i32) -> bool {
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
            let Some(after) = stat.rfind(')').and_then(|i| stat.get(i + 1..)) else {
                continue;
            };
            let mut f = after.split_whitespace();
            let state = f.next().unwrap_or("Z");
            let pgrp = f.nth(1).and_then(|p| p.parse::<i32>().ok());
            if pgrp == Some(pgid) && state != "Z" && state != "X" {
                return true;
            }
        }
        return false;
    }
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// A running agent's group: `<log_dir>/<name>.pgid` holds `PGID STARTTIME` while it runs and is
/// removed once the group is gone. One left behind means baton was killed (SIGKILL, OOM) with
/// the agent still running in its own group, which outlives baton: [`stop_orphans`] ends it
/// before a resumed run calls that phase again, so two calls never edit the tree at once.
const MARKER_EXT: &str = "pgid";

/// When process `pid` started (clock ticks since boot, `/proc/PID/stat` field 22): tells a
/// group leader from a later process that got the same pid.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.get(stat.rfind(')')? + 1..)?;
    after.split_whitespace().nth(19)?.parse().ok()
}

/// An agent a killed baton left running: its call's label and its process group.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Orphan {
    pub call: String,
    pub pgid: i32,
}

/// The agents a killed baton left running, from the markers in `log_dir` (each call marks its
/// process group while it runs). A marker whose group is gone, or whose pid another program
/// took since, is not one; `tidy` removes such markers.
fn scan_orphans(log_dir: &Path, tidy: bool) -> Vec<(Orphan, PathBuf)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(log_dir) else {
        return found;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().and_then(|x| x.to_str()) != Some(MARKER_EXT) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut f = text.split_whitespace().map(|v| v.parse::<u64>().ok());
        if let (Some(Some(pgid)), Some(Some(started))) = (f.next(), f.next()) {
            let pgid = pgid as i32;
            // The same leader, still there (a pid reused by another program is left alone).
            let ours = started == 0 || start_time(pgid) == Some(started);
            if pgid > 1 && ours && group_alive(pgid) {
                let call = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                let orphan = Orphan {
                    call: call.unwrap_or_default(),
                    pgid,
                };
                found.push((orphan, path));
                continue;
            }
        }
        if tidy {
            let _ = std::fs::remove_file(&path);
        }
    }
    found.sort_by(|a, b| a.0.call.cmp(&b.0.call));
    found
}

/// The agents a killed baton left running in `log_dir` (a run's `logs/`), stopping nothing.
pub fn orphans(log_dir: &Path) -> Vec<Orphan> {
    scan_orphans(log_dir, false)
        .into_iter()
        .map(|(o, _)| o)
        .collect()
}

/// Stop the agents a killed baton left running, from the markers in `log_dir`; what was
/// stopped, one line each.
pub fn stop_orphans(log_dir: &Path) -> Vec<String> {
    let mut stopped = Vec::new();
    for (o, marker) in scan_orphans(log_dir, true) {
        if terminate_group(o.pgid, Duration::from_secs(5)) {
            stopped.push(format!(
                "stopped the agent of {} (process group {}) left running by a killed baton",
                o.call, o.pgid
            ));
        }
        let _ = std::fs::remove_file(&marker);
    }
    stopped
}

/// SIGTERM the group, wait up to `grace` for it to empty, then SIGKILL. True if anyone was left.
fn terminate_group(pgid: i32, grace: Duration) -> bool {
    if !group_alive(pgid) {
        return false;
    }
    signal_group(pgid, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if !group_alive(pgid) {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    signal_group(pgid, libc::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(2);
    while group_alive(pgid) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    true
}

fn create_log(path: &Path) -> Result<File> {
    Ok(File::create(path).map_err(io_err(path))?)
}

/// A call that reuses a label (a run paused by a rate limit, resumed later, calls again with
/// the label its phase had) must not truncate the earlier call's logs: they are kept as
/// `<name>.earlier-<n>.log` and `<name>.earlier-<n>.stderr.log`, n the first number free.
fn keep_earlier_logs(dir: &Path, name: &str) -> Result<()> {
    let log = dir.join(format!("{name}.log"));
    let stderr = dir.join(format!("{name}.stderr.log"));
    if !log.exists() && !stderr.exists() {
        return Ok(());
    }
    let n = (1u32..)
        .find(|n| !dir.join(format!("{name}.earlier-{n}.log")).exists())
        .unwrap_or(u32::MAX);
    for (from, to) in [
        (log, format!("{name}.earlier-{n}.log")),
        (stderr, format!("{name}.earlier-{n}.stderr.log")),
    ] {
        match std::fs::rename(&from, dir.join(to)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(from, e)),
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn run(job: Job<'_>) -> Result<Raw> {
    check_name(job.name)?;
    if !job.cwd.is_dir() {
        return Err(Error::not_found(format!(
            "agent working directory {} does not exist",
            job.cwd.display()
        )));
    }
    std::fs::create_dir_all(job.log_dir).map_err(io_err(job.log_dir))?;
    let log_path = job.log_dir.join(format!("{}.log", job.name));
    let stderr_path = job.log_dir.join(format!("{}.stderr.log", job.name));
    keep_earlier_logs(job.log_dir, job.name)?;
    let out_log = create_log(&log_path)?;
    let err_log = create_log(&stderr_path)?;

    let mut cmd = Command::new(&job.inv.program);
    // Given a working directory, std forks (a static binary has no
    // `posix_spawn_file_actions_addchdir_np` for it to find); when the agent's is baton's own
    // (baton never changes it), none is given and std uses posix_spawn: ~0.7 ms less a call.
    if !is_current_dir(job.cwd) {
        cmd.current_dir(job.cwd);
    }
    cmd.args(&job.inv.args)
        .envs(job.env.iter().map(|(k, v)| (k, v)))
        // After `envs`, so configuration cannot put it back.
        .env_remove("CLAUDECODE")
        // The queue database's URL (with its password) is the worker's, never an agent's.
        .env_remove("BATON_DATABASE_URL")
        .stdin(if job.inv.prompt_on_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = spawn_retrying(&mut cmd).map_err(|e| spawn_error(&job.inv.program, e))?;
    let pgid = child.id() as i32;
    let marker = job.log_dir.join(format!("{}.{MARKER_EXT}", job.name));
    // Whole or not at all: a reader (status, a resumed run) never sees it half written.
    let _ = baton_core::fs::write_atomic(
        &marker,
        format!("{pgid} {}\n", start_time(pgid).unwrap_or(0)).as_bytes(),
    );

    if let Some(mut stdin) = child.stdin.take() {
        let prompt = job.prompt.to_string();
        // Detached: an agent that never reads stdin must not block us; the write ends with
        // EPIPE once the group is gone.
        thread::spawn(move || {
            let _ = stdin.write_all(prompt.as_bytes());
        });
    }
    let (stdout, stderr) = match (child.stdout.take(), child.stderr.take()) {
        (Some(o), Some(e)) => (o, e),
        _ => {
            signal_group(pgid, libc::SIGKILL);
            let _ = child.wait();
            let _ = std::fs::remove_file(&marker);
            return Err(Error::io(
                &job.inv.program,
                std::io::Error::other("no stdout/stderr pipe"),
            ));
        }
    };

    let parser = job.parser;
    let wants_lines = parser.wants_lines();
    let out_state = Arc::new(Mutex::new(Stream::new(
        TEXT_TAIL_BYTES,
        wants_lines.then_some(parser),
    )));
    let err_state = Arc::new(Mutex::new(Stream::new(STDERR_TAIL, job.stderr_watch)));
    let mut warnings = Vec::new();

    // Readers are detached threads (not scoped) so that one blocked on a pipe held by a
    // process outside the group cannot hang us; their state lives behind the mutexes.
    let (done_tx, done_rx) = mpsc::channel::<()>();
    for (src, log, state) in [
        (
            Box::new(stdout) as Box<dyn Read + Send>,
            out_log,
            out_state.clone(),
        ),
        (Box::new(stderr), err_log, err_state.clone()),
    ] {
        let tx = done_tx.clone();
        thread::spawn(move || {
            pump(src, log, &state);
            let _ = tx.send(());
        });
    }
    drop(done_tx);
    let (wtx, wrx) = mpsc::channel();
    thread::spawn(move || {
        let _ = wtx.send(child.wait());
    });

    // Wait for the leader in short slices so a cancel request is seen promptly.
    let deadline = start + job.timeout;
    let mut stopped: Option<ExitKind> = None;
    let mut silence = Silence::new(job.api_patience, start);
    let mut looked = start;
    let status = loop {
        let now = Instant::now();
        let cancelled = job.cancel.is_some_and(CancelToken::is_cancelled);
        // The parser saw the CLI cannot go on (codex waiting for the network forever).
        let hopeless = [&out_state, &err_state]
            .iter()
            .any(|s| lock(s).parser.as_deref().is_some_and(|p| p.stop()));
        // Once a second: is the CLI waiting on an API that says nothing?
        let unanswered = now.duration_since(looked) >= Duration::from_secs(1) && {
            looked = now;
            let (waiting, printed) = {
                let out = lock(&out_state);
                let waiting = out
                    .parser
                    .as_deref()
                    .map_or(Waiting::No, |p| p.waiting_on_model());
                (waiting, out.bytes + lock(&err_state).bytes)
            };
            // One scan of the group serves both looks, and none is made while a tool runs.
            let pids = (waiting != Waiting::No).then(|| group_pids(pgid));
            let pids = pids.as_deref().unwrap_or_default();
            let waiting = match waiting {
                Waiting::No => false,
                Waiting::Yes => true,
                Waiting::UnlessATool => !tool_running(pids),
            };
            let heard = if waiting { heard(pids) } else { None };
            silence.unanswered(now, waiting, printed, heard)
        };
        if now >= deadline || cancelled || hopeless || unanswered {
            stopped = Some(if cancelled {
                ExitKind::Cancelled
            } else if hopeless {
                ExitKind::Stopped
            } else if unanswered {
                ExitKind::Unanswered(job.api_patience.as_secs())
            } else {
                ExitKind::TimedOut
            });
            signal_group(pgid, libc::SIGTERM);
            break match wrx.recv_timeout(job.grace) {
                Ok(r) => r,
                Err(_) => {
                    signal_group(pgid, libc::SIGKILL);
                    wrx.recv()
                        .unwrap_or_else(|_| Err(std::io::Error::other("wait thread lost")))
                }
            };
        }
        let slice = (deadline - now).min(Duration::from_millis(100));
        match wrx.recv_timeout(slice) {
            Ok(r) => break r,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => {
                break Err(std::io::Error::other("wait thread lost"));
            }
        }
    };
    // Stragglers: whatever the leader left in its group (after a timeout too: members that
    // ignore SIGTERM get SIGKILL after the grace period).
    if terminate_group(pgid, job.grace) && stopped.is_none() {
        warnings.push(
            "the agent left processes running in its group; they were terminated".to_string(),
        );
    }
    let _ = std::fs::remove_file(&marker);
    let exit = match (stopped, status) {
        (Some(kind), _) => kind,
        (None, Ok(st)) => match (st.code(), st.signal()) {
            (Some(c), _) => ExitKind::Exited(c),
            (None, Some(sig)) => ExitKind::Signaled(sig),
            (None, None) => ExitKind::Exited(-1),
        },
        (None, Err(e)) => return Err(Error::io(&job.inv.program, e)),
    };
    let duration = start.elapsed();
    // The pipes close when the group is gone; a process that escaped the group (setsid) could
    // hold them open, so wait a bounded time, then use what was read.
    let bound = job.grace.max(Duration::from_secs(2));
    for _ in 0..2 {
        if let Err(RecvTimeoutError::Timeout) = done_rx.recv_timeout(bound) {
            warnings.push(
                "agent output still open after its process group ended (held by a process outside the group); using the output read so far"
                    .to_string(),
            );
            break;
        }
    }

    let mut out = lock(&out_state);
    let mut err = lock(&err_state);
    for (what, path, st) in [
        ("stdout", &log_path, &*out),
        ("stderr", &stderr_path, &*err),
    ] {
        if let Some(e) = &st.log_error {
            warnings.push(format!(
                "writing the {what} log {} failed: {e}",
                path.display()
            ));
        }
    }
    if out.oversized_lines > 0 {
        warnings.push(format!(
            "{} stdout line(s) longer than {} MB were logged but not parsed",
            out.oversized_lines,
            MAX_LINE / (1024 * 1024)
        ));
    }
    let parsed = finish_parsers(&mut out, &mut err);
    Ok(Raw {
        exit,
        parsed,
        stdout_tail: out.tail.snapshot(),
        stderr_tail: err.tail.snapshot(),
        stdout_bytes: out.bytes,
        duration,
        log_path,
        stderr_path,
        warnings,
    })
}

/// What the streams' parsers made of the output: stdout's result, or stderr's watcher's
/// failure when stdout names none.
fn finish_parsers(out: &mut Stream, err: &mut Stream) -> Parsed {
    let mut parsed = match out.parser.take() {
        Some(mut p) => p.finish(),
        // Plain text: the parser was never fed.
        None => Parsed {
            saw_result: true,
            ..Parsed::default()
        },
    };
    if parsed.failure.is_none() {
        parsed.failure = err.parser.take().and_then(|mut p| p.finish().failure);
    }
    parsed
}

/// A finished call's output read again, as [`run`] reads it live: the same line splitting,
/// parsers and tails, from bytes instead of pipes.
pub(super) fn replay(
    parsers: (Box<dyn OutputParser>, Option<Box<dyn OutputParser>>),
    stdout: &[u8],
    stderr: &[u8],
    exit: ExitKind,
) -> Raw {
    let (parser, stderr_watch) = parsers;
    let wants_lines = parser.wants_lines();
    let mut out = Stream::new(TEXT_TAIL_BYTES, wants_lines.then_some(parser));
    let mut err = Stream::new(STDERR_TAIL, stderr_watch);
    for (st, bytes) in [(&mut out, stdout), (&mut err, stderr)] {
        // In chunks, as the pipe delivers them: lines cut across chunks must join.
        for chunk in bytes.chunks(CHUNK) {
            st.feed(chunk);
        }
        st.end();
    }
    Raw {
        exit,
        parsed: finish_parsers(&mut out, &mut err),
        stdout_tail: out.tail.snapshot(),
        stderr_tail: err.tail.snapshot(),
        stdout_bytes: out.bytes,
        duration: Duration::ZERO,
        log_path: PathBuf::new(),
        stderr_path: PathBuf::new(),
        warnings: Vec::new(),
    }
}

/// Whether `dir` is the process's working directory (the same file, however it is named).
fn is_current_dir(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata("."), std::fs::metadata(dir)) {
        (Ok(here), Ok(there)) => here.dev() == there.dev() && here.ino() == there.ino(),
        _ => false,
    }
}

/// The CLI could not be started: an agent error (exit 7), as the pre-flight says it.
fn spawn_error(program: &Path, e: std::io::Error) -> Error {
    match e.kind() {
        std::io::ErrorKind::NotFound => Error::unavailable(format!(
            "agent CLI `{}` is not installed (not found on PATH)",
            program.display()
        ))
        .hint("install it and put it on PATH, or set `program` for this agent in baton.toml"),
        std::io::ErrorKind::PermissionDenied => Error::unavailable(format!(
            "agent CLI `{}` is not executable",
            program.display()
        ))
        .hint(format!(
            "chmod +x {}, or set `program` for this agent in baton.toml",
            program.display()
        )),
        _ => Error::io(program, e),
    }
}

/// Spawn, waiting out ETXTBSY: an executable written just before (a generated agent script)
/// can still be open for writing in a child another thread forked meanwhile, until that child
/// execs; the kernel then refuses to run it for a moment.
fn spawn_retrying(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let mut wait = std::time::Duration::from_millis(5);
    for _ in 0..8 {
        match cmd.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(wait);
                wait *= 2;
            }
            other => return other,
        }
    }
    cmd.spawn()
}

/// A log name is one plain path component.
pub(crate) fn check_name(name: &str) -> Result<()> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\', '\0'])
        || Path::new(name).is_absolute();
    if bad {
        return Err(Error::invalid(format!(
            "invalid agent log name {name:?}: use one file name without `/`"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Rec(Arc<Mutex<Vec<String>>>);
    impl OutputParser for Rec {
        fn line(&mut self, line: &str) {
            self.0.lock().unwrap().push(line.to_string());
        }
        fn finish(&mut self) -> Parsed {
            Parsed::default()
        }
    }

    #[test]
    fn names_are_one_component() {
        for bad in ["", ".", "..", "a/b", "/abs", "a\0b"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_name("dev-1.2.attempt-1").is_ok());
    }

    #[test]
    fn lines_split_across_chunks_and_oversized_lines_skipped() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut st = Stream::new(4, Some(Box::new(Rec(seen.clone()))));
        st.feed(b"a\nb");
        st.feed(b"c\r\n");
        st.feed(&vec![b'x'; MAX_LINE + 1]);
        st.feed(b"\nd");
        st.end();
        assert_eq!(*seen.lock().unwrap(), ["a", "bc", "d"]);
        assert_eq!(st.oversized_lines, 1);
        assert_eq!(st.tail.snapshot(), b"xx\nd");
        assert_eq!(st.bytes, 2 + 1 + 3 + MAX_LINE as u64 + 1 + 2);
    }

    #[test]
    fn a_reused_label_keeps_the_earlier_calls_logs() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        keep_earlier_logs(d, "dev-1.1").unwrap();
        assert_eq!(std::fs::read_dir(d).unwrap().count(), 0);
        std::fs::write(d.join("dev-1.1.log"), "first").unwrap();
        std::fs::write(d.join("dev-1.1.stderr.log"), "first err").unwrap();
        keep_earlier_logs(d, "dev-1.1").unwrap();
        std::fs::write(d.join("dev-1.1.log"), "second").unwrap();
        keep_earlier_logs(d, "dev-1.1").unwrap();
        let read = |f: &str| std::fs::read_to_string(d.join(f)).unwrap();
        assert_eq!(read("dev-1.1.earlier-1.log"), "first");
        assert_eq!(read("dev-1.1.earlier-1.stderr.log"), "first err");
        assert_eq!(read("dev-1.1.earlier-2.log"), "second");
        assert!(!d.join("dev-1.1.earlier-2.stderr.log").exists());
        assert!(!d.join("dev-1.1.log").exists());
    }

    #[test]
    fn the_working_directory_is_known_by_its_file_not_its_name() {
        let here = std::env::current_dir().unwrap();
        assert!(is_current_dir(&here));
        assert!(is_current_dir(Path::new(".")));
        assert!(is_current_dir(&here.join("src/..")));
        let other = tempfile::tempdir().unwrap();
        assert!(!is_current_dir(other.path()));
        assert!(!is_current_dir(&other.path().join("missing")));
    }
}
