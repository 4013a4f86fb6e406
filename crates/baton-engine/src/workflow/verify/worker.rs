//! `baton worker`: drains a postgres-backed verify queue together with workers on other
//! machines. Each slot (`--concurrency`) loops: claim the next item phase (one statement, `FOR
//! UPDATE SKIP LOCKED`), materialize the item's state and the phase's input files from the
//! database into `.baton/queues/<Q>/items/<ITEM>/`, run the phase with the very code `baton run
//! verify` runs ([`VerifyEngine::run_phase`]: fresh agent, summary block, format retry), and record
//! the outcome, the state and the output file in the transaction that ends the claim. A
//! heartbeat thread renews the leases of the claims being worked on; an idle slot sleeps on
//! `LISTEN` until `queue add` or a recorded phase wakes it (or a lease may have expired).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::link::Link;
use super::pg::{Claimed, Db, Outcome, Recorded};
use super::pipeline::VerifyPipeline;
use super::queue::Queues;
use super::state::Progress;
use super::{Context, Options, PhaseResult, Report, VerifyEngine, state};
use crate::agents::Agents;
use crate::error::{Error, Result};
use crate::events::{RunEvent, Silent, Subject, SubjectResult};
use crate::journal::{Entry, Journal};

/// The claims a worker's slots are working on, by token, with what stops each one's agent.
type Held = Mutex<BTreeMap<i64, baton_agent::CancelToken>>;

/// What a worker is told.
pub struct WorkerOptions {
    pub url: String,
    pub concurrency: u32,
    /// Exit once every item of the queue is complete or failed (waiting for other workers'
    /// claims to end or expire) instead of waiting for more.
    pub once: bool,
    pub lease: Duration,
    /// This worker's name in claims (slots add `/1`, `/2`, …).
    pub name: String,
    pub host: String,
    /// How long the database may stay unreachable before the worker stops (every connection
    /// reconnects meanwhile: `verify::link`).
    pub patience: Duration,
}

/// Everything a slot needs to run phases, shared by the slots.
pub struct Setup<'a> {
    pub project_dir: PathBuf,
    pub local: PathBuf,
    pub pipeline: VerifyPipeline,
    pub agents: &'a dyn Agents,
    pub opts: Options,
}

/// How one claim ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "result", content = "detail")]
pub enum ClaimResult {
    Complete,
    Failed(String),
    /// The lease ran out and another worker took the phase over: this result was dropped.
    Dropped(String),
}

/// One line of the worker's log: one claim.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimLog {
    pub worker: String,
    pub item: String,
    pub phase: String,
    pub attempt: i32,
    #[serde(flatten)]
    pub result: ClaimResult,
    pub secs: f64,
    /// `worker@host` whose expired lease this claim took over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub took_over: Option<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct WorkerReport {
    pub claims: u32,
    pub complete: u32,
    pub failed: u32,
    pub dropped: u32,
    pub agent_calls: u32,
}

fn guard<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// This machine's name, for claims.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match std::str::from_utf8(&buf[..end]) {
        Ok(h) if ok && !h.is_empty() => h.to_string(),
        _ => "localhost".into(),
    }
}

/// Run the worker until the queue is drained (`once`), a signal, or an error.
pub fn run(
    setup: &Setup,
    w: &WorkerOptions,
    log: &(dyn Fn(&ClaimLog) + Sync),
) -> Result<WorkerReport> {
    let held: Held = Mutex::new(BTreeMap::new());
    // `stop`: slots take no new claim. `ended`: every slot is done, the heartbeat may stop
    // (not before: a slot still running a phase keeps its lease).
    let (stop, ended) = (AtomicBool::new(false), AtomicBool::new(false));
    let report = Mutex::new(WorkerReport::default());
    // Connect once up front: a bad URL or schema is one clear error, not one per slot.
    let mut first = Db::connect(&w.url)?;
    first.items(&setup.opts.queue)?;
    let first = Mutex::new(Some(first));
    let results: Vec<Result<()>> = std::thread::scope(|s| {
        let hb = s.spawn(|| {
            let r = heartbeat(w, &held, &ended, &stop);
            // Without heartbeats every claim would be taken over: stop after the current ones.
            if r.is_err() {
                stop.store(true, Ordering::SeqCst);
            }
            r
        });
        let slots: Vec<_> = (1..=w.concurrency.max(1))
            .map(|k| {
                let (held, stop, report) = (&held, &stop, &report);
                let db = guard(&first).take();
                s.spawn(move || {
                    let r = slot(k, db, setup, w, held, stop, report, log);
                    // One slot's error stops the others after their current claim.
                    if r.is_err() {
                        stop.store(true, Ordering::SeqCst);
                    }
                    r
                })
            })
            .collect();
        let mut out: Vec<Result<()>> = slots
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::internal("a worker slot panicked")))
            })
            .collect();
        ended.store(true, Ordering::SeqCst);
        out.push(
            hb.join()
                .unwrap_or_else(|_| Err(Error::internal("the heartbeat panicked"))),
        );
        out
    });
    // An interrupt is reported as such (exit 128 + signal), before other errors.
    let mut errors: Vec<Error> = results.into_iter().filter_map(|r| r.err()).collect();
    if let Some(k) = errors
        .iter()
        .position(|e| matches!(e, Error::Interrupted { .. }))
    {
        return Err(errors.swap_remove(k));
    }
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    Ok(report.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// Renew the leases of the claims being worked on, every third of the lease. A renewal that
/// fails (the connection broke, the server restarts) is tried again on a new connection at
/// the next beat. Once a whole lease has passed without one, every claim may be another
/// worker's: their agents are stopped. The heartbeat ends with an error only when the
/// database has been unreachable for the worker's patience.
fn heartbeat(w: &WorkerOptions, held: &Held, ended: &AtomicBool, stop: &AtomicBool) -> Result<()> {
    let every = (w.lease / 3).max(Duration::from_millis(100));
    // A beat that hangs (a host gone) must fail in time for the next one.
    let connect = || Db::connect_within(&w.url, Some(every));
    let mut db = Some(connect()?);
    let (mut last, mut renewed) = (Instant::now(), Instant::now());
    let mut down = false;
    while !ended.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(50));
        if last.elapsed() < every {
            continue;
        }
        last = Instant::now();
        // Connect outside the claims' lock: a slot may be finishing a claim meanwhile.
        let conn = match db.take() {
            Some(d) => Ok(d),
            None => connect(),
        };
        // Held across the renewal: a slot takes its claim out before recording it (`finish`),
        // so a claim that ended by its record is never mistaken for one that was lost.
        let mut held = guard(held);
        let tokens: Vec<i64> = held.keys().copied().collect();
        let kept = conn.and_then(|mut d| {
            let kept = if tokens.is_empty() {
                Vec::new()
            } else {
                d.heartbeat(&tokens, w.lease)?
            };
            db = Some(d);
            Ok(kept)
        });
        let kept = match kept {
            Ok(kept) => kept,
            Err(e) => {
                if !std::mem::replace(&mut down, true) {
                    baton_core::notice::said(format!(
                        "{}: the heartbeat could not renew the leases ({e}); trying again every {} ms",
                        w.name,
                        every.as_millis()
                    ));
                }
                if renewed.elapsed() >= w.lease {
                    // Another worker may hold these phases now: their agents stop, their
                    // results would be dropped. The slots go on once the database answers.
                    for (t, cancel) in std::mem::take(&mut *held) {
                        cancel.cancel();
                        baton_core::notice::said(format!(
                            "{}: claim {t}'s lease was not renewed for {} s; its agent is stopped",
                            w.name,
                            w.lease.as_secs()
                        ));
                    }
                }
                if renewed.elapsed() >= w.patience.max(w.lease) {
                    stop.store(true, Ordering::SeqCst);
                    return Err(super::link::gave_up(&w.name, w.patience.max(w.lease), &e));
                }
                continue;
            }
        };
        if std::mem::take(&mut down) {
            baton_core::notice::said(format!("{}: the heartbeat renews the leases again", w.name));
        }
        renewed = Instant::now();
        for t in tokens.iter().filter(|t| !kept.contains(t)) {
            // Said once. Its agent is stopped: another worker has the phase now, and the
            // result would be dropped when it tried to record.
            if let Some(cancel) = held.remove(t) {
                cancel.cancel();
            }
            baton_core::notice::said(format!(
                "{}: lost claim {t} (its lease expired before the heartbeat renewed it); its agent is stopped",
                w.name
            ));
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn slot(
    k: u32,
    db: Option<Db>,
    setup: &Setup,
    w: &WorkerOptions,
    held: &Held,
    stop: &AtomicBool,
    report: &Mutex<WorkerReport>,
    log: &(dyn Fn(&ClaimLog) + Sync),
) -> Result<()> {
    let worker = if w.concurrency > 1 {
        format!("{}/{k}", w.name)
    } else {
        w.name.clone()
    };
    let mut db = Link::new(&w.url, db, w.patience, &worker);
    db.listen()?;
    let queue = setup.opts.queue.clone();
    let id = baton_core::ids::new_id();
    // A verify run of the queue, as `baton status` and `baton report --queue` show them; one
    // per slot, on this machine.
    let first = Entry::RunStarted {
        run_id: id.clone(),
        workflow: "verify".into(),
        subjects: vec![queue.clone()],
        options: serde_json::to_value(&setup.opts).map_err(|e| Error::internal(e.to_string()))?,
    };
    let (journal, _hold) = Journal::start(&setup.local, &id, first)?;
    let mut engine = VerifyEngine {
        project_dir: setup.project_dir.clone(),
        queues: Queues::new(&setup.local),
        pipeline: setup.pipeline.clone(),
        prompts_dir: setup.local.join("prompts"),
        agents: setup.agents,
        opts: setup.opts.clone(),
        journal: Mutex::new(journal),
        run_id: id,
        reporter: &Silent,
        complete: Default::default(),
        work_command: format!("baton worker --queue {queue}"),
    };
    let idle = (w.lease / 2).clamp(Duration::from_millis(100), Duration::from_secs(10));
    let (mut done, mut failed) = (0, 0);
    loop {
        if stop.load(Ordering::SeqCst) || crate::interrupt::received().is_some() {
            break;
        }
        let Some(c) = db.run(|d| d.claim(&queue, (&worker, &w.host, &engine.run_id), w.lease))?
        else {
            if w.once && db.run(|d| d.unfinished(&queue))? == 0 {
                break;
            }
            // Until a notification, the idle time, or a signal (looked at every 250 ms).
            let until = Instant::now() + idle;
            while let Some(left) = until.checked_duration_since(Instant::now())
                && !stop.load(Ordering::SeqCst)
                && crate::interrupt::received().is_none()
                && !db.run(|d| d.wait(left.min(Duration::from_millis(250))))?
            {}
            continue;
        };
        let cancel = crate::interrupt::token().child();
        guard(held).insert(c.token, cancel.clone());
        // The heartbeat may have given up between the check above and the insert: its claims
        // are no longer renewed, so this one goes back unrun.
        if stop.load(Ordering::SeqCst) {
            guard(held).remove(&c.token);
            let _ = db.run(|d| d.release(&queue, c.token));
            break;
        }
        let mut calls = Report::default();
        let r = crate::interrupt::cancellable(&cancel, || {
            run_claim(
                &mut engine,
                &mut db,
                &c,
                (&worker, &w.host),
                held,
                &mut calls,
            )
        });
        // Gone already: the heartbeat gave the claim up (another worker may hold it now).
        let lost = guard(held).remove(&c.token).is_none();
        let line = match r {
            Ok(l) => l,
            Err(e) if lost && !matches!(e, Error::Interrupted { .. }) => ClaimLog {
                worker: worker.clone(),
                item: c.item.clone(),
                phase: "-".into(),
                attempt: c.attempt,
                // Its error may be the new holder's doing (the item's folder is shared on
                // one machine): not this worker's end.
                result: ClaimResult::Dropped(format!(
                    "the claim was lost while it ran, then it failed: {e}"
                )),
                secs: 0.0,
                took_over: c.took_over(),
            },
            Err(Error::Interrupted { signal, name, .. }) => {
                // The phase goes back to the queue at once, when the database can be reached.
                let kept = db
                    .run(|d| d.release(&queue, c.token))
                    .err()
                    .map(|e| Unreleased {
                        item: &c.item,
                        lease: w.lease,
                        // Stopped while reconnecting: the database was away.
                        why: match e {
                            Error::Interrupted { .. } => "the queue database is away".into(),
                            e => e.to_string(),
                        },
                    });
                return Err(interrupted(signal, name, &queue, kept));
            }
            Err(e) if c.attempt >= MAX_BROKEN_CLAIMS => {
                // The same item broke this many claims: it fails, instead of stopping every
                // worker that takes it next, one after another.
                let around = db
                    .run(|d| d.neighbours(&queue, &c.item))
                    .unwrap_or_default();
                let mut st = engine.prepare_state(&c.item, c.state.clone(), around);
                let reason = format!(
                    "claimed {} times without an outcome; the last claim ended in an error: {e}",
                    c.attempt
                );
                st.status = Progress::Failed;
                st.failure = Some(reason.clone());
                let line = finish(
                    &engine,
                    &mut db,
                    &c,
                    (&worker, &w.host),
                    held,
                    (None, c.attempt),
                    &st,
                    Vec::new(),
                    ClaimResult::Failed(reason),
                    Instant::now(),
                );
                if let Ok(line) = &line {
                    log(line);
                }
                return Err(e);
            }
            Err(e) => {
                // The phase goes back to the queue at once, for another worker to try.
                let _ = db.run(|d| d.release(&queue, c.token));
                return Err(e);
            }
        };
        {
            let mut rep = guard(report);
            rep.claims += 1;
            rep.agent_calls += calls.agent_calls;
            match &line.result {
                ClaimResult::Complete => rep.complete += 1,
                ClaimResult::Failed(_) => rep.failed += 1,
                ClaimResult::Dropped(_) => rep.dropped += 1,
            }
        }
        match &line.result {
            ClaimResult::Failed(_) => failed += 1,
            ClaimResult::Complete => done += 1,
            ClaimResult::Dropped(_) => {}
        }
        log(&line);
    }
    let _ = crate::lock(&engine.journal).log(Entry::RunFinished {
        done,
        failed,
        skipped: 0,
    });
    match crate::interrupt::received() {
        Some(sig) => Err(interrupted(sig, crate::interrupt::name(sig), &queue, None)),
        None => Ok(()),
    }
}

/// Claims of one item that may end in an error (not a failed phase: baton's own, e.g. its
/// files) before the item fails.
const MAX_BROKEN_CLAIMS: i32 = 3;

/// A claim a stopped worker could not give back (the database was away).
struct Unreleased<'a> {
    item: &'a str,
    lease: Duration,
    why: String,
}

/// A signal stopped the worker: its claims went back to the queue, or one is kept until its
/// lease ends.
fn interrupted(signal: i32, name: String, queue: &str, kept: Option<Unreleased>) -> Error {
    let again = format!("Start it again: baton worker --queue {queue}");
    let hint = match kept {
        None => format!("the worker stopped and released its claims; other workers go on. {again}"),
        Some(k) => format!(
            "the worker stopped, but its claim on {} could not be released ({}): another worker \
             takes that phase over when its lease ends, within {} s. {again}",
            k.item,
            k.why,
            k.lease.as_secs()
        ),
    };
    Error::Interrupted {
        signal,
        name,
        hint: Some(hint),
    }
}

/// One claim: materialize, run the item's next phase, record.
fn run_claim(
    engine: &mut VerifyEngine,
    db: &mut Link,
    c: &Claimed,
    (worker, host): (&str, &str),
    held: &Held,
    calls: &mut Report,
) -> Result<ClaimLog> {
    let started = Instant::now();
    let queue = engine.opts.queue.clone();
    let item = c.item.as_str();
    let around = db.run(|d| d.neighbours(&queue, item))?;
    let mut st = engine.prepare_state(item, c.state.clone(), around);
    // The id names a directory: one put in the database by other means than `queue add` must
    // be valid, and its state readable, else the item fails (every worker would refuse it).
    let invalid = super::queue::check_item(item)
        .err()
        .map(|e| e.to_string())
        .or_else(|| c.unreadable.clone());
    if let Some(reason) = invalid {
        st.status = Progress::Failed;
        st.failure = Some(reason.clone());
        return finish(
            engine,
            db,
            c,
            (worker, host),
            held,
            (None, c.attempt),
            &st,
            Vec::new(),
            ClaimResult::Failed(reason),
            started,
        );
    }
    let ph = engine
        .pipeline
        .phases
        .iter()
        .find(|p| st.phases[&p.id].status != Progress::Complete)
        .cloned();
    let item_dir = engine.queues.item_dir(&queue, item);
    baton_core::fs::create_dir_all(&item_dir)?;
    let path = item_dir.join(state::FILE_NAME);
    let Some(ph) = ph else {
        // Every phase the pipeline has is complete (it lost phases since): the item is.
        st.status = Progress::Complete;
        st.next = engine.next_line(&st);
        st.save(&path)?;
        return finish(
            engine,
            db,
            c,
            (worker, host),
            held,
            (None, c.attempt),
            &st,
            Vec::new(),
            ClaimResult::Complete,
            started,
        );
    };
    db.run(|d| d.set_phase(c.token, &ph.id))?;
    stop_orphan(engine, c, worker, host);
    // The phase's attempt number counts every claim of it, taken-over ones too.
    if let Some(ps) = st.phases.get_mut(&ph.id) {
        ps.attempts = ps.attempts.max(c.attempt.max(1) as u32 - 1);
        ps.status = Progress::NotStarted;
    }
    // The database is the truth: what a dead or overtaken claim left on this machine goes.
    let output = item_dir.join(ph.output_for(item));
    if output.is_file() {
        std::fs::remove_file(&output).map_err(|e| Error::io(&output, e))?;
    }
    let inputs = engine.input_names(&ph, item);
    for (name, body) in db.run(|d| d.files(&queue, item, &inputs))? {
        baton_core::fs::write_atomic(&item_dir.join(&name), &body)?;
    }
    let mut ctx = Context::fresh(&engine.opts.config, &st.to_text());
    st.context_estimate = ctx.estimate();
    st.save(&path)?;
    let result = engine.run_phase(item, &ph, &path, &mut st, &mut ctx, calls)?;
    // The heartbeat gave the claim up (its lease could not be renewed) and stopped the agent:
    // what the phase made of that is not its result. The phase goes back to the queue.
    if !guard(held).contains_key(&c.token) {
        db.run(|d| d.release(&queue, c.token))?;
        return Ok(ClaimLog {
            worker: worker.into(),
            item: c.item.clone(),
            phase: ph.id.clone(),
            attempt: c.attempt,
            result: ClaimResult::Dropped(
                "its lease ran out before the heartbeat could renew it; the phase goes back to the queue".into(),
            ),
            secs: started.elapsed().as_secs_f64(),
            took_over: c.took_over(),
        });
    }
    let (files, outcome) = match &result {
        PhaseResult::Complete => {
            if engine
                .pipeline
                .phases
                .iter()
                .all(|p| st.phases[&p.id].status == Progress::Complete)
            {
                st.status = Progress::Complete;
            }
            let body = std::fs::read(&output).map_err(|e| Error::io(&output, e))?;
            (vec![(ph.output_for(item), body)], ClaimResult::Complete)
        }
        PhaseResult::Failed(reason) => {
            let reason = format!("phase {}: {reason}", ph.id);
            st.status = Progress::Failed;
            st.failure = Some(reason.clone());
            (Vec::new(), ClaimResult::Failed(reason))
        }
    };
    st.next = engine.next_line(&st);
    st.save(&path)?;
    // The attempt the phase's last agent call was (takeovers and the format retry count).
    let attempt = st.phases[&ph.id].attempts as i32;
    finish(
        engine,
        db,
        c,
        (worker, host),
        held,
        (Some(&ph.id), attempt),
        &st,
        files,
        outcome,
        started,
    )
}

/// The end of a claim: its outcome, the item's state and the phase's files recorded in the
/// transaction that ends the claim (dropped when the lease was lost), the item's end in the
/// journal when it has ended; the claim's log line.
#[allow(clippy::too_many_arguments)]
fn finish(
    engine: &VerifyEngine,
    db: &mut Link,
    c: &Claimed,
    (worker, host): (&str, &str),
    held: &Held,
    (phase, attempt): (Option<&str>, i32),
    st: &state::State,
    files: Vec<(String, Vec<u8>)>,
    outcome: ClaimResult,
    started: Instant,
) -> Result<ClaimLog> {
    let reason = match &outcome {
        ClaimResult::Failed(r) => Some(r.as_str()),
        _ => None,
    };
    // No longer renewed from here on (see `heartbeat`): the record ends the claim.
    guard(held).remove(&c.token);
    let outcome_row = Outcome {
        queue: &engine.opts.queue,
        item: &c.item,
        token: c.token,
        phase,
        attempt,
        worker,
        host,
        result: reason.map_or(Ok(()), Err),
        state: st,
        files,
    };
    let rec = db.run(|d| d.record(&outcome_row))?;
    if rec == Recorded::Recorded
        && (st.status == Progress::Complete || st.status == Progress::Failed)
    {
        let subject = Subject::item(&c.item);
        let result = if st.status == Progress::Complete {
            SubjectResult::Done
        } else {
            SubjectResult::Failed
        };
        crate::lock(&engine.journal).log(Entry::SubjectFinished {
            subject: subject.clone(),
            result,
            reason: st.failure.clone().unwrap_or_default(),
        })?;
        engine.reporter.report(&RunEvent::SubjectFinished {
            subject: &subject,
            result,
            reason: st.failure.as_deref().unwrap_or(""),
            commit: None,
            tokens: st.tokens_burned(),
            cost_usd: 0.0,
        });
    }
    Ok(ClaimLog {
        worker: worker.into(),
        item: c.item.clone(),
        phase: phase.unwrap_or("-").into(),
        attempt,
        result: dropped_or(rec, outcome),
        secs: started.elapsed().as_secs_f64(),
        took_over: c.took_over(),
    })
}

/// A claim taken over from a worker of this host: the agent that worker started may still run
/// (its own process group outlives a SIGKILLed worker) and would write into the item's
/// directory with ours. It is stopped first, from the markers in that worker's run journal.
fn stop_orphan(engine: &VerifyEngine, c: &Claimed, worker: &str, host: &str) {
    let Some(prev) = &c.previous else { return };
    let plain = !prev.run_id.is_empty()
        && prev
            .run_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if prev.host != host || !plain {
        return;
    }
    // Queues::dir is `<local>/queues`: the runs are beside it.
    let dir = engine
        .queues
        .dir
        .parent()
        .map(|local| Journal::runs_dir(local).join(&prev.run_id).join("logs"));
    for note in dir
        .map(|d| baton_agent::stop_orphans(&d))
        .unwrap_or_default()
    {
        baton_core::notice::said(format!(
            "{worker}: {note} ({} took over from {})",
            c.item,
            c.took_over().unwrap_or_default()
        ));
    }
}

fn dropped_or(rec: Recorded, r: ClaimResult) -> ClaimResult {
    match rec {
        Recorded::Recorded => r,
        Recorded::Lost { holder } => ClaimResult::Dropped(match holder {
            Some(h) => format!("the lease expired and {h} took the phase over"),
            None => "the lease expired and another worker took the phase over".into(),
        }),
    }
}
