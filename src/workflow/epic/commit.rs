//! Committing a story (and the epic's documents) exactly once: the branch is searched for the
//! run's trailers before a resumed run commits again.

use super::*;

impl Engine<'_> {
    /// The story's commit message: the same subject and trailers in both modes.
    pub(crate) fn story_message(&self, epic: &EpicRef, story: &StoryRef, result: &str) -> String {
        let subject = if result == "done" {
            format!("feat(story {}): {}", story.id, story.title)
        } else {
            format!("docs(story {}): failed — records of the attempts", story.id)
        };
        format!(
            "{subject}\n\nEpic {}, story {} ({result}), by baton run {}.\n\nBaton-Run: {}\nBaton-Story: {}\n",
            epic.id, story.id, self.run_id, self.run_id, story.id
        )
    }

    /// Stage the story file and `extra`, refuse likely secrets, commit with `message` — unless
    /// `git`'s branch already has this run's commit of the story (a crash between `git
    /// commit` and the journal entry must not commit twice).
    pub(crate) fn commit_with(
        &self,
        git: &Git,
        story: &StoryRef,
        extra: &[String],
        message: &str,
    ) -> Result<String> {
        // Only a resumed run can meet a commit it made before a crash; a fresh run skips the
        // walk of the whole history (the costliest git call of a phase on a long history).
        if self.resumed
            && let Some(sha) =
                git.find_commit(&[("Baton-Run", &self.run_id), ("Baton-Story", &story.id)])?
        {
            return Ok(sha);
        }
        let mut paths = vec![story.path.display().to_string()];
        paths.extend(extra.iter().cloned());
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        git.add_paths(&refs)?;
        let mut staged = git.staged()?;
        if git.dir() == self.project_dir {
            // What was the user's before the run (an agent's own `git add -A` may have staged
            // it) is not the story's to commit.
            let theirs: Vec<&str> = staged
                .iter()
                .filter(|p| self.baseline.dirty.contains(*p) && !paths.contains(p))
                .map(String::as_str)
                .collect();
            if !theirs.is_empty() {
                git.unstage(&theirs)?;
                staged = git.staged()?;
            }
        }
        let secrets: Vec<&String> = staged.iter().filter(|p| looks_secret(p)).collect();
        if !secrets.is_empty() {
            return Err(Error::state(format!("refusing to commit likely secrets: {}", secrets.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")))
                .hint("unstage them (git restore --staged <file>) and add them to .gitignore, then resume the run"));
        }
        git.commit(message)
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
        result: &str,
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
        if self.git.staged()?.is_empty() {
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
