//! The deferred-work ledger: findings a story's review judged real but not its problem. BMAD
//! writes them to `deferred-work.md` in the implementation artifacts (build: `- source_spec:
//! …` items with `summary:` and `evidence:`; code review: bullets under `## Deferred from: code
//! review of story-3.3 (date)`; orchestrators number them `DW-n`), and build-auto into a spec
//! story's frontmatter `deferred:` list (`summary`, `evidence`, `location`, `severity`). An
//! entry is closed by a story whose `closes_deferred` names it once that story is done, or by
//! the ledger itself (`[x]`, `status: closed`, struck through).

use std::path::{Path, PathBuf};

use serde::Serialize;
use yaml_rust2::Yaml;

use super::spec;

/// The ledger's name.
pub const LEDGER: &str = "deferred-work.md";

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Deferred {
    /// `DW-3` where the ledger numbers it; else `<file>:<line>`, or `<story file>#n`.
    pub id: String,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// Where it is written: `<file> line N`.
    pub source: String,
    /// The story (or spec) that deferred it, when the ledger says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred_by: Option<String>,
    /// What closed it: a done story that closes it, or the ledger's own mark.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_by: Option<String>,
}

/// Every deferred finding of the project: its ledgers, and the spec folders' stories.
pub fn all(root: &Path) -> Vec<Deferred> {
    let mut out = Vec::new();
    for f in ledgers(root) {
        match std::fs::read_to_string(root.join(&f)) {
            Ok(text) => out.extend(parse_ledger(&f, &text)),
            Err(e) => baton_core::notice::warning(format!("{} left out: {e}", f.display())),
        }
    }
    // Spec folders: their stories' own `deferred:` lists, and what their done stories close.
    let mut closes: Vec<(String, String)> = Vec::new();
    for dir in spec::all(root) {
        let folder = match super::tracking::load_spec(root, &dir) {
            Ok(f) => f,
            Err(e) => {
                // The rest of the ledger is still worth showing; this folder is named.
                baton_core::notice::warning(format!(
                    "deferred work of {} left out: {e}",
                    dir.display()
                ));
                continue;
            }
        };
        for s in &folder.stories {
            let Some(file) = &s.file else { continue };
            let who = format!("story {} ({})", s.id, file.display());
            let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
            let fm = spec::frontmatter_yaml(&text);
            if let Some(Yaml::Array(items)) = fm.as_ref().map(|y| &y["deferred"]) {
                for (n, item) in items.iter().enumerate() {
                    let field = |k: &str| item[k].as_str().map(str::to_string);
                    let Some(summary) =
                        field("summary").or_else(|| item.as_str().map(str::to_string))
                    else {
                        continue;
                    };
                    out.push(Deferred {
                        id: format!("{}#{}", file.display(), n + 1),
                        summary,
                        evidence: field("evidence"),
                        location: field("location"),
                        severity: field("severity"),
                        source: format!("{} (frontmatter `deferred`)", file.display()),
                        deferred_by: Some(who.clone()),
                        closed_by: None,
                    });
                }
            }
            if s.status.as_deref() == Some("done") {
                let mut ids = s.closes_deferred.clone();
                if let Some(Yaml::Array(more)) = fm.as_ref().map(|y| &y["closes_deferred"]) {
                    ids.extend(more.iter().filter_map(|v| v.as_str().map(str::to_string)));
                }
                closes.extend(ids.into_iter().map(|id| (id, who.clone())));
            }
        }
    }
    for d in &mut out {
        if d.closed_by.is_none()
            && let Some((_, who)) = closes.iter().find(|(id, _)| id.eq_ignore_ascii_case(&d.id))
        {
            d.closed_by = Some(who.clone());
        }
    }
    out
}

/// The ledgers: `deferred-work.md` in the usual output folders, the configured implementation
/// artifacts and the spec folders (relative to `root`).
fn ledgers(root: &Path) -> Vec<PathBuf> {
    let cfg = super::config::Config::load(root);
    let mut dirs: Vec<PathBuf> = vec![
        "_bmad-output/implementation-artifacts".into(),
        "_bmad-output".into(),
        "docs".into(),
        "docs/sprint-artifacts".into(),
    ];
    dirs.extend(cfg.implementation.iter().cloned());
    dirs.extend(spec::all(root));
    let mut out: Vec<PathBuf> = dirs
        .into_iter()
        .map(|d| d.join(LEDGER))
        .filter(|f| {
            // The project's own file, not a link to elsewhere.
            std::fs::symlink_metadata(root.join(f)).is_ok_and(|m| m.is_file())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The entries of one ledger file (`file` as shown in sources).
pub fn parse_ledger(file: &Path, text: &str) -> Vec<Deferred> {
    let mut out: Vec<Deferred> = Vec::new();
    let mut section_by: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim_end();
        if let Some(h) = heading(t) {
            // `## DW-3: summary` is an entry; `## Deferred from: code review of story-3.3
            // (2026-03-18)` says who deferred the bullets below it.
            if let Some(id) = dw_id(h) {
                section_by = None;
                out.push(entry(file, n, id, rest_after_id(h), None));
                mark_closed(out.last_mut(), h);
            } else {
                section_by = deferred_from(h);
            }
            continue;
        }
        let indent = t.len() - t.trim_start().len();
        let body = t.trim_start();
        if indent <= 1
            && let Some(item) = body.strip_prefix("- ").or_else(|| body.strip_prefix("* "))
        {
            let item = item.trim();
            let (checked, item) = match item
                .strip_prefix("[x] ")
                .or_else(|| item.strip_prefix("[X] "))
            {
                Some(rest) => (true, rest),
                None => (false, item.strip_prefix("[ ] ").unwrap_or(item)),
            };
            let id = dw_id(item).unwrap_or_else(|| format!("{}:{n}", file.display()));
            let mut e = entry(file, n, id, "", section_by.clone());
            if !apply_field(&mut e, item) {
                e.summary = clean(rest_after_id(item));
            }
            out.push(e);
            if checked {
                out.last_mut().expect("just pushed").closed_by =
                    Some("checked off in the ledger".into());
            }
            mark_closed(out.last_mut(), item);
            continue;
        }
        if indent >= 2
            && let Some(e) = out.last_mut()
        {
            apply_field(e, body);
        }
    }
    out.retain(|e| !e.summary.is_empty());
    out
}

fn entry(file: &Path, line: usize, id: String, summary: &str, by: Option<String>) -> Deferred {
    Deferred {
        id,
        summary: clean(summary),
        evidence: None,
        location: None,
        severity: None,
        source: format!("{} line {line}", file.display()),
        deferred_by: by,
        closed_by: None,
    }
}

/// A `key: value` field of an entry; whether it was one.
fn apply_field(e: &mut Deferred, text: &str) -> bool {
    let Some((k, v)) = text.split_once(':') else {
        return false;
    };
    let v = clean(v);
    match k.trim().to_ascii_lowercase().as_str() {
        "summary" => e.summary = v,
        "evidence" => e.evidence = Some(v),
        "location" => e.location = Some(v),
        "severity" => e.severity = Some(v),
        "source_spec" | "source" | "story" if v != "none" => e.deferred_by = Some(v),
        "source_spec" | "source" | "story" => {}
        "status" => {
            if matches!(
                v.to_ascii_lowercase().as_str(),
                "closed" | "done" | "resolved" | "fixed"
            ) {
                e.closed_by = Some(format!("the ledger says {v}"));
            }
        }
        "id" if dw_id(&v).is_some() => e.id = v,
        _ => return false,
    }
    true
}

fn mark_closed(e: Option<&mut Deferred>, text: &str) {
    if let Some(e) = e
        && e.closed_by.is_none()
        && (text.trim_start().starts_with("~~") || rest_after_id(text).starts_with("~~"))
    {
        e.closed_by = Some("struck through in the ledger".into());
    }
}

fn heading(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let hashes = t.len() - t.trim_start_matches('#').len();
    ((1..=6).contains(&hashes) && t[hashes..].starts_with(' ')).then(|| t[hashes..].trim())
}

/// `DW-3` at the start of `text` (after markup).
fn dw_id(text: &str) -> Option<String> {
    let t = text.trim_start_matches(['*', '_', '~', '[', ' ']);
    let rest = t.strip_prefix("DW-").or_else(|| t.strip_prefix("dw-"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then(|| format!("DW-{digits}"))
}

fn rest_after_id(text: &str) -> &str {
    let t = text.trim_start_matches(['*', '_', '~', '[', ' ']);
    match t.strip_prefix("DW-").or_else(|| t.strip_prefix("dw-")) {
        Some(r) => r
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches([']', '*', '_', ':', ' ', '—', '-', '.']),
        None => text,
    }
}

/// `Deferred from: code review of story-3.3 (2026-03-18)` → `story-3.3`.
fn deferred_from(h: &str) -> Option<String> {
    let rest = h.strip_prefix("Deferred from:")?.trim();
    let who = rest.split(" (").next().unwrap_or(rest);
    Some(who.rsplit(" of ").next().unwrap_or(who).trim().to_string())
}

fn clean(s: &str) -> String {
    s.trim()
        .trim_matches('`')
        .trim_matches('~')
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_forms_bmad_writes_are_read() {
        let text = "# Deferred work\n\n- source_spec: `_bmad-output/implementation-artifacts/spec-3-2.md`\n  summary: The cache is never invalidated\n  evidence: seen in review\n- source_spec: none\n  summary: Split off the export goal\n  evidence: a second goal\n\n## Deferred from: code review of story-3.3 (2026-03-18)\n\n- [x] Stale lock file handling — fixed since\n- Missing index on sessions [db/schema.sql:40] — deferred, pre-existing\n\n## DW-7: Flaky retry test\n\nseverity: high\n\n- DW-8 ~~Old warning~~\n";
        let d = parse_ledger(Path::new("deferred-work.md"), text);
        let got: Vec<(&str, &str, Option<&str>, bool)> = d
            .iter()
            .map(|e| {
                (
                    e.id.as_str(),
                    e.summary.as_str(),
                    e.deferred_by.as_deref(),
                    e.closed_by.is_some(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "deferred-work.md:3",
                    "The cache is never invalidated",
                    Some("_bmad-output/implementation-artifacts/spec-3-2.md"),
                    false
                ),
                (
                    "deferred-work.md:6",
                    "Split off the export goal",
                    None,
                    false
                ),
                (
                    "deferred-work.md:12",
                    "Stale lock file handling — fixed since",
                    Some("story-3.3"),
                    true
                ),
                (
                    "deferred-work.md:13",
                    "Missing index on sessions [db/schema.sql:40] — deferred, pre-existing",
                    Some("story-3.3"),
                    false
                ),
                ("DW-7", "Flaky retry test", None, false),
                ("DW-8", "Old warning", None, true),
            ]
        );
        assert_eq!(d[0].evidence.as_deref(), Some("seen in review"));
        assert_eq!(d[0].source, "deferred-work.md line 3");
    }
}
