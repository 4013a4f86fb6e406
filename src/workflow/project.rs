//! The engine's view of a BMAD project: an epic's stories (found by `bmad`, across the layouts
//! in use) and status changes written back where the project keeps them.

use std::path::{Path, PathBuf};

use super::bmad::{self, Bmad, id::StoryId, status::Status};
use super::epic::{EpicRef, StatusWriter, StoryRef};
use crate::error::{Error, Result};

/// The stories of `epic` that have a file, in order.
pub fn load_epic(root: &Path, epic: &str) -> Result<EpicRef> {
    let n = bmad::id::parse_epic_arg(epic).ok_or_else(|| {
        Error::invalid(format!("`{epic}` is not an epic id"))
            .hint("epic ids are numbers: baton run epic-execute 1")
    })?;
    let scan = Bmad::scan(root);
    let report = scan.epic(n)?;
    let stories = report
        .stories
        .iter()
        .filter_map(|s| {
            let path = s.file.clone().filter(|_| s.created)?;
            Some(StoryRef {
                id: s.id.to_string(),
                title: s.title.clone(),
                path,
                status: s
                    .status
                    .as_ref()
                    .map_or_else(|| "unknown".to_string(), |st| st.as_str().to_string()),
            })
        })
        .collect();
    Ok(EpicRef {
        id: n.to_string(),
        path: report.epic_file.clone(),
        stories,
    })
}

/// Story statuses written in the story file's own form, and in sprint-status.yaml when the
/// project has one (so the two never drift apart).
pub struct BmadStatus {
    root: PathBuf,
    sprint_file: Option<PathBuf>,
}

impl BmadStatus {
    pub fn new(root: &Path) -> BmadStatus {
        let scan = Bmad::scan(root);
        BmadStatus {
            root: root.to_path_buf(),
            sprint_file: scan.sprint.as_ref().map(|s| s.path.clone()),
        }
    }
}

impl StatusWriter for BmadStatus {
    fn set_status(&self, story: &StoryRef, status: &str) -> Result<()> {
        let id = StoryId::parse(&story.id)
            .ok_or_else(|| Error::invalid(format!("`{}` is not a story id", story.id)))?;
        bmad::set_story_status(&self.root, &id, &Status::normalize(status)).map(|_| ())
    }

    fn status_files(&self) -> Vec<PathBuf> {
        self.sprint_file.iter().cloned().collect()
    }
}
