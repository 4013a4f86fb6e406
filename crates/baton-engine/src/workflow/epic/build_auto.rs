//! The user's `bmad-build-auto` skill as the dev phase (`--dev bmad-build-auto`, `[run] dev`,
//! a workflow's `dev`). Each story of a BMAD 6 spec folder — planned or not: build-auto
//! writes its story file — is dispatched to the skill the project installed, by folder and
//! id, in a fresh session of the dev role's CLI, as BMAD's build-auto reference describes:
//! claude invokes the skill by name, codex and gemini are told to read its `SKILL.md` and
//! follow it; `invoke_dev_with` goes along as guidance. The story file's frontmatter `status`
//! ends the phase, never the chat:
//!
//! - `done`: baton's checks, and with `--party-review` baton's review of the work; green, the
//!   skill's own commits become one story commit (baton's trailers, found again on resume);
//!   red, the next dispatch is told what failed.
//! - `blocked`: the story fails with its blocking condition, no further attempt (build-auto
//!   keeps a blocked story blocked).
//! - `ready-for-dev` after "Halt after planning." (a `spec_checkpoint` story): the run pauses
//!   for a human to read the spec, and the next dispatch implements it.
//! - anything else (the session ended mid-way): an attempt that did not finish.
//!
//! build-auto needs a clean work tree: the spec folder's and BMAD's files (`_bmad/`, the
//! installed skills) the run found uncommitted are committed once first, other files carried into the run's worktree are left out of it, and
//! what an earlier dispatch left uncommitted (a crash, a kill) is set aside in a stash. The user's `customize.toml` is never read
//! or written.

use serde::Deserialize;

use super::bmad::spec;
use super::*;

/// Who develops a story.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum Dev {
    /// baton's own phases (kickoff, dev, review).
    #[default]
    #[serde(rename = "baton")]
    Baton,
    /// The BMAD 6 `bmad-build-auto` skill the project installed.
    #[serde(rename = "bmad-build-auto")]
    BuildAuto,
}

impl Dev {
    pub fn name(self) -> &'static str {
        match self {
            Dev::Baton => "baton",
            Dev::BuildAuto => "bmad-build-auto",
        }
    }
}

/// The installed skill's `SKILL.md` for an agent, and whether the agent finds it by name
/// (claude, in its own skills folder); codex and gemini read it from `.agents/skills`.
pub fn find_skill(project: &Path, claude: bool) -> Option<(PathBuf, bool)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut roots = vec![project.to_path_buf()];
    roots.extend(home);
    let mut places = Vec::new();
    for root in &roots {
        let own = (root.join(".claude/skills"), true);
        let shared = (root.join(".agents/skills"), false);
        if claude {
            places.extend([own, shared]);
        } else {
            places.extend([shared, own]);
        }
    }
    places
        .into_iter()
        .map(|(dir, by_name)| (dir.join("bmad-build-auto/SKILL.md"), by_name && claude))
        .find(|(file, _)| file.is_file())
}

/// The command that installs the skill where claude, codex and gemini find it.
pub fn install_hint() -> String {
    "install BMAD's skills in the project: npx bmad-method install --modules bmm --tools claude-code,codex --yes".into()
}

/// A run whose stories build-auto develops, checked before anything changes: the skill
/// commits (no `--no-commit`), one story at a time, installed where the dev role's CLI finds
/// it, and a run in the user's checkout needs it clean but for the spec folders. Its epics
/// with every story of their spec folders.
pub(super) fn checked(
    root: &Path,
    opts: &Options,
    wf: &EpicWorkflow,
    epics: Vec<EpicRef>,
) -> Result<Vec<EpicRef>> {
    if opts.no_commit {
        return Err(Error::invalid(
            "--no-commit cannot go with bmad-build-auto: the skill commits its own work",
        )
        .hint("leave --no-commit out; baton folds the skill's commits into one per story"));
    }
    if opts.parallel > 1 {
        return Err(Error::invalid(
            "bmad-build-auto develops one story at a time: --parallel is not for it",
        ));
    }
    let epics: Vec<EpicRef> = epics
        .iter()
        .map(|e| every_story(root, e))
        .collect::<Result<_>>()?;
    let who = crate::definition::assign(
        "dev",
        opts.agent.as_ref(),
        &opts.roles,
        &wf.roles,
        &opts.default_agent,
    );
    let claude = who.agent.builtin() == Some(baton_agent::AgentKind::Claude);
    if find_skill(root, claude).is_none() {
        return Err(Error::not_found(format!(
            "the bmad-build-auto skill is not installed where {} finds it (.claude/skills, .agents/skills, here or in your home)",
            who.agent
        ))
        .hint(install_hint()));
    }
    if !opts.works_in_tree() && !opts.dry_run {
        let dirs = needed_by_the_skill(
            &epics
                .iter()
                .filter_map(|e| e.spec_dir.as_ref().map(|d| format!("{}/", d.display())))
                .collect::<Vec<_>>(),
        );
        let dirty: Vec<String> = crate::git::Git::new(root)
            .changes()?
            .into_iter()
            .filter(|p| !dirs.iter().any(|d| p.starts_with(d)))
            .collect();
        if !dirty.is_empty() {
            return Err(Error::state(format!(
                "bmad-build-auto needs a clean work tree, and your checkout has changes: {}",
                dirty.join(", ")
            ))
            .hint("commit or stash them, or run without --in-place (the run then works in a worktree of its own)"));
        }
    }
    Ok(epics)
}

/// The epic of a run whose stories build-auto develops: every story of its spec folder in
/// `stories.yaml` order, those with no story file yet included (at the path build-auto's
/// folder+id dispatch is expected to write, found again by id once it has).
pub fn every_story(root: &Path, epic: &EpicRef) -> Result<EpicRef> {
    let Some(dir) = &epic.spec_dir else {
        return Err(Error::invalid(format!(
            "bmad-build-auto develops the stories of BMAD 6 spec folders; epic {} is an epic file, not a spec folder",
            epic.id
        ))
        .hint("give the spec folder (baton stories SPEC), or develop with baton's own phases: --dev baton"));
    };
    let folder = super::bmad::tracking::load_spec(root, dir)?;
    let stories = folder
        .stories
        .into_iter()
        .map(|s| {
            let path = s.file.clone().unwrap_or_else(|| {
                dir.join("stories")
                    .join(format!("{}-{}.md", s.id, slug(&s.title)))
            });
            super::project::story_ref(s, path)
        })
        .collect();
    Ok(EpicRef {
        stories,
        missing: Vec::new(),
        ..epic.clone()
    })
}

/// What the skill reads from the tree besides the spec folders (`spec_dirs`, each ending in
/// `/`): BMAD's installation (`_bmad/`, where its `render_skill.py` is) and the installed
/// skills. Uncommitted, they are committed once for it (it needs them, and a clean tree).
fn needed_by_the_skill(spec_dirs: &[String]) -> Vec<String> {
    let mut v = spec_dirs.to_vec();
    v.extend(["_bmad/", ".claude/skills/", ".agents/skills/"].map(String::from));
    v
}

/// A kebab-case slug of a title, as build-auto derives a story file's name.
fn slug(title: &str) -> String {
    let words: Vec<String> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        "story".into()
    } else {
        words.join("-")
    }
}

/// A story file as build-auto left it.
struct State {
    file: Option<PathBuf>,
    status: String,
    blocking: Option<String>,
}

impl EpicEngine<'_> {
    /// A story through build-auto in `co`: planning first and a pause when its entry asks
    /// for a spec checkpoint, then attempts until its file says `done` with the checks green,
    /// or `blocked`. The skill's commits are folded back into the work tree (staged): one
    /// story commit follows when it passed, its work is set aside when it failed.
    pub(crate) fn build_auto_phases(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
    ) -> Result<StoryPhases> {
        let mut rep = StoryReport {
            id: story.id.clone(),
            title: story.title.clone(),
            ..StoryReport::default()
        };
        self.reporter.report(&RunEvent::SubjectStarted {
            subject: &Subject::story(&epic.id, &story.id),
            title: Some(&story.title),
        });
        let mut done = StoryPhases {
            rep: StoryReport::default(),
            passed: false,
            last_failure: String::new(),
            failed_record: None,
        };
        let round = self.journal().story_round(&epic.id, &story.id);
        let first = round.after_attempt + 1;
        let max = first - 1 + self.wf.policy.max_attempts;
        if !self.opts.dry_run {
            self.tidy_for_build_auto(co, epic)?;
        }
        let base = self.build_base(co, epic, story, &round.suffix())?;
        // What the next dispatch is told: the checks that failed, the review that did.
        let mut told = serde_json::json!({});
        if story.spec_checkpoint {
            let now = self.build_state(co, epic, story).status;
            let planned = ["ready-for-dev", "in-progress", "in-review", "done"];
            if !planned.contains(&now.as_str()) {
                let out = self.dispatch(co, epic, story, "plan", first, true, &told)?;
                rep.usage.add(&out.usage);
                rep.cost_usd += out.cost_usd.unwrap_or(0.0);
                if self.opts.dry_run {
                    done.rep = rep;
                    return Ok(done);
                }
                let after = self.build_state(co, epic, story);
                if after.status != "ready-for-dev" {
                    done.last_failure = match after.blocking {
                        Some(why) => format!("blocked: {why}"),
                        None => format!("plan: {}", out.detail),
                    };
                    rep.attempts = first;
                    self.fold_back(co, &base)?;
                    done.rep = rep;
                    return Ok(done);
                }
            }
            self.pause(
                &format!("spec checkpoint of story {}{}", story.id, round.suffix()),
                &format!(
                    "story {}'s spec is planned (spec_checkpoint): read {}, then continue",
                    story.id,
                    self.build_state(co, epic, story)
                        .file
                        .unwrap_or_else(|| story.path.clone())
                        .display()
                ),
            )?;
        }
        for attempt in first..=max {
            rep.attempts = attempt;
            let out = self.dispatch(co, epic, story, "dev", attempt, false, &told)?;
            rep.usage.add(&out.usage);
            rep.cost_usd += out.cost_usd.unwrap_or(0.0);
            if self.opts.dry_run {
                break;
            }
            let state = self.build_state(co, epic, story);
            match state.status.as_str() {
                "done" => {
                    if let Some(red) = self.checks_red(co, epic, story, "dev", attempt)? {
                        done.last_failure = format!("dev: {}", red.describe());
                        told["checks_failure"] = red.for_prompt();
                        continue;
                    }
                    if let Some(out) = self.review_after_build(co, epic, story, &base, attempt)? {
                        rep.usage.add(&out.usage);
                        rep.cost_usd += out.cost_usd.unwrap_or(0.0);
                        if !out.ok {
                            done.last_failure = format!("review: {}", out.detail);
                            told["review_failure"] = out.detail.clone().into();
                            continue;
                        }
                    }
                    done.passed = true;
                    break;
                }
                "blocked" => {
                    // build-auto keeps a blocked story blocked: another attempt halts again.
                    done.last_failure = format!(
                        "blocked: {}",
                        state
                            .blocking
                            .as_deref()
                            .unwrap_or("no blocking condition given")
                    );
                    break;
                }
                _ => done.last_failure = format!("dev: {}", out.detail),
            }
        }
        if !self.opts.dry_run {
            self.fold_back(co, &base)?;
            if done.passed {
                // The skill commits its work; whatever it left uncommitted goes along too.
                self.stage_work(co)?;
            }
        }
        done.rep = rep;
        Ok(done)
    }

    /// With `--party-review`, baton's own review phase after the skill's `done`: the skill's
    /// work folded back and staged, reviewed as baton's dev work is. A review that fails
    /// leaves the reviewed work committed again (the skill's next pass needs a clean tree; the
    /// story's commit folds it in). None when no review is asked for.
    fn review_after_build(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        base: &Option<String>,
        attempt: u32,
    ) -> Result<Option<PhaseOutcome>> {
        let Some(review) = self
            .wf
            .story_phases
            .iter()
            .find(|p| {
                p.party_flag
                    .as_deref()
                    .is_some_and(|f| self.opts.flag_on(f))
            })
            .cloned()
        else {
            return Ok(None);
        };
        self.fold_back(co, base)?;
        self.stage_work(co)?;
        let built = self.built(co, epic, story);
        let ctx = serde_json::json!({
            "story": {"id": built.id, "title": built.title, "path": built.path},
            "epic": {"id": epic.id, "path": epic.path},
            "read_strategy": read_strategy(&baton_command()),
            "mask_hint": mask_hint(&baton_command()),
            "personas": self.personas(),
            "attempt": attempt,
        });
        let out = self.phase(co, epic, Some(&built), &review, attempt, ctx, &[])?;
        if !out.ok && !co.git.staged()?.is_empty() {
            co.git.commit(&format!(
                "wip(story {}): attempt {attempt}, before the review's findings\n\nBaton-Run: {}\n",
                story.id, self.run_id
            ))?;
        }
        Ok(Some(out))
    }

    /// One dispatch of the story to the skill (`plan`: halting after planning).
    #[allow(clippy::too_many_arguments)]
    fn dispatch(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        phase: &str,
        attempt: u32,
        plan_only: bool,
        told: &serde_json::Value,
    ) -> Result<PhaseOutcome> {
        let subject = Subject::story(&epic.id, &story.id);
        let who = self.assignment("dev");
        let claude = who.agent.builtin() == Some(baton_agent::AgentKind::Claude);
        // In the tree the session works in (claude finds it there by name), else the user's
        // checkout's, read by its path.
        let (file, by_name) = find_skill(&co.dir, claude)
            .or_else(|| find_skill(&self.user_dir, claude).map(|(f, _)| (f, false)))
            .ok_or_else(|| {
                Error::not_found("the bmad-build-auto skill is not installed").hint(install_hint())
            })?;
        let label = format!("{}-{}-{phase}-{attempt}", epic.id, story.id);
        if !self.opts.dry_run {
            // What an earlier dispatch left uncommitted (a crash, a session cut off or stopped
            // mid-way): set aside, so the skill finds the clean tree it needs. The story's own
            // file stays: the skill resumes from its status.
            let own = epic
                .spec_dir
                .as_ref()
                .map(|d| format!("{}/stories/{}-", d.display(), story.id))
                .unwrap_or_default();
            let left: Vec<String> = co
                .git
                .changes()?
                .into_iter()
                .filter(|p| !p.starts_with(&own) && self.baseline.is_work(p, true))
                .collect();
            let msg = format!(
                "baton {}: story {} leftovers before {phase} attempt {attempt}",
                self.run_id, story.id
            );
            if !left.is_empty() && co.git.stash_paths(&msg, &left)? {
                self.note(&format!(
                    "story {}: an earlier dispatch left edits; they are set aside in `git stash list` (\"{msg}\")",
                    story.id
                ));
            }
        }
        let guidance = epic
            .spec_dir
            .as_ref()
            .and_then(|d| spec::load(&co.dir, d).ok())
            .and_then(|f| f.stories.into_iter().find(|s| s.id == story.id))
            .map(|s| s.invoke_dev_with)
            .unwrap_or_default();
        let ctx = serde_json::json!({
            "skill": {"file": file, "by_name": by_name},
            "spec_folder": epic.spec_dir,
            "story": {"id": story.id, "title": story.title},
            "halt_after_planning": plan_only,
            "guidance": guidance,
            "checks_failure": told["checks_failure"],
            "review_failure": told["review_failure"],
        });
        let call = Call {
            subject: &subject,
            phase,
            attempt,
            label,
            who,
            cwd: co.dir.clone(),
            budget: None,
            policy: (&self.wf.policy).into(),
            resume: None,
        };
        let called = self.calls().call(
            &call,
            || {
                render(
                    "bmad-build-auto",
                    &template("bmad-build-auto", &self.prompts_dir)?,
                    &ctx,
                )
            },
            |_reply| {
                let s = self.build_state(co, epic, story);
                match (s.status.as_str(), &s.file) {
                    (_, None) => Verdict::broken(format!(
                        "bmad-build-auto wrote no story file for {} (stories/{}-*.md)",
                        story.id, story.id
                    )),
                    ("done", _) => Verdict::passed("status: done"),
                    ("ready-for-dev", _) if plan_only => Verdict::passed("status: ready-for-dev"),
                    ("blocked", _) => Verdict::rejected(format!(
                        "blocked: {}",
                        s.blocking
                            .as_deref()
                            .unwrap_or("no blocking condition given")
                    )),
                    (other, _) => Verdict::broken(format!(
                        "bmad-build-auto stopped with the story at `{other}`, not done"
                    )),
                }
            },
        )?;
        Ok(called.outcome)
    }

    /// The story's file and status as they are now in `co`.
    fn build_state(&self, co: &Checkout, epic: &EpicRef, story: &StoryRef) -> State {
        let entry = epic
            .spec_dir
            .as_ref()
            .and_then(|d| spec::load(&co.dir, d).ok())
            .and_then(|f| f.stories.into_iter().find(|s| s.id == story.id));
        match entry {
            Some(s) => State {
                file: s.file,
                status: s.status.unwrap_or_else(|| "none".into()),
                blocking: s.blocking,
            },
            None => State {
                file: None,
                status: "none".into(),
                blocking: None,
            },
        }
    }

    /// The story as build-auto left it: its file where the skill wrote it.
    pub(crate) fn built(&self, co: &Checkout, epic: &EpicRef, story: &StoryRef) -> StoryRef {
        let mut s = story.clone();
        if let Some(file) = self.build_state(co, epic, story).file {
            s.path = file;
        }
        s
    }

    /// HEAD before the story's first dispatch in this round, kept in the run's folder (the
    /// first value written stays: a resumed run folds back to the same commit).
    fn build_base(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        round: &str,
    ) -> Result<Option<String>> {
        if self.opts.dry_run {
            return Ok(None);
        }
        let dir = self.journal().dir.join("before");
        let file = dir.join(format!(
            "{}-{}-base{}",
            epic.id,
            story.id,
            round.replace([' ', '(', ')'], "")
        ));
        if let Ok(sha) = std::fs::read_to_string(&file) {
            return Ok(Some(sha.trim().to_string()));
        }
        let Some(head) = co.git.head() else {
            return Ok(None);
        };
        baton_core::fs::create_dir_all(&dir)?;
        baton_core::fs::write_atomic(&file, head.as_bytes())?;
        Ok(Some(head))
    }

    /// The skill's commits since `base` undone into the index (`git reset --soft`): what they
    /// changed is staged, for baton's one story commit or the failed story's stash. Done again
    /// it changes nothing.
    fn fold_back(&self, co: &Checkout, base: &Option<String>) -> Result<()> {
        let Some(base) = base else { return Ok(()) };
        if co.git.head().as_deref() == Some(base.as_str()) {
            return Ok(());
        }
        if !co.git.ok(&["merge-base", "--is-ancestor", base, "HEAD"]) {
            return Err(Error::state(format!(
                "the story's branch no longer holds {base}, where its work began"
            ))
            .hint("see `git log` in the run's work tree; stop the run with `baton stop RUN_ID`"));
        }
        co.git.run(&["reset", "-q", "--soft", base])?;
        Ok(())
    }

    /// Once a run: a clean tree for the skill. The files of the run's spec folders (every
    /// epic's, so the second epic's are not dirt during the first's) and BMAD's the run found
    /// uncommitted are committed (the skill reads them, and commits its own), and in the
    /// run's own worktree the other files carried in from the user's checkout are left out
    /// (they stay the user's, in the checkout).
    fn tidy_for_build_auto(&self, co: &Checkout, epic: &EpicRef) -> Result<()> {
        let marker = self.journal().dir.join("build-auto-tidy");
        if marker.is_file() {
            return Ok(());
        }
        let dirty = co.git.changes()?;
        let dirs: Vec<String> = self
            .spec_dirs
            .iter()
            .chain(epic.spec_dir.as_ref())
            .map(|d| format!("{}/", d.display()))
            .collect();
        let needed = needed_by_the_skill(&dirs);
        let (found, other): (Vec<String>, Vec<String>) = dirty
            .into_iter()
            .partition(|p| needed.iter().any(|n| p.starts_with(n.as_str())));
        if !found.is_empty() {
            let names = dirs
                .iter()
                .map(|d| d.trim_end_matches('/'))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(", ");
            let trailers = [
                ("Baton-Run", self.run_id.as_str()),
                ("Baton-Spec", names.as_str()),
            ];
            if co.git.find_commit(&trailers)?.is_none() {
                let refs: Vec<&str> = found.iter().map(String::as_str).collect();
                co.git.add_paths(&refs)?;
                co.git.commit_including(
                    &format!(
                        "docs(spec): the spec folders and BMAD's files as baton run {} found them\n\nBaton-Run: {}\nBaton-Spec: {names}\n",
                        self.run_id, self.run_id
                    ),
                    &refs,
                )?;
            }
        }
        let in_worktree = co.dir != self.user_dir;
        let carried: Vec<&String> = other
            .iter()
            .filter(|p| !self.baseline.is_work(p, true))
            .collect();
        if in_worktree && !carried.is_empty() {
            for p in &carried {
                let tracked = co.git.ok(&["cat-file", "-e", &format!("HEAD:{p}")]);
                if tracked {
                    co.git.run(&["checkout", "-q", "HEAD", "--", p])?;
                } else {
                    let f = co.dir.join(p);
                    baton_core::fs::confined(&co.dir, &f)?;
                    let _ = std::fs::remove_file(&f);
                }
            }
            self.note(&format!(
                "{} file(s) of your checkout are left out of the run's tree (bmad-build-auto needs a clean one); they stay yours",
                carried.len()
            ));
        }
        baton_core::fs::write_atomic(&marker, b"done\n")?;
        Ok(())
    }
}
