//! `baton mask`: run a command (or read stdin) and print its output, or a summary of it when
//! it is over the token threshold.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Args;

use super::Ctx;
use crate::error::{Error, Result};
use baton_context::mask::{self, Kind, Masker};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  baton mask -- cargo test                 run, mask if the output is over 2000 tokens
  baton mask --kind pytest -- pytest -q    force the pytest summarizer
  baton mask --threshold 500 -- go test ./...
  baton mask -- sh -c 'make 2>&1 | tail'   shell syntax only through an explicit shell
  git diff | baton mask --kind git-diff    stdin mode (no command)

Output under the threshold passes through verbatim; above it, a JSON object is printed:
  {\"masked\": true, \"summary\": \"54 passed, 1 failed\", \"first_failure\": {...},
   \"full_output_path\": \".baton/scratch/….log\", ...}
The full output is kept in <project>/.baton/scratch/ (mode 0600, gitignored). Secrets (API keys,
tokens, private keys, password=… and other key/value spellings, passwords in URLs) are redacted
from everything printed; with --redact-scratch (or `[mask] redact_scratch = true` in baton.toml)
from the scratch file too.
With --timeout SECS the command (and everything it started: it runs in a process group of its
own) is stopped when it runs longer: SIGTERM, 2 seconds' grace, SIGKILL; the summary says it
timed out and the exit code is 124, as timeout(1)'s.
Exit code: the command's own (128+N when killed by signal N; 127 command not found; 124 timed out).")]
pub struct MaskArgs {
    /// Mask when the output is over this many tokens (o200k_base)
    #[arg(long, default_value_t = mask::DEFAULT_THRESHOLD, value_name = "TOKENS")]
    pub threshold: usize,
    /// Output format to summarize (auto: detect from the output and the command name)
    #[arg(long, value_enum, default_value = "auto")]
    pub kind: Kind,
    /// Keep the scratch file even when the output passes through
    #[arg(long)]
    pub keep: bool,
    /// Stop the command after this many seconds (SIGTERM, 2 s grace, SIGKILL; exit code 124)
    #[arg(long, value_name = "SECS", value_parser = mask::timeout::parse_secs)]
    pub timeout: Option<std::time::Duration>,
    /// Redact secrets in the scratch file too (default: it keeps the full text, mode 0600)
    #[arg(long)]
    pub redact_scratch: bool,
    /// Set by an agent's pre-tool hook that routed the command here (the mask log's source)
    #[arg(long, hide = true)]
    pub routed: bool,
    /// The agent session a routed command came from (set by the pre-tool hook): the same file
    /// read whole twice in one session is shown whole the second time
    #[arg(long, hide = true, value_name = "ID")]
    pub session: Option<String>,
    /// The command and its arguments (after `--`); without one, stdin is read
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

pub fn run(ctx: &Ctx, args: MaskArgs) -> Result<ExitCode> {
    if args.command.is_empty() && std::io::stdin().is_terminal() {
        return Err(
            Error::invalid("nothing to mask: no command and stdin is a terminal")
                .hint("give a command after `--` (baton mask -- cargo test) or pipe output in"),
        );
    }
    if args.command.is_empty() && args.timeout.is_some() {
        return Err(Error::invalid("--timeout needs a command to stop")
            .hint("baton mask --timeout 60 -- cargo test"));
    }
    let label = match args.command.first() {
        Some(c) => std::path::Path::new(c)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "cmd".into()),
        None => "stdin".into(),
    };
    // A read of baton's own scratch file (the full output a summary named) is shown as it is:
    // masked again, it would only name another copy of itself.
    let local = ctx.project.local_dir();
    if args
        .command
        .iter()
        .any(|a| mask::scratch::names_scratch(&a.to_string_lossy(), &local))
    {
        return unmasked(&args, None);
    }
    let scratch = mask::scratch::scratch_dir(&ctx.project.local_dir())
        .and_then(|dir| mask::scratch::create(&dir, &label));
    let (file, path) = match scratch {
        Ok(made) => made,
        // An agent told to wrap its commands must still be able to run them.
        Err(e) if !args.command.is_empty() => return unmasked(&args, Some(&e)),
        Err(e) => return Err(e.into()),
    };
    let argv: Vec<String> = args
        .command
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // `cat FILE` is a whole-file read: shown whole up to the read threshold, outline first
    // beyond it (see `first_read` below).
    let read_threshold = baton_context::outline::whole_file_read(&argv)
        .and(ctx.project.config.mask.read_threshold());
    let threshold = read_threshold.map_or(args.threshold, |r| r.max(args.threshold));
    let masker = Masker::new(
        std::io::sink(),
        mask::summarizer(args.kind, &argv),
        threshold,
    );
    // The scratch file is written in large chunks, so it needs no buffer of its own.
    let scratch = if args.redact_scratch || ctx.project.config.mask.redact_scratch {
        Scratch::Redacted(mask::redact::RedactWriter::new(file))
    } else {
        Scratch::Raw(file)
    };
    let mut sink = Spill::new(scratch, &path);
    let mut timed_out = None;
    let (read, write_error, mut fin, exit) = if args.command.is_empty() {
        let (r, w, f) = mask::pump_threaded(std::io::stdin().lock(), &mut sink, masker);
        (r.map_err(|e| Error::io("<stdin>", e)), w, f, None)
    } else {
        let mut running = match mask::spawn_in(&args.command, args.timeout.is_some()) {
            Ok(r) => r,
            Err(f) => {
                let _ = std::fs::remove_file(&path);
                super::report(&f.error, ctx.out.json);
                return Ok(ExitCode::from(f.exit_code));
            }
        };
        let pid = running.child.id();
        let watchdog = args
            .timeout
            .map(|t| mask::timeout::Watchdog::start(pid as i32, t, mask::timeout::GRACE));
        let (r, w, f) = mask::pump_threaded(&mut running.output, &mut sink, masker);
        if let Some(dog) = watchdog {
            // Exited but not reaped: the group id stays ours while the watchdog may signal it.
            let _ = mask::timeout::wait_exited(pid);
            if dog.stop() {
                timed_out = args.timeout;
            }
        }
        let exit = mask::wait(&mut running.child)?;
        (
            r.map_err(|e| Error::io("<command output>", e)),
            w,
            f,
            Some(exit),
        )
    };
    read?;
    if let Some(e) = sink.spilled() {
        // The disk filled (or the file broke) while the output was kept: it went to stdout
        // whole instead, and the command's exit code stands.
        let _ = std::fs::remove_file(&path);
        eprintln!(
            "baton: warning: the full output could not be kept ({}: {e}): it was passed \
             through, not masked",
            path.display()
        );
        if timed_out.is_some() {
            return Ok(ExitCode::from(mask::timeout::EXIT_CODE));
        }
        return Ok(ExitCode::from(exit.map_or(0, |e| e.shell_code())));
    }
    let write_error = write_error.or_else(|| sink.finish().err());
    fin.write_error = write_error;
    // A scratch copy that could not be written whole (a full disk) is no record: gone.
    let mut outcome = mask::decide(fin, threshold, exit, path.clone()).inspect_err(|_| {
        let _ = std::fs::remove_file(&path);
    })?;
    outcome.timed_out = timed_out;
    if outcome.masked {
        // `cat big_file.rs` read a whole source file: point at its outline instead.
        outcome.outline_hint = baton_context::outline::hint_for_command(&argv);
    }
    if !outcome.masked && !args.keep {
        let _ = std::fs::remove_file(&path);
    }
    let session = args.session.as_deref();
    let first = match read_threshold.and_then(|t| first_read(&argv, &outcome, t, session, &local)) {
        Some(Read::Whole(text)) => {
            // Asked for again: the whole file, nothing masked, nothing recorded.
            if !args.keep {
                let _ = std::fs::remove_file(&path);
            }
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
            return Ok(ExitCode::SUCCESS);
        }
        Some(Read::Outline(text)) => Some(text),
        None => None,
    };
    if outcome.masked {
        record(ctx, &args, &outcome, &argv, first.as_deref());
    }
    match &first {
        Some(text) if !ctx.out.json => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        }
        _ => print(ctx, &outcome),
    }
    if timed_out.is_some() {
        return Ok(ExitCode::from(mask::timeout::EXIT_CODE));
    }
    Ok(ExitCode::from(exit.map_or(0, |e| e.shell_code())))
}

/// The command run with its output passed through, secrets redacted but nothing masked: for a
/// read of a scratch file, and when `baton mask` cannot store the full output (`why`: a full
/// disk, a read-only or misplaced `.baton/`), said on stderr.
fn unmasked(args: &MaskArgs, why: Option<&baton_context::Error>) -> Result<ExitCode> {
    if let Some(why) = why {
        eprintln!(
            "baton: warning: no scratch file ({why}): the output is passed through, not masked"
        );
    }
    let mut running = match mask::spawn_in(&args.command, args.timeout.is_some()) {
        Ok(r) => r,
        Err(f) => {
            super::report(&f.error, false);
            return Ok(ExitCode::from(f.exit_code));
        }
    };
    let pid = running.child.id();
    let watchdog = args
        .timeout
        .map(|t| mask::timeout::Watchdog::start(pid as i32, t, mask::timeout::GRACE));
    let mut out = mask::redact::RedactWriter::new(std::io::stdout().lock());
    let copied = std::io::copy(&mut running.output, &mut out);
    let _ = out.finish();
    // The reader went away (`baton mask -- CMD | head`): the pipe's end is closed, so the
    // command's next write fails (SIGPIPE) instead of blocking on a pipe nobody drains.
    drop(running.output);
    let mut timed_out = false;
    if let Some(dog) = watchdog {
        let _ = mask::timeout::wait_exited(pid);
        timed_out = dog.stop();
    }
    let exit = mask::wait(&mut running.child)?;
    // stdout closed by its reader is not an error of the command's: its own code stands.
    if let Err(e) = copied
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(Error::io("<command output>", e));
    }
    if timed_out {
        return Ok(ExitCode::from(mask::timeout::EXIT_CODE));
    }
    Ok(ExitCode::from(exit.shell_code()))
}

/// How a whole-file read is answered instead of the usual summary.
enum Read {
    /// The file's first lines, its outline and how to read more.
    Outline(String),
    /// The whole file: the session read it whole before and was given the outline.
    Whole(String),
}

/// A whole-file read (`cat FILE`) that was masked, answered outline first instead: the file's
/// first lines, its outline and how to read more (secrets redacted); in a session (a routed
/// read) that was answered so before for the same file, the whole file. Only for a read that
/// worked: a failed `cat` keeps the usual summary.
fn first_read(
    argv: &[String],
    outcome: &mask::Outcome,
    threshold: usize,
    session: Option<&str>,
    local: &std::path::Path,
) -> Option<Read> {
    let file = baton_context::outline::whole_file_read(argv)?;
    if !outcome.masked
        || outcome.binary.is_some()
        || outcome.exit.is_none_or(|e| e.shell_code() != 0)
        || outcome.bytes > 16 << 20
    {
        return None;
    }
    let text = std::fs::read_to_string(&outcome.scratch).ok()?;
    // One name per file whatever the working folder: the session's reads are compared by it.
    let key = std::path::absolute(&file).map_or_else(|_| file.clone(), |p| p.display().to_string());
    if let Some(s) = session
        && crate::hooks::read::outlined_before(local, s, &key)
    {
        return Some(Read::Whole(mask::redact::redact(&text).into_owned()));
    }
    let fr = baton_context::outline::first_read(&file, &text, threshold)?;
    if let Some(s) = session {
        crate::hooks::read::note_outlined(local, s, &key);
    }
    Some(Read::Outline(mask::redact::redact(&fr.text()).into_owned()))
}

/// Note what was masked in the project's mask log (`baton gain`, the run's report). A record
/// that cannot be written costs the caller nothing: the masked output is printed all the same.
fn record(
    ctx: &Ctx,
    args: &MaskArgs,
    outcome: &mask::Outcome,
    argv: &[String],
    first: Option<&str>,
) {
    use mask::record::{MaskRecord, Origin, Source};
    let shown = match first {
        Some(text) => text.to_string(),
        None => serde_json::to_string_pretty(&outcome.to_json()).unwrap_or_default(),
    };
    let source = if args.routed {
        Source::PreToolUse
    } else {
        Source::Cli
    };
    let stdin = ["(stdin)".to_string()];
    let argv = if argv.is_empty() { &stdin[..] } else { argv };
    let mut origin = Origin::from_env();
    if let Some(s) = &args.session {
        origin.session = Some(s.clone());
    }
    let mut rec = MaskRecord::of(outcome, source, origin, argv, &shown);
    if first.is_some() {
        rec.kind = "outline".into();
    }
    if let Err(e) = mask::record::append(&ctx.project.local_dir(), &rec) {
        eprintln!("baton: note: the mask log was not written: {e}");
    }
}

fn print(ctx: &Ctx, outcome: &mask::Outcome) {
    let mut stdout = std::io::stdout().lock();
    if outcome.masked || ctx.out.json {
        // The masked form is JSON for people too: it is what an agent reads back.
        let _ = serde_json::to_writer_pretty(&mut stdout, &outcome.to_json())
            .map_err(std::io::Error::other)
            .and_then(|_| writeln!(stdout));
        return;
    }
    if let Some(p) = &outcome.passthrough {
        let _ = stdout.write_all(p);
        let _ = stdout.flush();
    }
    if let Some(t) = outcome.timed_out {
        let signal = outcome.exit.and_then(|e| e.signal);
        eprintln!("baton: command {}", mask::timeout::describe(t, signal));
    } else if let Some(sig) = outcome.exit.and_then(|e| e.signal) {
        let name = mask::signal_name(sig)
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        eprintln!("baton: command killed by signal {sig}{name}");
    }
}

/// The scratch copy, and where the output goes once the copy cannot be written (a full
/// disk): what the file holds is read back and passed through, then the rest as it comes, all
/// redacted, so nothing of the output is lost and the command is never blocked.
struct Spill<'a> {
    scratch: Scratch,
    path: &'a std::path::Path,
    /// Bytes handed to the scratch copy so far.
    written: u64,
    /// The write error, and stdout, once the copy failed.
    spilled: Option<(std::io::Error, mask::redact::RedactWriter<std::io::Stdout>)>,
}

impl<'a> Spill<'a> {
    fn new(scratch: Scratch, path: &'a std::path::Path) -> Self {
        Spill {
            scratch,
            path,
            written: 0,
            spilled: None,
        }
    }

    /// Start passing the output through: what reached the file first, then the part of `buf`
    /// it did not take.
    fn spill(&mut self, e: std::io::Error, buf: &[u8]) {
        let mut out = mask::redact::RedactWriter::new(std::io::stdout());
        let kept = baton_core::fs::read_no_link(self.path).unwrap_or_default();
        let _ = out.write_all(&kept);
        // A raw copy is the output byte for byte: its length says where `buf` was cut. A
        // redacted one is not, and `buf` is passed whole after it.
        let taken = match self.scratch {
            Scratch::Raw(_) => (kept.len() as u64).saturating_sub(self.written) as usize,
            Scratch::Redacted(_) => 0,
        };
        let _ = out.write_all(&buf[taken.min(buf.len())..]);
        self.spilled = Some((e, out));
    }

    /// The write error, when the output was passed through (stdout flushed).
    fn spilled(&mut self) -> Option<std::io::Error> {
        let (e, out) = self.spilled.take()?;
        let _ = out.finish().and_then(|mut o| o.flush());
        Some(e)
    }

    fn finish(self) -> std::io::Result<()> {
        self.scratch.finish()
    }
}

impl Write for Spill<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if let Some((_, out)) = &mut self.spilled {
            // A reader that went away takes nothing more: the command still runs out.
            let _ = out.write_all(buf);
            return Ok(());
        }
        match self.scratch.write_all(buf) {
            Ok(()) => self.written += buf.len() as u64,
            Err(e) => self.spill(e, buf),
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.spilled {
            Some((_, out)) => {
                let _ = out.flush();
                Ok(())
            }
            None => match self.scratch.flush() {
                Ok(()) => Ok(()),
                Err(e) => {
                    self.spill(e, &[]);
                    Ok(())
                }
            },
        }
    }
}

/// The scratch file, raw or through the streaming redactor.
enum Scratch {
    Raw(std::fs::File),
    Redacted(mask::redact::RedactWriter<std::fs::File>),
}

impl Scratch {
    /// Write out the redactor's last, unterminated line.
    fn finish(self) -> std::io::Result<()> {
        match self {
            Scratch::Raw(_) => Ok(()),
            Scratch::Redacted(w) => w.finish().map(drop),
        }
    }
}

impl Write for Scratch {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Scratch::Raw(f) => f.write(buf),
            Scratch::Redacted(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            Scratch::Raw(f) => f.write_all(buf),
            Scratch::Redacted(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Scratch::Raw(f) => f.flush(),
            Scratch::Redacted(w) => w.flush(),
        }
    }
}
