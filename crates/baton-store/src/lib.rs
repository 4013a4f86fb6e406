//! baton-store: the durable task store.
//!
//! One directory per task holds an append-only event log (the source of truth), a manifest
//! derived from it, and the artifacts phases stored. Every mutation follows one path
//! (`Store::mutate`): take the task's lock, re-read the log's end and the manifest inside it,
//! validate the new events with the pure state machine ([`machine`]), append the events with
//! one fsync, then write new artifact files, replace the manifest atomically and log to
//! history.md. A crash at any point leaves either the old state or a log the next command
//! (or `baton doctor`, [`doctor`]) replays and restores files from. [`retrieve`] condenses a
//! task's artifacts for a target phase; [`lang`] is the context-manager command language
//! over the store. Its errors are [`Error`]: the shared faults, a refused transition, a task
//! that is not there.
//!
//! Depends on baton-core only. It must never depend on the context toolkit, the agents or the
//! engines: a store is read and written the same way by a run, the CLI, MCP and a person.

#![cfg_attr(test, allow(clippy::print_stdout, clippy::print_stderr))]

pub mod artifacts;
pub mod doctor;
pub mod error;
pub mod lang;
pub mod log;
pub mod machine;
pub mod metrics;
pub mod model;
pub mod names;
pub mod query;
pub mod retrieve;
pub mod view;

use std::path::{Path, PathBuf};

pub use machine::Effect;
use model::*;
pub use retrieve::Retrieved;

use baton_core::fs;
pub use error::{Error, Result};

pub const EVENTS: &str = "events.jsonl";
pub const MANIFEST: &str = "manifest.json";
/// History lines a command could not append to history.md after its event was durable; the
/// next command of the task (or `baton doctor`) appends them.
pub const HISTORY_PENDING: &str = "history.pending";
pub(crate) const LOCK: &str = ".lock";

/// The store under one root directory (`docs/orchestrator` by default).
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// What a mutation will do, decided from the manifest read inside the lock.
#[derive(Default)]
struct Plan {
    events: Vec<EventKind>,
    /// New files (relative to the task directory) created durably before the events.
    writes: Vec<(String, String)>,
    /// Lines for history.md.
    history: Vec<String>,
}

/// Result of a mutation.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub manifest: Manifest,
    pub effects: Vec<Effect>,
    /// Artifact files written, relative to the task directory.
    pub stored: Vec<String>,
}

impl Outcome {
    /// "ended implementation#2 success after 1.2s": the phase the command ended (the newest
    /// completed entry), for END_PHASE and COMPLETE_PHASE answers.
    pub fn ended_line(&self) -> String {
        match self.manifest.completed_phases.last() {
            Some(c) => format!(
                "ended {} {} after {}",
                c.label(),
                c.status,
                metrics::human_ms(c.duration_ms)
            ),
            None => "ended".to_string(),
        }
    }
}

/// A STORE request.
#[derive(Debug, Clone, Default)]
pub struct Content {
    pub task_id: Option<String>,
    pub iteration: Option<u32>,
    pub text: String,
}

impl Store {
    pub fn new(root: impl Into<PathBuf>) -> Store {
        Store { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn context_dir(&self) -> PathBuf {
        self.root.join("context")
    }
    pub fn tasks_dir(&self) -> PathBuf {
        self.context_dir().join("tasks")
    }
    pub fn task_dir(&self, slug: &str) -> PathBuf {
        self.tasks_dir().join(slug)
    }
    pub fn memory_dir(&self) -> PathBuf {
        self.root.join("memory")
    }
    pub fn history_path(&self) -> PathBuf {
        self.context_dir().join("history.md")
    }
    pub fn current_path(&self) -> PathBuf {
        self.context_dir().join("current-task.md")
    }

    fn global_lock(&self) -> Result<fs::Lock> {
        Ok(fs::lock(&self.context_dir().join(LOCK))?)
    }

    /// Whether a task exists: it has at least one acknowledged event.
    pub fn exists(&self, slug: &str) -> bool {
        std::fs::metadata(self.task_dir(slug).join(EVENTS)).is_ok_and(|m| m.len() > 0)
    }

    // ---- INIT -------------------------------------------------------------------------------

    pub fn init(&self, name: &str, mode: Mode, workflow: Workflow) -> Result<Manifest> {
        let slug = names::slugify(name)?;
        self.ensure_layout()?;
        let dir = self.task_dir(&slug);
        fs::confined(&self.root, &dir)?;
        fs::create_dir_all(&dir)?;
        let _lock = fs::lock(&dir.join(LOCK))?;
        let events = dir.join(EVENTS);
        let tail = if events.exists() {
            Some(log::tail(&events)?)
        } else {
            None
        };
        if let Some(t) = &tail {
            log::repair_torn(&events, t)?;
            if t.last_seq > 0 {
                return Err(
                    Error::state(format!("task `{slug}` already exists")).hint(format!(
                        "pick another name, or work on it with --task {slug}"
                    )),
                );
            }
        }
        let ts = baton_core::ids::now();
        let event = Event {
            v: EVENT_FORMAT,
            seq: 1,
            ts: ts.clone(),
            kind: EventKind::TaskCreated {
                name: slug.clone(),
                mode,
                workflow,
            },
        };
        let manifest = machine::create(&event)?;
        log::append(&events, &[event])?;
        self.write_manifest(&dir, &manifest)?;
        let _global = self.global_lock()?;
        self.write_current(&slug, &ts)?;
        drop(_global);
        self.record_history(
            &slug,
            &ts,
            &[format!("INIT {name:?} mode: {mode} workflow: {workflow}")],
        );
        Ok(manifest)
    }

    /// Create the directories and the files that must exist (never overwriting one).
    fn ensure_layout(&self) -> Result<()> {
        fs::create_dir_all(&self.tasks_dir())?;
        fs::create_dir_all(&self.memory_dir())?;
        let initial: [(PathBuf, &str); 4] = [
            (
                self.memory_dir().join("decisions.md"),
                "# Decisions\n\nProject-level decisions, one `##` section each. Injected by RETRIEVE when `needs` includes `memory`.\n",
            ),
            (
                self.memory_dir().join("patterns.md"),
                "# Patterns\n\nReusable patterns, one `##` section each. Injected by RETRIEVE when `needs` includes `memory`.\n",
            ),
            (
                self.history_path(),
                "# History\n\nAppend-only log of every task command (UTC).\n\n",
            ),
            (
                self.context_dir().join(".gitignore"),
                ".lock\n.tmp*\n.baton-tmp-*\n*/.lock\n*/*/.lock\n*/*/.tmp*\n",
            ),
        ];
        // A store made before temp files were named `.baton-tmp-*` learns the pattern.
        let ignore = self.context_dir().join(".gitignore");
        if let Ok(Some(text)) = fs::read_text_opt(&ignore)
            && !text.contains(".baton-tmp-*")
        {
            fs::append(&ignore, b".baton-tmp-*\n")?;
        }
        for (path, text) in initial {
            if !path.exists() {
                match fs::write_new_durable(&path, text.as_bytes()) {
                    Ok(()) => {}
                    // Another process created it first: fine, it is never overwritten.
                    Err(_) if path.exists() => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(())
    }

    // ---- current task -----------------------------------------------------------------------

    fn write_current(&self, slug: &str, ts: &str) -> Result<()> {
        let text = format!(
            "# Current task\n\ntask: {slug}\nset_at: {ts}\nmanifest: tasks/{slug}/{MANIFEST}\n"
        );
        Ok(fs::write_atomic(&self.current_path(), text.as_bytes())?)
    }

    pub fn current(&self) -> Result<Option<String>> {
        let path = self.current_path();
        let Some(text) = fs::read_text_opt(&path)? else {
            return Ok(None);
        };
        let slug = text
            .lines()
            .find_map(|l| l.strip_prefix("task:"))
            .map(|s| s.trim().to_string())
            .ok_or_else(|| Error::corrupt(&path, None, "no `task:` line"))?;
        names::check_slug(&slug).map_err(|e| Error::corrupt(&path, None, e.to_string()))?;
        Ok(Some(slug))
    }

    /// Make `slug` the current task.
    pub fn use_task(&self, slug: &str) -> Result<()> {
        self.require(slug)?;
        let ts = baton_core::ids::now();
        let _g = self.global_lock()?;
        self.write_current(slug, &ts)?;
        self.append_history(slug, &ts, &["USE (current task)".to_string()])
    }

    /// The task a command works on: `--task` if given, else the current task.
    pub fn resolve(&self, explicit: Option<&str>) -> Result<String> {
        let slug = match explicit {
            Some(s) => {
                names::check_slug(s)?;
                s.to_string()
            }
            None => self.current()?.ok_or_else(|| {
                Error::not_found(format!("no current task in {}", self.root.display()))
                    .hint("create one first: baton task init <name> (or pass --task SLUG)")
            })?,
        };
        self.require(&slug)?;
        Ok(slug)
    }

    /// ` (did you mean `add-login`?)` when a task's slug is close to `slug`.
    pub fn did_you_mean(&self, slug: &str) -> String {
        let slugs = self.slugs().unwrap_or_default();
        names::did_you_mean(slug, slugs.iter().map(String::as_str))
    }

    fn require(&self, slug: &str) -> Result<()> {
        if self.exists(slug) {
            // A task directory (or the tasks directory) symlinked elsewhere would take every
            // read and write of the task out of the store.
            return Ok(fs::confined(&self.root, &self.task_dir(slug))?);
        }
        Err(Error::NoTask {
            slug: slug.to_string(),
            tasks: self.tasks_dir(),
            did_you_mean: self.did_you_mean(slug),
        })
    }

    // ---- reading ----------------------------------------------------------------------------

    /// The task's manifest, rebuilt from the events first if it is missing or stale.
    pub fn manifest(&self, slug: &str) -> Result<Manifest> {
        self.require(slug)?;
        let dir = self.task_dir(slug);
        let tail = log::tail(&dir.join(EVENTS))?;
        // Read without the lock: a manifest that does not parse may be mid-write (see
        // `fs::replace_with_spare`), so it is read again under the lock before it is an error.
        if let Ok(Some(m)) = read_manifest(&dir)
            && m.version == tail.last_seq
        {
            return Ok(m);
        }
        let _lock = fs::lock(&dir.join(LOCK))?;
        let tail = log::tail(&dir.join(EVENTS))?;
        self.load_locked(&dir, tail.last_seq)
    }

    /// Inside the task lock: the manifest matching `last_seq`, rebuilding it if needed.
    fn load_locked(&self, dir: &Path, last_seq: u64) -> Result<Manifest> {
        if let Some(m) = read_manifest(dir)?
            && m.version == last_seq
        {
            return Ok(m);
        }
        let events = dir.join(EVENTS);
        let m = log::replay(&events)?
            .ok_or_else(|| Error::corrupt(&events, None, "the event log is empty"))?;
        self.write_manifest(dir, &m)?;
        Ok(m)
    }

    pub(crate) fn write_manifest(&self, dir: &Path, m: &Manifest) -> Result<()> {
        let mut bytes = model::completed::to_json(m).map_err(|e| Error::internal(e.to_string()))?;
        bytes.push(b'\n');
        Ok(fs::replace_with_spare(&dir.join(MANIFEST), &bytes)?)
    }

    /// Slugs of every task, sorted.
    pub fn slugs(&self) -> Result<Vec<String>> {
        let dir = self.tasks_dir();
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
            Err(e) => return Err(Error::io(&dir, e)),
        };
        let mut slugs: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|s| names::check_slug(s).is_ok() && self.exists(s))
            .collect();
        slugs.sort();
        Ok(slugs)
    }

    pub fn list(&self) -> Result<Vec<Manifest>> {
        self.slugs()?.iter().map(|s| self.manifest(s)).collect()
    }

    // ---- mutations --------------------------------------------------------------------------

    fn mutate<T>(
        &self,
        slug: &str,
        decide: impl FnOnce(&Manifest, &Path) -> Result<(Plan, T)>,
    ) -> Result<(Outcome, T)> {
        self.require(slug)?;
        let dir = self.task_dir(slug);
        let events_path = dir.join(EVENTS);
        let _lock = fs::lock(&dir.join(LOCK))?;
        let tail = log::tail(&events_path)?;
        log::repair_torn(&events_path, &tail)?;
        let current = self.load_locked(&dir, tail.last_seq)?;
        let (plan, extra) = decide(&current, &dir)?;

        let ts = baton_core::ids::now();
        let mut state = current;
        let mut effects = Vec::with_capacity(plan.events.len());
        let mut events = Vec::with_capacity(plan.events.len());
        // `state` is ours: a refused event returns the error and nothing is written.
        for (i, kind) in plan.events.into_iter().enumerate() {
            let e = Event {
                v: EVENT_FORMAT,
                seq: tail.last_seq + 1 + i as u64,
                ts: ts.clone(),
                kind,
            };
            effects.push(machine::step(&mut state, &e)?);
            events.push(e);
        }
        for (rel, _) in &plan.writes {
            // Mostly the task directory or `implementations/`, `tests/` that exist: one mkdir.
            // Made before the event, so a folder that cannot exist refuses the command.
            if let Some(parent) = dir.join(rel).parent()
                && let Err(e) = std::fs::create_dir(parent)
                && e.kind() != std::io::ErrorKind::AlreadyExists
            {
                fs::create_dir_all(parent)?;
            }
        }
        log::append(&events_path, &events)?;
        // The artifact files after the event: the event carries their content, so they are
        // derived like the manifest — not fsync'd, and a file lost to a crash or a power cut
        // (or not written at all) is restored from the event by `baton doctor`. Written
        // before, a new file's metadata joined the journal commit the event's fsync forces
        // (~1 ms on ext4); now a later commit takes it. See docs/ARCHITECTURE.md, "One fsync".
        let mut stored = Vec::with_capacity(plan.writes.len());
        for (rel, text) in plan.writes {
            if let Err(e) = fs::write_new(&dir.join(&rel), text.as_bytes()) {
                baton_core::notice::warning(format!(
                    "{e}; the content is in the task's event log: `baton doctor` writes the file"
                ));
            }
            stored.push(rel);
        }
        self.write_manifest(&dir, &state)?;
        if !plan.history.is_empty() {
            self.record_history(slug, &ts, &plan.history);
        }
        Ok((
            Outcome {
                manifest: state,
                effects,
                stored,
            },
            extra,
        ))
    }

    pub fn start_phase(&self, slug: &str, phase: &str, task_id: Option<&str>) -> Result<Outcome> {
        check_phase_args(phase, task_id)?;
        let event = EventKind::PhaseStarted {
            phase: phase.into(),
            task_id: task_id.map(Into::into),
        };
        self.record(
            slug,
            event,
            format!("START_PHASE {}", phase_label(phase, task_id)),
        )
    }

    pub fn end_phase(
        &self,
        slug: &str,
        phase: &str,
        task_id: Option<&str>,
        status: PhaseStatus,
    ) -> Result<Outcome> {
        self.complete_phase(slug, phase, task_id, status, None)
    }

    /// COMPLETE_PHASE: STORE (when there is content) + END_PHASE, in one lock and one fsync.
    pub fn complete_phase(
        &self,
        slug: &str,
        phase: &str,
        task_id: Option<&str>,
        status: PhaseStatus,
        content: Option<Content>,
    ) -> Result<Outcome> {
        check_phase_args(phase, task_id)?;
        self.mutate(slug, |m, dir| {
            // `task_id` names the stored file (`COMPLETE_PHASE … task_id: 1 content: …`);
            // a phase started without one is still the phase this ends.
            let running = |id: Option<&str>| {
                m.running_phases
                    .iter()
                    .any(|r| r.phase == phase && r.task_id.as_deref() == id)
            };
            let end_id = if task_id.is_some() && !running(task_id) && running(None) {
                None
            } else {
                task_id
            };
            let label = phase_label(phase, end_id);
            let mut plan = Plan::default();
            if let Some(c) = content {
                let c = Content {
                    task_id: c.task_id.or(task_id.map(Into::into)),
                    ..c
                };
                plan_store(&mut plan, dir, phase, c)?;
            }
            plan.events.push(EventKind::PhaseEnded {
                phase: phase.into(),
                task_id: end_id.map(Into::into),
                status,
            });
            let verb = if plan.writes.is_empty() {
                "END_PHASE"
            } else {
                "COMPLETE_PHASE"
            };
            plan.history.push(format!("{verb} {label} {status}"));
            Ok((plan, ()))
        })
        .map(|(o, _)| o)
    }

    /// BEGIN_PHASE: RETRIEVE + START_PHASE. The context is read inside the same lock, so it is
    /// the context the phase starts from.
    pub fn begin_phase(
        &self,
        slug: &str,
        phase: &str,
        task_id: Option<&str>,
        needs: &[String],
    ) -> Result<(Outcome, Retrieved)> {
        check_phase_args(phase, task_id)?;
        // COMPLETE_PHASE would refuse any other: the phase would stay running.
        artifacts::check_store_phase(phase)?;
        let label = phase_label(phase, task_id);
        let memory = self.memory_dir();
        self.mutate(slug, |m, dir| {
            let got = retrieve::retrieve(dir, &memory, m, needs, phase)?;
            let plan = Plan {
                events: vec![EventKind::PhaseStarted {
                    phase: phase.into(),
                    task_id: task_id.map(Into::into),
                }],
                history: vec![format!(
                    "BEGIN_PHASE {label} needs: {}",
                    join_or_none(needs)
                )],
                ..Plan::default()
            };
            Ok((plan, got))
        })
    }

    pub fn store(&self, slug: &str, phase: &str, content: Content) -> Result<Outcome> {
        self.mutate(slug, |_, dir| {
            let mut plan = Plan::default();
            plan_store(&mut plan, dir, phase, content)?;
            Ok((plan, ()))
        })
        .map(|(o, _)| o)
    }

    pub fn retrieve(&self, slug: &str, needs: &[String], for_phase: &str) -> Result<Retrieved> {
        names::check_phase(for_phase)?;
        let m = self.manifest(slug)?;
        doctor::restore_for_retrieve(&self.task_dir(slug))?;
        retrieve::retrieve(
            &self.task_dir(slug),
            &self.memory_dir(),
            &m,
            needs,
            for_phase,
        )
    }

    pub fn pause(&self, slug: &str, reason: &str, recommendations: Vec<String>) -> Result<Outcome> {
        if reason.trim().is_empty() {
            return Err(
                Error::invalid("PAUSE needs a reason").hint("pass --reason \"why the task stops\"")
            );
        }
        let event = EventKind::Paused {
            reason: reason.into(),
            recommendations,
        };
        self.record(slug, event, format!("PAUSE reason: {}", one_line(reason)))
    }

    pub fn set_gate(
        &self,
        slug: &str,
        gate: Gate,
        prompt: &str,
        artifacts: Vec<String>,
    ) -> Result<Outcome> {
        for a in &artifacts {
            if a.contains('\0') || a.starts_with('/') || a.split('/').any(|c| c == "..") {
                return Err(Error::invalid(format!(
                    "gate artifact `{a}` must be a path relative to the project, without `..`"
                )));
            }
        }
        let event = EventKind::GateSet {
            gate,
            prompt: prompt.into(),
            artifacts,
        };
        self.record(slug, event, format!("SET_GATE {gate}"))
    }

    /// The task breakdown of the spec and its waves (`manifest.waves.task_breakdown`).
    pub fn record_waves(&self, slug: &str, task_breakdown: serde_json::Value) -> Result<Outcome> {
        let n = task_breakdown["waves"].as_array().map_or(0, Vec::len);
        let event = EventKind::WavesRecorded { task_breakdown };
        self.record(slug, event, format!("WAVES planned: {n} waves"))
    }

    /// One executed wave (`manifest.waves.execution`).
    pub fn record_wave(&self, slug: &str, wave: serde_json::Value) -> Result<Outcome> {
        let line = format!(
            "WAVE {} done: {} ms wall, {} ms saved",
            wave["wave"], wave["wall_ms"], wave["savings_ms"]
        );
        self.record(slug, EventKind::WaveExecuted { wave }, line)
    }

    /// A command that is one event and one history line (START_PHASE, PAUSE, SET_GATE).
    fn record(&self, slug: &str, event: EventKind, history: String) -> Result<Outcome> {
        self.mutate(slug, |_, _| {
            Ok((
                Plan {
                    events: vec![event],
                    history: vec![history],
                    ..Plan::default()
                },
                (),
            ))
        })
        .map(|(o, _)| o)
    }

    pub fn resume(&self, slug: &str, decision: Decision) -> Result<Outcome> {
        self.mutate(slug, |m, dir| {
            // Shelving keeps what the investigation found: taken from architect.md now, so the
            // event carries it and replay needs no file.
            let investigation_summary = (decision == Decision::Shelf
                && m.gate_context
                    .as_ref()
                    .is_some_and(|g| g.gate == Gate::Investigation))
            .then(|| retrieve::investigation_summary(dir))
            .transpose()?;
            let events = vec![EventKind::Resumed {
                decision,
                investigation_summary,
            }];
            Ok((
                Plan {
                    events,
                    history: vec![],
                    ..Plan::default()
                },
                (),
            ))
        })
        .map(|(o, _)| {
            let at = o.effects[0]
                .continue_at
                .as_deref()
                .map(|p| format!(" → continue at {p}"))
                .unwrap_or_default();
            let ts = o.manifest.updated_at.clone();
            self.record_history(
                slug,
                &ts,
                &[format!("RESUME {decision} → {}{at}", o.manifest.status)],
            );
            o
        })
    }

    // ---- history ----------------------------------------------------------------------------

    /// Add a line about the task to history.md (an orchestrator's own events, such as a
    /// conductor rotation, that change no task state).
    pub fn note(&self, slug: &str, line: &str) -> Result<()> {
        let _g = self.global_lock()?;
        self.append_history(slug, &baton_core::ids::now(), &[line.to_string()])
    }

    fn append_history(&self, slug: &str, ts: &str, lines: &[String]) -> Result<()> {
        Ok(fs::append(
            &self.history_path(),
            history_text(slug, ts, lines).as_bytes(),
        )?)
    }

    /// history.md after a command's event is durable: a failure to append (a full disk, a
    /// directory in its place) must not turn the command's success into an error, so it is a
    /// warning, and the lines wait in the task's `history.pending` for the next command.
    fn record_history(&self, slug: &str, ts: &str, lines: &[String]) {
        let res = self.global_lock().and_then(|_g| {
            self.flush_pending_history(slug)?;
            self.append_history(slug, ts, lines)
        });
        if let Err(e) = res {
            let pending = self.task_dir(slug).join(HISTORY_PENDING);
            let kept = fs::append(&pending, history_text(slug, ts, lines).as_bytes()).is_ok();
            let what = if kept {
                format!(
                    "the history line waits in {}; the next command or `baton doctor` adds it",
                    pending.display()
                )
            } else {
                "the history line is lost (the event is recorded)".to_string()
            };
            baton_core::notice::warning(format!("history.md not written ({e}); {what}"));
        }
    }

    /// Append the task's pending history lines, if any (the caller holds the global lock).
    /// Returns how many lines were added.
    pub(crate) fn flush_pending_history(&self, slug: &str) -> Result<usize> {
        let pending = self.task_dir(slug).join(HISTORY_PENDING);
        let Some(text) = fs::read_text_opt(&pending)? else {
            return Ok(0);
        };
        fs::append(&self.history_path(), text.as_bytes())?;
        std::fs::remove_file(&pending).map_err(|e| Error::io(&pending, e))?;
        Ok(text.lines().count())
    }

    pub(crate) fn lock_history(&self) -> Result<fs::Lock> {
        self.global_lock()
    }

    /// The last `n` entries of history.md, read from the end of the file.
    pub fn history_tail(&self, n: usize) -> Result<Vec<String>> {
        let path = self.history_path();
        if !path.exists() {
            return Ok(vec![]);
        }
        let mut window: u64 = 64 * 1024;
        loop {
            let (buf, len) = fs::read_tail(&path, window)?;
            let text = String::from_utf8_lossy(&buf);
            let mut lines: Vec<&str> = text.lines().collect();
            let whole = buf.len() as u64 == len;
            if !whole {
                lines.remove(0); // may be cut in the middle
            }
            let entries: Vec<&str> = lines.into_iter().filter(|l| l.starts_with("- ")).collect();
            if entries.len() >= n || whole {
                let skip = entries.len().saturating_sub(n);
                return Ok(entries[skip..].iter().map(|s| s.to_string()).collect());
            }
            window *= 4;
        }
    }
}

/// Add a STORE to a plan: decide the file, check the content.
fn plan_store(plan: &mut Plan, dir: &Path, phase: &str, c: Content) -> Result<()> {
    let rel = artifacts::target(dir, phase, c.task_id.as_deref(), c.iteration)?;
    if c.text.trim().is_empty() {
        return Err(Error::invalid(format!(
            "nothing to store for `{phase}`: the content is empty"
        ))
        .hint("pass the content on stdin, with --file, or after `content:`"));
    }
    plan.events.push(EventKind::ArtifactStored {
        phase: phase.into(),
        path: rel.clone(),
        task_id: c.task_id,
        iteration: c.iteration,
        bytes: c.text.len() as u64,
        content: Some(c.text.clone()),
    });
    plan.history.push(format!("STORE {phase} → {rel}"));
    plan.writes.push((rel, c.text));
    Ok(())
}

fn join_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(",")
    }
}

/// History entries are one line each.
fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 300 {
        let cut: String = flat.chars().take(300).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

fn check_phase_args(phase: &str, task_id: Option<&str>) -> Result<()> {
    names::check_phase(phase)?;
    if let Some(id) = task_id {
        names::check_task_id(id)?;
    }
    Ok(())
}

pub(crate) fn read_manifest(dir: &Path) -> Result<Option<Manifest>> {
    let path = dir.join(MANIFEST);
    let bytes = match fs::read_no_link(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fs::no_link(&path, e).into()),
    };
    model::completed::from_json(bytes)
        .map(Some)
        .map_err(|e| Error::corrupt(&path, Some(e.line()), format!("not a valid manifest: {e}")))
}

fn history_text(slug: &str, ts: &str, lines: &[String]) -> String {
    let mut buf = String::new();
    for l in lines {
        buf.push_str(&format!("- {ts} [{slug}] {}\n", one_line(l)));
    }
    buf
}
