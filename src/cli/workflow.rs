//! `baton workflow list|show`: the workflow definitions, built-in or the project's own.

use std::process::ExitCode;

use clap::Subcommand;

use super::Ctx;
use crate::error::Result;
use baton_engine::workflow::epic::def;

#[derive(Debug, Subcommand)]
#[command(defer = true)] // arguments built only for the subcommand that runs
pub enum WorkflowCmd {
    /// The workflows baton knows, and whether the project overrides them
    #[command(after_help = "Examples:\n  baton workflow list")]
    List,
    /// Print a workflow's TOML (to copy into .baton/workflows/ and change)
    #[command(after_help = "Examples:\n  baton workflow show epic-execute\n  \
baton workflow show epic-execute > .baton/workflows/epic-execute.toml\n  baton workflow show orchestrate   # also poc, graduate (task workflows)\n  baton workflow show epic-execute --prompt dev\n  baton workflow show verify --prompt verify-phase")]
    Show {
        name: String,
        /// Print this prompt template instead (kickoff, dev, review, party-review, failure-analysis, uat, retro, verify-phase, verify-reminder, discover, plan, task-<phase>)
        #[arg(long)]
        prompt: Option<String>,
    },
}

pub fn run(ctx: &Ctx, cmd: WorkflowCmd) -> Result<ExitCode> {
    let local = ctx.project.local_dir();
    match cmd {
        WorkflowCmd::List => {
            let rows: Vec<serde_json::Value> = def::BUILTIN
                .iter()
                .chain(baton_engine::workflow::task::def::BUILTIN.iter())
                .map(|(name, _)| {
                    let own = local.join("workflows").join(format!("{name}.toml"));
                    serde_json::json!({"name": name, "overridden_by": own.is_file().then(|| own.display().to_string())})
                })
                .chain(std::iter::once({
                    let own = local.join("workflows/verify.toml");
                    serde_json::json!({"name": "verify", "overridden_by": own.is_file().then(|| own.display().to_string())})
                }))
                .collect();
            ctx.out.emit(&rows, |w| {
                for r in &rows {
                    match r["overridden_by"].as_str() {
                        Some(p) => writeln!(
                            w,
                            "{}  (project's own: {p})",
                            r["name"].as_str().unwrap_or("")
                        )?,
                        None => writeln!(w, "{}  (built-in)", r["name"].as_str().unwrap_or(""))?,
                    }
                }
                Ok(())
            });
        }
        WorkflowCmd::Show { name, prompt } => {
            let text = match prompt {
                Some(p) => baton_engine::prompt::template(&p, &local.join("prompts"))?,
                None => baton_engine::workflow::definition_text(&name, &local.join("workflows"))?.1,
            };
            ctx.out
                .emit(&serde_json::json!({"name": name, "text": text}), |w| {
                    write!(w, "{text}")
                });
        }
    }
    Ok(ExitCode::SUCCESS)
}
