//! Completion signals: the line an agent ends a phase with (seed 000's grammar) and the optional
//! fenced JSON status block before it (the epic-execute convention described in PRIOR-ART).
//!
//! ```text
//! KICKOFF COMPLETE: <id>
//! IMPLEMENTATION COMPLETE: <id>
//! IMPLEMENTATION BLOCKED: <id> - <reason>
//! REVIEW PASSED: <id>
//! REVIEW PASSED WITH FIXES: <id> - Fixed <N> issues
//! REVIEW FAILED: <id> - <reason>
//! ANALYSIS COMPLETE: <id> - Retry|Skip|Escalate
//! RETRO COMPLETE: Epic <id>
//! ```
//!
//! [`parse_signal`] scans the whole text (callers pass the agent's final text or the last 32 KB
//! of its output) and keeps the **last** valid signal whose id matches the expected one.
//!
//! What counts as a signal line:
//! - it starts the line (at most 3 spaces of indentation: 4 is a Markdown code block);
//! - it is not inside a fenced code block (```` ``` ```` or `~~~`), not in a `>` quote, and does
//!   not start with a backtick (inline code quoting the grammar);
//! - the keyword is matched case-insensitively; Markdown emphasis (`**…**`, `__…__`) and `#`
//!   heading markers around it are ignored, as is trailing punctuation after the id;
//! - the separator after the keyword is `:` (a dash or nothing is tolerated), the reason after
//!   the id is introduced by ` - `, ` – `, ` — ` or `:`.
//!
//! Id normalisation ([`normalize_id`]): lowercase; surrounding backticks, quotes and trailing
//! punctuation dropped; a leading `story`/`epic` word or prefix (`story-1-2`, `Story 1.2`,
//! `epic-42`) dropped; `-`, `_` and `.` all become `.`; leading zeros of numeric parts dropped.
//! So `story-1-2`, `1.2`, `1-2`, `Story_01.2` all name the same story. Two ids that differ only
//! in those respects are the same id; any other difference makes them different.
//!
//! The status block is the last fenced block before the chosen signal (or, with no signal,
//! anywhere) whose content is a JSON object with a `status` key; a block naming another
//! `story_id` is ignored. [`SignalResult::verdict`] combines both into what the engine acts on.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// The signal keywords, in matching order (longest first: `REVIEW PASSED WITH FIXES` before
/// `REVIEW PASSED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalKind {
    KickoffComplete,
    ImplementationComplete,
    ImplementationBlocked,
    ReviewPassedWithFixes,
    ReviewPassed,
    ReviewFailed,
    AnalysisComplete,
    RetroComplete,
}

impl SignalKind {
    pub const ALL: [SignalKind; 8] = [
        SignalKind::KickoffComplete,
        SignalKind::ImplementationComplete,
        SignalKind::ImplementationBlocked,
        SignalKind::ReviewPassedWithFixes,
        SignalKind::ReviewPassed,
        SignalKind::ReviewFailed,
        SignalKind::AnalysisComplete,
        SignalKind::RetroComplete,
    ];

    /// The keyword as the seed writes it.
    pub fn keyword(self) -> &'static str {
        match self {
            SignalKind::KickoffComplete => "KICKOFF COMPLETE",
            SignalKind::ImplementationComplete => "IMPLEMENTATION COMPLETE",
            SignalKind::ImplementationBlocked => "IMPLEMENTATION BLOCKED",
            SignalKind::ReviewPassedWithFixes => "REVIEW PASSED WITH FIXES",
            SignalKind::ReviewPassed => "REVIEW PASSED",
            SignalKind::ReviewFailed => "REVIEW FAILED",
            SignalKind::AnalysisComplete => "ANALYSIS COMPLETE",
            SignalKind::RetroComplete => "RETRO COMPLETE",
        }
    }

    /// Whether the phase that printed this signal succeeded.
    pub fn is_success(self) -> bool {
        !matches!(
            self,
            SignalKind::ImplementationBlocked | SignalKind::ReviewFailed
        )
    }
}

/// The failure analysis' recommendation (`ANALYSIS COMPLETE: id - Retry|Skip|Escalate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recommendation {
    Retry,
    Skip,
    Escalate,
}

/// One signal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signal {
    pub kind: SignalKind,
    /// The id as the agent wrote it (punctuation and backticks trimmed, not normalised).
    pub id: String,
    /// Text after the id (the reason, `Fixed N issues`, the recommendation), if any.
    pub detail: Option<String>,
    /// `N` of `Fixed N issues` (REVIEW PASSED WITH FIXES).
    pub fixed: Option<u32>,
    /// ANALYSIS COMPLETE's recommendation, when it is one of the three words.
    pub recommendation: Option<Recommendation>,
    /// 1-based line number in the parsed text.
    pub line: usize,
}

/// `status` of the JSON status block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Complete,
    Blocked,
    Passed,
    Failed,
    /// Anything else, upper-cased.
    Other(String),
}

impl Status {
    fn parse(s: &str) -> Status {
        match s.trim().to_ascii_uppercase().as_str() {
            "COMPLETE" | "COMPLETED" => Status::Complete,
            "BLOCKED" => Status::Blocked,
            "PASSED" | "PASS" => Status::Passed,
            "FAILED" | "FAIL" => Status::Failed,
            other => Status::Other(other.to_string()),
        }
    }
    /// BLOCKED or FAILED.
    pub fn is_failure(&self) -> bool {
        matches!(self, Status::Blocked | Status::Failed)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Decision {
    pub what: String,
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Issue {
    pub severity: String,
    pub description: String,
    pub location: String,
}

/// The fenced JSON status block. Unknown fields are ignored; malformed list entries are skipped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusBlock {
    pub status: Status,
    pub story_id: Option<String>,
    pub summary: Option<String>,
    pub files_changed: Vec<String>,
    /// As written: agents give a count, a list of test names or a sentence.
    pub tests_added: Option<serde_json::Value>,
    pub decisions: Vec<Decision>,
    pub issues: Vec<Issue>,
    /// 1-based line of the block's opening fence.
    pub line: usize,
}

/// Everything [`parse_signal`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignalResult {
    /// The last valid signal for the expected id.
    pub signal: Option<Signal>,
    /// The status block that goes with it (see the module doc).
    pub status: Option<StatusBlock>,
    /// Ids of well-formed signals that named another id (at most 8, for error messages).
    pub other_ids: Vec<String>,
}

/// What the engine acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// A success signal, and no status block contradicting it.
    Success,
    /// IMPLEMENTATION BLOCKED, or a success signal whose status block says BLOCKED.
    Blocked { reason: String },
    /// REVIEW FAILED, or a success signal whose status block says FAILED.
    Failed { reason: String },
    /// No completion signal for the expected id: treat as a failure (prior art's lesson).
    Missing { message: String },
}

impl SignalResult {
    pub fn verdict(&self) -> Verdict {
        let Some(sig) = &self.signal else {
            let mut message = "no completion signal".to_string();
            if !self.other_ids.is_empty() {
                message.push_str(&format!(
                    " for this id (found signals for: {})",
                    self.other_ids.join(", ")
                ));
            }
            return Verdict::Missing { message };
        };
        let reason = || {
            sig.detail
                .clone()
                .unwrap_or_else(|| "no reason given".to_string())
        };
        match sig.kind {
            SignalKind::ImplementationBlocked => return Verdict::Blocked { reason: reason() },
            SignalKind::ReviewFailed => return Verdict::Failed { reason: reason() },
            _ => {}
        }
        // A success line contradicted by the structured block is not trusted.
        match self.status.as_ref().map(|b| &b.status) {
            Some(Status::Blocked) => Verdict::Blocked {
                reason: format!(
                    "status block says BLOCKED but the signal is {}",
                    sig.kind.keyword()
                ),
            },
            Some(Status::Failed) => Verdict::Failed {
                reason: format!(
                    "status block says FAILED but the signal is {}",
                    sig.kind.keyword()
                ),
            },
            _ => Verdict::Success,
        }
    }
}

/// Normalise an id for comparison (see the module doc).
pub fn normalize_id(id: &str) -> String {
    let mut s = id
        .trim()
        .trim_start_matches(['`', '"', '\'', '*'])
        .trim_end_matches(|c: char| {
            matches!(
                c,
                '`' | '"' | '\'' | '*' | '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']'
            )
        })
        .to_lowercase();
    for prefix in ["story", "epic"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            // Only a prefix when separated or followed by a number: `storyboard` stays.
            let separated = rest.starts_with([' ', '-', '_', '.', '#'])
                || rest.starts_with(|c: char| c.is_ascii_digit());
            let trimmed = rest.trim_start_matches([' ', '-', '_', '.', '#']);
            if separated && !trimmed.is_empty() {
                s = trimmed.to_string();
            }
            break;
        }
    }
    s.split(['-', '_', '.'])
        .filter(|p| !p.is_empty())
        .map(|p| {
            if p.bytes().all(|b| b.is_ascii_digit()) {
                let t = p.trim_start_matches('0');
                if t.is_empty() { "0" } else { t }
            } else {
                p
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

static KEYWORD: LazyLock<Regex> = LazyLock::new(|| {
    let alts: Vec<String> = SignalKind::ALL
        .iter()
        .map(|k| k.keyword().replace(' ', r"\s+"))
        .collect();
    Regex::new(&format!(r"(?i)^({})\b\s*[:\-–—]?\s*", alts.join("|"))).expect("static regex")
});
static FIXED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\bfixed\s+(\d{1,9})\b").expect("static regex"));

fn kind_of(matched: &str) -> Option<SignalKind> {
    let words: Vec<String> = matched
        .split_whitespace()
        .map(|w| w.to_ascii_uppercase())
        .collect();
    let joined = words.join(" ");
    SignalKind::ALL.into_iter().find(|k| k.keyword() == joined)
}

/// Parse one line as a signal (no fence/quote context: the caller handles that).
fn parse_line(raw: &str, line: usize) -> Option<Signal> {
    let indent = raw.len() - raw.trim_start_matches(' ').len();
    if indent > 3 || raw.starts_with('\t') {
        return None;
    }
    let mut s = raw.trim();
    if s.starts_with('>') || s.starts_with('`') {
        return None;
    }
    s = s.trim_start_matches('#').trim_start();
    // Emphasis markers never belong to the grammar; ids do not contain `*`.
    let cleaned: String = s.replace('*', "");
    let mut s = cleaned.trim();
    s = s.strip_prefix("__").unwrap_or(s);
    s = s.strip_suffix("__").unwrap_or(s).trim();

    let caps = KEYWORD.captures(s)?;
    let kind = kind_of(caps.get(1)?.as_str())?;
    let rest = s.get(caps.get(0)?.end()..)?.trim();

    let mut rest = rest;
    if kind == SignalKind::RetroComplete {
        // `RETRO COMPLETE: Epic 42`: the word Epic is grammar, not id.
        if let (Some(word), Some(tail)) = (rest.get(..4), rest.get(4..))
            && word.eq_ignore_ascii_case("epic")
            && tail.starts_with(' ')
        {
            rest = tail.trim_start();
        }
    }
    // `Story 1.2` written with a space: join the word to the id.
    let mut tokens = rest.splitn(2, char::is_whitespace);
    let mut id = tokens.next().unwrap_or("").to_string();
    let mut after = tokens.next().unwrap_or("").trim_start().to_string();
    if (id.eq_ignore_ascii_case("story") || id.eq_ignore_ascii_case("epic")) && !after.is_empty() {
        let mut t = after.splitn(2, char::is_whitespace);
        let next = t.next().unwrap_or("").to_string();
        let tail = t.next().unwrap_or("").trim_start().to_string();
        id = format!("{id}-{next}");
        after = tail;
    }
    // Detail introduced by a dash or colon; `1.2:` glued to the id counts too.
    let mut glued_colon = false;
    if let Some(stripped) = id.strip_suffix(':') {
        id = stripped.to_string();
        glued_colon = true;
    }
    let id = id
        .trim_matches(['`', '"', '\''])
        .trim_end_matches(['.', ',', ';', ':', '!', '?'])
        .trim_matches(['`', '"', '\''])
        .to_string();
    if id.is_empty() || normalize_id(&id).is_empty() {
        return None;
    }
    let detail = {
        let d = after.trim();
        let d = if glued_colon {
            d
        } else {
            d.strip_prefix(['-', '–', '—', ':']).unwrap_or(d).trim()
        };
        let d = d.trim_end_matches(['.', '!']).trim();
        (!d.is_empty()).then(|| d.to_string())
    };
    let fixed = match kind {
        SignalKind::ReviewPassedWithFixes => detail
            .as_deref()
            .and_then(|d| FIXED.captures(d))
            .and_then(|c| c.get(1))
            .and_then(|m| m.as_str().parse().ok()),
        _ => None,
    };
    let recommendation = match kind {
        SignalKind::AnalysisComplete => detail.as_deref().and_then(|d| {
            let w = d
                .split(|c: char| !c.is_alphabetic())
                .find(|w| !w.is_empty())?;
            match w.to_ascii_lowercase().as_str() {
                "retry" => Some(Recommendation::Retry),
                "skip" => Some(Recommendation::Skip),
                "escalate" => Some(Recommendation::Escalate),
                _ => None,
            }
        }),
        _ => None,
    };
    Some(Signal {
        kind,
        id,
        detail,
        fixed,
        recommendation,
        line,
    })
}

#[derive(Deserialize)]
struct RawBlock {
    status: serde_json::Value,
    #[serde(default)]
    story_id: Option<serde_json::Value>,
    #[serde(default)]
    summary: Option<serde_json::Value>,
    #[serde(default)]
    files_changed: Option<serde_json::Value>,
    #[serde(default)]
    tests_added: Option<serde_json::Value>,
    #[serde(default)]
    decisions: Option<serde_json::Value>,
    #[serde(default)]
    issues: Option<serde_json::Value>,
}

fn scalar(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn list<T: for<'de> Deserialize<'de>>(v: Option<serde_json::Value>) -> Vec<T> {
    match v {
        Some(serde_json::Value::Array(items)) => items
            .into_iter()
            .filter_map(|i| serde_json::from_value(i).ok())
            .collect(),
        _ => Vec::new(),
    }
}

fn parse_block(body: &str, line: usize) -> Option<StatusBlock> {
    let raw: RawBlock = serde_json::from_str(body.trim()).ok()?;
    let status = Status::parse(raw.status.as_str()?);
    Some(StatusBlock {
        status,
        story_id: raw.story_id.as_ref().and_then(scalar),
        summary: raw.summary.as_ref().and_then(scalar),
        files_changed: list(raw.files_changed),
        tests_added: raw.tests_added,
        decisions: list(raw.decisions),
        issues: list(raw.issues),
        line,
    })
}

/// A fence opener: at most 3 spaces, then 3+ backticks or tildes.
fn fence(line: &str) -> Option<(char, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let t = &line[indent..];
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

/// Find the last valid completion signal for `expected_id` (see the module doc for the rules).
pub fn parse_signal(text: &str, expected_id: &str) -> SignalResult {
    let want = normalize_id(expected_id);
    let mut signal: Option<Signal> = None;
    // The status block in force at the chosen signal, and the latest one seen.
    let mut status_at_signal: Option<StatusBlock> = None;
    let mut latest_block: Option<StatusBlock> = None;
    let mut other_ids: Vec<String> = Vec::new();

    let mut open: Option<(char, usize, usize)> = None; // fence char, length, opening line
    let mut body = String::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some((c, len, start)) = open {
            let closes = fence(line).is_some_and(|(fc, fl)| {
                fc == c && fl >= len && line.trim().chars().all(|x| x == c)
            });
            if closes {
                open = None;
                if let Some(b) = parse_block(&body, start) {
                    let ours = b
                        .story_id
                        .as_deref()
                        .is_none_or(|id| normalize_id(id) == want);
                    if ours {
                        latest_block = Some(b);
                    }
                }
                body.clear();
            } else if body.len() < 64 * 1024 {
                // A status block is small; a huge fence is not one and need not be kept.
                body.push_str(line);
                body.push('\n');
            }
            continue;
        }
        if let Some((c, len)) = fence(line) {
            open = Some((c, len, n));
            body.clear();
            continue;
        }
        let Some(sig) = parse_line(line, n) else {
            continue;
        };
        if normalize_id(&sig.id) == want {
            status_at_signal = latest_block.clone();
            signal = Some(sig);
        } else if other_ids.len() < 8 && !other_ids.contains(&sig.id) {
            other_ids.push(sig.id);
        }
    }
    let status = if signal.is_some() {
        status_at_signal
    } else {
        latest_block
    };
    SignalResult {
        signal,
        status,
        other_ids,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str, id: &str) -> Option<SignalKind> {
        parse_signal(text, id).signal.map(|s| s.kind)
    }

    #[test]
    fn every_keyword_parses() {
        let cases = [
            ("KICKOFF COMPLETE: 1.2", SignalKind::KickoffComplete),
            (
                "IMPLEMENTATION COMPLETE: 1.2",
                SignalKind::ImplementationComplete,
            ),
            (
                "IMPLEMENTATION BLOCKED: 1.2 - no db",
                SignalKind::ImplementationBlocked,
            ),
            ("REVIEW PASSED: 1.2", SignalKind::ReviewPassed),
            (
                "REVIEW PASSED WITH FIXES: 1.2 - Fixed 3 issues",
                SignalKind::ReviewPassedWithFixes,
            ),
            ("REVIEW FAILED: 1.2 - tests fail", SignalKind::ReviewFailed),
            (
                "ANALYSIS COMPLETE: 1.2 - Retry",
                SignalKind::AnalysisComplete,
            ),
        ];
        for (text, k) in cases {
            assert_eq!(kind(text, "1.2"), Some(k), "{text}");
        }
        assert_eq!(
            kind("RETRO COMPLETE: Epic 42", "42"),
            Some(SignalKind::RetroComplete)
        );
        assert_eq!(
            kind("RETRO COMPLETE: Epic epic-42", "epic-42"),
            Some(SignalKind::RetroComplete)
        );
    }

    #[test]
    fn details_are_extracted() {
        let r = parse_signal(
            "IMPLEMENTATION BLOCKED: story-42-1 - Cannot resolve cycle",
            "42.1",
        );
        let s = r.signal.clone().unwrap();
        assert_eq!(s.id, "story-42-1");
        assert_eq!(s.detail.as_deref(), Some("Cannot resolve cycle"));
        assert_eq!(
            r.verdict_reason_for_test(),
            Some("Cannot resolve cycle".to_string())
        );

        let s = parse_signal("REVIEW PASSED WITH FIXES: 1.2 - Fixed 12 issues.", "1.2")
            .signal
            .unwrap();
        assert_eq!(s.fixed, Some(12));
        assert_eq!(s.detail.as_deref(), Some("Fixed 12 issues"));

        for (word, rec) in [
            ("Retry", Recommendation::Retry),
            ("skip", Recommendation::Skip),
            ("**Escalate**", Recommendation::Escalate),
        ] {
            let s = parse_signal(&format!("ANALYSIS COMPLETE: 1.2 - {word}"), "1.2")
                .signal
                .unwrap();
            assert_eq!(s.recommendation, Some(rec), "{word}");
        }
        let s = parse_signal("ANALYSIS COMPLETE: 1.2 - Maybe later", "1.2")
            .signal
            .unwrap();
        assert_eq!(s.recommendation, None);
    }

    impl SignalResult {
        fn verdict_reason_for_test(&self) -> Option<String> {
            match self.verdict() {
                Verdict::Blocked { reason } | Verdict::Failed { reason } => Some(reason),
                _ => None,
            }
        }
    }

    #[test]
    fn last_valid_signal_for_the_right_id_wins() {
        let text = "IMPLEMENTATION BLOCKED: 1.2 - flaky\nretrying...\nIMPLEMENTATION COMPLETE: 1.2\nIMPLEMENTATION COMPLETE: 1.3\n";
        let r = parse_signal(text, "1.2");
        let s = r.signal.as_ref().unwrap();
        assert_eq!(s.kind, SignalKind::ImplementationComplete);
        assert_eq!(s.line, 3);
        assert_eq!(r.other_ids, vec!["1.3".to_string()]);
        assert_eq!(r.verdict(), Verdict::Success);
    }

    #[test]
    fn quoted_fenced_indented_or_inline_signals_do_not_count() {
        for text in [
            "I will print IMPLEMENTATION COMPLETE: 1.2 when done.",
            "> IMPLEMENTATION COMPLETE: 1.2",
            "`IMPLEMENTATION COMPLETE: 1.2`",
            "```\nIMPLEMENTATION COMPLETE: 1.2\n```",
            "~~~~text\nIMPLEMENTATION COMPLETE: 1.2\n~~~\nstill inside\n~~~~",
            "    IMPLEMENTATION COMPLETE: 1.2",
            "- IMPLEMENTATION COMPLETE: 1.2",
        ] {
            let r = parse_signal(text, "1.2");
            assert!(r.signal.is_none(), "counted: {text:?}");
            assert!(matches!(r.verdict(), Verdict::Missing { .. }));
        }
        // After the fence closes, lines count again.
        let text = "```\nREVIEW FAILED: 1.2 - x\n```\nREVIEW PASSED: 1.2";
        assert_eq!(kind(text, "1.2"), Some(SignalKind::ReviewPassed));
    }

    #[test]
    fn another_id_does_not_count() {
        let r = parse_signal("IMPLEMENTATION COMPLETE: 1.3", "1.2");
        assert!(r.signal.is_none());
        match r.verdict() {
            Verdict::Missing { message } => {
                assert!(message.contains("no completion signal"), "{message}");
                assert!(message.contains("1.3"), "{message}");
            }
            v => panic!("{v:?}"),
        }
        // 1.2 must not match 1.20 or 11.2.
        assert!(
            parse_signal("IMPLEMENTATION COMPLETE: 1.20", "1.2")
                .signal
                .is_none()
        );
        assert!(
            parse_signal("IMPLEMENTATION COMPLETE: 11.2", "1.2")
                .signal
                .is_none()
        );
    }

    #[test]
    fn lenient_forms() {
        for text in [
            "**IMPLEMENTATION COMPLETE: 1.2**",
            "**IMPLEMENTATION COMPLETE:** 1.2",
            "IMPLEMENTATION COMPLETE: 1.2.",
            "IMPLEMENTATION COMPLETE: `1.2`",
            "implementation complete: story-1-2",
            "## IMPLEMENTATION COMPLETE: Story 1.2",
            "IMPLEMENTATION COMPLETE - 1.2",
            "  IMPLEMENTATION  COMPLETE: 1-2!",
            "__IMPLEMENTATION COMPLETE: 1_2__",
        ] {
            assert_eq!(
                kind(text, "story-1-2"),
                Some(SignalKind::ImplementationComplete),
                "{text:?}"
            );
        }
    }

    #[test]
    fn id_normalisation() {
        assert_eq!(normalize_id("story-1-2"), "1.2");
        assert_eq!(normalize_id("Story 01.2"), "1.2");
        assert_eq!(normalize_id("1_2"), "1.2");
        assert_eq!(normalize_id("epic-42"), "42");
        assert_eq!(normalize_id("`auth-login`."), "auth.login");
        // A name that merely starts with "story" keeps it.
        assert_eq!(normalize_id("storyboard-1"), "storyboard.1");
        assert_ne!(normalize_id("1.2"), normalize_id("1.20"));
    }

    #[test]
    fn status_block_goes_with_the_signal() {
        let text = r#"Done.

```json
{"status": "COMPLETE", "story_id": "1.2", "summary": "added login",
 "files_changed": ["src/a.rs", 3], "tests_added": 4,
 "decisions": [{"what": "bcrypt", "why": "standard"}],
 "issues": [{"severity": "low", "description": "naming", "location": "src/a.rs:3"}],
 "extra": true}
```

IMPLEMENTATION COMPLETE: 1.2
"#;
        let r = parse_signal(text, "1.2");
        let b = r.status.as_ref().unwrap();
        assert_eq!(b.status, Status::Complete);
        assert_eq!(b.summary.as_deref(), Some("added login"));
        assert_eq!(b.files_changed, vec!["src/a.rs".to_string()]);
        assert_eq!(b.tests_added, Some(serde_json::json!(4)));
        assert_eq!(b.decisions[0].why, "standard");
        assert_eq!(b.issues[0].location, "src/a.rs:3");
        assert_eq!(b.line, 3);
        assert_eq!(r.verdict(), Verdict::Success);
    }

    #[test]
    fn contradicting_status_block_is_not_trusted() {
        let text = "```json\n{\"status\":\"FAILED\",\"story_id\":\"1.2\",\"summary\":\"tests red\"}\n```\nIMPLEMENTATION COMPLETE: 1.2";
        assert!(matches!(
            parse_signal(text, "1.2").verdict(),
            Verdict::Failed { .. }
        ));
        // A block for another story is ignored.
        let text = "```json\n{\"status\":\"FAILED\",\"story_id\":\"1.3\"}\n```\nIMPLEMENTATION COMPLETE: 1.2";
        let r = parse_signal(text, "1.2");
        assert!(r.status.is_none());
        assert_eq!(r.verdict(), Verdict::Success);
        // A block after the signal does not go with it.
        let text = "IMPLEMENTATION COMPLETE: 1.2\n```json\n{\"status\":\"FAILED\"}\n```";
        let r = parse_signal(text, "1.2");
        assert!(r.status.is_none());
    }

    #[test]
    fn no_signal_keeps_the_status_block_for_diagnosis() {
        let text = "```json\n{\"status\":\"BLOCKED\",\"summary\":\"needs creds\"}\n```\nI stopped.";
        let r = parse_signal(text, "1.2");
        assert!(r.signal.is_none());
        assert_eq!(r.status.unwrap().status, Status::Blocked);
        let r = parse_signal("```json\nnot json\n```", "1.2");
        assert!(r.status.is_none());
    }

    #[test]
    fn blocked_without_reason_and_crlf() {
        let r = parse_signal("text\r\nIMPLEMENTATION BLOCKED: 1.2\r\n", "1.2");
        assert_eq!(
            r.verdict(),
            Verdict::Blocked {
                reason: "no reason given".into()
            }
        );
        assert_eq!(r.signal.unwrap().id, "1.2");
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn never_panics(text in any::<String>(), id in any::<String>()) {
                let r = parse_signal(&text, &id);
                let _ = r.verdict();
            }

            #[test]
            fn never_panics_on_signal_like_text(
                lines in proptest::collection::vec(
                    prop_oneof![
                        Just("```".to_string()),
                        Just("~~~".to_string()),
                        Just("**REVIEW PASSED WITH FIXES:** ".to_string()),
                        Just("RETRO COMPLETE: Epic".to_string()),
                        "[A-Z :*_`#>\\-–—0-9.]{0,40}",
                        "\\PC{0,30}",
                    ],
                    0..20,
                ),
                id in "[a-z0-9._ -]{0,10}",
            ) {
                let _ = parse_signal(&lines.join("\n"), &id).verdict();
            }

            /// A well-formed signal line is always found, whatever prose surrounds it.
            #[test]
            fn well_formed_signal_found(before in "[a-z ,.]{0,200}", major in 0u32..100, minor in 0u32..100) {
                let id = format!("{major}.{minor}");
                let text = format!("{before}\nREVIEW PASSED: story-{major}-{minor}\n");
                let r = parse_signal(&text, &id);
                prop_assert_eq!(r.signal.map(|s| s.kind), Some(SignalKind::ReviewPassed));
            }
        }
    }
}
