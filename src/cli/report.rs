//! `baton report`: the HTML report of a run (the newest, one by id, a task's, a queue's).

use std::path::PathBuf;
use std::process::ExitCode;

use super::Ctx;
use crate::error::{Error, Result};
use crate::report::{self, Which};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton report                              the newest run\n  \
baton report 20261122T130501-7f3a9c\n  baton report --task add-login            the task's newest run\n  \
baton report --queue dat-q1 -o dat-q1.html\n\n\
One self-contained HTML file (no network): a timeline of every phase attempt coloured by\n\
outcome, each prompt against its budget, usage, cost, signals, gate waits, rotations, totals\n\
(tokens, cost, wall time, time saved by parallelism, tokens saved by masking) and relative\n\
links to the saved prompts, agent logs and masked outputs. Default file:\n\
.baton/runs/<run-id>/report.html (every `baton run` writes it at its end)."
)]
pub struct Args {
    /// The run (see `baton status`); default: the newest run
    #[arg(value_name = "RUN_ID", conflicts_with = "queue", add = super::complete::run_ids())]
    run: Option<String>,
    /// The newest verify run of this queue
    #[arg(long, value_name = "NAME", add = super::complete::queue_names())]
    queue: Option<String>,
    /// Write the report here instead of the run's directory
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    pub scope: super::Scope,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let which = match (a.run, ctx.task.clone(), a.queue) {
        (Some(_), Some(_), _) => {
            return Err(Error::invalid("give a run id or --task, not both")
                .hint("baton report RUN_ID, or baton report --task SLUG"));
        }
        (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => {
            return Err(Error::invalid("give one of RUN_ID, --task and --queue"));
        }
        (Some(id), None, None) => Which::Run(id),
        (None, Some(t), None) => Which::Task(ctx.store().resolve(Some(&t))?),
        (None, None, Some(q)) => Which::Queue(q),
        (None, None, None) => Which::Latest,
    };
    let journal = report::find(&ctx.project.local_dir(), &which)?;
    let store = ctx.store();
    let w = report::write(&journal, Some(&store), a.output.as_deref())?;
    let shown = super::shown(&ctx.project.dir, &w.path);
    ctx.out.emit(&w, |out| {
        writeln!(
            out,
            "report of run {}: {shown} ({} phases, {} KB)",
            w.run_id,
            w.phases,
            w.bytes.div_ceil(1024)
        )
    });
    Ok(ExitCode::SUCCESS)
}
