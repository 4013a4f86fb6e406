//! One phase of an epic run through the run pipeline: the tree made ready for the call, the
//! prompt rendered, the agent's answer judged and its claims checked.

use super::*;

impl EpicEngine<'_> {
    /// One phase through the run pipeline (`run::call`): the prompt rendered from its
    /// template, the agent's answer judged by its signal and then its claims checked against
    /// the disk. A phase the journal holds is not run again.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn phase(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: Option<&StoryRef>,
        phase: &Phase,
        attempt: u32,
        mut ctx: serde_json::Value,
        writes: &[String],
    ) -> Result<PhaseOutcome> {
        let subject = match story {
            Some(s) => Subject::story(&epic.id, &s.id),
            None => Subject::epic(&epic.id),
        };
        let party = phase
            .party_flag
            .as_deref()
            .is_some_and(|f| self.opts.flag_on(f));
        let template_name = if party {
            phase.party_template.as_deref().unwrap_or(&phase.template)
        } else {
            &phase.template
        };
        let label = match story {
            Some(s) => format!("{}-{}-{}-{}", epic.id, s.id, phase.name, attempt),
            None => format!("{}-{}-{}", epic.id, phase.name, attempt),
        };
        let call = Call {
            subject: &subject,
            phase: &phase.name,
            attempt,
            label,
            who: self.assignment(&phase.role),
            cwd: co.dir.clone(),
            budget: phase.budget,
            policy: (&self.wf.policy).into(),
            resume: None,
        };
        let expected = story
            .map(|s| s.id.clone())
            .unwrap_or_else(|| format!("Epic {}", epic.id));
        // The template, once read (a finished phase's call renders none).
        let mut loaded: Option<String> = None;
        if !self.opts.dry_run
            && self
                .journal()
                .finished_phase(&subject, &phase.name, attempt)
                .is_none()
        {
            // First: the records the call must add to are read from the tree it starts from.
            self.before_call(co, epic, story, &phase.name, attempt, &subject, &call.label)?;
            // What the story has staged so far (the review reads exactly this diff), for a
            // template that shows it: as the last phase's judge read it (taken by every
            // phase's prompt, so never older than the call before), else from git.
            let t = template(template_name, &self.prompts_dir)?;
            if let Some(s) = story {
                let seen = lock(&self.staged_seen).remove(&(co.dir.clone(), s.id.clone()));
                if crate::prompt::uses(&t, "staged") {
                    ctx["staged"] = match seen {
                        Some(list) => list,
                        None => co.git.staged()?,
                    }
                    .into();
                }
            }
            loaded = Some(t);
        }
        let records_before = match (story, phase.record.as_deref()) {
            (Some(s), Some(r)) => Some(judge::record_lines(&self.read_story(co, s), r)),
            _ => None,
        };
        if let (Some(r), Some(before)) = (phase.record.as_deref(), &records_before) {
            // The prompt says whether to fill in the template's section or append one.
            ctx["record"] = serde_json::json!({"name": r, "present": before.present});
        }

        let called = self.calls().call(
            &call,
            || {
                let template = match loaded.take() {
                    Some(t) => t,
                    None => template(template_name, &self.prompts_dir)?,
                };
                render(template_name, &template, &ctx)
            },
            |reply| {
                // baton stages what the phase changed itself: no agent writes to `.git`.
                if phase.stages()
                    && let Err(e) = self.stage_work(co)
                {
                    return Verdict::broken(format!("baton could not stage the work: {e}"));
                }
                let v = judge::judge(phase, &reply.text, &expected);
                if v.judged != Judged::Passed {
                    return v;
                }
                match self.verify(co, story, phase, records_before.as_ref(), writes) {
                    Ok(()) => v,
                    Err(why) => Verdict::broken(why),
                }
            },
        )?;
        Ok(called.outcome)
    }

    /// With the failure phase on: its analysis of a failed attempt, appended to the story; a
    /// recommendation to escalate pauses the run for a human.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn failure_analysis(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        failed: &Phase,
        attempt: u32,
        out: &PhaseOutcome,
        base: &serde_json::Value,
        rep: &mut StoryReport,
    ) -> Result<()> {
        let Some(fp) = self.wf.failure_phase.clone() else {
            return Ok(());
        };
        if fp.flag.as_deref().is_some_and(|f| !self.opts.flag_on(f)) {
            return Ok(());
        }
        let mut ctx = base.clone();
        ctx["failure"] = serde_json::json!({
            "kind": failed.name,
            "signal": failed.fail_signal.first().cloned().unwrap_or_else(|| "none".into()),
            "message": out.detail,
        });
        let res = self.phase(co, epic, Some(story), &fp, attempt, ctx, &[])?;
        rep.usage.add(&res.usage);
        rep.cost_usd += res.cost_usd.unwrap_or(0.0);
        if res.recommendation.as_deref() == Some("Escalate") {
            // A human decides before the run spends more on it.
            self.pause(
                &format!("escalation of story {} attempt {attempt}", story.id),
                &format!(
                    "story {}'s failure analysis recommends escalating to a human (its {} in {})",
                    story.id,
                    fp.record.as_deref().unwrap_or("record"),
                    story.path.display()
                ),
            )?;
        }
        Ok(())
    }
}
