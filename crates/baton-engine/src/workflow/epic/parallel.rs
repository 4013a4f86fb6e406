//! Parallel stories (`baton run epic-execute 1 --parallel N`): each story runs its phases in a
//! git worktree of its own (`.baton/worktrees/<run-id>/<story>`, branch
//! `baton/<run-id>/<story>`, made from the run's branch as it is when the story starts), at
//! most N at once, one thread each. The orchestrator alone touches the project's own checkout:
//! it merges finished stories back **in story order**, one commit per story with the same
//! subject and trailers as sequential mode (the worktree's commit is cherry-picked without
//! committing, sprint-status.yaml is updated, then committed).
//!
//! Dependencies: stories are independent unless a story file says otherwise with a line
//! `Depends on: 1.2, 1.3`. Such a story starts only once those stories are merged, from a
//! branch that has them; if one of them failed, it is skipped. A dependency must come earlier
//! in the epic (merges are in story order); one on a later story fails the story. Stories
//! this run does not execute (before `--start-from`, other epics) count as already in place.
//!
//! Failures: a failed story's work is committed on its own branch and its worktree is kept;
//! only its story file (records, the failure, `Status: in-progress`) reaches the run's branch, as in sequential
//! mode. A story whose merge conflicts is failed the same way, its commit left on its branch.
//!
//! Resume: a story the journal settled is not run again. An interrupted story goes on in its
//! existing worktree, where its files are, replaying its recorded phases like sequential mode
//! does in the project; if that worktree is gone it restarts in a fresh one (a
//! `story_worktree` event marks the new start, so older records of it are not replayed).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Instant;

use super::bmad::id::StoryId;
use super::{
    Checkout, EpicEngine, EpicRef, EpicReport, FAILED_STATUS, StoryPhases, StoryRef, StoryReport,
    StoryResult,
};
use crate::error::{Error, Result};
use crate::git::{CherryPick, Git, looks_secret};
use crate::journal::Entry;

/// The story ids a story file declares it depends on (`Depends on: 1.2, 1.3`; Markdown
/// emphasis and list markers around it are allowed, anything that is not a story id is not).
pub fn dependencies(text: &str) -> Vec<StoryId> {
    let mut out = Vec::new();
    for line in text.lines() {
        let plain: String = line.chars().filter(|c| !matches!(c, '*' | '_')).collect();
        let l = plain.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '>'));
        let Some(head) = l.get(..10) else { continue };
        if !head.eq_ignore_ascii_case("depends on") {
            continue;
        }
        let Some(rest) = l[10..].trim_start().strip_prefix(':') else {
            continue;
        };
        for tok in rest.split(|c: char| c == ',' || c == ';' || c.is_whitespace()) {
            let t = tok.trim_matches(|c: char| !c.is_ascii_alphanumeric());
            if t.chars().next().is_some_and(|c| c.is_ascii_digit())
                && let Some(id) = StoryId::parse(t)
                && !out.contains(&id)
            {
                out.push(id);
            }
        }
    }
    out
}

/// How a ran story reached the run's branch: its commit there, or the files that conflicted.
enum Picked {
    Committed(String),
    Conflict(String),
}

/// A story's worktree and branch.
#[derive(Debug, Clone)]
pub(crate) struct Worktree {
    pub path: PathBuf,
    pub branch: String,
}

/// A story whose phases ran in its worktree, waiting for its turn to merge.
pub(crate) struct Ran {
    phases: StoryPhases,
    /// Its commit on the story branch.
    sha: String,
    wt: Worktree,
    started: Instant,
}

enum Slot {
    Waiting,
    Running,
    Ran(Box<Result<Ran>>),
    Done(StoryReport),
}

/// Story ids as path and branch components: `1.2` stays `1.2`, anything odd becomes `-`.
fn slug(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    // Git refuses `..` and a leading `.` in branch names.
    s.replace("..", "-").trim_start_matches('.').to_string()
}

impl EpicEngine<'_> {
    fn worktree_of(&self, story: &StoryRef) -> Worktree {
        let s = slug(&story.id);
        Worktree {
            path: self.worktrees_dir.join(&self.run_id).join(&s),
            branch: format!("baton/{}/{s}", self.run_id),
        }
    }

    /// The story's worktree: the existing one (resume), or a fresh one from the current HEAD.
    fn prepare_worktree(&self, epic: &EpicRef, story: &StoryRef) -> Result<Checkout> {
        let wt = self.worktree_of(story);
        let git = Git::new(&wt.path);
        // `git worktree add` writes `.git` and HEAD before it checks the files out: a worktree
        // cut off in between has no story file yet, and is made afresh.
        let reusable = wt.path.join(".git").is_file()
            && wt.path.join(&story.path).is_file()
            && git.branch().is_ok_and(|b| b == wt.branch);
        if !reusable {
            self.log(Entry::StoryWorktree {
                epic: epic.id.clone(),
                story: story.id.clone(),
                path: wt.path.display().to_string(),
                branch: wt.branch.clone(),
            })?;
            if wt.path.exists() {
                // A half-made worktree (crash inside `git worktree add`): baton's own folder.
                std::fs::remove_dir_all(&wt.path).map_err(|e| Error::io(&wt.path, e))?;
            }
            if let Some(parent) = wt.path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            self.git.worktree_add(&wt.path, &wt.branch)?;
        }
        Ok(Checkout {
            dir: wt.path,
            git,
            shared_status: false,
        })
    }

    /// In a worker thread: the story's phases in its worktree, then its commit there.
    fn story_in_worktree(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        handoff: Option<&Path>,
    ) -> Result<Ran> {
        let started = Instant::now();
        let phases = self.story_phases(co, epic, story, handoff)?;
        let result = if phases.passed { "done" } else { FAILED_STATUS };
        self.set_status(co, story, result)?;
        if !phases.passed {
            let record = phases
                .failed_record
                .as_deref()
                .unwrap_or("Dev Agent Record");
            self.record_failure(co, epic, story, record, &phases.last_failure, None)?;
        }
        // sprint-status.yaml is the run branch's business (see `Checkout::shared_status`): an
        // agent's edit to it stays out of the story's commit.
        let staged = co.git.staged()?;
        let mut drop: Vec<&str> = Vec::new();
        let shared = self.status_file_names();
        drop.extend(
            staged
                .iter()
                .filter(|p| shared.contains(p))
                .map(String::as_str),
        );
        if !phases.passed {
            // A failed story's branch keeps its work, but never a likely secret.
            drop.extend(
                staged
                    .iter()
                    .filter(|p| looks_secret(p))
                    .map(String::as_str),
            );
        }
        co.git.unstage(&drop)?;
        let msg = if phases.passed {
            self.story_message(epic, story, StoryResult::Done)
        } else {
            format!(
                "wip(story {}): failed — its work, kept on this branch\n\nBaton-Run: {}\nBaton-Story: {}\n",
                story.id, self.run_id, story.id
            )
        };
        let sha = self.commit_with(&co.git, story, &[], &msg)?;
        Ok(Ran {
            phases,
            sha,
            wt: self.worktree_of(story),
            started,
        })
    }

    /// Tracked changes in the project's checkout during a parallel run can only be a merge
    /// that a crash interrupted (a fresh parallel run starts from a clean tree, and agents
    /// work in worktrees): set them aside, not lost, before the next merge.
    fn clear_interrupted_merge(&self, story: &StoryRef) -> Result<()> {
        // Tracked files only: the user's untracked files are not the merge's.
        let merged = self.git.tracked_changes()?;
        if !merged.is_empty() {
            let msg = format!(
                "baton {}: interrupted merge before story {}",
                self.run_id, story.id
            );
            self.git.stash_paths(&msg, &merged)?;
        }
        Ok(())
    }

    /// This run's commit of the story on the run's branch, if there is one already.
    fn run_commit(&self, story: &StoryRef) -> Result<Option<String>> {
        if !self.resumed {
            return Ok(None);
        }
        self.git
            .find_commit(&[("Baton-Run", &self.run_id), ("Baton-Story", &story.id)])
    }

    /// Cherry-pick the story's commit onto the run's branch as its one commit there. `Err`
    /// inside: the files that conflicted (nothing is left half-applied).
    fn pick(&self, epic: &EpicRef, story: &StoryRef, sha: &str) -> Result<Picked> {
        if let Some(c) = self.run_commit(story)? {
            return Ok(Picked::Committed(c));
        }
        self.clear_interrupted_merge(story)?;
        if let CherryPick::Conflict(files) = self.git.cherry_pick_no_commit(sha)? {
            return Ok(Picked::Conflict(files));
        }
        let main = self.main_checkout();
        self.set_status(&main, story, "done")?;
        let msg = self.story_message(epic, story, StoryResult::Done);
        self.commit_with(&self.git, story, &self.status_file_names(), &msg)
            .map(Picked::Committed)
    }

    /// A failed story on the run's branch: only its story file (records, `Status: in-progress`),
    /// taken from its branch, and the shared status — as in sequential mode.
    fn commit_failed_records(
        &self,
        epic: &EpicRef,
        story: &StoryRef,
        branch_sha: Option<&str>,
    ) -> Result<String> {
        if let Some(c) = self.run_commit(story)? {
            return Ok(c);
        }
        self.clear_interrupted_merge(story)?;
        let rel = story.path.display().to_string();
        if let Some(bytes) = branch_sha.and_then(|s| self.git.show_file(s, &rel)) {
            baton_core::fs::write_atomic(&self.project_dir.join(&story.path), &bytes)?;
        }
        self.set_status(&self.main_checkout(), story, FAILED_STATUS)?;
        let msg = self.story_message(epic, story, StoryResult::Failed);
        self.commit_with(&self.git, story, &self.status_file_names(), &msg)
    }

    fn remove_worktree(&self, wt: &Worktree) {
        if let Err(e) = self.git.worktree_remove(&wt.path, Some(&wt.branch)) {
            // The story is committed; a leftover worktree is clutter, not a failure.
            self.note(&format!(
                "could not remove the worktree {}: {e}",
                wt.path.display()
            ));
        }
    }

    /// In the orchestrator, in story order: bring a ran story onto the run's branch.
    fn merge(&self, epic: &EpicRef, story: &StoryRef, ran: Ran) -> Result<StoryReport> {
        let Ran {
            phases:
                StoryPhases {
                    mut rep,
                    passed,
                    last_failure,
                    ..
                },
            sha,
            wt,
            started,
        } = ran;
        let kept = format!(
            "its work is on branch `{}`, worktree kept at {}",
            wt.branch,
            wt.path.display()
        );
        let commit = if passed {
            match self.pick(epic, story, &sha)? {
                Picked::Committed(c) => {
                    rep.result = StoryResult::Done;
                    c
                }
                Picked::Conflict(conflict) => {
                    rep.result = StoryResult::Failed;
                    rep.reason = format!(
                        "merge conflict with the run's branch in {conflict}; commit {} ({kept})",
                        &sha[..sha.len().min(10)]
                    );
                    self.commit_failed_records(epic, story, Some(&sha))?
                }
            }
        } else {
            rep.result = StoryResult::Failed;
            rep.reason = format!("{last_failure} ({kept})");
            self.commit_failed_records(epic, story, Some(&sha))?
        };
        self.story_committed(epic, story, &commit)?;
        rep.commit = Some(commit);
        if rep.result == StoryResult::Done {
            self.remove_worktree(&wt);
        }
        rep.duration_ms = started.elapsed().as_millis() as u64;
        self.finish_story(epic, story, &rep)?;
        Ok(rep)
    }

    /// A story committed on the run's branch whose end the journal lacks (a crash between
    /// the two): finish it from the commit, without running anything again.
    fn recover_committed(&self, epic: &EpicRef, story: &StoryRef) -> Result<Option<StoryReport>> {
        let Some(sha) = self.journal().committed(&epic.id, &story.id) else {
            return Ok(None);
        };
        let subject = self.git.run(&["log", "-1", "--format=%s", &sha])?;
        let mut rep = StoryReport {
            id: story.id.clone(),
            title: story.title.clone(),
            commit: Some(sha),
            ..StoryReport::default()
        };
        self.add_recorded_usage(&epic.id, &story.id, &mut rep);
        let wt = self.worktree_of(story);
        if subject.starts_with("feat(") {
            rep.result = StoryResult::Done;
            self.remove_worktree(&wt);
        } else {
            rep.result = StoryResult::Failed;
            rep.reason = format!(
                "failed (the run was interrupted before its reason was recorded; see the run log); its work is on branch `{}`",
                wt.branch
            );
        }
        self.finish_story(epic, story, &rep)?;
        Ok(Some(rep))
    }

    /// Why a story that has not run cannot run, once every story before it is merged.
    fn blocked(
        &self,
        i: usize,
        todo: &[&StoryRef],
        deps: &[std::result::Result<Vec<usize>, String>],
        results: &[Option<StoryResult>],
    ) -> Option<(StoryResult, String)> {
        match &deps[i] {
            Err(why) => Some((StoryResult::Failed, why.clone())),
            Ok(v) => v
                .iter()
                .find(|&&j| results[j].is_some_and(|r| !r.lets_dependents_run()))
                .map(|&j| {
                    (
                        StoryResult::Skipped,
                        format!(
                            "depends on story {}, which {}",
                            todo[j].id,
                            results[j].map_or("did not run", StoryResult::as_str)
                        ),
                    )
                }),
        }
    }

    /// The stories of `todo` with at most `opts.parallel` at once; see the module comment.
    pub(crate) fn run_parallel(
        &self,
        epic: &EpicRef,
        todo: &[&StoryRef],
        handoff: Option<&Path>,
        report: &mut EpicReport,
    ) -> Result<()> {
        let n = self.opts.parallel.max(1);
        let ids: Vec<Option<StoryId>> = todo.iter().map(|s| StoryId::parse(&s.id)).collect();
        let deps: Vec<std::result::Result<Vec<usize>, String>> = todo
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let text = std::fs::read_to_string(self.project_dir.join(&s.path)).unwrap_or_default();
                let mut v = Vec::new();
                for d in dependencies(&text) {
                    match ids.iter().position(|x| x.as_ref() == Some(&d)) {
                        Some(j) if j < i => v.push(j),
                        Some(_) => {
                            return Err(format!(
                                "depends on story {d}, which does not come before it (stories merge in epic order, so a dependency must be an earlier story)"
                            ));
                        }
                        None => {}
                    }
                }
                Ok(v)
            })
            .collect();
        let mut slots: Vec<Slot> = Vec::with_capacity(todo.len());
        for s in todo {
            let settled = match self.settled(epic, s)? {
                Some(r) => Some(r),
                None => self.recover_committed(epic, s)?,
            };
            slots.push(settled.map_or(Slot::Waiting, Slot::Done));
        }
        let mut results: Vec<Option<StoryResult>> = vec![None; todo.len()];
        let max_failed = self.wf.policy.max_failed_stories;
        let mut failed = 0;
        let mut stop = false;
        let mut error: Option<Error> = None;
        let (tx, rx) = mpsc::channel::<(usize, Result<Ran>)>();
        std::thread::scope(|scope| {
            let mut next = 0;
            let mut running = 0;
            loop {
                // Merge, in story order, every story that is ready.
                while next < todo.len() && error.is_none() {
                    let story = todo[next];
                    let rep = match std::mem::replace(&mut slots[next], Slot::Waiting) {
                        Slot::Done(rep) => rep,
                        Slot::Ran(res) => match (*res).and_then(|ran| self.merge(epic, story, ran))
                        {
                            Ok(rep) => rep,
                            Err(e) => {
                                error = Some(e);
                                break;
                            }
                        },
                        Slot::Running => {
                            slots[next] = Slot::Running;
                            break;
                        }
                        Slot::Waiting => match self.blocked(next, todo, &deps, &results) {
                            Some((result, reason)) => {
                                let rep = StoryReport {
                                    id: story.id.clone(),
                                    title: story.title.clone(),
                                    result,
                                    reason,
                                    ..StoryReport::default()
                                };
                                if let Err(e) = self.finish_story(epic, story, &rep) {
                                    error = Some(e);
                                    break;
                                }
                                rep
                            }
                            None => break,
                        },
                    };
                    if rep.result == StoryResult::Failed {
                        failed += 1;
                        if max_failed > 0 && failed >= max_failed && !stop {
                            stop = true;
                            self.note(&format!(
                                "stopping: {failed} stories failed (max_failed_stories = {max_failed}); no new story starts"
                            ));
                        }
                    }
                    results[next] = Some(rep.result);
                    report.usage.add(&rep.usage);
                    report.cost_usd += rep.cost_usd;
                    report.stories.push(rep);
                    next += 1;
                }
                // Start what may start: in story order, dependencies merged and done.
                if error.is_none() && !stop {
                    for i in next..todo.len() {
                        if running >= n {
                            break;
                        }
                        let ready = matches!(slots[i], Slot::Waiting)
                            && deps[i].as_ref().is_ok_and(|v| {
                                v.iter().all(|&j| {
                                    results[j].is_some_and(StoryResult::lets_dependents_run)
                                })
                            });
                        if !ready {
                            continue;
                        }
                        let story = todo[i];
                        let co = match self.prepare_worktree(epic, story) {
                            Ok(co) => co,
                            Err(e) => {
                                error = Some(e);
                                break;
                            }
                        };
                        slots[i] = Slot::Running;
                        running += 1;
                        let tx = tx.clone();
                        scope.spawn(move || {
                            let r = self.story_in_worktree(&co, epic, story, handoff);
                            // The receiver outlives every worker (same scope).
                            let _ = tx.send((i, r));
                        });
                    }
                }
                if running == 0 {
                    break;
                }
                match rx.recv() {
                    Ok((i, r)) => {
                        running -= 1;
                        slots[i] = Slot::Ran(Box::new(r));
                    }
                    Err(_) => break,
                }
            }
        });
        // The run's folder of worktrees goes once empty; a kept worktree keeps it.
        let _ = std::fs::remove_dir(self.worktrees_dir.join(&self.run_id));
        match error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_lines() {
        let ids =
            |t: &str| -> Vec<String> { dependencies(t).iter().map(ToString::to_string).collect() };
        assert_eq!(ids("# Story 1.3\n\nDepends on: 1.1, 1.2\n"), ["1.1", "1.2"]);
        assert_eq!(ids("- **Depends on**: Story 1.2.\n"), ["1.2"]);
        assert_eq!(ids("depends on: none\n"), Vec::<String>::new());
        assert_eq!(
            ids("This story depends on 1.2 loosely.\n"),
            Vec::<String>::new()
        );
        assert_eq!(ids("Depends on:\n"), Vec::<String>::new());
        assert_eq!(ids("Dépends on: 1.2\n"), Vec::<String>::new());
    }

    #[test]
    fn slugs_are_safe_path_and_branch_parts() {
        assert_eq!(slug("1.2"), "1.2");
        assert_eq!(slug("../x/y"), "--x-y");
        assert_eq!(slug("a b"), "a-b");
    }
}
