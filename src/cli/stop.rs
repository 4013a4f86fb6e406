//! `baton stop`: a run's baton stopped the way Ctrl-C stops it (its agents ended, the journal
//! kept, `baton run --resume` continues it), and the agents a killed baton left running ended.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use super::Ctx;
use crate::error::{Error, Result};
use baton_engine::journal::Journal;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton stop 20261122T130501-7f3a9c\n  baton stop --graceful 20261122T130501-7f3a9c   after the phase in flight\n  baton stop --all\n\n\
`baton status` lists the runs, and an interrupted run's agents still running. A stopped run\n\
continues with `baton run --resume RUN_ID`."
)]
pub struct Args {
    /// The run to stop
    #[arg(
        value_name = "RUN_ID",
        required_unless_present = "all",
        conflicts_with = "all",
        add = super::complete::run_ids()
    )]
    pub run_id: Option<String>,
    /// Every run of this project that has not finished
    #[arg(long)]
    pub all: bool,
    /// Let the phase in flight finish, then stop the run before its next one (resumable);
    /// returns at once
    #[arg(long)]
    pub graceful: bool,
}

/// What stopping one run did.
#[derive(serde::Serialize)]
struct Stopped {
    run_id: String,
    /// The baton that was running it, stopped.
    baton_pid: Option<i32>,
    /// The agents a killed baton had left running, ended.
    agents: Vec<String>,
    /// An interrupted run, named and not running: closed (no longer offered for --resume).
    closed: bool,
    /// A closed epic run that worked in its own worktree: how its commits reached the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    landing: Option<baton_engine::workflow::epic::tree::Landing>,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let local = ctx.project.local_dir();
    let journals: Vec<Journal> = match &a.run_id {
        Some(id) => vec![Journal::open(&local, id)?],
        None => Journal::run_ids(&local)
            .iter()
            .filter_map(|id| Journal::open(&local, id).ok())
            .filter(|j| !j.run_finished() || !j.orphans().is_empty())
            .collect(),
    };
    if a.graceful {
        return graceful(ctx, &journals);
    }
    let mut done = Vec::new();
    for j in &journals {
        let mut s = stop(j)?;
        // Named by the user and not running: an interrupted run they give up is closed, no
        // longer offered for --resume.
        if a.run_id.is_some() && s.baton_pid.is_none() && !j.run_finished() {
            let mut j = Journal::open(&local, &s.run_id)?;
            // What it committed in its own worktree lands first: a new run must not redo it.
            s.landing = baton_engine::workflow::epic::start::close_landing(
                &j,
                &baton_engine::git::Git::new(&ctx.project.dir),
                &ctx.project.config.run.protected_branches,
            )?;
            j.log(baton_engine::journal::Entry::Closed {
                reason: "closed by `baton stop`".into(),
            })?;
            s.closed = true;
        }
        done.push(s);
    }
    ctx.out.emit(&done, |w| {
        if done.is_empty() {
            writeln!(w, "no run to stop")?;
        }
        for s in &done {
            match s.baton_pid {
                Some(pid) => writeln!(
                    w,
                    "run {}: stopped (its baton, pid {pid}, ended its agents); continue with: baton run --resume {}",
                    s.run_id, s.run_id
                )?,
                None if s.closed => {
                    writeln!(
                        w,
                        "run {}: closed; it is no longer offered for --resume (its commits and \
                         stashes stay as they are; a new run skips the stories it finished)",
                        s.run_id
                    )?;
                    if let Some(l) = &s.landing {
                        writeln!(w, "run {}: {}", s.run_id, l.describe())?;
                    }
                }
                None if s.agents.is_empty() => {
                    writeln!(w, "run {}: nothing was running", s.run_id)?
                }
                None => {}
            }
            for line in &s.agents {
                writeln!(w, "run {}: {line}", s.run_id)?;
            }
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}

fn stop(j: &Journal) -> Result<Stopped> {
    let run_id = j
        .dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut baton_pid = None;
    if let Some(pid) = j.holder() {
        // As Ctrl-C: the run stops its agents (their grace included) and journals where it was.
        if baton_core::process::terminate(pid) {
            let deadline = Instant::now() + Duration::from_secs(60);
            while j.is_held() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        if j.is_held() {
            return Err(Error::state(format!(
                "run {run_id}: its baton (pid {pid}) did not stop within a minute"
            ))
            .hint(format!(
                "kill -9 {pid}, then `baton stop {run_id}` ends the agents it left"
            )));
        }
        baton_pid = Some(pid);
    }
    // What a killed baton left (a baton that stopped cleanly leaves nothing).
    let agents = baton_agent::stop_orphans(&j.dir.join("logs"));
    Ok(Stopped {
        run_id,
        baton_pid,
        agents,
        closed: false,
        landing: None,
    })
}

/// `--graceful`: each running run is asked to stop after the phase in flight (a file in its
/// folder, which its next call reads); a run nothing runs is left as it is.
fn graceful(ctx: &Ctx, journals: &[Journal]) -> Result<ExitCode> {
    #[derive(serde::Serialize)]
    struct Asked {
        run_id: String,
        asked: bool,
    }
    let mut out = Vec::new();
    for j in journals {
        let run_id = j
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let asked = j.is_held() && !j.run_finished();
        if asked {
            baton_core::fs::write_new(
                &j.dir.join(baton_engine::interrupt::GRACEFUL_FILE),
                b"asked by baton stop --graceful\n",
            )
            .or_else(|e| match e {
                // Asked already.
                baton_core::Error::Io { ref source, .. }
                    if source.kind() == std::io::ErrorKind::AlreadyExists =>
                {
                    Ok(())
                }
                e => Err(e),
            })?;
        }
        out.push(Asked { run_id, asked });
    }
    ctx.out.emit(&out, |w| {
        for a in &out {
            if a.asked {
                writeln!(
                    w,
                    "run {}: stops after the phase in flight; continue later with: baton run --resume {}",
                    a.run_id, a.run_id
                )?;
            } else {
                writeln!(w, "run {}: nothing is running", a.run_id)?;
            }
        }
        if out.is_empty() {
            writeln!(w, "no run to stop")?;
        }
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}
