//! Mask records: every output baton masks, wherever it masked it (an agent's hook, `baton mask`
//! run by an agent or a person, the MCP mask tool), appends one line to the project's mask log,
//! `.baton/masks.jsonl`: when, from where, for which agent, session, run and phase, which
//! command, how many tokens the output had and how many were shown instead, and where the full
//! text is. `baton gain`, the run report and `status` all read this one log.
//!
//! The log is append-only (one `write` of one line, so concurrent writers' lines do not mix)
//! and rotates at [`ROTATE_BYTES`] into `masks.jsonl.1` … `.N` ([`KEEP_ROTATED`]), under a
//! lock, so it stays bounded; readers read the rotated files too. A JSON-lines file rather
//! than a database: appends from short-lived hook processes cost one `open`+`write`, and the
//! reads (a run's report, `gain` over ~10⁵ records) are a linear scan measured in
//! milliseconds.
//!
//! Runs of earlier versions kept their records in `<run dir>/masks.jsonl` (version 1, no
//! source or run id); [`for_run`] still reads them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// The run directory of the phase an agent runs (the run pipeline sets it for every agent
/// process).
pub const RUN_DIR_ENV: &str = "BATON_RUN_DIR";
/// The phase's label (`prompts/<label>.md`, `logs/<label>.log`).
pub const PHASE_ENV: &str = "BATON_RUN_PHASE";
/// The agent CLI of the phase (`claude`, `codex`, …), set beside the two above.
pub const AGENT_ENV: &str = "BATON_RUN_AGENT";

/// The log's name, in the project's local folder (`.baton/`); also a version-1 run's file.
pub const FILE: &str = "masks.jsonl";
/// The log is rotated when an append finds it this large.
pub const ROTATE_BYTES: u64 = 8 << 20;
/// Rotated files kept (`masks.jsonl.1` is the newest).
pub const KEEP_ROTATED: usize = 3;
/// The record format written now.
pub const VERSION: u32 = 2;

/// Where a masked output was masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// An agent's post-tool hook replaced a tool's output.
    PostToolUse,
    /// An agent's pre-tool hook routed the command through `baton mask` before it ran.
    PreToolUse,
    /// `baton mask` run by an agent or a person.
    Cli,
    /// The MCP server's mask tool.
    Mcp,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::PostToolUse => "post-tool-use",
            Source::PreToolUse => "pre-tool-use",
            Source::Cli => "cli",
            Source::Mcp => "mcp",
        }
    }
    /// Version-1 records were all written by `baton mask` inside a run.
    fn v1() -> Self {
        Source::Cli
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaskRecord {
    pub v: u32,
    pub ts: String,
    #[serde(default = "Source::v1")]
    pub source: Source,
    /// The agent CLI that was shown the mask (`claude`, `codex`, `gemini`, `sim`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agent's session (its own id), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The `baton run` the agent ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The run's phase label (`prompts/<label>.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The command's name: the program and its subcommand (`cargo test`), never its other
    /// arguments, which can hold secrets ([`command_name`]).
    pub command: String,
    /// The summarizer that read the output (`cargo`, `pytest`, `generic`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The scratch file with the full output.
    pub scratch: String,
    /// Tokens of the full output (estimated when `tokens_estimated`: see `mask::tally`).
    pub tokens: u64,
    #[serde(default)]
    pub tokens_estimated: bool,
    /// Tokens of what the agent read instead: always estimated (a summary of a few hundred
    /// tokens; ARCHITECTURE, masking, says so).
    pub masked_tokens: u64,
}

impl MaskRecord {
    /// The record of a masked `outcome` of `argv`, where `shown` is the whole text the agent
    /// read instead (the summary, with any note around it).
    pub fn of(
        outcome: &super::Outcome,
        source: Source,
        origin: Origin,
        argv: &[String],
        shown: &str,
    ) -> Self {
        MaskRecord {
            v: VERSION,
            ts: baton_core::ids::now(),
            source,
            agent: origin.agent,
            session: origin.session,
            run: origin.run,
            phase: origin.phase,
            command: command_name(argv),
            kind: outcome.summary.kind.name().to_string(),
            scratch: outcome.scratch.display().to_string(),
            tokens: outcome.tokens,
            tokens_estimated: !outcome.tokens_exact,
            masked_tokens: super::tally::shown(shown),
        }
    }

    pub fn saved(&self) -> u64 {
        self.tokens.saturating_sub(self.masked_tokens)
    }
}

/// Who masked, as far as the process can tell from its environment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Origin {
    pub agent: Option<String>,
    pub session: Option<String>,
    pub run: Option<String>,
    pub phase: Option<String>,
}

impl Origin {
    /// From this process's environment: a `baton run`'s agent sets [`RUN_DIR_ENV`],
    /// [`PHASE_ENV`] and [`AGENT_ENV`]; outside a run, the agent CLIs' own markers (Claude
    /// Code's `CLAUDECODE`, codex's `CODEX_THREAD_ID`, gemini's `GEMINI_CLI`) name the agent.
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let (run, phase) = match target() {
            Some((dir, phase)) => (
                dir.file_name().map(|n| n.to_string_lossy().into_owned()),
                Some(phase),
            ),
            None => (None, None),
        };
        let codex_thread = var("CODEX_THREAD_ID");
        let agent = var(AGENT_ENV).or_else(|| {
            if var("CLAUDECODE").as_deref() == Some("1") {
                Some("claude".into())
            } else if codex_thread.is_some() {
                Some("codex".into())
            } else if var("GEMINI_CLI").as_deref() == Some("1") {
                Some("gemini".into())
            } else {
                None
            }
        });
        let session = codex_thread.filter(|_| agent.as_deref() == Some("codex"));
        Origin {
            agent,
            session,
            run,
            phase,
        }
    }
}

/// The name a record keeps of a command line: the program's file name, and its first
/// argument when that is a plain word (a subcommand such as `test`, `diff`, `run`), so the
/// log can total by command without holding any argument that could be a secret. A shell's
/// `-c` script is named by its own first words.
pub fn command_name(argv: &[String]) -> String {
    let program = |s: &str| {
        Path::new(s)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    };
    let word = |s: &str| {
        !s.is_empty()
            && s.len() <= 24
            && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == ':')
    };
    let Some(first) = argv.first().and_then(|a| program(a)) else {
        return String::new();
    };
    if matches!(first.as_str(), "bash" | "sh" | "zsh" | "dash")
        && argv.get(1).map(String::as_str) == Some("-c")
        && let Some(script) = argv.get(2)
    {
        let words: Vec<String> = script.split_whitespace().map(String::from).collect();
        let inner = command_name(&words);
        if !inner.is_empty() {
            return inner;
        }
    }
    match argv.get(1) {
        Some(sub) if word(sub) => format!("{first} {sub}"),
        _ => first,
    }
}

/// The run directory and phase this process masks for, when an agent of a run started it.
/// A directory without a journal is not a run's.
pub fn target() -> Option<(PathBuf, String)> {
    let dir = PathBuf::from(std::env::var_os(RUN_DIR_ENV)?);
    let phase = std::env::var(PHASE_ENV).ok()?;
    (dir.is_absolute() && dir.join("events.jsonl").is_file() && !phase.is_empty())
        .then_some((dir, phase))
}

/// The log of the project whose local folder is `local`.
pub fn log_path(local: &Path) -> PathBuf {
    local.join(FILE)
}

fn rotated(local: &Path, n: usize) -> PathBuf {
    local.join(format!("{FILE}.{n}"))
}

/// Append one record to the project's log (rotating it first when it is full). The file is
/// opened without following a link ([`baton_core::fs::append`]).
pub fn append(local: &Path, rec: &MaskRecord) -> Result<()> {
    let mut line = serde_json::to_vec(rec).map_err(|e| crate::Error::internal(e.to_string()))?;
    line.push(b'\n');
    let log = log_path(local);
    if std::fs::symlink_metadata(&log).is_ok_and(|m| m.len() >= ROTATE_BYTES) {
        rotate(local)?;
    }
    Ok(baton_core::fs::append(&log, &line)?)
}

/// Shift `masks.jsonl` → `.1` → … → `.N`, the oldest dropped; under a lock, and only if the
/// log is still full once the lock is held (another writer may have rotated it meanwhile).
fn rotate(local: &Path) -> Result<()> {
    let _lock = baton_core::fs::lock(&local.join(format!("{FILE}.lock")))?;
    let log = log_path(local);
    if !std::fs::symlink_metadata(&log).is_ok_and(|m| m.len() >= ROTATE_BYTES) {
        return Ok(());
    }
    for n in (1..KEEP_ROTATED).rev() {
        let from = rotated(local, n);
        if from.exists() {
            std::fs::rename(&from, rotated(local, n + 1))
                .map_err(|e| crate::Error::io(&from, e))?;
        }
    }
    std::fs::rename(&log, rotated(local, 1)).map_err(|e| crate::Error::io(&log, e))
}

/// What a read found: the records, oldest first, how many lines were not records (a torn
/// last line, a newer format), and the log files that could not be read at all (a link, no
/// permission: each as "PATH: why"), which readers say they left out.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Read {
    pub records: Vec<MaskRecord>,
    pub unreadable: usize,
    pub unreadable_files: Vec<String>,
}

impl Read {
    fn add_file(&mut self, path: &Path) {
        // Never through a link: a store file replaced by one is not the project's.
        let bytes = match baton_core::fs::read_no_link(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                self.unreadable_files
                    .push(baton_core::fs::no_link(path, e).to_string());
                return;
            }
        };
        for line in String::from_utf8_lossy(&bytes).lines() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<MaskRecord>(line) {
                Ok(r) if r.v == 1 || r.v == VERSION => self.records.push(r),
                _ => self.unreadable += 1,
            }
        }
    }
}

/// Every record of the project's log, rotated files included, oldest first.
pub fn read_all(local: &Path) -> Read {
    let mut read = Read::default();
    for n in (1..=KEEP_ROTATED).rev() {
        read.add_file(&rotated(local, n));
    }
    read.add_file(&log_path(local));
    read
}

/// A version-1 run's own records (`<run dir>/masks.jsonl`); none for a run of today's.
pub fn of_v1_run(run_dir: &Path) -> Read {
    let mut read = Read::default();
    read.add_file(&run_dir.join(FILE));
    read
}

/// The records of one run: the project's log filtered by the run's id (runs live in
/// `<local>/runs/<id>`), plus a version-1 run's own file.
pub fn for_run(run_dir: &Path) -> Read {
    let mut read = of_v1_run(run_dir);
    let (Some(id), Some(local)) = (
        run_dir.file_name().and_then(|n| n.to_str()),
        run_dir.parent().and_then(Path::parent),
    ) else {
        return read;
    };
    let all = read_all(local);
    read.unreadable += all.unreadable;
    read.unreadable_files.extend(all.unreadable_files);
    read.records.extend(
        all.records
            .into_iter()
            .filter(|r| r.run.as_deref() == Some(id)),
    );
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(run: Option<&str>, tokens: u64) -> MaskRecord {
        MaskRecord {
            v: VERSION,
            ts: "2026-11-27T10:00:00Z".into(),
            source: Source::PostToolUse,
            agent: Some("claude".into()),
            session: Some("s1".into()),
            run: run.map(String::from),
            phase: run.map(|_| "1-1.1-dev-1".into()),
            command: "cargo test".into(),
            kind: "cargo".into(),
            scratch: "/x/.baton/scratch/a.log".into(),
            tokens,
            tokens_estimated: false,
            masked_tokens: 200,
        }
    }

    #[test]
    fn records_round_trip_and_bad_lines_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let a = rec(None, 9000);
        append(dir.path(), &a).unwrap();
        append(dir.path(), &a).unwrap();
        let log = log_path(dir.path());
        let torn = std::fs::read_to_string(&log).unwrap() + "{\"v\":2,\"ts\"";
        std::fs::write(&log, torn).unwrap();
        let read = read_all(dir.path());
        assert_eq!(read.records, vec![a.clone(), a.clone()]);
        assert_eq!(read.unreadable, 1);
        assert_eq!(a.saved(), 8800);
    }

    #[test]
    fn a_run_reads_its_own_records_and_a_version_1_file() {
        let local = tempfile::tempdir().unwrap();
        let run_dir = local.path().join("runs").join("r1");
        std::fs::create_dir_all(&run_dir).unwrap();
        append(local.path(), &rec(Some("r1"), 5000)).unwrap();
        append(local.path(), &rec(Some("r2"), 7000)).unwrap();
        append(local.path(), &rec(None, 3000)).unwrap();
        // An earlier version's record, in the run's own folder.
        std::fs::write(
            run_dir.join(FILE),
            r#"{"v":1,"ts":"t","phase":"1-1.1-dev-1","command":"cargo","scratch":"/s","tokens":900,"masked_tokens":100}"#,
        )
        .unwrap();
        let read = for_run(&run_dir);
        let tokens: Vec<u64> = read.records.iter().map(|r| r.tokens).collect();
        assert_eq!(tokens, vec![900, 5000]);
        assert_eq!(read.records[0].source, Source::Cli);
        assert_eq!(read.records[0].phase.as_deref(), Some("1-1.1-dev-1"));
        assert_eq!(read.unreadable, 0);
    }

    #[test]
    fn the_log_rotates_when_full_and_reads_span_the_rotated_files() {
        let local = tempfile::tempdir().unwrap();
        let log = log_path(local.path());
        // A full log: the next append moves it to .1 first.
        for n in 0..(KEEP_ROTATED + 1) {
            let line = serde_json::to_string(&rec(None, 1000 + n as u64)).unwrap() + "\n";
            let fill = line.repeat((ROTATE_BYTES as usize / line.len()) + 1);
            std::fs::write(&log, &fill).unwrap();
            append(local.path(), &rec(None, 1)).unwrap();
        }
        // KEEP_ROTATED files plus the live one; the oldest full log was dropped.
        assert!(rotated(local.path(), KEEP_ROTATED).exists());
        assert!(!rotated(local.path(), KEEP_ROTATED + 1).exists());
        let live = std::fs::read_to_string(&log).unwrap();
        assert_eq!(live.lines().count(), 1);
        let read = read_all(local.path());
        assert_eq!(read.unreadable, 0);
        // The newest record is last.
        assert_eq!(read.records.last().unwrap().tokens, 1);
        assert!(read.records.iter().all(|r| r.tokens != 1000));
    }

    #[test]
    fn command_names_keep_the_subcommand_and_drop_every_other_argument() {
        let n = |a: &[&str]| command_name(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(n(&["cargo", "test", "--", "--nocapture"]), "cargo test");
        assert_eq!(n(&["/usr/bin/git", "diff", "HEAD~1"]), "git diff");
        assert_eq!(n(&["curl", "-u", "admin:hunter2", "x"]), "curl");
        assert_eq!(n(&["mysql", "-phunter2"]), "mysql");
        assert_eq!(n(&["bash", "-c", "npm test 2>&1 | tee log"]), "npm test");
        assert_eq!(
            n(&["tool", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"]),
            "tool"
        );
        assert_eq!(n(&[]), "");
    }
}
