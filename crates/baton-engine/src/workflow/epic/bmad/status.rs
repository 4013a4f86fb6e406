//! A story's status line: find it in the forms real BMAD files use, normalise it, rewrite it in
//! place.
//!
//! Forms (first one in document order wins; lines inside code fences are never read):
//! - inline: `Status: ready-for-dev`, `**Status:** Done`, `**Status**: Done`,
//!   `- **Status**: Complete`, `Story Status: Approved`, `## Status: Done`, YAML front matter's
//!   `status: done`;
//! - heading: a `## Status` / `## Story Status` heading (any level, any case, optional colon)
//!   whose first non-blank line before the next heading holds the value: `Done`,
//!   `**Done** ✅`, `- Complete`, or an inline line as above.
//!
//! Rewriting replaces only the value: the prefix (`**Status:** `, list marker, heading) and a
//! bold wrapper around the value are kept; what followed a bold value (`✅`) described the old
//! value and goes with it. Every other byte of the file stays as it was.

use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::sync::LazyLock;

use pulldown_cmark::{Event, Options, Parser, Tag};
use regex::Regex;

use crate::error::{Error, Result};
use baton_core::error::io_err;

/// A story's status, normalised. Mapping (case and punctuation ignored; the longest leading
/// phrase of the value that is known decides, so `Ready for Review` is Review and
/// `Done ✅ 2024-05-01` is Done):
///
/// | status | written as | read from |
/// |---|---|---|
/// | Backlog | `backlog` | backlog, todo, to do, not started, new, planned, pending |
/// | Drafted | `drafted` | draft, drafted, story drafted, in draft |
/// | ReadyForDev | `ready-for-dev` | approved, ready, ready for dev(elopment), ready to dev, ready to start, contexted |
/// | InProgress | `in-progress` | in progress, InProgress, in development, in dev, wip, started, doing, implementing, active |
/// | Review | `review` | review, in review, ready for review, needs review, code review, reviewing, under review, ready for qa, qa |
/// | Done | `done` | done, complete, completed, finished, closed, merged, shipped |
/// | Blocked | `blocked` | blocked, on hold |
/// | Failed | `failed` | failed, failure, fail |
/// | Unknown | the raw text | anything else, including an empty value |
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Status {
    Backlog,
    Drafted,
    ReadyForDev,
    InProgress,
    Review,
    Done,
    Blocked,
    Failed,
    Unknown(String),
}

const TABLE: &[(&str, Status)] = &[
    ("backlog", Status::Backlog),
    ("todo", Status::Backlog),
    ("to-do", Status::Backlog),
    ("not-started", Status::Backlog),
    ("new", Status::Backlog),
    ("planned", Status::Backlog),
    ("pending", Status::Backlog),
    ("draft", Status::Drafted),
    ("drafted", Status::Drafted),
    ("story-drafted", Status::Drafted),
    ("in-draft", Status::Drafted),
    ("approved", Status::ReadyForDev),
    ("ready", Status::ReadyForDev),
    ("ready-for-dev", Status::ReadyForDev),
    ("readyfordev", Status::ReadyForDev),
    ("ready-for-development", Status::ReadyForDev),
    ("ready-to-dev", Status::ReadyForDev),
    ("ready-to-start", Status::ReadyForDev),
    ("contexted", Status::ReadyForDev),
    ("in-progress", Status::InProgress),
    ("inprogress", Status::InProgress),
    ("in-development", Status::InProgress),
    ("in-dev", Status::InProgress),
    ("wip", Status::InProgress),
    ("started", Status::InProgress),
    ("doing", Status::InProgress),
    ("implementing", Status::InProgress),
    ("active", Status::InProgress),
    ("review", Status::Review),
    ("in-review", Status::Review),
    ("inreview", Status::Review),
    ("ready-for-review", Status::Review),
    ("readyforreview", Status::Review),
    ("needs-review", Status::Review),
    ("code-review", Status::Review),
    ("reviewing", Status::Review),
    ("under-review", Status::Review),
    ("ready-for-qa", Status::Review),
    ("qa", Status::Review),
    ("done", Status::Done),
    ("complete", Status::Done),
    ("completed", Status::Done),
    ("finished", Status::Done),
    ("closed", Status::Done),
    ("merged", Status::Done),
    ("shipped", Status::Done),
    ("blocked", Status::Blocked),
    ("on-hold", Status::Blocked),
    ("onhold", Status::Blocked),
    ("failed", Status::Failed),
    ("failure", Status::Failed),
    ("fail", Status::Failed),
];

impl Status {
    /// Normalise a raw value (markup, emoji and case ignored).
    pub fn normalize(raw: &str) -> Status {
        let lower = raw.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .take(4)
            .collect();
        for n in (1..=words.len()).rev() {
            let key = words[..n].join("-");
            if let Some((_, s)) = TABLE.iter().find(|(k, _)| *k == key) {
                return s.clone();
            }
        }
        Status::Unknown(raw.trim().to_string())
    }

    /// The canonical spelling (BMAD v6's, as in sprint-status.yaml); Unknown keeps its text.
    pub fn as_str(&self) -> &str {
        match self {
            Status::Backlog => "backlog",
            Status::Drafted => "drafted",
            Status::ReadyForDev => "ready-for-dev",
            Status::InProgress => "in-progress",
            Status::Review => "review",
            Status::Done => "done",
            Status::Blocked => "blocked",
            Status::Failed => "failed",
            Status::Unknown(s) => s,
        }
    }
}

impl Status {
    /// The spelling of BMAD 6's spec-folder stories (`draft`, `in-review`).
    pub fn spec_str(&self) -> &str {
        match self {
            Status::Drafted | Status::Backlog => "draft",
            Status::Review => "in-review",
            other => other.as_str(),
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusForm {
    /// `Status: x` on one line (also bold, list item, heading with a colon, front matter).
    Inline,
    /// A `## Status` heading with the value on a later line.
    Heading,
}

/// Where a file's status is and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusField {
    pub form: StatusForm,
    /// The value as written, trimmed (`**Done** ✅`); empty when the place exists but is blank.
    pub raw: String,
    pub status: Status,
    /// 1-based line of the value (of the heading when the heading has no value yet).
    pub line: usize,
    /// Bytes replaced by a rewrite.
    span: Range<usize>,
    /// Written around the new value: a kept bold wrapper, or the line breaks a heading with no
    /// value line needs.
    before: &'static str,
    after: &'static str,
}

/// `[indent][# ][- ][**][Story ]Status[**]:` — the bold may close before or after the colon.
static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^[ \t]{0,3}(?:#{1,6}[ \t]+)?(?:[-*+][ \t]+)?(\*\*|__)?(?:story[ \t]+)?status[ \t]*(\*\*|__)?[ \t]*:[ \t]*",
    )
    .expect("valid regex")
});
/// An ATX heading line; group 1 is its text.
static HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[ \t]{0,3}#{1,6}(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$").expect("valid regex")
});
static LIST_MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+").expect("valid regex"));

/// Byte ranges of fenced and indented code blocks: `Status:` there is an example, not a status.
fn code_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for (ev, range) in
        Parser::new_ext(text, Options::ENABLE_YAML_STYLE_METADATA_BLOCKS).into_offset_iter()
    {
        if let Event::Start(Tag::CodeBlock(_)) = ev {
            out.push(range);
        }
    }
    out
}

/// Lines as (start, end-without-line-break) byte offsets.
fn lines(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            let end = if i > start && text.as_bytes()[i - 1] == b'\r' {
                i - 1
            } else {
                i
            };
            out.push((start, end));
            start = i + 1;
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

/// The value part of an inline status line starting at `line_start`, as (value start, value
/// end) within `text`; `None` if the line is no status line.
fn inline_value(text: &str, line: (usize, usize)) -> Option<(usize, usize)> {
    let s = &text[line.0..line.1];
    let c = PREFIX.captures(s)?;
    let mut at = c.get(0)?.end();
    // `**Status:** Done`: the bold opened before `Status` closes after the colon.
    if let (Some(open), None) = (c.get(1), c.get(2))
        && s[at..].starts_with(open.as_str())
    {
        at += open.len();
        at += s[at..].len() - s[at..].trim_start_matches([' ', '\t']).len();
    }
    Some((line.0 + at, line.1))
}

fn is_status_heading(line: &str) -> bool {
    let Some(c) = HEADING.captures(line) else {
        return false;
    };
    let title = c.get(1).map_or("", |m| m.as_str());
    let title = title
        .trim_matches(|ch: char| ch == '*' || ch == '_' || ch.is_whitespace())
        .trim_end_matches(':')
        .trim_matches(|ch: char| ch == '*' || ch == '_' || ch.is_whitespace())
        .to_lowercase();
    let words: Vec<&str> = title.split_whitespace().collect();
    words == ["status"] || words == ["story", "status"]
}

/// Build the field for a value at `text[start..end]`, keeping a bold wrapper.
fn field(text: &str, form: StatusForm, line: usize, start: usize, end: usize) -> StatusField {
    let val = text[start..end].trim_end();
    let end = start + val.len();
    let mut before: &'static str = "";
    let mut after: &'static str = "";
    for m in ["**", "__"] {
        // `**Done** ✅` keeps `**…**`; `**Status: Done**` (the whole line bold) keeps the end.
        if val.strip_prefix(m).is_some_and(|rest| rest.contains(m)) {
            (before, after) = (m, m);
            break;
        }
        if val.ends_with(m) {
            after = m;
            break;
        }
    }
    if val.is_empty() && text[..start].ends_with(':') {
        before = " ";
    }
    StatusField {
        form,
        raw: val.to_string(),
        status: Status::normalize(val),
        line,
        span: start..end,
        before,
        after,
    }
}

/// Find the status of a story file's text.
pub fn find(text: &str) -> Option<StatusField> {
    let code = code_ranges(text);
    let in_code = |pos: usize| code.iter().any(|r| r.contains(&pos));
    let lines = lines(text);
    let mut i = 0;
    while i < lines.len() {
        let (ls, le) = lines[i];
        if in_code(ls) {
            i += 1;
            continue;
        }
        if is_status_heading(&text[ls..le]) {
            // The value: the first non-blank line before the next heading.
            for (j, &(s, e)) in lines.iter().enumerate().skip(i + 1) {
                let l = &text[s..e];
                if l.trim().is_empty() {
                    continue;
                }
                // A fence or the next heading: the heading has no value line.
                if in_code(s) || HEADING.is_match(l) {
                    break;
                }
                let (vs, ve) = inline_value(text, (s, e)).unwrap_or_else(|| {
                    let skip = LIST_MARKER.find(l).map_or(0, |m| m.end());
                    let lead = l[skip..].len() - l[skip..].trim_start().len();
                    (s + skip + lead, e)
                });
                return Some(field(text, StatusForm::Heading, j + 1, vs, ve));
            }
            // A heading with no value yet: a rewrite adds the value line under it.
            let at = lines.get(i + 1).map_or(text.len(), |&(s, _)| s);
            let ends_line = text[..at].ends_with('\n');
            return Some(StatusField {
                form: StatusForm::Heading,
                raw: String::new(),
                status: Status::Unknown(String::new()),
                line: i + 1,
                span: at..at,
                before: if ends_line { "\n" } else { "\n\n" },
                after: "\n",
            });
        }
        if let Some((vs, ve)) = inline_value(text, (ls, le)) {
            return Some(field(text, StatusForm::Inline, i + 1, vs, ve));
        }
        i += 1;
    }
    None
}

/// One line of text: line breaks would change the file's structure.
fn one_line(value: &str) -> String {
    value
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` with its status value replaced by `value`, or a `Status: value` line inserted after
/// the title (at the top when there is no title) when the file has no status.
pub fn rewrite(text: &str, value: &str) -> String {
    let value = one_line(value);
    match find(text) {
        Some(f) => {
            let mut out = String::with_capacity(text.len() + value.len() + 4);
            out.push_str(&text[..f.span.start]);
            out.push_str(f.before);
            out.push_str(&value);
            out.push_str(f.after);
            out.push_str(&text[f.span.end..]);
            out
        }
        None => insert_status(text, &value),
    }
}

fn insert_status(text: &str, value: &str) -> String {
    let line = format!("Status: {value}\n");
    let all = lines(text);
    let mut k = 0;
    // Front matter stays first.
    if all
        .first()
        .is_some_and(|&(s, e)| text[s..e].trim_end() == "---")
        && let Some(close) = all
            .iter()
            .skip(1)
            .position(|&(s, e)| matches!(text[s..e].trim_end(), "---" | "..."))
    {
        k = close + 2;
    }
    while all
        .get(k)
        .is_some_and(|&(s, e)| text[s..e].trim().is_empty())
    {
        k += 1;
    }
    let out = match all.get(k) {
        // After the title line, with a blank line on each side.
        Some(&(s, e)) if text[s..e].trim_start_matches(' ').starts_with("# ") => {
            let brk = if text[e..].starts_with("\r\n") {
                "\r\n"
            } else {
                "\n"
            };
            let rest = text[e..].strip_prefix(brk).unwrap_or(&text[e..]);
            let blank_follows =
                rest.is_empty() || rest.starts_with('\n') || rest.starts_with("\r\n");
            let gap = if blank_follows { "" } else { "\n" };
            format!("{}{brk}\n{line}{gap}{rest}", &text[..e])
        }
        Some(&(s, _)) => format!("{}{line}\n{}", &text[..s], &text[s..]),
        None => format!(
            "{text}{}{line}",
            if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                "\n"
            }
        ),
    };
    // Whatever the Markdown around it does, the line must read back as the status.
    if find(&out).is_some() {
        out
    } else {
        format!("{line}\n{text}")
    }
}

/// `status` spelled the way the file spells its statuses: `in-progress` beside kebab-case
/// values, `In Progress` beside Title Case ones (`Ready for Review`), `in progress` beside
/// lower-case words, upper case beside upper case.
pub fn styled(status: &Status, old_raw: &str) -> String {
    let canonical = status.as_str().to_string();
    if matches!(status, Status::Unknown(_)) {
        return canonical;
    }
    let value = old_raw.trim_start_matches(['*', '_', ' ']);
    let word: String = value
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | ' '))
        .collect();
    let word = word.trim();
    let letters: Vec<char> = word.chars().filter(|c| c.is_alphabetic()).collect();
    if letters.is_empty() {
        return canonical;
    }
    let words = canonical.replace('-', " ");
    let title = words
        .split(' ')
        .map(|w| match w {
            "for" => w.to_string(),
            w => {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_uppercase().chain(c).collect())
                    .unwrap_or_default()
            }
        })
        .collect::<Vec<String>>()
        .join(" ");
    if letters.len() > 1 && letters.iter().all(|c| c.is_uppercase()) {
        title.to_uppercase()
    } else if letters[0].is_uppercase() {
        title
    } else if word.contains(' ') {
        words
    } else {
        canonical
    }
}

/// Read a story file and set its status to `status`, in the file's own spelling (see
/// [`styled`]); replace it atomically (temp file in the same directory, fsync, rename),
/// keeping the file's permissions. A file that already says `status` — in any form, with any
/// annotation (`Done (Code Review Complete)`) — is left as it is.
pub fn write_file(path: &Path, status: &Status) -> Result<()> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::invalid(format!("{} is not UTF-8 text", path.display())))?;
    // A BMAD 6 story keeps its status in its frontmatter, in the spec-folder vocabulary.
    if let Some(new) = super::spec::set_status(&text, status.spec_str()) {
        return if new == text {
            Ok(())
        } else {
            replace_file(path, new.as_bytes())
        };
    }
    let old = find(&text);
    if old.as_ref().is_some_and(|f| f.status == *status) {
        return Ok(());
    }
    let value = old
        .as_ref()
        .map_or_else(|| status.as_str().to_string(), |f| styled(status, &f.raw));
    let new = rewrite(&text, &value);
    replace_file(path, new.as_bytes())
}

/// Replace `path` by `bytes` all at once, keeping its permissions. fsync'd: story files and
/// sprint-status.yaml are the user's data, not derived views.
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let perms = std::fs::metadata(path).map_err(io_err(path))?.permissions();
    let mut tmp = baton_core::fs::temp_in(dir)?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    tmp.as_file().sync_all().map_err(io_err(path))?;
    std::fs::set_permissions(tmp.path(), perms).map_err(io_err(path))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_status_keeps_the_files_spelling_and_annotation() {
        let cases = [
            ("review", Status::Done, "done"),
            ("ready-for-dev", Status::InProgress, "in-progress"),
            ("Ready for Review", Status::InProgress, "In Progress"),
            ("Approved", Status::ReadyForDev, "Ready for Dev"),
            ("in progress", Status::Review, "review"),
            ("in progress", Status::ReadyForDev, "ready for dev"),
            ("DRAFT", Status::Done, "DONE"),
            ("**Done** ✅", Status::InProgress, "In Progress"),
            ("", Status::Done, "done"),
        ];
        for (raw, st, want) in cases {
            assert_eq!(styled(&st, raw), want, "{raw}");
        }
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.md");
        let text = "# Story 1.1: X\n\nStatus: Done (Code Review Complete)\n";
        std::fs::write(&p, text).unwrap();
        write_file(&p, &Status::Done).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
        write_file(&p, &Status::InProgress).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "# Story 1.1: X\n\nStatus: In Progress\n"
        );
    }

    fn status_of(text: &str) -> Option<(StatusForm, String, Status)> {
        find(text).map(|f| (f.form, f.raw, f.status))
    }

    #[test]
    fn normalisation_table() {
        let cases = [
            ("ready-for-dev", Status::ReadyForDev),
            ("Approved", Status::ReadyForDev),
            ("Ready", Status::ReadyForDev),
            ("Ready for Review", Status::Review),
            ("InProgress", Status::InProgress),
            ("In Progress (50%)", Status::InProgress),
            ("**Done** ✅", Status::Done),
            ("✅ Complete", Status::Done),
            ("Completed - all ACs met", Status::Done),
            ("DONE", Status::Done),
            ("Draft", Status::Drafted),
            ("backlog", Status::Backlog),
            ("On Hold", Status::Blocked),
            ("FAILED", Status::Failed),
            ("not done", Status::Unknown("not done".into())),
            ("optional", Status::Unknown("optional".into())),
            ("", Status::Unknown(String::new())),
        ];
        for (raw, want) in cases {
            assert_eq!(Status::normalize(raw), want, "{raw}");
        }
    }

    #[test]
    fn forms_are_found() {
        let cases: [(&str, StatusForm, &str, Status); 9] = [
            (
                "# Story 1.2: X\n\nStatus: ready-for-dev\n",
                StatusForm::Inline,
                "ready-for-dev",
                Status::ReadyForDev,
            ),
            (
                "# S\n**Status:** Done\n",
                StatusForm::Inline,
                "Done",
                Status::Done,
            ),
            (
                "# S\n**Status**: In Review\n",
                StatusForm::Inline,
                "In Review",
                Status::Review,
            ),
            (
                "# S\n- **Status**: Complete\n",
                StatusForm::Inline,
                "Complete",
                Status::Done,
            ),
            (
                "# S\nstory status: approved\n",
                StatusForm::Inline,
                "approved",
                Status::ReadyForDev,
            ),
            (
                "# S\n\n## Status\n\nDone\n\n## Story\n",
                StatusForm::Heading,
                "Done",
                Status::Done,
            ),
            (
                "# S\n## Story Status\n**Done** ✅\n",
                StatusForm::Heading,
                "**Done** ✅",
                Status::Done,
            ),
            (
                "# S\n## STATUS:\n\n- **Status**: Complete\n",
                StatusForm::Heading,
                "Complete",
                Status::Done,
            ),
            (
                "---\nstatus: review\n---\n# S\n",
                StatusForm::Inline,
                "review",
                Status::Review,
            ),
        ];
        for (doc, form, raw, st) in cases {
            assert_eq!(status_of(doc), Some((form, raw.to_string(), st)), "{doc:?}");
        }
    }

    #[test]
    fn fences_and_other_headings_are_not_status() {
        assert_eq!(status_of("# S\n```\nStatus: done\n```\n"), None);
        assert_eq!(status_of("# S\n## Status Report\nDone\n"), None);
        assert_eq!(status_of("# S\nThe status: fine\n"), None);
        // The first status in document order wins.
        let doc = "# S\n```md\nStatus: x\n```\n## Status\n\nReview\n\nStatus: done\n";
        assert_eq!(status_of(doc).map(|s| s.2), Some(Status::Review));
    }

    /// Round trip: find, rewrite, find again; only the value's bytes changed.
    fn round_trip(doc: &str, want_doc: &str) {
        let new = rewrite(doc, "in-progress");
        assert_eq!(new, want_doc, "from {doc:?}");
        assert_eq!(find(&new).map(|f| f.status), Some(Status::InProgress));
    }

    #[test]
    fn rewrites_keep_the_form() {
        round_trip(
            "# Story 1.2: X\n\nStatus: ready-for-dev\n\n## Story\nbody\n",
            "# Story 1.2: X\n\nStatus: in-progress\n\n## Story\nbody\n",
        );
        round_trip(
            "# S\n**Status:** Done\nrest",
            "# S\n**Status:** in-progress\nrest",
        );
        round_trip(
            "# S\r\n**Status**: Done\r\nrest\r\n",
            "# S\r\n**Status**: in-progress\r\nrest\r\n",
        );
        round_trip(
            "# S\n- **Status**: Complete\n",
            "# S\n- **Status**: in-progress\n",
        );
        round_trip(
            "# S\n\n## Status\n\n**Done** ✅\n\n## Tasks\n",
            "# S\n\n## Status\n\n**in-progress**\n\n## Tasks\n",
        );
        round_trip("# S\n## Status\nDone", "# S\n## Status\nin-progress");
        round_trip(
            "# S\n## Status\n- Done  \n",
            "# S\n## Status\n- in-progress  \n",
        );
        round_trip("**Status: Done**\n", "**Status: in-progress**\n");
        round_trip("Status:\n# S\n", "Status: in-progress\n# S\n");
        round_trip(
            "# S\n## Status\n\n## Next\n",
            "# S\n## Status\n\nin-progress\n\n## Next\n",
        );
        round_trip("# S\n## Status", "# S\n## Status\n\nin-progress\n");
    }

    #[test]
    fn missing_status_is_inserted_after_the_title() {
        round_trip(
            "# Story 1.2: X\n\n## Story\n",
            "# Story 1.2: X\n\nStatus: in-progress\n\n## Story\n",
        );
        round_trip(
            "# Story 1.2: X\nbody\n",
            "# Story 1.2: X\n\nStatus: in-progress\n\nbody\n",
        );
        round_trip("# T", "# T\n\nStatus: in-progress\n");
        round_trip("no title\n", "Status: in-progress\n\nno title\n");
        round_trip("", "Status: in-progress\n");
    }

    #[test]
    fn write_file_is_atomic_and_keeps_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("1-2-x.md");
        std::fs::write(&p, "# Story 1.2: X\n\nStatus: review\n\nünïcode rest\n").unwrap();
        write_file(&p, &Status::Done).unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "# Story 1.2: X\n\nStatus: done\n\nünïcode rest\n"
        );
        // Only the story file is left: the temp file was renamed over it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(write_file(&p, &Status::Done).is_err());
    }

    fn any_status() -> impl Strategy<Value = Status> {
        prop_oneof![
            Just(Status::Backlog),
            Just(Status::Drafted),
            Just(Status::ReadyForDev),
            Just(Status::InProgress),
            Just(Status::Review),
            Just(Status::Done),
            Just(Status::Blocked),
            Just(Status::Failed),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Any text: reading never panics; writing a status then reading returns it, and the
        /// bytes before the status place are unchanged.
        #[test]
        fn write_then_read(
            doc in "(# Story 1\\.2: T\n|## Status\n|Status: |\\*\\*|Done|```\n|\r\n|\n| |x|#|- |ü|✅|status:)*",
            st in any_status(),
        ) {
            let before = find(&doc);
            let new = rewrite(&doc, st.as_str());
            let got = find(&new);
            prop_assert_eq!(got.as_ref().map(|f| &f.status), Some(&st), "{:?} -> {:?}", doc, new);
            if let Some(f) = before {
                prop_assert_eq!(&new[..f.span.start], &doc[..f.span.start]);
            }
        }

        #[test]
        fn arbitrary_text_never_panics(doc in "\\PC*", value in "\\PC*") {
            let _ = find(&doc);
            let _ = rewrite(&doc, &value);
        }
    }
}
