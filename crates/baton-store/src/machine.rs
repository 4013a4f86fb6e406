//! The task state machine: pure, no IO. `apply` validates one event against the manifest and
//! returns the next manifest. The same function checks a command before its event is written
//! and replays the log when a manifest is rebuilt, so what is accepted and what is replayed
//! can never disagree.

use jiff::Timestamp;

use super::model::*;
use crate::error::{Error, Result};

/// What applying an event tells the caller beyond the new manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Effect {
    /// For a phase that ended: its duration.
    pub duration_ms: Option<u64>,
    /// For a resume: the phase the workflow continues at (None when the task stopped).
    pub continue_at: Option<String>,
}

/// Apply `event` to `state` (None before the task exists). On error nothing changes.
pub fn apply(state: Option<&Manifest>, event: &Event) -> Result<(Manifest, Effect)> {
    match state {
        None => create(event).map(|m| (m, Effect::default())),
        Some(m) => {
            let mut m = m.clone();
            let effect = step(&mut m, event)?;
            Ok((m, effect))
        }
    }
}

/// The first event of a log: it must create the task.
pub fn create(event: &Event) -> Result<Manifest> {
    let EventKind::TaskCreated {
        name,
        mode,
        workflow,
    } = &event.kind
    else {
        return Err(
            Error::refused("no task: the event log does not start with task_created")
                .hint("create the task first: baton task init <name>"),
        );
    };
    Ok(Manifest {
        name: name.clone(),
        mode: *mode,
        workflow: *workflow,
        status: Status::Running,
        current_phase: None,
        running_phases: vec![],
        completed_phases: Default::default(),
        failure_context: None,
        gate_context: None,
        shelf_context: None,
        metrics: Metrics::default(),
        waves: Waves::default(),
        created_at: event.ts.clone(),
        updated_at: event.ts.clone(),
        version: event.seq,
    })
}

/// Apply one event to an existing task in place, without copying it (the manifest of a long
/// task is large). Every rule is checked before anything is changed, so on error `m` is
/// exactly as it was.
pub fn step(m: &mut Manifest, event: &Event) -> Result<Effect> {
    if let EventKind::TaskCreated { name, .. } = &event.kind {
        return Err(Error::refused(format!("task `{name}` already exists"))
            .hint("pick another name, or work on the existing task with --task"));
    }
    let effect = transition(m, &event.kind, &event.ts)?;
    m.updated_at = event.ts.clone();
    m.version = event.seq;
    Ok(effect)
}

fn transition(m: &mut Manifest, kind: &EventKind, ts: &str) -> Result<Effect> {
    match kind {
        EventKind::TaskCreated { .. } => unreachable!("handled by apply"),
        EventKind::PhaseStarted { phase, task_id } => {
            require_running(m, &format!("start phase `{phase}`"))?;
            let label = phase_label(phase, task_id.as_deref());
            if m.running_phases.iter().any(|r| r.label() == label) {
                return Err(
                    Error::refused(format!("phase `{label}` is already running")).hint(format!(
                        "end it first: baton phase end {phase} --status success|failed"
                    )),
                );
            }
            let attempt = 1 + m.completed_phases.attempts(phase, task_id.as_deref()) as u32;
            m.running_phases.push(RunningPhase {
                phase: phase.clone(),
                task_id: task_id.clone(),
                started_at: ts.to_string(),
                attempt,
            });
            m.current_phase = Some(label);
            Ok(Effect::default())
        }
        EventKind::PhaseEnded {
            phase,
            task_id,
            status,
        } => {
            let label = phase_label(phase, task_id.as_deref());
            let Some(idx) = m.running_phases.iter().position(|r| r.label() == label) else {
                let running: Vec<String> = m.running_phases.iter().map(|r| r.label()).collect();
                let msg = if running.is_empty() {
                    format!("phase `{label}` is not running (no phase is running)")
                } else {
                    format!(
                        "phase `{label}` is not running (running: {})",
                        running.join(", ")
                    )
                };
                return Err(
                    Error::refused(msg).hint(format!("start it first: baton phase start {phase}"))
                );
            };
            let run = m.running_phases.remove(idx);
            let duration_ms = millis_between(&run.started_at, ts);
            add_busy_time(m, &run.started_at, ts, duration_ms);
            m.completed_phases.push(CompletedPhase {
                phase: run.phase,
                task_id: run.task_id,
                status: *status,
                started_at: run.started_at,
                ended_at: ts.to_string(),
                duration_ms,
                attempt: run.attempt,
            });
            if *status == PhaseStatus::Failed {
                m.metrics.total_retries += 1;
            }
            if m.current_phase.as_deref() == Some(label.as_str()) {
                m.current_phase = m.running_phases.last().map(|r| r.label());
            }
            Ok(Effect {
                duration_ms: Some(duration_ms),
                continue_at: None,
            })
        }
        EventKind::ArtifactStored { phase, .. } => {
            if m.status.is_terminal() {
                return Err(Error::refused(format!(
                    "task `{}` is {}: no more artifacts can be stored",
                    m.name, m.status
                ))
                .hint("start a new task with baton task init"));
            }
            if phase == "debt" && m.mode != Mode::Poc {
                return Err(Error::refused(format!(
                    "`debt` is stored only in poc mode; task `{}` is in {} mode",
                    m.name, m.mode
                ))
                .hint(
                    "debt.md records shortcuts of a proof of concept; a standard task has none",
                ));
            }
            Ok(Effect::default())
        }
        EventKind::Paused {
            reason,
            recommendations,
        } => {
            require_stoppable(m, "pause")?;
            let failed_phase = m
                .completed_phases
                .last()
                .filter(|c| c.status == PhaseStatus::Failed)
                .map(|c| c.phase.clone());
            m.status = Status::Paused;
            m.failure_context = Some(FailureContext {
                reason: reason.clone(),
                recommendations: recommendations.clone(),
                failed_phase,
                paused_at: ts.to_string(),
            });
            Ok(Effect::default())
        }
        EventKind::GateSet {
            gate,
            prompt,
            artifacts,
        } => {
            require_stoppable(m, &format!("set the {gate} gate"))?;
            m.status = Status::WaitingGate;
            m.gate_context = Some(GateContext {
                gate: *gate,
                prompt: prompt.clone(),
                artifacts: artifacts.clone(),
                set_at: ts.to_string(),
            });
            Ok(Effect::default())
        }
        EventKind::Resumed {
            decision,
            investigation_summary,
        } => resume(m, *decision, investigation_summary.as_deref(), ts),
        EventKind::WavesRecorded { task_breakdown } => {
            require_running(m, "record the task breakdown")?;
            m.waves.task_breakdown = Some(task_breakdown.clone());
            Ok(Effect::default())
        }
        EventKind::WaveExecuted { wave } => {
            require_running(m, "record a wave")?;
            if m.waves.task_breakdown.is_none() {
                return Err(Error::refused(format!(
                    "task `{}` has no task breakdown: a wave cannot be recorded before it",
                    m.name
                )));
            }
            m.waves.execution.push(wave.clone());
            Ok(Effect::default())
        }
    }
}

/// The routing table of gate decisions (full, lite, shelf, cancel, reject: docs/ARCHITECTURE.md,
/// "Task workflows"), row by row.
fn resume(m: &mut Manifest, decision: Decision, summary: Option<&str>, ts: &str) -> Result<Effect> {
    use Decision::*;
    let go = |at: &str| Effect {
        duration_ms: None,
        continue_at: Some(at.to_string()),
    };
    let stop = Effect::default();
    let effect = match (m.status, m.gate_context.as_ref().map(|g| g.gate)) {
        (Status::Paused, _) => match decision {
            Retry => {
                let at = m
                    .failure_context
                    .as_ref()
                    .and_then(|f| f.failed_phase.clone())
                    .or_else(|| {
                        m.completed_phases
                            .last()
                            .map(|c| format!("after {}", c.phase))
                    })
                    .unwrap_or_else(|| "start".to_string());
                m.status = Status::Running;
                m.failure_context = None;
                go(&at)
            }
            Reject => {
                m.status = Status::Failed;
                stop
            }
            _ => return Err(misfit(decision, "a paused task", "retry, reject")),
        },
        (Status::WaitingGate, Some(Gate::Design)) => match decision {
            Approve => {
                m.status = Status::Running;
                go("spec")
            }
            Reject => {
                m.status = Status::Failed;
                stop
            }
            _ => return Err(misfit(decision, "the design gate", "approve, reject")),
        },
        (Status::WaitingGate, Some(Gate::Investigation)) => match decision {
            Full => {
                m.status = Status::Running;
                go("spec")
            }
            Lite => {
                m.status = Status::Running;
                m.workflow = Workflow::Poc;
                m.mode = Mode::Poc;
                go("implementation")
            }
            Shelf => {
                m.status = Status::Shelved;
                m.shelf_context = Some(ShelfContext {
                    investigation_summary: summary.unwrap_or_default().to_string(),
                    shelved_at: ts.to_string(),
                    shelved_phase: m
                        .completed_phases
                        .last()
                        .map(|c| c.label())
                        .unwrap_or_else(|| "investigation".to_string()),
                    completed_phases: m.completed_phases.iter().map(|c| c.label()).collect(),
                });
                stop
            }
            Cancel => {
                m.status = Status::Cancelled;
                stop
            }
            Reject => {
                m.status = Status::Failed;
                stop
            }
            _ => {
                return Err(misfit(
                    decision,
                    "the investigation gate",
                    "full, lite, shelf, cancel, reject",
                ));
            }
        },
        (Status::WaitingGate, Some(Gate::Final)) => match decision {
            Approve => {
                m.status = Status::Completed;
                stop
            }
            Reject => {
                m.status = Status::Failed;
                stop
            }
            _ => return Err(misfit(decision, "the final gate", "approve, reject")),
        },
        (status, _) => {
            return Err(Error::refused(format!(
                "nothing to resume: task `{}` is {status}, not paused or waiting at a gate",
                m.name
            ))
            .hint("RESUME answers a PAUSE or a SET_GATE; see `baton task summary`"));
        }
    };
    m.gate_context = None;
    Ok(effect)
}

fn misfit(decision: Decision, what: &str, fits: &str) -> Error {
    Error::refused(format!("decision `{decision}` does not fit {what}"))
        .hint(format!("decide one of: {fits}"))
}

fn require_running(m: &Manifest, action: &str) -> Result<()> {
    match m.status {
        Status::Running => Ok(()),
        Status::Paused => {
            let reason = m
                .failure_context
                .as_ref()
                .map(|f| f.reason.as_str())
                .unwrap_or("");
            Err(Error::refused(format!(
                "cannot {action}: task `{}` is paused ({reason})",
                m.name
            ))
            .hint("resume it first: baton resume --decision retry"))
        }
        Status::WaitingGate => {
            let gate = m
                .gate_context
                .as_ref()
                .map(|g| g.gate.as_str())
                .unwrap_or("?");
            Err(Error::refused(format!(
                "cannot {action}: task `{}` is waiting at the {gate} gate",
                m.name
            ))
            .hint("decide first: baton resume --decision <decision> (see baton task summary)"))
        }
        s => Err(
            Error::refused(format!("cannot {action}: task `{}` is {s}", m.name))
                .hint("start a new task with baton task init"),
        ),
    }
}

/// PAUSE and SET_GATE stop the task: it must be running with no phase in flight.
fn require_stoppable(m: &Manifest, action: &str) -> Result<()> {
    require_running(m, action)?;
    if !m.running_phases.is_empty() {
        let running: Vec<String> = m.running_phases.iter().map(|r| r.label()).collect();
        return Err(Error::refused(format!(
            "cannot {action}: phases still running: {}",
            running.join(", ")
        ))
        .hint("end every phase first: baton phase end <phase> --status success|failed"));
    }
    Ok(())
}

/// Milliseconds from `a` to `b`; 0 when either is unparseable or the clock went backwards.
pub fn millis_between(a: &str, b: &str) -> u64 {
    match (epoch_ms(a), epoch_ms(b)) {
        (Some(a), Some(b)) => (b - a).max(0) as u64,
        _ => 0,
    }
}

/// Milliseconds since the epoch of an RFC 3339 timestamp. baton writes the fixed form
/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, read here without a general parser because every END_PHASE
/// recomputes durations over all completed phases (cost must not grow with history);
/// anything else goes through jiff.
pub fn epoch_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let fixed = b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z';
    if !fixed {
        return s.parse::<Timestamp>().ok().map(|t| t.as_millisecond());
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        b[r].iter().try_fold(0i64, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
        })
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return s.parse::<Timestamp>().ok().map(|t| t.as_millisecond());
    }
    // Days from the civil date (H. Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms)
}

/// Add a phase that ran from `start` to `end` to the busy wall-clock time (the union of all
/// phase intervals) and to the savings of overlap, without rereading the whole history:
/// phases complete in time order (each end is stamped inside the task's lock), so only the
/// newest entries — those that ended after `start` — can overlap the new one. Were the clock
/// to step backwards the figures would be approximate, but replay computes exactly the same.
fn add_busy_time(m: &mut Manifest, start: &str, end: &str, duration_ms: u64) {
    let busy = m.metrics.total_duration_ms.unwrap_or(0);
    let sum = busy + m.metrics.parallelization_savings_ms.unwrap_or(0) + duration_ms;
    let new_busy = match (epoch_ms(start), epoch_ms(end)) {
        (Some(s), Some(e)) if e > s => {
            let mut spans: Vec<(i64, i64)> = Vec::new();
            for c in m.completed_phases.newest_first() {
                let (Some(cs), Some(ce)) = (epoch_ms(&c.started_at), epoch_ms(&c.ended_at)) else {
                    continue;
                };
                if ce <= s {
                    break;
                }
                let (a, b) = (cs.max(s), ce.min(e));
                if a < b {
                    spans.push((a, b));
                }
            }
            busy + (e - s - union_len(&mut spans)).max(0) as u64
        }
        _ => busy,
    };
    m.metrics.total_duration_ms = Some(new_busy);
    m.metrics.parallelization_savings_ms = Some(sum.saturating_sub(new_busy));
}

/// Total length covered by a set of intervals.
fn union_len(spans: &mut [(i64, i64)]) -> i64 {
    spans.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(i64, i64)> = None;
    for &(s, e) in spans.iter() {
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    total + cur.map_or(0, |(cs, ce)| ce - cs)
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
