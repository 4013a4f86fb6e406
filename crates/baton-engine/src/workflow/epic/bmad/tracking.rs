//! Where a project tracks its stories' statuses besides their files: its `sprint-status.yaml`
//! (found where the BMAD configuration says, in the usual places, else anywhere under
//! `docs/` and `_bmad-output/`), also for BMAD 6 spec folders whose story files leave their
//! status to it.

use std::path::{Path, PathBuf};

use super::{config, spec, sprint};
use crate::error::Result;

/// Where BMAD versions keep sprint-status.yaml when the configuration does not say.
const SPRINT_FILES: &[&str] = &[
    "docs/sprint-artifacts/sprint-status.yaml",
    "_bmad-output/implementation-artifacts/sprint-status.yaml",
];

/// How deep under `docs/` and `_bmad-output/` a sprint-status.yaml is looked for.
const FIND_DEPTH: usize = 5;

/// A spec folder as [`spec::load`] reads it, its stories' statuses completed from
/// sprint-status.yaml where the project keeps them there too.
pub fn load_spec(root: &Path, dir: &Path) -> Result<spec::SpecFolder> {
    let mut f = spec::load(root, dir)?;
    sprint_statuses(root, &mut f.stories);
    Ok(f)
}

/// Where the project keeps statuses in `sprint-status.yaml` too: a story file with no
/// frontmatter `status` takes the status of the key that is its file's name (`1-add-the-limiter`,
/// as classic keys are their story files' names). The file's own status always wins: it is
/// what bmad-build-auto writes.
fn sprint_statuses(root: &Path, stories: &mut [spec::SpecStory]) {
    if stories
        .iter()
        .all(|s| s.status.is_some() || s.file.is_none())
    {
        return;
    }
    let config = config::Config::load(root);
    let Some(sprint) = sprint_files(root, &config)
        .first()
        .and_then(|f| sprint::SprintStatus::load(f).ok())
    else {
        return;
    };
    for s in stories.iter_mut().filter(|s| s.status.is_none()) {
        let Some(stem) = s
            .file
            .as_ref()
            .and_then(|f| f.file_stem())
            .map(|n| n.to_string_lossy().into_owned())
        else {
            continue;
        };
        if let Some(e) = sprint.entries.iter().find(|e| e.key == stem) {
            s.status = Some(e.value.to_ascii_lowercase());
        }
    }
}

/// The project's `sprint-status.yaml` files, the one to use first: where its BMAD
/// configuration says, the usual places, else any under `docs/` and `_bmad-output/`.
pub fn sprint_files(root: &Path, config: &config::Config) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = config
        .sprint_file()
        .into_iter()
        .chain(SPRINT_FILES.iter().map(PathBuf::from))
        .map(|f| root.join(f))
        .filter(|p| p.is_file())
        .collect();
    found.dedup();
    if found.is_empty() {
        for d in ["docs", "_bmad-output"] {
            find_named(&root.join(d), 0, &mut found);
        }
    }
    found
}

fn find_named(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth >= FIND_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') {
            continue;
        }
        if p.is_dir() {
            find_named(&p, depth + 1, out);
        } else if matches!(name, "sprint-status.yaml" | "sprint-status.yml") {
            out.push(p);
        }
    }
}
