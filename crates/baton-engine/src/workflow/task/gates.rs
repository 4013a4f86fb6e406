//! Pauses and gates: a phase that failed every attempt pauses the task; a gate waits for
//! the human decision, made by any process, and reads it back from the state it left.

use super::*;
use crate::definition::WorkflowKind;

/// How a gate ended for the run: a decision to act on, or a stop (waiting with --no-wait, a
/// task left in a state no decision explains).
pub(super) enum GateOutcome {
    Decided(Decision),
    Stopped(Stop),
}

impl TaskEngine<'_> {
    /// A phase failed every attempt: PAUSE the task (once) and stop — or, when the pause was
    /// answered with retry (while this run waited or before it was restarted), go on.
    pub(super) fn pause_point(&self, point: &str, reason: &str) -> Result<Option<Stop>> {
        let occurrence = {
            let mut a = lock(&self.attempts);
            let n = a.entry(format!("pause:{point}")).or_insert(0);
            *n += 1;
            *n
        };
        let point = format!("{point}#{occurrence}");
        let idx = lock(&self.journal).records.iter().position(|r| {
            matches!(&r.entry, Entry::TaskPaused { task, point: p, .. } if *task == self.slug && *p == point)
        });
        let idx = match idx {
            Some(i) => i,
            None => {
                let m = self.manifest()?;
                if m.status == Status::Running {
                    let reason = format!("{reason} (after {point})");
                    self.store.pause(
                        &self.slug,
                        &reason,
                        vec![
                            format!("baton resume --task {} --decision retry", self.slug),
                            format!("baton resume --task {} --decision reject", self.slug),
                        ],
                    )?;
                }
                self.log(Entry::TaskPaused {
                    task: self.slug.clone(),
                    point: point.clone(),
                    reason: reason.to_string(),
                })?;
                self.reporter.report(&RunEvent::Paused {
                    subject: &self.subject(),
                    point: &point,
                    reason,
                    resume: &format!(
                        "baton resume --task {} --decision retry, then: {}",
                        self.slug,
                        // `baton plan` runs the plan workflow's phase; the others are `baton run`s.
                        if self.wf.def.name == "plan" {
                            format!("baton plan {}", self.slug)
                        } else {
                            format!("baton run {} {}", self.wf.def.name, self.slug)
                        }
                    ),
                });
                lock(&self.journal).records.len() - 1
            }
        };
        let later = lock(&self.journal).records.len() > idx + 1;
        if later {
            return Ok(None);
        }
        let m = self.manifest()?;
        match m.status {
            Status::Running => {
                self.log(Entry::TaskRetried {
                    task: self.slug.clone(),
                    point,
                })?;
                self.say(&format!("{}: retry → going on", self.slug));
                Ok(None)
            }
            Status::Paused => Ok(Some(Stop::Paused(
                m.failure_context.map(|f| f.reason).unwrap_or_default(),
            ))),
            _ => Ok(Some(stop_of(m.status))),
        }
    }

    /// Stop at `gate` (when the workflow has it) and wait for the decision, made by any
    /// process through `baton resume`. Returns the decision, or why the run stops.
    pub(super) fn gate(&self, wf: &TaskWorkflow, gate: Gate) -> Result<GateOutcome> {
        let g = gate.as_str().to_string();
        let decided = lock(&self.journal)
            .records
            .iter()
            .find_map(|r| match &r.entry {
                Entry::TaskGateDecided {
                    task,
                    gate: x,
                    decision,
                } if *task == self.slug && *x == g => decision.parse::<Decision>().ok(),
                _ => None,
            });
        if let Some(d) = decided {
            return Ok(GateOutcome::Decided(d));
        }
        let configured = wf.gates.contains(&gate);
        if !configured && gate != Gate::Final {
            return Ok(GateOutcome::Decided(if gate == Gate::Investigation {
                Decision::Full
            } else {
                Decision::Approve
            }));
        }
        let opened = lock(&self.journal)
            .records
            .iter()
            .find_map(|r| match &r.entry {
                Entry::TaskGateOpened {
                    task,
                    gate: x,
                    store_seq,
                } if *task == self.slug && *x == g => Some(*store_seq),
                _ => None,
            });
        // Write-ahead: the journal says the gate is being opened before the store sets it, so a
        // kill between the two can be told apart from a gate a human has since decided (the
        // task is running again in both cases).
        let set = match opened {
            None => {
                let m = self.manifest()?;
                self.log(Entry::TaskGateOpened {
                    task: self.slug.clone(),
                    gate: g.clone(),
                    store_seq: Some(m.version),
                })?;
                false
            }
            Some(None) => true,
            Some(Some(seq)) => self.gate_set_since(gate, seq)?,
        };
        if !set && self.manifest()?.status == Status::Running {
            let (prompt, artifacts) = self.gate_text(gate);
            self.store.set_gate(&self.slug, gate, &prompt, artifacts)?;
            if !configured {
                // No final gate in this workflow: baton approves it itself.
                self.store.resume(&self.slug, Decision::Approve)?;
            }
        }
        let mut told = false;
        loop {
            let m = self.manifest()?;
            let waiting = m.status == Status::WaitingGate
                && m.gate_context.as_ref().is_some_and(|c| c.gate == gate);
            if waiting {
                if !told {
                    self.tell_gate(&m);
                    told = true;
                }
                if self.opts.no_wait {
                    return Ok(GateOutcome::Stopped(Stop::Waiting(gate)));
                }
                self.calls().check_interrupt()?;
                std::thread::sleep(Duration::from_millis(200));
                continue;
            }
            let d = infer_decision(&m, gate).ok_or_else(|| {
                Error::state(format!(
                    "task `{}` is {} after the {gate} gate: no decision can be read from it",
                    self.slug, m.status
                ))
            })?;
            self.log(Entry::TaskGateDecided {
                task: self.slug.clone(),
                gate: g,
                decision: d.as_str().into(),
            })?;
            if configured {
                self.reporter.report(&RunEvent::GateDecided {
                    subject: &self.subject(),
                    gate: gate.as_str(),
                    decision: d.as_str(),
                });
            }
            return Ok(GateOutcome::Decided(d));
        }
    }

    /// Whether the task's log has a SET_GATE of `gate` after event `seq`.
    fn gate_set_since(&self, gate: Gate, seq: u64) -> Result<bool> {
        let log = self.store.task_dir(&self.slug).join(baton_store::EVENTS);
        Ok(baton_store::log::read_all(&log)?.iter().any(|e| {
            e.seq > seq
                && matches!(&e.kind, baton_store::model::EventKind::GateSet { gate: x, .. } if *x == gate)
        }))
    }

    pub(super) fn gate_text(&self, gate: Gate) -> (String, Vec<String>) {
        let dir = self.store.task_dir(&self.slug);
        let rel = |stem: &str| artifacts::latest(&dir, stem).map(|p| self.rel(&p));
        let revision = artifacts::latest_numbered(&dir, "architect-revision").map(|p| self.rel(&p));
        match gate {
            Gate::Investigation => (
                "Design audited. Choose the path: full (spec and the standard path), lite (a poc: implement now, record the debt), shelf (keep the findings, stop), cancel.".into(),
                [rel("architect"), revision, rel("design-audit")].into_iter().flatten().collect(),
            ),
            Gate::Design => (
                "Approve the design before the spec is written?".into(),
                [rel("architect"), revision, rel("design-audit")].into_iter().flatten().collect(),
            ),
            Gate::Final => {
                let mut a: Vec<String> = [rel("spec"), rel("test-results"), rel("impl-audit"), rel("debt"), rel("graduate-complete")]
                    .into_iter()
                    .flatten()
                    .collect();
                if let Ok(rd) = std::fs::read_dir(dir.join("implementations")) {
                    let mut v: Vec<String> = rd.filter_map(|e| e.ok()).map(|e| self.rel(&e.path())).collect();
                    v.sort();
                    a.extend(v);
                }
                ("Approve the implementation and complete the task?".into(), a)
            }
        }
    }

    pub(super) fn tell_gate(&self, m: &Manifest) {
        let Some(g) = &m.gate_context else { return };
        let key = format!("gate:{}", g.gate);
        {
            let mut p = lock(&self.printed);
            if p.contains(&key) {
                return;
            }
            p.push(key);
        }
        let decide = if self.opts.no_wait {
            format!(
                "then continue with: baton run {} {}",
                self.wf.def.name, self.slug
            )
        } else {
            "(this run waits for the decision; Ctrl-C is safe: rerun to continue)".to_string()
        };
        self.reporter.report(&RunEvent::GateOpened {
            subject: &self.subject(),
            gate: g.gate.as_str(),
            prompt: &g.prompt,
            artifacts: &g.artifacts,
            decisions: gate_decisions(g.gate),
            decide: &decide,
        });
    }
}

pub fn gate_decisions(g: Gate) -> &'static str {
    match g {
        Gate::Design | Gate::Final => "approve|reject",
        Gate::Investigation => "full|lite|shelf|cancel|reject",
    }
}

/// The decision that took the task from `gate` to where it is now (the routing table of `baton resume`
/// read backwards: each decision leaves a distinct state).
pub fn infer_decision(m: &Manifest, gate: Gate) -> Option<Decision> {
    use baton_store::model::Workflow;
    Some(match (gate, m.status) {
        (_, Status::Failed) => Decision::Reject,
        (Gate::Final, Status::Completed) => Decision::Approve,
        (
            Gate::Design,
            Status::Running | Status::Paused | Status::WaitingGate | Status::Completed,
        ) => Decision::Approve,
        (Gate::Investigation, Status::Shelved) => Decision::Shelf,
        (Gate::Investigation, Status::Cancelled) => Decision::Cancel,
        (Gate::Investigation, _) if m.workflow == Workflow::Poc => Decision::Lite,
        (
            Gate::Investigation,
            Status::Running | Status::Paused | Status::WaitingGate | Status::Completed,
        ) => Decision::Full,
        _ => return None,
    })
}

pub fn stop_of(s: Status) -> Stop {
    match s {
        Status::Completed => Stop::Completed,
        Status::Shelved => Stop::Shelved,
        Status::Cancelled => Stop::Cancelled,
        _ => Stop::Failed,
    }
}

/// For `baton status`: where a task run stands, read from its task's manifest — the running
/// phase, the gate it waits at and the decide command, the pause and how to go on, or the end.
pub fn run_state(
    store: &baton_store::Store,
    workflow: &str,
    epics: &[String],
    run_id: &str,
) -> Option<(String, Option<String>)> {
    if !WorkflowKind::parse(workflow).is_some_and(WorkflowKind::is_task) {
        return None;
    }
    let slug = epics.first()?;
    let Ok(m) = store.manifest(slug) else {
        return Some((
            "damaged".into(),
            Some(format!("task `{slug}` is missing from the store")),
        ));
    };
    Some(match m.status {
        Status::Running => {
            let running: Vec<String> = m.running_phases.iter().map(|r| r.label()).collect();
            let at = if running.is_empty() {
                "between phases".to_string()
            } else {
                format!("running {}", running.join(", "))
            };
            (
                "running".into(),
                Some(format!(
                    "{at} — if its process is gone: baton run --resume {run_id}"
                )),
            )
        }
        Status::WaitingGate => {
            let g = m.gate_context.as_ref().map(|g| g.gate);
            (
                format!("waiting at the {} gate", g.map(|g| g.as_str()).unwrap_or("?")),
                g.map(|g| {
                    format!(
                        "baton resume --task {slug} --decision {} (see: baton gate show --task {slug})",
                        gate_decisions(g)
                    )
                }),
            )
        }
        Status::Paused => (
            "paused".into(),
            Some(format!(
                "{} — baton resume --task {slug} --decision retry, then baton run --resume {run_id}",
                m.failure_context.map(|f| f.reason).unwrap_or_default()
            )),
        ),
        s => (s.to_string(), None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_read_back_from_the_state() {
        let mut m: Manifest = baton_store::machine::create(&baton_store::model::Event {
            v: 1,
            seq: 1,
            ts: baton_core::ids::now(),
            kind: baton_store::model::EventKind::TaskCreated {
                name: "t".into(),
                mode: baton_store::model::Mode::Standard,
                workflow: baton_store::model::Workflow::Orchestrate,
            },
        })
        .unwrap();
        assert_eq!(
            infer_decision(&m, Gate::Investigation),
            Some(Decision::Full)
        );
        m.workflow = baton_store::model::Workflow::Poc;
        assert_eq!(
            infer_decision(&m, Gate::Investigation),
            Some(Decision::Lite)
        );
        m.status = Status::Shelved;
        assert_eq!(
            infer_decision(&m, Gate::Investigation),
            Some(Decision::Shelf)
        );
        m.status = Status::Failed;
        assert_eq!(infer_decision(&m, Gate::Design), Some(Decision::Reject));
        m.status = Status::Completed;
        assert_eq!(infer_decision(&m, Gate::Final), Some(Decision::Approve));
    }
}
