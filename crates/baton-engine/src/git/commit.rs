//! Committing the staged work with a story's own files in one process.

use super::{Git, said};
use crate::error::{Error, Result};

impl Git {
    /// Commit what is staged and `paths` as the work tree has them (changed or deleted), in
    /// one process: `git commit --include`. Give it paths the index knows: git before 2.45
    /// leaves out an untracked one without a word. Since 2.45 git refuses one before anything
    /// runs (exit 128); then (asked of `ls-files`, not read from git's message, which may be
    /// translated) the paths are added and committed in two.
    pub fn commit_including(&self, message: &str, paths: &[&str]) -> Result<String> {
        if paths.is_empty() {
            return self.commit(message);
        }
        let mut args = vec![
            "--literal-pathspecs",
            "commit",
            "-q",
            "-m",
            message,
            "--include",
            "--",
        ];
        args.extend_from_slice(paths);
        let o = self.raw(&args)?;
        let mut known = vec!["--literal-pathspecs", "ls-files", "--error-unmatch", "--"];
        known.extend_from_slice(paths);
        if o.status.code() == Some(128) && !self.ok(&known) {
            self.add_paths(paths)?;
            return self.commit(message);
        }
        if !o.status.success() {
            return Err(Error::git("git commit", Some(self.dir.clone()), said(&o)));
        }
        Ok(self.head().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{commit, repo};

    #[test]
    fn a_commit_includes_the_paths_given_known_or_new_and_a_refusing_hook_runs_once() {
        let (d, g) = repo();
        let w = |p: &str, t: &str| std::fs::write(d.path().join(p), t).unwrap();
        w("b.txt", "b");
        g.add_paths(&["a.txt", "b.txt"]).unwrap();
        commit(&g);
        for (k, v) in [("user.name", "t"), ("user.email", "t@t")] {
            g.run(&["config", k, v]).unwrap();
        }
        // Staged before, changed, deleted; and, where git refuses an untracked path (2.45
        // on; older gits leave it out, which is why callers add such paths first), a new one
        // the fallback adds.
        let version = g.run(&["version"]).unwrap();
        let refuses_untracked = version
            .split_whitespace()
            .nth(2)
            .and_then(|v| {
                let mut n = v.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
                Some((n.next()?, n.next()?))
            })
            .is_some_and(|v| v >= (2, 45));
        w("c.txt", "c");
        g.add_paths(&["c.txt"]).unwrap();
        w("a.txt", "a2");
        std::fs::remove_file(d.path().join("b.txt")).unwrap();
        w("story.md", "new story");
        w("left.txt", "not given");
        let mut paths = vec!["a.txt", "b.txt"];
        if refuses_untracked {
            paths.push("story.md");
        } else {
            eprintln!(
                "{}: the fallback for an untracked path is not checked",
                version.trim()
            );
        }
        let sha = g.commit_including("x", &paths).unwrap();
        assert_eq!(g.head().as_deref(), Some(sha.as_str()));
        let files = g
            .run(&["show", "--name-status", "--format=", "HEAD"])
            .unwrap();
        let mut want = String::from("M\ta.txt\nD\tb.txt\nA\tc.txt\n");
        if refuses_untracked {
            want.push_str("A\tstory.md\n");
        }
        assert_eq!(files, want);
        // A known path only: one process; a hook that refuses runs once and the error says so.
        let hook = d.path().join(".git/hooks/pre-commit");
        std::fs::write(
            &hook,
            format!(
                "#!/bin/sh\necho ran >> '{}/hook-runs'\nexit 1\n",
                d.path().display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        w("a.txt", "a3");
        let e = g.commit_including("y", &["a.txt"]).unwrap_err();
        assert!(
            matches!(&e, crate::Error::Git { step, dir: Some(_), .. } if step == "git commit"),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("git commit failed in "), "{e}");
        let runs = std::fs::read_to_string(d.path().join("hook-runs")).unwrap();
        assert_eq!(runs, "ran\n");
        assert_eq!(g.head().as_deref(), Some(sha.as_str()));
        // Refused with 128 for another reason (signing fails), every path known: not tried
        // again as add + commit (the signing program runs once).
        std::fs::remove_file(&hook).unwrap();
        let sign = d.path().join("sign");
        std::fs::write(
            &sign,
            format!(
                "#!/bin/sh\necho ran >> '{}/sign-runs'\nexit 1\n",
                d.path().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&sign, std::fs::Permissions::from_mode(0o755)).unwrap();
        g.run(&["config", "commit.gpgsign", "true"]).unwrap();
        g.run(&["config", "gpg.program", sign.to_str().unwrap()])
            .unwrap();
        let e = g.commit_including("z", &["a.txt"]).unwrap_err().to_string();
        assert!(e.contains("git commit failed"), "{e}");
        let runs = std::fs::read_to_string(d.path().join("sign-runs")).unwrap();
        assert_eq!(runs, "ran\n");
        assert_eq!(g.head().as_deref(), Some(sha.as_str()));
    }
}
