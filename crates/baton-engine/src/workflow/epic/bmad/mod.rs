//! Reading a BMAD project as it is: its epics, their stories, each story's status, and
//! sprint-status.yaml — across the v4 and v6 layouts in use. The run engine builds on this.
//!
//! Where things are looked for (paths relative to the project directory):
//! - story files: `*.md` under `docs/stories/`, `docs/sprint-artifacts/` and
//!   `_bmad-output/implementation-artifacts/`, recursively (5 levels; hidden entries skipped);
//! - epics: `epics.md` and `epic-N*.md` in `docs/`, `docs/epics/`, `docs/prd/`,
//!   `_bmad-output/planning-artifacts/` and its `epics/`; `Epic N: …` (or `Epic 3.5: …`)
//!   headings name epics and `Story N.M: …` headings list their stories (at any level, also
//!   in one combined file). An epic's own file inside a story folder (`stories/epic-3.5/
//!   epic-3.5-help-overlay.md`) counts as well, and a story folder named `epic-3.5` declares
//!   that decimal epic (see [`id`] for which epic a three-part story id belongs to);
//! - sprint-status.yaml: `docs/sprint-artifacts/`, `_bmad-output/implementation-artifacts/`,
//!   else the first `sprint-status.yaml|yml` found under `docs/` or `_bmad-output/`;
//! - besides these, the folders the project's BMAD configuration names (see [`config`]).
//!
//! Which files are stories (see [`classify`]): a file whose first heading is a story title
//! (`Story 1.2: …`) is a story, whatever its name. Otherwise its name must carry a story id
//! (`1.2.slug`, `1.14-slug`, `story-1.2`, `1-2-slug`, `3-5-0-slug`), and neither that name
//! nor its title may name another kind of document (README, test plan, test design,
//! validation, report, retro(spective), checklist, summary, notes, index, template, handoff,
//! UAT, tech spec, context). Everything else in a story folder is reported as skipped, with
//! the reason.

pub mod config;
pub mod deferred;
pub mod id;
mod report;
pub mod spec;
pub mod sprint;
pub mod status;
pub mod tracking;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use baton_core::markdown;
pub use id::{EpicId, StoryId};
pub use report::{EpicReport, StoryEntry};
use sprint::{SprintKey, SprintStatus};
pub use status::{Status, StatusField, StatusForm};

const STORY_DIRS: &[&str] = &[
    "docs/stories",
    "docs/sprint-artifacts",
    "_bmad-output/implementation-artifacts",
];
const EPIC_DIRS: &[&str] = &[
    "docs",
    "docs/epics",
    "docs/prd",
    "_bmad-output/planning-artifacts",
    "_bmad-output/planning-artifacts/epics",
];
const MAX_DEPTH: usize = 5;

/// Words that mark a file as some other kind of document (one word, or two joined by `-`).
const NOT_STORY: &[&str] = &[
    "readme",
    "test-plan",
    "testplan",
    "test-design",
    "test-strategy",
    "validation",
    "report",
    "retro",
    "retrospective",
    "checklist",
    "summary",
    "notes",
    "index",
    "template",
    "handoff",
    "uat",
    "tech-spec",
    "context",
];

/// The first word (or word pair) of `text` that names a non-story document.
fn not_story_word(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        let pair = words.get(i + 1).map(|n| format!("{w}-{n}"));
        if let Some(hit) = NOT_STORY
            .iter()
            .find(|k| **k == *w || pair.as_deref() == Some(**k))
        {
            return Some(hit);
        }
    }
    None
}

/// A story file found on disk.
#[derive(Debug, Clone)]
pub struct StoryFile {
    pub id: StoryId,
    pub title: String,
    /// Relative to the project directory.
    pub path: PathBuf,
    pub status: Option<StatusField>,
    pub notes: Vec<String>,
}

impl StoryFile {
    fn stem(&self) -> Option<&str> {
        self.path.file_stem().and_then(|s| s.to_str())
    }
}

/// A story listed in an epic document (`### Story 1.3: …`).
#[derive(Debug, Clone)]
pub struct PlannedStory {
    pub id: StoryId,
    pub title: String,
    pub file: PathBuf,
    pub line: usize,
}

#[derive(Debug, Clone, Default)]
pub struct EpicInfo {
    pub title: String,
    /// The epic's own file, or the combined file holding its heading.
    pub file: Option<PathBuf>,
}

/// A file in a story folder that is not a story.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub file: PathBuf,
    pub reason: String,
}

/// Why an empty story file cannot be used.
pub const EMPTY: &str = "empty file";

/// A story or epic document that cannot be read as text (not UTF-8, no permission): what it
/// is, told from its name and what can be read of it. A run of its epic is refused rather
/// than run without it.
#[derive(Debug, Clone)]
pub struct Unreadable {
    pub file: PathBuf,
    pub reason: String,
    pub of: Owner,
}

/// Whose document an unreadable file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    Story(StoryId),
    Epic(EpicId),
    /// `epics.md`: every epic's.
    AllEpics,
}

/// Everything found in a project.
#[derive(Debug, Default)]
pub struct Bmad {
    pub root: PathBuf,
    /// Sorted by id, then path.
    pub stories: Vec<StoryFile>,
    pub planned: Vec<PlannedStory>,
    pub epics: BTreeMap<EpicId, EpicInfo>,
    /// Decimal epics the project declares (headings, files, folders, sprint keys): a
    /// three-part story id `3.5.0` is theirs.
    pub declared: BTreeSet<EpicId>,
    /// The project's BMAD configuration.
    pub config: config::Config,
    /// Epic files found in story folders.
    epic_docs: Vec<PathBuf>,
    pub skipped: Vec<Skipped>,
    pub sprint: Option<SprintStatus>,
    /// The sprint-status file that could not be read, and why (it is then ignored).
    pub sprint_error: Option<String>,
    /// Things worth telling that are not errors: unreadable folders, extra sprint files.
    pub warnings: Vec<String>,
    /// Story and epic documents that cannot be read.
    pub unreadable: Vec<Unreadable>,
}

/// What a file in a story folder is.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// A story: its id, its title, and a note when the name's and the title's ids differ.
    Story(StoryId, String, Option<String>),
    NotStory(String),
}

/// Decide whether a Markdown file is a story, from its file stem and its text. The rule is in
/// the module documentation.
pub fn classify(stem: &str, text: &str) -> Kind {
    let heading = markdown::sections(text).into_iter().next().map(|s| s.title);
    let from_name = id::from_file_stem(stem);
    if let Some(t) = heading.as_deref().and_then(id::from_title)
        && (t.explicit || not_story_word(&t.title).is_none())
    {
        let note = match &from_name {
            Some((n, _)) if *n != t.id => Some(format!(
                "file name says {n}, title says {}: the title's id is used",
                t.id
            )),
            _ => None,
        };
        let title = if t.title.is_empty() {
            heading.clone().unwrap_or_default()
        } else {
            t.title
        };
        return Kind::Story(t.id, title, note);
    }
    let Some((fid, slug)) = from_name else {
        return Kind::NotStory("no story id in the file name or the title".into());
    };
    if let Some(w) = not_story_word(&slug) {
        return Kind::NotStory(format!("the file name marks a {w}, not a story"));
    }
    if let Some(h) = &heading
        && let Some(w) = not_story_word(h)
    {
        return Kind::NotStory(format!("the title \"{h}\" marks a {w}, not a story"));
    }
    let title = heading.unwrap_or_else(|| slug.replace(['-', '_'], " ").trim().to_string());
    Kind::Story(fid, title, None)
}

/// An epic's own document: named `epic-N…` (and no other kind of document), or titled
/// `Epic N: …`.
fn is_epic_doc(stem: &str, text: &str) -> bool {
    let named =
        id::epic_from_file_stem(stem).is_some_and(|(_, slug)| not_story_word(&slug).is_none());
    let titled = markdown::sections(text).first().is_some_and(|s| {
        id::epic_from_title(&s.title).is_some_and(|(_, t)| not_story_word(&t).is_none())
    });
    named || titled
}

/// Sort key of a story: its epic, then its id.
fn b_key(declared: &BTreeSet<EpicId>, id: &StoryId) -> (EpicId, StoryId) {
    (id.epic_in(declared), id.clone())
}

fn rel(root: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(root).unwrap_or(p).to_path_buf()
}

/// Read a file as text, or say why not, with what could be read of it (to tell what it is).
fn read_text(path: &Path) -> std::result::Result<String, (String, String)> {
    let bytes = std::fs::read(path).map_err(|e| (format!("cannot read: {e}"), String::new()))?;
    String::from_utf8(bytes).map_err(|e| {
        let why = format!(
            "not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        );
        (why, String::from_utf8_lossy(e.as_bytes()).into_owned())
    })
}

impl Bmad {
    /// Scan the project at `root`. Never fails: what cannot be read becomes a skipped file or
    /// a warning, so one bad file never hides the rest of the project.
    pub fn scan(root: &Path) -> Bmad {
        let mut b = Bmad {
            root: root.to_path_buf(),
            config: config::Config::load(root),
            ..Bmad::default()
        };
        b.warnings.extend(b.config.warnings.clone());
        let mut files = Vec::new();
        let dirs: Vec<PathBuf> = STORY_DIRS
            .iter()
            .map(PathBuf::from)
            .chain(b.config.story_dirs())
            .collect();
        for d in dirs {
            let dir = root.join(d);
            if dir.is_dir() {
                b.walk(&dir, 0, &mut files);
            }
        }
        files.sort();
        files.dedup();
        for f in files {
            b.read_story(&f);
        }
        b.stories
            .sort_by(|x, y| x.id.cmp(&y.id).then_with(|| x.path.cmp(&y.path)));
        b.mark_duplicates();
        b.read_epics();
        b.find_sprint();
        b.declare_epics();
        b.stories.sort_by(|x, y| {
            b_key(&b.declared, &x.id)
                .cmp(&b_key(&b.declared, &y.id))
                .then_with(|| x.path.cmp(&y.path))
        });
        b
    }

    /// Decimal epics the project names anywhere.
    fn declare_epics(&mut self) {
        let mut d: BTreeSet<EpicId> = self
            .epics
            .keys()
            .filter(|e| e.is_decimal())
            .cloned()
            .collect();
        d.extend(std::mem::take(&mut self.declared));
        if let Some(sp) = &self.sprint {
            for e in &sp.entries {
                if let SprintKey::Epic(n) | SprintKey::Retro(n) = &e.kind
                    && n.is_decimal()
                {
                    d.insert(n.clone());
                }
            }
        }
        self.declared = d;
    }

    fn walk(&mut self, dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                self.warnings.push(format!(
                    "cannot read folder {}: {e}",
                    rel(&self.root, dir).display()
                ));
                return;
            }
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let hidden = p
                .file_name()
                .and_then(|n| n.to_str())
                .is_none_or(|n| n.starts_with('.'));
            if hidden {
                continue;
            }
            // A story, epic or folder that resolves outside the project (a symlink to
            // elsewhere) is never given to an agent nor written: skipped, with a warning.
            // Only a symlink can lead out: the walk starts inside and skips any that do.
            let link = p
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink());
            let outside = link
                && match (p.canonicalize(), self.root.canonicalize()) {
                    (Ok(real), Ok(root)) => !real.starts_with(root),
                    // Broken or looping: reported as unreadable below.
                    _ => false,
                };
            if outside {
                self.warnings.push(format!(
                    "{} leads outside the project (a symlink): skipped",
                    rel(&self.root, &p).display()
                ));
                continue;
            }
            // Follows symbolic links; a broken or looping one is reported, and the depth
            // limit bounds any cycle.
            match std::fs::metadata(&p) {
                Ok(m) if m.is_dir() => {
                    // `stories/epic-3.5/`: a folder of a decimal epic's stories.
                    if let Some((e, _)) = p
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(id::epic_from_file_stem)
                        && e.is_decimal()
                    {
                        self.declared.insert(e);
                    }
                    if depth + 1 < MAX_DEPTH {
                        self.walk(&p, depth + 1, out);
                    }
                }
                Ok(_) => {
                    if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("md")) {
                        out.push(p);
                    }
                }
                Err(e) => self.warnings.push(format!(
                    "cannot read {}: {e}",
                    rel(&self.root, &p).display()
                )),
            }
        }
    }

    fn read_story(&mut self, path: &Path) {
        let file = rel(&self.root, path);
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        // An empty story file is a story lost (a truncating write, a bad merge): as
        // unreadable as one that is not text.
        let text = match read_text(path).and_then(|t| {
            if t.trim().is_empty() {
                Err((EMPTY.to_string(), t))
            } else {
                Ok(t)
            }
        }) {
            Ok(t) => t,
            Err((reason, partial)) => {
                // Whose it is, by what can be read, else by its name alone (a name's
                // "notes" or "review" cannot be weighed against a title that is not there).
                let of = match classify(stem, &partial) {
                    Kind::Story(id, ..) => Some(Owner::Story(id)),
                    Kind::NotStory(_) if is_epic_doc(stem, &partial) => {
                        id::epic_from_file_stem(stem).map(|(n, _)| Owner::Epic(n))
                    }
                    Kind::NotStory(_) => id::from_file_stem(stem).map(|(id, _)| Owner::Story(id)),
                };
                if let Some(of) = of {
                    self.unreadable.push(Unreadable {
                        file: file.clone(),
                        reason: reason.clone(),
                        of,
                    });
                }
                self.skipped.push(Skipped { file, reason });
                return;
            }
        };
        match classify(stem, &text) {
            Kind::Story(id, title, note) => self.stories.push(StoryFile {
                id,
                title,
                path: file,
                status: status::find(&text),
                notes: note.into_iter().collect(),
            }),
            Kind::NotStory(_) if is_epic_doc(stem, &text) => {
                self.epic_docs.push(path.to_path_buf())
            }
            Kind::NotStory(reason) => self.skipped.push(Skipped { file, reason }),
        }
    }

    /// Two files claiming one id: both are listed, each naming the other.
    fn mark_duplicates(&mut self) {
        let paths: Vec<(StoryId, PathBuf)> = self
            .stories
            .iter()
            .map(|s| (s.id.clone(), s.path.clone()))
            .collect();
        for s in &mut self.stories {
            for (id, p) in &paths {
                if *id == s.id && *p != s.path {
                    s.notes
                        .push(format!("duplicate: {} also has id {id}", p.display()));
                }
            }
        }
    }

    fn read_epics(&mut self) {
        let mut docs = Vec::new();
        let dirs: Vec<PathBuf> = EPIC_DIRS
            .iter()
            .map(PathBuf::from)
            .chain(self.config.epic_dirs())
            .collect();
        let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
        for d in dirs {
            let Ok(entries) = std::fs::read_dir(self.root.join(d)) else {
                continue;
            };
            let mut paths: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for p in paths {
                let Some(stem) = p.file_stem().and_then(|s| s.to_str()) else {
                    continue;
                };
                if !p.extension().is_some_and(|e| e.eq_ignore_ascii_case("md"))
                    || !p.is_file()
                    || !seen.insert(p.clone())
                {
                    continue;
                }
                let lower = stem.to_lowercase();
                if lower == "epics" {
                    docs.push((p, None));
                } else if let Some((n, slug)) = id::epic_from_file_stem(stem)
                    && not_story_word(&slug).is_none()
                {
                    docs.push((p, Some((n, slug))));
                }
            }
        }
        // Epic files found among the stories (an inserted epic's own file in its folder).
        for p in std::mem::take(&mut self.epic_docs) {
            if seen.insert(p.clone()) {
                let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                let from_name = id::epic_from_file_stem(stem);
                docs.push((p, from_name));
            }
        }
        for (p, from_name) in docs {
            let file = rel(&self.root, &p);
            let text = match read_text(&p) {
                Ok(t) => t,
                Err((why, _)) => {
                    self.warnings
                        .push(format!("epic file {}: {why}; ignored", file.display()));
                    self.unreadable.push(Unreadable {
                        file,
                        reason: why,
                        of: from_name.map_or(Owner::AllEpics, |(n, _)| Owner::Epic(n)),
                    });
                    continue;
                }
            };
            let sections = markdown::sections(&text);
            let mut named_here = false;
            for s in &sections {
                if let Some((n, title)) = id::epic_from_title(&s.title) {
                    named_here |= Some(&n) == from_name.as_ref().map(|f| &f.0);
                    let e = self.epics.entry(n).or_default();
                    if e.file.is_none() {
                        e.file = Some(file.clone());
                        e.title = title;
                    }
                } else if let Some(t) = id::from_title(&s.title) {
                    self.planned.push(PlannedStory {
                        id: t.id,
                        title: t.title,
                        file: file.clone(),
                        line: s.start_line,
                    });
                }
            }
            if let Some((n, slug)) = from_name
                && !named_here
            {
                let e = self.epics.entry(n).or_default();
                if e.file.is_none() {
                    e.file = Some(file.clone());
                    e.title = sections
                        .first()
                        .map(|s| s.title.clone())
                        .unwrap_or_else(|| slug.replace(['-', '_'], " "));
                }
            }
        }
        self.planned.sort_by(|a, b| a.id.cmp(&b.id));
    }

    fn find_sprint(&mut self) {
        let found = tracking::sprint_files(&self.root, &self.config);
        let Some(first) = found.first().cloned() else {
            return;
        };
        for other in &found[1..] {
            self.warnings.push(format!(
                "also found {}; using {}",
                rel(&self.root, other).display(),
                rel(&self.root, &first).display()
            ));
        }
        match SprintStatus::load(&first) {
            Ok(mut s) => {
                s.path = rel(&self.root, &s.path);
                self.sprint = Some(s);
            }
            Err(e) => {
                let e = relative_error(&self.root, e);
                self.sprint_error = Some(format!("{e}; sprint-status ignored"));
            }
        }
    }

    /// The one story file with this id; an error if there is none or more than one.
    pub fn story_file(&self, id: &StoryId) -> Result<&StoryFile> {
        let found: Vec<&StoryFile> = self.stories.iter().filter(|s| s.id == *id).collect();
        match found.as_slice() {
            [one] => Ok(one),
            [] => Err(Error::not_found(format!("story {id} has no story file"))),
            many => Err(Error::state(format!(
                "story {id} has {} story files: {}",
                many.len(),
                many.iter()
                    .map(|s| s.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .hint("remove or rename the stale copy")),
        }
    }
}

/// Errors name files relative to the project, as the rest of the report does.
fn relative_error(root: &Path, e: Error) -> Error {
    use baton_core::Error as Shared;
    match e {
        Error::Fault(Shared::Corrupt {
            path,
            line,
            msg,
            hint,
        }) => Error::Fault(Shared::Corrupt {
            path: rel(root, &path),
            line,
            msg,
            hint,
        }),
        Error::Fault(Shared::Io { path, source }) => Error::Fault(Shared::Io {
            path: rel(root, &path),
            source,
        }),
        other => other,
    }
}

/// What [`set_story_status`] changed.
#[derive(Debug, Clone, Serialize)]
pub struct StatusUpdate {
    pub story_file: PathBuf,
    /// `(file, key)` of the sprint-status entry updated with it, if there was one.
    pub sprint: Option<(PathBuf, String)>,
}

/// Move a story to `status`: its story file (in the file's own form) and, when it has one,
/// its sprint-status.yaml entry, so the two never drift. A sprint-status.yaml that cannot be
/// parsed stops the update before anything is written.
pub fn set_story_status(root: &Path, id: &StoryId, status: &Status) -> Result<StatusUpdate> {
    let b = Bmad::scan(root);
    let story = b.story_file(id)?;
    if let Some(e) = &b.sprint_error {
        return Err(Error::state(e.clone()).hint("fix sprint-status.yaml first"));
    }
    let entry = b.sprint.as_ref().and_then(|sp| {
        sp.for_story(id, story.stem())
            .map(|e| (sp.path.clone(), e.key.clone()))
    });
    status::write_file(&root.join(&story.path), status)?;
    let mut sprint = None;
    if let Some((path, key)) = entry
        && sprint::write(&root.join(&path), &key, status.as_str())?
    {
        sprint = Some((path, key));
    }
    Ok(StatusUpdate {
        story_file: story.path.clone(),
        sprint,
    })
}

/// `text` read as YAML, or the line and what is wrong. A control char YAML does not allow in a
/// stream is refused first: the YAML reader takes a NUL for the stream's end, so everything
/// after one — stories, statuses — was silently left out (found by fuzzing).
pub(crate) fn load_yaml(text: &str) -> std::result::Result<Vec<yaml_rust2::Yaml>, (usize, String)> {
    if let Some(at) = text.find(not_yaml_char) {
        let line = text[..at].matches('\n').count() + 1;
        let c = text[at..].chars().next().unwrap_or('\0');
        return Err((
            line,
            format!("holds the control character U+{:04X}", c as u32),
        ));
    }
    yaml_rust2::YamlLoader::load_from_str(text)
        .map_err(|e| (e.marker().line(), e.info().to_string()))
}

/// A char YAML 1.2 does not allow in a stream (C0 and C1 controls but tab, line breaks and NEL).
pub(crate) fn not_yaml_char(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{85}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(stem: &str, text: &str) -> String {
        match classify(stem, text) {
            Kind::Story(id, title, _) => format!("story {id} {title}"),
            Kind::NotStory(r) => format!("skip: {r}"),
        }
    }

    #[test]
    fn story_or_not() {
        assert_eq!(kind("1-2-auth", "# Story 1.2: Auth\n"), "story 1.2 Auth");
        assert_eq!(
            kind("whatever", "# Story 3.5.0: Hotfix\n"),
            "story 3.5.0 Hotfix"
        );
        assert_eq!(
            kind(
                "1-3-validation-report-export",
                "# Story 1.3: Export validation reports\n"
            ),
            "story 1.3 Export validation reports"
        );
        assert_eq!(kind("1.2.login", "Status: Draft\n"), "story 1.2 login");
        assert_eq!(kind("1.2.login", "# User login\n"), "story 1.2 User login");
        assert_eq!(
            kind("README", "# Stories\n"),
            "skip: no story id in the file name or the title"
        );
        assert_eq!(
            kind("story-1.2-test-plan", "# Test Plan for Story 1.2\n"),
            "skip: the file name marks a test-plan, not a story"
        );
        assert_eq!(
            kind("1-2-qa", "# Validation Report: Story 1.2\n"),
            "skip: the title \"Validation Report: Story 1.2\" marks a validation, not a story"
        );
        assert_eq!(
            kind("story-1.2", "# Story 1.2 Validation Report\n"),
            "skip: the title \"Story 1.2 Validation Report\" marks a validation, not a story"
        );
        assert_eq!(
            kind("epic-1-retro", "# Epic 1 Retrospective\n"),
            "skip: no story id in the file name or the title"
        );
        match classify("1-3-x", "# Story 1.2: X\n") {
            Kind::Story(id, _, Some(note)) => {
                assert_eq!(id.to_string(), "1.2");
                assert!(note.contains("1.3"), "{note}");
            }
            other => panic!("{other:?}"),
        }
    }
}
