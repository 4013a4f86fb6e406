//! BMAD 6 spec folders (the `bmad-spec` skill's output): `SPEC.md`, `stories.yaml` — the
//! stories in the order they run, each `id`, `title`, `description` and the orchestrator's own
//! `spec_checkpoint`, `done_checkpoint`, `invoke_dev_with` — and `stories/<id>-<slug>.md`, one
//! file per story once it is planned, whose frontmatter `status` (`draft`, `ready-for-dev`,
//! `in-progress`, `in-review`, `done`, `blocked`) is the truth about it.
//!
//! Read as real projects write them: `stories.yaml` as a list or as a mapping with a `stories:`
//! list, ids quoted or not (`1`, `6-6`, `1a`), extra keys, checkpoint flags absent or `false`,
//! statuses quoted or not, entries with no story file yet (not planned: named, not run).
//! Refused with the file, the line and what to fix: YAML that does not parse, an entry without
//! an id or a title, an id given twice, two story files for one entry (build-auto halts on
//! that too), a story file no entry names.

use std::path::{Path, PathBuf};

use serde::Serialize;
use yaml_rust2::Yaml;

use crate::error::{Error, Result};

/// The file that makes a folder a spec folder.
pub const STORIES_FILE: &str = "stories.yaml";

/// Where spec folders are looked for by name, relative to the project (4 levels below each),
/// besides the folders the BMAD configuration names.
const SEARCH: &[&str] = &["_bmad-output", "docs", "specs"];

#[derive(Debug, Clone, Serialize)]
pub struct SpecFolder {
    /// Relative to the project.
    pub dir: PathBuf,
    /// The folder's name: the epic's id in runs.
    pub name: String,
    /// `SPEC.md`, when there is one.
    pub spec: Option<PathBuf>,
    pub stories: Vec<SpecStory>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SpecStory {
    pub id: String,
    pub title: String,
    pub description: String,
    pub spec_checkpoint: bool,
    pub done_checkpoint: bool,
    pub invoke_dev_with: String,
    /// Deferred findings this story closes once done (`closes_deferred: [DW-3]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closes_deferred: Vec<String>,
    /// Its entry's line in `stories.yaml`.
    pub line: usize,
    /// `stories/<id>-<slug>.md`, relative to the project; None: not planned yet.
    pub file: Option<PathBuf>,
    /// Its file's frontmatter `status`, lowercased; None without a file or a status.
    pub status: Option<String>,
    /// A blocked story's blocking condition, as its file says it.
    pub blocking: Option<String>,
}

/// The spec folder `arg` names: a folder holding `stories.yaml` (relative to the project or
/// absolute), or a folder name found under the project's usual output folders.
pub fn find(root: &Path, arg: &str) -> Option<PathBuf> {
    let direct = root.join(arg);
    if direct.join(STORIES_FILE).is_file() {
        return Some(direct);
    }
    let name = arg.trim_end_matches('/');
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let mut found = Vec::new();
    for top in search_roots(root) {
        walk(&top, 0, &mut |d| {
            if d.file_name().is_some_and(|n| n == name) && d.join(STORIES_FILE).is_file() {
                found.push(d.to_path_buf());
            }
        });
    }
    found.sort();
    found.dedup();
    found.into_iter().next()
}

/// The usual output folders, and those the project's BMAD configuration names (with the
/// folder above each: `_bmad-output/` above `planning-artifacts/`), inside the project.
fn search_roots(root: &Path) -> Vec<PathBuf> {
    let cfg = super::config::Config::load(root);
    let mut roots: Vec<PathBuf> = SEARCH.iter().map(|t| root.join(t)).collect();
    for p in cfg.planning.iter().chain(&cfg.implementation) {
        roots.push(root.join(p));
        if let Some(up) = p.parent().filter(|u| !u.as_os_str().is_empty()) {
            roots.push(root.join(up));
        }
    }
    roots.sort();
    roots.dedup();
    roots
}

/// Every spec folder under the usual output folders, relative to `root`.
pub fn all(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for top in search_roots(root) {
        walk(&top, 0, &mut |d| {
            if d.join(STORIES_FILE).is_file() {
                found.push(d.strip_prefix(root).unwrap_or(d).to_path_buf());
            }
        });
    }
    found.sort();
    found.dedup();
    found
}

fn walk(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path)) {
    if depth > 3 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let hidden = e.file_name().to_string_lossy().starts_with('.');
        // Not through links: a cloned repository's link must not send the search elsewhere.
        if !hidden && e.file_type().is_ok_and(|t| t.is_dir()) {
            f(&p);
            walk(&p, depth + 1, f);
        }
    }
}

/// Read the spec folder at `dir` (absolute or relative to `root`).
pub fn load(root: &Path, dir: &Path) -> Result<SpecFolder> {
    let abs = root.join(dir);
    // Story statuses are written back through this folder: it must be the project's own, not a
    // link a cloned repository carries to somewhere else.
    baton_core::fs::confined(root, &abs)?;
    let rel = abs.strip_prefix(root).unwrap_or(&abs).to_path_buf();
    let file = abs.join(STORIES_FILE);
    let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
    let mut stories = parse(&file, &text)?;
    let story_dir = abs.join("stories");
    let mut files: Vec<String> = match std::fs::read_dir(&story_dir) {
        Ok(rd) => rd
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".md"))
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    for name in &files {
        // The entry whose `<id>-` prefix the name has (the longest, were ids not prefix-free).
        let owner = stories
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                name.starts_with(&format!("{}-", s.id)) || *name == format!("{}.md", s.id)
            })
            .max_by_key(|(_, s)| s.id.len())
            .map(|(i, _)| i);
        let Some(i) = owner else {
            return Err(Error::corrupt(
                story_dir.join(name),
                None,
                format!("no entry of {} has this story file's id", file.display()),
            )
            .hint("add its entry to stories.yaml, or remove the file if the story was retired"));
        };
        let path = rel.join("stories").join(name);
        if let Some(other) = &stories[i].file {
            return Err(Error::corrupt(
                &file,
                Some(stories[i].line),
                format!(
                    "story {} has two story files: {} and {}",
                    stories[i].id,
                    other.display(),
                    path.display()
                ),
            )
            .hint("keep one of them (build-auto halts on an ambiguous match too)"));
        }
        let body = std::fs::read_to_string(root.join(&path))
            .map_err(|e| Error::io(root.join(&path), e))?;
        stories[i].status = frontmatter(&body)
            .and_then(|fm| fm.get("status").cloned())
            .map(|s| s.to_ascii_lowercase());
        if stories[i].status.as_deref() == Some("blocked") {
            stories[i].blocking = blocking_condition(&body);
        }
        stories[i].file = Some(path);
    }
    let spec = abs.join("SPEC.md");
    Ok(SpecFolder {
        name: abs
            .file_name()
            .map_or_else(|| "spec".into(), |n| n.to_string_lossy().into_owned()),
        spec: spec.is_file().then(|| rel.join("SPEC.md")),
        dir: rel,
        stories,
    })
}

/// The entries of `stories.yaml`, in order.
pub fn parse(file: &Path, text: &str) -> Result<Vec<SpecStory>> {
    let docs = super::load_yaml(text).map_err(|(line, what)| {
        Error::corrupt(file, Some(line), format!("not valid YAML: {what}"))
            .hint("fix the YAML (each story: `- id: \"1\"`, `title: …`, `description: …`)")
    })?;
    let doc = docs.into_iter().next().unwrap_or(Yaml::Array(vec![]));
    let list = match doc {
        Yaml::Array(a) => a,
        Yaml::Hash(h) => match h.get(&Yaml::String("stories".into())) {
            Some(Yaml::Array(a)) => a.clone(),
            _ => {
                return Err(
                    Error::corrupt(file, Some(1), "a mapping without a `stories:` list")
                        .hint("make it a list of stories, or put them under `stories:`"),
                );
            }
        },
        Yaml::Null => vec![],
        _ => {
            return Err(Error::corrupt(file, Some(1), "not a list of stories")
                .hint("each story: `- id: \"1\"`, `title: …`, `description: …`"));
        }
    };
    let id_lines = id_lines(text);
    let mut out: Vec<SpecStory> = Vec::new();
    for (k, entry) in list.iter().enumerate() {
        let line = id_lines.get(k).copied().unwrap_or(1);
        let get = |key: &str| entry[key].clone();
        let id = scalar(&get("id"))
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                Error::corrupt(
                    file,
                    Some(line),
                    format!("story {} of the list has no `id`", k + 1),
                )
                .hint("give every story an id: `id: \"1\"`")
            })?;
        let title = scalar(&get("title"))
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                Error::corrupt(file, Some(line), format!("story {id} has no `title`"))
                    .hint("give every story a one-line title")
            })?;
        if let Some(first) = out.iter().find(|s| s.id == id) {
            return Err(Error::corrupt(
                file,
                Some(line),
                format!(
                    "story id {id} is given twice (first at line {})",
                    first.line
                ),
            )
            .hint("ids are unique: renumber the story that has no story file yet"));
        }
        out.push(SpecStory {
            id,
            title,
            description: scalar(&get("description")).unwrap_or_default(),
            spec_checkpoint: get("spec_checkpoint").as_bool().unwrap_or(false),
            done_checkpoint: get("done_checkpoint").as_bool().unwrap_or(false),
            invoke_dev_with: scalar(&get("invoke_dev_with")).unwrap_or_default(),
            closes_deferred: match get("closes_deferred") {
                Yaml::Array(a) => a.iter().filter_map(scalar).collect(),
                one => scalar(&one).into_iter().collect(),
            },
            line,
            file: None,
            status: None,
            blocking: None,
        });
    }
    Ok(out)
}

/// A scalar as text (`id: 1` is a number to YAML, `1` to the story).
fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.trim().to_string()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The 1-based lines of the list's `id:` keys, in order (errors name an entry's line).
fn id_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start().trim_start_matches('-').trim_start();
            t.starts_with("id:")
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// A story file's YAML frontmatter, whole (its lists: `deferred`, `closes_deferred`).
pub fn frontmatter_yaml(text: &str) -> Option<Yaml> {
    let block = frontmatter_block(text)?;
    super::load_yaml(&text[block]).ok()?.into_iter().next()
}

/// A story file's YAML frontmatter as its top-level scalar keys (`---` first line).
pub fn frontmatter(text: &str) -> Option<std::collections::BTreeMap<String, String>> {
    let block = frontmatter_block(text)?;
    let docs = super::load_yaml(&text[block]).ok()?;
    let Some(Yaml::Hash(h)) = docs.into_iter().next() else {
        return Some(Default::default());
    };
    Some(
        h.iter()
            .filter_map(|(k, v)| Some((k.as_str()?.to_string(), scalar(v)?)))
            .collect(),
    )
}

/// The byte range of the frontmatter's YAML (between the `---` lines). None also when it
/// holds a control char YAML does not allow in a stream: the YAML reader stops at a NUL, so a
/// `status` after one was neither read nor, once written, read back (found by fuzzing). Such
/// a file is read and written as one without frontmatter.
fn frontmatter_block(text: &str) -> Option<std::ops::Range<usize>> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let start = text.len() - rest.len();
    let mut pos = start;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let yaml = !text[start..pos].contains(super::not_yaml_char);
            return yaml.then_some(start..pos);
        }
        pos += line.len();
    }
    None
}

/// `text` with its frontmatter `status` set to `value`, in the quoting the file used; None
/// when its frontmatter has no `status` (it is then written the classic way).
pub fn set_status(text: &str, value: &str) -> Option<String> {
    let block = frontmatter_block(text)?;
    let mut pos = block.start;
    for line in text[block.clone()].split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if let Some(v) = body.strip_prefix("status:") {
            let old = v.split(" #").next().unwrap_or(v).trim();
            if old.is_empty() {
                // `status:` opening a block (a mapping, a list): not a status baton writes.
                return None;
            }
            let quote = old.chars().next().filter(|c| *c == '\'' || *c == '"');
            let new = match quote {
                Some(q) => format!("{q}{value}{q}"),
                None => value.to_string(),
            };
            let comment = v.find(" #").map(|i| &v[i..]).unwrap_or("");
            let eol = &line[body.len()..];
            let mut out = String::with_capacity(text.len() + value.len());
            out.push_str(&text[..pos]);
            out.push_str(&format!("status: {new}{comment}{eol}"));
            out.push_str(&text[pos + line.len()..]);
            return Some(out);
        }
        pos += line.len();
    }
    // Frontmatter without a status (a note's, say): the status is where the body keeps it.
    None
}

/// A blocked story's condition: build-auto's `Blocking condition: …` line (or a frontmatter
/// `blocking_condition`).
fn blocking_condition(text: &str) -> Option<String> {
    if let Some(c) = frontmatter(text).and_then(|fm| fm.get("blocking_condition").cloned()) {
        return Some(c);
    }
    text.lines().rev().find_map(|l| {
        let t = l.trim().trim_start_matches(['-', '*', ' ']);
        let lower = t.to_ascii_lowercase();
        lower
            .strip_prefix("blocking condition:")
            .map(|_| {
                t["blocking condition:".len()..]
                    .trim()
                    .trim_matches('*')
                    .trim()
                    .to_string()
            })
            .filter(|c| !c.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stories_yaml_as_real_projects_write_it() {
        let f = Path::new("specs/x/stories.yaml");
        let list = "- id: \"1\"\n  title: One\n  description: >-\n    First.\n  spec_checkpoint: true\n- id: 6-6\n  title: Two\n  closes_deferred: [DW-1]\n  done_checkpoint: false\n- id: 1a\n  title: Three\n";
        let s = parse(f, list).unwrap();
        let ids: Vec<&str> = s.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["1", "6-6", "1a"]);
        assert!(s[0].spec_checkpoint && !s[1].done_checkpoint);
        assert_eq!(s[0].description, "First.");
        assert_eq!(s[2].line, 10);
        // A mapping with a `stories:` list; an unquoted number id.
        let s = parse(f, "epic: x\nstories:\n  - id: 2\n    title: Two\n").unwrap();
        assert_eq!(s[0].id, "2");
        assert_eq!(s[0].line, 3);
    }

    #[test]
    fn bad_stories_yaml_is_refused_with_its_line() {
        let f = Path::new("s/stories.yaml");
        let e = parse(
            f,
            "- id: \"1\"\n  title: One\n- id: \"1\"\n  title: Again\n",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("story id 1 is given twice (first at line 1)"),
            "{e}"
        );
        assert!(e.to_string().starts_with("s/stories.yaml line 3: "), "{e}");
        let e = parse(f, "- id: \"1\"\n  title: [unclosed\n").unwrap_err();
        assert!(e.to_string().contains("not valid YAML"), "{e}");
        let e = parse(f, "- id: \"2\"\n  description: no title\n").unwrap_err();
        assert!(e.to_string().contains("story 2 has no `title`"), "{e}");
        // A NUL was the YAML reader's end of stream: the stories after it were left out.
        let e = parse(
            f,
            "- id: \"1\"\n  title: One\n\0- id: \"2\"\n  title: Two\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with(
                "s/stories.yaml line 3: not valid YAML: holds the control character U+0000"
            ),
            "{e}"
        );
        let e = parse(f, "just text\n").unwrap_err();
        assert!(e.to_string().contains("not a list of stories"), "{e}");
    }

    #[test]
    fn frontmatter_status_is_read_and_written_in_the_files_quoting() {
        let t = "---\ntitle: 'X'\nstatus: 'ready-for-dev' # draft | done\nother: 1\n---\n\n# X\n";
        assert_eq!(frontmatter(t).unwrap()["status"], "ready-for-dev");
        let w = set_status(t, "in-progress").unwrap();
        assert_eq!(
            w,
            "---\ntitle: 'X'\nstatus: 'in-progress' # draft | done\nother: 1\n---\n\n# X\n"
        );
        let t = "---\nstatus: done\n---\nbody\n";
        assert_eq!(
            set_status(t, "in-review").unwrap(),
            "---\nstatus: in-review\n---\nbody\n"
        );
        assert_eq!(
            set_status("---\ntitle: x\n---\nStatus: draft\n", "done"),
            None
        );
        assert_eq!(set_status("# No frontmatter\n", "done"), None);
        // A NUL ends the YAML reader's stream: such a frontmatter is none at all, so the status
        // is the body's, read and written alike.
        let nul = "---\ntitle: a\0b\nstatus: draft\n---\nStatus: draft\n";
        assert_eq!(frontmatter(nul), None);
        assert!(frontmatter_yaml(nul).is_none());
        assert_eq!(set_status(nul, "done"), None);
        let blocked = "---\nstatus: blocked\n---\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: intent gap\n";
        assert_eq!(blocking_condition(blocked).as_deref(), Some("intent gap"));
    }
}
