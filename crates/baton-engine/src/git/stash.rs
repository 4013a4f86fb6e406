//! Setting work aside in named stashes, once each: a failed story's changes, and the partial
//! edits of an agent call that was cut off before it finished.

use super::{Git, nul_list};
use crate::error::{Error, Result};

impl Git {
    /// Set aside exactly `paths` (staged, unstaged or untracked; taken literally) in a stash
    /// named `message`: a failed story's edits leave the tree without being lost, and nothing
    /// else is touched. Returns whether anything was stashed.
    pub fn stash_paths(&self, message: &str, paths: &[String]) -> Result<bool> {
        // Once only: a run killed after its stash and resumed must not stash again (the
        // message names the run and the story).
        if self.stash_named(message)?.is_some() {
            return Ok(true);
        }
        if paths.is_empty() {
            return Ok(false);
        }
        // Unstaged first: a deletion or a new file in the index alone would not match its
        // path; the stash then holds every change as a work-tree change.
        if self.head().is_some() {
            let reset = [
                "--literal-pathspecs",
                "reset",
                "-q",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ];
            let o = self.spawn_with(&reset, Some(nul_list(paths).as_bytes()))?;
            if !o.status.success() {
                return Err(Error::git(
                    "git reset before the stash",
                    None,
                    String::from_utf8_lossy(&o.stderr).trim(),
                ));
            }
        }
        Ok(self.push_named(message, paths)?.is_some())
    }

    /// `git stash push --include-untracked` of exactly `paths` (taken literally) under
    /// `message`; the new stash, or `None` when there was nothing to stash.
    fn push_named(&self, message: &str, paths: &[String]) -> Result<Option<String>> {
        let args = [
            "--literal-pathspecs",
            "stash",
            "push",
            "--include-untracked",
            "-q",
            "-m",
            message,
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ];
        let o = self.spawn_with(&args, Some(nul_list(paths).as_bytes()))?;
        let msg = String::from_utf8_lossy(&o.stderr);
        // Nothing to stash is not an error.
        if !o.status.success() && !msg.contains("No local changes") && !msg.trim().is_empty() {
            return Err(Error::git("git stash", None, msg.trim()));
        }
        self.stash_named(message)
    }

    /// Paths whose work-tree state differs from the index: unstaged changes and deletions,
    /// untracked files (ignored ones are not listed).
    pub fn unstaged_paths(&self) -> Result<Vec<String>> {
        let mut paths: Vec<String> = self
            .status()?
            .into_iter()
            .filter(|(xy, _)| xy[1] != b' ')
            .map(|(_, p)| p)
            .collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Set aside the unstaged state of `paths` (changes, deletions, untracked files; taken
    /// literally) in a stash named `message`, once: the work tree goes back to what is staged.
    /// A stash of that name already there means it was done (a kill after the stash); putting
    /// the staged state back is then done again, which changes nothing when it was finished.
    /// Returns whether the stash exists now.
    pub fn stash_unstaged(&self, message: &str, paths: &[String]) -> Result<bool> {
        let sha = match self.stash_named(message)? {
            Some(sha) => sha,
            None if paths.is_empty() => return Ok(false),
            // Not `--keep-index`: with a pathspec naming an untracked file it fails after the
            // stash is made, with the staged work gone from the tree. The paths go back to
            // HEAD here, and their staged state is restored from the stash below.
            None => match self.push_named(message, paths)? {
                Some(sha) => sha,
                None => return Ok(false),
            },
        };
        // What was staged among the stashed paths: the stash's index commit has it.
        let names = |from: &str, to: &str| -> Result<std::collections::BTreeSet<String>> {
            let out = self.run(&["diff", "--name-only", "--no-renames", "-z", from, to])?;
            Ok(out
                .split('\0')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect())
        };
        let (head, index) = (format!("{sha}^1"), format!("{sha}^2"));
        let stashed = names(&head, &sha)?;
        let staged: Vec<String> = names(&head, &index)?
            .into_iter()
            .filter(|p| stashed.contains(p))
            .collect();
        if !staged.is_empty() {
            let source = format!("--source={index}");
            let args = [
                "--literal-pathspecs",
                "restore",
                "-q",
                &source,
                "--staged",
                "--worktree",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ];
            let o = self.spawn_with(&args, Some(nul_list(&staged).as_bytes()))?;
            if !o.status.success() {
                return Err(Error::git(
                    "git restore of the staged work after the stash",
                    None,
                    String::from_utf8_lossy(&o.stderr).trim(),
                )
                .hint(format!("the staged work is in the stash \"{message}\" (git stash list); resume the run again")));
            }
        }
        Ok(true)
    }

    /// Stash `message`'s files written into the tree and staged, as the stash holds them (its
    /// changes, deletions and untracked files), whatever the tree holds of them now: done
    /// again, it writes the same (a run killed while doing it does it again). Returns the
    /// paths; `None` when no stash has that name.
    pub fn restore_stash(&self, message: &str) -> Result<Option<Vec<String>>> {
        let Some(sha) = self.stash_named(message)? else {
            return Ok(None);
        };
        let list = |args: &[&str]| -> Result<Vec<String>> {
            Ok(self
                .run(args)?
                .split('\0')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect())
        };
        let head = format!("{sha}^1");
        let changed = list(&["diff", "--name-only", "--no-renames", "-z", &head, &sha])?;
        let (kept, gone): (Vec<String>, Vec<String>) = changed
            .into_iter()
            .partition(|p| self.ok(&["cat-file", "-e", &format!("{sha}:{p}")]));
        let untracked = format!("{sha}^3");
        let mut sources = vec![(sha.clone(), kept)];
        if self.ok(&[
            "rev-parse",
            "-q",
            "--verify",
            &format!("{untracked}^{{commit}}"),
        ]) {
            let files = list(&["ls-tree", "-r", "-z", "--name-only", &untracked])?;
            sources.push((untracked, files));
        }
        for (source, paths) in &sources {
            if paths.is_empty() {
                continue;
            }
            let from = format!("--source={source}");
            let args = [
                "--literal-pathspecs",
                "restore",
                "-q",
                &from,
                "--staged",
                "--worktree",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ];
            let o = self.spawn_with(&args, Some(nul_list(paths).as_bytes()))?;
            if !o.status.success() {
                return Err(Error::git(
                    "git restore from the stash",
                    None,
                    String::from_utf8_lossy(&o.stderr).trim(),
                ));
            }
        }
        if !gone.is_empty() {
            let mut args = vec![
                "--literal-pathspecs",
                "rm",
                "-q",
                "-f",
                "--ignore-unmatch",
                "--",
            ];
            args.extend(gone.iter().map(String::as_str));
            self.run(&args)?;
        }
        Ok(Some(
            sources
                .into_iter()
                .flat_map(|(_, p)| p)
                .chain(gone)
                .collect(),
        ))
    }

    /// Whether a stash named `message` exists.
    pub fn stash_exists(&self, message: &str) -> Result<bool> {
        Ok(self.stash_named(message)?.is_some())
    }

    /// The stash named `message`, if there is one.
    fn stash_named(&self, message: &str) -> Result<Option<String>> {
        let list = self.run(&["stash", "list", "--format=%H%x00%s"])?;
        Ok(list.lines().find_map(|l| {
            let (sha, subject) = l.split_once('\0')?;
            // `On <branch>: <message>` (or `<message>` alone).
            let ours = subject == message || subject.ends_with(&format!(": {message}"));
            ours.then(|| sha.to_string())
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{commit, repo};

    #[test]
    fn a_stash_is_restored_whole_and_restoring_it_again_changes_nothing() {
        let (d, g) = repo();
        std::fs::write(d.path().join("gone.txt"), "old").unwrap();
        g.run(&["add", "a.txt", "gone.txt"]).unwrap();
        commit(&g);
        std::fs::write(d.path().join("a.txt"), "changed").unwrap();
        std::fs::write(d.path().join("new.txt"), "new").unwrap();
        std::fs::remove_file(d.path().join("gone.txt")).unwrap();
        let msg = "baton r1: story 1.3 failed";
        let own: Vec<String> = ["a.txt", "new.txt", "gone.txt"].map(String::from).into();
        assert!(g.stash_paths(msg, &own).unwrap());
        assert!(g.changes().unwrap().is_empty());
        assert_eq!(g.restore_stash("no such stash").unwrap(), None);
        for _ in 0..2 {
            let mut paths = g.restore_stash(msg).unwrap().unwrap();
            paths.sort();
            assert_eq!(paths, ["a.txt", "gone.txt", "new.txt"]);
            let read = |f: &str| std::fs::read_to_string(d.path().join(f)).ok();
            assert_eq!(read("a.txt").as_deref(), Some("changed"));
            assert_eq!(read("new.txt").as_deref(), Some("new"));
            assert_eq!(read("gone.txt"), None);
            assert_eq!(g.staged().unwrap(), ["a.txt", "gone.txt", "new.txt"]);
        }
    }

    #[test]
    fn a_failed_storys_changes_are_stashed_once() {
        let (d, g) = repo();
        g.run(&["add", "a.txt"]).unwrap();
        commit(&g);
        std::fs::write(d.path().join("a.txt"), "changed").unwrap();
        std::fs::write(d.path().join("new.txt"), "new").unwrap();
        std::fs::write(d.path().join("user.txt"), "the user's").unwrap();
        let msg = "baton r1: story 1.3 failed";
        let own = vec!["a.txt".to_string(), "new.txt".to_string()];
        assert_eq!(g.changes().unwrap(), ["a.txt", "new.txt", "user.txt"]);
        assert!(g.stash_paths(msg, &own).unwrap());
        // Only the story's own paths went: the user's file stays.
        assert_eq!(g.changes().unwrap(), ["user.txt"]);
        // Resumed after a kill right after the stash: the same story is not stashed again.
        std::fs::write(d.path().join("late.txt"), "late").unwrap();
        assert!(g.stash_paths(msg, &["late.txt".into()]).unwrap());
        let list = g.run(&["stash", "list"]).unwrap();
        assert_eq!(list.lines().count(), 1, "{list}");
        let stashed = g
            .run(&["show", "--name-only", "--format=", "stash@{0}^3"])
            .unwrap();
        assert_eq!(stashed.trim(), "new.txt");
    }

    #[test]
    fn a_killed_calls_edits_are_stashed_once_and_the_staged_work_stays() {
        let (d, g) = repo();
        std::fs::write(d.path().join("b.txt"), "b").unwrap();
        g.run(&["add", "a.txt", "b.txt"]).unwrap();
        commit(&g);
        // An earlier phase's work, staged; then the killed call's edits on top.
        std::fs::write(d.path().join("a.txt"), "staged work").unwrap();
        g.run(&["add", "a.txt"]).unwrap();
        std::fs::write(d.path().join("a.txt"), "staged work, half an edit").unwrap();
        std::fs::remove_file(d.path().join("b.txt")).unwrap();
        std::fs::write(d.path().join("new.txt"), "half a file").unwrap();
        std::fs::write(d.path().join("user.txt"), "the user's").unwrap();
        let paths = g.unstaged_paths().unwrap();
        assert_eq!(paths, ["a.txt", "b.txt", "new.txt", "user.txt"]);
        let own: Vec<String> = paths.into_iter().filter(|p| p != "user.txt").collect();
        let msg = "baton: partial edits of 1.1 dev attempt 1, run r1";
        assert!(g.stash_unstaged(msg, &own).unwrap());
        let read = |p: &str| std::fs::read_to_string(d.path().join(p)).ok();
        assert_eq!(read("a.txt").as_deref(), Some("staged work"));
        assert_eq!(read("b.txt").as_deref(), Some("b"));
        assert_eq!(read("new.txt"), None);
        assert_eq!(g.staged().unwrap(), ["a.txt"]);
        assert_eq!(g.unstaged_paths().unwrap(), ["user.txt"]);
        // Once: a resume after a kill right after the stash does not stash again.
        std::fs::write(d.path().join("late.txt"), "late").unwrap();
        assert!(g.stash_unstaged(msg, &["late.txt".into()]).unwrap());
        let list = g.run(&["stash", "list", "--format=%s"]).unwrap();
        assert_eq!(list.lines().count(), 1, "{list}");
        // Nothing lost: the stash holds the half edit and the new file.
        let half = g.run(&["show", "stash@{0}:a.txt"]).unwrap();
        assert_eq!(half, "staged work, half an edit");
        let new = g.run(&["show", "stash@{0}^3:new.txt"]).unwrap();
        assert_eq!(new, "half a file");
    }
}
