//! Every transition of the task state machine and every row of the gate decisions' routing table.

use super::*;

struct Sim {
    m: Option<Manifest>,
    seq: u64,
    clock: i64,
}

impl Sim {
    fn new(mode: Mode) -> Sim {
        let mut s = Sim {
            m: None,
            seq: 0,
            clock: 1_700_000_000_000,
        };
        s.ok(EventKind::TaskCreated {
            name: "t".into(),
            mode,
            workflow: Workflow::Orchestrate,
        });
        s
    }
    fn event(&mut self, kind: EventKind) -> Event {
        self.seq += 1;
        self.clock += 1000;
        let ts = Timestamp::from_millisecond(self.clock)
            .unwrap()
            .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        Event {
            v: EVENT_FORMAT,
            seq: self.seq,
            ts,
            kind,
        }
    }
    fn try_(&mut self, kind: EventKind) -> Result<Effect> {
        let e = self.event(kind);
        let before = self.m.clone();
        match apply(self.m.as_ref(), &e) {
            Ok((m, eff)) => {
                self.m = Some(m);
                Ok(eff)
            }
            Err(err) => {
                assert_eq!(
                    self.m, before,
                    "a rejected event must leave state unchanged"
                );
                self.seq -= 1;
                self.clock -= 1000;
                Err(err)
            }
        }
    }
    fn ok(&mut self, kind: EventKind) -> Effect {
        self.try_(kind).unwrap()
    }
    fn err(&mut self, kind: EventKind) -> String {
        let e = self.try_(kind).unwrap_err();
        // A refusal of the state machine, typed as such, and a state error (exit 3).
        assert!(matches!(e, crate::Error::Refused { .. }), "{e:?}");
        assert_eq!(
            baton_core::error::Fault::exit_code(&e),
            3,
            "transition errors are state errors: {e}"
        );
        e.to_string()
    }
    fn m(&self) -> &Manifest {
        self.m.as_ref().unwrap()
    }
    fn start(&mut self, p: &str) -> Effect {
        self.ok(EventKind::PhaseStarted {
            phase: p.into(),
            task_id: None,
        })
    }
    fn end(&mut self, p: &str, status: PhaseStatus) -> Effect {
        self.ok(EventKind::PhaseEnded {
            phase: p.into(),
            task_id: None,
            status,
        })
    }
    fn gate(&mut self, gate: Gate) {
        self.ok(EventKind::GateSet {
            gate,
            prompt: "look".into(),
            artifacts: vec!["architect.md".into()],
        });
    }
    fn pause(&mut self) {
        self.ok(EventKind::Paused {
            reason: "tests fail".into(),
            recommendations: vec!["a".into()],
        });
    }
    fn decide(&mut self, d: Decision) -> Result<Effect> {
        self.try_(EventKind::Resumed {
            decision: d,
            investigation_summary: Some("found X".into()),
        })
    }
}

fn start(p: &str) -> EventKind {
    EventKind::PhaseStarted {
        phase: p.into(),
        task_id: None,
    }
}
fn end(p: &str, status: PhaseStatus) -> EventKind {
    EventKind::PhaseEnded {
        phase: p.into(),
        task_id: None,
        status,
    }
}
fn decide(d: Decision) -> EventKind {
    EventKind::Resumed {
        decision: d,
        investigation_summary: None,
    }
}

#[test]
fn init_gives_running_task_with_manifest_fields() {
    let s = Sim::new(Mode::Standard);
    let m = s.m();
    assert_eq!(m.status, Status::Running);
    assert_eq!(m.version, 1);
    assert!(m.running_phases.is_empty() && m.completed_phases.is_empty());
    let v = serde_json::to_value(m).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    for k in [
        "name",
        "mode",
        "workflow",
        "status",
        "current_phase",
        "running_phases",
        "completed_phases",
        "failure_context",
        "gate_context",
        "shelf_context",
        "metrics",
        "waves",
        "created_at",
        "updated_at",
        "version",
    ] {
        assert!(keys.contains(&k), "missing {k}");
    }
    assert_eq!(
        keys.len(),
        15,
        "exactly the manifest format's fields plus version: {keys:?}"
    );
}

#[test]
fn init_twice_is_refused() {
    let mut s = Sim::new(Mode::Standard);
    let msg = s.err(EventKind::TaskCreated {
        name: "t".into(),
        mode: Mode::Poc,
        workflow: Workflow::Poc,
    });
    assert!(msg.contains("already exists"));
}

#[test]
fn events_before_init_are_refused() {
    let e = Event {
        v: 1,
        seq: 1,
        ts: "2026-01-01T00:00:00Z".into(),
        kind: start("architect"),
    };
    let err = apply(None, &e).unwrap_err();
    assert!(err.to_string().contains("no task"));
}

#[test]
fn start_and_end_record_duration_attempts_and_retries() {
    let mut s = Sim::new(Mode::Standard);
    s.start("architect");
    assert_eq!(s.m().current_phase.as_deref(), Some("architect"));
    assert_eq!(s.m().running_phases.len(), 1);
    let eff = s.end("architect", PhaseStatus::Failed);
    assert_eq!(eff.duration_ms, Some(1000));
    assert_eq!(s.m().metrics.total_retries, 1);
    assert_eq!(s.m().current_phase, None);
    s.start("architect");
    assert_eq!(s.m().running_phases[0].attempt, 2);
    s.end("architect", PhaseStatus::Success);
    let c: Vec<_> = s.m().completed_phases.iter().cloned().collect();
    assert_eq!(
        (c.len(), c[1].attempt, c[1].status),
        (2, 2, PhaseStatus::Success)
    );
    assert_eq!(
        s.m().metrics.total_retries,
        1,
        "success does not count as a retry"
    );
    assert_eq!(s.m().metrics.total_duration_ms, Some(2000));
    assert_eq!(s.m().metrics.parallelization_savings_ms, Some(0));
}

#[test]
fn parallel_phases_and_savings() {
    let mut s = Sim::new(Mode::Standard);
    for id in ["1", "2", "3"] {
        s.ok(EventKind::PhaseStarted {
            phase: "implementation".into(),
            task_id: Some(id.into()),
        });
    }
    assert_eq!(s.m().current_phase.as_deref(), Some("implementation#3"));
    let msg = s.err(EventKind::PhaseStarted {
        phase: "implementation".into(),
        task_id: Some("2".into()),
    });
    assert!(msg.contains("already running"), "{msg}");
    for id in ["1", "2", "3"] {
        s.ok(EventKind::PhaseEnded {
            phase: "implementation".into(),
            task_id: Some(id.into()),
            status: PhaseStatus::Success,
        });
    }
    // Started at t+1,2,3 s and ended at t+4,5,6 s: each ran 3 s, busy span 5 s.
    let d: Vec<u64> = s
        .m()
        .completed_phases
        .iter()
        .map(|c| c.duration_ms)
        .collect();
    assert_eq!(d, vec![3000, 3000, 3000]);
    assert_eq!(s.m().metrics.total_duration_ms, Some(5000));
    assert_eq!(s.m().metrics.parallelization_savings_ms, Some(4000));
}

#[test]
fn end_of_a_phase_that_is_not_running_is_refused() {
    let mut s = Sim::new(Mode::Standard);
    let msg = s.err(end("spec", PhaseStatus::Success));
    assert!(
        msg.contains("not running") && msg.contains("no phase is running"),
        "{msg}"
    );
    s.start("architect");
    let msg = s.err(end("spec", PhaseStatus::Success));
    assert!(msg.contains("running: architect"), "{msg}");
}

#[test]
fn pause_needs_all_phases_ended() {
    let mut s = Sim::new(Mode::Standard);
    s.start("architect");
    let msg = s.err(EventKind::Paused {
        reason: "r".into(),
        recommendations: vec![],
    });
    assert!(msg.contains("still running: architect"), "{msg}");
    s.end("architect", PhaseStatus::Failed);
    s.pause();
    let f = s.m().failure_context.clone().unwrap();
    assert_eq!(f.failed_phase.as_deref(), Some("architect"));
    assert_eq!(s.m().status, Status::Paused);
}

#[test]
fn gate_needs_all_phases_ended() {
    let mut s = Sim::new(Mode::Standard);
    s.start("architect");
    let msg = s.err(EventKind::GateSet {
        gate: Gate::Design,
        prompt: "p".into(),
        artifacts: vec![],
    });
    assert!(msg.contains("still running"), "{msg}");
}

#[test]
fn no_phase_starts_while_paused_gated_or_finished() {
    let mut s = Sim::new(Mode::Standard);
    s.pause();
    assert!(s.err(start("spec")).contains("paused"));
    let mut s = Sim::new(Mode::Standard);
    s.gate(Gate::Design);
    assert!(s.err(start("spec")).contains("waiting at the design gate"));
    for (gate, d, status) in [
        (Gate::Final, Decision::Approve, "completed"),
        (Gate::Final, Decision::Reject, "failed"),
        (Gate::Investigation, Decision::Cancel, "cancelled"),
        (Gate::Investigation, Decision::Shelf, "shelved"),
    ] {
        let mut s = Sim::new(Mode::Standard);
        s.gate(gate);
        s.decide(d).unwrap();
        let msg = s.err(start("spec"));
        assert!(msg.contains(status), "{msg}");
        assert!(
            s.err(EventKind::Paused {
                reason: "x".into(),
                recommendations: vec![]
            })
            .contains(status)
        );
    }
}

#[test]
fn routing_design_gate() {
    let mut s = Sim::new(Mode::Standard);
    s.gate(Gate::Design);
    assert_eq!(s.m().status, Status::WaitingGate);
    assert!(s.m().gate_context.is_some());
    let eff = s.decide(Decision::Approve).unwrap();
    assert_eq!(eff.continue_at.as_deref(), Some("spec"));
    assert_eq!(s.m().status, Status::Running);
    assert!(s.m().gate_context.is_none(), "resume clears the gate");
}

#[test]
fn routing_investigation_full() {
    let mut s = Sim::new(Mode::Standard);
    s.gate(Gate::Investigation);
    let eff = s.decide(Decision::Full).unwrap();
    assert_eq!(eff.continue_at.as_deref(), Some("spec"));
    assert_eq!(
        (s.m().status, s.m().workflow),
        (Status::Running, Workflow::Orchestrate)
    );
}

#[test]
fn routing_investigation_lite_switches_to_poc() {
    let mut s = Sim::new(Mode::Standard);
    s.gate(Gate::Investigation);
    let eff = s.decide(Decision::Lite).unwrap();
    assert_eq!(eff.continue_at.as_deref(), Some("implementation"));
    assert_eq!(s.m().workflow, Workflow::Poc);
    assert_eq!(s.m().mode, Mode::Poc);
    assert_eq!(s.m().status, Status::Running);
}

#[test]
fn routing_investigation_shelf_fills_shelf_context() {
    let mut s = Sim::new(Mode::Standard);
    s.start("architect");
    s.end("architect", PhaseStatus::Success);
    s.start("design-audit");
    s.end("design-audit", PhaseStatus::Success);
    s.gate(Gate::Investigation);
    let eff = s.decide(Decision::Shelf).unwrap();
    assert_eq!(eff.continue_at, None);
    assert_eq!(s.m().status, Status::Shelved);
    let sh = s.m().shelf_context.clone().unwrap();
    assert_eq!(sh.investigation_summary, "found X");
    assert_eq!(sh.shelved_phase, "design-audit");
    assert_eq!(sh.completed_phases, vec!["architect", "design-audit"]);
    assert_eq!(sh.shelved_at, s.m().updated_at);
}

#[test]
fn routing_investigation_cancel() {
    let mut s = Sim::new(Mode::Standard);
    s.gate(Gate::Investigation);
    assert_eq!(s.decide(Decision::Cancel).unwrap().continue_at, None);
    assert_eq!(s.m().status, Status::Cancelled);
}

#[test]
fn routing_final_approve_completes() {
    let mut s = Sim::new(Mode::Standard);
    s.gate(Gate::Final);
    s.decide(Decision::Approve).unwrap();
    assert_eq!(s.m().status, Status::Completed);
}

#[test]
fn routing_paused_retry_continues_from_failure_point() {
    let mut s = Sim::new(Mode::Standard);
    s.start("architect");
    s.end("architect", PhaseStatus::Success);
    s.start("spec");
    s.end("spec", PhaseStatus::Failed);
    s.pause();
    let eff = s.decide(Decision::Retry).unwrap();
    assert_eq!(eff.continue_at.as_deref(), Some("spec"));
    assert_eq!(s.m().status, Status::Running);
    assert!(s.m().failure_context.is_none());
    // A pause with no failed phase continues after the last completed phase.
    s.start("spec");
    s.end("spec", PhaseStatus::Success);
    s.pause();
    assert_eq!(
        s.decide(Decision::Retry).unwrap().continue_at.as_deref(),
        Some("after spec")
    );
}

#[test]
fn routing_reject_fails_from_every_stop() {
    for gate in [
        Some(Gate::Design),
        Some(Gate::Investigation),
        Some(Gate::Final),
        None,
    ] {
        let mut s = Sim::new(Mode::Standard);
        match gate {
            Some(g) => s.gate(g),
            None => s.pause(),
        }
        assert_eq!(s.decide(Decision::Reject).unwrap().continue_at, None);
        assert_eq!(s.m().status, Status::Failed, "{gate:?}");
    }
}

#[test]
fn decisions_that_do_not_fit_are_refused() {
    let cases: &[(Option<Gate>, &[Decision])] = &[
        (
            Some(Gate::Design),
            &[
                Decision::Retry,
                Decision::Full,
                Decision::Lite,
                Decision::Shelf,
                Decision::Cancel,
            ],
        ),
        (
            Some(Gate::Investigation),
            &[Decision::Approve, Decision::Retry],
        ),
        (
            Some(Gate::Final),
            &[
                Decision::Retry,
                Decision::Full,
                Decision::Lite,
                Decision::Shelf,
                Decision::Cancel,
            ],
        ),
        (
            None,
            &[
                Decision::Approve,
                Decision::Full,
                Decision::Lite,
                Decision::Shelf,
                Decision::Cancel,
            ],
        ),
    ];
    for (gate, bad) in cases {
        for d in *bad {
            let mut s = Sim::new(Mode::Standard);
            match gate {
                Some(g) => s.gate(*g),
                None => s.pause(),
            }
            let msg = s.err(decide(*d));
            assert!(msg.contains("does not fit"), "{gate:?} {d}: {msg}");
        }
    }
}

#[test]
fn resume_with_nothing_to_resume() {
    let mut s = Sim::new(Mode::Standard);
    let msg = s.err(decide(Decision::Approve));
    assert!(msg.contains("nothing to resume"), "{msg}");
}

#[test]
fn artifacts_debt_only_in_poc_and_not_after_the_end() {
    let stored = |phase: &str| EventKind::ArtifactStored {
        phase: phase.into(),
        path: format!("{phase}.md"),
        task_id: None,
        iteration: None,
        bytes: 3,
        content: None,
    };
    let mut s = Sim::new(Mode::Standard);
    assert!(s.err(stored("debt")).contains("only in poc mode"));
    s.ok(stored("architect"));
    let mut p = Sim::new(Mode::Poc);
    p.ok(stored("debt"));
    s.gate(Gate::Final);
    s.decide(Decision::Approve).unwrap();
    assert!(s.err(stored("spec")).contains("completed"));
}

#[test]
fn version_and_updated_at_follow_the_event() {
    let mut s = Sim::new(Mode::Standard);
    s.start("architect");
    assert_eq!(s.m().version, 2);
    assert_ne!(s.m().created_at, s.m().updated_at);
}

#[test]
fn clock_going_backwards_gives_zero_not_a_panic() {
    assert_eq!(
        millis_between("2026-01-01T00:00:01Z", "2026-01-01T00:00:00Z"),
        0
    );
    assert_eq!(millis_between("garbage", "2026-01-01T00:00:00Z"), 0);
    assert_eq!(
        millis_between("2026-01-01T00:00:00Z", "2026-01-01T00:00:01.5Z"),
        1500
    );
}

#[test]
fn fast_timestamps_agree_with_jiff() {
    for ms in [
        0i64,
        1,
        999,
        951_782_400_000,
        1_700_000_000_123,
        4_102_444_799_999,
        1_709_164_800_000,
    ] {
        let t = Timestamp::from_millisecond(ms).unwrap();
        let fixed = t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
        assert_eq!(fixed.len(), 24, "{fixed}");
        assert_eq!(epoch_ms(&fixed), Some(ms), "{fixed}");
        assert_eq!(epoch_ms(&t.to_string()), Some(ms), "jiff's own form: {t}");
    }
    assert_eq!(epoch_ms("2026-13-01T00:00:00.000Z"), None);
    assert_eq!(epoch_ms("not a time"), None);
}

#[test]
fn incremental_busy_time_equals_the_union_of_all_intervals() {
    let mut seed = 42u64;
    let mut rnd = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut s = Sim::new(Mode::Standard);
    let mut running: Vec<String> = vec![];
    for i in 0..400 {
        if running.is_empty() || (running.len() < 6 && rnd(2) == 0) {
            let id = format!("{i}");
            s.ok(EventKind::PhaseStarted {
                phase: "impl".into(),
                task_id: Some(id.clone()),
            });
            running.push(id);
        } else {
            let id = running.remove(rnd(running.len() as u64) as usize);
            s.ok(EventKind::PhaseEnded {
                phase: "impl".into(),
                task_id: Some(id),
                status: PhaseStatus::Success,
            });
        }
        // Idle gaps between bursts.
        if rnd(10) == 0 {
            s.clock += 5000;
        }
    }
    let mut spans: Vec<(i64, i64)> = s
        .m()
        .completed_phases
        .iter()
        .map(|c| {
            (
                epoch_ms(&c.started_at).unwrap(),
                epoch_ms(&c.ended_at).unwrap(),
            )
        })
        .collect();
    spans.sort();
    let mut busy = 0;
    let mut cur = spans[0];
    for &(a, b) in &spans[1..] {
        if a <= cur.1 {
            cur.1 = cur.1.max(b);
        } else {
            busy += cur.1 - cur.0;
            cur = (a, b);
        }
    }
    busy += cur.1 - cur.0;
    let sum: i64 = spans.iter().map(|(a, b)| b - a).sum();
    assert!(spans.len() > 150);
    assert_eq!(s.m().metrics.total_duration_ms, Some(busy as u64));
    assert_eq!(
        s.m().metrics.parallelization_savings_ms,
        Some((sum - busy) as u64)
    );
    assert!(sum > busy, "the run had overlap to save");
}

#[test]
fn waves_are_recorded_in_order_and_only_while_running() {
    let mut s = Sim::new(Mode::Standard);
    let wave = serde_json::json!({"wave": 1, "tasks": ["1"], "wall_ms": 5, "savings_ms": 0});
    let msg = s.err(EventKind::WaveExecuted { wave: wave.clone() });
    assert!(msg.contains("no task breakdown"), "{msg}");
    let breakdown = serde_json::json!({"tasks": [{"id": "1", "depends_on": []}], "waves": [["1"]]});
    s.ok(EventKind::WavesRecorded {
        task_breakdown: breakdown.clone(),
    });
    s.ok(EventKind::WaveExecuted { wave: wave.clone() });
    assert_eq!(s.m().waves.task_breakdown, Some(breakdown));
    assert_eq!(s.m().waves.execution, vec![wave.clone()]);
    let v = serde_json::to_value(s.m()).unwrap();
    assert_eq!(v["waves"]["execution"][0]["wall_ms"], 5);
    s.gate(Gate::Final);
    let msg = s.err(EventKind::WaveExecuted { wave });
    assert!(msg.contains("waiting at the final gate"), "{msg}");
    assert_eq!(s.m().waves.execution.len(), 1);
}
