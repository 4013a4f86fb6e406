//! The run's own worktree: an epic run works in `.baton/worktrees/<run-id>/@run` on the branch
//! `baton/run-<run-id>`, made from the commit the user's checkout was on, so the user can go on
//! editing while it works and a story's commit holds only what its agents wrote.
//!
//! The user's uncommitted files (untracked, changed, deleted: the run's baseline) are
//! **carried** into it as they were — BMAD's create-story leaves story files uncommitted, and
//! the agents must see the checkout the user sees. Their bytes are written to git's object
//! database when the run starts (`hash-object -w`), so the run can write them again (a
//! worktree made afresh on resume) and tell later whether the user changed them.
//!
//! When the run ends it **lands**: the user's branch is fast-forwarded to the run's branch if
//! it still points where the run started and the user changed none of the files the run
//! committed (a carried file still as it was carried is the run's to replace). Otherwise the
//! branch is kept and named with the command that merges it. A run that is closed (`baton
//! stop RUN_ID`, or a new run of its epic taking over) lands what it committed the same way,
//! so a rerun never redoes a story that is committed on a branch the user cannot see.
//!
//! Every step is safe to repeat: a worktree cut off while being made is made again (the
//! `tree-ready` marker in the run's folder comes last), a carried file already in place is
//! written again with the same bytes, and a landing killed half-way lands on the next try (a
//! file set aside for the fast-forward is either still as carried or already the run's).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Baseline;
use crate::error::{Error, Result};
use crate::git::Git;
use baton_core::notice;

/// A carried file larger than this stays out of the worktree (named at the start): writing it
/// to git's objects would cost more than the run gains.
const CARRY_LIMIT: u64 = 20 << 20;

/// The marker, in the run's folder, that the worktree is made and its files carried.
const READY: &str = "tree-ready";

/// In the run's folder once the user's branch has the run's commits: the commit it landed at
/// (a run killed after landing, before it journaled its end, makes its worktree there again).
const LANDED: &str = "tree-landed";

/// Where and from what a run works (in its journal's first record).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunTree {
    pub path: PathBuf,
    pub branch: String,
    /// The commit the run started from.
    pub start: String,
    /// The user's branch then; None: a detached HEAD (nothing to move when the run ends).
    pub user_branch: Option<String>,
    /// The user's uncommitted files the run started with.
    #[serde(default)]
    pub carried: Vec<Carried>,
}

/// One uncommitted file of the user's, as the run found it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Carried {
    pub path: String,
    /// Its bytes' blob; None: deleted in the user's checkout.
    pub blob: Option<String>,
}

/// How a run's commits reached the user (or did not).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(tag = "landing", rename_all = "snake_case")]
pub enum Landing {
    /// The user's branch was fast-forwarded to the run's last commit.
    Moved { branch: String, commit: String },
    /// The run committed nothing.
    Nothing,
    /// The commits stay on the run's branch.
    Kept { branch: String, reason: String },
}

impl Landing {
    pub fn describe(&self) -> String {
        match self {
            Landing::Moved { branch, commit } => format!(
                "your branch `{branch}` now has the run's commits (fast-forwarded to {})",
                &commit[..commit.len().min(10)]
            ),
            Landing::Nothing => "the run committed nothing: your branch is as it was".into(),
            Landing::Kept { branch, reason } => format!(
                "the run's commits stay on branch `{branch}` ({reason}): merge them with `git merge {branch}`"
            ),
        }
    }
}

impl RunTree {
    /// The tree a new run works in, from the user's checkout at `user` as it is now; None
    /// when the repository has no commit yet (the run then works in place).
    pub fn plan(
        user: &Git,
        local: &Path,
        run_id: &str,
        baseline: &Baseline,
    ) -> Result<Option<RunTree>> {
        let Some(start) = user.head() else {
            notice::note("the repository has no commit yet: the run works in your checkout");
            return Ok(None);
        };
        let branch = user.branch()?;
        let mut carried = Vec::new();
        let mut files: Vec<&str> = Vec::new();
        let mut left: Vec<&str> = Vec::new();
        for p in baseline.dirty.iter().filter(|p| baseline.is_work(p, false)) {
            match std::fs::symlink_metadata(user.dir().join(p)) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => carried.push(Carried {
                    path: p.clone(),
                    blob: None,
                }),
                Ok(m) if m.is_file() && m.len() <= CARRY_LIMIT && !p.contains('\n') => {
                    files.push(p)
                }
                _ => left.push(p),
            }
        }
        for (p, id) in files.iter().zip(user.write_blobs(&files)?) {
            carried.push(Carried {
                path: p.to_string(),
                blob: Some(id),
            });
        }
        if !left.is_empty() {
            notice::note(format!(
                "not carried into the run's worktree (links, folders or files over {} MiB): {}",
                CARRY_LIMIT >> 20,
                left.join(", ")
            ));
        }
        carried.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Some(RunTree {
            path: local.join("worktrees").join(run_id).join("@run"),
            branch: format!("baton/run-{run_id}"),
            start,
            user_branch: (branch != "HEAD").then_some(branch),
            carried,
        }))
    }

    /// The worktree, made (or made again) with the carried files in it. `run_dir` holds the
    /// marker that it is complete.
    pub fn ensure(&self, user: &Git, run_dir: &Path) -> Result<()> {
        let marker = run_dir.join(READY);
        let git = Git::new(&self.path);
        if marker.is_file()
            && self.path.join(".git").is_file()
            && git.branch().is_ok_and(|b| b == self.branch)
        {
            return Ok(());
        }
        // Half made, or removed since: baton's own folder, made again.
        if self.path.exists() {
            std::fs::remove_dir_all(&self.path).map_err(|e| Error::io(&self.path, e))?;
        }
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        // A branch removed after it landed is made again where it landed.
        let from = std::fs::read_to_string(run_dir.join(LANDED))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| self.start.clone());
        user.worktree_attach(&self.path, &self.branch, &from)?;
        // What the run committed since it started is newer than what was carried.
        let tip = git.head().unwrap_or_else(|| self.start.clone());
        let committed = if tip == self.start {
            vec![]
        } else {
            user.changed_between(&self.start, &tip)?
        };
        for c in self.carried.iter().filter(|c| !committed.contains(&c.path)) {
            let to = self.path.join(&c.path);
            baton_core::fs::confined(&self.path, &to)?;
            match &c.blob {
                Some(id) => {
                    if let Some(parent) = to.parent() {
                        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
                    }
                    let bytes = user.blob(id)?;
                    baton_core::fs::write_atomic(&to, &bytes)?;
                    if let Ok(m) = std::fs::metadata(user.dir().join(&c.path)) {
                        // An executable script stays one.
                        let _ = std::fs::set_permissions(&to, m.permissions());
                    }
                }
                None => match std::fs::remove_file(&to) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(Error::io(&to, e));
                    }
                    _ => {}
                },
            }
        }
        baton_core::fs::write_atomic(&marker, b"")?;
        Ok(())
    }

    /// Bring the run's commits to the user's branch (see the module comment), then remove the
    /// worktree unless it holds work nothing committed.
    pub fn land(&self, user: &Git, protected: &[String], run_dir: &Path) -> Result<Landing> {
        let landing = self.try_land(user, protected)?;
        if let Landing::Moved { commit, .. } = &landing {
            baton_core::fs::write_atomic(&run_dir.join(LANDED), commit.as_bytes())?;
        }
        let leftover = self.leftover()?;
        if !leftover.is_empty() {
            notice::note(format!(
                "the run's worktree {} is kept: it holds changes no commit has ({})",
                self.path.display(),
                leftover.join(", ")
            ));
            return Ok(landing);
        }
        let drop_branch = !matches!(landing, Landing::Kept { .. });
        if let Err(e) = user.worktree_remove(&self.path, drop_branch.then_some(&*self.branch)) {
            // What matters landed; a leftover worktree is clutter, not a failure.
            notice::note(format!(
                "could not remove the run's worktree {}: {e}",
                self.path.display()
            ));
        }
        // The run's folder of worktrees, once it holds none (parallel stories kept for a
        // failure stay, and with them the folder).
        if let Some(parent) = self.path.parent() {
            let _ = std::fs::remove_dir(parent);
        }
        Ok(landing)
    }

    fn try_land(&self, user: &Git, protected: &[String]) -> Result<Landing> {
        let kept = |reason: String| {
            Ok(Landing::Kept {
                branch: self.branch.clone(),
                reason,
            })
        };
        let Some(tip) = user
            .run(&[
                "rev-parse",
                "--verify",
                "-q",
                &format!("refs/heads/{}", self.branch),
            ])
            .ok()
            .map(|s| s.trim().to_string())
        else {
            // Its branch was removed (by hand: a landed run's worktree is made again first).
            return Ok(Landing::Nothing);
        };
        if tip == self.start {
            return Ok(Landing::Nothing);
        }
        let Some(mine) = &self.user_branch else {
            return kept("the run started on a detached HEAD".into());
        };
        if protected.contains(mine) {
            return kept(format!("`{mine}` is a protected branch"));
        }
        let now = user.branch()?;
        if &now != mine {
            return kept(format!("your checkout is on `{now}` now, not `{mine}`"));
        }
        let head = user.head().unwrap_or_default();
        if head == tip {
            return Ok(Landing::Moved {
                branch: mine.clone(),
                commit: tip,
            });
        }
        if head != self.start {
            return kept(format!("`{mine}` has moved since the run started"));
        }
        // Files the run committed that the user's checkout has uncommitted changes in: only
        // a carried file still exactly as carried may be replaced.
        let dirty = user.changes()?;
        let mut set_aside: Vec<&Carried> = Vec::new();
        for p in user
            .changed_between(&self.start, &tip)?
            .iter()
            .filter(|p| dirty.contains(p))
        {
            let now = user.dir().join(p);
            let same = self.carried.iter().find(|c| &c.path == p).filter(|c| {
                let current = if now.symlink_metadata().is_ok() {
                    user.blob_id(p)
                } else {
                    None
                };
                current == c.blob
            });
            match same {
                Some(c) => set_aside.push(c),
                None => return kept(format!("you changed {p} since the run started")),
            }
        }
        if !set_aside.is_empty() {
            let paths: Vec<&str> = set_aside.iter().map(|c| c.path.as_str()).collect();
            user.unstage(&paths)?;
            let (tracked, untracked): (Vec<&str>, Vec<&str>) = paths
                .iter()
                .partition(|p| user.show_file(&self.start, p).is_some());
            if !tracked.is_empty() {
                let mut args = vec!["checkout", "-q", "--"];
                args.extend(&tracked);
                user.run(&args)?;
            }
            for p in untracked {
                let f = user.dir().join(p);
                match std::fs::remove_file(&f) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(Error::io(&f, e));
                    }
                    _ => {}
                }
            }
        }
        match user.fast_forward(&tip)? {
            Ok(()) => Ok(Landing::Moved {
                branch: mine.clone(),
                commit: tip,
            }),
            Err(said) => {
                // Put back what was set aside, as it was.
                for c in &set_aside {
                    if let Some(id) = &c.blob {
                        baton_core::fs::write_atomic(&user.dir().join(&c.path), &user.blob(id)?)?;
                    }
                }
                kept(format!("git refused the fast-forward: {said}"))
            }
        }
    }

    /// Paths in the worktree with changes no commit has: anything but a carried file still
    /// as it was carried.
    fn leftover(&self) -> Result<Vec<String>> {
        if !self.path.join(".git").is_file() {
            return Ok(vec![]);
        }
        let git = Git::new(&self.path);
        let mut out = Vec::new();
        for p in git.changes()? {
            let carried = self.carried.iter().find(|c| c.path == p);
            let same = carried.is_some_and(|c| {
                let present = self.path.join(&p).symlink_metadata().is_ok();
                (if present { git.blob_id(&p) } else { None }) == c.blob
            });
            if !same && !p.starts_with(".baton/") && p != ".baton" {
                out.push(p);
            }
        }
        Ok(out)
    }
}

/// The tree an epic run's journal names (runs in place, and other workflows, have none).
pub fn of_journal(options: &serde_json::Value) -> Option<RunTree> {
    serde_json::from_value(options.get("tree")?.clone()).ok()
}

/// Where a run with `opts` would work and where its commits would go, for `--dry-run`.
pub fn describe_place(user: &Git, opts: &super::Options) -> String {
    let real = super::Options {
        dry_run: false,
        ..opts.clone()
    };
    if opts.no_commit {
        return "in your checkout, committing nothing (--no-commit)".into();
    }
    if !real.works_in_tree() {
        return "in your checkout, committing on its branch (--in-place)".into();
    }
    if user.head().is_none() {
        return "in your checkout (the repository has no commit yet)".into();
    }
    let branch = user.branch().unwrap_or_default();
    let stays = "in a worktree of its own; its commits stay on its branch";
    if branch == "HEAD" {
        format!("{stays} (HEAD is detached)")
    } else if opts.protected_branches.contains(&branch) {
        format!("{stays} (`{branch}` is protected)")
    } else {
        format!(
            "in a worktree of its own; when it ends, `{branch}` is fast-forwarded to its commits \
             if it has not moved and you changed none of the files they hold"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Git) {
        let d = tempfile::tempdir().unwrap();
        let g = Git::new(d.path());
        for args in [
            &["init", "-q", "-b", "work"][..],
            &["config", "user.name", "t"],
            &["config", "user.email", "t@t.invalid"],
        ] {
            g.run(args).unwrap();
        }
        std::fs::write(d.path().join("a.txt"), "a\n").unwrap();
        g.run(&["add", "a.txt"]).unwrap();
        g.run(&["commit", "-qm", "start"]).unwrap();
        (d, g)
    }

    /// A run that carried an untracked `story.md` ("mine") and committed it as "done".
    fn ran(d: &Path, user: &Git) -> (RunTree, PathBuf) {
        std::fs::write(d.join("story.md"), "mine\n").unwrap();
        let local = d.join(".baton");
        let baseline = Baseline {
            dirty: ["story.md".to_string()].into(),
            local: ".baton".into(),
        };
        let tree = RunTree::plan(user, &local, "r1", &baseline)
            .unwrap()
            .unwrap();
        let run_dir = local.join("runs/r1");
        std::fs::create_dir_all(&run_dir).unwrap();
        tree.ensure(user, &run_dir).unwrap();
        assert_eq!(
            std::fs::read_to_string(tree.path.join("story.md")).unwrap(),
            "mine\n"
        );
        let g = Git::new(&tree.path);
        std::fs::write(tree.path.join("story.md"), "mine\ndone\n").unwrap();
        g.run(&["add", "story.md"]).unwrap();
        g.run(&["commit", "-qm", "story"]).unwrap();
        (tree, run_dir)
    }

    #[test]
    fn a_landing_cut_off_after_setting_files_aside_lands_on_the_next_try() {
        let (d, user) = repo();
        let (tree, run_dir) = ran(d.path(), &user);
        // Killed after the carried file was set aside, before the fast-forward.
        std::fs::remove_file(d.path().join("story.md")).unwrap();
        let l = tree.land(&user, &[], &run_dir).unwrap();
        assert!(matches!(l, Landing::Moved { .. }), "{l:?}");
        assert_eq!(
            std::fs::read_to_string(d.path().join("story.md")).unwrap(),
            "mine\ndone\n"
        );
        assert!(!tree.path.exists());
        assert!(!user.has_branch(&tree.branch));
        // Killed after landing, before the run journaled its end: made again where it landed,
        // and landing again says so.
        tree.ensure(&user, &run_dir).unwrap();
        assert_eq!(Git::new(&tree.path).head(), user.head());
        let again = tree.land(&user, &[], &run_dir).unwrap();
        assert_eq!(again, l);
    }

    #[test]
    fn a_carried_file_the_user_changed_keeps_the_run_on_its_branch() {
        let (d, user) = repo();
        let (tree, run_dir) = ran(d.path(), &user);
        std::fs::write(d.path().join("story.md"), "mine, changed\n").unwrap();
        let before = user.head();
        let l = tree.land(&user, &[], &run_dir).unwrap();
        assert_eq!(
            l,
            Landing::Kept {
                branch: tree.branch.clone(),
                reason: "you changed story.md since the run started".into()
            }
        );
        assert_eq!(user.head(), before);
        assert_eq!(
            std::fs::read_to_string(d.path().join("story.md")).unwrap(),
            "mine, changed\n"
        );
        assert!(user.has_branch(&tree.branch));
        // A protected branch is never moved either.
        std::fs::write(d.path().join("story.md"), "mine\n").unwrap();
        let l = tree.land(&user, &["work".to_string()], &run_dir).unwrap();
        assert!(
            l.describe().contains("`work` is a protected branch"),
            "{l:?}"
        );
        assert_eq!(user.head(), before);
    }

    #[test]
    fn a_worktree_cut_off_while_being_made_is_made_again() {
        let (d, user) = repo();
        std::fs::write(d.path().join("new.txt"), "carried\n").unwrap();
        let baseline = Baseline {
            dirty: ["new.txt".to_string(), "a.txt".to_string()].into(),
            local: ".baton".into(),
        };
        std::fs::remove_file(d.path().join("a.txt")).unwrap();
        let tree = RunTree::plan(&user, &d.path().join(".baton"), "r2", &baseline)
            .unwrap()
            .unwrap();
        let run_dir = d.path().join(".baton/runs/r2");
        std::fs::create_dir_all(&run_dir).unwrap();
        // A folder with half its files and no marker: a kill inside `git worktree add`.
        std::fs::create_dir_all(&tree.path).unwrap();
        std::fs::write(tree.path.join("junk"), "x").unwrap();
        tree.ensure(&user, &run_dir).unwrap();
        assert!(!tree.path.join("junk").exists());
        assert_eq!(
            std::fs::read_to_string(tree.path.join("new.txt")).unwrap(),
            "carried\n"
        );
        // The deletion is carried too.
        assert!(!tree.path.join("a.txt").exists());
    }
}
