//! Spec extraction: give an agent the one section its task needs, not the whole
//! design. Sections come from [`baton_core::markdown::sections`]; this module finds them by title, by task
//! type (a routing table) or by ADR decision id, and cuts them to a token budget.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::tokens::Encoding;
use crate::error::{Error, Result};
use baton_core::markdown::{Section, select};

/// `[extract]` in baton.toml.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ExtractConfig {
    /// Task type → candidate section titles; the first one the document has is extracted.
    /// Overrides or extends [`default_routes`].
    pub routes: BTreeMap<String, Titles>,
}

/// One title or a list of candidate titles.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Titles {
    One(String),
    Many(Vec<String>),
}

impl Titles {
    fn list(&self) -> Vec<String> {
        match self {
            Titles::One(s) => vec![s.clone()],
            Titles::Many(v) => v.clone(),
        }
    }
}

/// A route entry meaning "the document's lead": its first section up to its first subsection.
pub const LEAD: &str = "@lead";

/// The default routing table: the sections each task type needs. `other` is the minimal extraction: an overview or summary if the
/// document has one, else its lead.
pub fn default_routes() -> BTreeMap<String, Vec<String>> {
    let r = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    BTreeMap::from([
        (
            "create_model".into(),
            r(&["Data Model", "Data Models", "Schema"]),
        ),
        (
            "add_endpoint".into(),
            r(&["API Contracts", "API Contract", "API"]),
        ),
        (
            "create_service".into(),
            r(&["Components", "Services", "Architecture"]),
        ),
        ("other".into(), r(&["Overview", "Summary", LEAD])),
    ])
}

impl ExtractConfig {
    pub fn routes(&self) -> BTreeMap<String, Vec<String>> {
        let mut all = default_routes();
        all.extend(self.routes.iter().map(|(k, v)| (k.clone(), v.list())));
        all
    }

    pub fn route(&self, task_type: &str) -> Result<Vec<String>> {
        let all = self.routes();
        all.get(task_type).cloned().ok_or_else(|| {
            let names: Vec<_> = all.keys().map(String::as_str).collect();
            Error::invalid(format!("unknown task type {task_type:?}")).hint(format!(
                "known task types: {}; add one under [extract.routes] in baton.toml",
                names.join(", ")
            ))
        })
    }
}

/// A picked piece of the document: a whole section, or a section's lead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pick {
    pub section: Section,
    /// True when only the text before the first subsection was taken.
    pub lead_only: bool,
}

/// Titles compared loosely: case, runs of whitespace, a leading section number ("3.2 ") and a
/// trailing colon do not matter.
pub fn normalize(title: &str) -> String {
    let t = strip_number(title.trim());
    let t = t.trim_end_matches(':');
    // One allocation: this runs on every heading of the document.
    let mut out = String::with_capacity(t.len());
    for w in t.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        if w.is_ascii() {
            out.extend(w.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        } else {
            out.extend(w.chars().flat_map(char::to_lowercase));
        }
    }
    out
}

/// Strip a leading section number: `3 `, `3.2 `, `3.2.1) `, `A. ` (must be followed by space).
/// A scan, not a regex: it runs on every heading of the document.
fn strip_number(t: &str) -> &str {
    let b = t.as_bytes();
    let mut i = 0;
    if b.first().is_some_and(u8::is_ascii_digit) {
        while i < b.len()
            && (b[i].is_ascii_digit()
                || (b[i] == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
        {
            i += 1;
        }
        if matches!(b.get(i), Some(b'.' | b')')) {
            i += 1;
        }
    } else if b.first().is_some_and(u8::is_ascii_alphabetic)
        && matches!(b.get(1), Some(b'.' | b')'))
    {
        i = 2;
    } else {
        return t;
    }
    match b.get(i) {
        Some(c) if c.is_ascii_whitespace() => t[i..].trim_start(),
        _ => t,
    }
}

/// The path of a section: its ancestors' titles and its own, joined by " > ".
pub fn path_of(all: &[Section], s: &Section) -> String {
    let mut parts: Vec<&str> = all
        .iter()
        .filter(|a| a.start <= s.start && s.end <= a.end && a.level < s.level)
        .map(|a| a.title.as_str())
        .collect();
    parts.push(&s.title);
    parts.join(" > ")
}

/// Find one section by title: exact (normalized) match first, then a unique prefix, then a
/// unique substring. `A > B` looks for `B` inside the section found for `A`, unless one
/// section's own title is `A > B` (a heading may hold " > " itself). Matches nested in another
/// match count once (the outer one).
pub fn find<'a>(all: &'a [Section], query: &str) -> Result<&'a Section> {
    // A heading titled with the whole query is looked up as a title (an ambiguity included).
    if query.contains(" > ") && all.iter().any(|s| normalize(&s.title) == normalize(query)) {
        return find_one(all, query);
    }
    let mut found: Option<&Section> = None;
    for part in query.split(" > ") {
        found = Some(match found {
            // Only the parent's subtree is searched (a small copy; the top level is not copied).
            Some(p) => {
                let within: Vec<Section> = all
                    .iter()
                    .filter(|s| s.start >= p.start && s.end <= p.end && s.level > p.level)
                    .cloned()
                    .collect();
                let pick = find_one(&within, part).map_err(|e| annotate(e, all, query))?;
                all.iter()
                    .find(|s| s.start == pick.start && s.level == pick.level)
                    .ok_or_else(|| missing(all, query))?
            }
            None => find_one(all, part).map_err(|e| annotate(e, all, query))?,
        });
    }
    found.ok_or_else(|| missing(all, query))
}

fn annotate(e: Error, all: &[Section], query: &str) -> Error {
    match e {
        Error::NoSection { .. } => missing(all, query),
        other => other,
    }
}

fn find_one<'a>(all: &'a [Section], query: &str) -> Result<&'a Section> {
    let q = normalize(query);
    if q.is_empty() {
        return Err(Error::invalid("empty section title").hint("pass --section \"Data Model\""));
    }
    // The title as it is written wins over the loose match: `Notes:` is the section of that
    // title, not an ambiguity with a `Notes` beside it.
    let exact = select(all, |t| t.trim() == query.trim());
    if let [one] = exact.as_slice() {
        return Ok(one);
    }
    let norm: Vec<String> = all.iter().map(|s| normalize(&s.title)).collect();
    type Test = fn(&str, &str) -> bool;
    let stages: [Test; 3] = [|t, q| t == q, |t, q| t.starts_with(q), |t, q| t.contains(q)];
    for test in stages {
        let mut i = 0;
        let hits = select(all, |_| {
            let hit = test(&norm[i], &q);
            i += 1;
            hit
        });
        match hits.len() {
            0 => continue,
            1 => return Ok(hits[0]),
            _ => {
                let list: Vec<String> = hits
                    .iter()
                    .map(|s| format!("  line {}: {}", s.start_line, path_of(all, s)))
                    .collect();
                return Err(Error::AmbiguousSection {
                    query: query.to_string(),
                    candidates: list.join("\n"),
                });
            }
        }
    }
    Err(Error::NoSection {
        query: query.to_string(),
        msg: format!("no section {query:?}"),
        hint: None,
    })
}

/// "No such section" listing the headings that do exist (the next thing anyone does).
pub fn missing(all: &[Section], query: &str) -> Error {
    const MAX: usize = 60;
    let mut lines: Vec<String> = all
        .iter()
        .take(MAX)
        .map(|s| {
            format!(
                "  {}{} {} (line {})",
                "  ".repeat(usize::from(s.level.saturating_sub(1))),
                "#".repeat(usize::from(s.level)),
                s.title,
                s.start_line
            )
        })
        .collect();
    if all.len() > MAX {
        lines.push(format!("  … and {} more", all.len() - MAX));
    }
    let msg = if all.is_empty() {
        format!("no section {query:?}: the document has no headings")
    } else {
        format!(
            "no section {query:?}; the document's headings are:\n{}",
            lines.join("\n")
        )
    };
    Error::NoSection {
        query: query.to_string(),
        msg,
        hint: Some("pick one of the headings above, or see them all with --outline".into()),
    }
}

/// The lead of a document: its first section up to its first subsection.
pub fn lead(all: &[Section]) -> Option<Pick> {
    let first = all.first()?;
    let mut s = first.clone();
    if let Some(child) = all.get(1).filter(|c| c.start < first.end) {
        s.end = child.start;
        s.end_line = child.start_line - 1;
    }
    Some(Pick {
        section: s,
        lead_only: true,
    })
}

/// Route a task type: the first candidate title the document has.
pub fn route(all: &[Section], candidates: &[String]) -> Result<Pick> {
    for c in candidates {
        if c == LEAD {
            if let Some(p) = lead(all) {
                return Ok(p);
            }
            continue;
        }
        match find(all, c) {
            Ok(s) => {
                return Ok(Pick {
                    section: s.clone(),
                    lead_only: false,
                });
            }
            Err(Error::NoSection { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(missing(all, &candidates.join("\" or \"")))
}

static ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?i)(?:adr|decision|dec|d)?[\s\-_#:]*0*(\d+)$").expect("regex"));

/// The number an ADR file carries: in its first heading ("ADR 001: …", "4. Markdown format")
/// or in its file name ("0013-use-yaml.md", "adr-004.md").
pub fn adr_number(all: &[Section], file_name: &str) -> Option<u64> {
    static TITLE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?i)(?:adr[\s\-_#]*)?0*(\d+)(?:[.:)\s-]|$)").expect("regex")
    });
    static FILE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)(?:^|[_/\\-])(?:adr[-_]?)?0*(\d+)(?:[-_.]|$)").expect("regex")
    });
    let from_title = all
        .iter()
        .find(|s| s.level == 1)
        .and_then(|s| TITLE.captures(s.title.trim()))
        .and_then(|c| c[1].parse().ok());
    from_title.or_else(|| {
        let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
        FILE.captures(base).and_then(|c| c[1].parse().ok())
    })
}

/// Find ADR decision `id` (a `traces_to` entry), in this order:
/// 1. a heading that names the decision: "Decision 2", "D2", "Decision #2", "ADR-0002", or a
///    numbered heading "2. Use Postgres" below the title;
/// 2. when `id`'s number is the ADR's own number (title or file name), that ADR's decision
///    section ("Decision", "Decision Outcome", …);
/// 3. otherwise `id` is taken as a heading title (`--decision "Use YAML front matter"`).
pub fn find_decision(all: &[Section], file_name: &str, id: &str) -> Result<Pick> {
    let whole = |s: &Section| Pick {
        section: s.clone(),
        lead_only: false,
    };
    let Some(num) = ID
        .captures(id.trim())
        .and_then(|c| c[1].parse::<u64>().ok())
    else {
        return find(all, id).map(whole);
    };
    let own = adr_number(all, file_name);
    let named = Regex::new(&format!(
        r"(?i)(?:\b(?:adr|decision|dec)[\s\-_#:]*0*{num}\b|\bD0*{num}\b)"
    ))
    .map_err(|e| Error::invalid(e.to_string()))?;
    let numbered =
        Regex::new(&format!(r"^0*{num}[.):]\s")).map_err(|e| Error::invalid(e.to_string()))?;
    // The title heading carries the ADR's own number; it is not "decision N" inside the ADR.
    let is_title = |s: &Section| {
        own.is_some() && s.level == 1 && all.first().is_some_and(|f| std::ptr::eq(s, f))
    };
    let hits: Vec<&Section> = {
        let mut out: Vec<&Section> = Vec::new();
        for s in all {
            if out.last().is_some_and(|c| s.start < c.end) || is_title(s) {
                continue;
            }
            let t = s.title.trim();
            if named.is_match(t) || (s.level > 1 && numbered.is_match(t)) {
                out.push(s);
            }
        }
        out
    };
    match hits.len() {
        1 => return Ok(whole(hits[0])),
        n if n > 1 => {
            let list: Vec<String> = hits
                .iter()
                .map(|s| format!("  line {}: {}", s.start_line, path_of(all, s)))
                .collect();
            return Err(Error::invalid(format!(
                "decision {id:?} is ambiguous; candidates:\n{}",
                list.join("\n")
            ))
            .hint("use --section with the heading's path instead"));
        }
        _ => {}
    }
    if own == Some(num) {
        for q in [
            "Decision",
            "Decision Outcome",
            "Decision outcome and rationale",
        ] {
            if let Ok(s) = find_one_exact(all, q) {
                return Ok(whole(s));
            }
        }
        if let Ok(s) = find(all, "Decision") {
            return Ok(whole(s));
        }
        return Err(missing(all, "Decision")
            .hint("this ADR has no Decision section; pick a heading above with --section"));
    }
    let mut e = missing(all, &format!("decision {id}"));
    if let Some(n) = own {
        e = e.hint(format!(
            "this file is ADR {n}; a decision is found by a heading such as \"Decision {num}\", \"D{num}\" or \"{num}. …\""
        ));
    }
    Err(e)
}

fn find_one_exact<'a>(all: &'a [Section], title: &str) -> Result<&'a Section> {
    let q = normalize(title);
    all.iter()
        .find(|s| normalize(&s.title) == q)
        .ok_or_else(|| Error::NoSection {
            query: title.to_string(),
            msg: title.to_string(),
            hint: None,
        })
}

/// Text of `pick` cut to at most `max` tokens (marker included), with a marker that says
/// where the full text is. Returns the text and whether it was cut.
pub fn limit(
    text: &str,
    enc: Encoding,
    max: usize,
    file: &str,
    lines: (usize, usize),
) -> (String, bool) {
    if enc.count(text) <= max {
        return (text.to_string(), false);
    }
    let marker = format!(
        "[… truncated by baton at {max} tokens; full section: {file} lines {}-{}]\n",
        lines.0, lines.1
    );
    let mut room = max.saturating_sub(enc.count(&marker) + 1);
    loop {
        let (head, _) = enc.truncate(text, room);
        let sep = if head.is_empty() || head.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        let out = format!("{head}{sep}{marker}");
        // Joining can merge tokens across the seam; shrink until the whole fits.
        if room == 0 || enc.count(&out) <= max {
            return (out, true);
        }
        room -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::error::Fault;

    /// A heading whose title ends with a colon is found by that exact title, and the one
    /// without it by its own, where the loose match would call both ambiguous.
    #[test]
    fn a_title_ending_with_a_colon_is_found_by_its_exact_title() {
        let doc = "# Spec\n\n## Notes\n\nplain\n\n## Notes:\n\nwith colon\n\n## Steps:\n\ndo it\n";
        let all = sections(doc);
        assert!(
            find(&all, "Notes:")
                .unwrap()
                .text(doc)
                .contains("with colon")
        );
        assert!(find(&all, "Notes").unwrap().text(doc).contains("plain"));
        // A single such heading is still found without its colon, loosely.
        assert!(find(&all, "steps").unwrap().text(doc).contains("do it"));
        assert!(find(&all, "Steps:").unwrap().text(doc).contains("do it"));
    }

    /// A heading that holds " > " is found by its own title, not read as a path (found by
    /// fuzzing: a title with "[]   >    - # files" in it led to another section).
    #[test]
    fn a_title_holding_the_path_separator_is_found_by_itself() {
        let doc =
            "# Trade-offs\n\n## Speed > Safety\n\nfirst\n\n## Speed\n\n### Safety\n\nsecond\n";
        let all = sections(doc);
        let s = find(&all, "Speed > Safety").unwrap();
        assert_eq!(s.title, "Speed > Safety");
        assert!(s.text(doc).contains("first"));
        // As a path, it still reaches the nested heading.
        let s = find(&all, "Trade-offs > Speed > Safety").unwrap();
        assert!(s.text(doc).contains("second"), "{s:?}");
        // And a setext title with the separator inside, among others that share its words.
        let doc = "A sources: []   >    - files\n===\n\nbody\n\n[] - files\n===\n";
        let all = sections(doc);
        let first = &all[0];
        assert_eq!(find(&all, &first.title).unwrap().start, first.start);
        // Two headings with that title: ambiguous, not read as a path to a third section.
        let doc = "## A > B\n\none\n\n## A > B\n\ntwo\n\n## A\n\n### B\n";
        let e = find(&sections(doc), "A > B").unwrap_err();
        assert!(e.to_string().contains("ambiguous"), "{e}");
    }
    use baton_core::markdown::sections;

    const DOC: &str = "# Spec\nintro\n## 3. Data Model\nusers\n### Data Model Migrations\nm\n## API Contracts\nGET /x\n## Components\n### API client\nc\n";

    #[test]
    fn title_matching_stages() {
        let all = sections(DOC);
        assert_eq!(find(&all, "data model").unwrap().start_line, 3);
        assert_eq!(find(&all, "DATA MODEL:").unwrap().start_line, 3);
        assert_eq!(normalize(" 3.2.1)  Data   Model: "), "data model");
        assert_eq!(normalize("A. Intro"), "intro");
        assert_eq!(normalize("2026 roadmap"), "roadmap");
        assert_eq!(normalize("3.5x faster"), "3.5x faster");
        assert_eq!(normalize("Ab. c"), "ab. c");
        assert_eq!(find(&all, "Compo").unwrap().start_line, 9);
        assert_eq!(find(&all, "Migrations").unwrap().start_line, 5);
        // "API" is a prefix of "API Contracts" and "API client": ambiguous.
        let e = find(&all, "API").unwrap_err();
        assert!(matches!(e, Error::AmbiguousSection { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("line 7") && e.contains("line 10"), "{e}");
        assert_eq!(find(&all, "Components > API").unwrap().start_line, 10);
        let e = find(&all, "Deployment").unwrap_err();
        assert!(matches!(&e, Error::NoSection { query, .. } if query == "Deployment"));
        assert_eq!(e.exit_code(), 4);
        assert!(e.to_string().contains("## API Contracts (line 7)"), "{e}");
    }

    #[test]
    fn routes_and_lead() {
        let all = sections(DOC);
        let cfg = ExtractConfig::default();
        let p = route(&all, &cfg.route("create_model").unwrap()).unwrap();
        assert_eq!((p.section.start_line, p.section.end_line), (3, 6));
        let p = route(&all, &cfg.route("other").unwrap()).unwrap();
        assert!(p.lead_only);
        assert_eq!(p.section.text(DOC), "# Spec\nintro\n");
        assert!(cfg.route("deploy").is_err());
        let toml_cfg: ExtractConfig = toml::from_str(
            "[routes]\nother = \"Components\"\ndeploy = [\"Ops\", \"Components\"]\n",
        )
        .unwrap();
        let p = route(&all, &toml_cfg.route("deploy").unwrap()).unwrap();
        assert_eq!(p.section.start_line, 9);
    }

    #[test]
    fn decisions() {
        let doc = "# ADR 7: Storage\n## Context\nx\n## Decision\nUse files.\n## Consequences\n";
        let all = sections(doc);
        let p = find_decision(&all, "adr.md", "ADR-007").unwrap();
        assert_eq!(p.section.title, "Decision");
        let doc2 = "# Decisions\n## D1: Use Rust\na\n## Decision 2 - Use TOML\nb\n### 2.1 details\n## 3. Files\n";
        let all = sections(doc2);
        assert_eq!(
            find_decision(&all, "x.md", "D2")
                .unwrap()
                .section
                .start_line,
            4
        );
        assert_eq!(
            find_decision(&all, "x.md", "decision 1")
                .unwrap()
                .section
                .start_line,
            2
        );
        assert_eq!(
            find_decision(&all, "x.md", "3").unwrap().section.start_line,
            7
        );
        assert!(find_decision(&all, "x.md", "9").is_err());
        assert_eq!(
            adr_number(&sections("# 4. Markdown format\n"), "x.md"),
            Some(4)
        );
        assert_eq!(
            adr_number(&sections("# Title\n"), "docs/0013-use-yaml.md"),
            Some(13)
        );
    }

    #[test]
    fn limit_keeps_budget_and_marks() {
        let text = "word ".repeat(500);
        let (out, cut) = limit(&text, Encoding::O200kBase, 100, "spec.md", (3, 9));
        assert!(cut);
        assert!(Encoding::O200kBase.count(&out) <= 100);
        assert!(
            out.ends_with(
                "[… truncated by baton at 100 tokens; full section: spec.md lines 3-9]\n"
            )
        );
        let (same, cut) = limit("short", Encoding::O200kBase, 100, "f", (1, 1));
        assert_eq!((same.as_str(), cut), ("short", false));
    }
}
