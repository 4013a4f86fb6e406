//! Merging baton's part into a file, and taking it out again.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Edit;
use super::files::{BEGIN_MARK, END_MARK, Part, Wanted};
use super::jsontext::{self, Layout};
use crate::error::{Error, Result};

/// One thing init put into a JSON document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Added {
    /// An object key set (it was absent).
    Key { path: Vec<String>, value: Value },
    /// An entry appended to an array.
    Entry { path: Vec<String>, value: Value },
    /// An object or array created to hold the above.
    Created { path: Vec<String> },
}

/// The text of the file with baton's part in it, and how it was put there.
pub fn apply(want: &Wanted, before: Option<&str>) -> Result<(String, Edit)> {
    match &want.part {
        Part::Json { keys, entries } => json_apply(before, keys, entries),
        Part::TomlTable { table, value } => toml_apply(before, table, value),
        Part::Section(s) => Ok((section_apply(before, s), Edit::Section)),
        Part::Whole(text) => match before {
            Some(b) if b != text => Err(Error::invalid("exists and is not the file baton writes")
                .hint("move or rename your file, then run `baton init` again")),
            _ => Ok((text.clone(), Edit::Whole)),
        },
    }
}

/// Take baton's part (`edit`) out of `text`, writing it back in `layout`. `created`: baton
/// made the file, which goes when nothing else is left in it. None: remove the file.
pub fn remove(edit: &Edit, created: bool, layout: Layout, text: &str) -> Result<Option<String>> {
    match edit {
        Edit::Json { added, .. } => {
            let mut doc = parse_object(Some(text))?;
            let mut took = false;
            for a in added {
                match a {
                    Added::Key { path, value } => {
                        let Some((last, parent)) = path.split_last() else {
                            continue;
                        };
                        if let Some(Value::Object(m)) = get_mut(&mut doc, parent)
                            && m.get(last) == Some(value)
                        {
                            m.shift_remove(last);
                            took = true;
                        }
                    }
                    Added::Entry { path, value } => {
                        if let Some(Value::Array(a)) = get_mut(&mut doc, path)
                            && let Some(i) = a.iter().position(|e| e == value)
                        {
                            a.remove(i);
                            took = true;
                        }
                    }
                    Added::Created { .. } => {}
                }
            }
            // Containers baton created go when empty, deepest first.
            let mut made: Vec<&Vec<String>> = added
                .iter()
                .filter_map(|a| match a {
                    Added::Created { path } => Some(path),
                    _ => None,
                })
                .collect();
            made.sort_by_key(|p| std::cmp::Reverse(p.len()));
            for path in made {
                let empty = match get_mut(&mut doc, path) {
                    Some(Value::Object(m)) => m.is_empty(),
                    Some(Value::Array(a)) => a.is_empty(),
                    _ => false,
                };
                if let (true, Some((last, parent))) = (empty, path.split_last())
                    && let Some(Value::Object(m)) = get_mut(&mut doc, parent)
                {
                    m.shift_remove(last);
                    took = true;
                }
            }
            // Nothing of baton's left in it (an uninstall run again): as it is.
            if !took {
                return Ok(Some(text.to_string()));
            }
            if created && doc.as_object().is_some_and(Map::is_empty) {
                return Ok(None);
            }
            Ok(Some(layout.render(&doc)?))
        }
        Edit::TomlTable { table } => {
            let mut doc: toml_edit::DocumentMut = text
                .parse()
                .map_err(|e| Error::invalid(format!("not TOML: {e}")))?;
            if let [parent, name] = table.as_slice()
                && let Some(t) = doc.get_mut(parent).and_then(|i| i.as_table_like_mut())
            {
                t.remove(name);
                if t.is_empty() {
                    doc.remove(parent);
                }
            }
            let out = doc.to_string();
            Ok((!(created && out.trim().is_empty())).then_some(out))
        }
        Edit::Section => {
            let out = section_remove(text);
            Ok((!(created && out.trim().is_empty())).then_some(out))
        }
        // A file of baton's that someone edited since: theirs now, left as it is.
        Edit::Whole => Ok(Some(text.to_string())),
    }
}

/// Two inits of the same file: everything either added. The text edits add up only when
/// the second found the file as the first left it (`in_turn`); else the file goes back by
/// value alone.
pub fn union(a: &Edit, b: &Edit, in_turn: bool) -> Edit {
    match (a, b) {
        (
            Edit::Json {
                added: x,
                splices: sx,
            },
            Edit::Json {
                added: y,
                splices: sy,
            },
        ) => {
            let mut all = x.clone();
            all.extend(y.iter().filter(|e| !x.contains(e)).cloned());
            let splices = if in_turn {
                sx.iter().chain(sy).cloned().collect()
            } else {
                Vec::new()
            };
            Edit::Json {
                added: all,
                splices,
            }
        }
        _ => b.clone(),
    }
}

fn parse_object(text: Option<&str>) -> Result<Value> {
    let text = text.unwrap_or("");
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let v: Value = serde_json::from_str(text).map_err(|e| {
        Error::invalid(format!("not valid JSON ({e})"))
            .hint("fix the file (baton init merges into it and never overwrites it)")
    })?;
    if !v.is_object() {
        return Err(Error::invalid("not a JSON object").hint("fix the file"));
    }
    Ok(v)
}

fn get_mut<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, k| v.get_mut(k))
}

fn not_a(what: &str, path: &[String]) -> Error {
    Error::invalid(format!("`{}` is not {what}", path.join(".")))
        .hint("fix that entry (baton init merges into it and never overwrites it)")
}

fn json_apply(
    before: Option<&str>,
    keys: &[(Vec<String>, Value)],
    entries: &[(Vec<String>, Value)],
) -> Result<(String, Edit)> {
    let mut doc = parse_object(before)?;
    // Edited as text (`jsontext`): the user's layout stays as it was around baton's part.
    let mut text = match before {
        Some(b) if !b.trim().is_empty() => b.to_string(),
        _ => "{}\n".to_string(),
    };
    let mut added = Vec::new();
    let mut splices = Vec::new();
    let wanted = keys
        .iter()
        .map(|(p, v)| (p, v, false))
        .chain(entries.iter().map(|(p, v)| (p, v, true)));
    for (path, value, append) in wanted {
        let Some((last, parent)) = path.split_last() else {
            continue;
        };
        // What is missing on the way (made, and recorded as made), and what is not an object.
        let mut made = Vec::new();
        let mut cur = Some(&doc);
        for i in 0..parent.len() {
            match cur.map(|c| c.get(&parent[i])) {
                Some(Some(v)) if v.is_object() => cur = Some(v),
                Some(Some(_)) => return Err(not_a("an object", &parent[..=i])),
                _ => {
                    made.push(Added::Created {
                        path: parent[..=i].to_vec(),
                    });
                    cur = None;
                }
            }
        }
        let there = cur.and_then(|c| c.get(last));
        let add = match (there, append) {
            // A key of the user's own (another baton command, say) is theirs: left alone.
            (Some(_), false) => None,
            (Some(Value::Array(a)), true) if a.contains(value) => None,
            (Some(Value::Array(_)), true) => Some(Added::Entry {
                path: path.clone(),
                value: value.clone(),
            }),
            (Some(_), true) => return Err(not_a("an array", path)),
            (None, false) => Some(Added::Key {
                path: path.clone(),
                value: value.clone(),
            }),
            (None, true) => {
                made.push(Added::Created { path: path.clone() });
                Some(Added::Entry {
                    path: path.clone(),
                    value: value.clone(),
                })
            }
        };
        let Some(add) = add else { continue };
        let (edited, splice) =
            jsontext::set(&text, path, value, append).ok_or_else(|| not_a("an object", parent))?;
        text = edited;
        splices.push(splice);
        doc = parse_object(Some(&text))?;
        added.extend(made);
        added.push(add);
    }
    // Nothing to add: the file stays as it is.
    if added.is_empty() {
        return Ok((
            before.unwrap_or("").to_string(),
            Edit::Json { added, splices },
        ));
    }
    Ok((text, Edit::Json { added, splices }))
}

fn toml_apply(before: Option<&str>, table: &[String], value: &Value) -> Result<(String, Edit)> {
    let mut doc: toml_edit::DocumentMut = before
        .unwrap_or("")
        .parse()
        .map_err(|e| Error::invalid(format!("not valid TOML: {e}")).hint("fix the file"))?;
    let edit = Edit::TomlTable {
        table: table.to_vec(),
    };
    let [parent, name] = table else {
        return Err(Error::internal("a TOML table path has two parts"));
    };
    if !doc.contains_key(parent) {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        doc.insert(parent, toml_edit::Item::Table(t));
    }
    let Some(parent_table) = doc.get_mut(parent).and_then(|i| i.as_table_mut()) else {
        return Err(not_a("a table", &table[..1]));
    };
    if parent_table.contains_key(name) {
        return Ok((before.unwrap_or("").to_string(), edit));
    }
    // Every key of baton's table, in its order: strings, booleans, arrays of strings.
    let mut t = toml_edit::Table::new();
    for (k, v) in value.as_object().into_iter().flatten() {
        let item = match v {
            Value::String(s) => toml_edit::value(s.as_str()),
            Value::Bool(b) => toml_edit::value(*b),
            Value::Array(items) => {
                let mut a = toml_edit::Array::new();
                for x in items {
                    a.push(x.as_str().unwrap_or_default());
                }
                toml_edit::value(a)
            }
            _ => return Err(Error::internal(format!("no TOML form for `{k}`"))),
        };
        t.insert(k, item);
    }
    parent_table.insert(name, toml_edit::Item::Table(t));
    Ok((doc.to_string(), edit))
}

fn section_apply(before: Option<&str>, section: &str) -> String {
    let before = before.unwrap_or("");
    if let (Some(s), Some(e)) = (before.find(BEGIN_MARK), before.find(END_MARK)) {
        // Already there: brought up to date in place.
        let end = before[e..].find('\n').map_or(before.len(), |n| e + n + 1);
        return format!("{}{section}{}", &before[..s], &before[end..]);
    }
    match before {
        "" => section.to_string(),
        b if b.ends_with("\n\n") => format!("{b}{section}"),
        b if b.ends_with('\n') => format!("{b}\n{section}"),
        b => format!("{b}\n\n{section}"),
    }
}

fn section_remove(text: &str) -> String {
    let (Some(s), Some(e)) = (text.find(BEGIN_MARK), text.find(END_MARK)) else {
        return text.to_string();
    };
    let end = text[e..].find('\n').map_or(text.len(), |n| e + n + 1);
    let head = &text[..s];
    // The blank line init put before the section goes with it.
    let head = head
        .strip_suffix('\n')
        .filter(|h| h.ends_with('\n'))
        .unwrap_or(head);
    format!("{head}{}", &text[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_appended_once_and_removed_cleanly() {
        let s = format!("{BEGIN_MARK}\nhello\n{END_MARK}\n");
        let once = section_apply(Some("# Project\n"), &s);
        assert_eq!(once, format!("# Project\n\n{s}"));
        assert_eq!(section_apply(Some(&once), &s), once);
        assert_eq!(
            section_remove(&(once.clone() + "more\n")),
            "# Project\nmore\n"
        );
    }

    #[test]
    fn toml_keeps_comments_and_other_tables() {
        let before = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let v = serde_json::json!({"command": "baton", "args": ["mcp"]});
        let (after, _) =
            toml_apply(Some(before), &["mcp_servers".into(), "baton".into()], &v).unwrap();
        assert!(after.starts_with(before), "{after}");
        assert!(
            after.contains("[mcp_servers.baton]\ncommand = \"baton\"\nargs = [\"mcp\"]\n"),
            "{after}"
        );
    }
}
