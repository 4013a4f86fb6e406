//! Judging a phase of a story: the agent's signal for the story's id, then its claims
//! checked against the disk (code staged, no likely secret, the record appended, the files
//! written).

use std::collections::BTreeMap;

use super::*;
use baton_core::markdown;

impl EpicEngine<'_> {
    /// Check the agent's claims against the disk (bmad-loop's lesson).
    pub(super) fn verify(
        &self,
        co: &Checkout,
        story: Option<&StoryRef>,
        phase: &Phase,
        records_before: Option<&Record>,
        writes: &[String],
    ) -> std::result::Result<(), String> {
        if phase.needs_staged_diff {
            let staged = co.git.staged().map_err(|e| e.to_string())?;
            if let Some(s) = story {
                lock(&self.staged_seen).insert((co.dir.clone(), s.id.clone()), staged.clone());
            }
            let story_file = story.map(|s| s.path.display().to_string());
            let code: Vec<&String> = staged
                .iter()
                .filter(|p| Some(*p) != story_file.as_ref())
                .collect();
            if code.is_empty() {
                return Err("the agent signalled completion but changed no files besides the story file (nothing to stage)".into());
            }
            let secrets: Vec<&String> = staged.iter().filter(|p| looks_secret(p)).collect();
            if !secrets.is_empty() {
                return Err(format!(
                    "refusing to go on: likely secrets are staged: {}",
                    secrets
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        if let (Some(s), Some(record), Some(before)) =
            (story, phase.record.as_deref(), records_before)
            && !gained(before, &record_lines(&self.read_story(co, s), record))
        {
            return Err(if before.present {
                format!(
                    "the agent wrote nothing new in the `{record}` section of {}",
                    s.path.display()
                )
            } else {
                format!(
                    "the agent did not append a `## {record}` section to {}",
                    s.path.display()
                )
            });
        }
        for w in writes {
            if !co.dir.join(w).is_file() {
                return Err(format!("the agent did not write {w}"));
            }
        }
        Ok(())
    }
}

/// What a story's record section held before a phase: whether the story has the section
/// (a BMAD template's `## Dev Agent Record`, filled in by the agent) and its lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Record {
    pub present: bool,
    pub lines: Vec<String>,
}

/// Whether a heading names the record section `record` (`Dev Agent Record`, any level, any
/// case, with or without a suffix such as `(attempt 2)`).
fn is_record_heading(title: &str, record: &str) -> bool {
    title.to_lowercase().contains(&record.to_lowercase())
}

/// The content lines of every `record` section of a story (subsections included): what an
/// agent writes there. Headings, blank lines, HTML comments and template placeholders
/// (`{{agent_model_name_version}}`) are not content.
pub(crate) fn record_lines(text: &str, record: &str) -> Record {
    let mut out = Record::default();
    for s in markdown::sections(text) {
        if !is_record_heading(&s.title, record) {
            continue;
        }
        // A record nested in another record section is already counted.
        out.present = true;
        for l in s.text(text).lines() {
            let t = l.trim();
            let placeholder = t.starts_with("{{") && t.ends_with("}}");
            if t.is_empty() || t.starts_with('#') || t.starts_with("<!--") || placeholder {
                continue;
            }
            out.lines.push(t.to_string());
        }
    }
    out
}

/// The section gained content: a line that was not there before (a filled-in template
/// section and an appended one alike).
pub(crate) fn gained(before: &Record, after: &Record) -> bool {
    let mut old: BTreeMap<&str, usize> = BTreeMap::new();
    for l in &before.lines {
        *old.entry(l).or_default() += 1;
    }
    after.lines.iter().any(|l| match old.get_mut(l.as_str()) {
        Some(n) if *n > 0 => {
            *n -= 1;
            false
        }
        _ => true,
    })
}

/// `text` with `note` at the end of its (last) `record` section, or appended as a new
/// `## record` section when the story has none.
pub(crate) fn insert_in_record(text: &str, record: &str, note: &str) -> String {
    let last = markdown::sections(text)
        .into_iter()
        .rfind(|s| is_record_heading(&s.title, record));
    match last {
        Some(s) => {
            let body = text[..s.end].trim_end_matches(['\n', '\r', ' ']);
            let rest = &text[s.end..];
            let gap = if rest.is_empty() { "" } else { "\n" };
            format!("{body}\n{note}{gap}{rest}")
        }
        None => {
            let body = text.trim_end_matches(['\n', '\r', ' ']);
            format!("{body}\n\n## {record}\n{note}")
        }
    }
}

/// Decide a phase from the agent's text: its signal for the expected id. The built-in epic
/// signals go through `parse_signal`, which also weighs the JSON status block before the
/// signal and reads a failure analysis' recommendation; others (UAT COMPLETE) through the
/// phase's own grammar.
pub(super) fn judge(phase: &Phase, text: &str, expected_id: &str) -> Verdict {
    let known = |k: &String| SignalKind::ALL.iter().any(|s| s.keyword() == k);
    if !phase.signal.iter().chain(&phase.fail_signal).all(known) {
        let success: Vec<&str> = phase.signal.iter().map(String::as_str).collect();
        let failure: Vec<&str> = phase.fail_signal.iter().map(String::as_str).collect();
        return judge_signal(
            text,
            expected_id,
            Grammar {
                success: &success,
                failure: &failure,
            },
        );
    }
    let res = signals::parse_signal(text, expected_id);
    match res.verdict() {
        SignalVerdict::Success => {
            let Some(sig) = res.signal.as_ref() else {
                return Verdict::broken("no completion signal");
            };
            if !phase.signal.iter().any(|k| k == sig.kind.keyword()) {
                return Verdict::broken(format!(
                    "unexpected signal {} for the {} phase",
                    sig.kind.keyword(),
                    phase.name
                ));
            }
            let mut v = Verdict::passed(format!("{}: {}", sig.kind.keyword(), sig.id));
            v.recommendation = sig.recommendation.map(|r| format!("{r:?}"));
            v
        }
        SignalVerdict::Blocked { reason } | SignalVerdict::Failed { reason } => {
            let kw = res.signal.as_ref().map_or("FAILED", |s| s.kind.keyword());
            Verdict::rejected(format!("{kw}: {reason}"))
        }
        SignalVerdict::Missing { message } => Verdict::broken(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BMAD v6's story template: the record section is there before any dev work.
    const TEMPLATE: &str = "# Story 3.5.0: Help overlay\n\nStatus: ready-for-dev\n\n## Dev Agent Record\n\n### Agent Model Used\n\n{{agent_model_name_version}}\n\n### Debug Log References\n\n### Completion Notes List\n\n### File List\n\n## Senior Developer Review (AI)\n";

    #[test]
    fn a_filled_in_template_section_gained_content() {
        let before = record_lines(TEMPLATE, "Dev Agent Record");
        assert!(before.present);
        assert!(before.lines.is_empty(), "{:?}", before.lines);
        // Nothing written: not gained; the agent only restates the template.
        assert!(!gained(
            &before,
            &record_lines(TEMPLATE, "Dev Agent Record")
        ));
        let filled = TEMPLATE
            .replace("{{agent_model_name_version}}", "claude-sonnet-4-6")
            .replace("### File List\n", "### File List\n\n- src/help.rs\n");
        assert!(gained(&before, &record_lines(&filled, "Dev Agent Record")));
        // Text written elsewhere does not count.
        let elsewhere = format!("{TEMPLATE}\nsome notes\n");
        assert!(!gained(
            &before,
            &record_lines(&elsewhere, "Dev Agent Record")
        ));
    }

    #[test]
    fn an_appended_section_and_a_second_attempt() {
        let story = "# Story 1.1: X\n\nStatus: in-progress\n";
        let before = record_lines(story, "Dev Agent Record");
        assert!(!before.present);
        let once = format!("{story}\n## Dev Agent Record\n\nDid it.\n");
        let after = record_lines(&once, "Dev Agent Record");
        assert!(gained(&before, &after));
        // Attempt 2 must add its own lines: the first attempt's do not count again.
        assert!(!gained(&after, &record_lines(&once, "Dev Agent Record")));
        let twice = format!("{once}\n## Dev Agent Record (attempt 2)\n\nDid it.\n");
        assert!(gained(&after, &record_lines(&twice, "Dev Agent Record")));
    }

    #[test]
    fn a_failure_goes_at_the_end_of_the_record_section() {
        let note = "\n### baton run r1: not done\n\nwhy\n";
        let got = insert_in_record(TEMPLATE, "Dev Agent Record", note);
        assert!(
            got.contains("### File List\n\n### baton run r1: not done\n\nwhy\n\n## Senior Developer Review (AI)\n"),
            "{got}"
        );
        let got = insert_in_record("# Story 1.1: X\n", "Dev Agent Record", note);
        assert_eq!(
            got,
            "# Story 1.1: X\n\n## Dev Agent Record\n\n### baton run r1: not done\n\nwhy\n"
        );
    }
}
