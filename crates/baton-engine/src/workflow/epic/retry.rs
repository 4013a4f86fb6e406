//! `baton run --resume RUN --retry STORY`: a story that failed (or was stopped mid-way, as an
//! escalation stops it) re-armed after a human looked at it. The journal gets a
//! `StoryRetried`: what it held of the story before is of an earlier round, so the resumed
//! run develops it again with its attempts anew (numbered on, so nothing of the earlier round
//! is overwritten or mistaken for this one's), commits it once under a `Baton-Round` trailer,
//! and with `--apply-stash` starts from the earlier round's changes.

use super::*;
use crate::git::Git;
use crate::journal::Journal;
use crate::subject::SubjectKind;

/// Re-arm `stories` in `journal`; what to tell the user of each.
pub(super) fn rearm(
    journal: &mut Journal,
    epics: &[EpicRef],
    git: &Git,
    opts: &Options,
    max_attempts: u32,
    stories: &[String],
    apply_stash: bool,
) -> Result<Vec<String>> {
    let run = journal
        .started()
        .map(|s| s.run_id.to_string())
        .unwrap_or_default();
    if opts.parallel > 1 {
        return Err(Error::invalid(format!(
            "--retry is for runs of one story at a time; run {run} runs {} at once",
            opts.parallel
        ))
        .hint("start a new run of the story: baton run epic-execute EPIC --only STORY"));
    }
    // Every story checked before any is re-armed: a typo re-arms nothing.
    let mut arm = Vec::new();
    let mut notes = Vec::new();
    for id in stories {
        let Some(epic) = epics.iter().find(|e| e.stories.iter().any(|s| &s.id == id)) else {
            return Err(Error::invalid(format!(
                "--retry names story {id}, which run {run}'s epics do not have"
            ))
            .hint(format!("see them with `baton status {run}`")));
        };
        let round = journal.story_round(&epic.id, id);
        let last = journal.last_attempt(&epic.id, id);
        match journal.story_result(&epic.id, id) {
            Some((SubjectResult::Failed, _)) => {}
            None if last > round.after_attempt => {}
            Some((SubjectResult::Done, _)) => {
                return Err(Error::state(format!("story {id} is done in run {run}"))
                    .hint(format!(
                        "to develop it again, start a new run: baton run epic-execute {} --redo {id}",
                        epic.id
                    )));
            }
            Some((_, reason)) => {
                return Err(Error::state(format!(
                    "story {id} was not developed in run {run}: {reason}"
                ))
                .hint("fix what the reason names; a new run of the epic picks it up"));
            }
            // The same command again (after a kill, say): re-armed already, it runs now.
            None if round.n > 1 => {
                notes.push(format!("story {id} is re-armed already: it runs now"));
                continue;
            }
            None => {
                return Err(Error::state(format!(
                    "story {id} has not run in run {run} yet: resuming runs it"
                ))
                .hint(format!("baton run --resume {run}")));
            }
        }
        let stash = format!("baton {run}: story {id} failed{}", round.suffix());
        let kept = git.stash_exists(&stash)?;
        arm.push((epic.id.clone(), id.clone(), last, (kept).then_some(stash)));
    }
    for (epic, story, last, stash) in arm {
        let applied = stash.clone().filter(|_| apply_stash);
        journal.log(Entry::StoryRetried {
            epic,
            story: story.clone(),
            after_attempt: last,
            stash: applied.clone(),
        })?;
        let mut note = format!(
            "story {story} re-armed: developed again with up to {max_attempts} attempts, numbered on from {}",
            last + 1
        );
        match (&stash, &applied) {
            (Some(s), Some(_)) => note.push_str(&format!(
                "; its earlier changes (stash \"{s}\") are put back in the run's tree first"
            )),
            (Some(s), None) => note.push_str(&format!(
                "; its earlier changes stay in `git stash list` (\"{s}\"): --apply-stash starts from them"
            )),
            _ => {}
        }
        notes.push(note);
    }
    Ok(notes)
}

impl EpicEngine<'_> {
    /// A round re-armed with `--apply-stash`: the earlier round's changes back in `co` before
    /// its first call (a round that has called already has them, or made its own since).
    pub(crate) fn apply_round_stash(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
    ) -> Result<()> {
        let (round, last) = {
            let j = self.journal();
            (
                j.story_round(&epic.id, &story.id),
                j.last_attempt(&epic.id, &story.id),
            )
        };
        let Some(stash) = round.stash.filter(|_| !self.opts.dry_run) else {
            return Ok(());
        };
        if last > round.after_attempt {
            return Ok(());
        }
        match co.git.restore_stash(&stash)? {
            Some(paths) => self.note(&format!(
                "story {}: its earlier round's changes are back ({} files, from stash \"{stash}\")",
                story.id,
                paths.len()
            )),
            None => self.note(&format!(
                "story {}: the stash \"{stash}\" is gone; the story starts from the run's tree as it is",
                story.id
            )),
        }
        Ok(())
    }
}

impl start::RunSpec {
    /// `--retry` of a run that finished: a new run of its epics with its options, for
    /// `stories` only (each one that failed in it; done stories are skipped as ever).
    pub fn again(j: &Journal, stories: &[String]) -> Result<start::RunSpec> {
        let events = j.dir.join("events.jsonl");
        let started = j
            .started()
            .ok_or_else(|| Error::corrupt(&events, Some(1), "does not start with run_started"))?;
        let run = started.run_id.to_string();
        let old: start::RunSpec = serde_json::from_value(started.options.clone())
            .map_err(|e| Error::corrupt(&events, Some(1), e.to_string()))?;
        for id in stories {
            let result = j.records.iter().rev().find_map(|r| match &r.entry {
                Entry::SubjectFinished {
                    subject, result, ..
                } if subject.kind == SubjectKind::Story && &subject.id == id => Some(*result),
                _ => None,
            });
            match result {
                Some(SubjectResult::Failed) => {}
                Some(SubjectResult::Done) => {
                    return Err(
                        Error::state(format!("story {id} is done in run {run}")).hint(format!(
                            "to develop it again, start a new run with --redo {id}"
                        )),
                    );
                }
                _ => {
                    return Err(
                        Error::state(format!("story {id} did not fail in run {run}"))
                            .hint(format!("see how its stories ended: baton status {run}")),
                    );
                }
            }
        }
        let mut options = old.options;
        options.only = stories.to_vec();
        options.start_from = None;
        options.redo = Vec::new();
        options.skip_done = true;
        options.done_at_start = None;
        options.checks = None;
        Ok(start::RunSpec {
            workflow: old.workflow,
            epics: old.epics,
            options,
            scenario: old.scenario,
            baseline: Default::default(),
            tree: None,
        })
    }
}
