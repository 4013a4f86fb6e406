//! `baton session new|list|clean`: per-session directories for files agents share by path.

use std::process::ExitCode;

use clap::{Args as ClapArgs, Subcommand};
use serde::Serialize;

use super::Ctx;
use crate::error::Result;
use baton_context::session;

#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Sessions live in <project>/.baton/sessions/<kind>/<id>/ (paths.local in baton.toml);
.baton/.gitignore holds `*`. Ids are made by baton (UTC time + random hex, e.g.
20261122T130501-7f3a9c): ids taken from the environment are not unique per session.

Examples:
  dir=$(baton session new pr_reviews)
  baton session list --json
  baton session clean --older-than 7d --dry-run"
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)] // arguments built only for the subcommand that runs
pub enum Cmd {
    /// Create a session directory and print its path
    #[command(
        after_help = "Examples:\n  baton session new workflow\n  ctx=\"$(baton session new pr_reviews)/context.md\""
    )]
    New {
        /// What the session is for: letters, digits, '-', '_', '.'
        kind: String,
    },
    /// List sessions (oldest first)
    #[command(
        after_help = "Examples:\n  baton session list\n  baton session list pr_reviews --json"
    )]
    List {
        /// Only this kind
        kind: Option<String>,
    },
    /// Remove sessions not modified for a while
    #[command(
        after_help = "Age is the time since the newest modification inside the session, so a
long-running session in use is kept.

Examples:
  baton session clean --older-than 7d
  baton session clean --older-than 12h --kind build --dry-run"
    )]
    Clean {
        /// Idle time: 90s, 30m, 12h, 7d, 2w
        #[arg(long, value_name = "DURATION")]
        older_than: String,
        /// Only this kind
        #[arg(long)]
        kind: Option<String>,
        /// Show what would be removed, remove nothing
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Serialize)]
struct Created<'a> {
    kind: &'a str,
    id: String,
    path: String,
}

#[derive(Serialize)]
struct Cleaned {
    dry_run: bool,
    removed: Vec<session::Session>,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let local = ctx.project.local_dir();
    match a.command {
        Cmd::New { kind } => {
            let path = session::create(&local, &kind)?;
            let id = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let c = Created {
                kind: &kind,
                id,
                path: path.display().to_string(),
            };
            ctx.out.emit(&c, |w| writeln!(w, "{}", c.path));
        }
        Cmd::List { kind } => {
            let all = session::list(&local, kind.as_deref())?;
            ctx.out.emit(&all, |w| {
                for s in &all {
                    writeln!(
                        w,
                        "{}/{}  {} files, {} bytes, idle {}  {}",
                        s.kind,
                        s.id,
                        s.files,
                        s.bytes,
                        human_secs(s.idle_secs),
                        s.path.display()
                    )?;
                }
                Ok(())
            });
        }
        Cmd::Clean {
            older_than,
            kind,
            dry_run,
        } => {
            let age = session::parse_duration(&older_than)?;
            let removed = session::clean(&local, kind.as_deref(), age, dry_run)?;
            let r = Cleaned { dry_run, removed };
            ctx.out.emit(&r, |w| {
                let verb = if dry_run { "would remove" } else { "removed" };
                for s in &r.removed {
                    writeln!(w, "{verb} {}", s.path.display())?;
                }
                writeln!(w, "{verb} {} session(s)", r.removed.len())
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn human_secs(s: u64) -> String {
    match s {
        0..=119 => format!("{s}s"),
        120..=7199 => format!("{}m", s / 60),
        7200..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}
