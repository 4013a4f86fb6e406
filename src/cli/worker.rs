//! `baton worker --queue Q`: one of N workers (on N machines) draining a verify queue kept in
//! PostgreSQL. See `workflow::verify::worker`.

use std::io::Write;
use std::process::ExitCode;

use super::Ctx;
use super::agent_args::AgentArgs;
use super::run::VerifyArgs;
use crate::cli::run::verify::fresh;
use crate::error::{Error, Result};
use baton_engine::cli_agents::CliAgents;
use baton_engine::workflow::verify::backend::BackendKind;
use baton_engine::workflow::verify::start::preflight;
use baton_engine::workflow::verify::worker::{self, ClaimLog, ClaimResult, Setup, WorkerOptions};

/// Drain a PostgreSQL verify queue together with workers on other machines
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  baton worker --queue dat-q1\n  \
baton worker --queue dat-q1 --concurrency 4 --agent claude\n  \
baton worker --queue dat-q1 --once        # exit when every item is complete or failed\n\n\
Needs `[queue] backend = \"postgres\"` in baton.toml and the database URL (BATON_DATABASE_URL\n\
or [queue] database_url). Start one on every machine that has the project checked out and the\n\
agent CLI installed: each claims the next item phase nobody holds (FOR UPDATE SKIP LOCKED),\n\
runs it with a fresh agent exactly as `baton run verify` does, and records the outcome and the\n\
output file in the database while releasing the claim. A claim holds a lease its heartbeat\n\
renews; a worker killed or cut off loses it after --lease seconds and another worker takes the\n\
phase over. A phase whose outcome was recorded never runs again. Idle workers wait for\n\
`baton queue add` (LISTEN/NOTIFY). A database that goes away (restart, failover, a killed\n\
connection) is reconnected to with backoff; the worker stops only when it stays unreachable\n\
for --unreachable seconds. Ctrl-C releases the claims being worked on and exits.\n\
Logs one line per claim (--json: one JSON object per claim).")]
pub struct Args {
    /// The queue to drain (`baton queue add NAME ITEM…`)
    #[arg(long, value_name = "NAME", add = super::complete::queue_names())]
    pub queue: String,
    /// Phases this worker runs at once, each with its own agent and database connection
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub concurrency: u32,
    /// Exit once every item is complete or failed, instead of waiting for more items
    #[arg(long)]
    pub once: bool,
    /// Lease of a claim, in seconds (default: [queue] lease_secs of baton.toml, else 60)
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub lease: Option<u64>,
    /// Seconds the database may stay unreachable (a restart, a failover, a killed connection)
    /// before the worker stops; it reconnects meanwhile (default: [queue] unreachable_secs,
    /// else 300)
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub unreachable: Option<u64>,
    /// This worker's name in claims and logs (default: HOST-PID)
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    #[command(flatten)]
    pub agent: AgentArgs,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let cfg = &ctx.project.config.queue;
    if cfg.backend != BackendKind::Postgres {
        return Err(Error::invalid(
            "`baton worker` drains queues kept in PostgreSQL; this project keeps its queues in files",
        )
        .hint(format!(
            "on one machine: baton run verify --queue {q}; for workers, set `[queue] backend = \"postgres\"` in baton.toml and BATON_DATABASE_URL",
            q = a.queue
        )));
    }
    baton_engine::workflow::verify::queue::check_name(&a.queue)?;
    let url = cfg.url()?;
    let opts = fresh(
        ctx,
        &VerifyArgs {
            queue: a.queue.clone(),
            agent: a.agent.clone(),
            // A worker waits out a spent limit when baton.toml's `[run] wait_for_quota` says.
            wait_for_quota: false,
        },
    )?;
    let pipeline = preflight(&ctx.project, &opts)?;
    baton_engine::interrupt::install();
    let host = worker::hostname();
    let w = WorkerOptions {
        url,
        concurrency: a.concurrency,
        once: a.once,
        lease: a
            .lease
            .map(std::time::Duration::from_secs)
            .unwrap_or_else(|| cfg.lease()),
        name: a
            .name
            .clone()
            .unwrap_or_else(|| format!("{host}-{}", std::process::id())),
        host,
        patience: a
            .unreachable
            .map(std::time::Duration::from_secs)
            .unwrap_or_else(|| cfg.unreachable()),
    };
    let agents =
        CliAgents::new(&ctx.project.dir, opts.scenario.clone()).configured(&ctx.project.config);
    let setup = Setup {
        project_dir: ctx.project.dir.clone(),
        local: ctx.project.local_dir(),
        pipeline,
        agents: &agents,
        opts,
    };
    let json = ctx.out.json;
    let log = move |l: &ClaimLog| {
        let mut out = std::io::stdout().lock();
        let _ = if json {
            writeln!(out, "{}", serde_json::to_string(l).unwrap_or_default())
        } else {
            writeln!(out, "{}", line(l))
        };
    };
    let report = worker::run(&setup, &w, &log)?;
    let summary = serde_json::json!({"worker": w.name, "queue": a.queue, "report": report});
    ctx.out.emit(&summary, |o| {
        writeln!(
            o,
            "worker {}: {} claims — {} complete, {} failed, {} dropped · {} agent calls",
            w.name,
            report.claims,
            report.complete,
            report.failed,
            report.dropped,
            report.agent_calls
        )
    });
    Ok(if report.failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `w1 BMNR 1b #1: complete in 0.4s (took over from w2@host-b)`
fn line(l: &ClaimLog) -> String {
    let what = match &l.result {
        ClaimResult::Complete => "complete".to_string(),
        ClaimResult::Failed(r) => format!("failed — {r}"),
        ClaimResult::Dropped(r) => format!("dropped (not recorded): {r}"),
    };
    let over = l
        .took_over
        .as_ref()
        .map(|w| format!(" (took over from {w}: its lease expired)"))
        .unwrap_or_default();
    format!(
        "{} {} {} #{}: {what} in {:.1}s{over}",
        l.worker, l.item, l.phase, l.attempt, l.secs
    )
}
