//! `baton doctor`: verify the store, repair what can be repaired; `--queue Q`: a verify queue's
//! stuck leases and orphaned rows.

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;
use baton_store::doctor::{self, Level};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton doctor\n  baton doctor --json\n  baton doctor --store      # the task store only\n  \
baton doctor --agents     # the agent CLIs only\n\n\
Agents: for claude, codex and gemini, whether the CLI is installed (its version), whether\n\
`baton init AGENT` wired baton into this project, whether the CLI trusts this folder (each\n\
ignores a project's settings until then), whether it has credentials, and what to do; and\n\
whether a login shell finds baton. Advice only: it does not change the exit code.\n\n\
Checks every task: each event line parses and replays, each stored artifact exists, the\n\
manifest equals the replay of the events. Repairs without losing anything: a torn last event\n\
line (a crash mid-write) moves to events.jsonl.torn, a stale or missing manifest is rebuilt,\n\
temp files of interrupted writes are removed. Exit code 5 if damage remains.\n\n\
baton doctor --queue dat-q1    a verify queue instead: every item's state reads back; on the\n\
postgres backend also stuck leases (a claim whose worker stopped renewing it), claims left on\n\
finished items, files of phases the pipeline no longer has, and outcomes the item's state\n\
does not show. Exit code 5 if it finds any."
)]
pub struct Args {
    /// Check this verify queue instead of the task store
    #[arg(long, value_name = "NAME", add = super::complete::queue_names())]
    pub queue: Option<String>,
    /// The task store only
    #[arg(long, conflicts_with_all = ["queue", "agents"])]
    pub store: bool,
    /// The agent CLIs only
    #[arg(long, conflicts_with = "queue")]
    pub agents: bool,
    #[command(flatten)]
    pub at: super::StoreRoot,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    if let Some(q) = a.queue {
        return queue(ctx, &q);
    }
    if a.agents {
        let agents = super::doctor_agents::check(&ctx.project.dir);
        let login = super::doctor_agents::baton_on_login_path();
        let v = serde_json::json!({"agents": agents, "baton_on_login_path": login});
        ctx.out.emit(&v, |w| {
            super::doctor_agents::render(w, &agents, login.as_deref())
        });
        return Ok(ExitCode::SUCCESS);
    }
    let report = doctor::run(&ctx.store())?;
    let agents = (!a.store).then(|| {
        let agents = super::doctor_agents::check(&ctx.project.dir);
        (agents, super::doctor_agents::baton_on_login_path())
    });
    // The store's fields as they always were, the agents' beside them.
    let mut v = serde_json::to_value(&report).unwrap_or_default();
    if let (Some((ag, login)), Some(o)) = (&agents, v.as_object_mut()) {
        o.insert("agents".into(), serde_json::json!(ag));
        o.insert("baton_on_login_path".into(), serde_json::json!(login));
    }
    // What an epic run would check before each commit.
    let checks = (!a.store).then(|| {
        baton_engine::checks::Checks::resolve(&ctx.project.config.checks, &ctx.project.dir, false)
    });
    if let (Some(c), Some(o)) = (&checks, v.as_object_mut()) {
        o.insert("checks".into(), serde_json::json!(c));
    }
    ctx.out.emit(&v, |w| {
        writeln!(w, "store {}: {} task(s)", report.root, report.tasks)?;
        for f in &report.findings {
            let tag = match f.level {
                Level::Ok => "ok      ",
                Level::Repaired => "repaired",
                Level::Warning => "warning ",
                Level::NoSpace => "no space",
                Level::Error => "ERROR   ",
            };
            writeln!(w, "  {tag} {}: {}", f.path, f.message)?;
        }
        writeln!(
            w,
            "{}",
            if !report.healthy() {
                "store has damage that needs a human"
            } else if report.out_of_space() {
                "the disk is full: nothing is damaged; free some space and run `baton doctor` again"
            } else {
                "store is healthy"
            }
        )?;
        if let Some((ag, login)) = &agents {
            super::doctor_agents::render(w, ag, login.as_deref())?;
        }
        if let Some(c) = &checks {
            writeln!(w, "{}", c.describe())?;
        }
        Ok(())
    });
    Ok(if !report.healthy() {
        ExitCode::from(5)
    } else if report.out_of_space() {
        // The file system refused (exit 6, as for any write it refuses), not damage (5).
        ExitCode::from(6)
    } else {
        ExitCode::SUCCESS
    })
}

/// `baton doctor --queue Q`.
fn queue(ctx: &Ctx, name: &str) -> Result<ExitCode> {
    use baton_engine::workflow::verify::backend::Backend;
    let local = ctx.project.local_dir();
    let mut b = Backend::open(&ctx.project.config.queue, &local)?;
    // Every state must read back (a state baton cannot read is an error of its own).
    let items = b.statuses(name)?;
    let findings = match &mut b {
        Backend::Files(_) => Vec::new(),
        Backend::Postgres(db) => {
            let phases: Vec<String> =
                baton_engine::workflow::verify::pipeline::load(&local.join("workflows"))?
                    .def
                    .phases
                    .into_iter()
                    .map(|p| p.id)
                    .collect();
            db.stuck(name, &phases)?
        }
    };
    let v = serde_json::json!({"queue": name, "items": items.len(), "findings": findings});
    ctx.out.emit(&v, |w| {
        writeln!(w, "queue {name}: {} item(s)", items.len())?;
        for f in &findings {
            writeln!(w, "  {}: {}", f.item, f.what)?;
        }
        writeln!(
            w,
            "{}",
            if findings.is_empty() {
                "no stuck leases, no orphaned rows".to_string()
            } else {
                format!("{} finding(s)", findings.len())
            }
        )
    });
    Ok(if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(5)
    })
}
