//! `baton task init|list|summary|use` (INIT, LIST, SUMMARY).

use std::process::ExitCode;

use clap::Subcommand;

use super::Ctx;
use crate::error::Result;
use baton_store::model::{Mode, Workflow};
use baton_store::view;

#[derive(Debug, Subcommand)]
#[command(defer = true)] // arguments built only for the subcommand that runs
pub enum TaskCmd {
    /// Create a task, make it the current one and log it to history (INIT)
    #[command(after_help = "Examples:\n  baton task init \"Add login flow\"\n  \
baton task init cache-layer --mode poc --workflow poc\n\nThe slug is the name in lowercase, \
hyphenated (`Add login flow` → `add-login-flow`).")]
    Init {
        /// Task name; its slug names the task's directory
        name: String,
        #[arg(long, default_value = "standard", value_parser = ["standard", "poc"])]
        mode: String,
        #[arg(long, default_value = "orchestrate", value_parser = ["orchestrate", "poc", "graduate"])]
        workflow: String,
    },
    /// Every task with mode, workflow, status and timestamps (LIST)
    #[command(after_help = "Examples:\n  baton task list\n  baton task list --json")]
    List,
    /// The current task's state and what to do next (SUMMARY)
    #[command(
        after_help = "Examples:\n  baton task summary\n  baton task summary --task add-login --json"
    )]
    Summary,
    /// Make another task the current one
    #[command(after_help = "Examples:\n  baton task use add-login")]
    Use {
        /// Slug of the task
        slug: String,
    },
    /// Print the task's manifest.json (rebuilt from events if stale)
    #[command(after_help = "Examples:\n  baton task show\n  baton task show --task add-login")]
    Show,
}

pub fn run(ctx: &Ctx, cmd: TaskCmd) -> Result<ExitCode> {
    let store = ctx.store();
    match cmd {
        TaskCmd::Init {
            name,
            mode,
            workflow,
        } => {
            let m = store.init(&name, mode.parse::<Mode>()?, workflow.parse::<Workflow>()?)?;
            ctx.out.emit(&m, |w| {
                writeln!(
                    w,
                    "created task {} ({} mode, {} workflow); it is now the current task",
                    m.name, m.mode, m.workflow
                )?;
                writeln!(w, "  {}", store.task_dir(&m.name).display())
            });
        }
        TaskCmd::List => {
            let all = store.list()?;
            let current = store.current().ok().flatten();
            ctx.out.emit(&all, |w| {
                if all.is_empty() {
                    return writeln!(w, "no tasks yet: create one with `baton task init <name>`");
                }
                writeln!(
                    w,
                    "  {:<28} {:<9} {:<12} {:<13} updated",
                    "task", "mode", "workflow", "status"
                )?;
                for m in &all {
                    let mark = if current.as_deref() == Some(m.name.as_str()) {
                        "*"
                    } else {
                        " "
                    };
                    writeln!(
                        w,
                        "{mark} {:<28} {:<9} {:<12} {:<13} {}",
                        m.name,
                        m.mode.as_str(),
                        m.workflow.as_str(),
                        m.status.as_str(),
                        m.updated_at
                    )?;
                }
                Ok(())
            });
        }
        TaskCmd::Summary => {
            let slug = ctx.slug(&store)?;
            let s = view::summary(&store.manifest(&slug)?);
            ctx.out.emit(&s, |w| write!(w, "{}", s.render()));
        }
        TaskCmd::Use { slug } => {
            store.use_task(&slug)?;
            ctx.out.emit(&serde_json::json!({"current": slug}), |w| {
                writeln!(w, "current task: {slug}")
            });
        }
        TaskCmd::Show => {
            let slug = ctx.slug(&store)?;
            let m = store.manifest(&slug)?;
            // The manifest is JSON already: print it the same way with or without --json.
            super::Out { json: true }.emit(&m, |_| Ok(()));
        }
    }
    Ok(ExitCode::SUCCESS)
}
