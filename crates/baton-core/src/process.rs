//! Process groups: the agent runner and `mask --timeout` each start their command as the
//! leader of a new group, so that a signal reaches everything it started.

/// Send `sig` to every process of group `pgid`.
pub fn signal_group(pgid: i32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
    unsafe {
        libc::kill(-pgid, sig);
    }
}
