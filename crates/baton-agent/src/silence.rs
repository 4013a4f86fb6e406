//! A CLI waiting on a model API that says nothing: what the runner watches to stop it after
//! [`super::AgentSpec::api_patience`] instead of the phase's whole timeout.
//!
//! What the CLI's process group has *received*: the bytes its TCP sockets took in
//! (`tcpi_bytes_received`, read through a duplicate of each socket, which `pidfd_getfd`
//! allows for baton's own children) — the model's answer itself, whether or not the CLI
//! prints any of it. Where that cannot be read (no permission, an older kernel, not Linux),
//! the bytes the group read at all (`rchar`), above a rate its own housekeeping stays under.

use std::time::{Duration, Instant};

/// Whether a CLI waits on its model API, as its output tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waiting {
    No,
    Yes,
    /// The output cannot tell (gemini prints nothing until its end): waiting unless a
    /// tool's process runs in the CLI's group ([`tool_running`]).
    UnlessATool,
}

impl From<bool> for Waiting {
    fn from(waiting: bool) -> Waiting {
        if waiting { Waiting::Yes } else { Waiting::No }
    }
}

/// Whether a process other than the CLI's own runtime (`node`) and baton's MCP server is among
/// `pids` (a group's): a shell command, a test run, a build the model asked for.
pub(super) fn tool_running(pids: &[i32]) -> bool {
    pids.iter().any(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|c| !matches!(c.trim(), "node" | "baton"))
    })
}

/// What was heard from a process group so far, one way or the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Heard {
    /// Bytes its TCP sockets received.
    Network(u64),
    /// Bytes it read, files and pipes included.
    Reads(u64),
}

impl Heard {
    /// Bytes a second that are still nothing: for the network, a keep-alive or a ping; for
    /// reads, a CLI's own housekeeping (claude reads ~100 B/s of its files when idle, codex
    /// 1–4 KB/s for its first minute) — both well under a model's answer streaming in.
    fn quiet_rate(self) -> f64 {
        match self {
            Heard::Network(_) => 128.0,
            Heard::Reads(_) => 512.0,
        }
    }

    /// Whether more than the quiet rate came in between `self` and `later`, `secs` apart.
    fn streamed(self, later: Heard, secs: f64) -> bool {
        match (self, later) {
            (Heard::Network(a), Heard::Network(b)) | (Heard::Reads(a), Heard::Reads(b)) => {
                b.saturating_sub(a) as f64 > self.quiet_rate() * secs.max(1.0)
            }
            _ => false,
        }
    }
}

/// The processes of group `pgid` (one scan of /proc, shared by the looks of a second).
pub(super) fn group_pids(pgid: i32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let pgrp = stat
            .get(stat.rfind(')').unwrap_or(0) + 1..)
            .and_then(|a| a.split_whitespace().nth(2))
            .and_then(|p| p.parse::<i32>().ok());
        if pgrp == Some(pgid) {
            pids.push(pid);
        }
    }
    pids
}

/// What the processes `pids` (a group's) have been heard to take in so far; `None` where
/// nothing can tell.
pub(super) fn heard(pids: &[i32]) -> Option<Heard> {
    if let Some(n) = received(pids) {
        return Some(Heard::Network(n));
    }
    let mut total = None;
    for &pid in pids {
        let read = std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|io| {
                io.lines()
                    .find_map(|l| l.strip_prefix("rchar:"))
                    .and_then(|v| v.trim().parse::<u64>().ok())
            });
        if let Some(r) = read {
            total = Some(total.unwrap_or(0) + r);
        }
    }
    total.map(Heard::Reads)
}

/// Bytes the TCP sockets of `pids` have received; `None` when none could be read.
#[cfg(target_os = "linux")]
fn received(pids: &[i32]) -> Option<u64> {
    /// `tcpi_bytes_received`'s offset in the kernel's `struct tcp_info` (since Linux 4.1).
    const BYTES_RECEIVED: usize = 128;
    let mut total = None;
    for &pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        let sockets: Vec<i32> = fds
            .flatten()
            .filter(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
            })
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect();
        if sockets.is_empty() {
            continue;
        }
        // SAFETY: plain syscalls on descriptors this function owns and closes; the buffer is
        // as long as the length given.
        unsafe {
            let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32;
            if pidfd < 0 {
                continue;
            }
            for fd in sockets {
                let dup = libc::syscall(libc::SYS_pidfd_getfd, pidfd, fd, 0) as i32;
                if dup < 0 {
                    continue;
                }
                let mut info = [0u8; 256];
                let mut len = info.len() as libc::socklen_t;
                let ok = libc::getsockopt(
                    dup,
                    libc::IPPROTO_TCP,
                    libc::TCP_INFO,
                    info.as_mut_ptr().cast(),
                    &mut len,
                ) == 0;
                libc::close(dup);
                if ok && len as usize >= BYTES_RECEIVED + 8 {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&info[BYTES_RECEIVED..BYTES_RECEIVED + 8]);
                    total = Some(total.unwrap_or(0) + u64::from_ne_bytes(b));
                }
            }
            libc::close(pidfd);
        }
    }
    total
}

#[cfg(not(target_os = "linux"))]
fn received(_: &[i32]) -> Option<u64> {
    None
}

/// A CLI waiting on its model API, watched: nothing printed and nothing heard beyond the
/// quiet rate for `patience`, and it is not being answered. Pure: fed what was seen and when.
pub(super) struct Silence {
    patience: Duration,
    since: Instant,
    checked: Instant,
    printed: u64,
    heard: Option<Heard>,
}

impl Silence {
    pub(super) fn new(patience: Duration, now: Instant) -> Silence {
        Silence {
            patience,
            since: now,
            checked: now,
            printed: 0,
            heard: None,
        }
    }

    /// One look at `now`: `waiting` (the parser's word), bytes `printed` so far, what the
    /// group was `heard` to take in so far. True once the CLI has waited unheard for
    /// `patience`.
    pub(super) fn unanswered(
        &mut self,
        now: Instant,
        waiting: bool,
        printed: u64,
        heard: Option<Heard>,
    ) -> bool {
        let secs = now.saturating_duration_since(self.checked).as_secs_f64();
        let streamed = match (self.heard, heard) {
            (Some(before), Some(after)) => before.streamed(after, secs),
            _ => false,
        };
        if !waiting || printed != self.printed || streamed {
            self.since = now;
        }
        self.checked = now;
        self.printed = printed;
        self.heard = heard;
        waiting
            && !self.patience.is_zero()
            && now.saturating_duration_since(self.since) >= self.patience
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_counts_only_while_waiting_with_nothing_heard() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let r = |n: u64| Some(Heard::Reads(n));
        let mut w = Silence::new(Duration::from_secs(10), t0);
        // A tool running quietly for a long time is not silence.
        for s in 1..=30 {
            assert!(!w.unanswered(at(s), false, 0, None));
        }
        // Waiting from 31 on (the last look at work was at 30), the CLI's housekeeping reads
        // (~100 B/s) are not an answer.
        for s in 31..40 {
            assert!(!w.unanswered(at(s), true, 0, r(s * 100)), "{s}");
        }
        assert!(w.unanswered(at(40), true, 0, r(4000)));
        // A line printed, or an answer streaming in (KBs a second), starts the count again.
        let mut w = Silence::new(Duration::from_secs(10), t0);
        assert!(!w.unanswered(at(1), true, 0, r(0)));
        assert!(!w.unanswered(at(9), true, 10, r(0)));
        assert!(!w.unanswered(at(18), true, 10, r(50_000)));
        assert!(!w.unanswered(at(27), true, 10, r(50_100)));
        assert!(w.unanswered(at(28), true, 10, r(50_200)));
        // Zero patience: never.
        let mut w = Silence::new(Duration::ZERO, t0);
        assert!(!w.unanswered(at(1000), true, 0, None));
    }

    #[test]
    fn the_network_is_heard_finely_and_a_change_of_measure_compares_nothing() {
        let n = |b: u64| Some(Heard::Network(b));
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut w = Silence::new(Duration::from_secs(10), t0);
        assert!(!w.unanswered(at(1), true, 0, n(1000)));
        // 1 KB in 5 s: a trickle of an answer, heard (reads would need 2.5 KB).
        assert!(!w.unanswered(at(6), true, 0, n(2000)));
        assert!(
            !w.unanswered(at(15), true, 0, n(2050)),
            "a keep-alive is nothing"
        );
        assert!(w.unanswered(at(16), true, 0, n(2050)));
        // Network one look, reads the next: no comparison, nothing heard.
        let mut w = Silence::new(Duration::from_secs(10), t0);
        assert!(!w.unanswered(at(1), true, 0, n(0)));
        assert!(w.unanswered(at(11), true, 0, Some(Heard::Reads(1 << 30))));
    }

    /// A command the model asked for runs in the CLI's group: not waiting on the API. A
    /// group that is gone runs nothing.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_tools_process_in_the_group_is_seen() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = child.id() as i32;
        assert!(tool_running(&group_pids(pgid)));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!tool_running(&group_pids(pgid)));
    }

    /// The group's own socket, as the runner reads it: bytes a peer sent are counted.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_sockets_received_bytes_are_read_through_its_duplicate() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        server.write_all(&[7u8; 5000]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        match received(&[std::process::id() as i32]) {
            // Every TCP socket of this test process: the client's received at least 5000.
            Some(n) => assert!(n >= 5000, "{n}"),
            None => println!("skipped: this kernel or policy lets no socket be read"),
        }
        drop(client);
    }
}
