//! A CLI waiting on a model API that says nothing: what the runner watches to stop it after
//! [`super::AgentSpec::api_patience`] instead of the phase's whole timeout.

use std::time::{Duration, Instant};

/// What process group `pgid` has read so far (`rchar` of `/proc/PID/io`, summed): a model's
/// answer streaming in is read, whether or not the CLI prints anything of it. `None` where
/// /proc cannot tell.
pub(super) fn group_read(pgid: i32) -> Option<u64> {
    let dir = std::fs::read_dir("/proc").ok()?;
    let mut total = None;
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
        let pgrp = stat
            .get(stat.rfind(')').unwrap_or(0) + 1..)
            .and_then(|a| a.split_whitespace().nth(2))
            .and_then(|p| p.parse::<i32>().ok());
        if pgrp != Some(pgid) {
            continue;
        }
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
    total
}

/// Bytes a second a CLI may read while hearing nothing: its own housekeeping (claude reads
/// about 100 B/s of its files when idle), well under a model's answer streaming in.
const QUIET_READ_RATE: f64 = 512.0;

/// A CLI waiting on its model API, watched: nothing printed, nothing read beyond its
/// housekeeping, for `patience`, and it is not being answered. Pure: fed what was seen and
/// when.
pub(super) struct Silence {
    patience: Duration,
    since: Instant,
    checked: Instant,
    printed: u64,
    read: Option<u64>,
}

impl Silence {
    pub(super) fn new(patience: Duration, now: Instant) -> Silence {
        Silence {
            patience,
            since: now,
            checked: now,
            printed: 0,
            read: None,
        }
    }

    /// One look at `now`: `waiting` (the parser's word), bytes `printed` so far, bytes the
    /// group has `read` so far. True once the CLI has waited unheard for `patience`.
    pub(super) fn unanswered(
        &mut self,
        now: Instant,
        waiting: bool,
        printed: u64,
        read: Option<u64>,
    ) -> bool {
        let secs = now.saturating_duration_since(self.checked).as_secs_f64();
        let streamed = match (self.read, read) {
            (Some(before), Some(after)) => {
                after.saturating_sub(before) as f64 > QUIET_READ_RATE * secs.max(1.0)
            }
            _ => false,
        };
        if !waiting || printed != self.printed || streamed {
            self.since = now;
        }
        self.checked = now;
        self.printed = printed;
        self.read = read;
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
        let mut w = Silence::new(Duration::from_secs(10), t0);
        // A tool running quietly for a long time is not silence.
        for s in 1..=30 {
            assert!(!w.unanswered(at(s), false, 0, None));
        }
        // Waiting from 31 on (the last look at work was at 30), the CLI's housekeeping reads
        // (~100 B/s) are not an answer.
        for s in 31..40 {
            assert!(!w.unanswered(at(s), true, 0, Some(s * 100)), "{s}");
        }
        assert!(w.unanswered(at(40), true, 0, Some(4000)));
        // A line printed, or an answer streaming in (KBs a second), starts the count again.
        let mut w = Silence::new(Duration::from_secs(10), t0);
        assert!(!w.unanswered(at(1), true, 0, Some(0)));
        assert!(!w.unanswered(at(9), true, 10, Some(0)));
        assert!(!w.unanswered(at(18), true, 10, Some(50_000)));
        assert!(!w.unanswered(at(27), true, 10, Some(50_100)));
        assert!(w.unanswered(at(28), true, 10, Some(50_200)));
        // Zero patience: never.
        let mut w = Silence::new(Duration::ZERO, t0);
        assert!(!w.unanswered(at(1000), true, 0, None));
    }
}
