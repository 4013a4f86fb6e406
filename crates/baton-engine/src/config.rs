//! `baton.toml`: where the project is, where the store lives, and the tunables of every module.
//!
//! The project directory is the nearest ancestor of the working directory holding `baton.toml`,
//! else the nearest holding `.git`, else the working directory itself. Every path in the file is
//! relative to the project directory and must stay inside it.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use baton_core::error::{Error, Result};

pub const FILE_NAME: &str = "baton.toml";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub paths: Paths,
    /// Token budgets: window, zones, refresh triggers, per-phase budgets.
    #[serde(default)]
    pub budget: baton_context::budget::BudgetConfig,
    /// Spec extraction: the task-type routing table.
    #[serde(default)]
    pub extract: baton_context::extract::ExtractConfig,
    /// The run engine: default agent, protected branches.
    #[serde(default)]
    pub run: RunConfig,
    /// Verify queues: the orchestrating session's context model.
    #[serde(default)]
    pub verify: crate::workflow::verify::VerifyConfig,
    /// Where verify queues live: files under `.baton/queues/` (default) or PostgreSQL.
    #[serde(default)]
    pub queue: crate::workflow::verify::backend::QueueConfig,
    /// Observation masking: whether scratch files are redacted too.
    #[serde(default)]
    pub mask: baton_context::mask::MaskConfig,
    /// Each agent's program, flags, permissions and model map (`[agents.claude]`, …).
    #[serde(default)]
    pub agents: baton_agent::settings::AgentsConfig,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Agent of every role a workflow does not assign (claude, codex, gemini, sim).
    pub default_agent: baton_agent::settings::AgentId,
    /// Branches `baton run` refuses to commit on.
    pub protected_branches: Vec<String>,
    /// Pass the CLI's "skip permissions" flag to agents (they run unattended).
    pub skip_permissions: bool,
    /// Agent and model per role (`[run.roles.dev] agent = "codex"`, `model = "…"`), over the
    /// workflow's own `[roles]` (the usual routing: planning on the strongest model, review
    /// on a fast one).
    pub roles: std::collections::BTreeMap<String, crate::definition::Role>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            default_agent: baton_agent::AgentKind::Claude.into(),
            protected_branches: vec!["main".into(), "master".into()],
            skip_permissions: false,
            roles: Default::default(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Paths {
    /// Root of the task store (default `docs/orchestrator`).
    pub root: PathBuf,
    /// Machine-local state: runs, scratch files, sessions (gitignored).
    pub local: PathBuf,
}

impl Default for Paths {
    fn default() -> Self {
        Paths {
            root: "docs/orchestrator".into(),
            local: ".baton".into(),
        }
    }
}

/// A loaded project: its directory and its configuration.
#[derive(Debug, Clone)]
pub struct Project {
    pub dir: PathBuf,
    pub config: Config,
}

impl Project {
    /// Find the project from `start` upwards and load its `baton.toml` if there is one.
    pub fn discover(start: &Path) -> Result<Project> {
        let dir = find_project_dir(start);
        let file = dir.join(FILE_NAME);
        let config = if file.is_file() {
            load(&file)?
        } else {
            Config::default()
        };
        // The store and the local directory are the project's: not symlinks to elsewhere.
        for p in [&config.paths.root, &config.paths.local] {
            baton_core::fs::confined(&dir, &dir.join(p))?;
        }
        Ok(Project { dir, config })
    }

    /// The store root: `--root` if given (relative to the working directory), else from config.
    pub fn store_root(&self, override_root: Option<&Path>) -> PathBuf {
        match override_root {
            Some(p) => p.to_path_buf(),
            None => self.dir.join(&self.config.paths.root),
        }
    }

    pub fn local_dir(&self) -> PathBuf {
        self.dir.join(&self.config.paths.local)
    }
}

fn find_project_dir(start: &Path) -> PathBuf {
    for marker in [FILE_NAME, ".git"] {
        for dir in start.ancestors() {
            if dir.join(marker).exists() {
                return dir.to_path_buf();
            }
        }
    }
    start.to_path_buf()
}

pub fn load(file: &Path) -> Result<Config> {
    let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
    let config: Config = toml::from_str(&text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1);
        Error::corrupt(file, line, e.message().to_string()).hint(format!(
            "fix {} (baton.toml: see docs/ARCHITECTURE.md for its keys)",
            file.display()
        ))
    })?;
    for (key, p) in [
        ("paths.root", &config.paths.root),
        ("paths.local", &config.paths.local),
    ] {
        confined(p).map_err(|why| {
            Error::corrupt(file, None, format!("{key} = {:?}: {why}", p))
                .hint(format!("fix {key} in {}", file.display()))
        })?;
    }
    if config.queue.lease_secs == 0 {
        // As `baton worker --lease 0` is: a lease that expires at once hands every phase out twice.
        return Err(Error::corrupt(
            file,
            None,
            "[queue] lease_secs = 0: a lease must last at least a second",
        )
        .hint(format!(
            "set it to a few times a phase's heartbeat, e.g. 60, in {}",
            file.display()
        )));
    }
    // Every agent table, the default agent and the roles' agents are checked now, not when a
    // phase first calls them.
    let mut named = Vec::new();
    for k in config.agents.keys() {
        named.push(k.parse::<baton_agent::settings::AgentId>().map_err(|why| {
            Error::corrupt(file, None, format!("[agents.{k}]: {why}"))
                .hint(format!("rename the table in {}", file.display()))
        })?);
    }
    let used = std::iter::once(config.run.default_agent.clone())
        .chain(config.run.roles.values().filter_map(|r| r.agent.clone()));
    for id in named.into_iter().chain(used) {
        if id.is_sim() {
            continue;
        }
        baton_agent::settings::resolve(&config.agents, &id, None, None)
            .and_then(|r| r.check(&id))
            .map_err(|e| {
                let hint = e.hint_text().unwrap_or_default();
                Error::corrupt(file, None, e.to_string()).hint(hint)
            })?;
    }
    Ok(config)
}

/// A configured path must be relative and must not climb out of the project.
pub fn confined(p: &Path) -> std::result::Result<(), &'static str> {
    if p.as_os_str().is_empty() {
        return Err("must not be empty");
    }
    for c in p.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => return Err("must not contain `..`"),
            Component::RootDir | Component::Prefix(_) => {
                return Err("must be relative to the project directory");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confined_paths() {
        assert!(confined(Path::new("docs/orchestrator")).is_ok());
        assert!(confined(Path::new("../x")).is_err());
        assert!(confined(Path::new("/etc")).is_err());
        assert!(confined(Path::new("a/../../b")).is_err());
    }

    #[test]
    fn bad_toml_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join(FILE_NAME);
        std::fs::write(&f, "[paths]\nroot = \"x\"\nbogus = 1\n").unwrap();
        let err = load(&f).unwrap_err().to_string();
        assert!(err.contains("baton.toml line 3"), "{err}");
        std::fs::write(&f, "[paths]\nroot = \"../outside\"\n").unwrap();
        let err = load(&f).unwrap_err().to_string();
        assert!(err.contains("paths.root"), "{err}");
    }
}
