//! Signals of any keyword set: the grammar a workflow definition gives a phase.

use super::line::{self, Event, Keywords};
use super::{Verdict, normalize_id};

/// A phase's signal grammar: the keywords that end it well and those that end it badly.
#[derive(Debug, Clone, Copy)]
pub struct Grammar<'a> {
    pub success: &'a [&'a str],
    pub failure: &'a [&'a str],
}

/// One signal line of a [`Grammar`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Found {
    /// The keyword as the grammar spells it (canonical case), e.g. "DESIGN AUDIT FAILED".
    pub keyword: String,
    /// Whether the keyword is one of the grammar's success keywords.
    pub success: bool,
    /// The id as written (trimmed of punctuation/backticks, not normalised).
    pub id: String,
    pub detail: Option<String>,
    /// 1-based line number.
    pub line: usize,
}

/// Everything [`parse_grammar`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrammarResult {
    /// The last valid signal for the expected id.
    pub signal: Option<Found>,
    /// Ids of other subjects' signals of this grammar seen (≤ 8, as written), for the message.
    pub other_ids: Vec<String>,
    /// The expected id as the caller gave it, for the message.
    pub expected_id: String,
}

impl GrammarResult {
    /// `Success`, `Failed { reason }` (reason = `<KEYWORD>: <detail or "no reason given">`), or
    /// `Missing { message }`: `no completion signal for <id>`, naming the other ids seen if any
    /// ("no completion signal for add-login (found signals for: other-task)").
    pub fn verdict(&self) -> Verdict {
        match &self.signal {
            Some(f) if f.success => Verdict::Success,
            Some(f) => Verdict::Failed {
                reason: format!(
                    "{}: {}",
                    f.keyword,
                    f.detail.as_deref().unwrap_or("no reason given")
                ),
            },
            None => {
                let mut message = "no completion signal".to_string();
                let id = self.expected_id.trim();
                if !id.is_empty() {
                    message.push_str(&format!(" for {id}"));
                }
                if !self.other_ids.is_empty() {
                    message.push_str(&format!(
                        " (found signals for: {})",
                        self.other_ids.join(", ")
                    ));
                }
                Verdict::Missing { message }
            }
        }
    }

    /// The signal line as one string, `<KEYWORD>: <id>[ - detail]`, for logs.
    pub fn line(&self) -> Option<String> {
        self.signal.as_ref().map(|f| match &f.detail {
            Some(d) => format!("{}: {} - {d}", f.keyword, f.id),
            None => format!("{}: {}", f.keyword, f.id),
        })
    }
}

/// Find the last valid signal of `grammar` for `expected_id`. The line rules are those of
/// [`super::parse_signal`] (see the module doc), plus a tolerated leading `Signal:` or
/// `Fail signal:` label; keywords are tried longest first, and a keyword in both lists counts
/// as success. There is no status block here.
pub fn parse_grammar(text: &str, expected_id: &str, grammar: Grammar) -> GrammarResult {
    let all: Vec<&str> = grammar
        .success
        .iter()
        .chain(grammar.failure)
        .copied()
        .collect();
    let keywords = Keywords::new(all.iter().copied()).with_label();
    let want = normalize_id(expected_id);
    let mut signal = None;
    let mut other_ids: Vec<String> = Vec::new();
    line::scan(text, false, |ev| {
        let Event::Line(n, l) = ev else {
            return;
        };
        let Some(raw) = line::parse_line(l, n, &keywords) else {
            return;
        };
        if normalize_id(&raw.id) == want {
            signal = Some(Found {
                keyword: all[raw.index].to_string(),
                success: raw.index < grammar.success.len(),
                id: raw.id,
                detail: raw.detail,
                line: raw.line,
            });
        } else if other_ids.len() < 8 && !other_ids.contains(&raw.id) {
            other_ids.push(raw.id);
        }
    });
    GrammarResult {
        signal,
        other_ids,
        expected_id: expected_id.to_string(),
    }
}
