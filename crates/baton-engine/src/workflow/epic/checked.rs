//! The project's checks in an epic run (see [`crate::checks`]): on the starting commit before
//! the first story, and after every phase that edits, before anything is committed.

use super::*;

/// The journal's name for the checks run on the starting commit.
const BASELINE: &str = "baseline";

impl EpicEngine<'_> {
    /// The project's checks after `phase` of `attempt`, in `co`: the first red one, if any.
    /// Recorded in the journal before anything acts on them; a resumed run reads them back.
    pub(super) fn checks_red(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        phase: &str,
        attempt: u32,
    ) -> Result<Option<crate::checks::CheckResult>> {
        let Some(checks) = self.opts.checks.as_ref().filter(|c| !c.commands.is_empty()) else {
            return Ok(None);
        };
        if self.opts.dry_run {
            return Ok(None);
        }
        let subject = Subject::story(&epic.id, &story.id);
        let recorded = self.journal().checks_run(&subject, phase, attempt);
        let results = match recorded {
            Some(r) => r,
            None => {
                let tree = co
                    .git
                    .run(&["write-tree"])
                    .ok()
                    .map(|t| t.trim().to_string());
                // A phase that changed nothing but the story file (a review that passed
                // without fixes) keeps the green result it was handed.
                let green = self.journal().green_tree(&subject, attempt);
                if let (Some(now), Some(before)) = (&tree, &green)
                    && self.same_code(co, story, before, now)
                {
                    self.reporter.report(&RunEvent::Note {
                        subject: Some(&subject),
                        text: &format!("checks: {phase} changed no code; they passed already"),
                    });
                    return Ok(None);
                }
                let local = self.local_dir();
                let cancel = crate::interrupt::call_token();
                let r = crate::checks::run(&checks.commands, &co.dir, &local, &cancel, &|_| {});
                // Cut off by Ctrl-C: no verdict, nothing journaled; a resumed run runs them.
                self.calls().check_interrupt()?;
                self.log(Entry::ChecksRun {
                    subject: subject.clone(),
                    phase: phase.to_string(),
                    attempt,
                    results: r.clone(),
                    tree,
                })?;
                r
            }
        };
        for r in &results {
            self.reporter.report(&RunEvent::CheckFinished {
                subject: &subject,
                phase,
                result: r,
            });
        }
        let Some(red) = results.into_iter().find(|r| !r.passed) else {
            return Ok(None);
        };
        // Red as the starting commit was: not this story's failure.
        let before = self
            .journal()
            .checks_run(&Subject::epic(&epic.id), BASELINE, 0)
            .and_then(|b| b.into_iter().find(|b| b.command == red.command));
        if let Some(b) = before.filter(|b| red.fails_as(b)) {
            self.reporter.report(&RunEvent::Note {
                subject: Some(&subject),
                text: &format!(
                    "checks: `{}` fails as it did on the starting commit ({}): no new failure",
                    red.command,
                    b.failing().unwrap_or_else(|| b.summary.clone())
                ),
            });
            return Ok(None);
        }
        Ok(Some(red))
    }

    /// Before an epic's first story: the checks on the commit the run starts from (recorded;
    /// a resumed run reads them back). What fails there already does not block a story that
    /// adds no failure of its own; the run says so at its start.
    pub(super) fn baseline_checks(&self, epic: &EpicRef) -> Result<()> {
        let Some(checks) = self.opts.checks.as_ref().filter(|c| !c.commands.is_empty()) else {
            return Ok(());
        };
        if self.opts.dry_run {
            return Ok(());
        }
        let subject = Subject::epic(&epic.id);
        if self.journal().checks_run(&subject, BASELINE, 0).is_some() {
            return Ok(());
        }
        let main = self.main_checkout();
        let cancel = crate::interrupt::call_token();
        let r = crate::checks::run_all(&checks.commands, &main.dir, &self.local_dir(), &cancel);
        self.calls().check_interrupt()?;
        self.log(Entry::ChecksRun {
            subject: subject.clone(),
            phase: BASELINE.into(),
            attempt: 0,
            results: r.clone(),
            tree: None,
        })?;
        let red: Vec<String> = r
            .iter()
            .filter(|x| !x.passed)
            .map(|x| x.describe())
            .collect();
        let text = if red.is_empty() {
            "checks pass on the starting commit".to_string()
        } else {
            format!(
                "checks fail on the starting commit already: {}; a story that fails only so is \
                 not blocked",
                red.join("; ")
            )
        };
        self.reporter.report(&RunEvent::Note {
            subject: Some(&subject),
            text: &text,
        });
        Ok(())
    }

    /// Whether two staged trees hold the same code: nothing differs but the story's own file.
    fn same_code(&self, co: &Checkout, story: &StoryRef, a: &str, b: &str) -> bool {
        let exclude = format!(":(exclude){}", story.path.display());
        co.git.ok(&[
            "diff",
            "--quiet",
            "--no-ext-diff",
            a,
            b,
            "--",
            ".",
            &exclude,
        ])
    }

    /// baton's own folder (`.baton`): a run's journal is `<local>/runs/<run-id>/`.
    fn local_dir(&self) -> PathBuf {
        let dir = self.journal().dir.clone();
        dir.parent().and_then(Path::parent).map_or_else(
            || self.project_dir.join(&self.baseline.local),
            Path::to_path_buf,
        )
    }
}
