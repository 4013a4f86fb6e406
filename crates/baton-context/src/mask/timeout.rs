//! `baton mask --timeout SECS`: a command that runs too long is stopped, its whole process
//! group: SIGTERM, a grace period, then SIGKILL, with the agent runner's `signal_group`.
//! Exit code 124, as `timeout(1)`.
//!
//! The command runs in its own process group (only with `--timeout`, so without it a terminal's
//! Ctrl-C still reaches the command directly). The leader is not reaped until the watchdog has
//! stopped, so the group id cannot be reused by an unrelated group while it may be signalled.

use baton_core::process::signal_group;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

/// `timeout(1)`'s exit code for a command stopped at its time limit.
pub const EXIT_CODE: u8 = 124;
/// Time between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// Parse `--timeout`: seconds, fractions allowed, more than zero.
pub fn parse_secs(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 || secs > 1e9 {
        return Err(format!("`{s}`: the timeout must be more than 0 seconds"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Stops process group `pgid` when `limit` passes before [`Watchdog::stop`].
pub struct Watchdog {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<bool>,
}

impl Watchdog {
    pub fn start(pgid: i32, limit: Duration, grace: Duration) -> Watchdog {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            match stopped.recv_timeout(limit) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return false,
            }
            signal_group(pgid, libc::SIGTERM);
            // The leader's exit (reported by `stop`) ends the grace early; whatever is left in
            // the group (members that ignore SIGTERM, or the leader itself) is then killed.
            let _ = stopped.recv_timeout(grace);
            signal_group(pgid, libc::SIGKILL);
            true
        });
        Watchdog { stop, thread }
    }

    /// The command's leader has exited (not yet reaped): stop watching. True when the time
    /// limit was reached and the group was stopped.
    pub fn stop(self) -> bool {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or(false)
    }
}

/// Block until process `pid` has exited, without reaping it (its group id stays reserved).
pub fn wait_exited(pid: u32) -> std::io::Result<()> {
    loop {
        // SAFETY: waitid(2) writes only into the zeroed siginfo_t it is given.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// "timed out after 2s (stopped by SIGTERM)": `signal` is what ended the command.
pub fn describe(limit: Duration, signal: Option<i32>) -> String {
    let by = signal
        .map(|s| match super::signal_name(s) {
            Some(n) => format!(" by {n}"),
            None => format!(" by signal {s}"),
        })
        .unwrap_or_default();
    format!("timed out after {} (stopped{by})", secs_text(limit))
}

/// "1s", "2.5s".
pub fn secs_text(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_parse() {
        assert_eq!(parse_secs("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_secs("0.5"), Ok(Duration::from_millis(500)));
        assert!(parse_secs("0").is_err());
        assert!(parse_secs("-1").is_err());
        assert!(parse_secs("soon").is_err());
        assert_eq!(secs_text(Duration::from_secs(3)), "3s");
        assert_eq!(secs_text(Duration::from_millis(1500)), "1.5s");
        assert_eq!(
            describe(Duration::from_secs(2), Some(9)),
            "timed out after 2s (stopped by SIGKILL)"
        );
    }

    #[test]
    fn a_group_that_ignores_sigterm_is_killed_after_the_grace() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sh")
            .args(["-c", "trap '' TERM; sleep 30"])
            .process_group(0)
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        let dog = Watchdog::start(
            child.id() as i32,
            Duration::from_millis(100),
            Duration::from_millis(300),
        );
        wait_exited(child.id()).unwrap();
        assert!(dog.stop());
        let st = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(st.signal(), Some(libc::SIGKILL));
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}
