//! The epic-execute workflow definition: TOML, the built-in embedded in the binary; a project
//! overrides it with `.baton/workflows/epic-execute.toml`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::definition::{CallPolicy, Loaded, Role, definition_error, parse_toml};
use crate::error::{Error, Result};

pub const BUILTIN: &[(&str, &str)] =
    &[("epic-execute", include_str!("../builtin/epic-execute.toml"))];

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EpicWorkflow {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub policy: Policy,
    #[serde(default)]
    pub roles: BTreeMap<String, Role>,
    #[serde(default)]
    pub story_phases: Vec<Phase>,
    pub failure_phase: Option<Phase>,
    #[serde(default)]
    pub epic_phases: Vec<Phase>,
    /// The checks of runs of this workflow, over baton.toml's `[checks]` (each key set here
    /// wins; the others are baton.toml's).
    #[serde(default)]
    pub checks: Option<crate::checks::ChecksConfig>,
    /// Who develops each story (`bmad-build-auto`: the user's BMAD skill), over baton.toml's
    /// `[run] dev`.
    #[serde(default)]
    pub dev: Option<super::Dev>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Policy {
    pub max_attempts: u32,
    pub timeout_secs: u64,
    pub grace_secs: u64,
    pub max_failed_stories: u32,
    /// Retries of an agent call that hit a rate limit or an overloaded server, waiting
    /// `backoff_secs`, then twice that, and so on.
    pub transient_retries: u32,
    pub backoff_secs: u64,
}

crate::definition::call_policy_from!(Policy);

impl Default for Policy {
    fn default() -> Self {
        let call = CallPolicy::default();
        Policy {
            max_attempts: 2,
            timeout_secs: call.timeout_secs,
            grace_secs: call.grace_secs,
            max_failed_stories: 0,
            transient_retries: call.transient_retries,
            backoff_secs: call.backoff_secs,
        }
    }
}
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    pub name: String,
    pub role: String,
    pub template: String,
    /// Template used instead when `party_flag` is on (party review).
    pub party_template: Option<String>,
    pub party_flag: Option<String>,
    /// The phase runs only when this party flag is on.
    pub flag: Option<String>,
    /// The phase is skipped when this flag is on (`--skip-review`).
    pub skip_flag: Option<String>,
    #[serde(default = "yes")]
    pub blocking: bool,
    /// Story status set before the phase runs.
    pub status_before: Option<String>,
    #[serde(default)]
    pub signal: Vec<String>,
    #[serde(default)]
    pub fail_signal: Vec<String>,
    /// Section the agent must append to the story file.
    pub record: Option<String>,
    #[serde(default)]
    pub needs_staged_diff: bool,
    /// baton stages what the phase changed in the work tree (a phase that edits code: dev,
    /// review fixes). On for every phase with `needs_staged_diff`.
    #[serde(default)]
    pub stage: bool,
    /// Files the phase must write (`{epic}` is replaced).
    #[serde(default)]
    pub writes: Vec<String>,
    /// Token budget of the prompt.
    pub budget: Option<usize>,
}

fn yes() -> bool {
    true
}

impl Phase {
    pub fn stages(&self) -> bool {
        self.stage || self.needs_staged_diff
    }
}

impl EpicWorkflow {
    pub fn phases(&self) -> impl Iterator<Item = &Phase> {
        self.story_phases
            .iter()
            .chain(self.failure_phase.iter())
            .chain(self.epic_phases.iter())
    }

    fn validate(&self, source: &str, text: &str) -> Result<()> {
        let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).map(|i| i + 1);
        let mut seen = Vec::new();
        for p in self.phases() {
            if seen.contains(&p.name.as_str()) {
                return Err(Error::corrupt(
                    source,
                    line_of(&format!("\"{}\"", p.name)),
                    format!("phase `{}` is defined twice", p.name),
                ));
            }
            seen.push(&p.name);
            if !self.roles.contains_key(&p.role) {
                let known: Vec<&str> = self.roles.keys().map(String::as_str).collect();
                return Err(Error::corrupt(
                    source,
                    line_of(&format!("role = \"{}\"", p.role)),
                    format!(
                        "phase `{}` has role `{}`, which [roles] does not define (defined: {})",
                        p.name,
                        p.role,
                        known.join(", ")
                    ),
                ));
            }
            if p.signal.is_empty() {
                return Err(Error::corrupt(
                    source,
                    line_of(&format!("\"{}\"", p.name)),
                    format!("phase `{}` has no `signal`", p.name),
                ));
            }
        }
        if self.policy.max_attempts == 0 {
            return Err(Error::corrupt(
                source,
                line_of("max_attempts"),
                "max_attempts must be at least 1",
            ));
        }
        Ok(())
    }
}
/// Load a workflow by name: the project's override if there is one, else the built-in.
pub fn load(name: &str, override_dir: &Path) -> Result<Loaded<EpicWorkflow>> {
    crate::definition::load(name, BUILTIN, override_dir, parse)
}

pub fn parse(source: &str, text: &str) -> Result<EpicWorkflow> {
    let wf: EpicWorkflow = parse_toml(source, text)?;
    wf.validate(source, text)
        .map_err(definition_error(source))?;
    Ok(wf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::BUILTIN_PROMPTS;

    #[test]
    fn builtins_parse_and_reference_existing_templates() {
        for (name, text) in BUILTIN {
            let wf = parse(name, text).unwrap();
            for p in wf.phases() {
                assert!(
                    BUILTIN_PROMPTS.iter().any(|(n, _)| *n == p.template),
                    "{}",
                    p.template
                );
                if let Some(t) = &p.party_template {
                    assert!(BUILTIN_PROMPTS.iter().any(|(n, _)| n == t));
                }
            }
        }
    }

    #[test]
    fn bad_definitions_name_file_and_line() {
        let text = BUILTIN[0]
            .1
            .replace("role = \"review\"", "role = \"critic\"");
        let e = parse("wf.toml", &text).unwrap_err().to_string();
        assert!(e.contains("wf.toml line") && e.contains("critic"), "{e}");
        let e = parse("wf.toml", "name = \"x\"\nbogus = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("wf.toml line 2"), "{e}");
    }
}
