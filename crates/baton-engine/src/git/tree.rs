//! What a run's own worktree needs of git: blobs of the user's uncommitted files, a worktree
//! on a branch that may already hold the run's commits, and the fast-forward that lands it.

use std::path::Path;

use super::{Git, said};
use crate::error::{Error, Result};

impl Git {
    /// Write each file's bytes (no filters: the exact bytes) into the object database; the
    /// blob ids, in order. One process for them all.
    pub fn write_blobs(&self, paths: &[&str]) -> Result<Vec<String>> {
        if paths.is_empty() {
            return Ok(vec![]);
        }
        let input = paths.join("\n") + "\n";
        let o = self.spawn_with(
            &["hash-object", "-w", "--no-filters", "--stdin-paths"],
            Some(input.as_bytes()),
        )?;
        if !o.status.success() {
            return Err(Error::git(
                "git hash-object",
                Some(self.dir.clone()),
                said(&o),
            ));
        }
        let ids: Vec<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        if ids.len() != paths.len() {
            return Err(Error::git(
                "git hash-object",
                Some(self.dir.clone()),
                format!("{} ids for {} files", ids.len(), paths.len()),
            ));
        }
        Ok(ids)
    }

    /// The blob id a file's bytes would have (nothing written).
    pub fn blob_id(&self, path: &str) -> Option<String> {
        let o = self
            .raw(&["hash-object", "--no-filters", "--", path])
            .ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    }

    /// A blob's bytes.
    pub fn blob(&self, id: &str) -> Result<Vec<u8>> {
        let o = self.raw(&["cat-file", "blob", id])?;
        if !o.status.success() {
            return Err(Error::git(
                format!("git cat-file blob {id}"),
                Some(self.dir.clone()),
                said(&o),
            ));
        }
        Ok(o.stdout)
    }

    /// Whether `refs/heads/<branch>` exists.
    pub fn has_branch(&self, branch: &str) -> bool {
        self.ok(&[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}"),
        ])
    }

    /// A worktree at `path` on `branch`: the branch as it is when it exists (it may hold a
    /// run's commits), else made at `start`.
    pub fn worktree_attach(&self, path: &Path, branch: &str, start: &str) -> Result<()> {
        let p = path.display().to_string();
        // A worktree whose folder was deleted is still registered until pruned.
        self.run(&["worktree", "prune"])?;
        if self.has_branch(branch) {
            self.run(&["worktree", "add", "-q", "-f", &p, branch])?;
        } else {
            self.run(&["worktree", "add", "-q", "-f", "-b", branch, &p, start])?;
        }
        Ok(())
    }

    /// Paths that differ between two commits, as git prints them (renames as delete + add).
    pub fn changed_between(&self, from: &str, to: &str) -> Result<Vec<String>> {
        let out = self.run(&["diff", "--name-only", "--no-renames", "-z", from, to])?;
        Ok(out
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// `git merge --ff-only` to `to`: `Ok(Err(git's message))` when git refuses.
    pub fn fast_forward(&self, to: &str) -> Result<std::result::Result<(), String>> {
        let o = self.raw(&["merge", "--ff-only", "-q", to])?;
        Ok(if o.status.success() {
            Ok(())
        } else {
            Err(said(&o))
        })
    }

    /// Whether `ancestor` is an ancestor of (or the same commit as) `of`.
    pub fn is_ancestor(&self, ancestor: &str, of: &str) -> bool {
        self.ok(&["merge-base", "--is-ancestor", ancestor, of])
    }
}
