//! `sprint-status.yaml` (BMAD v6): its `development_status:` map of `1-2-user-auth: done`,
//! `epic-1: in-progress`, `epic-1-retrospective: optional`.
//!
//! Read with a real YAML parser (yaml-rust2); written by editing the one line of the key, so
//! comments, order and formatting survive (a YAML emitter would drop the comments BMAD puts
//! at the top of the file). Every edit is re-read with the parser before it is written.

use std::path::{Path, PathBuf};

use yaml_rust2::Yaml;

use super::id::{self, EpicId, StoryId};
use super::status::replace_file;
use crate::error::{Error, Result};
use baton_core::error::io_err;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SprintKey {
    /// `1-2-user-auth`: the story `1.2`.
    Story(StoryId),
    /// `epic-1`, `epic-3-5`.
    Epic(EpicId),
    /// `epic-1-retrospective`.
    Retro(EpicId),
    /// Anything else.
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SprintEntry {
    pub key: String,
    pub value: String,
    pub kind: SprintKey,
}

#[derive(Debug, Clone)]
pub struct SprintStatus {
    pub path: PathBuf,
    /// The `development_status` entries in file order.
    pub entries: Vec<SprintEntry>,
}

impl SprintStatus {
    pub fn load(path: &Path) -> Result<SprintStatus> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                Error::corrupt(path, None, "not UTF-8 text")
            } else {
                Error::io(path, e)
            }
        })?;
        Self::parse(path, &text)
    }

    /// Parse `text`; a YAML error or a missing/odd `development_status` is `Corrupt`, naming
    /// the file and (for syntax errors) the line.
    pub fn parse(path: &Path, text: &str) -> Result<SprintStatus> {
        let docs = super::load_yaml(text).map_err(|(line, what)| {
            Error::corrupt(path, Some(line), format!("invalid YAML: {what}"))
        })?;
        let Some(root) = docs.first().and_then(Yaml::as_hash) else {
            return Err(Error::corrupt(path, None, "expected a YAML map at the top"));
        };
        let dev = root.get(&Yaml::String("development_status".into()));
        let map = match dev {
            Some(Yaml::Hash(h)) => h,
            // An empty `development_status:` is a sprint with nothing planned yet.
            Some(Yaml::Null) => {
                return Ok(SprintStatus {
                    path: path.to_path_buf(),
                    entries: Vec::new(),
                });
            }
            Some(_) => {
                return Err(Error::corrupt(
                    path,
                    None,
                    "`development_status` is not a map",
                ));
            }
            None => return Err(Error::corrupt(path, None, "no `development_status` map")),
        };
        let mut entries = Vec::new();
        for (k, v) in map {
            let (Some(key), Some(value)) = (scalar(k), scalar(v)) else {
                return Err(Error::corrupt(
                    path,
                    None,
                    format!("`development_status` entry {k:?} is not `key: value`"),
                ));
            };
            let kind = classify(&key);
            entries.push(SprintEntry { key, value, kind });
        }
        Ok(SprintStatus {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// The entry of a story: the key equal to its file stem, else the first key whose
    /// `N-M` prefix is its id.
    pub fn for_story(&self, id: &StoryId, stem: Option<&str>) -> Option<&SprintEntry> {
        stem.and_then(|s| self.entries.iter().find(|e| e.key == s))
            .or_else(|| {
                self.entries
                    .iter()
                    .find(|e| matches!(&e.kind, SprintKey::Story(k) if k == id))
            })
    }

    pub fn for_epic(&self, epic: &EpicId) -> Option<&SprintEntry> {
        self.entries
            .iter()
            .find(|e| matches!(&e.kind, SprintKey::Epic(n) if n == epic))
    }

    /// The epic's `epic-N-retrospective` entry.
    pub fn for_retro(&self, epic: &EpicId) -> Option<&SprintEntry> {
        self.entries
            .iter()
            .find(|e| matches!(&e.kind, SprintKey::Retro(n) if n == epic))
    }
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        Yaml::Null => Some(String::new()),
        _ => None,
    }
}

fn classify(key: &str) -> SprintKey {
    if let Some((n, retro)) = id::epic_from_key(key) {
        return if retro {
            SprintKey::Retro(n)
        } else {
            SprintKey::Epic(n)
        };
    }
    if id::epic_from_file_stem(key).is_some() {
        return SprintKey::Other;
    }
    match id::from_file_stem(key) {
        Some((id, _)) => SprintKey::Story(id),
        None => SprintKey::Other,
    }
}

/// A scalar as YAML writes it: bare when it is a plain word, else double-quoted.
fn yaml_scalar(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ' '))
        && value.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !value.ends_with(' ');
    if plain {
        value.to_string()
    } else {
        let escaped: String = value
            .chars()
            .flat_map(|c| match c {
                '"' => vec!['\\', '"'],
                '\\' => vec!['\\', '\\'],
                '\n' => vec!['\\', 'n'],
                c => vec![c],
            })
            .collect();
        format!("\"{escaped}\"")
    }
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// `text` with the value of `development_status.<key>` replaced by `value`, editing only that
/// line's value (its indentation, quotes and trailing comment stay). `None` if the key is not
/// in the map.
pub fn set_line(text: &str, key: &str, value: &str) -> Option<String> {
    let mut offset = 0;
    let mut block_indent: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let trimmed = body.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let ind = indent_of(body);
        match block_indent {
            None => {
                if trimmed.split('#').next().map(str::trim_end) == Some("development_status:") {
                    block_indent = Some(ind);
                }
            }
            Some(b) if ind <= b => return None,
            Some(_) => {
                // A line that is no `key: value` (a flow continuation) is not the key's.
                let Some((k, after_key)) = split_key(trimmed) else {
                    continue;
                };
                if k != key {
                    continue;
                }
                // Value: after `:` and spaces, up to a ` #` comment, trailing spaces trimmed.
                let vs = after_key.len() - after_key.trim_start_matches([' ', '\t']).len();
                let rest = &after_key[vs..];
                let ve = rest
                    .find(" #")
                    .or_else(|| rest.find("\t#"))
                    .unwrap_or(rest.len());
                let val = rest[..ve].trim_end();
                let abs = start + ind + (trimmed.len() - after_key.len()) + vs;
                let new_val = match val.chars().next() {
                    Some(q @ ('"' | '\''))
                        if val.len() >= 2 && val.ends_with(q) && yaml_scalar(value) == value =>
                    {
                        format!("{q}{value}{q}")
                    }
                    _ => yaml_scalar(value),
                };
                // A key with no value (`"key":` at the end of the file) or a value right after
                // a quoted key's colon gets a space: `"key":done` is not YAML.
                let sep = if vs == 0 { " " } else { "" };
                return Some(format!(
                    "{}{sep}{}{}",
                    &text[..abs],
                    new_val,
                    &text[abs + val.len()..]
                ));
            }
        }
    }
    None
}

/// `key: rest` → (key without quotes, text after the colon).
fn split_key(line: &str) -> Option<(&str, &str)> {
    if let Some(q) = line.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = line[1..].find(q)? + 1;
        let after = line[end + 1..].trim_start_matches([' ', '\t']);
        return Some((&line[1..end], after.strip_prefix(':')?));
    }
    let colon = line.find(':')?;
    Some((line[..colon].trim_end(), &line[colon + 1..]))
}

/// Set `development_status.<key>` in the file to `value`, atomically. `Ok(false)` when the key
/// is not in the file (nothing is written: adding keys is sprint planning's job, not ours).
pub fn write(path: &Path, key: &str, value: &str) -> Result<bool> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let Some(new) = edit(path, &text, key, value)? else {
        return Ok(false);
    };
    replace_file(path, new.as_bytes())?;
    Ok(true)
}

/// The text of [`write`]: `text` (the file at `path`) with `key` set to `value` by a line edit,
/// `None` when the key is not there. An edit that would not read back as `value`, the way
/// every YAML reader reads it (a key set twice, a layout the line edit cannot handle), is
/// refused: the file is never left meaning something else.
pub fn edit(path: &Path, text: &str, key: &str, value: &str) -> Result<Option<String>> {
    SprintStatus::parse(path, text)?;
    let Some(new) = set_line(text, key, value) else {
        return Ok(None);
    };
    let reads_back = SprintStatus::parse(path, &new)
        .is_ok_and(|s| s.entries.iter().any(|e| e.key == key && e.value == value));
    if !reads_back {
        return Err(Error::corrupt(
            path,
            None,
            format!(
                "could not set `{key}` by a line edit (is it set twice?); edit the file by hand"
            ),
        ));
    }
    Ok(Some(new))
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::error::Fault;

    const DOC: &str = "# generated: 2025-01-01\n# STATUS DEFINITIONS: backlog → drafted → ...\nproject: demo\n\ndevelopment_status:\n  epic-1: in-progress   # started\n  1-1-setup: done\n  \"1-2-user-auth\": 'review' # waiting\n  1-10-later: backlog\n  epic-1-retrospective: optional\n\n  3-5-0-hotfix: ready-for-dev\nother:\n  1-1-setup: ignored\n";

    #[test]
    fn reads_entries_and_kinds() {
        let s = SprintStatus::parse(Path::new("s.yaml"), DOC).unwrap();
        let got: Vec<(&str, &str)> = s
            .entries
            .iter()
            .map(|e| (e.key.as_str(), e.value.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("epic-1", "in-progress"),
                ("1-1-setup", "done"),
                ("1-2-user-auth", "review"),
                ("1-10-later", "backlog"),
                ("epic-1-retrospective", "optional"),
                ("3-5-0-hotfix", "ready-for-dev"),
            ]
        );
        let one = EpicId::whole(1);
        assert_eq!(s.entries[0].kind, SprintKey::Epic(one.clone()));
        assert_eq!(s.entries[4].kind, SprintKey::Retro(one.clone()));
        let id = StoryId::parse("3.5.0").unwrap();
        assert_eq!(
            s.for_story(&id, None).map(|e| e.key.as_str()),
            Some("3-5-0-hotfix")
        );
        assert_eq!(
            s.for_epic(&one).map(|e| e.value.as_str()),
            Some("in-progress")
        );
        assert_eq!(
            s.for_retro(&one).map(|e| e.value.as_str()),
            Some("optional")
        );
        // A NUL ended the YAML reader's stream: the entries after it were left out, unsaid.
        let nul = DOC.replace("  1-10-later", "\0 1-10-later");
        let e = SprintStatus::parse(Path::new("s.yaml"), &nul).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("s.yaml line 9: invalid YAML: holds the control character U+0000"),
            "{e}"
        );
    }

    #[test]
    fn line_edits_keep_everything_else() {
        let new = set_line(DOC, "1-2-user-auth", "done").unwrap();
        assert_eq!(new, DOC.replace("'review' # waiting", "'done' # waiting"));
        let new = set_line(DOC, "epic-1", "done").unwrap();
        assert_eq!(
            new,
            DOC.replace("epic-1: in-progress   #", "epic-1: done   #")
        );
        let new = set_line(DOC, "3-5-0-hotfix", "in progress: 50%").unwrap();
        assert!(
            new.contains("  3-5-0-hotfix: \"in progress: 50%\"\nother:"),
            "{new}"
        );
        // Only keys of development_status are edited.
        assert_eq!(set_line(DOC, "project", "x"), None);
        assert_eq!(set_line("other:\n  1-1-setup: a\n", "1-1-setup", "b"), None);
        assert_eq!(set_line(DOC, "9-9-none", "x"), None);
        let odd = "development_status:\n  - stray\n  1-1-a: done\n";
        assert_eq!(
            set_line(odd, "1-1-a", "review").as_deref(),
            Some("development_status:\n  - stray\n  1-1-a: review\n")
        );
    }

    /// Found by the `bmad_files` fuzz target: a quoted key with no value at the end of the
    /// file (`  "1-3-sso":`) set to `done` became `"1-3-sso":done`, which is not YAML: the
    /// file baton wrote no longer parsed.
    #[test]
    fn a_key_without_a_value_is_set_readably() {
        for (text, want) in [
            (
                "development_status:\n  epic-1: done\n  \"1-3-sso\":",
                "development_status:\n  epic-1: done\n  \"1-3-sso\": done",
            ),
            (
                "development_status:\n  1-3-sso:\n  epic-2: backlog\n",
                "development_status:\n  1-3-sso: done\n  epic-2: backlog\n",
            ),
        ] {
            SprintStatus::parse(Path::new("s.yaml"), text).unwrap();
            let new = set_line(text, "1-3-sso", "done").unwrap();
            assert_eq!(new, want);
            let after = SprintStatus::parse(Path::new("s.yaml"), &new).unwrap();
            let e = after.entries.iter().find(|e| e.key == "1-3-sso").unwrap();
            assert_eq!(e.value, "done");
        }
    }

    /// Found by the `bmad_files` fuzz target: a key set twice. The line edit would change the
    /// first while YAML readers refuse the file (or take the last): refused, naming the file.
    #[test]
    fn a_key_set_twice_is_not_edited() {
        let text = "development_status:\n  1-1-a: backlog\n  1-1-a: done\n  1-2-b: backlog\n";
        for key in ["1-1-a", "1-2-b"] {
            let err = edit(Path::new("s.yaml"), text, key, "review").unwrap_err();
            assert!(err.to_string().starts_with("s.yaml line 3: "), "{err}");
        }
    }

    #[test]
    fn malformed_names_file_and_line() {
        let bad = "development_status:\n  1-1-a: done\n  1-2-b: [unclosed\n";
        let err = SprintStatus::parse(Path::new("docs/sprint-status.yaml"), bad).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("docs/sprint-status.yaml line "), "{msg}");
        assert_eq!(err.exit_code(), 5);
        let err = SprintStatus::parse(Path::new("s.yaml"), "project: x\n").unwrap_err();
        assert!(err.to_string().contains("no `development_status`"), "{err}");
        let err = SprintStatus::parse(Path::new("s.yaml"), "- a\n").unwrap_err();
        assert!(err.to_string().contains("map"), "{err}");
    }

    #[test]
    fn write_checks_and_keeps_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sprint-status.yaml");
        std::fs::write(&p, DOC).unwrap();
        assert!(write(&p, "1-1-setup", "in-progress").unwrap());
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            DOC.replace("1-1-setup: done", "1-1-setup: in-progress")
        );
        assert!(!write(&p, "7-7-missing", "done").unwrap());
    }
}
