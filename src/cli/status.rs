//! `baton status`: every run and task, and what each waits for; `--watch` redraws it from
//! the journals until Ctrl-C (see `watch`).

use std::io::Write;
use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;
use baton_context::mask::{gain, record};
use baton_engine::events::SubjectResult;
use baton_engine::journal::{Entry, Journal};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  baton status\n  baton status --json\n  \
baton status --watch                 # a live view: running phases, elapsed, tokens, what waits for you\n  \
baton status --watch --interval 5    # Ctrl-C to stop\n\n\
On a terminal --watch redraws the screen; otherwise (a pipe, a file) it prints the view again\n\
each time something changed, and with --json one JSON object a line.")]
pub struct Args {
    /// Keep watching: refresh from the journals until Ctrl-C
    #[arg(long)]
    watch: bool,
    /// Seconds between refreshes of --watch
    #[arg(long, value_name = "SECS", default_value_t = 1.0, requires = "watch",
          value_parser = interval)]
    interval: f64,
    #[command(flatten)]
    pub store: super::StoreRoot,
}

fn interval(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.05..=3600.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "`{s}` is not a number of seconds between 0.05 and 3600"
        )),
    }
}

/// A phase started and not finished.
#[derive(serde::Serialize, PartialEq)]
struct Running {
    subject: String,
    phase: String,
    attempt: u32,
    started_at: String,
    /// Milliseconds since it started, when the view was taken (not compared for changes).
    #[serde(skip)]
    elapsed_ms: u64,
}

#[derive(serde::Serialize)]
struct RunRow {
    run_id: String,
    workflow: String,
    epics: Vec<String>,
    state: String,
    /// The step an interrupted run stopped in, and the command that continues it.
    next: Option<String>,
    agent_calls: usize,
    done: usize,
    failed: usize,
    /// Each story (task, item) that failed, with why (the failing test, when the checks named
    /// it): `"story 1.1: dev: `make test` failed …"`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    failures: Vec<String>,
    /// Tokens and cost of the agent calls so far.
    tokens: u64,
    cost_usd: f64,
    /// Outputs masked for this run's agents, and the tokens that saved (the mask log).
    masked: u64,
    saved_tokens: u64,
    /// The most context any agent of the run held (its largest request), and where.
    #[serde(skip_serializing_if = "Option::is_none")]
    context_peak: Option<ContextPeak>,
    /// Phases whose agent held more than the phase's context budget.
    phases_over_budget: usize,
    /// Phases started and not finished (an interrupted run's stay here until it is resumed).
    running: Vec<Running>,
    /// The agents a killed baton of this run left running.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    left_running: Vec<baton_agent::Orphan>,
    started_at: String,
    updated_at: String,
}

#[derive(serde::Serialize, Clone)]
struct ContextPeak {
    tokens: u64,
    /// The context budget of that phase, when it has one.
    budget: Option<u64>,
    subject: String,
    phase: String,
}

/// Everything `baton status` shows.
#[derive(serde::Serialize)]
struct Snapshot {
    runs: Vec<RunRow>,
    tasks: Vec<baton_store::view::Summary>,
    /// Tasks whose state cannot be read: the task and why (one damaged task hides no other).
    damaged: Vec<Damaged>,
    queues: Vec<super::queue::QueueSummary>,
    /// Why the verify queues cannot be read (an unreachable queue database), if they cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    queue_error: Option<String>,
    /// Every output masked in the project (hooks, `baton mask`, MCP), runs or not.
    masking: gain::Totals,
    /// The deferred-work ledger's open entries (`baton deferred`).
    deferred: Vec<baton_engine::workflow::epic::bmad::deferred::Deferred>,
}

#[derive(serde::Serialize)]
struct Damaged {
    task: String,
    error: String,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    if a.watch {
        return watch(ctx, a.interval);
    }
    let snap = snapshot(ctx);
    ctx.out.emit(&snap, |w| render(w, &snap, true));
    Ok(ExitCode::SUCCESS)
}

fn snapshot(ctx: &Ctx) -> Snapshot {
    let local = ctx.project.local_dir();
    let masks = record::read_all(&local).records;
    let masking = gain::gain(&masks, &gain::Filter::default()).totals;
    let mut runs = Vec::new();
    for id in Journal::run_ids(&local) {
        let run_masks = gain::gain(
            &masks,
            &gain::Filter {
                run: Some(id.clone()),
                ..Default::default()
            },
        )
        .totals;
        // A run whose journal cannot be read is shown as damaged, not hidden.
        let damaged = |why: String| RunRow {
            run_id: id.clone(),
            workflow: String::new(),
            epics: vec![],
            state: "damaged".into(),
            next: Some(why),
            agent_calls: 0,
            done: 0,
            failed: 0,
            failures: Vec::new(),
            tokens: 0,
            cost_usd: 0.0,
            masked: run_masks.count,
            saved_tokens: run_masks.saved_tokens,
            context_peak: None,
            phases_over_budget: 0,
            running: vec![],
            left_running: vec![],
            started_at: String::new(),
            updated_at: String::new(),
        };
        let j = match Journal::open(&local, &id) {
            Ok(j) => j,
            Err(e) => {
                runs.push(damaged(e.to_string()));
                continue;
            }
        };
        let Some(baton_engine::journal::Started {
            workflow: wf,
            subjects: epics,
            ..
        }) = j.started()
        else {
            runs.push(damaged(
                "the journal does not start with run_started".into(),
            ));
            continue;
        };
        let count = |r: SubjectResult| {
            j.records
                .iter()
                .filter(
                    |x| matches!(&x.entry, Entry::SubjectFinished { result, .. } if *result == r),
                )
                .count()
        };
        let last_started = j.records.iter().rev().find_map(|r| match &r.entry {
            Entry::PhaseStarted {
                subject,
                phase,
                attempt,
            } => Some(format!("{} {phase} (attempt {attempt})", subject.label())),
            _ => None,
        });
        let task_state = baton_engine::workflow::task::run_state(&ctx.store(), wf, epics, &id);
        let (state, next) = if let Some(s) = task_state {
            s
        } else if let Some(why) = j.closed() {
            ("closed".to_string(), Some(why.to_string()))
        } else if j.run_finished() {
            ("finished".to_string(), None)
        } else if j.is_held() {
            // Waiting for a spent usage limit (`--wait-for-quota`): until when, and why.
            let waiting = std::fs::read_to_string(j.dir.join(baton_engine::call::WAITING_FILE))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| v["reason"].as_str().map(str::to_string));
            ("running".to_string(), waiting)
        } else {
            (
                "interrupted".to_string(),
                Some(format!(
                    "{} — continue with: baton run --resume {id}",
                    last_started.unwrap_or_else(|| "before its first phase".into())
                )),
            )
        };
        let (tokens, cost_usd, running) = progress(&j);
        let (context_peak, phases_over_budget) = context(&j);
        runs.push(RunRow {
            run_id: id.clone(),
            workflow: wf.to_string(),
            epics: epics.to_vec(),
            state,
            next,
            agent_calls: j.agent_calls(),
            tokens,
            cost_usd,
            masked: run_masks.count,
            saved_tokens: run_masks.saved_tokens,
            context_peak,
            phases_over_budget,
            running,
            left_running: j.orphans(),
            done: count(SubjectResult::Done),
            failed: count(SubjectResult::Failed),
            failures: j
                .records
                .iter()
                .filter_map(|x| match &x.entry {
                    Entry::SubjectFinished {
                        subject,
                        result: SubjectResult::Failed,
                        reason,
                    } => Some(format!("{}: {reason}", subject.label())),
                    _ => None,
                })
                .collect(),
            started_at: j.records.first().map(|r| r.ts.clone()).unwrap_or_default(),
            updated_at: j.records.last().map(|r| r.ts.clone()).unwrap_or_default(),
        });
    }
    let store = ctx.store();
    let (mut tasks, mut damaged) = (Vec::new(), Vec::new());
    for slug in store.slugs().unwrap_or_default() {
        match store.manifest(&slug) {
            Ok(m) => tasks.push(baton_store::view::summary(&m)),
            Err(e) => damaged.push(Damaged {
                task: slug,
                error: e.to_string(),
            }),
        }
    }
    // Verify queues: counts and what each waits for. An unreachable queue database is said,
    // not taken for "no queues"; status still shows everything else (exit 0).
    let backend =
        baton_engine::workflow::verify::backend::Backend::open(&ctx.project.config.queue, &local);
    let (queues, queue_error) = match backend.and_then(|mut vq| {
        let names = vq.names()?;
        Ok(names
            .iter()
            .filter_map(|n| super::queue::summarize(&mut vq, n).ok().map(|s| s.0))
            .collect())
    }) {
        Ok(queues) => (queues, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    Snapshot {
        runs,
        tasks,
        damaged,
        queues,
        queue_error,
        masking,
        deferred: baton_engine::workflow::epic::bmad::deferred::all(&ctx.project.dir)
            .into_iter()
            .filter(|d| d.closed_by.is_none())
            .collect(),
    }
}

/// Tokens and cost so far, and the phases started and not finished, of one run.
fn progress(j: &Journal) -> (u64, f64, Vec<Running>) {
    let now = jiff::Timestamp::now();
    let (mut tokens, mut cost) = (0, 0.0);
    let mut open: Vec<(&baton_engine::events::Subject, &str, u32, &str)> = vec![];
    for r in &j.records {
        match &r.entry {
            Entry::PhaseStarted {
                subject,
                phase,
                attempt,
            } => open.push((subject, phase, *attempt, &r.ts)),
            Entry::PhaseFinished {
                subject,
                phase,
                attempt,
                outcome,
            } => {
                tokens += outcome.usage.total();
                cost += outcome.cost_usd.unwrap_or(0.0);
                open.retain(|o| !(o.0 == subject && o.1 == phase && o.2 == *attempt));
            }
            _ => {}
        }
    }
    let running = open
        .into_iter()
        .map(|(s, phase, attempt, ts)| Running {
            subject: s.label(),
            phase: phase.to_string(),
            attempt,
            started_at: ts.to_string(),
            elapsed_ms: ts
                .parse::<jiff::Timestamp>()
                .map_or(0, |t| now.duration_since(t).as_millis().max(0) as u64),
        })
        .collect();
    (tokens, cost, running)
}

/// The largest context any phase's agent held, and how many phases went over their budget.
fn context(j: &Journal) -> (Option<ContextPeak>, usize) {
    let mut peak: Option<ContextPeak> = None;
    let mut over = 0;
    for r in &j.records {
        if let Entry::PhaseFinished {
            subject,
            phase,
            outcome,
            ..
        } = &r.entry
        {
            over += usize::from(outcome.over_budget);
            if let Some(t) = outcome.context_peak_tokens
                && peak.as_ref().is_none_or(|p| t > p.tokens)
            {
                peak = Some(ContextPeak {
                    tokens: t,
                    budget: outcome.context_budget,
                    subject: subject.label(),
                    phase: phase.clone(),
                });
            }
        }
    }
    (peak, over)
}

/// What a run of `workflow` works on: "epic" or "task" (the plan run's workflow, `plan`, is
/// not an engine workflow).
fn subject_word(workflow: &str) -> &'static str {
    baton_engine::definition::WorkflowKind::parse(workflow)
        .map_or(if workflow == "plan" { "task" } else { "epic" }, |k| {
            k.subject_word()
        })
}

/// The human view; `elapsed`: with the running phases' elapsed times (the watch's change
/// check leaves them out, or a pipe would get a new view every second).
fn render(w: &mut dyn Write, snap: &Snapshot, elapsed: bool) -> std::io::Result<()> {
    let (runs, tasks, queues) = (&snap.runs, &snap.tasks, &snap.queues);
    if runs.is_empty()
        && tasks.is_empty()
        && queues.is_empty()
        && snap.damaged.is_empty()
        && snap.queue_error.is_none()
        && snap.masking.count == 0
        && snap.deferred.is_empty()
    {
        return writeln!(w, "no runs and no tasks yet (try `baton demo`)");
    }
    for r in runs {
        writeln!(
            w,
            "run {}  {} {} {}  {}  {} done, {} failed, {} agent calls, {} tokens, ${:.2}",
            r.run_id,
            r.workflow,
            subject_word(&r.workflow),
            r.epics.join(","),
            super::style::result(super::style::To::Stdout, &r.state, 0),
            r.done,
            r.failed,
            r.agent_calls,
            r.tokens,
            r.cost_usd
        )?;
        if let Some(p) = &r.context_peak {
            let of = p.budget.map(|b| format!(" of {b}")).unwrap_or_default();
            let over = match r.phases_over_budget {
                0 => String::new(),
                n => format!(
                    "; {}",
                    super::style::paint(
                        super::style::To::Stdout,
                        super::style::BAD,
                        &format!("{n} phases over their context budget")
                    )
                ),
            };
            writeln!(
                w,
                "    largest context: {}{of} tokens ({} {}){over}",
                p.tokens, p.subject, p.phase
            )?;
        }
        if r.masked > 0 {
            writeln!(
                w,
                "    masking saved {} tokens in {} outputs",
                r.saved_tokens, r.masked
            )?;
        }
        for f in &r.failures {
            writeln!(w, "    failed: {}", super::style::visible(f))?;
        }
        for p in &r.running {
            let since = if elapsed {
                format!(", {}", baton_store::metrics::human_ms(p.elapsed_ms))
            } else {
                String::new()
            };
            writeln!(
                w,
                "    started: {} {} (attempt {}) at {}{since}",
                p.subject, p.phase, p.attempt, p.started_at
            )?;
        }
        for o in &r.left_running {
            writeln!(
                w,
                "    still running: the agent of {} (process group {}), left by a killed baton: `baton stop {}` ends it, `baton run --resume {}` ends it and continues",
                o.call, o.pgid, r.run_id, r.run_id
            )?;
        }
        if let Some(n) = &r.next {
            let verb = if r.state == "damaged" {
                "journal"
            } else if r.state == "closed" {
                "closed"
            } else if subject_word(&r.workflow) == "task" {
                "next"
            } else if r.state == "running" {
                "waiting"
            } else {
                "stopped in"
            };
            writeln!(w, "    {verb}: {}", super::style::visible(n))?;
        }
    }
    for q in queues {
        writeln!(
            w,
            "queue {}  {} complete, {} failed, {} pending of {}  — {}",
            q.name,
            q.complete,
            q.failed,
            q.pending + q.in_progress,
            q.items,
            q.next
        )?;
    }
    if let Some(e) = &snap.queue_error {
        writeln!(w, "queues: cannot be read: {e}")?;
    }
    for t in tasks {
        writeln!(
            w,
            "task {}  {}{}  next: {}",
            t.task,
            t.status,
            // One line a task: the gate's prompt and artifacts are for `baton gate show`.
            t.waiting_for
                .as_ref()
                .map(|x| {
                    let short: String = x.chars().take(80).collect();
                    let more = if short.len() < x.len() { "…" } else { "" };
                    format!(" ({}{more})", super::style::visible(&short))
                })
                .unwrap_or_default(),
            t.next
        )?;
    }
    for d in &snap.damaged {
        writeln!(
            w,
            "task {}  damaged: {}  — run `baton doctor`",
            d.task,
            super::style::visible(&d.error)
        )?;
    }
    let waiting: Vec<&str> = tasks
        .iter()
        .filter(|t| t.waiting_for.is_some())
        .map(|t| t.task.as_str())
        .collect();
    if !waiting.is_empty() {
        writeln!(w, "waiting for you: {}", waiting.join(", "))?;
    }
    let m = &snap.masking;
    if m.count > 0 {
        writeln!(
            w,
            "masking saved {} tokens in {} outputs ({:.1} %; `baton gain` for more)",
            m.saved_tokens,
            m.count,
            m.saved_percent()
        )?;
    }
    if !snap.deferred.is_empty() {
        writeln!(
            w,
            "deferred work: {} open (`baton deferred` lists them)",
            snap.deferred.len()
        )?;
    }
    Ok(())
}

/// `--watch`: the view again every `interval` seconds until Ctrl-C (or kill). On a terminal the
/// screen is redrawn; elsewhere the view (or with --json one JSON line) is printed again only
/// when something but the clock changed.
fn watch(ctx: &Ctx, interval: f64) -> Result<ExitCode> {
    use std::io::IsTerminal;
    use std::time::{Duration, Instant};
    baton_engine::interrupt::install();
    let tty = !ctx.out.json && std::io::stdout().is_terminal();
    let mut last: Option<Vec<u8>> = None;
    let stdout = std::io::stdout();
    loop {
        let snap = snapshot(ctx);
        let mut key = Vec::new();
        if ctx.out.json {
            let _ = serde_json::to_writer(&mut key, &snap);
        } else {
            let _ = render(&mut key, &snap, false);
        }
        let mut out = stdout.lock();
        let shown = if tty {
            // Home, clear, then the view with the clock.
            let mut view = Vec::new();
            let _ = render(&mut view, &snap, true);
            write!(
                out,
                "\x1b[H\x1b[2Jbaton status — {} — every {interval}s, Ctrl-C to stop\n\n",
                jiff::Timestamp::now().strftime("%H:%M:%S")
            )
            .and_then(|_| out.write_all(&view))
        } else if last.as_ref() != Some(&key) {
            if ctx.out.json {
                out.write_all(&key).and_then(|_| writeln!(out))
            } else {
                let mut view = Vec::new();
                let _ = render(&mut view, &snap, true);
                writeln!(out, "--- {}", baton_core::ids::now()).and_then(|_| out.write_all(&view))
            }
        } else {
            Ok(())
        };
        // A reader that went away (`| head`) ends the watch like Ctrl-C does.
        if shown.and_then(|_| out.flush()).is_err() {
            return Ok(ExitCode::SUCCESS);
        }
        drop(out);
        last = Some(key);
        let until = Instant::now() + Duration::from_secs_f64(interval);
        while Instant::now() < until {
            if baton_engine::interrupt::received().is_some() {
                return Ok(ExitCode::SUCCESS);
            }
            std::thread::sleep(Duration::from_millis(25).min(until - Instant::now()));
        }
        if baton_engine::interrupt::received().is_some() {
            return Ok(ExitCode::SUCCESS);
        }
    }
}
