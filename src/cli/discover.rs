//! `baton discover [TASK | "idea"]`: the discovery dialogue in the person's terminal
//! (`baton_engine::workflow::task::discover`), then the phase recorded with its specs.

use std::process::ExitCode;
use std::time::Duration;

use super::Ctx;
use crate::error::{Error, Result};
use baton_agent::settings::AgentId;
use baton_agent::wiring::shell_quote;
use baton_engine::workflow::task::discover::{Ask, Ended, Prepared};

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
    let ask = Ask {
        target: a.target.as_deref(),
        task: ctx.task.as_deref(),
        workflow: &a.workflow,
        agent: a.agent.as_ref(),
        spec_dir: a.spec_dir.as_deref(),
    };
    let prepared = Prepared::prepare(&ctx.project, &store, &ask)?;
    let slug = prepared.slug.clone();
    if a.dry_run {
        let args = &prepared.args;
        let mut shown: Vec<String> = vec![shell_quote(&prepared.program.display().to_string())];
        shown.extend(args[..args.len() - 1].iter().map(|s| shell_quote(s)));
        shown.push("<prompt>".into());
        let command = shown.join(" ");
        let files: Vec<&str> = prepared.specs.iter().map(|s| s.rel.as_str()).collect();
        let (creates, budget, prompt) = (
            prepared.create.is_some(),
            prepared.phase.budget,
            &prepared.prompt,
        );
        let v = serde_json::json!({"task": slug, "creates_task": creates, "agent": prepared.agent_name, "command": command, "spec_files": files, "budget": budget, "prompt": prompt});
        ctx.out.emit(&v, |w| {
            writeln!(
                w,
                "discovery of task {slug}{} (dry run: nothing started)\n  command: {command}\n  spec files: {}\n  budget: {}\n--- prompt ---\n{prompt}",
                if creates { " (a new task)" } else { "" },
                files.join(", "),
                budget.map_or("none".into(), |b| format!("{b} tokens")),
            )
        });
        return Ok(ExitCode::SUCCESS);
    }
    prepared.locate()?;
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(Error::invalid(
            "discovery is a dialogue with a person: it needs a terminal, and stdin or stdout is not one",
        )
        .hint(format!(
            "run `baton discover {slug}` in a terminal (`--dry-run` shows its prompt anywhere); the headless phase is `baton plan`"
        )));
    }
    let (created, who, specs) = (
        prepared.create.is_some(),
        prepared.agent_name.clone(),
        prepared.specs.len(),
    );
    let session = prepared.open(&store, Duration::from_millis(500))?;
    if created {
        eprintln!("created task {slug} (standard mode, orchestrate workflow)");
    }
    eprintln!(
        "discovery of task {slug}: {who} in this terminal; quit it once {} written",
        if specs == 1 {
            "the spec is"
        } else {
            "the specs are"
        }
    );
    // A Ctrl-C meant for the agent must not end baton before it records the phase.
    baton_engine::interrupt::install_for_dialogue();
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
