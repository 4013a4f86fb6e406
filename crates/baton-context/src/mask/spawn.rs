//! Starting the command `baton mask` (and the checks, the MCP mask tool) runs: no shell, its
//! stdout and stderr on one pipe, in a process group of its own when it may have to be
//! stopped.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::process::{Child, Command, Stdio};

use super::ExitInfo;
use crate::error::{Error, Result};

/// A spawned command whose stdout and stderr share one pipe (so their lines interleave as the
/// command wrote them).
pub struct Running {
    pub child: Child,
    pub output: std::io::PipeReader,
}

/// Why a command could not start, with the shell's exit code for it (127 / 126).
#[derive(Debug)]
pub struct SpawnFailure {
    pub error: Error,
    pub exit_code: u8,
}

/// Start `argv` directly (no shell), stdin inherited, stdout+stderr into one pipe.
pub fn spawn(argv: &[OsString]) -> std::result::Result<Running, SpawnFailure> {
    spawn_in(argv, false)
}

/// [`spawn`], in a process group of its own when `own_group` (so a timeout can stop the
/// command and everything it started).
pub fn spawn_in(argv: &[OsString], own_group: bool) -> std::result::Result<Running, SpawnFailure> {
    spawn_with(argv, own_group, Stdio::inherit())
}

/// [`spawn_in`] with the child's stdin given (the MCP server's stdin is its protocol stream).
pub fn spawn_with(
    argv: &[OsString],
    own_group: bool,
    stdin: Stdio,
) -> std::result::Result<Running, SpawnFailure> {
    spawn_at(argv, own_group, stdin, None)
}

/// [`spawn_with`] in `dir` (None: this process's working directory).
pub fn spawn_at(
    argv: &[OsString],
    own_group: bool,
    stdin: Stdio,
    dir: Option<&std::path::Path>,
) -> std::result::Result<Running, SpawnFailure> {
    let Some((program, args)) = argv.split_first() else {
        return Err(SpawnFailure {
            error: Error::invalid("no command given"),
            exit_code: 2,
        });
    };
    let fail = |e: std::io::Error| -> SpawnFailure {
        let name = program.to_string_lossy();
        match e.kind() {
            ErrorKind::NotFound => SpawnFailure {
                error: Error::not_found(format!("command not found: {name}")).hint(
                    "baton mask runs the command directly, without a shell; check the name and \
                     PATH, or use `baton mask -- sh -c '…'` for shell syntax",
                ),
                exit_code: 127,
            },
            ErrorKind::PermissionDenied => SpawnFailure {
                error: Error::invalid(format!("cannot execute {name}: permission denied"))
                    .hint("check that the file is executable"),
                exit_code: 126,
            },
            _ => SpawnFailure {
                error: Error::invalid(format!("cannot start {name}: {e}")),
                exit_code: 126,
            },
        }
    };
    let (reader, writer) = std::io::pipe().map_err(fail)?;
    let writer2 = writer.try_clone().map_err(fail)?;
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(stdin).stdout(writer).stderr(writer2);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    if own_group {
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    }
    let child = cmd.spawn().map_err(fail)?;
    // `cmd` holds the pipe's write ends; drop it so EOF arrives when the child exits.
    drop(cmd);
    Ok(Running {
        child,
        output: reader,
    })
}

/// Wait for the child and describe its end.
pub fn wait(child: &mut Child) -> Result<ExitInfo> {
    let status = child.wait().map_err(|e| Error::io("<child process>", e))?;
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal = None;
    Ok(ExitInfo {
        code: status.code(),
        signal,
    })
}
