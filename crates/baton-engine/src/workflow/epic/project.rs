//! The engine's view of a BMAD project: an epic's stories (found by `bmad`, across the layouts
//! in use) and status changes written back where the project keeps them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::bmad::{self, Bmad, status::Status};
use super::{EpicRef, StatusWriter, StoryRef};
use crate::error::{Error, Result};

/// The stories of `epic` that have a file, in order. `epic` is an epic's id, or a BMAD 6 spec
/// folder (its path, or its name under the project's output folders).
pub fn load_epic(root: &Path, epic: &str) -> Result<EpicRef> {
    if let Some(dir) = bmad::spec::find(root, epic) {
        return load_spec_folder(root, &dir);
    }
    let n = bmad::id::parse_epic_arg(epic).ok_or_else(|| {
        let folders = bmad::spec::all(root);
        let found = if folders.is_empty() {
            String::new()
        } else {
            format!(
                "; spec folders found: {}",
                folders
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Error::invalid(format!("`{epic}` is neither an epic id nor a spec folder{found}"))
            .hint("epic ids are numbers, or decimal ones for inserted epics (baton run epic-execute 1, 3.5); a BMAD 6 spec folder is given by its path or name (a folder with stories.yaml)")
    })?;
    let scan = Bmad::scan(root);
    if let Some(u) = scan.unreadable_of(&n).first() {
        // A run without it would skip a story, or work from half an epic, and say nothing.
        let hint = if u.reason == super::bmad::EMPTY {
            "restore it (git restore FILE) or remove it, then run again"
        } else {
            "make it readable UTF-8 text (e.g. `iconv -f latin1 -t utf-8 FILE -o FILE`), then run again"
        };
        return Err(Error::invalid(format!(
            "{}: {}; it is a document of epic {n}",
            u.file.display(),
            u.reason
        ))
        .hint(hint));
    }
    let report = scan.epic(&n)?;
    // Two files of one story: the run would do the story twice.
    for s in &report.stories {
        if report.stories.iter().filter(|o| o.id == s.id).count() > 1 {
            scan.story_file(&s.id)?;
        }
    }
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
                blocked: None,
                spec_checkpoint: false,
                done_checkpoint: false,
            })
        })
        .collect();
    let missing = report
        .stories
        .iter()
        .filter(|s| !(s.created && s.file.is_some()))
        .map(|s| (s.id.to_string(), s.title.clone()))
        .collect();
    Ok(EpicRef {
        id: n.to_string(),
        path: report.epic_file.clone(),
        stories,
        missing,
        spec_dir: None,
    })
}

/// A spec folder as an epic: its stories in `stories.yaml` order, those with no story file yet
/// named as missing; the folder's name is the epic's id.
fn load_spec_folder(root: &Path, dir: &Path) -> Result<EpicRef> {
    let f = bmad::tracking::load_spec(root, dir)?;
    let mut stories = Vec::new();
    let mut missing = Vec::new();
    for s in f.stories {
        match s.file.clone() {
            Some(path) => stories.push(story_ref(s, path)),
            None => missing.push((s.id, s.title)),
        }
    }
    Ok(EpicRef {
        id: f.name,
        path: f.spec,
        stories,
        missing,
        spec_dir: Some(f.dir),
    })
}

/// A spec folder's story as a run's, its file at `path` (a story not planned yet: backlog).
pub(crate) fn story_ref(s: bmad::spec::SpecStory, path: PathBuf) -> StoryRef {
    StoryRef {
        status: match (&s.status, &s.file) {
            (Some(st), _) => Status::normalize(st).as_str().to_string(),
            (None, None) => "backlog".into(),
            (None, Some(_)) => "unknown".into(),
        },
        blocked: s.blocking.or_else(|| {
            (s.status.as_deref() == Some("blocked")).then(|| "no blocking condition given".into())
        }),
        id: s.id,
        title: s.title,
        path,
        spec_checkpoint: s.spec_checkpoint,
        done_checkpoint: s.done_checkpoint,
    }
}

/// Story statuses written in the story file's own form, and in sprint-status.yaml when the
/// project has one (so the two never drift apart). The project is scanned once, here: each
/// status change then writes two known files instead of rescanning every story folder.
pub struct BmadStatus {
    /// Relative to the project (or to a worktree of it).
    sprint_file: Option<PathBuf>,
    /// Story id → its key in sprint-status.yaml.
    sprint_keys: BTreeMap<String, String>,
    /// A spec folder's story file → its key there (the file's name), when the project keeps
    /// spec stories' statuses in sprint-status.yaml too.
    spec_keys: BTreeMap<PathBuf, String>,
    /// Epic id → its `epic-N-retrospective` key.
    retro_keys: BTreeMap<String, String>,
    sprint_error: Option<String>,
}

impl BmadStatus {
    pub fn new(root: &Path) -> BmadStatus {
        let scan = Bmad::scan(root);
        let mut sprint_keys = BTreeMap::new();
        let mut retro_keys = BTreeMap::new();
        let mut spec_keys = BTreeMap::new();
        if let Some(sp) = &scan.sprint {
            for e in &sp.entries {
                if let bmad::sprint::SprintKey::Retro(n) = &e.kind {
                    retro_keys.insert(n.to_string(), e.key.clone());
                }
            }
            for st in &scan.stories {
                let stem = st.path.file_stem().and_then(|s| s.to_str());
                if let Some(e) = sp.for_story(&st.id, stem) {
                    sprint_keys.insert(st.id.to_string(), e.key.clone());
                }
            }
            for dir in bmad::spec::all(root) {
                let files = std::fs::read_dir(root.join(&dir).join("stories"))
                    .into_iter()
                    .flatten()
                    .flatten();
                for f in files {
                    let name = f.file_name().to_string_lossy().into_owned();
                    let Some(stem) = name.strip_suffix(".md") else {
                        continue;
                    };
                    if sp.entries.iter().any(|e| e.key == stem) {
                        spec_keys.insert(dir.join("stories").join(&name), stem.to_string());
                    }
                }
            }
        }
        BmadStatus {
            sprint_file: scan.sprint.as_ref().map(|s| s.path.clone()),
            sprint_keys,
            spec_keys,
            retro_keys,
            sprint_error: scan.sprint_error.clone(),
        }
    }

    /// A sprint-status.yaml that cannot be read refuses every status update: checked before a
    /// run starts, so no story is left half-moved.
    pub fn check(&self) -> Result<()> {
        match &self.sprint_error {
            Some(e) => Err(Error::state(e.clone()).hint("fix sprint-status.yaml first")),
            None => Ok(()),
        }
    }
}

impl StatusWriter for BmadStatus {
    fn set_story_status(&self, dir: &Path, story: &StoryRef, status: &str) -> Result<()> {
        self.check()?;
        bmad::status::write_file(&dir.join(&story.path), &Status::normalize(status))
    }

    fn set_shared_status(&self, dir: &Path, story: &StoryRef, status: &str) -> Result<()> {
        self.check()?;
        let key = self
            .spec_keys
            .get(&story.path)
            .or_else(|| self.sprint_keys.get(&story.id));
        if let (Some(file), Some(key)) = (&self.sprint_file, key) {
            bmad::sprint::write(&dir.join(file), key, Status::normalize(status).as_str())?;
        }
        Ok(())
    }

    fn status_files(&self) -> Vec<PathBuf> {
        self.sprint_file.iter().cloned().collect()
    }

    fn set_retro_done(&self, dir: &Path, epic: &str) -> Result<Option<PathBuf>> {
        self.check()?;
        if let (Some(file), Some(key)) = (&self.sprint_file, self.retro_keys.get(epic))
            && bmad::sprint::write(&dir.join(file), key, "done")?
        {
            return Ok(Some(file.clone()));
        }
        Ok(None)
    }
}
