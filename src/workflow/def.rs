//! Workflow definitions: TOML, with the built-ins embedded in the binary. A project overrides
//! one by putting a file of the same name in `.baton/workflows/`; prompts are minijinja
//! templates, overridable the same way in `.baton/prompts/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub const BUILTIN: &[(&str, &str)] = &[("epic-execute", include_str!("builtin/epic-execute.toml"))];

pub const BUILTIN_PROMPTS: &[(&str, &str)] = &[
    ("kickoff", include_str!("builtin/prompts/kickoff.md.j2")),
    ("dev", include_str!("builtin/prompts/dev.md.j2")),
    ("review", include_str!("builtin/prompts/review.md.j2")),
    (
        "party-review",
        include_str!("builtin/prompts/party-review.md.j2"),
    ),
    (
        "failure-analysis",
        include_str!("builtin/prompts/failure-analysis.md.j2"),
    ),
    ("uat", include_str!("builtin/prompts/uat.md.j2")),
    ("retro", include_str!("builtin/prompts/retro.md.j2")),
    ("conductor", include_str!("builtin/prompts/conductor.md.j2")),
    (
        "verify-phase",
        include_str!("builtin/prompts/verify-phase.md.j2"),
    ),
    (
        "verify-reminder",
        include_str!("builtin/prompts/verify-reminder.md.j2"),
    ),
    (
        "task-architect",
        include_str!("builtin/prompts/task-architect.md.j2"),
    ),
    (
        "task-design-audit",
        include_str!("builtin/prompts/task-design-audit.md.j2"),
    ),
    (
        "task-architect-revision",
        include_str!("builtin/prompts/task-architect-revision.md.j2"),
    ),
    ("task-spec", include_str!("builtin/prompts/task-spec.md.j2")),
    (
        "task-implementation",
        include_str!("builtin/prompts/task-implementation.md.j2"),
    ),
    (
        "task-tests",
        include_str!("builtin/prompts/task-tests.md.j2"),
    ),
    (
        "task-test-results",
        include_str!("builtin/prompts/task-test-results.md.j2"),
    ),
    (
        "task-impl-audit",
        include_str!("builtin/prompts/task-impl-audit.md.j2"),
    ),
    (
        "task-implementation-fix",
        include_str!("builtin/prompts/task-implementation-fix.md.j2"),
    ),
    ("task-debt", include_str!("builtin/prompts/task-debt.md.j2")),
];

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workflow {
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

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_attempts: 2,
            timeout_secs: 1800,
            grace_secs: 10,
            max_failed_stories: 0,
            transient_retries: 3,
            backoff_secs: 30,
        }
    }
}

/// Who runs a role: an agent kind (claude, codex, gemini, command, sim) and a model.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Role {
    pub agent: Option<String>,
    pub model: Option<String>,
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
    /// Files the phase must write (`{epic}` is replaced).
    #[serde(default)]
    pub writes: Vec<String>,
    /// Token budget of the prompt.
    pub budget: Option<usize>,
}

fn yes() -> bool {
    true
}

impl Workflow {
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
pub fn load(name: &str, override_dir: &Path) -> Result<(Workflow, String)> {
    let file = override_dir.join(format!("{name}.toml"));
    let (source, text) = if file.is_file() {
        let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
        (file.display().to_string(), text)
    } else {
        let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) else {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            return Err(
                Error::not_found(format!("no workflow `{name}`")).hint(format!(
                    "built-in workflows: {}; or add {}",
                    names.join(", "),
                    file.display()
                )),
            );
        };
        (format!("built-in {name}.toml"), text.to_string())
    };
    let wf = parse(&source, &text)?;
    Ok((wf, text))
}

pub fn parse(source: &str, text: &str) -> Result<Workflow> {
    let wf: Workflow = parse_toml(source, text)?;
    wf.validate(source, text)
        .map_err(definition_error(source))?;
    Ok(wf)
}

/// A workflow definition read from TOML; an error names the file and line and says how to
/// mend it.
pub fn parse_toml<T: serde::de::DeserializeOwned>(source: &str, text: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1);
        definition_error(source)(Error::corrupt(
            PathBuf::from(source),
            line,
            e.message().to_string(),
        ))
    })
}

/// What to do about a broken definition: not `baton doctor` (the store is fine), but the file.
pub fn definition_error(source: &str) -> impl Fn(Error) -> Error + '_ {
    move |e| {
        if source.starts_with("built-in") {
            e.hint("a built-in workflow is broken: please report it")
        } else {
            e.hint(format!("fix {source}, or delete it to use the built-in"))
        }
    }
}

/// Check a workflow's phase graph: every dependency names a defined phase and there is no
/// cycle. `nodes` are (phase, the phases it depends on), in file order; errors name `source`
/// and the line of the offending phase (found in `text` as `name = "<phase>"` or `id = …`).
/// Returns the phases in an order that respects every dependency (file order where free).
pub fn check_dag(source: &str, text: &str, nodes: &[(String, Vec<String>)]) -> Result<Vec<String>> {
    let line_of = |name: &str| {
        text.lines()
            .position(|l| {
                let l = l.trim_start();
                (l.starts_with("name") || l.starts_with("id"))
                    && l.split_once('=')
                        .is_some_and(|(_, v)| v.trim().trim_matches('"') == name)
            })
            .map(|i| i + 1)
    };
    let known: Vec<&str> = nodes.iter().map(|(n, _)| n.as_str()).collect();
    for (name, deps) in nodes {
        for d in deps {
            if !known.contains(&d.as_str()) {
                return Err(Error::corrupt(
                    source,
                    line_of(name),
                    format!(
                        "phase `{name}` depends on `{d}`, which is not a phase of this workflow (phases: {})",
                        known.join(", ")
                    ),
                ));
            }
        }
    }
    // Kahn's algorithm, taking the earliest ready phase in file order each time.
    let mut done: Vec<String> = Vec::with_capacity(nodes.len());
    while done.len() < nodes.len() {
        let next = nodes
            .iter()
            .find(|(n, deps)| !done.contains(n) && deps.iter().all(|d| done.contains(d)));
        match next {
            Some((n, _)) => done.push(n.clone()),
            None => {
                // Every phase left waits on another one left: walk the waits to name the cycle.
                let left: Vec<&(String, Vec<String>)> =
                    nodes.iter().filter(|(n, _)| !done.contains(n)).collect();
                let mut path = vec![left[0].0.clone()];
                loop {
                    let cur = path.last().cloned().unwrap_or_default();
                    let dep = left
                        .iter()
                        .find(|(n, _)| *n == cur)
                        .and_then(|(_, deps)| deps.iter().find(|d| !done.contains(d)))
                        .cloned()
                        .unwrap_or_default();
                    if let Some(i) = path.iter().position(|p| *p == dep) {
                        let mut cycle = path[i..].to_vec();
                        cycle.push(dep);
                        return Err(Error::corrupt(
                            source,
                            line_of(&cycle[0]),
                            format!("dependency cycle: {}", cycle.join(" → ")),
                        ));
                    }
                    path.push(dep);
                }
            }
        }
    }
    Ok(done)
}

/// Render a prompt template (undefined variables are empty: a template may leave things out).
pub fn render(name: &str, template: &str, ctx: &serde_json::Value) -> Result<String> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    env.add_template(name, template)
        .map_err(|e| Error::invalid(format!("prompt template `{name}`: {e}")))?;
    env.get_template(name)
        .and_then(|t| t.render(ctx))
        .map_err(|e| Error::invalid(format!("prompt template `{name}`: {e}")))
}

/// Who runs `role`: `--agent` for every role, else baton.toml's `[run.roles.<role>]`, else
/// the workflow's `[roles.<role>]`, else the default agent.
pub fn assign(
    role: &str,
    agent: Option<&str>,
    project: &BTreeMap<String, Role>,
    workflow: &BTreeMap<String, Role>,
    default_agent: &str,
) -> super::agents::Assignment {
    let w = workflow.get(role).cloned().unwrap_or_default();
    let p = project.get(role).cloned().unwrap_or_default();
    super::agents::Assignment {
        agent: agent
            .map(str::to_string)
            .or(p.agent)
            .or(w.agent)
            .unwrap_or_else(|| default_agent.to_string()),
        model: p.model.or(w.model),
    }
}

/// A prompt template: the project's `<dir>/<name>.md.j2` if present, else the built-in.
pub fn template(name: &str, override_dir: &Path) -> Result<String> {
    let file = override_dir.join(format!("{name}.md.j2"));
    if file.is_file() {
        return std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e));
    }
    BUILTIN_PROMPTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| t.to_string())
        .ok_or_else(|| {
            Error::not_found(format!("no prompt template `{name}`"))
                .hint(format!("add {}", file.display()))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn dependency_graph_errors_name_the_phase_line() {
        let text = "[[phase]]\nid = \"1a\"\n[[phase]]\nid = \"1b\"\nafter = [\"2\"]\n[[phase]]\nid = \"2\"\nafter = [\"1b\"]\n";
        let n = |a: &str, d: &[&str]| (a.to_string(), d.iter().map(|s| s.to_string()).collect());
        let e = check_dag(
            "v.toml",
            text,
            &[n("1a", &[]), n("1b", &["2"]), n("2", &["1b"])],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("v.toml line 4") && e.contains("1b → 2 → 1b"),
            "{e}"
        );
        let e = check_dag("v.toml", text, &[n("1a", &[]), n("1b", &["9"])])
            .unwrap_err()
            .to_string();
        assert!(e.contains("v.toml line 4") && e.contains("`9`"), "{e}");
        let order = check_dag(
            "v.toml",
            text,
            &[n("2", &["1b"]), n("1a", &[]), n("1b", &["1a"])],
        )
        .unwrap();
        assert_eq!(order, ["1a", "1b", "2"]);
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
