//! The verify pipeline definition: `verify.toml` (built-in, or the project's
//! `.baton/workflows/verify.toml`), its phases in dependency order, and the prompt templates.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::definition::{self as def, Role};
use crate::error::{Error, Result};

pub const BUILTIN: &str = include_str!("../builtin/verify.toml");

/// The return format every sub-agent must end with, shown in every prompt.
pub const FORMAT: &str = "## Summary

**Status:** Complete | Partial | Failed
**Output file:** {path}
**Lines written:** {n}

### Key Findings
- {finding 1 — one line}
- ...

### Issues Found
| # | Severity | Description |
|---|----------|-------------|
| 1 | Critical | {one line} |

### Key Numbers
| Metric | Value | Source |
|--------|-------|--------|
| {metric} | {value} | {source} |

### Next Phase Needs
- {what the next agent should focus on}";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyPipeline {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub policy: def::CallPolicy,
    #[serde(default)]
    pub roles: BTreeMap<String, Role>,
    #[serde(default, rename = "phase")]
    pub phases: Vec<Phase>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    pub id: String,
    /// The sub-agent's role name ("SEC Researcher"), shown in the state file and the prompt.
    pub agent: String,
    /// Who runs it: `[roles.<role>]`, or baton.toml's `[run.roles.<role>]`.
    #[serde(default = "default_role")]
    pub role: String,
    /// File name in the item's directory; `{item}` is the item id, lowercased.
    pub output: String,
    #[serde(default)]
    pub inputs: Vec<String>,
    #[serde(default = "default_template")]
    pub template: String,
    #[serde(default)]
    pub task: String,
    /// Token budget of the prompt.
    pub budget: Option<usize>,
}

fn default_role() -> String {
    "verifier".into()
}

fn default_template() -> String {
    "verify-phase".into()
}

impl Phase {
    /// The output file name for `item`.
    pub fn output_for(&self, item: &str) -> String {
        self.output.replace("{item}", &item.to_ascii_lowercase())
    }
}

/// Load the pipeline: the project's override if there is one, else the built-in. The phases
/// come back in an order that respects every `inputs` dependency.
pub fn load(override_dir: &Path) -> Result<def::Loaded<VerifyPipeline>> {
    def::load("verify", &[("verify", BUILTIN)], override_dir, parse)
}

pub fn parse(source: &str, text: &str) -> Result<VerifyPipeline> {
    let p: VerifyPipeline = def::parse_toml(source, text)?;
    check(p, source, text).map_err(def::definition_error(source))
}

fn check(mut p: VerifyPipeline, source: &str, text: &str) -> Result<VerifyPipeline> {
    let line_of = |id: &str| {
        text.lines()
            .position(|l| {
                let l = l.trim_start();
                l.starts_with("id")
                    && l.split_once('=')
                        .is_some_and(|(_, v)| v.trim().trim_matches('"') == id)
            })
            .map(|i| i + 1)
    };
    if p.phases.is_empty() {
        return Err(Error::corrupt(source, None, "no [[phase]] defined"));
    }
    let mut outputs: Vec<String> = Vec::new();
    for (i, ph) in p.phases.iter().enumerate() {
        if p.phases[..i].iter().any(|o| o.id == ph.id) {
            return Err(Error::corrupt(
                source,
                line_of(&ph.id),
                format!("phase `{}` is defined twice", ph.id),
            ));
        }
        if ph.id.is_empty()
            || !ph
                .id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(Error::corrupt(
                source,
                line_of(&ph.id),
                format!("phase id `{}` must be letters, digits, `-` or `_`", ph.id),
            ));
        }
        let out = ph.output_for("x");
        if out.is_empty()
            || out.contains('/')
            || out.contains('\\')
            || out.starts_with('.')
            || out == "verification-state.json"
        {
            return Err(Error::corrupt(
                source,
                line_of(&ph.id),
                format!(
                    "phase `{}`: output `{}` must be a plain file name (no `/`, not hidden)",
                    ph.id, ph.output
                ),
            ));
        }
        if outputs.contains(&ph.output) {
            return Err(Error::corrupt(
                source,
                line_of(&ph.id),
                format!(
                    "phase `{}` writes `{}`, like an earlier phase",
                    ph.id, ph.output
                ),
            ));
        }
        outputs.push(ph.output.clone());
    }
    let nodes: Vec<(String, Vec<String>)> = p
        .phases
        .iter()
        .map(|ph| (ph.id.clone(), ph.inputs.clone()))
        .collect();
    let order = def::check_dag(source, text, &nodes)?;
    p.phases
        .sort_by_key(|ph| order.iter().position(|o| *o == ph.id));
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses_in_dependency_order_with_templates() {
        let p = parse("verify.toml", BUILTIN).unwrap();
        let ids: Vec<&str> = p.phases.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["1a", "1b", "4c", "4d", "5"]);
        for ph in &p.phases {
            assert!(
                crate::prompt::BUILTIN_PROMPTS
                    .iter()
                    .any(|(n, _)| *n == ph.template)
            );
            assert!(p.roles.contains_key(&ph.role), "{}", ph.role);
        }
        assert_eq!(p.phases[0].output_for("BMNR"), "bmnr-ground-truth.md");
    }

    #[test]
    fn unknown_inputs_and_cycles_name_file_and_line() {
        let bad = BUILTIN.replace("inputs = [\"1a\"]\n", "inputs = [\"9z\"]\n");
        let line_of = |text: &str, id: &str| {
            1 + text
                .lines()
                .position(|l| l.trim() == format!("id = \"{id}\""))
                .unwrap()
        };
        let e = parse("v.toml", &bad).unwrap_err().to_string();
        let want = format!("v.toml line {}", line_of(&bad, "1b"));
        assert!(e.contains(&want) && e.contains("`9z`"), "{e}");
        let cyc = BUILTIN.replace("inputs = []\n", "inputs = [\"5\"]\n");
        let e = parse("v.toml", &cyc).unwrap_err().to_string();
        let want = format!("v.toml line {}", line_of(&cyc, "1a"));
        assert!(e.contains(&want) && e.contains("cycle"), "{e}");
        let e = parse(
            "v.toml",
            &BUILTIN.replace("{item}-data-review.md", "../x.md"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("plain file name"), "{e}");
    }

    #[test]
    fn prompts_give_paths_and_the_format() {
        let ctx = serde_json::json!({"phase": {"id": "1b", "agent": "A", "task": "t"}, "item": "BMNR",
            "attempt": 1, "output": "o.md", "inputs": [{"path": "in.md", "phase": "1a", "agent": "R"}],
            "format": FORMAT, "notes": [], "partial": null});
        let p = crate::prompt::render(
            "verify-phase",
            &crate::prompt::template("verify-phase", Path::new("/nonexistent")).unwrap(),
            &ctx,
        )
        .unwrap();
        assert!(
            p.contains("Verify phase: 1b\nItem: BMNR\nAttempt: 1\nOutput file: o.md\n"),
            "{p}"
        );
        assert!(p.contains("- in.md (phase 1a, R)"), "{p}");
        assert!(p.contains("You MUST end with a Summary block"), "{p}");
        assert!(!p.contains("previous attempt"), "{p}");
    }
}
