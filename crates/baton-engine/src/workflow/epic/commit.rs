//! Committing a story (and the epic's documents) exactly once: the branch is searched for the
//! run's trailers before a resumed run commits again.

use super::*;

impl EpicEngine<'_> {
    /// The story's commit message: the same subject and trailers in both modes.
    pub(crate) fn story_message(
        &self,
        epic: &EpicRef,
        story: &StoryRef,
        result: StoryResult,
    ) -> String {
        let subject = if result == StoryResult::Done {
            format!("feat(story {}): {}", story.id, story.title)
        } else {
            format!("docs(story {}): failed — records of the attempts", story.id)
        };
        // A round after a `--retry` says so: its commit is told from the earlier round's.
        let round = match self.journal().story_round(&epic.id, &story.id).n {
            1 => String::new(),
            n => format!("Baton-Round: {n}\n"),
        };
        format!(
            "{subject}\n\nEpic {}, story {} ({result}), by baton run {}.\n\nBaton-Run: {}\nBaton-Story: {}\n{round}",
            epic.id, story.id, self.run_id, self.run_id, story.id
        )
    }

    /// Commit what is staged with the story file and `extra`, refusing likely secrets, with
    /// `message` — unless `git`'s branch already has this run's commit of the story (a crash
    /// between `git commit` and the journal entry must not commit twice).
    pub(crate) fn commit_with(
        &self,
        git: &Git,
        story: &StoryRef,
        extra: &[String],
        message: &str,
    ) -> Result<String> {
        // Only a resumed run can meet a commit it made before a crash; a fresh run skips the
        // walk of the whole history (the costliest git call of a phase on a long history).
        // Found by the trailers `message` carries (run, story and, after a retry, round).
        let trailers: Vec<(&str, &str)> = message
            .lines()
            .filter_map(|l| l.split_once(": "))
            .filter(|(k, _)| k.starts_with("Baton-"))
            .collect();
        if self.resumed
            && let Some(sha) = git.find_commit(&trailers)?
        {
            return Ok(sha);
        }
        let mut paths = vec![story.path.display().to_string()];
        paths.extend(extra.iter().cloned());
        // What is staged, then the story and status files with it, in the commit's process.
        let staged = self.staged_work(git, &paths)?;
        let secrets: Vec<&String> = staged
            .iter()
            .chain(&paths)
            .filter(|p| looks_secret(p))
            .collect();
        if !secrets.is_empty() {
            return Err(Error::state(format!("refusing to commit likely secrets: {}", secrets.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")))
                .hint("unstage them (git restore --staged <file>) and add them to .gitignore, then resume the run"));
        }
        // `commit --include` takes only paths the index knows (git before 2.45 leaves out the
        // others without a word): those staged are; the rest (an untracked story file, one
        // unstaged with a failed story's work, a status file) are added first.
        let (known, unknown): (Vec<&str>, Vec<&str>) = paths
            .iter()
            .map(String::as_str)
            .partition(|p| staged.iter().any(|s| s == p));
        git.add_paths(&unknown)?;
        git.commit_including(message, &known)
    }

    /// What is staged in `git`'s checkout once what is not the run's to commit is unstaged:
    /// an agent's own `git add -A` may have staged the user's pre-run files (in the project's
    /// checkout), baton's folder or a temp file of a write in progress
    /// ([`Baseline::is_work`]). The `added` paths baton staged itself stay.
    fn staged_work(&self, git: &Git, added: &[String]) -> Result<Vec<String>> {
        let staged = git.staged()?;
        let pre_run = git.dir() == self.project_dir;
        let not_work: Vec<&str> = staged
            .iter()
            .filter(|p| !added.contains(p) && !self.baseline.is_work(p, pre_run))
            .map(String::as_str)
            .collect();
        if not_work.is_empty() {
            return Ok(staged);
        }
        git.unstage(&not_work)?;
        git.staged()
    }

    pub(crate) fn status_file_names(&self) -> Vec<String> {
        self.status
            .status_files()
            .iter()
            .map(|p| p.display().to_string())
            .collect()
    }

    pub(super) fn commit_story(
        &self,
        epic: &EpicRef,
        story: &StoryRef,
        result: StoryResult,
    ) -> Result<String> {
        let recorded = self.journal().committed(&epic.id, &story.id);
        if let Some(sha) = recorded {
            return Ok(sha);
        }
        let msg = self.story_message(epic, story, result);
        let sha = self.commit_with(&self.git, story, &self.status_file_names(), &msg)?;
        self.story_committed(epic, story, &sha)?;
        Ok(sha)
    }

    /// Journal a story's commit (before anything goes on) and report it.
    pub(super) fn story_committed(
        &self,
        epic: &EpicRef,
        story: &StoryRef,
        sha: &str,
    ) -> Result<()> {
        self.log(Entry::StoryCommitted {
            epic: epic.id.clone(),
            story: story.id.clone(),
            sha: sha.to_string(),
        })?;
        self.reporter.report(&RunEvent::Committed {
            subject: &Subject::story(&epic.id, &story.id),
            sha,
        });
        Ok(())
    }

    pub(super) fn commit_epic_docs(&self, epic: &EpicRef, files: &[String]) -> Result<()> {
        if self.resumed
            && self
                .git
                .find_commit(&[("Baton-Run", &self.run_id), ("Baton-Epic", &epic.id)])?
                .is_some()
        {
            return Ok(());
        }
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        self.git.add_paths(&refs)?;
        if self.staged_work(&self.git, files)?.is_empty() {
            return Ok(());
        }
        let msg = format!(
            "docs(epic {}): UAT and retrospective\n\nBaton-Run: {}\nBaton-Epic: {}\n",
            epic.id, self.run_id, epic.id
        );
        let sha = self.git.commit(&msg)?;
        self.reporter.report(&RunEvent::Committed {
            subject: &Subject::epic(&epic.id),
            sha: &sha,
        });
        Ok(())
    }
}
