//! The phases with a behaviour of their own: single phases, audits and their repair loops,
//! the test command baton runs itself, lite and graduate, and the conductor reports.

use super::*;

impl TaskEngine<'_> {
    /// Investigation gate + lite: the task became a poc; go on with the poc workflow's
    /// implementation (then its debt phase).
    pub(super) fn lite(&self) -> Result<Stop> {
        let Loaded { def, source, text } = self
            .poc_wf
            .as_ref()
            .ok_or_else(|| Error::internal("no poc workflow loaded"))?;
        self.say(&format!("{}: lite → the task is now a poc", self.slug));
        let order = def.order(source, text)?;
        self.walk(def, &order, Some("implementation"))
    }

    /// A discovery phase in a workflow's walk: a dialogue with a person is never run headless;
    /// the run goes on once `baton discover` has recorded it.
    pub(super) fn discovered(&self) -> Result<Option<Stop>> {
        let m = self.manifest()?;
        if m.completed_phases
            .iter()
            .any(|c| c.phase == "discovery" && c.status == PhaseStatus::Success)
        {
            return Ok(None);
        }
        Err(Error::state(format!(
            "task `{}` has no discovery yet: it is a dialogue with a person, not run headless",
            self.slug
        ))
        .hint(format!(
            "run `baton discover {}` in a terminal, then this command again (the run continues)",
            self.slug
        )))
    }

    pub(super) fn graduate_complete(&self) -> Result<()> {
        let m = self.manifest()?;
        let dir = self.store.task_dir(&self.slug);
        if artifacts::latest(&dir, "graduate-complete").is_some() || m.status != Status::Running {
            return Ok(());
        }
        let from = self.opts.from.clone().unwrap_or_default();
        let impls: Vec<String> = m
            .completed_phases
            .iter()
            .filter(|c| c.phase == "implementation" && c.status == PhaseStatus::Success)
            .map(|c| c.label())
            .collect();
        let text = format!(
            "# Graduated: {from} → {}\n\nThe proof of concept `{from}` went through the standard path: spec, implementation ({}), tests, test results and the implementation audit.\n\nPoc artifacts: {}\n",
            self.slug,
            impls.join(", "),
            self.task_rel(&from)
        );
        self.store.store(
            &self.slug,
            "graduate-complete",
            Content {
                text,
                ..Content::default()
            },
        )?;
        self.say(&format!("{}: graduate-complete stored", self.slug));
        Ok(())
    }

    /// The point every finished unit of work passes: after each implementation task's attempt
    /// and each implementation audit. The conductor session, when the workflow has one, is told
    /// of it (resumed, or fresh and seeded with the task's state after a rotation). Its notes
    /// are advisory: a conductor that fails is reported and the run goes on.
    pub(super) fn task_completed(&self, wf: &TaskWorkflow, done: TaskDone) -> Result<()> {
        let Some(conductor) = &self.conductor else {
            return Ok(());
        };
        let label = phase_label(done.phase, done.task_id);
        let attempt = lock(&self.attempts).get(&label).copied().unwrap_or(1);
        let key = format!("{label}@{attempt}");
        let recorded = lock(&self.journal)
            .records
            .iter()
            .any(|r| matches!(&r.entry, Entry::ConductorCalled { key: k, .. } if *k == key));
        if recorded {
            return Ok(());
        }
        let mut c = lock(conductor);
        let dir = self.store.task_dir(&self.slug);
        // What the report hands over: a finished task counts as a task; an audit's findings
        // and a failure's reason are feedback (the audit is read from its file, so its size).
        let (tasks, feedback_bytes, item, feedback_files) = match done.task_id {
            Some(id) => {
                let path = artifacts::latest(&dir, &format!("implementations/task-{id}"))
                    .map(|p| self.rel(&p))
                    .unwrap_or_else(|| "(no report stored)".into());
                let (tasks, feedback) = if done.ok {
                    (1, 0)
                } else {
                    (0, done.detail.len() as u64)
                };
                let result = if done.ok {
                    "done".to_string()
                } else {
                    format!("failed ({})", done.detail)
                };
                let item =
                    serde_json::json!({"id": id, "title": label, "result": result, "path": path});
                (tasks, feedback, Some(item), vec![])
            }
            None => {
                let audit = artifacts::latest(&dir, done.phase);
                let bytes = audit
                    .as_ref()
                    .and_then(|p| std::fs::metadata(p).ok())
                    .map_or(done.detail.len() as u64, |m| m.len());
                (
                    0,
                    bytes,
                    None,
                    audit.map(|p| self.rel(&p)).into_iter().collect(),
                )
            }
        };
        let news = format!(
            "{label} {} — {}",
            if done.ok { "passed" } else { "failed" },
            done.detail
        );
        let notes = self.run_dir().join("conductor-notes.md");
        let run_dir = self.run_dir();
        let name = format!("conductor-{}", key.replace(['#', '@'], "-"));
        let template_name = wf
            .conductor
            .as_ref()
            .map_or("conductor".into(), |d| d.template.clone());
        let last_rotation = c.meter.last_rotation;
        // Only the prompt the session needs is made: the state summary is read for a fresh one.
        let make_prompt = |fresh: bool| -> Result<String> {
            let template = crate::prompt::template(&template_name, &self.prompts_dir)?;
            let state_summary = if fresh {
                baton_store::view::summary(&self.manifest()?).render()
            } else {
                String::new()
            };
            let ctx = serde_json::json!({
                "task": self.slug,
                "notes_file": self.rel(&notes),
                "news": news,
                "tasks": item.iter().collect::<Vec<_>>(),
                "feedback_files": feedback_files,
                "fresh": fresh,
                "rotated": last_rotation.filter(|_| fresh).map(|r| format!("reason: {}", r.as_str())),
                "state_summary": state_summary,
            });
            let prompt = render(&template_name, &template, &ctx)?;
            baton_core::fs::write_atomic(
                &run_dir.join("prompts").join(format!("{name}.md")),
                prompt.as_bytes(),
            )?;
            Ok(prompt)
        };
        let base = Request {
            name: name.clone(),
            prompt: "",
            cwd: self.project_dir.clone(),
            log_dir: run_dir.join("logs"),
            timeout: Duration::from_secs(wf.policy.timeout_secs),
            grace: Duration::from_secs(wf.policy.grace_secs),
            resume: None,
        };
        let report = Report {
            prompt: &make_prompt,
            tasks,
            feedback_bytes,
        };
        // Advisory: a conductor that cannot be run (unknown agent, broken template) is said
        // and journaled like a failed report; the run goes on.
        let (reply, rotation) = c.report(self.agents, &base, &report).unwrap_or_else(|e| {
            (
                crate::agents::Reply {
                    error: Some(e.to_string()),
                    ..Default::default()
                },
                None,
            )
        });
        let signal = format!("CONDUCTOR UPDATED: {}", self.slug);
        let ok = reply.ok && reply.text.lines().any(|l| l.trim() == signal);
        let detail = if ok {
            signal
        } else {
            reply
                .error
                .clone()
                .unwrap_or_else(|| "no CONDUCTOR UPDATED line".into())
        };
        self.log(Entry::ConductorCalled {
            task: self.slug.clone(),
            key,
            ok,
            detail: detail.clone(),
            meter: c.meter.clone(),
        })?;
        if !ok {
            self.say(&format!("  ! conductor: {detail} (the run goes on)"));
        }
        if let Some(r) = rotation {
            let line = format!(
                "CONDUCTOR rotated ({}): {} tokens, {} tasks, {} bytes of feedback in {} calls",
                r.reason.as_str(),
                r.context_tokens,
                r.tasks,
                r.feedback_bytes,
                r.calls
            );
            self.log(Entry::ConductorRotated {
                task: self.slug.clone(),
                rotation: r,
            })?;
            self.store.note(&self.slug, &line)?;
            self.reporter.report(&RunEvent::Rotated {
                subject: &self.subject(),
                session: "conductor",
                reason: &line,
            });
        }
        Ok(())
    }

    /// The prompt a phase would be sent, collected by the engine's dry run (nothing recorded).
    pub fn dry_phase(&self, wf: &TaskWorkflow, p: &TaskPhase) -> Result<()> {
        let label = phase_label(&p.name, None);
        self.call(wf, p, None, None, None, 1, &self.out_file(&label, 1))
            .map(drop)
    }

    /// A phase run once (retried per the policy, then the task paused).
    pub fn single(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        iteration: Option<u32>,
    ) -> Result<Option<Stop>> {
        let mut fails = 0;
        loop {
            match self.phase(wf, p, None, None, iteration)? {
                Verdict::Pass => return Ok(None),
                Verdict::Fail(why) | Verdict::Error(why) => {
                    fails += 1;
                    if fails < wf.policy.max_attempts {
                        continue;
                    }
                    fails = 0;
                    if let Some(stop) = self.pause_point(&p.name, &why)? {
                        return Ok(Some(stop));
                    }
                }
            }
        }
    }

    /// An audit with its repair loop: a failed verdict runs the repair phase, then audits again,
    /// at most `max_revisions` (design) or `max_fixes` (implementation) times; then PAUSE.
    pub(super) fn audit(&self, wf: &TaskWorkflow, p: &TaskPhase) -> Result<Option<Stop>> {
        let repair = wf
            .phase(p.repair.as_deref().unwrap_or_default())
            .cloned()
            .ok_or_else(|| Error::internal("repair phase missing"))?;
        let max = if p.name == "design-audit" {
            wf.policy.max_revisions
        } else {
            wf.policy.max_fixes
        };
        let mut repairs = 0;
        let mut fails = 0;
        loop {
            match self.phase(wf, p, None, None, None)? {
                Verdict::Pass => {
                    if p.name == "impl-audit" {
                        let detail = self.last_detail(&p.name, None);
                        self.task_completed(
                            wf,
                            TaskDone {
                                phase: &p.name,
                                task_id: None,
                                ok: true,
                                detail: &detail,
                            },
                        )?;
                    }
                    return Ok(None);
                }
                Verdict::Error(why) => {
                    fails += 1;
                    if fails < wf.policy.max_attempts {
                        continue;
                    }
                    fails = 0;
                    if let Some(stop) = self.pause_point(&p.name, &why)? {
                        return Ok(Some(stop));
                    }
                }
                Verdict::Fail(why) => {
                    if p.name == "impl-audit" {
                        self.task_completed(
                            wf,
                            TaskDone {
                                phase: &p.name,
                                task_id: None,
                                ok: false,
                                detail: &why,
                            },
                        )?;
                    }
                    if repairs >= max {
                        let reason = format!(
                            "{} failed after {repairs} {}: {why}",
                            p.name,
                            if repairs == 1 { "repair" } else { "repairs" }
                        );
                        if let Some(stop) = self.pause_point(&p.name, &reason)? {
                            return Ok(Some(stop));
                        }
                        repairs = 0;
                        continue;
                    }
                    repairs += 1;
                    let n = self.next_iteration(&repair.name)?;
                    if let Some(stop) = self.single(wf, &repair, Some(n))? {
                        return Ok(Some(stop));
                    }
                }
            }
        }
    }

    /// The next free iteration of a numbered artifact (architect-revision-<n>.md) — or, when
    /// replaying, the one the recorded attempt stored.
    pub(super) fn next_iteration(&self, phase: &str) -> Result<u32> {
        let dir = self.store.task_dir(&self.slug);
        let done = lock(&self.attempts).get(phase).copied().unwrap_or(0);
        // Replay: the attempts counted so far in this pass name the iteration.
        let mut n = 1;
        while dir.join(format!("{phase}-{n}.md")).exists() && n <= done {
            n += 1;
        }
        Ok(n)
    }

    /// test-results by baton itself: the workflow's test command, masked (zero tokens).
    pub(super) fn test_command(&self, wf: &TaskWorkflow, p: &TaskPhase) -> Result<Option<Stop>> {
        loop {
            let label = p.name.clone();
            let attempt = self.bump(&label);
            let key = format!("{label}@{attempt}");
            let subject = Subject::task(&self.slug, None);
            let done = lock(&self.journal)
                .finished_phase(&subject, &p.name, attempt)
                .cloned();
            let m = self.manifest()?;
            if !m.running_phases.iter().any(|r| r.label() == label)
                && !self.store_has(&m, &p.name, None, attempt)
            {
                self.store.begin_phase(&self.slug, &p.name, None, &[])?;
            }
            let (outcome, text) = match done {
                Some(o) => {
                    let text =
                        std::fs::read_to_string(self.out_file(&label, attempt)).unwrap_or_default();
                    (o, text)
                }
                None => {
                    self.log(Entry::PhaseStarted {
                        subject: subject.clone(),
                        phase: p.name.clone(),
                        attempt,
                    })?;
                    self.reporter.report(&RunEvent::PhaseStarted {
                        subject: &subject,
                        phase: &p.name,
                        attempt,
                        agent: "baton",
                        model: None,
                    });
                    let started = std::time::Instant::now();
                    // The same runner as an epic's checks: masked, timed out, cancellable.
                    let check = crate::checks::Check {
                        command: wf
                            .test_command
                            .iter()
                            .map(|a| baton_agent::wiring::shell_quote(a))
                            .collect::<Vec<_>>()
                            .join(" "),
                        timeout: crate::checks::DEFAULT_TIMEOUT,
                    };
                    let local = self
                        .run_dir()
                        .parent()
                        .and_then(Path::parent)
                        .map_or_else(|| self.project_dir.join(".baton"), Path::to_path_buf);
                    let cancel = crate::interrupt::call_token();
                    let results = crate::checks::run(
                        std::slice::from_ref(&check),
                        &self.project_dir,
                        &local,
                        &cancel,
                        &|_| {},
                    );
                    // A Ctrl-C stops the test command too: a run cut off is interrupted, not
                    // a failing test suite.
                    self.calls().check_interrupt()?;
                    let (ok, detail, text) = match results.first() {
                        Some(r) => {
                            let failing = r
                                .failing()
                                .map(|f| format!("\nFirst failure: {f}\n"))
                                .unwrap_or_default();
                            let output = r
                                .output
                                .as_ref()
                                .map(|o| format!("\nWhole output: {}\n", o.display()))
                                .unwrap_or_default();
                            let text = format!(
                                "# Test results\n\nCommand: `{}` (run by baton, output masked)\nExit: {}\n\n## Summary\n\n{}\n{failing}{output}",
                                check.command,
                                r.exit_code.map_or("signal".into(), |c| c.to_string()),
                                r.summary
                            );
                            let detail = if r.passed {
                                r.summary.clone()
                            } else {
                                r.describe()
                            };
                            (r.passed, detail, text)
                        }
                        None => (
                            false,
                            format!("`{}` did not run", check.command),
                            String::new(),
                        ),
                    };
                    if !text.is_empty() {
                        baton_core::fs::write_atomic(
                            &self.out_file(&label, attempt),
                            text.as_bytes(),
                        )?;
                    }
                    let o = PhaseOutcome {
                        ok,
                        detail,
                        recommendation: None,
                        usage: Usage::default(),
                        cost_usd: None,
                        duration_ms: started.elapsed().as_millis() as u64,
                        session_id: None,
                        prompt_tokens: 0,
                        log: None,
                        judged: Some(if ok { Judged::Passed } else { Judged::Rejected }),
                        kept: None,
                        budget: None,
                        context_peak_tokens: None,
                        context_budget: None,
                        over_budget: false,
                        label: None,
                    };
                    self.log(Entry::PhaseFinished {
                        subject: subject.clone(),
                        phase: p.name.clone(),
                        attempt,
                        outcome: o.clone(),
                    })?;
                    self.reporter.report(&RunEvent::PhaseFinished {
                        subject: &subject,
                        phase: &p.name,
                        attempt,
                        outcome: &o,
                    });
                    (o, text)
                }
            };
            let m = self.manifest()?;
            if !self.store_has(&m, &p.name, None, attempt) {
                let status = if outcome.ok {
                    PhaseStatus::Success
                } else {
                    PhaseStatus::Failed
                };
                let content = (!text.trim().is_empty()).then(|| Content {
                    text: text.clone(),
                    ..Content::default()
                });
                self.store
                    .complete_phase(&self.slug, &p.name, None, status, content)?;
            }
            if outcome.ok {
                return Ok(None);
            }
            if let Some(stop) =
                self.pause_point(&key, &format!("tests fail: {}", outcome.detail))?
            {
                return Ok(Some(stop));
            }
        }
    }
}
