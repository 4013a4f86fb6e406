//! What a run event and a journal record are about: an epic, a story, a task (or one unit of
//! it), a verify item.

use serde::{Deserialize, Serialize};

/// What a subject is called by the engine that runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubjectKind {
    /// epic-execute's epic-level phases (UAT, retro).
    Epic,
    /// A story of an epic.
    Story,
    /// A task of the store (orchestrate, poc, graduate).
    Task,
    /// An item of a verify queue.
    Item,
}

impl SubjectKind {
    pub fn word(self) -> &'static str {
        match self {
            SubjectKind::Epic => "epic",
            SubjectKind::Story => "story",
            SubjectKind::Task => "task",
            SubjectKind::Item => "item",
        }
    }
}

/// What a phase works on, named with its engine's own word: story 1.2 (of epic 1), task
/// add-login (spec task 3), item BMNR.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Subject {
    pub kind: SubjectKind,
    pub id: String,
    /// A story's epic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epic: Option<String>,
    /// The unit of a task being worked on in parallel (a spec task's id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

impl Subject {
    pub fn epic(id: &str) -> Subject {
        Subject {
            kind: SubjectKind::Epic,
            id: id.to_string(),
            epic: None,
            unit: None,
        }
    }

    pub fn story(epic: &str, id: &str) -> Subject {
        Subject {
            kind: SubjectKind::Story,
            id: id.to_string(),
            epic: Some(epic.to_string()),
            unit: None,
        }
    }

    pub fn task(slug: &str, unit: Option<&str>) -> Subject {
        Subject {
            kind: SubjectKind::Task,
            id: slug.to_string(),
            epic: None,
            unit: unit.map(Into::into),
        }
    }

    pub fn item(id: &str) -> Subject {
        Subject {
            kind: SubjectKind::Item,
            id: id.to_string(),
            epic: None,
            unit: None,
        }
    }

    /// `story 1.2`, `task add-login#3`, `item BMNR`.
    pub fn label(&self) -> String {
        match &self.unit {
            Some(u) => format!("{} {}#{u}", self.kind.word(), self.id),
            None => format!("{} {}", self.kind.word(), self.id),
        }
    }
}

/// How a story, task or verify item ended in a run: what the journal records (and `--resume`
/// reads back), the progress events say and `status` counts, one spelling everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubjectResult {
    Done,
    Failed,
    /// A story left out (`--start-from`, `--only`) or not run because one it depends on failed.
    Skipped,
    /// A story of a `--dry-run`: its prompts were written, no agent ran.
    DryRun,
    /// A task shelved at a gate.
    Shelved,
    /// A task cancelled at a gate.
    Cancelled,
}

impl SubjectResult {
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectResult::Done => "done",
            SubjectResult::Failed => "failed",
            SubjectResult::Skipped => "skipped",
            SubjectResult::DryRun => "dry-run",
            SubjectResult::Shelved => "shelved",
            SubjectResult::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for SubjectResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every result is written as the word the journal has always held, and read back: a
    /// journal of an earlier baton resumes.
    #[test]
    fn results_keep_the_journals_words() {
        let all = [
            (SubjectResult::Done, "done"),
            (SubjectResult::Failed, "failed"),
            (SubjectResult::Skipped, "skipped"),
            (SubjectResult::DryRun, "dry-run"),
            (SubjectResult::Shelved, "shelved"),
            (SubjectResult::Cancelled, "cancelled"),
        ];
        for (r, word) in all {
            assert_eq!(r.as_str(), word);
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{word}\""));
            let back: SubjectResult = serde_json::from_str(&format!("\"{word}\"")).unwrap();
            assert_eq!(back, r);
        }
        assert!(serde_json::from_str::<SubjectResult>("\"complete\"").is_err());
    }
}
