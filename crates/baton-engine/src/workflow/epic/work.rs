//! A story's work in the tree. baton stages it itself after every phase that edits (so no
//! agent needs write access to `.git`), and sets it aside when the story fails — in both
//! cases only what changed since the run started: files that were untracked or modified
//! before (a user's `baton.toml`, notes) are never staged, stashed or committed by a story.

use std::collections::BTreeSet;

use super::*;

/// The work tree as the run found it. Recorded in the journal's `run_started` entry, so a
/// resumed run knows it too.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
pub struct Baseline {
    /// Paths that were untracked, modified, deleted or staged before the run started.
    #[serde(default)]
    pub dirty: BTreeSet<String>,
    /// baton's own folder, relative to the project (`.baton`): never a story's work.
    #[serde(default)]
    pub local: String,
}

impl Baseline {
    /// The baseline of the project at `git` now.
    pub fn capture(git: &Git, local: &str) -> Result<Baseline> {
        Ok(Baseline {
            dirty: git.changes()?.into_iter().collect(),
            local: local.trim_end_matches('/').to_string(),
        })
    }

    /// Whether `path` (relative, as git prints it) can be a story's work, in a checkout where
    /// `pre_run` applies. [`EpicEngine::stage_work`] says the same to git as pathspec excludes.
    pub(super) fn is_work(&self, path: &str, pre_run: bool) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        let in_local = !self.local.is_empty()
            && (path == self.local || path.starts_with(&format!("{}/", self.local)));
        let theirs = pre_run && self.dirty.contains(path);
        !(in_local || theirs || name.starts_with(baton_core::fs::TEMP_PREFIX))
    }
}

/// Files as they were (`None`: absent), to be put back byte for byte.
pub(crate) type Snapshot = Vec<(std::path::PathBuf, Option<Vec<u8>>)>;

impl EpicEngine<'_> {
    /// The files a status change of `story` in `co` writes, as they are now.
    pub(crate) fn status_snapshot(&self, co: &Checkout, story: &StoryRef) -> Snapshot {
        let mut files = vec![co.dir.join(&story.path)];
        if co.shared_status {
            files.extend(self.status.status_files().iter().map(|f| co.dir.join(f)));
        }
        files
            .into_iter()
            .map(|f| {
                let bytes = std::fs::read(&f).ok();
                (f, bytes)
            })
            .collect()
    }

    /// Put `kept` back as it was: a status change that must not stand (the phase never ran).
    pub(crate) fn put_back(&self, kept: Snapshot) -> Result<()> {
        if self.opts.dry_run {
            return Ok(());
        }
        for (f, bytes) in kept {
            match bytes {
                Some(b) => baton_core::fs::write_atomic(&f, &b)?,
                None => {
                    let _ = std::fs::remove_file(&f);
                }
            }
        }
        Ok(())
    }

    /// What changed in `co` since the run started: candidates for staging or stashing. The
    /// pre-run set applies to the project's own checkout; a worktree starts clean.
    pub(crate) fn work_of(&self, co: &Checkout) -> Result<Vec<String>> {
        Ok(self.work_in(co, &co.git.status()?))
    }

    /// The paths of a `git status` of `co` that are work (see [`Baseline::is_work`]), sorted.
    fn work_in(&self, co: &Checkout, status: &[([u8; 2], String)]) -> Vec<String> {
        let pre_run = co.dir == self.project_dir;
        let mut work: Vec<String> = status
            .iter()
            .map(|(_, p)| p)
            .filter(|p| self.baseline.is_work(p, pre_run))
            .cloned()
            .collect();
        work.sort();
        work.dedup();
        work
    }

    /// Stage the work of a phase that edits (dev, review fixes). Staging again what is staged
    /// already changes nothing, so a resumed phase may do it twice. One `git add -A` of the
    /// tree minus what [`Baseline::is_work`] leaves out, as pathspec excludes (baton's folder
    /// unless git ignores it, its temp files, in the project's checkout the pre-run paths);
    /// else, path by path from one `git status`: when the excludes would not say the same
    /// (see [`EpicEngine::excludes_say_is_work`]) or git refuses one (it names a path ignored
    /// since the run started).
    pub(crate) fn stage_work(&self, co: &Checkout) -> Result<()> {
        let pre_run = co.dir == self.project_dir;
        let local = &self.baseline.local;
        if self.excludes_say_is_work(co, pre_run) {
            let mut excluded: Vec<&str> = Vec::new();
            // git refuses a pathspec, even an exclude, that names an ignored path; an
            // ignored folder needs none.
            if !local.is_empty()
                && !*lock(&self.local_ignored)
                    .entry(co.dir.clone())
                    .or_insert_with(|| co.git.is_ignored(local))
            {
                excluded.push(local);
            }
            if pre_run {
                excluded.extend(self.baseline.dirty.iter().map(String::as_str));
            }
            let temp = format!("**/{}*", baton_core::fs::TEMP_PREFIX);
            if co.git.add_all_except(&excluded, &[&temp]).is_ok() {
                return Ok(());
            }
        }
        let status = co.git.status()?;
        co.git.stage_among(&status, &self.work_in(co, &status))
    }

    /// Whether pathspec excludes of the pre-run paths leave out exactly what `is_work` does:
    /// not when there are many (git matches every file against every exclude: 10,000 cost
    /// 0.7 s an add), when a name is not UTF-8 (git's status gave it lossily: the exclude
    /// would miss the file), or when a pre-run file is now a folder (its exclude would cover
    /// what the run put in it).
    fn excludes_say_is_work(&self, co: &Checkout, pre_run: bool) -> bool {
        const MAX_EXCLUDES: usize = 500;
        !pre_run
            || (self.baseline.dirty.len() <= MAX_EXCLUDES
                && self.baseline.dirty.iter().all(|p| {
                    !p.contains(char::REPLACEMENT_CHARACTER)
                        && (p.ends_with('/') || !co.dir.join(p).is_dir())
                }))
    }

    /// Before a phase's call: a call of the same attempt that was started and never finished
    /// (killed, interrupted) leaves its partial edits in the tree; they are set aside in a
    /// stash named after the story (or the epic, for UAT and retro), the phase, the attempt
    /// and the run — once per killed call, never lost — so the call runs again from the tree
    /// as it was before. What earlier phases left is staged (see `stage_work`, and the epic
    /// loop for UAT's files), the user's pre-run files and baton's own status files stay. A
    /// story file holds both: the records of finished phases (some of which stage nothing,
    /// kickoff) and the killed call's half record. So before every call its content is kept
    /// beside the prompt (`<run>/before/<label>.md`), and a killed call's recovery stages that
    /// content first: the stash then holds only what the call added. (Staging the story file
    /// before every call did the same at a git process a call; the copy is a plain write,
    /// read only after a kill: the call starts only once it is written.)
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn before_call(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: Option<&StoryRef>,
        phase: &str,
        attempt: u32,
        subject: &Subject,
        label: &str,
    ) -> Result<()> {
        let kept = self
            .journal()
            .dir
            .join("before")
            .join(format!("{label}.md"));
        let killed = self.journal().killed_calls(subject, phase, attempt);
        if killed > 0 {
            // What the stash changes is not what a judge saw.
            if let Some(s) = story {
                lock(&self.staged_seen).remove(&(co.dir.clone(), s.id.clone()));
            }
            let (who, named) = match story {
                Some(s) => (format!("story {}", s.id), s.id.clone()),
                None => (format!("epic {}", epic.id), format!("epic {}", epic.id)),
            };
            let mut msg = format!(
                "baton: partial edits of {named} {phase} attempt {attempt}, run {}",
                self.run_id
            );
            if killed > 1 {
                msg.push_str(&format!(" (call {killed})"));
            }
            // The story file as the killed call found it, staged (not when the stash is made
            // already: the tree is then as it was, and the copy may be a newer call's).
            if let Some(s) = story
                && !co.git.stash_exists(&msg)?
                && let Ok(before) = std::fs::read(&kept)
            {
                co.git
                    .stage_content(&s.path.display().to_string(), &before)?;
            }
            let status_files = self.status_file_names();
            let pre_run = co.dir == self.project_dir;
            let partial: Vec<String> = co
                .git
                .unstaged_paths()?
                .into_iter()
                .filter(|p| self.baseline.is_work(p, pre_run) && !status_files.contains(p))
                .collect();
            if co.git.stash_unstaged(&msg, &partial)? {
                self.note(&format!(
                    "{who}: the {phase} call cut off before it finished left edits; they are set aside in `git stash list` (\"{msg}\") and the call runs again"
                ));
            }
        }
        let Some(s) = story else {
            return Ok(());
        };
        match std::fs::read(co.dir.join(&s.path)) {
            Ok(text) => {
                let dir = kept.parent().unwrap_or(Path::new("."));
                baton_core::fs::create_dir_all(dir)?;
                // Whole or not at all: a kill mid-write must not leave half a story to stage.
                Ok(baton_core::fs::write_atomic(&kept, &text)?)
            }
            // No story file to keep: nor an older call's copy.
            Err(_) => match std::fs::remove_file(&kept) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&kept, e)),
                _ => Ok(()),
            },
        }
    }

    /// A failed story's own changes, set aside in one stash named after the run and the
    /// story (once, even when a killed run is resumed); its story file and the status files
    /// stay, to be committed with the record of the attempts. Returns the stash's name.
    pub(crate) fn stash_story_work(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
    ) -> Result<Option<String>> {
        let keep: Vec<String> = std::iter::once(story.path.display().to_string())
            .chain(self.status_file_names())
            .collect();
        let own: Vec<String> = self
            .work_of(co)?
            .into_iter()
            .filter(|p| !keep.contains(p))
            .collect();
        let round = self.journal().story_round(&epic.id, &story.id).suffix();
        let msg = format!("baton {}: story {} failed{round}", self.run_id, story.id);
        // The kept files are unstaged too: a stash records the whole index, and their changes
        // are not the stash's (they are committed next, with the record).
        let keep_refs: Vec<&str> = keep.iter().map(String::as_str).collect();
        co.git.unstage(&keep_refs)?;
        Ok(co.git.stash_paths(&msg, &own)?.then_some(msg))
    }

    /// Write why the story failed into its record section (the failed phase's, else the
    /// dev record): at the section's end when the story has it, else as a new section. Once
    /// per run and story.
    pub(crate) fn record_failure(
        &self,
        co: &Checkout,
        epic: &EpicRef,
        story: &StoryRef,
        record: &str,
        reason: &str,
        stash: Option<&str>,
    ) -> Result<()> {
        let path = co.dir.join(&story.path);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        let round = self.journal().story_round(&epic.id, &story.id).suffix();
        let marker = format!("baton run {}{round}: not done", self.run_id);
        if text.contains(&marker) {
            return Ok(());
        }
        let set_aside = match stash {
            Some(m) => format!(" Its changes of this run are in `git stash list` (\"{m}\")."),
            None => String::new(),
        };
        let note = format!(
            "\n### {marker}\n\nThe story stays in progress: {}.{set_aside}\n",
            reason.trim()
        );
        let new = judge::insert_in_record(&text, record, &note);
        bmad::status::replace_file(&path, new.as_bytes())
    }
}
