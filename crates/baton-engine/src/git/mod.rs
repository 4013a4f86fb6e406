//! Git, through the `git` CLI (it respects the user's hooks, signing and config). Arguments go
//! to git as argv, never through a shell.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::error::{Error, Result};

mod commit;
mod head;
mod stash;
mod tree;

/// Paths an agent must never get committed: environment files and private keys.
pub fn looks_secret(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    lower == ".env"
        || (lower.starts_with(".env.")
            && !lower.ends_with(".example")
            && !lower.ends_with(".sample")
            && !lower.ends_with(".template"))
        || lower.ends_with(".pem")
        || lower.ends_with(".key")
        || lower.ends_with(".p12")
        || lower.ends_with(".pfx")
        || matches!(
            lower.as_str(),
            "id_rsa"
                | "id_ed25519"
                | "id_ecdsa"
                | "id_dsa"
                | ".npmrc"
                | ".pypirc"
                | "credentials.json"
                | ".netrc"
        )
}

/// The lock file named by git's "Unable to create '…/index.lock': File exists." message.
fn stale_lock(stderr: &str) -> Option<PathBuf> {
    let start = stderr.find("Unable to create '")? + "Unable to create '".len();
    let rest = &stderr[start..];
    let end = rest.find("': File exists")?;
    let path = &rest[..end];
    path.ends_with(".lock").then(|| PathBuf::from(path))
}

/// A live git process (not a zombie) whose working directory is inside `root`.
fn git_running_in(root: &Path) -> Option<u32> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let proc_dir = e.path();
        let is_git =
            std::fs::read_to_string(proc_dir.join("comm")).is_ok_and(|c| c.trim() == "git");
        let zombie = std::fs::read_to_string(proc_dir.join("stat")).is_ok_and(|st| {
            st.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        });
        if is_git
            && !zombie
            && std::fs::read_link(proc_dir.join("cwd")).is_ok_and(|cwd| cwd.starts_with(&root))
        {
            return Some(pid);
        }
    }
    None
}

/// The `git` baton runs: the first on PATH, found once (a spawn of a bare name tries an exec
/// in every folder of PATH before it); the bare name when none is found (the spawn then says
/// so) or PATH names it by a relative folder.
fn program() -> &'static Path {
    static GIT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    GIT.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|d| d.join("git"))
            .find(|g| {
                std::fs::metadata(g)
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
            .filter(|g| g.is_absolute())
            .unwrap_or_else(|| PathBuf::from("git"))
    })
}

/// What a failed git said: its stderr, else its stdout (`commit` tells "nothing to commit"
/// there).
fn said(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr);
    let text = if err.trim().is_empty() {
        String::from_utf8_lossy(&o.stdout)
    } else {
        err
    };
    text.trim().to_string()
}

/// How a cherry-pick went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CherryPick {
    Applied,
    /// The files that conflicted (or git's message); nothing is left half-applied.
    Conflict(String),
}

#[derive(Debug, Clone)]
pub struct Git {
    dir: PathBuf,
}

impl Git {
    pub fn new(dir: impl Into<PathBuf>) -> Git {
        Git { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Run git. A `.git/index.lock` left by a git process that was killed (with baton, by a
    /// crash) would refuse every later command: when no git process is alive in this
    /// repository it is removed, with a note, and the command runs again; when one is, the
    /// error says which.
    fn raw(&self, args: &[&str]) -> Result<Output> {
        let o = self.spawn(args)?;
        if o.status.success() {
            return Ok(o);
        }
        let Some(lock) = stale_lock(&String::from_utf8_lossy(&o.stderr)) else {
            return Ok(o);
        };
        let root = lock
            .to_string_lossy()
            .split("/.git/")
            .next()
            .map(PathBuf::from)
            .unwrap_or_else(|| self.dir.clone());
        // A live git (one a killed baton left running, the user's own) usually ends soon:
        // wait for it a little before giving up.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while let Some(pid) = git_running_in(&root) {
            if !lock.exists() {
                return self.spawn(args);
            }
            if std::time::Instant::now() >= deadline {
                return Err(Error::GitBusy { root, lock, pid });
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        if !lock.exists() {
            return self.spawn(args);
        }
        std::fs::remove_file(&lock).map_err(|e| Error::io(&lock, e))?;
        baton_core::notice::note(format!(
            "removed {}, left by a git command that was killed (no git process runs there)",
            lock.display()
        ));
        self.spawn(args)
    }

    fn spawn(&self, args: &[&str]) -> Result<Output> {
        self.spawn_with(args, None)
    }

    /// [`Git::spawn_once`], once more if git died of the signal that interrupted baton: sent
    /// to baton's group while git was being started, it killed git before it ran (baton then
    /// stops at its next step, see run::interrupt). A git killed by a signal of its own (sent
    /// to it alone) is not run again: it may have done part of its work.
    fn spawn_with(&self, args: &[&str], input: Option<&[u8]>) -> Result<Output> {
        let o = self.spawn_once(args, input)?;
        match (o.status.signal(), crate::interrupt::received()) {
            (Some(died), Some(interrupted)) if died == interrupted => self.spawn_once(args, input),
            _ => Ok(o),
        }
    }

    /// Run git with `input` on its stdin (path lists go there, not into argv: a story may
    /// touch more files than a command line holds).
    ///
    /// Git runs in a process group of its own: the terminal's Ctrl-C must not cut a git
    /// command half-way (baton stops at its next step instead, see run::interrupt). The
    /// directory is given as `git -C`, not as the child's working directory, and there is no
    /// pre-exec hook: so std spawns git with `posix_spawn` (a static binary has no
    /// `posix_spawn_file_actions_addchdir_np` for std to find, and would fork; a fork costs
    /// ~0.7 ms more a command here). glibc's posix_spawn blocks every signal in the child
    /// until it has its own group and is about to exec: a signal sent to baton's group before
    /// then kills the child before git starts, with nothing done, and [`Git::spawn_with`]
    /// runs it again.
    fn spawn_once(&self, args: &[&str], input: Option<&[u8]>) -> Result<Output> {
        use std::io::Write;
        let cannot = |e: std::io::Error| {
            Error::invalid(format!("cannot run git: {e}"))
                .hint("install git and make sure it is on PATH")
        };
        let mut cmd = Command::new(program());
        cmd.arg("-C")
            .arg(&self.dir)
            .args(args)
            .process_group(0)
            .env("GIT_TERMINAL_PROMPT", "0");
        let Some(input) = input else {
            return cmd.output().map_err(cannot);
        };
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(cannot)?;
        if let Some(mut stdin) = child.stdin.take() {
            // git reads all of it before it writes much: no deadlock on the pipes.
            stdin.write_all(input).map_err(cannot)?;
        }
        child.wait_with_output().map_err(cannot)
    }

    /// Wait (at most `limit`) until no git process works in this repository: a killed baton's
    /// git commands go on in their own process groups, and a resumed run must not race them.
    /// Returns whether the repository is idle.
    pub fn wait_idle(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        while git_running_in(&self.dir).is_some() {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        true
    }

    /// Run git; a failure is an error quoting git's own message.
    pub fn run(&self, args: &[&str]) -> Result<String> {
        let o = self.raw(args)?;
        if !o.status.success() {
            return Err(Error::git(
                format!("git {}", args.join(" ")),
                Some(self.dir.clone()),
                said(&o),
            ));
        }
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    }

    /// Whether git succeeds (for questions such as "is this a repository").
    pub fn ok(&self, args: &[&str]) -> bool {
        self.raw(args).is_ok_and(|o| o.status.success())
    }

    pub fn toplevel(&self) -> Result<PathBuf> {
        let o = self.raw(&["rev-parse", "--show-toplevel"])?;
        if o.status.success() {
            return Ok(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
        }
        let said = String::from_utf8_lossy(&o.stderr);
        if said.contains("dubious ownership") {
            // git's safe.directory: a repository another user owns is refused, not absent.
            let at = said
                .split("repository at '")
                .nth(1)
                .and_then(|r| r.split('\'').next())
                .map_or_else(|| self.dir.display().to_string(), str::to_string);
            return Err(Error::invalid(format!(
                "the repository at {at} is owned by another user: git refuses to work in it"
            ))
            .hint(format!("run baton as the repository's owner, or, if you trust it: git config --global --add safe.directory {at}")));
        }
        Err(Error::invalid(format!(
            "{} is not inside a git repository",
            self.dir.display()
        ))
        .hint("run baton from your project's repository (git init first if it has none)"))
    }

    pub fn branch(&self) -> Result<String> {
        Ok(self
            .run(&["rev-parse", "--abbrev-ref", "HEAD"])?
            .trim()
            .to_string())
    }

    /// Paths staged for the next commit.
    pub fn staged(&self) -> Result<Vec<String>> {
        let out = self.run(&["diff", "--cached", "--name-only", "-z"])?;
        Ok(out
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// `git diff --cached --stat` summary line, e.g. "3 files changed, 45 insertions(+)".
    pub fn staged_stat(&self) -> Result<String> {
        let out = self.run(&["diff", "--cached", "--shortstat"])?;
        Ok(out.trim().to_string())
    }

    /// Paths changed but not staged, and untracked files (not ignored).
    pub fn unstaged(&self) -> Result<Vec<String>> {
        let out = self.run(&["status", "--porcelain=v1", "-z", "--untracked-files=all"])?;
        Ok(out
            .split('\0')
            .filter(|e| e.len() > 3 && e.as_bytes()[1] != b' ')
            .map(|e| e[3..].to_string())
            .collect())
    }

    /// Every path that differs from HEAD in the work tree or the index: modified, deleted,
    /// renamed (both names), new untracked files (ignored ones are not listed), sorted.
    pub fn changes(&self) -> Result<Vec<String>> {
        let mut paths: Vec<String> = self.status()?.into_iter().map(|(_, p)| p).collect();
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// `git status` as (XY, path) pairs; a rename's or copy's source is listed too, with the
    /// same XY.
    pub(crate) fn status(&self) -> Result<Vec<([u8; 2], String)>> {
        let out = self.run(&["status", "--porcelain=v1", "-z", "--untracked-files=all"])?;
        let mut entries = Vec::new();
        let mut fields = out.split('\0').filter(|s| !s.is_empty());
        while let Some(e) = fields.next() {
            if e.len() < 4 {
                continue;
            }
            let xy = [e.as_bytes()[0], e.as_bytes()[1]];
            entries.push((xy, e[3..].to_string()));
            // A rename or copy in the index: the next field is its source, with no status.
            if matches!(xy[0], b'R' | b'C')
                && let Some(from) = fields.next()
            {
                entries.push((xy, from.to_string()));
            }
        }
        Ok(entries)
    }

    /// Stage `paths` as they are in the work tree (new, changed or deleted), taken literally
    /// (no globs). Those whose work-tree state is staged already are left as they are.
    pub fn stage(&self, paths: &[String]) -> Result<()> {
        self.stage_among(&self.status()?, paths)
    }

    /// [`Git::stage`], with the `git status` the caller has just read (one status less).
    pub(crate) fn stage_among(&self, status: &[([u8; 2], String)], paths: &[String]) -> Result<()> {
        let differs: std::collections::BTreeSet<&String> = status
            .iter()
            .filter(|(xy, _)| xy[1] != b' ')
            .map(|(_, p)| p)
            .collect();
        let paths: Vec<String> = paths
            .iter()
            .filter(|p| differs.contains(p))
            .cloned()
            .collect();
        self.add_literally(&paths)
    }

    /// Stage `content` as `path`'s, whatever the work tree holds: the blob is written by
    /// `hash-object` (the path's filters apply), then put in the index with the work-tree
    /// file's mode (executable or not).
    pub fn stage_content(&self, path: &str, content: &[u8]) -> Result<()> {
        let as_path = format!("--path={path}");
        let o = self.spawn_with(&["hash-object", "-w", "--stdin", &as_path], Some(content))?;
        if !o.status.success() {
            return Err(Error::git(
                format!("git hash-object of {path}"),
                Some(self.dir.clone()),
                said(&o),
            ));
        }
        let sha = String::from_utf8_lossy(&o.stdout).trim().to_string();
        let executable = {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(self.dir.join(path))
                .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
        };
        let mode = if executable { "100755" } else { "100644" };
        let info = format!("{mode},{sha},{path}");
        self.run(&["update-index", "--add", "--cacheinfo", &info])
            .map(|_| ())
    }

    /// Whether git ignores `path` (`.gitignore`, `info/exclude`, the global excludes).
    pub fn is_ignored(&self, path: &str) -> bool {
        self.ok(&["check-ignore", "-q", "--", path])
    }

    /// `git add -A` of the whole work tree but the `excluded` paths (taken literally, from the
    /// top; a folder with all it holds) and the files matching `excluded_globs`: what
    /// `git status` would list minus those, staged in one process.
    pub fn add_all_except(&self, excluded: &[&str], excluded_globs: &[&str]) -> Result<()> {
        let mut specs = String::from(":/\0");
        for p in excluded {
            specs.push_str(":(top,exclude,literal)");
            specs.push_str(p);
            specs.push('\0');
        }
        for g in excluded_globs {
            specs.push_str(":(top,exclude,glob)");
            specs.push_str(g);
            specs.push('\0');
        }
        self.add_pathspecs(&[], specs.as_bytes())
    }

    /// `git add -A` of `paths`, taken literally, given on stdin.
    fn add_literally(&self, paths: &[String]) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        self.add_pathspecs(&["--literal-pathspecs"], nul_list(paths).as_bytes())
    }

    /// `git [options] add -A` of the NUL-separated pathspecs `specs`, given on stdin.
    fn add_pathspecs(&self, options: &[&str], specs: &[u8]) -> Result<()> {
        let mut args = options.to_vec();
        args.extend(["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"]);
        let o = self.spawn_with(&args, Some(specs))?;
        if !o.status.success() {
            return Err(Error::git(
                "git add",
                Some(self.dir.clone()),
                String::from_utf8_lossy(&o.stderr).trim(),
            ));
        }
        Ok(())
    }

    pub fn add_paths(&self, paths: &[&str]) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let mut args = vec!["add", "--"];
        args.extend_from_slice(paths);
        self.run(&args).map(|_| ())
    }

    /// Commit what is staged; returns the new commit's hash.
    pub fn commit(&self, message: &str) -> Result<String> {
        self.run(&["commit", "-q", "-m", message])?;
        Ok(self.head().unwrap_or_default())
    }

    /// The commit on the current branch carrying every trailer `key: value` given, if any.
    pub fn find_commit(&self, trailers: &[(&str, &str)]) -> Result<Option<String>> {
        if self.head().is_none() {
            return Ok(None);
        }
        let log = self.run(&["log", "--format=%H%x00%(trailers:only,unfold)%x1e"])?;
        for rec in log.split('\u{1e}') {
            let mut parts = rec.trim_start_matches('\n').splitn(2, '\0');
            let (Some(sha), Some(body)) = (parts.next(), parts.next()) else {
                continue;
            };
            let has = |k: &str, v: &str| {
                body.lines().any(|l| {
                    l.split_once(':')
                        .is_some_and(|(a, b)| a.trim().eq_ignore_ascii_case(k) && b.trim() == v)
                })
            };
            if trailers.iter().all(|(k, v)| has(k, v)) {
                return Ok(Some(sha.trim().to_string()));
            }
        }
        Ok(None)
    }
}

/// Paths as git's `--pathspec-file-nul` reads them.
fn nul_list(paths: &[String]) -> String {
    let mut s = String::new();
    for p in paths {
        s.push_str(p);
        s.push('\0');
    }
    s
}

impl Git {
    /// Tracked files changed but not committed (staged or not); untracked files do not count.
    pub fn tracked_changes(&self) -> Result<Vec<String>> {
        let out = self.run(&["status", "--porcelain=v1", "-z", "--untracked-files=no"])?;
        Ok(out
            .split('\0')
            .filter(|e| e.len() > 3)
            .map(|e| e[3..].to_string())
            .collect())
    }

    /// A new worktree at `path` on branch `branch`, (re)started from the current HEAD.
    pub fn worktree_add(&self, path: &Path, branch: &str) -> Result<()> {
        let p = path.display().to_string();
        // A worktree whose folder was deleted is still registered until pruned.
        self.run(&["worktree", "prune"])?;
        self.run(&["worktree", "add", "-q", "-f", "-B", branch, &p, "HEAD"])
            .map(|_| ())
    }

    /// Remove the worktree (its uncommitted leftovers too) and, if given, its branch.
    pub fn worktree_remove(&self, path: &Path, branch: Option<&str>) -> Result<()> {
        let p = path.display().to_string();
        if path.exists() {
            self.run(&["worktree", "remove", "--force", &p])?;
        }
        self.run(&["worktree", "prune"])?;
        if let Some(b) = branch
            && self.ok(&["rev-parse", "--verify", "-q", &format!("refs/heads/{b}")])
        {
            self.run(&["branch", "-q", "-D", b])?;
        }
        Ok(())
    }

    /// Apply commit `sha` to the index and tree without committing. On a conflict the
    /// attempt is undone (`reset --merge`) and git's message comes back as the error text.
    pub fn cherry_pick_no_commit(&self, sha: &str) -> Result<CherryPick> {
        let o = self.raw(&["cherry-pick", "--no-commit", sha])?;
        if o.status.success() {
            return Ok(CherryPick::Applied);
        }
        let conflicted = self
            .run(&["diff", "--name-only", "--diff-filter=U"])
            .unwrap_or_default();
        let mut why: Vec<String> = conflicted.lines().map(str::to_string).collect();
        if why.is_empty() {
            let msg = String::from_utf8_lossy(&o.stderr);
            why.push(
                msg.lines()
                    .next()
                    .unwrap_or("cherry-pick failed")
                    .to_string(),
            );
        }
        self.run(&["reset", "-q", "--merge"])?;
        Ok(CherryPick::Conflict(why.join(", ")))
    }

    /// A file's contents at a commit (`None` when the commit does not have it).
    pub fn show_file(&self, sha: &str, path: &str) -> Option<Vec<u8>> {
        let o = self.raw(&["show", &format!("{sha}:{path}")]).ok()?;
        o.status.success().then_some(o.stdout)
    }

    /// Unstage paths (they stay in the tree as they are).
    pub fn unstage(&self, paths: &[&str]) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        // Before the first commit there is no HEAD to reset to: out of the index instead.
        let mut args = match self.head() {
            Some(_) => vec!["reset", "-q", "--"],
            None => vec!["rm", "-q", "--cached", "--"],
        };
        args.extend_from_slice(paths);
        self.run(&args).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn repo() -> (tempfile::TempDir, Git) {
        let d = tempfile::tempdir().unwrap();
        let g = Git::new(d.path());
        g.run(&["init", "-q"]).unwrap();
        std::fs::write(d.path().join("a.txt"), "a").unwrap();
        (d, g)
    }

    #[test]
    fn add_all_except_stages_the_tree_but_the_excluded() {
        let (d, g) = repo();
        // Each file's content is its name and a version: no two alike (no rename detected).
        let w = |p: &str, v: u8| {
            let f = d.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, format!("{p} {v}")).unwrap();
        };
        for f in ["gone.txt", "user.txt", "kept.txt"] {
            w(f, 1);
        }
        g.run(&["add", "-A"]).unwrap();
        commit(&g);
        std::fs::remove_file(d.path().join("gone.txt")).unwrap();
        for f in [
            "kept.txt",
            "user.txt",
            "new dir/n.txt",
            ".baton/runs/x",
            "src/.baton-tmp-1",
            "odd*[name].txt",
        ] {
            w(f, 2);
        }
        g.add_all_except(
            &[".baton", "user.txt", "odd*[name].txt"],
            &["**/.baton-tmp-*"],
        )
        .unwrap();
        assert_eq!(
            g.staged().unwrap(),
            ["gone.txt", "kept.txt", "new dir/n.txt"]
        );
        // An ignored folder needs no exclude; named in one, git fails the add (exit 1).
        g.run(&["reset", "-q"]).unwrap();
        std::fs::write(d.path().join(".git/info/exclude"), ".baton/\n").unwrap();
        assert!(g.is_ignored(".baton") && !g.is_ignored("kept.txt"));
        assert!(g.add_all_except(&[".baton"], &[]).is_err());
    }

    pub(super) fn commit(g: &Git) {
        g.run(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            "a",
        ])
        .unwrap();
    }

    #[test]
    fn a_stale_index_lock_is_removed_and_the_command_goes_on() {
        let (d, g) = repo();
        let lock = d.path().join(".git/index.lock");
        std::fs::write(&lock, "").unwrap();
        g.add_paths(&["a.txt"]).unwrap();
        assert!(!lock.exists());
        assert_eq!(g.staged().unwrap(), ["a.txt"]);
    }

    #[test]
    fn an_index_lock_of_a_live_git_is_left_alone_and_named() {
        let (d, g) = repo();
        let lock = d.path().join(".git/index.lock");
        std::fs::write(&lock, "").unwrap();
        // A process named git working in the repository, as a user's own `git rebase` is.
        let fake = d.path().join("bin/git");
        std::fs::create_dir_all(fake.parent().unwrap()).unwrap();
        std::fs::copy("/bin/sleep", &fake).unwrap();
        let mut busy = std::process::Command::new(&fake)
            .arg("30")
            .current_dir(d.path())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let e = g.add_paths(&["a.txt"]).unwrap_err().to_string();
        let _ = busy.kill();
        let _ = busy.wait();
        assert!(
            e.contains("git is busy") && e.contains(&busy.id().to_string()),
            "{e}"
        );
        assert!(lock.exists(), "a live git's lock is not ours to remove");
    }

    #[test]
    fn staging_takes_new_changed_and_deleted_paths_literally() {
        let (d, g) = repo();
        std::fs::write(d.path().join("b.txt"), "b").unwrap();
        g.run(&["add", "a.txt", "b.txt"]).unwrap();
        commit(&g);
        std::fs::write(d.path().join("a.txt"), "changed").unwrap();
        std::fs::remove_file(d.path().join("b.txt")).unwrap();
        std::fs::write(d.path().join("*.txt"), "a star").unwrap();
        std::fs::write(d.path().join("c.txt"), "not this one").unwrap();
        let paths: Vec<String> = ["a.txt", "b.txt", "*.txt"].map(String::from).to_vec();
        g.stage(&paths).unwrap();
        assert_eq!(g.staged().unwrap(), ["*.txt", "a.txt", "b.txt"]);
        g.run(&["mv", "a.txt", "moved.txt"]).unwrap();
        let all = g.changes().unwrap();
        assert!(
            all.contains(&"moved.txt".to_string()) && all.contains(&"a.txt".to_string()),
            "{all:?}"
        );
    }

    #[test]
    fn the_lock_path_is_read_from_gits_message() {
        let m = "fatal: Unable to create '/p/.git/index.lock': File exists.\n\nAnother git process seems to be running";
        assert_eq!(stale_lock(m), Some(PathBuf::from("/p/.git/index.lock")));
        assert_eq!(stale_lock("fatal: not a git repository"), None);
    }

    #[test]
    fn secrets() {
        for p in [
            ".env",
            "config/.env.local",
            "deploy/key.pem",
            "id_rsa",
            "a/b/server.key",
            ".npmrc",
        ] {
            assert!(looks_secret(p), "{p}");
        }
        for p in [".env.example", "src/env.rs", "docs/keys.md", "keyboard.rs"] {
            assert!(!looks_secret(p), "{p}");
        }
    }
}
