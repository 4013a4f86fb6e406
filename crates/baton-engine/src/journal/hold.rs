//! Who runs a run: the baton holding its `run.lock` (and its pid, for `baton stop`), and
//! what a killed baton left behind (agents still running, writes cut short).

use std::time::Duration;

use super::Journal;
use crate::error::{Error, Result};
use baton_core::fs;

impl Journal {
    /// Hold this run for as long as the returned lock lives: the baton running it (started
    /// or resumed) holds `<run>/run.lock`, so a second baton resuming it at the same time is
    /// refused instead of repeating its calls and commits. A killed holder's lock goes with
    /// its process. `None` for a dry run's journal (no run on disk).
    pub fn hold(&self) -> Result<Option<std::fs::File>> {
        if !self.durable {
            return Ok(None);
        }
        let id = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let id = id.unwrap_or_default();
        match fs::try_lock_for(&self.dir.join("run.lock"), Duration::from_secs(3))? {
            Some(f) => {
                // Who holds it, for `baton stop` (a stale number is harmless: only read while
                // the lock is held).
                use std::io::Write;
                let _ = f
                    .set_len(0)
                    .and_then(|_| (&f).write_all(std::process::id().to_string().as_bytes()));
                Ok(Some(f))
            }
            None => Err(Error::RunHeld { id }),
        }
    }

    /// Whether a baton is running this run now.
    pub fn is_held(&self) -> bool {
        fs::is_locked(&self.dir.join("run.lock"))
    }

    /// The process id of the baton running this run now, if one is.
    pub fn holder(&self) -> Option<i32> {
        let pid = std::fs::read_to_string(self.dir.join("run.lock")).ok()?;
        let pid = pid.trim().parse().ok()?;
        self.is_held().then_some(pid)
    }

    /// The agents a killed baton of this run left running (none while a baton holds it).
    pub fn orphans(&self) -> Vec<baton_agent::Orphan> {
        if self.is_held() {
            return Vec::new();
        }
        baton_agent::orphans(&self.dir.join("logs"))
    }

    /// Before a resumed run calls agents again, what a killed baton left of this run, each
    /// with a note on stderr: its agents still running (their own process groups outlive
    /// it) are stopped, and the temp files of its writes cut short (prompts, outputs) in the
    /// run's folder are removed.
    pub fn clean_up_after_a_killed_baton(&self) {
        for note in baton_agent::stop_orphans(&self.dir.join("logs")) {
            baton_core::notice::note(note);
        }
        let here = std::env::current_dir().unwrap_or_default();
        fs::clear_cut_short_writes(&self.dir, &here);
    }
}
