//! A JSON text edited in place: a member put into an object, an element appended to an array,
//! and the rest of the text left byte for byte as it was — the user's layout, comments aside
//! (JSON has none), key order and spacing. Each edit is a [`Splice`] the record keeps (baton's
//! own text and the whitespace it replaced, never the user's), so uninstall of a file nobody
//! changed since takes exactly those bytes out again. [`Layout`]: how a file is laid out, for
//! writing back one that was changed since.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// How a JSON file was laid out: what baton writes it back in, so the user's indentation is
/// kept, and taking baton's part out of a file nobody changed since gives it back byte for
/// byte (for the pretty-printed files the CLIs write) without the record keeping its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Spaces of one indentation level; 0: all on one line.
    pub indent: u8,
    /// Indented with tabs.
    #[serde(default)]
    pub tabs: bool,
    /// Ends with a line break.
    pub final_newline: bool,
}

impl Default for Layout {
    /// What baton writes a file it creates in.
    fn default() -> Self {
        Layout {
            indent: 2,
            tabs: false,
            final_newline: true,
        }
    }
}

impl Layout {
    /// The layout of `text` (the default for no text).
    pub fn of(text: Option<&str>) -> Layout {
        let Some(t) = text.filter(|t| !t.trim().is_empty()) else {
            return Layout::default();
        };
        // An empty object says nothing of a layout: written as baton writes a new file.
        if t.trim() == "{}" {
            return Layout {
                final_newline: t.ends_with('\n'),
                ..Layout::default()
            };
        }
        // The first indented line's indentation is one level.
        let first = t
            .lines()
            .skip(1)
            .find(|l| l.starts_with([' ', '\t']))
            .unwrap_or("");
        let tabs = first.starts_with('\t');
        let width = first.len() - first.trim_start_matches([' ', '\t']).len();
        Layout {
            indent: u8::try_from(width).unwrap_or(u8::MAX),
            tabs,
            final_newline: t.ends_with('\n'),
        }
    }

    /// `v` written in this layout.
    pub fn render(self, v: &Value) -> Result<String> {
        use serde::Serialize as _;
        let mut out = Vec::new();
        let written = if self.indent == 0 {
            v.serialize(&mut serde_json::Serializer::new(&mut out))
        } else {
            let unit = if self.tabs { b'\t' } else { b' ' };
            let indent = vec![unit; usize::from(self.indent)];
            let f = serde_json::ser::PrettyFormatter::with_indent(&indent);
            v.serialize(&mut serde_json::Serializer::with_formatter(&mut out, f))
        };
        written.map_err(|e| Error::internal(e.to_string()))?;
        let mut s = String::from_utf8(out).map_err(|e| Error::internal(e.to_string()))?;
        if self.final_newline {
            s.push('\n');
        }
        Ok(s)
    }
}

/// One edit of the text: at byte `at`, `removed` (whitespace only) was replaced by `inserted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Splice {
    pub at: usize,
    pub removed: String,
    pub inserted: String,
}

impl Splice {
    fn apply(&self, text: &str) -> String {
        format!(
            "{}{}{}",
            &text[..self.at],
            self.inserted,
            &text[self.at + self.removed.len()..]
        )
    }

    /// The text before this splice, if `text` is what it made.
    fn undo(&self, text: &str) -> Option<String> {
        let end = self.at.checked_add(self.inserted.len())?;
        (text.get(self.at..end)? == self.inserted)
            .then(|| format!("{}{}{}", &text[..self.at], self.removed, &text[end..]))
    }
}

/// `text` with `splices` taken out, newest first; `None` when it is not what they made.
pub fn undo_all(text: &str, splices: &[Splice]) -> Option<String> {
    splices
        .iter()
        .rev()
        .try_fold(text.to_string(), |t, s| s.undo(&t))
}

fn ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The end of the string starting at `i` (its opening quote).
fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The end of the value starting at `i`.
fn value_end(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(b'"') => string_end(b, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']') && !b[j].is_ascii_whitespace()
            {
                j += 1;
            }
            j
        }
    }
}

/// The items of the container opening at `open`: for an object, each member's key (decoded)
/// and value span; for an array, each element's span (key `None`).
fn items(text: &str, open: usize) -> Vec<(Option<String>, usize, usize)> {
    let b = text.as_bytes();
    let object = b[open] == b'{';
    let mut out = Vec::new();
    let mut i = ws(b, open + 1);
    while i < b.len() && !matches!(b[i], b'}' | b']') {
        let key = if object {
            let end = string_end(b, i);
            let k = serde_json::from_str::<String>(&text[i..end]).ok();
            i = ws(b, end) + 1; // past ':'
            i = ws(b, i);
            k
        } else {
            None
        };
        let end = value_end(b, i);
        out.push((key, i, end));
        i = ws(b, end);
        if b.get(i) == Some(&b',') {
            i = ws(b, i + 1);
        }
    }
    out
}

/// The span of the value at `path` (object keys from the top), if the text has one.
fn find(text: &str, path: &[String]) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let start = ws(b, 0);
    let mut span = (start, value_end(b, start));
    for key in path {
        if b.get(span.0) != Some(&b'{') {
            return None;
        }
        let (_, s, e) = items(text, span.0)
            .into_iter()
            .find(|(k, _, _)| k.as_deref() == Some(key))?;
        span = (s, e);
    }
    Some(span)
}

/// The indentation of the line `at` is on.
fn line_indent(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// `v` as it is written at `indent` (one level being `unit`; empty: on one line).
fn render(v: &Value, indent: &str, unit: &str) -> String {
    use serde::Serialize as _;
    if unit.is_empty() {
        return v.to_string();
    }
    let mut out = Vec::new();
    let f = serde_json::ser::PrettyFormatter::with_indent(unit.as_bytes());
    let _ = v.serialize(&mut serde_json::Serializer::with_formatter(&mut out, f));
    String::from_utf8_lossy(&out).replace('\n', &format!("\n{indent}"))
}

/// Put `item` (a member `"key": value` when `key` is given, else an array element) last into
/// the container spanning `span`, written as the text around it is; `unit` is one level of
/// the file's indentation (empty: a file on one line).
fn put(text: &str, span: (usize, usize), key: Option<&str>, item: &Value, unit: &str) -> Splice {
    let existing = items(text, span.0);
    let close = span.1 - 1;
    let inner = &text[span.0 + 1..close];
    let multiline = inner.contains('\n') || (existing.is_empty() && !unit.is_empty());
    let outer = line_indent(text, span.0).to_string();
    let member_indent = match existing.first() {
        Some((_, s, _)) if multiline => {
            // A key's quote, or the element itself, starts the member's line.
            let first = if key.is_some() {
                text[..*s]
                    .rfind('"')
                    .and_then(|q| text[..q].rfind('"'))
                    .unwrap_or(*s)
            } else {
                *s
            };
            line_indent(text, first).to_string()
        }
        _ => format!("{outer}{unit}"),
    };
    // The spacing the file uses after a key's colon and between items.
    let colon = if text.contains("\": ") || multiline {
        ": "
    } else {
        ":"
    };
    let sep = if !multiline && inner.contains(", ") {
        ", "
    } else {
        ","
    };
    let body = render(item, &member_indent, if multiline { unit } else { "" });
    let member = match key {
        Some(k) => format!("{}{colon}{body}", Value::String(k.to_string())),
        None => body,
    };
    match existing.last() {
        Some((_, _, last_end)) => Splice {
            at: *last_end,
            removed: String::new(),
            inserted: if multiline {
                format!(",\n{member_indent}{member}")
            } else {
                format!("{sep}{member}")
            },
        },
        None => {
            // An empty container: what was inside (whitespace) is replaced.
            Splice {
                at: span.0 + 1,
                removed: inner.to_string(),
                inserted: if multiline {
                    format!("\n{member_indent}{member}\n{outer}")
                } else {
                    member
                },
            }
        }
    }
}

/// The one level of indentation `text` uses (empty: all on one line).
pub fn unit_of(text: &str) -> String {
    let l = Layout::of(Some(text));
    let c = if l.tabs { "\t" } else { " " };
    c.repeat(usize::from(l.indent))
}

/// `text` with `value` set at `path` (absent: the containers missing on the way made around
/// it, as one member of the deepest object that is there) or, `append`, pushed onto the array
/// at `path`; the splice that did it.
pub fn set(text: &str, path: &[String], value: &Value, append: bool) -> Option<(String, Splice)> {
    let unit = unit_of(text);
    if append && let Some(span) = find(text, path) {
        if text.as_bytes().get(span.0) != Some(&b'[') {
            return None;
        }
        let s = put(text, span, None, value, &unit);
        return Some((s.apply(text), s));
    }
    // The deepest object on the way that is there, and what goes into it.
    let leaf = if append {
        Value::Array(vec![value.clone()])
    } else {
        value.clone()
    };
    for depth in (0..path.len()).rev() {
        let Some(span) = find(text, &path[..depth]) else {
            continue;
        };
        if text.as_bytes().get(span.0) != Some(&b'{') {
            return None;
        }
        let mut v = leaf.clone();
        for k in path[depth + 1..].iter().rev() {
            let mut m = serde_json::Map::new();
            m.insert(k.clone(), v);
            v = Value::Object(m);
        }
        let s = put(text, span, Some(&path[depth]), &v, &unit);
        return Some((s.apply(text), s));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    /// Each edit leaves valid JSON with the value in it, the rest as it was, and comes out
    /// again byte for byte.
    fn check(text: &str, path: &[&str], v: Value, append: bool, want: &str) {
        let (out, s) = set(text, &p(path), &v, append).unwrap();
        assert_eq!(out, want, "{text:?}");
        let parsed: Value = serde_json::from_str(&out).unwrap();
        let at = path.iter().fold(&parsed, |x, k| &x[*k]);
        if append {
            assert_eq!(at.as_array().unwrap().last(), Some(&v));
        } else {
            assert_eq!(at, &v);
        }
        assert_eq!(undo_all(&out, &[s]).as_deref(), Some(text));
    }

    #[test]
    fn members_and_elements_go_in_as_the_file_is_written() {
        // Two spaces, a key into an existing object.
        check(
            "{\n  \"a\": 1,\n  \"m\": {\n    \"x\": true\n  }\n}\n",
            &["m", "baton"],
            serde_json::json!({"command": "b"}),
            false,
            "{\n  \"a\": 1,\n  \"m\": {\n    \"x\": true,\n    \"baton\": {\n      \"command\": \"b\"\n    }\n  }\n}\n",
        );
        // Containers made on the way; four spaces kept.
        check(
            "{\n    \"a\": 1\n}",
            &["hooks", "Stop"],
            serde_json::json!({"k": 1}),
            true,
            "{\n    \"a\": 1,\n    \"hooks\": {\n        \"Stop\": [\n            {\n                \"k\": 1\n            }\n        ]\n    }\n}",
        );
        // Appended to an array of the user's.
        check(
            "{\n  \"l\": [\n    1\n  ]\n}",
            &["l"],
            serde_json::json!(2),
            true,
            "{\n  \"l\": [\n    1,\n    2\n  ]\n}",
        );
        // One line, as the user spaced it.
        check(
            "{\"numStartups\": 7, \"t\": \"x\"}\n",
            &["mcpServers", "baton"],
            serde_json::json!({"args": ["mcp"]}),
            false,
            "{\"numStartups\": 7, \"t\": \"x\", \"mcpServers\": {\"baton\":{\"args\":[\"mcp\"]}}}\n",
        );
        // An empty object, and an empty file's object.
        check(
            "{}\n",
            &["k"],
            serde_json::json!("v"),
            false,
            "{\n  \"k\": \"v\"\n}\n",
        );
        // Strings holding braces and escaped quotes are skipped whole.
        check(
            "{\n  \"s\": \"}{\\\"]\",\n  \"o\": {}\n}",
            &["o", "k"],
            serde_json::json!(1),
            false,
            "{\n  \"s\": \"}{\\\"]\",\n  \"o\": {\n    \"k\": 1\n  }\n}",
        );
    }

    #[test]
    fn a_layout_is_read_and_written_back_byte_for_byte() {
        for text in [
            "{\n  \"a\": 1,\n  \"b\": [\n    true\n  ]\n}\n",
            "{\n    \"a\": 1\n}",
            "{\n\t\"a\": {\n\t\t\"b\": \"c\"\n\t}\n}\n",
            "{\"a\":1,\"b\":{\"c\":null}}",
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(Layout::of(Some(text)).render(&v).unwrap(), text, "{text:?}");
        }
        assert_eq!(Layout::of(None), Layout::default());
    }

    #[test]
    fn a_text_changed_since_is_not_undone() {
        let (out, s) = set("{\n  \"a\": 1\n}", &p(&["b"]), &serde_json::json!(2), false).unwrap();
        assert_eq!(undo_all(&out.replace("\"b\"", "\"c\""), &[s]), None);
        // Not an object where one is needed: no edit.
        assert!(set("{\"a\": 1}", &p(&["a", "b"]), &serde_json::json!(2), false).is_none());
    }

    proptest::proptest! {
        /// Any object in any of the layouts a user writes: baton's key goes in, the text
        /// stays valid JSON holding everything it held, and comes out byte for byte.
        #[test]
        fn any_object_takes_a_key_and_gives_it_back(
            members in proptest::collection::btree_map("[a-z\"\\\\{}\\[\\], :é]{0,6}", "[ -~é]{0,8}", 0..5),
            nested in proptest::bool::ANY,
            layout in 0usize..4,
        ) {
            let mut doc = serde_json::Map::new();
            for (k, v) in &members {
                doc.insert(k.clone(), Value::String(v.clone()));
            }
            if nested {
                doc.insert("hooks".into(), serde_json::json!({"Stop": [1, {"a": []}]}));
            }
            let doc = Value::Object(doc);
            let text = match layout {
                0 => doc.to_string(),
                1 => serde_json::to_string_pretty(&doc).unwrap() + "\n",
                _ => Layout {
                    indent: if layout == 2 { 4 } else { 1 },
                    tabs: layout == 3,
                    final_newline: layout == 2,
                }
                .render(&doc)
                .unwrap(),
            };
            for (path, append) in [(p(&["hooks", "Stop"]), true), (p(&["mcpServers", "baton"]), false)] {
                let v = serde_json::json!({"command": "baton", "args": ["mcp"]});
                let (out, s) = set(&text, &path, &v, append).unwrap();
                let parsed: Value = serde_json::from_str(&out).unwrap();
                for (k, val) in doc.as_object().unwrap() {
                    if k != "hooks" {
                        proptest::prop_assert_eq!(&parsed[k], val);
                    }
                }
                let at = path.iter().fold(&parsed, |x, k| &x[k.as_str()]);
                if append {
                    proptest::prop_assert_eq!(at.as_array().unwrap().last(), Some(&v));
                } else {
                    proptest::prop_assert_eq!(at, &v);
                }
                proptest::prop_assert_eq!(undo_all(&out, &[s]), Some(text.clone()));
            }
        }
    }
}
