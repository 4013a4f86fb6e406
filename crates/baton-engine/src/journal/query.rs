//! Questions a journal answers beyond its core: how a story ended in its current round
//! (`Entry::StoryRetried` starts a new one), the project's checks as it records them
//! (`Entry::ChecksRun`), and whether a run was closed unfinished (`Entry::Closed`).

use super::{Entry, Journal};
use crate::subject::{Subject, SubjectKind, SubjectResult};

/// A story's round in a run: 1, or 1 + the times `--retry` re-armed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Round {
    pub n: u32,
    /// Attempts the earlier rounds used: this round's first attempt is the next one.
    pub after_attempt: u32,
    /// The earlier round's stash to apply before this round's first call (`--apply-stash`).
    pub stash: Option<String>,
    /// Index of the first record of this round.
    since: usize,
}

impl Round {
    /// What tells this round's marks (stash, record, pause point) from an earlier round's:
    /// nothing for the first round, so runs that never retried keep their names.
    pub fn suffix(&self) -> String {
        if self.n > 1 {
            format!(" (round {})", self.n)
        } else {
            String::new()
        }
    }
}

impl Journal {
    /// The story's current round.
    pub fn story_round(&self, epic: &str, story: &str) -> Round {
        let mut round = Round {
            n: 1,
            ..Round::default()
        };
        for (i, r) in self.records.iter().enumerate() {
            if let Entry::StoryRetried {
                epic: e,
                story: s,
                after_attempt,
                stash,
            } = &r.entry
                && e == epic
                && s == story
            {
                round = Round {
                    n: round.n + 1,
                    after_attempt: *after_attempt,
                    stash: stash.clone(),
                    since: i + 1,
                };
            }
        }
        round
    }

    /// How the story ended in its current round, if it did.
    pub fn story_result(&self, epic: &str, story: &str) -> Option<(SubjectResult, String)> {
        let since = self.story_round(epic, story).since;
        self.records[since..].iter().find_map(|r| match &r.entry {
            Entry::SubjectFinished {
                subject,
                result,
                reason,
            } if subject.kind == SubjectKind::Story
                && subject.id == story
                && subject.epic.as_deref() == Some(epic) =>
            {
                Some((*result, reason.clone()))
            }
            _ => None,
        })
    }

    /// The story's commit in its current round, if it was made.
    pub fn committed(&self, epic: &str, story: &str) -> Option<String> {
        let since = self.story_round(epic, story).since;
        self.records[since..].iter().find_map(|r| match &r.entry {
            Entry::StoryCommitted {
                epic: e,
                story: s,
                sha,
            } if e == epic && s == story => Some(sha.clone()),
            _ => None,
        })
    }

    /// The last attempt of the story any round started (0: none).
    pub fn last_attempt(&self, epic: &str, story: &str) -> u32 {
        let subject = Subject::story(epic, story);
        self.records
            .iter()
            .filter_map(|r| match &r.entry {
                Entry::PhaseStarted {
                    subject: s,
                    attempt,
                    ..
                } if *s == subject => Some(*attempt),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    pub fn epic_finished(&self, epic: &str) -> bool {
        self.records
            .iter()
            .any(|r| matches!(&r.entry, Entry::EpicFinished { epic: e } if e == epic))
    }

    /// Why the run was closed without finishing, if it was.
    pub fn closed(&self) -> Option<&str> {
        self.records.iter().find_map(|r| match &r.entry {
            Entry::Closed { reason } => Some(reason.as_str()),
            _ => None,
        })
    }

    /// The checks recorded after `phase` of `attempt` of `subject`, if they ran.
    pub fn checks_run(
        &self,
        subject: &Subject,
        phase: &str,
        attempt: u32,
    ) -> Option<Vec<crate::checks::CheckResult>> {
        self.records.iter().rev().find_map(|r| match &r.entry {
            Entry::ChecksRun {
                subject: s,
                phase: p,
                attempt: a,
                results,
                ..
            } if s == subject && p == phase && *a == attempt => Some(results.clone()),
            _ => None,
        })
    }

    /// The staged tree of the last checks of `attempt` of `subject`, when they all passed.
    pub fn green_tree(&self, subject: &Subject, attempt: u32) -> Option<String> {
        self.records.iter().rev().find_map(|r| match &r.entry {
            Entry::ChecksRun {
                subject: s,
                attempt: a,
                results,
                tree,
                ..
            } if s == subject && *a == attempt => {
                if results.iter().all(|r| r.passed) {
                    tree.clone()
                } else {
                    None
                }
            }
            _ => None,
        })
    }
}
