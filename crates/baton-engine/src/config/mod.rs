//! `baton.toml`: where the project is, where the store lives, and the tunables of every module.
//!
//! The project directory is the nearest ancestor of the working directory holding `baton.toml`
//! inside the git repository (a `baton.toml` above the repository's top is ignored, with a
//! warning: it must not move the store out of the repository), else the repository's top, else
//! (outside git) the nearest ancestor holding `baton.toml`, else the working directory.
//! Every path in the file is relative to the project directory and must stay inside it.
//!
//! Under the project's file lies the user's (`$XDG_CONFIG_HOME/baton/config.toml`, else
//! `~/.config/baton/config.toml`): tables merge key by key, the project's value wins.
//! [`reference`] documents every key from these types; `baton config` shows the effective
//! values and which file each came from.

pub mod reference;

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use baton_core::error::Fault;

pub const FILE_NAME: &str = "baton.toml";

#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
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
    /// The project's own test, lint and type-check commands, run before every story commit.
    #[serde(default)]
    pub checks: crate::checks::ChecksConfig,
    /// Being told when a run fails a story, pauses or ends.
    #[serde(default)]
    pub notify: NotifyConfig,
    /// Publishing an epic run's result when it ends (opt-in).
    #[serde(default)]
    pub publish: PublishConfig,
    /// Each agent's program, flags, permissions and model map (`[agents.claude]`, …).
    #[serde(default)]
    pub agents: baton_agent::settings::AgentsConfig,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Agent of every role a workflow does not assign (claude, codex, gemini, sim).
    pub default_agent: baton_agent::settings::AgentId,
    /// Branches a run never commits on: refused with `--in-place`; a run in its own
    /// worktree keeps its commits on its own branch instead of landing them there.
    pub protected_branches: Vec<String>,
    /// Pass the CLI's "skip permissions" flag to agents (they run unattended).
    pub skip_permissions: bool,
    /// Runs wait until a spent usage limit resets (plus a minute) and go on by themselves,
    /// instead of pausing (`--wait-for-quota`).
    pub wait_for_quota: bool,
    /// Seconds an agent may wait on its model API with nothing heard (claude, codex), or
    /// keep retrying its server errors (claude, gemini), before baton stops it and the run
    /// pauses naming the cause. codex's own retries of server errors, and baton's backoff
    /// after them, end within it too. 0: never stopped for it.
    pub api_patience_secs: u64,
    /// Who develops each story of an epic run: `baton` (its own kickoff, dev and review
    /// phases) or `bmad-build-auto` (the BMAD 6 skill installed in the project, once per
    /// story of a spec folder; `--dev`). A workflow definition's own `dev` wins.
    pub dev: Option<crate::workflow::epic::Dev>,
    /// Epic runs pause after every `story` or every `epic` (`--pause-after`); `baton run
    /// --resume` goes on.
    pub pause_after: Option<crate::workflow::epic::PauseAfter>,
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
            wait_for_quota: false,
            api_patience_secs: baton_agent::DEFAULT_API_PATIENCE.as_secs(),
            dev: None,
            pause_after: None,
            roles: Default::default(),
        }
    }
}

/// `[notify]`: who hears of a run's events (a story failed, the run paused, the run ended).
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NotifyConfig {
    /// A shell command run for each event, with the event as one JSON object on stdin
    /// (`event`, `text`, `run_id`, and the event's own fields; secrets redacted). Its failure
    /// or silence never fails or holds up a run: it is stopped after `timeout_secs`.
    pub command: Option<String>,
    /// A URL each event is POSTed to as the same JSON (with `text`, `content` and `message`
    /// holding the one line that Slack, Discord and ntfy show), through `curl`. Its failure is
    /// said on stderr and never changes the run.
    pub webhook: Option<String>,
    /// A desktop notification for each event (`notify-send`, or `osascript` on macOS), where
    /// one of them is installed.
    pub desktop: bool,
    /// Seconds the command, the webhook or the desktop notifier may take (default 10).
    pub timeout_secs: Option<u64>,
}

/// `[publish]`: an epic run's branch pushed, and a pull request opened, when the run ends.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PublishConfig {
    /// Push the branch that holds the run's commits (yours when the run landed there, else
    /// the run's own) to the remote; never a protected branch, never forced.
    pub push: bool,
    /// Also open a pull request for it with `gh`, when installed (implies `push`).
    pub pr: bool,
    /// The remote to push to (default `origin`).
    pub remote: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
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

/// A loaded project: its directory, its configuration, and the files that said it.
#[derive(Debug, Clone)]
pub struct Project {
    pub dir: PathBuf,
    pub config: Config,
    /// The configuration files read, lowest first (the user's, then the project's).
    pub layers: Vec<Layer>,
}

/// Where a configuration file sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    User,
    Project,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::User => "user",
            Level::Project => "project",
        }
    }
}

/// One configuration file, read and checked on its own.
#[derive(Debug, Clone)]
pub struct Layer {
    pub level: Level,
    pub path: PathBuf,
    pub table: toml::Table,
}

impl Project {
    /// Find the project from `start` upwards and load its configuration: the user's file under
    /// the project's `baton.toml`, either or both absent.
    pub fn discover(start: &Path) -> Result<Project> {
        let found = find_project_dir(start);
        if let Some(outside) = &found.ignored {
            baton_core::notice::warning(format!(
                "ignoring {}: it is outside this repository ({}); put the project's baton.toml at the repository's top, or settings of your own in {}",
                outside.display(),
                found.dir.display(),
                user_file().map_or("~/.config/baton/config.toml".into(), |f| f
                    .display()
                    .to_string())
            ));
        }
        let dir = found.dir;
        let mut layers = Vec::new();
        if let Some(f) = user_file().filter(|f| f.is_file()) {
            layers.push(Layer::read(Level::User, &f)?);
        }
        let file = dir.join(FILE_NAME);
        if file.is_file() {
            layers.push(Layer::read(Level::Project, &file)?);
        }
        let config = merge(&layers)?;
        // The store and the local directory are the project's: not symlinks to elsewhere.
        for p in [&config.paths.root, &config.paths.local] {
            baton_core::fs::confined(&dir, &dir.join(p))?;
        }
        Ok(Project {
            dir,
            config,
            layers,
        })
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

/// The user's own configuration file: `$XDG_CONFIG_HOME/baton/config.toml`, else
/// `~/.config/baton/config.toml`.
pub fn user_file() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base =
        xdg.or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("baton").join("config.toml"))
}

/// The project directory, and a `baton.toml` above the repository that was passed over.
struct Found {
    dir: PathBuf,
    ignored: Option<PathBuf>,
}

/// Whether `dir` is a repository's top as git finds one: a `.git` file (a worktree's link) or
/// a `.git` folder holding `HEAD`. An empty `.git` folder is none (a sandbox's mount target
/// left in /tmp made every project below it look like the top's).
fn is_repo_top(dir: &Path) -> bool {
    let dot_git = dir.join(".git");
    dot_git.is_file() || dot_git.join("HEAD").is_file()
}

fn find_project_dir(start: &Path) -> Found {
    let repo = start.ancestors().find(|d| is_repo_top(d));
    let config = start.ancestors().find(|d| d.join(FILE_NAME).is_file());
    match (config, repo) {
        (Some(c), Some(r)) if !c.starts_with(r) => Found {
            dir: r.to_path_buf(),
            ignored: Some(c.join(FILE_NAME)),
        },
        (Some(dir), _) | (None, Some(dir)) => Found {
            dir: dir.to_path_buf(),
            ignored: None,
        },
        (None, None) => Found {
            dir: start.to_path_buf(),
            ignored: None,
        },
    }
}

/// One file as the whole configuration (what `baton workflow` and tests check a file with).
pub fn load(file: &Path) -> Result<Config> {
    merge(&[Layer::read(Level::Project, file)?])
}

/// `text` as the whole configuration, read from `file` (named in errors only).
pub fn parse(file: &Path, text: &str) -> Result<Config> {
    merge(&[Layer::parse(Level::Project, file, text)?])
}

/// What to say after an error in a configuration file.
fn fix_hint(file: &Path) -> String {
    format!(
        "fix {} (every key: `baton config --reference`, or docs/CONFIG.md)",
        file.display()
    )
}

impl Layer {
    /// Read and check one file alone: its syntax, its keys and their values, its `[agents]`
    /// tables. Errors name the file and the line.
    pub fn read(level: Level, file: &Path) -> Result<Layer> {
        let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
        Layer::parse(level, file, &text)
    }

    /// [`Layer::read`] of text already read from `file`.
    pub fn parse(level: Level, file: &Path, text: &str) -> Result<Layer> {
        let bad = |e: toml::de::Error| {
            let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1);
            Error::corrupt(file, line, e.message().to_string()).hint(fix_hint(file))
        };
        let table: toml::Table = toml::from_str(text).map_err(bad)?;
        let config: Config = toml::from_str(text).map_err(bad)?;
        check_values(&config, file)?;
        Ok(Layer {
            level,
            path: file.to_path_buf(),
            table,
        })
    }
}

/// The layers merged, the last one's values winning, and checked as a whole.
fn merge(layers: &[Layer]) -> Result<Config> {
    let mut merged = toml::Table::new();
    for l in layers {
        merge_into(&mut merged, &l.table);
    }
    // No file: the defaults, without the deserializer (a hook in a project without baton.toml
    // runs this on every tool call). The same value either way (tested).
    let config: Config = if layers.is_empty() {
        Config::default()
    } else {
        toml::Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| {
                let file = layers.last().map(|l| l.path.clone()).unwrap_or_default();
                Error::corrupt(&file, None, e.message().to_string()).hint(fix_hint(&file))
            })?
    };
    // Roles and the default agent may name an agent another file defines: checked together,
    // blamed on the file that set [run].
    let blame = layers
        .iter()
        .rev()
        .find(|l| l.table.contains_key("run"))
        .or(layers.last())
        .map(|l| l.path.clone())
        .unwrap_or_else(|| PathBuf::from(FILE_NAME));
    let used = std::iter::once(config.run.default_agent.clone())
        .chain(config.run.roles.values().filter_map(|r| r.agent.clone()));
    for id in used {
        check_agent(&config, &id, &blame)?;
    }
    Ok(config)
}

/// `over`'s keys into `base`: tables key by key, anything else replaced.
fn merge_into(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge_into(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The checks one file's values must pass on their own.
fn check_values(config: &Config, file: &Path) -> Result<()> {
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
    // Every agent table is checked now, not when a phase first calls it.
    for k in config.agents.keys() {
        let id = k.parse::<baton_agent::settings::AgentId>().map_err(|why| {
            Error::corrupt(file, None, format!("[agents.{k}]: {why}"))
                .hint(format!("rename the table in {}", file.display()))
        })?;
        check_agent(config, &id, file)?;
    }
    Ok(())
}

/// Agent `id` resolves and its settings suit its CLI; an error blames `file`.
fn check_agent(config: &Config, id: &baton_agent::settings::AgentId, file: &Path) -> Result<()> {
    if id.is_sim() {
        return Ok(());
    }
    baton_agent::settings::resolve(&config.agents, id, None, None)
        .and_then(|r| r.check(id))
        .map(drop)
        .map_err(|e| {
            let hint = e.hint_text().unwrap_or_default();
            Error::corrupt(file, None, e.to_string()).hint(hint)
        })
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

    /// An empty `.git` folder above a project is not its repository's top (git itself would
    /// not take it); a `.git` folder with `HEAD`, or a `.git` file, is.
    #[test]
    fn an_empty_dot_git_above_is_no_repository() {
        let t = tempfile::tempdir().unwrap();
        let project = t.path().join("p");
        std::fs::create_dir_all(project.join("docs")).unwrap();
        std::fs::create_dir(t.path().join(".git")).unwrap();
        assert_eq!(
            find_project_dir(&project.join("docs")).dir,
            project.join("docs")
        );
        std::fs::write(t.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        assert_eq!(find_project_dir(&project.join("docs")).dir, t.path());
        std::fs::write(project.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(find_project_dir(&project.join("docs")).dir, project);
    }

    /// A project without any configuration file gets `Config::default()` without the
    /// deserializer: exactly what an empty file gives (whose checks `merge` runs on both).
    #[test]
    fn no_file_is_an_empty_files_defaults() {
        let empty: Config = toml::Value::Table(toml::Table::new()).try_into().unwrap();
        assert_eq!(format!("{:?}", merge(&[]).unwrap()), format!("{empty:?}"));
    }

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
