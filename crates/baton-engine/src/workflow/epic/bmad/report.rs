//! One epic's report: its stories (with a file or only planned), their statuses beside
//! sprint-status.yaml's, and what could not be read.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde::Serialize;

use super::id::{self, EpicId, StoryId};
use super::sprint::{self, SprintKey};
use super::status::{Status, StatusForm};
use super::{Bmad, Skipped};
use crate::error::{Error, Result};

impl Bmad {
    /// The epic a story belongs to (see [`StoryId::epic_in`]).
    pub fn epic_of(&self, id: &StoryId) -> EpicId {
        id.epic_in(&self.declared)
    }

    /// Every epic the project mentions anywhere, in order.
    pub fn epic_ids(&self) -> Vec<EpicId> {
        let mut v: BTreeSet<EpicId> = self.epics.keys().cloned().collect();
        v.extend(self.declared.iter().cloned());
        v.extend(self.stories.iter().map(|s| self.epic_of(&s.id)));
        v.extend(self.planned.iter().map(|s| self.epic_of(&s.id)));
        if let Some(sp) = &self.sprint {
            for e in &sp.entries {
                match &e.kind {
                    SprintKey::Epic(n) | SprintKey::Retro(n) => {
                        v.insert(n.clone());
                    }
                    SprintKey::Story(id) => {
                        v.insert(self.epic_of(id));
                    }
                    SprintKey::Other => {}
                }
            }
        }
        v.into_iter().collect()
    }

    /// `NotFound`, naming the epics that exist and a real story of one of them.
    pub fn epic_not_found(&self, asked: &str) -> Error {
        let known = self.epic_ids();
        if known.is_empty() {
            return Error::not_found(format!(
                "epic {asked} not found: no BMAD epics or stories in this project"
            ))
            .hint("stories are looked for under docs/stories, docs/sprint-artifacts and _bmad-output/implementation-artifacts (and the folders _bmad/bmm/config.yaml or .bmad-core/core-config.yaml name)");
        }
        let list = known
            .iter()
            .map(EpicId::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        // A real example: a story of a decimal epic if there is one (the surprising case).
        let example = self
            .stories
            .iter()
            .rev()
            .map(|s| (&s.id, self.epic_of(&s.id)))
            .max_by_key(|(id, e)| (e.is_decimal(), id.parts().len()));
        let hint = match example {
            Some((id, e)) => format!(
                "see an epic's stories with `baton stories {}`; a story's id starts with its epic's: story {id} is in epic {e}",
                known[0]
            ),
            None => format!("see an epic's stories with `baton stories {}`", known[0]),
        };
        Error::not_found(format!("epic {asked} not found; epics found: {list}")).hint(hint)
    }

    /// The story and epic documents of epic `n` that cannot be read.
    pub fn unreadable_of(&self, n: &EpicId) -> Vec<&super::Unreadable> {
        self.unreadable
            .iter()
            .filter(|u| match &u.of {
                super::Owner::Story(id) => self.epic_of(id) == *n,
                super::Owner::Epic(e) => e == n,
                super::Owner::AllEpics => true,
            })
            .collect()
    }

    /// The report of one epic; `NotFound` (listing the epics that exist) if the project
    /// mentions no such epic.
    pub fn epic(&self, n: &EpicId) -> Result<EpicReport> {
        if !self.epic_ids().contains(n) {
            return Err(self.epic_not_found(&n.to_string()));
        }
        let info = self.epics.get(n).cloned().unwrap_or_default();
        let sprint = self.sprint.as_ref();
        let mut stories = Vec::new();
        for s in self.stories.iter().filter(|s| self.epic_of(&s.id) == *n) {
            let entry = sprint.and_then(|sp| sp.for_story(&s.id, s.stem()));
            let file_status = s.status.as_ref().map(|f| &f.status);
            let disagreement = entry.and_then(|e| {
                let sp = Status::normalize(&e.value);
                match file_status {
                    None => Some(format!(
                        "story file has no status; sprint-status says {}",
                        e.value
                    )),
                    Some(fs) if *fs != sp => Some(format!(
                        "story file says {fs}, sprint-status says {}",
                        e.value
                    )),
                    _ => None,
                }
            });
            let planned_title = self.planned.iter().find(|p| p.id == s.id).map(|p| &p.title);
            stories.push(StoryEntry {
                id: s.id.clone(),
                title: if s.title.is_empty() {
                    planned_title.cloned().unwrap_or_default()
                } else {
                    s.title.clone()
                },
                created: true,
                file: Some(s.path.clone()),
                listed_in: None,
                status: s.status.as_ref().map(|f| f.status.clone()),
                status_raw: s.status.as_ref().map(|f| f.raw.clone()),
                status_form: s.status.as_ref().map(|f| f.form),
                sprint_key: entry.map(|e| e.key.clone()),
                sprint_status: entry.map(|e| e.value.clone()),
                disagreement,
                notes: s.notes.clone(),
            });
        }
        let has_file = |id: &StoryId| self.stories.iter().any(|s| s.id == *id);
        let mut seen: Vec<StoryId> = Vec::new();
        for p in self.planned.iter().filter(|p| self.epic_of(&p.id) == *n) {
            if has_file(&p.id) || seen.contains(&p.id) {
                continue;
            }
            seen.push(p.id.clone());
            let entry = sprint.and_then(|sp| sp.for_story(&p.id, None));
            stories.push(not_created(
                p.id.clone(),
                p.title.clone(),
                Some(format!("{} line {}", p.file.display(), p.line)),
                entry,
            ));
        }
        if let Some(sp) = sprint {
            for e in &sp.entries {
                if let SprintKey::Story(id) = &e.kind
                    && self.epic_of(id) == *n
                    && !has_file(id)
                    && !seen.contains(id)
                {
                    seen.push(id.clone());
                    let slug = id::from_file_stem(&e.key)
                        .map(|(_, s)| s)
                        .unwrap_or_default();
                    stories.push(not_created(
                        id.clone(),
                        slug.replace(['-', '_'], " ").trim().to_string(),
                        Some(sp.path.display().to_string()),
                        Some(e),
                    ));
                }
            }
        }
        stories.sort_by(|a, b| a.id.cmp(&b.id).then_with(|| a.file.cmp(&b.file)));
        let mut warnings = self.warnings.clone();
        warnings.extend(self.sprint_error.clone());
        Ok(EpicReport {
            epic: n.clone(),
            title: info.title,
            epic_file: info.file,
            sprint_file: sprint.map(|s| s.path.clone()),
            sprint_epic_status: sprint.and_then(|s| s.for_epic(n)).map(|e| e.value.clone()),
            sprint_retro_key: sprint.and_then(|s| s.for_retro(n)).map(|e| e.key.clone()),
            stories,
            skipped: self.skipped.clone(),
            warnings,
        })
    }
}

fn not_created(
    id: StoryId,
    title: String,
    listed_in: Option<String>,
    entry: Option<&sprint::SprintEntry>,
) -> StoryEntry {
    let disagreement = entry.and_then(|e| {
        let s = Status::normalize(&e.value);
        (s != Status::Backlog)
            .then(|| format!("sprint-status says {} but there is no story file", e.value))
    });
    StoryEntry {
        id,
        title,
        created: false,
        file: None,
        listed_in,
        status: None,
        status_raw: None,
        status_form: None,
        sprint_key: entry.map(|e| e.key.clone()),
        sprint_status: entry.map(|e| e.value.clone()),
        disagreement,
        notes: Vec::new(),
    }
}

/// One line of the epic's story list.
#[derive(Debug, Clone, Serialize)]
pub struct StoryEntry {
    pub id: StoryId,
    pub title: String,
    /// False for a story listed in the epic or sprint-status.yaml that has no file yet.
    pub created: bool,
    pub file: Option<PathBuf>,
    /// Where a story that is not created is listed (`docs/epics.md line 12`).
    pub listed_in: Option<String>,
    pub status: Option<Status>,
    pub status_raw: Option<String>,
    pub status_form: Option<StatusForm>,
    pub sprint_key: Option<String>,
    pub sprint_status: Option<String>,
    /// Set when the story file and sprint-status.yaml disagree: neither is silently picked.
    pub disagreement: Option<String>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EpicReport {
    pub epic: EpicId,
    pub title: String,
    pub epic_file: Option<PathBuf>,
    pub sprint_file: Option<PathBuf>,
    pub sprint_epic_status: Option<String>,
    /// The epic's `epic-N-retrospective` key in sprint-status.yaml.
    pub sprint_retro_key: Option<String>,
    pub stories: Vec<StoryEntry>,
    pub skipped: Vec<Skipped>,
    pub warnings: Vec<String>,
}
