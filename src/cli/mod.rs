//! Command-line front end: one file per command. Each parses its arguments, calls the library
//! and renders the result for people (short lines) or machines (`--json`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::error::{Error, Result};
use baton_core::error::Fault;
use baton_engine::config::Project;

mod agent_args;
mod budget;
mod complete;
mod completions;
mod config;
mod deferred;
mod demo;
mod discover;
mod doctor;
mod doctor_agents;
mod exec;
mod extract;
mod gain;
mod gate;
mod gc;
mod history;
mod hook;
mod init;
mod mask;
mod mcp;
mod metrics;
mod notify;
mod outline;
mod output;
mod pause;
mod phase;
mod plan;
mod progress;
mod publish;
mod query;
mod queue;
mod report;
mod resume;
mod retrieve;
mod run;
mod session;
mod state;
mod status;
mod stop;
mod store;
mod stories;
pub(crate) mod style;
mod summary;
mod task;
mod tokens;
mod walkthrough;
mod worker;
mod workflow;
pub use output::Out;

/// `baton --version`: the version and the commit it was built from (build.rs).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("BATON_COMMIT"), ")");

/// Declares [`Command`], one variant per subcommand, and beside it, in `one::<Variant>`, a
/// one-variant copy of each made by the same derive from the same attributes. A command line
/// that names its subcommand first is parsed against a tree of that subcommand alone
/// ([`parse`]): building the whole top level (45 commands, the global options copied into
/// each) was two thirds of a bookkeeping command's instructions.
macro_rules! commands {
    ($( $(#[$attr:meta])* $variant:ident($ty:ty), )*) => {
        #[derive(Debug, Subcommand)]
        // Each subcommand's arguments are built only when it runs (or its help is asked for).
        #[command(defer = true)]
        pub enum Command {
            $( $(#[$attr])* $variant($ty), )*
        }

        #[allow(non_snake_case)]
        mod one {
            $(
                pub(super) mod $variant {
                    use super::super::*;
                    #[derive(Debug, Subcommand)]
                    #[command(defer = true)]
                    pub(in super::super) enum One {
                        $(#[$attr])* $variant($ty),
                    }
                    impl From<One> for Command {
                        fn from(one: One) -> Command {
                            let One::$variant(a) = one;
                            Command::$variant(a)
                        }
                    }
                }
            )*
        }

        /// The tree of `name`'s subcommand alone, and how to read its matches as a [`Cli`].
        fn one_tree(name: &str) -> Option<(clap::Command, ReadOne)> {
            $(
                if <one::$variant::One as Subcommand>::has_subcommand(name) {
                    return Some((
                        <one::$variant::One as Subcommand>::augment_subcommands(top()),
                        |m| {
                            let c = <one::$variant::One as clap::FromArgMatches>::from_arg_matches_mut(m)?;
                            Ok(Cli { json: m.get_flag("json"), command: c.into() })
                        },
                    ));
                }
            )*
            None
        }
    };
}

/// No subcommand: `CliOf<NoCommand>` is the top level alone (its options and settings), built
/// once for every one-subcommand tree rather than once per subcommand's type.
#[derive(Debug, Subcommand)]
pub enum NoCommand {}

/// The top level without its subcommands.
#[inline(never)]
fn top() -> clap::Command {
    <CliOf<NoCommand> as clap::CommandFactory>::command()
}

/// Reads a one-subcommand tree's matches as the whole command line.
type ReadOne = fn(&mut clap::ArgMatches) -> std::result::Result<Cli, clap::Error>;

/// The command line as clap reads it, from the smallest tree that can read it: the named
/// subcommand's alone when it comes first (`baton phase begin …`), else the whole (`baton`,
/// `baton --help`, `baton help x`, a typo clap suggests a command for).
fn parse(args: Vec<std::ffi::OsString>) -> std::result::Result<Cli, clap::Error> {
    let one = args.get(1).and_then(|a| a.to_str()).and_then(one_tree);
    let (mut command, read): (clap::Command, ReadOne) = match one {
        Some(tree) => tree,
        None => (<Cli as clap::CommandFactory>::command(), |m| {
            <Cli as clap::FromArgMatches>::from_arg_matches_mut(m)
        }),
    };
    let mut matches = command.try_get_matches_from_mut(args)?;
    let cli = read(&mut matches).map_err(|e| e.format(&mut command))?;
    // The process ends when this command does: tearing down clap's tree would cost a tenth of
    // a bookkeeping command's own work.
    std::mem::forget(matches);
    std::mem::forget(command);
    Ok(cli)
}

#[derive(Debug, Parser)]
#[command(
    name = "baton",
    version = VERSION,
    about = "Context management for multi-agent LLM coding workflows",
    long_about = "baton runs each phase of an agent workflow in a fresh agent process (the \
orchestrator: `baton run`), keeps durable task state, masks large tool output, extracts only \
the spec sections a phase needs and budgets tokens: every bookkeeping operation costs zero \
tokens.",
    after_help = "Commands, in the order above: the orchestrator (run … workflow), the \
context manager's task store (task … walkthrough), context tools (mask … session), set-up \
(init … man).\n\n\
Examples:\n  baton demo                               a 4-story epic end to end, simulated agent\n  \
baton run epic-execute 1 --agent claude  one commit per story of epic 1\n  \
baton status                             runs, tasks, what waits for you\n  \
baton init claude                        hooks and MCP server for your own sessions\n  \
baton mask -- cargo test                 a summary and a file instead of 200 KB\n  \
baton phase begin architect --needs memory\n\n\
Exit codes: 0 ok · 1 a story, task or item failed, nothing found, violations · 2 bad input · \
3 not allowed in the current state · 4 not found · 5 damaged file · 6 file-system error · \
7 an agent CLI cannot work, or a rate limit outlasted the backoff (run paused) · 70 internal \
error · 130/143/129 stopped by Ctrl-C/SIGTERM/SIGHUP (resumable) · budget: 10 warn, 11 rotate \
· mask: the command's own (124 timed out). README's \"Exit codes\" says more."
)]
pub struct CliOf<C: Subcommand> {
    /// Print machine-readable JSON
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: C,
}

/// baton's command line: the global options and one of [`Command`].
pub type Cli = CliOf<Command>;

commands! {
    /// Create, list, summarize and select tasks (INIT, LIST, SUMMARY)
    #[command(display_order = 20)]
    Task(Group<task::TaskCmd>),
    /// Record phases: start, end, begin (RETRIEVE+START), complete (STORE+END)
    #[command(display_order = 21)]
    Phase(Group<phase::PhaseCmd>),
    /// Pause the task for a human (PAUSE)
    #[command(display_order = 23)]
    Pause(pause::Args),
    /// Stop the task at a gate for human approval (SET_GATE), or show the open gate
    #[command(display_order = 22)]
    Gate(Group<gate::GateCmd>),
    /// Answer a pause or a gate with a decision (RESUME)
    #[command(display_order = 24)]
    Resume(resume::Args),
    /// Store a phase's output as an artifact of the task (STORE)
    #[command(display_order = 25)]
    Store(store::Args),
    /// Print the condensed context a phase needs (RETRIEVE)
    #[command(display_order = 26)]
    Retrieve(retrieve::Args),
    /// Execution metrics of the task (METRICS)
    #[command(display_order = 27)]
    Metrics(metrics::Args),
    /// Search every task's artifacts and the history (QUERY)
    #[command(display_order = 28)]
    Query(query::Args),
    /// The global history log, newest last (HISTORY)
    #[command(display_order = 29)]
    History(history::Args),
    /// Check the store (and repair it) and whether each agent CLI really uses baton here
    #[command(display_order = 61)]
    Doctor(doctor::Args),
    /// The configuration in force and where each value came from; --reference: every key
    #[command(display_order = 62)]
    Config(config::Args),
    /// Remove old scratch files (masked outputs' full text) by age and total size
    #[command(display_order = 63)]
    Gc(gc::Args),
    /// Tokens masking saved: totals, by command, kind, agent and day, from the mask log
    #[command(display_order = 41)]
    Gain(gain::Args),
    /// Stop a run (resumable), and the agents a killed baton left running
    #[command(display_order = 4)]
    Stop(stop::Args),
    /// Run commands written in the context-manager command language
    #[command(display_order = 30)]
    Exec(exec::Args),
    /// Walk through a whole task in a scratch store, showing each command and its output
    #[command(display_order = 31)]
    Walkthrough(walkthrough::Args),
    /// Run a command and print its output, or a summary + scratch path when it is large
    #[command(display_order = 40)]
    Mask(mask::MaskArgs),
    /// Discovery: a dialogue with you in an agent CLI (a fresh session) that writes a task's specs
    #[command(display_order = 7)]
    Discover(discover::Args),
    /// Planning: a fresh headless agent turns the specs into the task breakdown (spec.md)
    #[command(display_order = 8)]
    Plan(plan::Args),
    /// Run a workflow: epic-execute, epic-chain, orchestrate, poc, graduate, verify
    #[command(display_order = 1)]
    Run(run::Args),
    /// Every run and task, and what each waits for (--watch: a live view)
    #[command(display_order = 2)]
    Status(status::Args),
    /// The HTML report of a run: timeline, budgets, usage, cost, links to prompts and logs
    #[command(display_order = 3)]
    Report(report::Args),
    /// A small epic run end to end with the simulated agent, in a temporary repository
    #[command(display_order = 5)]
    Demo(demo::Args),
    /// Workflow definitions: list them, print one to copy and change
    #[command(subcommand)]
    #[command(display_order = 12)]
    Workflow(workflow::WorkflowCmd),
    /// Count tokens exactly (o200k_base, cl100k_base; Claude estimated)
    #[command(display_order = 44)]
    Tokens(tokens::Args),
    /// Check a context against its window or phase budget: ok, warn or rotate
    #[command(display_order = 45)]
    Budget(budget::Args),
    /// Print only the spec section or ADR decision a task needs
    #[command(display_order = 42)]
    Extract(extract::Args),
    /// Outline source files: definitions with signatures, line ranges and token counts
    #[command(display_order = 43)]
    Outline(outline::Args),
    /// Validate or extract a sub-agent's summary block
    #[command(display_order = 46)]
    Summary(summary::Args),
    /// Create, list and clean session directories for shared context files
    #[command(display_order = 47)]
    Session(session::Args),
    /// List an epic's stories in a BMAD project: ids, statuses, files, sprint-status
    #[command(display_order = 6)]
    Stories(stories::Args),
    /// List the deferred-work ledger: findings left for later, who deferred and who closed them
    #[command(display_order = 7)]
    Deferred(deferred::Args),
    /// Queues of items for `baton run verify`: add, show, list
    #[command(subcommand)]
    #[command(display_order = 9)]
    Queue(queue::QueueCmd),
    /// A verify item's state: its phases, the context estimate, the command to continue
    #[command(subcommand)]
    #[command(display_order = 10)]
    State(state::StateCmd),
    /// Drain a PostgreSQL verify queue together with workers on other machines
    #[command(display_order = 11)]
    Worker(worker::Args),
    /// Print a shell completion script (bash, zsh, fish)
    #[command(display_order = 66)]
    Completions(completions::CompletionsArgs),
    /// Print baton's man page (roff), or write every command's page into a directory
    #[command(display_order = 67)]
    Man(completions::ManArgs),
    /// Serve baton's tools to an agent over MCP (stdio)
    #[command(display_order = 64)]
    Mcp(mcp::Args),
    /// Handle an agent CLI's hook event (JSON on stdin); written into settings by `baton init`
    #[command(display_order = 65)]
    Hook(hook::Args),
    /// Set up an agent CLI for this project (--global: every project): MCP server, hooks, commands
    #[command(display_order = 60)]
    Init(init::Args),
}

// The task store and the task a command works on: an option of the commands that use them
// (and of every subcommand of a group: `global` reaches down, never up). Plain comments on
// the structs flattened into commands: a doc comment would become each command's `about`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Scope {
    #[command(flatten)]
    pub store: StoreRoot,
    /// Operate on this task instead of the current one
    #[arg(long, global = true, value_name = "SLUG", add = complete::task_slugs())]
    pub task: Option<String>,
}

// The task store a command reads or writes.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StoreRoot {
    /// Store root (default: `paths.root` of baton.toml, i.e. docs/orchestrator)
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

impl From<StoreRoot> for Scope {
    fn from(store: StoreRoot) -> Scope {
        Scope { store, task: None }
    }
}

// A group of task-store commands, with the store and task they work on.
#[derive(Debug, clap::Args)]
pub struct Group<C: clap::Subcommand> {
    #[command(subcommand)]
    pub cmd: C,
    #[command(flatten)]
    pub scope: Scope,
}

impl Command {
    /// The store and task this command was given (none for a command that uses neither).
    fn scope(&self) -> Scope {
        match self {
            Command::Task(g) => g.scope.clone(),
            Command::Phase(g) => g.scope.clone(),
            Command::Gate(g) => g.scope.clone(),
            Command::Pause(a) => a.scope.clone(),
            Command::Resume(a) => a.scope.clone(),
            Command::Store(a) => a.scope.clone(),
            Command::Retrieve(a) => a.scope.clone(),
            Command::Metrics(a) => a.scope.clone(),
            Command::History(a) => a.scope.clone(),
            Command::Report(a) => a.scope.clone(),
            Command::Discover(a) => a.scope.clone(),
            Command::Plan(a) => a.scope.clone(),
            Command::Query(a) => a.store.clone().into(),
            Command::Doctor(a) => a.at.clone().into(),
            Command::Gc(a) => a.store.clone().into(),
            Command::Exec(a) => a.store.clone().into(),
            Command::Status(a) => a.store.clone().into(),
            Command::Run(a) => a.store.clone().into(),
            Command::Mcp(a) => a.store.clone().into(),
            Command::Hook(a) => a.store.clone().into(),
            _ => Scope::default(),
        }
    }
}

/// Everything a command needs from the environment.
pub struct Ctx {
    pub project: Project,
    pub root: Option<PathBuf>,
    pub task: Option<String>,
    pub out: Out,
}

pub fn main() -> ExitCode {
    // The library crates never print: their notices are written here, one per line.
    // A TAB in a shell: answer with candidates and exit (nothing else runs).
    if std::env::var_os(complete::VAR).is_some() {
        clap_complete::CompleteEnv::with_factory(<Cli as clap::CommandFactory>::command)
            .var(complete::VAR)
            .complete();
    }
    baton_core::notice::set_sink(|n| {
        let text = match n.kind {
            baton_core::notice::NoticeKind::Note => {
                format!(
                    "{} {}",
                    style::paint(style::To::Stderr, style::NOTE, "note:"),
                    n.text
                )
            }
            baton_core::notice::NoticeKind::Warning => {
                format!(
                    "{} {}",
                    style::paint(style::To::Stderr, style::WARNING, "warning:"),
                    n.text
                )
            }
            baton_core::notice::NoticeKind::Said => n.text.clone(),
        };
        eprintln!("{text}");
    });
    // Started by the engine as the simulated agent: act as the agent, not as the CLI.
    if std::env::var_os(baton_engine::cli_agents::SIM_ENV).is_some() {
        return match sim_main() {
            Ok(code) => code,
            Err(e) => {
                report(&e, false);
                ExitCode::from(e.exit_code())
            }
        };
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(a) = hook::quick_args(&args) {
        return hook::run(&a, a.store.root.as_deref());
    }
    let cli = parse(args).unwrap_or_else(|e| e.exit());
    let json = cli.json;
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            report(&e, json);
            ExitCode::from(e.exit_code())
        }
    }
}

fn sim_main() -> Result<ExitCode> {
    use std::io::Read;
    let scenario = baton_agent::sim::Scenario::load(None)?;
    let mut prompt = String::new();
    std::io::stdin()
        .read_to_string(&mut prompt)
        .map_err(|e| Error::io("<stdin>", e))?;
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    Ok(ExitCode::from(baton_agent::sim::run(
        &prompt,
        &cwd,
        &scenario,
        &mut std::io::stdout().lock(),
    )?))
}

/// `path` (absolute, or relative to the project's top `project`) as the user can use it from
/// where they stand: relative to the current folder when that is in or near the project, else
/// absolute. Run from the top, that is the project-relative path.
pub(crate) fn shown(project: &std::path::Path, path: &std::path::Path) -> String {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        project.join(path)
    };
    let rel = std::env::current_dir()
        .ok()
        .and_then(|cwd| pathdiff::diff_paths(&abs, cwd));
    match rel {
        Some(r)
            if !r.as_os_str().is_empty()
                && r.components()
                    .take_while(|c| *c == std::path::Component::ParentDir)
                    .count()
                    <= 2 =>
        {
            r.display().to_string()
        }
        _ => abs.display().to_string(),
    }
}

/// Write the demo's BMAD project into `dir` (used by `baton demo` and the tests).
pub fn demo_project(dir: &std::path::Path) -> Result<()> {
    demo::write_project(dir)
}

fn run(cli: Cli) -> Result<ExitCode> {
    // A hook fails open: nothing before it may fail (a broken baton.toml included).
    if let Command::Hook(a) = &cli.command {
        return Ok(hook::run(a, a.store.root.as_deref()));
    }
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    let project = Project::discover(&cwd)?;
    let scope = cli.command.scope();
    if let Some(root) = &scope.store.root {
        check_root(root, &cli.command)?;
    }
    let ctx = Ctx {
        project,
        root: scope.store.root,
        task: scope.task,
        out: Out { json: cli.json },
    };
    match cli.command {
        Command::Task(g) => task::run(&ctx, g.cmd),
        Command::Phase(g) => phase::run(&ctx, g.cmd),
        Command::Pause(a) => pause::run(&ctx, a),
        Command::Gate(g) => gate::run(&ctx, g.cmd),
        Command::Resume(a) => resume::run(&ctx, a),
        Command::Store(a) => store::run(&ctx, a),
        Command::Retrieve(a) => retrieve::run(&ctx, a),
        Command::Metrics(a) => metrics::run(&ctx, a),
        Command::Query(a) => query::run(&ctx, a),
        Command::History(a) => history::run(&ctx, a),
        Command::Doctor(a) => doctor::run(&ctx, a),
        Command::Config(a) => config::run(&ctx, a),
        Command::Gc(a) => gc::run(&ctx, a),
        Command::Gain(a) => gain::run(&ctx, a),
        Command::Stop(a) => stop::run(&ctx, a),
        Command::Exec(a) => exec::run(&ctx, a),
        Command::Walkthrough(a) => walkthrough::run(&ctx, a),
        Command::Mask(a) => mask::run(&ctx, a),
        Command::Workflow(c) => workflow::run(&ctx, c),
        Command::Discover(a) => discover::run(&ctx, a),
        Command::Plan(a) => plan::run(&ctx, a),
        Command::Run(a) => run::run(&ctx, a),
        Command::Status(a) => status::run(&ctx, a),
        Command::Report(a) => report::run(&ctx, a),
        Command::Demo(a) => demo::run(&ctx, a),
        Command::Tokens(a) => tokens::run(&ctx, a),
        Command::Budget(a) => budget::run(&ctx, a),
        Command::Extract(a) => extract::run(&ctx, a),
        Command::Outline(a) => outline::run(&ctx, a),
        Command::Summary(a) => summary::run(&ctx, a),
        Command::Session(a) => session::run(&ctx, a),
        Command::Stories(a) => stories::run(&ctx, a),
        Command::Deferred(a) => deferred::run(&ctx, a),
        Command::Queue(c) => queue::run(&ctx, c),
        Command::State(c) => state::run(&ctx, c),
        Command::Worker(a) => worker::run(&ctx, a),
        Command::Completions(a) => completions::completions(&ctx, a),
        Command::Man(a) => completions::man(&ctx, a),
        Command::Mcp(a) => mcp::run(&ctx, a),
        Command::Hook(a) => Ok(hook::run(&a, ctx.root.as_deref())),
        Command::Init(a) => init::run(&ctx, a),
    }
}

/// A `--root` that is not there is a typo, not an empty store: only creating the first task
/// may make it.
fn check_root(root: &std::path::Path, command: &Command) -> Result<()> {
    let creates = matches!(
        command,
        Command::Task(Group {
            cmd: task::TaskCmd::Init { .. },
            ..
        })
    );
    match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Error::invalid(format!(
            "--root {}: not a folder",
            root.display()
        ))
        .hint("--root names the store's folder (default: docs/orchestrator)")),
        Err(_) if creates => Ok(()),
        Err(_) => Err(Error::invalid(format!(
            "--root {}: no such folder",
            root.display()
        ))
        .hint("check the spelling (the default store is docs/orchestrator); a new store is made by `baton task init NAME --root DIR`")),
    }
}

impl Ctx {
    pub fn store(&self) -> baton_store::Store {
        baton_store::Store::new(self.project.store_root(self.root.as_deref()))
    }

    /// The task to work on: `--task` or the current one.
    pub fn slug(&self, store: &baton_store::Store) -> Result<String> {
        Ok(store.resolve(self.task.as_deref())?)
    }
}

/// Content for STORE / COMPLETE_PHASE: from `--file`, else from stdin. Must be UTF-8.
pub fn read_content(file: Option<&std::path::Path>) -> Result<String> {
    use std::io::{IsTerminal, Read};
    let (bytes, source) = match file {
        Some(f) if f.as_os_str() != "-" => {
            if f.is_dir() {
                return Err(Error::invalid(format!(
                    "{} is a directory, not a file",
                    f.display()
                )));
            }
            (
                std::fs::read(f).map_err(|e| Error::io(f, e))?,
                f.display().to_string(),
            )
        }
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                return Err(Error::invalid("no content: nothing was piped on stdin")
                    .hint("pipe the content in (`… | baton store spec`) or pass --file PATH"));
            }
            let mut buf = Vec::new();
            stdin
                .lock()
                .read_to_end(&mut buf)
                .map_err(|e| Error::io("<stdin>", e))?;
            (buf, "stdin".to_string())
        }
    };
    String::from_utf8(bytes).map_err(|e| {
        Error::invalid(format!(
            "content from {source} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
        .hint("store text (Markdown); convert the file to UTF-8 first")
    })
}

pub(crate) fn report(e: &dyn Fault, json: bool) {
    if json {
        let v = serde_json::json!({"error": {"kind": e.kind().name(), "message": e.to_string(), "hint": e.hint_text()}});
        let _ = writeln!(std::io::stderr().lock(), "{v}");
    } else {
        // A message may quote a file or an agent: its control characters are shown, not run.
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "{} {}",
            style::paint(style::To::Stderr, style::ERROR, "error:"),
            style::visible(&e.to_string())
        );
        if let Some(h) = e.hint_text() {
            let _ = writeln!(
                err,
                "  {} {}",
                style::paint(style::To::Stderr, style::NOTE, "hint:"),
                style::visible(&h)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    /// clap's own consistency checks over every subcommand, deferred ones included (a deferred
    /// subcommand gets the global options before its own: an argument id it shares with one
    /// would clash only when it runs).
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }

    /// A command line that names its subcommand first is read from that subcommand's tree
    /// alone (`parse`), as the whole tree reads it: the same help, values and errors.
    #[test]
    fn one_subcommands_tree_reads_as_the_whole() {
        use clap::{CommandFactory, Parser};
        let mut whole = super::Cli::command();
        whole.build();
        let names: Vec<String> = whole
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .filter(|n| n != "help")
            .collect();
        for name in &names {
            let (mut one, _) = super::one_tree(name).expect(name);
            one.build();
            let only: Vec<&str> = one.get_subcommands().map(|c| c.get_name()).collect();
            assert_eq!(only, [name.as_str(), "help"], "{name}");
            let help = |c: &mut clap::Command| {
                let sub = c.find_subcommand_mut(name).expect(name);
                (
                    sub.render_long_help().to_string(),
                    sub.render_usage().to_string(),
                )
            };
            assert_eq!(help(&mut one), help(&mut whole), "{name}");
        }
        for other in ["help", "--json", "-h", "phase-begin", ""] {
            assert!(super::one_tree(other).is_none(), "{other}");
        }
        let args = |line: &str| -> Vec<std::ffi::OsString> {
            std::iter::once("baton")
                .chain(line.split(' ').filter(|w| !w.is_empty()))
                .map(Into::into)
                .collect()
        };
        for line in [
            "phase begin implementation --task-id 3 --needs memory --root docs/x",
            "phase complete review --status success --file - --json --task t",
            "phase begin",
            "phase begn x",
            "phase begin --help",
            "phase",
            "task init demo --root r",
            "task --task t list --json",
            "exec --root r START_PHASE",
            "status --json",
            "mask -- cargo test --no-run",
            "tokens --model o200k_base --nope",
            "workflow",
            "workflow show epic-execute",
            "queue add q A B",
            "init claude --global --uninstall",
            "run --help",
            "hook claude post-tool-use --threshold x",
            "completions bash",
            "store spec --json",
        ] {
            let a = super::Cli::try_parse_from(args(line));
            let b = super::parse(args(line));
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{line}"),
                (Err(a), Err(b)) => {
                    assert_eq!(a.kind(), b.kind(), "{line}");
                    assert_eq!(a.render().to_string(), b.render().to_string(), "{line}");
                }
                (a, b) => panic!("{line}: {a:?} against {b:?}"),
            }
        }
    }

    /// A hook's command line read without clap (`hook::quick_args`) is what clap reads; what it
    /// does not take, clap gets.
    #[test]
    fn a_hooks_quick_arguments_are_clap_s() {
        use clap::Parser;
        let parse = |line: &str| -> Vec<std::ffi::OsString> {
            std::iter::once("baton")
                .chain(line.split(' '))
                .map(Into::into)
                .collect()
        };
        for line in [
            "hook claude post-tool-use",
            "hook codex pre-tool-use --scope user",
            "hook gemini post-tool-use --scope plugin --threshold 300",
            "hook claude session-start --root docs/x --scope project",
            "hook claude post-tool-use-failure --threshold 0",
            "hook gemini pre-compact --scope user",
            "hook codex pre-compact --scope plugin --root .",
        ] {
            let quick = super::hook::quick_args(&parse(line)).expect(line);
            let clap = match super::Cli::try_parse_from(parse(line)).expect(line).command {
                super::Command::Hook(a) => a,
                other => panic!("{line}: {other:?}"),
            };
            assert_eq!(format!("{quick:?}"), format!("{clap:?}"), "{line}");
        }
        for line in [
            "hook claude",
            "hook claude post-tool-use --help",
            "hook claude post-tool-use --scope",
            "hook claude post-tool-use --scope nobody",
            "hook claude post-tool-use --scope user --scope user",
            "hook claude post-tool-use --threshold -1",
            "hook claude post-tool-use --threshold=3",
            "hook claude post-tool-use --root --scope",
            "hook claude post-tool-use --json",
            "hook nobody post-tool-use",
            "hook claude nothing",
            "status claude post-tool-use",
        ] {
            assert!(super::hook::quick_args(&parse(line)).is_none(), "{line}");
        }
    }
}
