//! Which commit HEAD names: read from `.git`'s files where they are laid out the plain way,
//! else asked of git (a process less after every commit).

use std::path::Path;

use super::Git;

impl Git {
    /// The commit HEAD names, if there is one.
    pub fn head(&self) -> Option<String> {
        if let Some(sha) = self.head_from_files() {
            return Some(sha);
        }
        self.run(&["rev-parse", "--verify", "-q", "HEAD"])
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    }

    /// HEAD read from the repository's files, where they are laid out the plain way: `.git`
    /// (a folder, or a file naming one: a worktree, a submodule) in this folder, its HEAD a
    /// commit or a branch whose loose ref holds one. A process less after every commit. Else
    /// (a folder below the top, packed or reftable refs, an unborn branch, `GIT_DIR` set)
    /// None, and `git rev-parse` answers.
    fn head_from_files(&self) -> Option<String> {
        if std::env::var_os("GIT_DIR").is_some() || std::env::var_os("GIT_COMMON_DIR").is_some() {
            return None;
        }
        let read = |p: &Path| -> Option<String> {
            let text = std::fs::read_to_string(p).ok()?;
            Some(text.trim_end_matches(['\n', '\r']).to_string())
        };
        let dot_git = self.dir.join(".git");
        let git_dir = if dot_git.is_dir() {
            dot_git
        } else {
            self.dir.join(read(&dot_git)?.strip_prefix("gitdir: ")?)
        };
        // A linked worktree has its own HEAD; its branches are the main repository's.
        let common = match read(&git_dir.join("commondir")) {
            Some(c) => git_dir.join(c),
            None => git_dir.clone(),
        };
        let head = read(&git_dir.join("HEAD"))?;
        let sha = match head.strip_prefix("ref: ") {
            Some(branch) => {
                let name = branch.strip_prefix("refs/heads/")?;
                if name.split('/').any(|c| c.is_empty() || c.starts_with('.')) {
                    return None;
                }
                read(&common.join(branch))?
            }
            None => head,
        };
        let hex = sha
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        (hex && matches!(sha.len(), 40 | 64)).then_some(sha)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{commit, repo};
    use super::*;

    #[test]
    fn head_is_read_from_the_files_where_they_are_plain_and_asked_of_git_elsewhere() {
        let (d, g) = repo();
        let rev_parse = |g: &Git| g.run(&["rev-parse", "HEAD"]).unwrap().trim().to_string();
        assert_eq!((g.head_from_files(), g.head()), (None, None), "unborn");
        g.add_paths(&["a.txt"]).unwrap();
        commit(&g);
        let first = rev_parse(&g);
        assert_eq!(g.head_from_files().as_deref(), Some(first.as_str()));
        assert_eq!(g.head().as_deref(), Some(first.as_str()));

        // A linked worktree: its own HEAD, the branch in the main repository.
        let wt = d.path().join("wt");
        g.run(&["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()])
            .unwrap();
        let w = Git::new(&wt);
        std::fs::write(wt.join("b.txt"), "b").unwrap();
        w.add_paths(&["b.txt"]).unwrap();
        commit(&w);
        let side = rev_parse(&w);
        assert_ne!(side, first);
        assert_eq!(w.head_from_files().as_deref(), Some(side.as_str()));
        assert_eq!(g.head_from_files().as_deref(), Some(first.as_str()));

        // Detached.
        g.run(&["checkout", "-q", "--detach", &side]).unwrap();
        assert_eq!(g.head_from_files().as_deref(), Some(side.as_str()));

        // Packed refs: git answers, the same.
        g.run(&["checkout", "-q", "-"]).unwrap();
        g.run(&["pack-refs", "--all"]).unwrap();
        assert!(
            !d.path()
                .join(".git/refs/heads")
                .read_dir()
                .unwrap()
                .any(|e| { e.unwrap().file_name() != "side" })
        );
        assert_eq!(g.head_from_files(), None);
        assert_eq!(g.head().as_deref(), Some(first.as_str()));

        // A folder below the top: git answers.
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let sub = Git::new(d.path().join("sub"));
        assert_eq!(sub.head_from_files(), None);
        assert_eq!(sub.head().as_deref(), Some(first.as_str()));
    }
}
