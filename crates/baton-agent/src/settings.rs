//! What `baton.toml` says about each agent: `[agents.claude]`, `[agents.codex]`,
//! `[agents.gemini]`, and `[agents.<name>]` for an agent of your own (a `command`, or a second
//! configuration of a CLI). Roles name an agent ([`AgentId`]) and a model tier ([`Tier`]); the
//! agent's model map turns the tier into a model name that exists for that CLI, so Claude's
//! model names never reach codex or gemini.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{AgentKind, AgentSpec, PromptVia};
use crate::error::{Error, Result};

/// How strong a model a role needs. The usual routing: planning and analysis on the strongest
/// model, dev and review on the standard one, summaries on a fast one.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Strong,
    Standard,
    Fast,
}

impl Tier {
    pub const ALL: [Tier; 3] = [Tier::Strong, Tier::Standard, Tier::Fast];

    pub fn name(self) -> &'static str {
        match self {
            Tier::Strong => "strong",
            Tier::Standard => "standard",
            Tier::Fast => "fast",
        }
    }

    /// The tier a Claude model alias stands for: workflow copies made before tiers existed say
    /// `model = "opus"`, which must not reach codex or gemini.
    fn of_claude_alias(model: &str) -> Option<Tier> {
        match model {
            "opus" => Some(Tier::Strong),
            "sonnet" => Some(Tier::Standard),
            "haiku" => Some(Tier::Fast),
            _ => None,
        }
    }
}

/// The model each CLI gets for a tier when baton.toml maps none. Only claude's aliases are
/// stable across releases; codex and gemini get no `--model`, so their own configured default
/// (which always exists for the account) is used.
fn default_model(kind: AgentKind, tier: Tier) -> Option<&'static str> {
    match (kind, tier) {
        (AgentKind::Claude, Tier::Strong) => Some("opus"),
        (AgentKind::Claude, Tier::Standard) => Some("sonnet"),
        (AgentKind::Claude, Tier::Fast) => Some("haiku"),
        _ => None,
    }
}

/// An agent as roles, `--agent` and run journals name it: a built-in kind (`claude`, `codex`,
/// `gemini`, `sim`) or a key of `[agents.<name>]`.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(try_from = "String", into = "String")]
pub struct AgentId(String);

impl TryFrom<String> for AgentId {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<AgentId, String> {
        s.parse()
    }
}

impl From<AgentId> for String {
    fn from(a: AgentId) -> String {
        a.0
    }
}

impl AgentId {
    pub fn new(name: impl Into<String>) -> AgentId {
        AgentId(name.into())
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The built-in kind this name is, if it is one.
    pub fn builtin(&self) -> Option<AgentKind> {
        AgentKind::parse(&self.0)
    }
    pub fn is_sim(&self) -> bool {
        self.builtin() == Some(AgentKind::Sim)
    }
}

/// The default agent: claude.
impl Default for AgentId {
    fn default() -> AgentId {
        AgentKind::default().into()
    }
}

impl From<AgentKind> for AgentId {
    fn from(k: AgentKind) -> AgentId {
        AgentId(k.name().to_string())
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for AgentId {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<AgentId, String> {
        let ok = !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if ok {
            Ok(AgentId(s.to_string()))
        } else {
            Err(format!(
                "`{s}` is not an agent name (letters, digits, `-`, `_`): claude, codex, gemini, sim, or a name of [agents.<name>] in baton.toml"
            ))
        }
    }
}

/// One `[agents.<name>]` table. Every key is optional; a built-in CLI works without any.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    /// Which adapter runs it: for `[agents.<name>]` of your own (default `command`); the
    /// built-in names are their own kind.
    pub kind: Option<AgentKind>,
    /// The program (default: the kind's CLI on PATH; required for `command`). Relative paths
    /// are relative to the project directory.
    pub program: Option<PathBuf>,
    /// Extra arguments after baton's own flags (for `command`: all of its arguments).
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment added to the agent's.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// claude `--permission-mode` (default `acceptEdits`).
    pub permission_mode: Option<String>,
    /// gemini `--approval-mode` (default `auto_edit`).
    pub approval_mode: Option<String>,
    /// codex `--sandbox` (default `workspace-write`).
    pub sandbox: Option<String>,
    /// claude, gemini: tools allowed beside baton's defaults, e.g. `Bash(cargo test:*)` (claude),
    /// `run_shell_command(cargo test)` (gemini).
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    /// claude `--disallowedTools`.
    #[serde(default)]
    pub disallowed_tools: Vec<String>,
    /// claude `--max-turns`.
    pub max_turns: Option<u32>,
    /// The CLI's "skip permissions" flag (over `[run] skip_permissions`).
    pub skip_permissions: Option<bool>,
    /// How the prompt reaches the agent: `stdin` (default) or `argv`.
    pub prompt_via: Option<PromptVia>,
    /// Model per tier: `[agents.codex.models] strong = "gpt-5-codex"`.
    #[serde(default)]
    pub models: BTreeMap<Tier, String>,
}

/// All `[agents.*]` tables of baton.toml.
pub type AgentsConfig = BTreeMap<String, AgentSettings>;

/// An agent resolved for one role: the adapter, its settings and the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub kind: AgentKind,
    pub settings: AgentSettings,
    pub model: Option<String>,
}

/// Find `id` in `agents` and pick the model for a role that asks for `model` or `tier`.
///
/// An explicit model wins, except a Claude alias (`opus`, `sonnet`, `haiku`) given to another
/// CLI, which is read as its tier.
pub fn resolve(
    agents: &AgentsConfig,
    id: &AgentId,
    model: Option<&str>,
    tier: Option<Tier>,
) -> Result<Resolved> {
    let settings = agents.get(id.as_str()).cloned().unwrap_or_default();
    let kind = match (id.builtin(), settings.kind) {
        (Some(AgentKind::Sim), _) => AgentKind::Sim,
        (Some(k), None) => k,
        (Some(k), Some(other)) if k == other => k,
        (Some(k), Some(other)) => {
            return Err(config_error(
                id,
                format!(
                    "`kind = \"{}\"` under the built-in {}",
                    other.name(),
                    k.name()
                ),
                "remove `kind`, or give this configuration a name of its own: [agents.<name>]",
            ));
        }
        (None, _) if !agents.contains_key(id.as_str()) => {
            let mut known: Vec<&str> = vec!["claude", "codex", "gemini", "sim"];
            known.extend(
                agents
                    .keys()
                    .map(String::as_str)
                    .filter(|k| AgentKind::parse(k).is_none()),
            );
            return Err(
                Error::invalid(format!("unknown agent `{id}`")).hint(format!(
                    "agents: {}; define your own under [agents.{id}] in baton.toml",
                    known.join(", ")
                )),
            );
        }
        (None, Some(AgentKind::Sim)) => {
            return Err(config_error(
                id,
                "`kind = \"sim\"`".into(),
                "use `--agent sim` (the simulated agent has no settings)",
            ));
        }
        (None, k) => k.unwrap_or(AgentKind::Command),
    };
    if kind == AgentKind::Command && settings.program.is_none() {
        return Err(config_error(
            id,
            "a `command` agent without `program`".into(),
            "set program = \"path/to/agent\" (it gets the prompt on stdin)",
        ));
    }
    let tier = match model {
        Some(m) if kind != AgentKind::Claude => Tier::of_claude_alias(m).or(tier),
        _ => tier,
    };
    let model = match model {
        Some(m) if kind == AgentKind::Claude || Tier::of_claude_alias(m).is_none() => {
            Some(m.to_string())
        }
        _ => tier.and_then(|t| {
            settings
                .models
                .get(&t)
                .cloned()
                .or_else(|| default_model(kind, t).map(str::to_string))
        }),
    };
    Ok(Resolved {
        kind,
        settings,
        model,
    })
}

impl Resolved {
    /// The adapter's configuration: the settings on top of the kind's defaults.
    /// `skip_permissions` is `[run] skip_permissions`, which the agent's own key overrides.
    pub fn spec(&self, project_dir: &std::path::Path, skip_permissions: bool) -> AgentSpec {
        let s = &self.settings;
        let mut spec = AgentSpec::new(self.kind);
        spec.program = s.program.as_ref().map(|p| {
            // A bare name is looked up on PATH; a path is the project's.
            if p.components().count() > 1 {
                project_dir.join(p)
            } else {
                p.clone()
            }
        });
        spec.model = self.model.clone();
        spec.args = s.args.clone();
        spec.env = s.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        spec.permission_mode = s.permission_mode.clone().or(s.approval_mode.clone());
        spec.sandbox = s.sandbox.clone();
        if !s.allowed_tools.is_empty() {
            let mut tools = super::default_allowed_tools(self.kind);
            tools.extend(s.allowed_tools.iter().cloned());
            spec.allowed_tools = Some(tools);
        }
        spec.disallowed_tools = s.disallowed_tools.clone();
        spec.max_turns = s.max_turns;
        spec.skip_permissions = s.skip_permissions.unwrap_or(skip_permissions);
        if let Some(p) = s.prompt_via {
            spec.prompt_via = p;
        }
        spec
    }

    /// Refuse keys the adapter has no flag for, before a run starts: `approval_mode` is
    /// gemini's, `permission_mode` claude's, `sandbox` codex's.
    pub fn check(&self, id: &AgentId) -> Result<()> {
        let s = &self.settings;
        let claude_only = [
            (s.permission_mode.is_some(), "permission_mode"),
            (!s.disallowed_tools.is_empty(), "disallowed_tools"),
            (s.max_turns.is_some(), "max_turns"),
        ];
        let wrong = match self.kind {
            AgentKind::Claude => [
                (s.approval_mode.is_some(), "approval_mode"),
                (s.sandbox.is_some(), "sandbox"),
            ]
            .into_iter()
            .find(|(set, _)| *set),
            AgentKind::Codex => claude_only
                .into_iter()
                .chain([
                    (s.approval_mode.is_some(), "approval_mode"),
                    (!s.allowed_tools.is_empty(), "allowed_tools"),
                ])
                .find(|(set, _)| *set),
            AgentKind::Gemini => claude_only
                .into_iter()
                .chain([(s.sandbox.is_some(), "sandbox")])
                .find(|(set, _)| *set),
            AgentKind::Command => claude_only
                .into_iter()
                .chain([
                    (s.approval_mode.is_some(), "approval_mode"),
                    (s.sandbox.is_some(), "sandbox"),
                    (s.skip_permissions.is_some(), "skip_permissions"),
                ])
                .find(|(set, _)| *set),
            AgentKind::Sim => None,
        };
        match wrong {
            Some((_, key)) => Err(config_error(
                id,
                format!(
                    "`{key}`, which the {} agent has no flag for",
                    self.kind.name()
                ),
                "remove it, or pass the CLI's own flag in `args`",
            )),
            None => Ok(()),
        }
    }
}

fn config_error(id: &AgentId, what: String, next: &str) -> Error {
    Error::invalid(format!("baton.toml: [agents.{id}] has {what}")).hint(next.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::error::Fault;

    fn parse(text: &str) -> AgentsConfig {
        #[derive(Deserialize)]
        struct F {
            agents: AgentsConfig,
        }
        toml::from_str::<F>(text).unwrap().agents
    }

    fn model(agents: &AgentsConfig, id: &str, m: Option<&str>, t: Option<Tier>) -> Option<String> {
        resolve(agents, &AgentId::new(id), m, t).unwrap().model
    }

    #[test]
    fn tiers_become_each_clis_own_model_names() {
        let none = AgentsConfig::new();
        assert_eq!(
            model(&none, "claude", None, Some(Tier::Strong)).as_deref(),
            Some("opus")
        );
        assert_eq!(
            model(&none, "claude", None, Some(Tier::Fast)).as_deref(),
            Some("haiku")
        );
        // No default for codex and gemini: their own configured model.
        assert_eq!(model(&none, "codex", None, Some(Tier::Strong)), None);
        assert_eq!(model(&none, "gemini", None, Some(Tier::Standard)), None);
        let mapped = parse("[agents.codex.models]\nstrong = \"gpt-5-codex\"\n");
        assert_eq!(
            model(&mapped, "codex", None, Some(Tier::Strong)).as_deref(),
            Some("gpt-5-codex")
        );
        assert_eq!(model(&mapped, "codex", None, Some(Tier::Fast)), None);
    }

    #[test]
    fn a_claude_alias_given_to_another_cli_is_read_as_its_tier() {
        let mapped = parse("[agents.gemini.models]\nstrong = \"gemini-2.5-pro\"\n");
        assert_eq!(
            model(&mapped, "gemini", Some("opus"), None).as_deref(),
            Some("gemini-2.5-pro")
        );
        assert_eq!(model(&mapped, "codex", Some("sonnet"), None), None);
        // Any other explicit model is the user's choice and passes as it is.
        assert_eq!(
            model(&mapped, "codex", Some("o3"), Some(Tier::Fast)).as_deref(),
            Some("o3")
        );
        assert_eq!(
            model(&mapped, "claude", Some("opus"), Some(Tier::Fast)).as_deref(),
            Some("opus")
        );
    }

    #[test]
    fn named_agents_are_commands_unless_they_say_otherwise() {
        let a = parse(
            "[agents.scripted]\nprogram = \"scripts/agent.sh\"\nargs = [\"--fast\"]\n\
             [agents.codex-high]\nkind = \"codex\"\nsandbox = \"danger-full-access\"\n",
        );
        let r = resolve(&a, &AgentId::new("scripted"), None, Some(Tier::Strong)).unwrap();
        assert_eq!((r.kind, r.model.as_deref()), (AgentKind::Command, None));
        let spec = r.spec(std::path::Path::new("/p"), false);
        assert_eq!(
            spec.program.as_deref(),
            Some(std::path::Path::new("/p/scripts/agent.sh"))
        );
        assert_eq!(spec.args, ["--fast"]);
        let r = resolve(&a, &AgentId::new("codex-high"), None, None).unwrap();
        assert_eq!(r.kind, AgentKind::Codex);
        assert_eq!(
            r.spec(std::path::Path::new("/p"), false).sandbox.as_deref(),
            Some("danger-full-access")
        );
    }

    #[test]
    fn bad_agent_settings_are_refused_with_the_key_and_what_to_do() {
        let err = |text: &str, id: &str| {
            let a = parse(text);
            let e = match resolve(&a, &AgentId::new(id), None, None) {
                Err(e) => e,
                Ok(r) => r.check(&AgentId::new(id)).unwrap_err(),
            };
            format!("{e} ({})", e.hint_text().unwrap_or_default())
        };
        assert!(
            err("[agents.x]\nargs = []\n", "x")
                .contains("[agents.x] has a `command` agent without `program`")
        );
        assert!(
            err("[agents.codex]\npermission_mode = \"plan\"\n", "codex")
                .contains("`permission_mode`, which the codex agent has no flag for")
        );
        assert!(err("[agents.claude]\nsandbox = \"x\"\n", "claude").contains("`sandbox`"));
        assert!(
            err("[agents.claude]\nkind = \"codex\"\n", "claude")
                .contains("`kind = \"codex\"` under the built-in claude")
        );
        let e = err("[agents.mine]\nprogram = \"a\"\n", "nope");
        assert!(
            e.contains("unknown agent `nope`") && e.contains("mine"),
            "{e}"
        );
        assert!("bad name".parse::<AgentId>().is_err());
    }

    #[test]
    fn allowed_tools_add_to_baton_s_defaults() {
        let a = parse(
            "[agents.claude]\nallowed_tools = [\"Bash(cargo test:*)\"]\ndisallowed_tools = [\"WebFetch\"]\nmax_turns = 40\n",
        );
        let r = resolve(&a, &AgentId::new("claude"), None, None).unwrap();
        r.check(&AgentId::new("claude")).unwrap();
        let spec = r.spec(std::path::Path::new("/p"), false);
        let tools = spec.allowed_tools.unwrap();
        assert!(
            tools.contains(&"Bash(git diff:*)".to_string())
                && tools.last().unwrap() == "Bash(cargo test:*)"
        );
        assert_eq!(spec.disallowed_tools, ["WebFetch"]);
        assert_eq!(spec.max_turns, Some(40));
    }
}
