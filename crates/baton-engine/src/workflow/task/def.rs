//! Task workflow definitions (orchestrate, poc, graduate): TOML, built-ins embedded, a project
//! overrides one with `.baton/workflows/<name>.toml`. The phases form a graph (`after`),
//! checked with `def::check_dag`; the engine walks them in that order.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::definition::{CallPolicy, Loaded, Role, check_dag};
use crate::error::{Error, Result};
use baton_store::model::Gate;

pub const BUILTIN: &[(&str, &str)] = &[
    ("orchestrate", include_str!("../builtin/orchestrate.toml")),
    ("poc", include_str!("../builtin/poc.toml")),
    ("graduate", include_str!("../builtin/graduate.toml")),
    ("plan", include_str!("../builtin/plan.toml")),
];

/// The phases a task workflow may name; each has its own behaviour in the engine.
pub const KINDS: &[&str] = &[
    "architect",
    "design-audit",
    "architect-revision",
    "spec",
    "implementation",
    "tests",
    "test-results",
    "impl-audit",
    "implementation-fix",
    "debt",
    // Before any architect: the dialogue with the person (`baton discover`, interactive) and
    // the headless planning context that turns its specs into the task breakdown.
    "discovery",
    "plan",
];

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskWorkflow {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Gates the run stops at (design, investigation, final).
    #[serde(default)]
    pub gates: Vec<Gate>,
    /// When set, baton runs it for test-results itself (masked, zero tokens).
    #[serde(default)]
    pub test_command: Vec<String>,
    #[serde(default)]
    pub policy: TaskPolicy,
    #[serde(default)]
    pub roles: BTreeMap<String, Role>,
    #[serde(default, rename = "phase")]
    pub phases: Vec<TaskPhase>,
    /// A conductor session told of every finished implementation task and audit,
    /// resumed across reports and rotated by `[budget]`'s refresh triggers.
    pub conductor: Option<ConductorDef>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConductorDef {
    pub role: String,
    /// Prompt template; default `conductor`.
    #[serde(default = "conductor_template")]
    pub template: String,
}

fn conductor_template() -> String {
    "conductor".into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TaskPolicy {
    /// Tries of a phase (no signal, agent error, missing output) before the task is paused.
    pub max_attempts: u32,
    /// Failed design audits answered by an architect revision before the task is paused.
    pub max_revisions: u32,
    /// Failed implementation audits answered by a fix before the task is paused.
    pub max_fixes: u32,
    /// Implementation tasks at once (`--parallel` overrides).
    pub parallel: usize,
    pub timeout_secs: u64,
    pub grace_secs: u64,
    /// Retries of an agent call that hit a rate limit or an overloaded server, waiting
    /// `backoff_secs`, then twice that, and so on.
    pub transient_retries: u32,
    pub backoff_secs: u64,
}

crate::definition::call_policy_from!(TaskPolicy);

impl Default for TaskPolicy {
    fn default() -> Self {
        let call = CallPolicy::default();
        TaskPolicy {
            max_attempts: 2,
            max_revisions: 2,
            max_fixes: 2,
            parallel: 4,
            timeout_secs: call.timeout_secs,
            grace_secs: call.grace_secs,
            transient_retries: call.transient_retries,
            backoff_secs: call.backoff_secs,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskPhase {
    /// One of `KINDS`.
    pub name: String,
    /// Phases this one runs after.
    #[serde(default)]
    pub after: Vec<String>,
    pub role: String,
    /// Prompt template; default `task-<name>`.
    pub template: Option<String>,
    /// BEGIN_PHASE needs (architect needs memory, spec needs architect-output …).
    #[serde(default)]
    pub needs: Vec<String>,
    /// The keyword of the line that ends the phase well (`ARCHITECT COMPLETE`).
    pub signal: String,
    /// The keyword of a failed verdict (`DESIGN AUDIT FAILED`).
    pub fail_signal: Option<String>,
    /// An audit's repair phase, run after a failed verdict before auditing again.
    pub repair: Option<String>,
    /// Token budget of the prompt (discovery: of the whole dialogue, watched while it runs).
    pub budget: Option<usize>,
    /// discovery: where the spec files go, relative to the project (`{task}`: the task's slug).
    pub spec_dir: Option<String>,
    /// discovery: the spec files the dialogue writes, with their sections (plan extracts them).
    #[serde(default)]
    pub specs: Vec<SpecFile>,
}

/// One spec file discovery writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    /// A file name (`REQUIREMENTS.md`), inside the phase's `spec_dir`.
    pub file: String,
    /// Its sections (`##` headings), in order.
    #[serde(default)]
    pub sections: Vec<String>,
}

impl SpecFile {
    /// The file's stem: its name in the store (`discovery/<stem>.md`).
    pub fn stem(&self) -> &str {
        self.file.strip_suffix(".md").unwrap_or(&self.file)
    }
}

impl TaskPhase {
    pub fn template_name(&self) -> String {
        self.template
            .clone()
            .unwrap_or_else(|| format!("task-{}", self.name))
    }
}

impl TaskWorkflow {
    pub fn phase(&self, name: &str) -> Option<&TaskPhase> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// The phases the engine walks, in dependency order (repair phases run from their audit).
    pub fn order(&self, source: &str, text: &str) -> Result<Vec<String>> {
        let nodes: Vec<(String, Vec<String>)> = self
            .phases
            .iter()
            .map(|p| (p.name.clone(), p.after.clone()))
            .collect();
        let order = check_dag(source, text, &nodes)?;
        let repairs: Vec<&str> = self
            .phases
            .iter()
            .filter_map(|p| p.repair.as_deref())
            .collect();
        Ok(order
            .into_iter()
            .filter(|p| !repairs.contains(&p.as_str()))
            .collect())
    }

    fn validate(&self, source: &str, text: &str) -> Result<()> {
        let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).map(|i| i + 1);
        let at = |name: &str| line_of(&format!("\"{name}\""));
        let mut seen: Vec<&str> = vec![];
        for p in &self.phases {
            if !KINDS.contains(&p.name.as_str()) {
                return Err(Error::corrupt(
                    source,
                    at(&p.name),
                    format!(
                        "unknown phase `{}` (task workflows know: {})",
                        p.name,
                        KINDS.join(", ")
                    ),
                ));
            }
            if seen.contains(&p.name.as_str()) {
                return Err(Error::corrupt(
                    source,
                    at(&p.name),
                    format!("phase `{}` is defined twice", p.name),
                ));
            }
            seen.push(&p.name);
            if !self.roles.contains_key(&p.role) {
                return Err(Error::corrupt(
                    source,
                    line_of(&format!("role = \"{}\"", p.role)),
                    format!(
                        "phase `{}` has role `{}`, which [roles] does not define",
                        p.name, p.role
                    ),
                ));
            }
            if p.signal.trim().is_empty() {
                return Err(Error::corrupt(
                    source,
                    at(&p.name),
                    format!("phase `{}` has no `signal`", p.name),
                ));
            }
        }
        for p in &self.phases {
            if p.name == "discovery" {
                check_specs(p, source, &line_of)?;
            }
            if p.name == "plan" && self.phase("discovery").is_none() {
                return Err(Error::corrupt(
                    source,
                    at("plan"),
                    "phase `plan` reads the specs of a `discovery` phase, which is not defined",
                ));
            }
            if let Some(r) = &p.repair
                && !seen.contains(&r.as_str())
            {
                return Err(Error::corrupt(
                    source,
                    line_of(&format!("repair = \"{r}\"")),
                    format!(
                        "phase `{}` names repair phase `{r}`, which is not defined",
                        p.name
                    ),
                ));
            }
        }
        if let Some(c) = &self.conductor
            && !self.roles.contains_key(&c.role)
        {
            return Err(Error::corrupt(
                source,
                line_of("[conductor]"),
                format!(
                    "[conductor] has role `{}`, which [roles] does not define",
                    c.role
                ),
            ));
        }
        if self.policy.max_attempts == 0 {
            return Err(Error::corrupt(
                source,
                line_of("max_attempts"),
                "max_attempts must be at least 1",
            ));
        }
        if self.policy.parallel == 0 {
            return Err(Error::corrupt(
                source,
                line_of("parallel"),
                "parallel must be at least 1",
            ));
        }
        self.order(source, text)?;
        Ok(())
    }
}

/// A discovery phase names at least one spec file, each a plain `.md` file name (its
/// directory is `spec_dir`: a name never leads out of it).
fn check_specs(p: &TaskPhase, source: &str, line_of: &dyn Fn(&str) -> Option<usize>) -> Result<()> {
    if p.specs.is_empty() {
        return Err(Error::corrupt(
            source,
            line_of("\"discovery\""),
            "phase `discovery` names no spec files: add [[phase.specs]] file = \"REQUIREMENTS.md\"",
        ));
    }
    for f in &p.specs {
        let stem = f.stem();
        let plain = f.file.ends_with(".md")
            && baton_store::names::check_task_id(stem).is_ok()
            && !stem.contains("..");
        if !plain {
            return Err(Error::corrupt(
                source,
                line_of(&f.file),
                format!(
                    "spec file `{}` must be a file name ending in .md (letters, digits, `-`, `_`): its directory is `spec_dir`",
                    f.file
                ),
            ));
        }
    }
    Ok(())
}

pub fn is_builtin(name: &str) -> bool {
    BUILTIN.iter().any(|(n, _)| *n == name)
}

/// Load a task workflow: the project's override if there is one, else the built-in.
pub fn load(name: &str, override_dir: &Path) -> Result<Loaded<TaskWorkflow>> {
    crate::definition::load(name, BUILTIN, override_dir, parse)
}

pub fn parse(source: &str, text: &str) -> Result<TaskWorkflow> {
    let wf: TaskWorkflow = crate::definition::parse_toml(source, text)?;
    wf.validate(source, text)
        .map_err(crate::definition::definition_error(source))?;
    Ok(wf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_have_templates() {
        for (name, text) in BUILTIN {
            let wf = parse(name, text).unwrap();
            assert_eq!(wf.name, *name);
            for p in &wf.phases {
                let t = p.template_name();
                assert!(
                    crate::prompt::BUILTIN_PROMPTS.iter().any(|(n, _)| *n == t),
                    "{t}"
                );
            }
            let order = wf.order(name, text).unwrap();
            assert!(!order.contains(&"architect-revision".to_string()));
        }
    }

    #[test]
    fn unknown_phases_and_cycles_name_the_line() {
        let text = BUILTIN[0]
            .1
            .replace("after = [\"tests\"]", "after = [\"nosuch\"]");
        let e = parse("o.toml", &text).unwrap_err().to_string();
        assert!(e.contains("o.toml line") && e.contains("nosuch"), "{e}");
        let text = BUILTIN[0].1.replace("name = \"debt\"", "name = \"dept\"");
        let text =
            format!("{text}\n[[phase]]\nname = \"bogus\"\nrole = \"architect\"\nsignal = \"X\"\n");
        let e = parse("o.toml", &text).unwrap_err().to_string();
        assert!(e.contains("unknown phase `bogus`"), "{e}");
        let text = BUILTIN[0].1.replace(
            "name = \"architect\"\n",
            "name = \"architect\"\nafter = [\"spec\"]\n",
        );
        let e = parse("o.toml", &text).unwrap_err().to_string();
        assert!(
            e.contains("dependency cycle") && e.contains("o.toml line"),
            "{e}"
        );
    }

    #[test]
    fn discovery_names_its_specs_and_plan_needs_discovery() {
        let plan = BUILTIN.iter().find(|(n, _)| *n == "plan").unwrap().1;
        let wf = parse("plan.toml", plan).unwrap();
        assert_eq!(
            wf.phase("discovery").unwrap().specs[0].stem(),
            "REQUIREMENTS"
        );
        let text = plan.replace("file = \"REQUIREMENTS.md\"", "file = \"../up.md\"");
        let e = parse("p.toml", &text).unwrap_err().to_string();
        assert!(
            e.contains("spec file `../up.md` must be a file name"),
            "{e}"
        );
        let cut = plan.find("[[phase.specs]]").unwrap();
        let rest = &plan[plan.find("[[phase]]\nname = \"plan\"").unwrap()..];
        let e = parse("p.toml", &format!("{}{rest}", &plan[..cut]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("names no spec files"), "{e}");
        let only_plan = &plan[..plan.find("[[phase]]").unwrap()];
        let only_plan = format!("{only_plan}{rest}").replace("after = [\"discovery\"]\n", "");
        let e = parse("p.toml", &only_plan).unwrap_err().to_string();
        assert!(e.contains("not defined"), "{e}");
    }
}
