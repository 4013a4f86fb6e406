//! Whether a story runs at all in this run, before any phase: a result the journal recorded
//! already (a resumed run), a story still drafted (not ready for development), or one whose
//! status said done when the run started (skipped unless `--redo`).

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
}
