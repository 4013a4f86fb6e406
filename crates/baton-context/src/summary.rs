//! Summary blocks: the structured return format sub-agents end with (a `## Summary` section,
//! at most 50 lines) and ADR-003's "concise summary (< 200 words) + path of the full report".
//! Parsing never gives up at the first problem: every violation is reported with its line.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use baton_core::markdown::{Section, sections};

/// The cap on a summary block, in lines.
pub const MAX_LINES: usize = 50;
/// ADR-003's cap on a summary.
pub const MAX_WORDS: usize = 200;

pub const STATUSES: [&str; 3] = ["Complete", "Partial", "Failed"];
pub const SEVERITIES: [&str; 5] = ["Critical", "High", "Medium", "Low", "Info"];
const SUBSECTIONS: [&str; 4] = [
    "Key Findings",
    "Issues Found",
    "Key Numbers",
    "Next Phase Needs",
];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// 1-based line in the input.
    pub line: usize,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Issue {
    pub n: Option<u64>,
    pub severity: String,
    pub description: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KeyNumber {
    pub metric: String,
    pub value: String,
    pub source: String,
}

/// A parsed block; fields that were missing or malformed are `None`/empty and have violations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub start_line: usize,
    pub end_line: usize,
    pub status: Option<String>,
    pub output_file: Option<String>,
    pub lines_written: Option<u64>,
    pub key_findings: Vec<String>,
    pub issues: Vec<Issue>,
    pub key_numbers: Vec<KeyNumber>,
    pub next_phase_needs: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Parsed {
    pub summary: Summary,
    /// The block's text as it appears in the input.
    #[serde(skip)]
    pub text: String,
    pub violations: Vec<Violation>,
}

fn v(line: usize, message: impl Into<String>) -> Violation {
    Violation {
        line,
        message: message.into(),
    }
}

/// The last `Summary` section of `text` (headings inside code fences do not count).
pub fn locate(text: &str) -> Option<Section> {
    sections(text).into_iter().rev().find(|s| {
        s.title
            .trim()
            .trim_end_matches(':')
            .eq_ignore_ascii_case("summary")
    })
}

/// Find and check the last summary block of an agent response. `None`: there is none.
pub fn parse(text: &str) -> Option<Parsed> {
    let all = sections(text);
    let idx = all.iter().rposition(|s| {
        s.title
            .trim()
            .trim_end_matches(':')
            .eq_ignore_ascii_case("summary")
    })?;
    let block = &all[idx];
    let mut out = Vec::new();
    let mut sum = Summary {
        start_line: block.start_line,
        ..Summary::default()
    };
    if block.level != 2 {
        out.push(v(
            block.start_line,
            format!(
                "the block must start with `## Summary` (found a level-{} heading)",
                block.level
            ),
        ));
    }
    // Anything but blank lines after the block means it is not the end of the response.
    let rest = &text[block.end..];
    if let Some(next) = all[idx + 1..].iter().find(|s| s.start >= block.end) {
        out.push(v(
            next.start_line,
            format!(
                "the summary block must end the response, but `{}` follows it",
                next.title
            ),
        ));
    } else if !rest.trim().is_empty() {
        out.push(v(block.end_line, "the summary block must end the response"));
    }

    let body = &text[block.start..block.end];
    let lines: Vec<&str> = body.lines().collect();
    let used = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(1, |i| i + 1);
    sum.end_line = block.start_line + used - 1;
    if used > MAX_LINES {
        out.push(v(block.start_line + MAX_LINES, format!(
            "the summary block has {used} lines; at most {MAX_LINES} are allowed (move detail to the output file)"
        )));
    }

    // Subsections by heading line; the lead (before the first) holds the bold fields.
    let subs: Vec<&Section> = all[idx + 1..]
        .iter()
        .filter(|s| s.start < block.end)
        .collect();
    let first_sub_line = subs.first().map_or(sum.end_line + 1, |s| s.start_line);
    fields(&lines, block.start_line, first_sub_line, &mut sum, &mut out);

    let mut seen = [false; 4];
    for s in &subs {
        let own_end = subs
            .iter()
            .find(|n| n.start > s.start)
            .map_or(sum.end_line, |n| n.start_line - 1)
            .min(sum.end_line);
        let content: Vec<(usize, &str)> = (s.start_line + 1..=own_end)
            .filter_map(|ln| lines.get(ln - block.start_line).map(|l| (ln, *l)))
            .collect();
        let name = s.title.trim().trim_end_matches(':');
        let Some(k) = SUBSECTIONS
            .iter()
            .position(|x| x.eq_ignore_ascii_case(name))
        else {
            out.push(v(
                s.start_line,
                format!(
                    "unexpected section `{}`; the block has only {}",
                    s.title,
                    SUBSECTIONS.join(", ")
                ),
            ));
            continue;
        };
        if s.level != 3 {
            out.push(v(
                s.start_line,
                format!("`{}` must be a `###` heading", s.title),
            ));
        }
        if seen[k] {
            out.push(v(s.start_line, format!("`{}` appears twice", s.title)));
        }
        seen[k] = true;
        match k {
            0 => sum.key_findings = list(&content, s, &mut out),
            1 => sum.issues = issues(&content, s, &mut out),
            2 => sum.key_numbers = numbers(&content, s, &mut out),
            _ => sum.next_phase_needs = list(&content, s, &mut out),
        }
    }
    for (k, name) in SUBSECTIONS.iter().enumerate() {
        if !seen[k] {
            out.push(v(block.start_line, format!("missing `### {name}`")));
        }
    }
    out.sort_by_key(|x| x.line);
    Some(Parsed {
        summary: sum,
        text: body.lines().take(used).collect::<Vec<_>>().join("\n") + "\n",
        violations: out,
    })
}

static FIELD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?([A-Za-z ]+?)(?::(?:\*\*|__)|(?:\*\*|__):|:)\s*(.*?)\s*$",
    )
    .expect("regex")
});
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\{[^{}]*\}$").expect("regex"));

fn clean(value: &str) -> String {
    value.trim().trim_matches('`').trim().to_string()
}

fn fields(lines: &[&str], first: usize, stop: usize, sum: &mut Summary, out: &mut Vec<Violation>) {
    let mut at = [None::<usize>; 3];
    for ln in first + 1..stop {
        let Some(line) = lines.get(ln - first) else {
            break;
        };
        if line.trim().is_empty() {
            continue;
        }
        let Some(c) = FIELD.captures(line) else {
            out.push(v(
                ln,
                format!(
                    "unexpected line before the first `###` section: {:?}",
                    line.trim()
                ),
            ));
            continue;
        };
        let value = clean(&c[2]);
        let placeholder = value.is_empty() || PLACEHOLDER.is_match(&value);
        match c[1].trim().to_ascii_lowercase().as_str() {
            "status" => {
                at[0] = Some(ln);
                match STATUSES
                    .iter()
                    .find(|s| s.eq_ignore_ascii_case(value.trim_end_matches('.')))
                {
                    Some(s) => sum.status = Some(s.to_string()),
                    None => out.push(v(
                        ln,
                        format!(
                            "Status must be one of {} (found {value:?})",
                            STATUSES.join(", ")
                        ),
                    )),
                }
            }
            "output file" => {
                at[1] = Some(ln);
                if placeholder {
                    out.push(v(
                        ln,
                        "Output file must name the file the full findings were written to",
                    ));
                } else {
                    sum.output_file = Some(value);
                }
            }
            "lines written" => {
                at[2] = Some(ln);
                match value.replace([',', '_'], "").parse::<u64>() {
                    Ok(n) => sum.lines_written = Some(n),
                    Err(_) => out.push(v(
                        ln,
                        format!("Lines written must be a whole number (found {value:?})"),
                    )),
                }
            }
            other => out.push(v(
                ln,
                format!("unknown field {other:?}; expected Status, Output file, Lines written"),
            )),
        }
    }
    for (i, name) in ["**Status:**", "**Output file:**", "**Lines written:**"]
        .iter()
        .enumerate()
    {
        if at[i].is_none() {
            out.push(v(first, format!("missing {name}")));
        }
    }
}

fn list(content: &[(usize, &str)], s: &Section, out: &mut Vec<Violation>) -> Vec<String> {
    static ITEM: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*(?:[-*+]|\d+[.)])\s+(.*?)\s*$").expect("regex"));
    let mut items = Vec::new();
    for &(ln, line) in content {
        if line.trim().is_empty() {
            continue;
        }
        match ITEM.captures(line) {
            Some(c) if PLACEHOLDER.is_match(c[1].trim()) || c[1].trim() == "..." => {
                out.push(v(ln, "template placeholder left in the list"));
            }
            Some(c) => items.push(c[1].to_string()),
            None => out.push(v(
                ln,
                format!(
                    "`{}` takes one-line list items (`- …`); found {:?}",
                    s.title,
                    line.trim()
                ),
            )),
        }
    }
    if items.is_empty() {
        out.push(v(s.start_line, format!("`{}` is empty", s.title)));
    }
    items
}

/// A pipe table: header cells, then rows (line, cells). Non-table lines are violations.
fn table(
    content: &[(usize, &str)],
    s: &Section,
    header: &[&str],
    out: &mut Vec<Violation>,
) -> Vec<(usize, Vec<String>)> {
    let rows: Vec<(usize, &str)> = content
        .iter()
        .copied()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    // "None" instead of a table is an honest empty table.
    if rows.len() == 1
        && rows[0]
            .1
            .trim()
            .trim_start_matches(['-', '*', ' '])
            .to_ascii_lowercase()
            .starts_with("none")
    {
        return Vec::new();
    }
    let mut out_rows = Vec::new();
    let mut it = rows.iter();
    match it.next() {
        None => out.push(v(
            s.start_line,
            format!("`{}` needs a table | {} |", s.title, header.join(" | ")),
        )),
        Some(&(ln, l)) => {
            let cells = cells(l);
            let want: Vec<String> = header.iter().map(|h| h.to_ascii_lowercase()).collect();
            let got: Vec<String> = cells.iter().map(|c| c.to_ascii_lowercase()).collect();
            if got != want {
                out.push(v(
                    ln,
                    format!("table header must be | {} |", header.join(" | ")),
                ));
            }
            match it.next() {
                Some(&(ln2, sep)) if is_separator(sep) => {
                    let _ = ln2;
                }
                Some(&(ln2, _)) => out.push(v(ln2, "missing the table's |---| separator row")),
                None => out.push(v(ln, "missing the table's |---| separator row")),
            }
        }
    }
    for &(ln, l) in it {
        if !l.trim_start().starts_with('|') {
            out.push(v(ln, format!("expected a table row, found {:?}", l.trim())));
            continue;
        }
        let c = cells(l);
        if c.len() != header.len() {
            out.push(v(
                ln,
                format!("row has {} cells; expected {}", c.len(), header.len()),
            ));
            continue;
        }
        if c.iter().any(|x| PLACEHOLDER.is_match(x)) {
            out.push(v(ln, "template placeholder left in the table"));
        }
        out_rows.push((ln, c));
    }
    out_rows
}

fn is_separator(l: &str) -> bool {
    let c = cells(l);
    !c.is_empty()
        && c.iter()
            .all(|x| !x.is_empty() && x.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
}

/// Cells of a pipe-table row; `\|` is a literal pipe.
fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = if t.ends_with('|') && !t.ends_with("\\|") {
        &t[..t.len() - 1]
    } else {
        t
    };
    let mut cells = vec![String::new()];
    let mut chars = t.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' if chars.peek() == Some(&'|') => {
                if let Some(c) = cells.last_mut() {
                    c.push('|');
                }
                chars.next();
            }
            '|' => cells.push(String::new()),
            _ => {
                if let Some(c) = cells.last_mut() {
                    c.push(ch)
                }
            }
        }
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

fn issues(content: &[(usize, &str)], s: &Section, out: &mut Vec<Violation>) -> Vec<Issue> {
    table(content, s, &["#", "Severity", "Description"], out)
        .into_iter()
        .map(|(ln, c)| {
            let n = c[0].trim_start_matches('#').parse::<u64>().ok();
            if n.is_none() {
                out.push(v(
                    ln,
                    format!("issue number must be a whole number (found {:?})", c[0]),
                ));
            }
            let severity = match SEVERITIES
                .iter()
                .find(|x| x.eq_ignore_ascii_case(c[1].trim_matches('*')))
            {
                Some(x) => x.to_string(),
                None => {
                    out.push(v(
                        ln,
                        format!(
                            "severity must be one of {} (found {:?})",
                            SEVERITIES.join(", "),
                            c[1]
                        ),
                    ));
                    c[1].clone()
                }
            };
            if c[2].is_empty() {
                out.push(v(ln, "issue description is empty"));
            }
            Issue {
                n,
                severity,
                description: c[2].clone(),
            }
        })
        .collect()
}

fn numbers(content: &[(usize, &str)], s: &Section, out: &mut Vec<Violation>) -> Vec<KeyNumber> {
    let rows = table(content, s, &["Metric", "Value", "Source"], out);
    if rows.is_empty() {
        out.push(v(s.start_line, "`Key Numbers` has no rows"));
    }
    rows.into_iter()
        .map(|(ln, c)| {
            for (i, name) in ["metric", "value", "source"].iter().enumerate() {
                if c[i].is_empty() {
                    out.push(v(ln, format!("key number has an empty {name}")));
                }
            }
            KeyNumber {
                metric: c[0].clone(),
                value: c[1].clone(),
                source: c[2].clone(),
            }
        })
        .collect()
}

/// ADR-003: the whole response is the summary. It must stay under [`MAX_WORDS`] words and name
/// the file the full report went to; `exists` says whether a named path exists.
#[derive(Debug, Clone, Serialize)]
pub struct Adr003 {
    pub words: usize,
    pub paths: Vec<String>,
    pub report: Option<String>,
    pub violations: Vec<Violation>,
}

pub fn check_adr003(text: &str, exists: impl Fn(&str) -> bool) -> Adr003 {
    static PATH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|[\s(\[`'\x22:])((?:~|\.{1,2})?/?[\w.\-]+(?:/[\w.\-]+)+|[\w\-]+(?:\.[\w\-]+)*\.(?:md|txt|json|jsonl|log|html|ya?ml|csv|toml))\b")
            .expect("regex")
    });
    let mut out = Vec::new();
    let mut words = 0;
    let mut over_at = None;
    let mut paths = Vec::new();
    for (i, line) in text.lines().enumerate() {
        words += line.split_whitespace().count();
        if words >= MAX_WORDS && over_at.is_none() {
            over_at = Some(i + 1);
        }
        for c in PATH.captures_iter(line) {
            let p = c[1].trim_end_matches('.').to_string();
            // URLs are not report files.
            if !line.contains(&format!("://{p}")) && !paths.contains(&p) {
                paths.push(p);
            }
        }
    }
    let last = text.lines().count().max(1);
    if let Some(ln) = over_at {
        out.push(v(ln, format!(
            "the summary has {words} words; it must stay under {MAX_WORDS} (put the rest in the report file)"
        )));
    }
    let report = paths.iter().find(|p| exists(p)).cloned();
    if paths.is_empty() {
        out.push(v(
            last,
            "no path to the full report: the agent must write its report to a file and name it",
        ));
    } else if report.is_none() {
        out.push(v(
            last,
            format!("none of the paths it names exists: {}", paths.join(", ")),
        ));
    }
    Adr003 {
        words,
        paths,
        report,
        violations: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const GOOD: &str = "Lots of agent chatter.\n\n## Summary\n\n**Status:** Complete\n**Output file:** `bmnr-ground-truth.md`\n**Lines written:** 546\n\n### Key Findings\n- Holdings match the 8-K\n- Share count is estimated\n\n### Issues Found\n| # | Severity | Description |\n|---|----------|-------------|\n| 1 | Critical | Debt missing |\n| 2 | High     | Stale price \\| old |\n\n### Key Numbers\n| Metric | Value | Source |\n|--------|-------|--------|\n| Holdings | 4,325,738 ETH | 8-K Feb 9 |\n\n### Next Phase Needs\n- Attack the share count\n";

    #[test]
    fn good_block_parses() {
        let p = parse(GOOD).unwrap();
        assert_eq!(p.violations, vec![]);
        let s = p.summary;
        assert_eq!(s.status.as_deref(), Some("Complete"));
        assert_eq!(s.output_file.as_deref(), Some("bmnr-ground-truth.md"));
        assert_eq!(s.lines_written, Some(546));
        assert_eq!(s.key_findings.len(), 2);
        assert_eq!(s.issues[1].description, "Stale price | old");
        assert_eq!(s.issues[0].n, Some(1));
        assert_eq!(s.key_numbers[0].value, "4,325,738 ETH");
        assert_eq!(s.next_phase_needs, vec!["Attack the share count"]);
        assert_eq!((s.start_line, s.end_line), (3, 25));
    }

    #[test]
    fn violations_have_lines() {
        let bad = GOOD
            .replace("Complete", "Done")
            .replace("546", "many")
            .replace("| 2 | High ", "| x | Severe ")
            .replace("### Next Phase Needs\n- Attack the share count\n", "");
        let p = parse(&bad).unwrap();
        let msgs: Vec<(usize, &str)> = p
            .violations
            .iter()
            .map(|v| (v.line, v.message.as_str()))
            .collect();
        assert!(
            msgs.iter()
                .any(|(l, m)| *l == 3 && m.contains("Next Phase Needs")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|(l, m)| *l == 5 && m.contains("Status")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter()
                .any(|(l, m)| *l == 7 && m.contains("Lines written")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|(l, m)| *l == 17 && m.contains("number")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|(l, m)| *l == 17 && m.contains("severity")),
            "{msgs:?}"
        );
        assert_eq!(msgs.len(), 5, "{msgs:?}");
    }

    #[test]
    fn too_long_and_not_last() {
        let long = GOOD.replace("- Share count is estimated\n", &"- finding\n".repeat(40));
        let p = parse(&long).unwrap();
        assert!(
            p.violations
                .iter()
                .any(|v| v.message.contains("at most 50"))
        );
        let p = parse(&format!("{GOOD}\n## Appendix\nmore\n")).unwrap();
        assert!(
            p.violations
                .iter()
                .any(|v| v.message.contains("must end the response"))
        );
        assert!(parse("no block here\n```\n## Summary\n```\n").is_none());
    }

    #[test]
    fn adr003() {
        let ok = check_adr003(
            "Found 3 issues.\nFull report: .claude/sessions/pr/123/security.md\n",
            |p| p.ends_with("security.md"),
        );
        assert_eq!(ok.violations, vec![]);
        assert_eq!(
            ok.report.as_deref(),
            Some(".claude/sessions/pr/123/security.md")
        );
        let long = "word ".repeat(250);
        let r = check_adr003(&long, |_| true);
        assert_eq!(r.violations.len(), 2);
        let r = check_adr003("see https://example.com/x/y and report.md", |_| false);
        assert_eq!(r.paths, vec!["report.md"]);
        assert!(r.violations[0].message.contains("exists"));
    }
}
