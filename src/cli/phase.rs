//! `baton phase start|end|begin|complete` (START_PHASE, END_PHASE, and the batched
//! BEGIN_PHASE and COMPLETE_PHASE).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use super::{Ctx, read_content};
use crate::error::Result;
use baton_store::model::{PhaseStatus, phase_label};
use baton_store::{Content, Outcome};

#[derive(Debug, Subcommand)]
#[command(defer = true)] // arguments built only for the subcommand that runs
pub enum PhaseCmd {
    /// Record that a phase started (START_PHASE); the task must be running
    #[command(after_help = "Examples:\n  baton phase start architect\n  \
baton phase start implementation --task-id 3   # one of several parallel implementations")]
    Start {
        phase: String,
        /// Spec task this phase works on (parallel phases of one name)
        #[arg(long)]
        task_id: Option<String>,
    },
    /// Record that a running phase ended (END_PHASE); `failed` counts a retry
    #[command(
        after_help = "Examples:\n  baton phase end architect --status success\n  \
baton phase end implementation --task-id 3 --status failed"
    )]
    End {
        phase: String,
        #[arg(long, value_parser = ["success", "failed"])]
        status: String,
        #[arg(long)]
        task_id: Option<String>,
    },
    /// RETRIEVE the phase's context and START it, in one call (BEGIN_PHASE)
    #[command(
        after_help = "Examples:\n  baton phase begin architect --needs memory\n  \
baton phase begin implementation --needs spec-signatures,memory --task-id 2\n\n\
Prints the retrieved context; see `baton retrieve --help` for what each phase gets."
    )]
    Begin {
        phase: String,
        /// What to retrieve, comma-separated (memory, architect-output, spec-signatures, …)
        #[arg(long, value_delimiter = ',')]
        needs: Vec<String>,
        #[arg(long)]
        task_id: Option<String>,
    },
    /// STORE the phase's output and END it, in one call (COMPLETE_PHASE)
    #[command(
        after_help = "Examples:\n  baton phase complete architect --status success --file design.md\n  \
echo '## Task 1 done' | baton phase complete implementation --status success --task-id 1\n  \
baton phase complete review --status failed --no-content"
    )]
    Complete {
        phase: String,
        #[arg(long, value_parser = ["success", "failed"])]
        status: String,
        #[arg(long)]
        task_id: Option<String>,
        #[arg(long)]
        iteration: Option<u32>,
        /// Read the content from this file instead of stdin
        #[arg(long, conflicts_with = "no_content")]
        file: Option<PathBuf>,
        /// End the phase without storing anything
        #[arg(long)]
        no_content: bool,
    },
}

pub fn run(ctx: &Ctx, cmd: PhaseCmd) -> Result<ExitCode> {
    let store = ctx.store();
    let slug = ctx.slug(&store)?;
    match cmd {
        PhaseCmd::Start { phase, task_id } => {
            let o = store.start_phase(&slug, &phase, task_id.as_deref())?;
            let label = phase_label(&phase, task_id.as_deref());
            let attempt = o
                .manifest
                .running_phases
                .iter()
                .find(|r| r.label() == label)
                .map_or(1, |r| r.attempt);
            ctx.out.emit(&o.manifest, |w| {
                writeln!(w, "{slug}: started {label} (attempt {attempt})")
            });
        }
        PhaseCmd::End {
            phase,
            status,
            task_id,
        } => {
            let o = store.end_phase(
                &slug,
                &phase,
                task_id.as_deref(),
                status.parse::<PhaseStatus>()?,
            )?;
            print_ended(ctx, &slug, &o);
        }
        PhaseCmd::Begin {
            phase,
            needs,
            task_id,
        } => {
            let (o, got) = store.begin_phase(&slug, &phase, task_id.as_deref(), &needs)?;
            // Borrowed, not a serde_json::Value: building a Value of a long task's manifest on every
            // call would make the command's cost grow with history even without --json.
            #[derive(serde::Serialize)]
            struct Begun<'a> {
                manifest: &'a baton_store::model::Manifest,
                context: &'a baton_store::Retrieved,
            }
            let value = Begun {
                manifest: &o.manifest,
                context: &got,
            };
            ctx.out.emit(&value, |w| {
                writeln!(
                    w,
                    "{slug}: started {}",
                    phase_label(&phase, task_id.as_deref())
                )?;
                write!(w, "{}", got.render())
            });
        }
        PhaseCmd::Complete {
            phase,
            status,
            task_id,
            iteration,
            file,
            no_content,
        } => {
            let content = if no_content {
                None
            } else {
                Some(Content {
                    task_id: task_id.clone(),
                    iteration,
                    text: read_content(file.as_deref())?,
                })
            };
            let o = store.complete_phase(
                &slug,
                &phase,
                task_id.as_deref(),
                status.parse::<PhaseStatus>()?,
                content,
            )?;
            print_ended(ctx, &slug, &o);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_ended(ctx: &Ctx, slug: &str, o: &Outcome) {
    ctx.out.emit(&o.manifest, |w| {
        for s in &o.stored {
            writeln!(w, "{slug}: stored {s}")?;
        }
        writeln!(w, "{slug}: {}", o.ended_line())
    });
}
