//! What every workflow definition shares: TOML parsing with errors that name the file and
//! line, the phase-graph check, roles and who runs them, and the agent-call policy (timeouts,
//! rate-limit backoff). Each engine's own definition lives beside its engine
//! (`workflow/epic/def.rs`, `workflow/task/def.rs`, `workflow/verify/pipeline.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::agents::Assignment;
use crate::error::{Error, Result};
use baton_agent::settings::{AgentId, Tier};

/// Who runs a role: an agent (claude, codex, gemini, sim, or a name of `[agents.<name>]`), and
/// the model: a tier the agent's model map turns into its own model name, or a model by name.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Role {
    /// The agent that plays the role: `claude`, `codex`, `gemini`, `sim`, or an
    /// `[agents.<name>]` of your own.
    pub agent: Option<AgentId>,
    /// How strong a model the role needs (`strong`, `standard`, `fast`): the agent's
    /// `models` map turns it into a model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// A model by name, passed to the agent's CLI as it is (over `tier`).
    pub model: Option<String>,
}

/// The workflows baton runs, each by its engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WorkflowKind {
    EpicExecute,
    EpicChain,
    Orchestrate,
    Poc,
    Graduate,
    Verify,
}

impl WorkflowKind {
    pub const ALL: [WorkflowKind; 6] = [
        WorkflowKind::EpicExecute,
        WorkflowKind::EpicChain,
        WorkflowKind::Orchestrate,
        WorkflowKind::Poc,
        WorkflowKind::Graduate,
        WorkflowKind::Verify,
    ];

    /// The name in commands, definitions and run journals.
    pub fn name(self) -> &'static str {
        match self {
            WorkflowKind::EpicExecute => "epic-execute",
            WorkflowKind::EpicChain => "epic-chain",
            WorkflowKind::Orchestrate => "orchestrate",
            WorkflowKind::Poc => "poc",
            WorkflowKind::Graduate => "graduate",
            WorkflowKind::Verify => "verify",
        }
    }

    pub fn parse(name: &str) -> Option<WorkflowKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// orchestrate, poc and graduate: a task of the store.
    pub fn is_task(self) -> bool {
        matches!(
            self,
            WorkflowKind::Orchestrate | WorkflowKind::Poc | WorkflowKind::Graduate
        )
    }

    /// What a run of it works on, as `baton status` names it: epic, task or queue.
    pub fn subject_word(self) -> &'static str {
        match self {
            WorkflowKind::EpicExecute | WorkflowKind::EpicChain => "epic",
            WorkflowKind::Verify => "queue",
            _ => "task",
        }
    }
}

impl std::fmt::Display for WorkflowKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How one agent call is run and retried, whatever the engine: its time limit, the grace
/// between SIGTERM and SIGKILL, and how rate limits / overloaded servers are waited out
/// (`transient_retries` more calls, waiting `backoff_secs`, then twice that, …).
///
/// A verify pipeline's `[policy]` is exactly this. The epic and task engines' `[policy]`
/// tables have keys of their own besides these four, and serde's `flatten` does not go with
/// `deny_unknown_fields` (a typo must stay an error): they repeat the four keys, take their
/// defaults from [`CallPolicy::default`] and turn into one with [`CallPolicy::from`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CallPolicy {
    pub timeout_secs: u64,
    pub grace_secs: u64,
    /// Retries of an agent call that hit a rate limit or an overloaded server, waiting
    /// `backoff_secs`, then twice that, and so on.
    pub transient_retries: u32,
    pub backoff_secs: u64,
}

impl Default for CallPolicy {
    fn default() -> Self {
        CallPolicy {
            timeout_secs: 1800,
            grace_secs: 10,
            transient_retries: 3,
            backoff_secs: 30,
        }
    }
}

/// The four fields every engine's policy carries, the one conversion of them.
macro_rules! call_policy_from {
    ($($policy:ty),*) => {$(
        impl From<&$policy> for $crate::definition::CallPolicy {
            fn from(p: &$policy) -> Self {
                $crate::definition::CallPolicy {
                    timeout_secs: p.timeout_secs,
                    grace_secs: p.grace_secs,
                    transient_retries: p.transient_retries,
                    backoff_secs: p.backoff_secs,
                }
            }
        }
    )*};
}
pub(crate) use call_policy_from;

/// A workflow definition as the engines load it, whatever its kind: the definition, where it
/// came from (the project's file or `built-in NAME.toml`, as errors name it) and its text (what
/// the run journals and `baton workflow show` prints).
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    pub def: T,
    pub source: String,
    pub text: String,
}

/// Load a definition: the project's override if there is one, else the built-in, parsed and
/// checked by its engine's `parse`.
pub fn load<T>(
    name: &str,
    builtins: &[(&str, &str)],
    override_dir: &Path,
    parse: impl FnOnce(&str, &str) -> Result<T>,
) -> Result<Loaded<T>> {
    let (source, text) = source_text(name, builtins, override_dir)?;
    let def = parse(&source, &text)?;
    Ok(Loaded { def, source, text })
}

/// A definition's source name and TOML text: the project's `<override_dir>/<name>.toml` when
/// there is one, else the built-in of that name. Not found: the error names the built-ins and
/// the file that would override them.
pub fn source_text(
    name: &str,
    builtins: &[(&str, &str)],
    override_dir: &Path,
) -> Result<(String, String)> {
    let file = override_dir.join(format!("{name}.toml"));
    if file.is_file() {
        let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
        return Ok((file.display().to_string(), text));
    }
    match builtins.iter().find(|(n, _)| *n == name) {
        Some((_, text)) => Ok((format!("built-in {name}.toml"), text.to_string())),
        None => {
            let names: Vec<String> = WorkflowKind::ALL
                .iter()
                .map(|k| k.name().to_string())
                .collect();
            Err(
                Error::not_found(format!("no workflow `{name}`")).hint(format!(
                    "built-in workflows: {}; or add {}",
                    names.join(", "),
                    file.display()
                )),
            )
        }
    }
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
/// Who runs `role`: `--agent` for every role, else baton.toml's `[run.roles.<role>]`, else
/// the workflow's `[roles.<role>]`, else the default agent.
pub fn assign(
    role: &str,
    agent: Option<&AgentId>,
    project: &BTreeMap<String, Role>,
    workflow: &BTreeMap<String, Role>,
    default_agent: &AgentId,
) -> Assignment {
    let w = workflow.get(role).cloned().unwrap_or_default();
    let p = project.get(role).cloned().unwrap_or_default();
    // A project role that names a tier or a model replaces the workflow's choice of both.
    let (tier, model) = if p.tier.is_some() || p.model.is_some() {
        (p.tier, p.model)
    } else {
        (w.tier, w.model)
    };
    Assignment {
        agent: agent
            .cloned()
            .or(p.agent)
            .or(w.agent)
            .unwrap_or_else(|| default_agent.clone()),
        tier,
        model,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
