//! Whether a story runs at all in this run, before any phase: a result the journal recorded
//! already (a resumed run), a story still drafted (not ready for development), or one whose
//! status said done when the run started (skipped unless `--redo`). And a story's end: its
//! result reported and journaled, its status written.

use super::*;

/// The normalised status of a story the scrum master has drafted, not yet made ready.
const DRAFTED: &str = "drafted";

impl EpicEngine<'_> {
    pub(crate) fn settled(&self, epic: &EpicRef, story: &StoryRef) -> Result<Option<StoryReport>> {
        let mut rep = StoryReport {
            id: story.id.clone(),
            title: story.title.clone(),
            ..StoryReport::default()
        };
        let recorded = {
            let j = self.journal();
            j.story_result(&epic.id, &story.id)
                .map(|r| (r, j.committed(&epic.id, &story.id)))
        };
        if let Some(((result, reason), commit)) = recorded {
            rep.result = result.into();
            rep.reason = reason;
            rep.commit = commit;
            self.add_recorded_usage(&epic.id, &story.id, &mut rep);
            return Ok(Some(rep));
        }
        if let Some(why) = &story.blocked {
            // build-auto keeps a blocked story blocked: a human decides.
            rep.result = StoryResult::Skipped;
            rep.reason = format!(
                "blocked: {why} (fix the cause, then set its status back to ready-for-dev or delete its story file)"
            );
            self.finish_story(epic, story, &rep)?;
            return Ok(Some(rep));
        }
        if story.status == DRAFTED && !self.opts.allow_draft {
            rep.result = StoryResult::Skipped;
            rep.reason = "its status is still drafted: not ready for development (make it \
                          ready-for-dev, or `--allow-draft` runs it)"
                .to_string();
            self.finish_story(epic, story, &rep)?;
            return Ok(Some(rep));
        }
        if self.opts.skips_done(&epic.id, story) {
            rep.result = StoryResult::Skipped;
            rep.reason = format!(
                "already done (its status says so; `--redo {}` runs it again)",
                story.id
            );
            self.finish_story(epic, story, &rep)?;
            return Ok(Some(rep));
        }
        Ok(None)
    }

    pub(crate) fn add_recorded_usage(&self, epic: &str, story: &str, rep: &mut StoryReport) {
        let subject = Subject::story(epic, story);
        for r in &self.journal().records {
            if let Entry::PhaseFinished {
                subject: s,
                outcome,
                attempt,
                ..
            } = &r.entry
                && *s == subject
            {
                rep.usage.add(&outcome.usage);
                rep.cost_usd += outcome.cost_usd.unwrap_or(0.0);
                rep.duration_ms += outcome.duration_ms;
                rep.attempts = rep.attempts.max(*attempt);
            }
        }
    }

    pub(crate) fn finish_story(
        &self,
        epic: &EpicRef,
        story: &StoryRef,
        rep: &StoryReport,
    ) -> Result<()> {
        let Some(result) = rep.result.ended() else {
            return Err(Error::internal(format!(
                "story {} finished without a result",
                story.id
            )));
        };
        self.reporter.report(&RunEvent::SubjectFinished {
            subject: &Subject::story(&epic.id, &story.id),
            result,
            reason: &rep.reason,
            commit: rep.commit.as_deref(),
            tokens: rep.usage.total(),
            cost_usd: rep.cost_usd,
        });
        self.log(Entry::SubjectFinished {
            subject: Subject::story(&epic.id, &story.id),
            result,
            reason: rep.reason.clone(),
        })?;
        if rep.result == StoryResult::Skipped {
            return Ok(());
        }
        let round = self.journal().story_round(&epic.id, &story.id).suffix();
        if story.done_checkpoint && rep.result == StoryResult::Done {
            self.pause(
                &format!("done checkpoint of story {}{round}", story.id),
                &format!("story {}'s done checkpoint (stories.yaml)", story.id),
            )?;
        }
        self.pause_after(PauseAfter::Story, &format!("story {}{round}", story.id))
    }

    /// Write a status change in `co`: the story file always, the shared files when `co` is
    /// where they are kept.
    pub(crate) fn set_status(&self, co: &Checkout, story: &StoryRef, status: &str) -> Result<()> {
        if self.opts.dry_run {
            return Ok(());
        }
        self.status.set_story_status(&co.dir, story, status)?;
        if co.shared_status {
            self.status.set_shared_status(&co.dir, story, status)?;
        }
        Ok(())
    }
}
