//! Process groups: the agent runner and `mask --timeout` each start their command as the
//! leader of a new group, so that a signal reaches everything it started.

/// Send `sig` to every process of group `pgid`.
pub fn signal_group(pgid: i32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

/// Ask process `pid` to stop (SIGTERM); false if there is no such process.
pub fn terminate(pid: i32) -> bool {
    // SAFETY: kill(2) with a positive pid signals that process; no memory is involved.
    pid > 1 && unsafe { libc::kill(pid, libc::SIGTERM) } == 0
}
