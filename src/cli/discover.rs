//! `baton discover [TASK | "idea"]`: the discovery dialogue in the person's terminal
//! (`baton_engine::workflow::task::discover`), then the phase recorded with its specs.

use std::process::ExitCode;
use std::time::Duration;

use super::Ctx;
use baton_agent::settings::AgentId;
use baton_agent::wiring::shell_quote;
use baton_core::error::{Error, Result};
use baton_engine::cli_agents::CliAgents;
use baton_engine::workflow::task::def as task_def;
use baton_engine::workflow::task::discover::{Ended, Session};
use baton_engine::workflow::task::plan;
use baton_store::model::{Mode, Status, Workflow};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
baton discover \"Let people sign in with GitHub\"   # creates the task, then the dialogue\n  \
baton discover add-login                          # a new session for an existing task\n  \
baton discover add-login --dry-run                # the prompt and command line only\n  \
baton discover add-login --agent codex --spec-dir docs/specs/login\n\n\
The agent CLI runs in this terminal, in a fresh session; quit it when the specs are written.\n\
baton warns (on stderr) when the dialogue passes the phase's budget, read from the CLI's own\n\
transcript (~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp). The specs are stored as the\n\
task's artifacts; the dialogue reaches no later prompt. Next: baton plan TASK.\n\
Exit code 1 when the session ended before every spec file was written (run it again).")]
pub struct Args {
    /// The task (slug or name), or an idea: a task is created from it when none has that
    /// name (default: the current task)
    #[arg(value_name = "TASK|IDEA")]
    pub target: Option<String>,
    /// The agent CLI: claude (default), codex, gemini, or a name of [agents.<name>]
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<AgentId>,
    /// Where the spec files go, relative to the project (`{task}`: the slug); default: the
    /// phase's spec_dir, docs/specs/{task}
    #[arg(long, value_name = "DIR")]
    pub spec_dir: Option<String>,
    /// The task workflow whose discovery phase to run (its spec files, budget, role)
    #[arg(long, value_name = "NAME", default_value = "plan")]
    pub workflow: String,
    /// Print the prompt and the command line; start nothing, change nothing
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub scope: super::Scope,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let store = ctx.store();
    let local = ctx.project.local_dir();
    let project_dir = baton_engine::git::Git::new(&ctx.project.dir)
        .toplevel()
        .unwrap_or_else(|_| ctx.project.dir.clone());
    let (wf, source, _) = task_def::load(&a.workflow, &local.join("workflows"))?;
    let phase = plan::discovery_phase(&wf, &source)?.clone();
    // The task, or the one an idea becomes (created only when the session really starts).
    let (slug, create) = match a.target.as_deref() {
        None => (store.resolve(ctx.task.as_deref())?, None),
        Some(t) => {
            let slug = baton_store::names::slugify(t).ok();
            match slug {
                Some(s) if store.exists(&s) => (store.resolve(Some(&s))?, None),
                // One word is a task's name, not an idea: a typo must not become a task.
                _ if !t.trim().contains(char::is_whitespace) => {
                    let close = store.did_you_mean(t);
                    return Err(Error::not_found(format!("no task `{t}`{close}")).hint(
                        "see the tasks with `baton task list`; an idea is a sentence: baton discover \"Let people sign in with GitHub\"",
                    ));
                }
                _ => {
                    // A sentence makes a long slug: its first words name the task.
                    let name: String = t.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
                    let slug = baton_store::names::slugify(&name)?;
                    if store.exists(&slug) {
                        // The idea would be dropped in favour of a task it merely starts like.
                        return Err(Error::state(format!(
                            "the idea would be task `{slug}`, which exists already"
                        ))
                        .hint(format!(
                            "continue that task: baton discover {slug}; or word the idea's first words differently"
                        )));
                    }
                    (slug, Some((name, t.to_string())))
                }
            }
        }
    };
    let specs = plan::spec_paths(&project_dir, &phase, &slug, a.spec_dir.as_deref())?;
    let cfg = &ctx.project.config;
    let who = baton_engine::definition::assign(
        &phase.role,
        a.agent.as_ref(),
        &cfg.run.roles,
        &wf.roles,
        &cfg.run.default_agent,
    );
    if who.agent.is_sim() {
        return Err(Error::invalid(format!(
            "discovery is a dialogue with a person: the simulated agent cannot hold it (agent `{}`)",
            who.agent
        ))
        .hint("pick an interactive agent CLI: --agent claude|codex|gemini or an [agents.<name>] of baton.toml"));
    }
    let agent = CliAgents::new(&project_dir, None)
        .configured(cfg)
        .spec(&who)?;
    let idea = create.as_ref().map(|(_, idea)| idea.as_str());
    let prompt = baton_engine::workflow::task::discover::prompt(
        &local.join("prompts"),
        &phase,
        &slug,
        idea,
        &specs,
    )?;
    let (program, args) = baton_agent::interactive::argv(&agent, &prompt, None)?;
    if a.dry_run {
        let mut shown: Vec<String> = vec![shell_quote(&program.display().to_string())];
        shown.extend(args[..args.len() - 1].iter().map(|s| shell_quote(s)));
        shown.push("<prompt>".into());
        let command = shown.join(" ");
        let files: Vec<&str> = specs.iter().map(|s| s.rel.as_str()).collect();
        let v = serde_json::json!({"task": slug, "creates_task": create.is_some(), "agent": who.agent.as_str(), "command": command, "spec_files": files, "budget": phase.budget, "prompt": prompt});
        ctx.out.emit(&v, |w| {
            writeln!(
                w,
                "discovery of task {slug}{} (dry run: nothing started)\n  command: {command}\n  spec files: {}\n  budget: {}\n--- prompt ---\n{prompt}",
                if create.is_some() { " (a new task)" } else { "" },
                files.join(", "),
                phase.budget.map_or("none".into(), |b| format!("{b} tokens")),
            )
        });
        return Ok(ExitCode::SUCCESS);
    }
    baton_agent::preflight::locate(&agent, &project_dir)?;
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(Error::invalid(
            "discovery is a dialogue with a person: it needs a terminal, and stdin or stdout is not one",
        )
        .hint(format!(
            "run `baton discover {slug}` in a terminal (`--dry-run` shows its prompt anywhere); the headless phase is `baton plan`"
        )));
    }
    match &create {
        Some((name, _)) => {
            store.init(name, Mode::Standard, Workflow::Orchestrate)?;
            eprintln!("created task {slug} (standard mode, orchestrate workflow)");
        }
        None => {
            let m = store.manifest(&slug)?;
            if m.status != Status::Running {
                return Err(Error::state(format!(
                    "task `{slug}` is {}: discovery records a phase only in a running task",
                    m.status
                ))
                .hint("start a new task: baton discover \"<idea>\""));
            }
        }
    }
    eprintln!(
        "discovery of task {slug}: {} in this terminal; quit it once {} written",
        who.agent,
        if specs.len() == 1 {
            "the spec is"
        } else {
            "the specs are"
        }
    );
    // A Ctrl-C meant for the agent must not end baton before it records the phase.
    baton_engine::interrupt::install_for_dialogue();
    let session = Session {
        project_dir: project_dir.clone(),
        store: &store,
        slug: slug.clone(),
        phase,
        specs,
        agent,
        prompt,
        poll: Duration::from_millis(500),
    };
    let warn = Box::new(|tokens: u64, budget: u64| {
        // The agent owns the terminal (raw mode, perhaps): a line of its own, \r included.
        eprint!(
            "\r\nbaton: the discovery dialogue is at {tokens} tokens, past its budget of {budget}: ask the agent to write the specs now\r\n"
        );
    });
    match session.run(warn)? {
        Ended::Recorded {
            stored,
            tokens,
            missing_sections,
        } => {
            let v = serde_json::json!({"task": slug, "result": "recorded", "tokens": tokens, "stored": stored, "missing_sections": missing_sections, "next": format!("baton plan {slug}")});
            ctx.out.emit(&v, |w| {
                writeln!(
                    w,
                    "discovery of task {slug} recorded: a dialogue of {tokens} tokens\n  specs stored: {}",
                    stored.join(", ")
                )?;
                for m in &missing_sections {
                    writeln!(w, "  note: no section {m}")?;
                }
                writeln!(w, "  next: baton plan {slug}")
            });
            Ok(ExitCode::SUCCESS)
        }
        Ended::Unfinished { missing, tokens } => {
            let v = serde_json::json!({"task": slug, "result": "unfinished", "tokens": tokens, "missing": missing, "next": format!("baton discover {slug}")});
            ctx.out.emit(&v, |w| {
                writeln!(
                    w,
                    "discovery of task {slug} not recorded: the session ended before {} {} written\n  again: baton discover {slug}",
                    missing.join(", "),
                    if missing.len() == 1 { "was" } else { "were" }
                )
            });
            Ok(ExitCode::from(1))
        }
    }
}
