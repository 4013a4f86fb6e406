//! Judging a phase of a story: the agent's signal for the story's id, then its claims
//! checked against the disk (code staged, no likely secret, the record appended, the files
//! written).

use super::*;

impl Engine<'_> {
    /// Check the agent's claims against the disk (bmad-loop's lesson).
    pub(super) fn verify(
        &self,
        co: &Checkout,
        story: Option<&StoryRef>,
        phase: &Phase,
        records_before: Option<usize>,
        writes: &[String],
    ) -> std::result::Result<(), String> {
        if phase.needs_staged_diff {
            let staged = co.git.staged().map_err(|e| e.to_string())?;
            let story_file = story.map(|s| s.path.display().to_string());
            let code: Vec<&String> = staged
                .iter()
                .filter(|p| Some(*p) != story_file.as_ref())
                .collect();
            if code.is_empty() {
                return Err("the agent signalled completion but staged no code changes (git diff --staged is empty)".into());
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
            && count_record(&self.read_story(co, s), Some(record)) <= before
        {
            return Err(format!(
                "the agent did not append a `## {record}` section to {}",
                s.path.display()
            ));
        }
        for w in writes {
            if !co.dir.join(w).is_file() {
                return Err(format!("the agent did not write {w}"));
            }
        }
        Ok(())
    }
}

/// How many `## <record>` sections a story file has.
pub(super) fn count_record(text: &str, record: Option<&str>) -> usize {
    let Some(r) = record else { return 0 };
    text.lines()
        .filter(|l| l.trim_start().starts_with("## ") && l.contains(r))
        .count()
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
