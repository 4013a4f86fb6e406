//! The fenced JSON status block an agent may print before its signal (the epic-execute
//! workflow's convention): what it says and how it is read.

use serde::{Deserialize, Serialize};

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

/// The status block in a fenced block's content, if it is one (a JSON object with a string
/// `status`); `line` is the line of its opening fence.
pub(super) fn parse_block(body: &str, line: usize) -> Option<StatusBlock> {
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
