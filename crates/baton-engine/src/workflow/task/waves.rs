//! Implementation waves: the spec's task list, its topological levels, and running each
//! level's tasks in parallel (each task its own phase of the store).

use super::*;

/// One task of a spec's `## Tasks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecTask {
    pub id: String,
    pub title: String,
    pub depends_on: Vec<String>,
    pub files: Vec<String>,
}

/// The tasks of a spec (or a poc's architect.md): every heading `Task <id>: <title>` (any
/// level), with `Depends on: 1, 2` (or `none`) and `Files: …` lines in its section.
pub fn parse_tasks(text: &str) -> Vec<SpecTask> {
    let mut out = Vec::new();
    for s in markdown::sections(text) {
        let title = s.title.trim();
        let Some(rest) = title
            .strip_prefix("Task ")
            .or_else(|| title.strip_prefix("task "))
        else {
            continue;
        };
        let (id, name) = match rest.split_once(':') {
            Some((id, name)) => (id.trim(), name.trim()),
            None => (rest.trim(), ""),
        };
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let mut t = SpecTask {
            id: id.to_string(),
            title: name.to_string(),
            depends_on: vec![],
            files: vec![],
        };
        // Only the section's own lines up to the next heading.
        for line in s.text(text).lines().skip(1) {
            if line.trim_start().starts_with('#') {
                break;
            }
            let l = line
                .trim()
                .trim_start_matches(['-', '*', ' '])
                .replace("**", "");
            let list = |v: &str| -> Vec<String> {
                v.split(',')
                    .map(|x| {
                        x.trim()
                            .trim_matches('`')
                            .trim_start_matches("Task ")
                            .trim()
                    })
                    .filter(|x| !x.is_empty() && !x.eq_ignore_ascii_case("none"))
                    .map(str::to_string)
                    .collect()
            };
            if let Some(v) = l.strip_prefix("Depends on:") {
                t.depends_on = list(v);
            } else if let Some(v) = l.strip_prefix("Files:") {
                t.files = list(v);
            }
        }
        if !out.iter().any(|o: &SpecTask| o.id == t.id) {
            out.push(t);
        }
    }
    out
}

/// Topological levels: wave 1 holds the tasks without dependencies, wave k those whose
/// dependencies are all in earlier waves. Errors name `source` and what is wrong.
pub fn compute_waves(
    tasks: &[SpecTask],
    source: &str,
) -> std::result::Result<Vec<Vec<String>>, String> {
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    for t in tasks {
        for d in &t.depends_on {
            if !ids.contains(&d.as_str()) {
                return Err(format!(
                    "{source}: task {} depends on task {d}, which {source} does not define (tasks: {})",
                    t.id,
                    ids.join(", ")
                ));
            }
            if d == &t.id {
                return Err(format!("{source}: task {} depends on itself", t.id));
            }
        }
    }
    let mut level: HashMap<&str, usize> = HashMap::new();
    let mut waves: Vec<Vec<String>> = Vec::new();
    while level.len() < tasks.len() {
        let ready: Vec<&SpecTask> = tasks
            .iter()
            .filter(|t| !level.contains_key(t.id.as_str()))
            .filter(|t| t.depends_on.iter().all(|d| level.contains_key(d.as_str())))
            .collect();
        if ready.is_empty() {
            let left: Vec<&str> = tasks
                .iter()
                .filter(|t| !level.contains_key(t.id.as_str()))
                .map(|t| t.id.as_str())
                .collect();
            return Err(format!(
                "{source}: dependency cycle among tasks {}",
                left.join(", ")
            ));
        }
        let k = waves.len();
        for t in &ready {
            level.insert(t.id.as_str(), k);
        }
        waves.push(ready.iter().map(|t| t.id.clone()).collect());
    }
    Ok(waves)
}

/// What a task's plan came to: its tasks and the artifact they came from, or why it cannot
/// be used.
pub(super) enum Breakdown {
    Tasks(Vec<SpecTask>, String),
    Unusable(String),
}

impl TaskEngine<'_> {
    /// The implementation tasks: spec.md's (graduate, orchestrate), architect.md's (poc), or
    /// one task for the whole change.
    pub(super) fn spec_tasks(&self) -> Result<Breakdown> {
        let dir = self.store.task_dir(&self.slug);
        let mut sources = vec![("spec", artifacts::latest(&dir, "spec"))];
        sources.push(("architect", artifacts::latest(&dir, "architect")));
        for (name, path) in sources {
            let Some(path) = path else { continue };
            let text = baton_core::fs::read_text(&path)?;
            let tasks = parse_tasks(&text);
            if !tasks.is_empty() {
                let rel = path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                return Ok(Breakdown::Tasks(tasks, rel));
            }
            if name == "spec" {
                return Ok(Breakdown::Unusable(format!(
                    "{}: no tasks (expected `### Task 1: <title>` sections)",
                    self.rel(&path)
                )));
            }
        }
        Ok(Breakdown::Tasks(
            vec![SpecTask {
                id: "1".into(),
                title: "the whole change".into(),
                depends_on: vec![],
                files: vec![],
            }],
            "architect.md".into(),
        ))
    }

    /// Implementation in waves: independent tasks at once (up to `parallel`), dependent ones in
    /// later waves; each task its own phase (`implementation#<id>`); each wave recorded.
    pub(super) fn implementation(&self, wf: &TaskWorkflow, p: &TaskPhase) -> Result<Option<Stop>> {
        let (tasks, source) = loop {
            let why = match self.spec_tasks()? {
                Breakdown::Tasks(tasks, source) => match compute_waves(&tasks, &source) {
                    Ok(_) => break (tasks, source),
                    Err(why) => why,
                },
                Breakdown::Unusable(why) => why,
            };
            if let Some(stop) = self.pause_point("task-breakdown", &why)? {
                return Ok(Some(stop));
            }
        };
        let waves = compute_waves(&tasks, &source).map_err(Error::internal)?;
        if self.manifest()?.waves.task_breakdown.is_none() {
            let breakdown = serde_json::json!({
                "source": source,
                "tasks": tasks,
                "waves": waves,
            });
            self.store.record_waves(&self.slug, breakdown)?;
        }
        self.say(&format!(
            "{}: {} tasks in {} waves ({})",
            self.slug,
            tasks.len(),
            waves.len(),
            waves
                .iter()
                .map(|w| w.join("+"))
                .collect::<Vec<_>>()
                .join(" → ")
        ));
        for (k, wave) in waves.iter().enumerate() {
            let recorded = self
                .manifest()?
                .waves
                .execution
                .iter()
                .any(|w| w["wave"].as_u64() == Some(k as u64 + 1));
            if recorded {
                // Replay: the wave ran; its phases replay from the journal.
                for id in wave {
                    let t = tasks.iter().find(|t| &t.id == id);
                    self.task_phase_replay(wf, p, id, t)?;
                }
                continue;
            }
            let mut pending: Vec<String> = wave.clone();
            let mut round = 0;
            loop {
                round += 1;
                let results = self.parallel(wf, p, &pending, &tasks)?;
                let failed: Vec<(String, String)> = results
                    .into_iter()
                    .filter_map(|(id, v)| match v {
                        Verdict::Pass => None,
                        Verdict::Fail(w) | Verdict::Error(w) => Some((id, w)),
                    })
                    .collect();
                if failed.is_empty() {
                    break;
                }
                let why = failed
                    .iter()
                    .map(|(id, w)| format!("implementation#{id}: {w}"))
                    .collect::<Vec<_>>()
                    .join("; ");
                if let Some(stop) = self.pause_point(&format!("wave-{}@{round}", k + 1), &why)? {
                    return Ok(Some(stop));
                }
                pending = failed.into_iter().map(|(id, _)| id).collect();
            }
            let wave_json = self.wave_record(k + 1, wave)?;
            self.say(&format!(
                "  wave {}: {} tasks, {} ms wall, {} ms of work, {} ms saved",
                k + 1,
                wave.len(),
                wave_json["wall_ms"],
                wave_json["sum_task_ms"],
                wave_json["savings_ms"]
            ));
            self.store.record_wave(&self.slug, wave_json)?;
        }
        Ok(None)
    }

    /// Walk a recorded wave's task phases through the journal so attempt counters match.
    pub(super) fn task_phase_replay(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        id: &str,
        t: Option<&SpecTask>,
    ) -> Result<()> {
        loop {
            let attempt = lock(&self.attempts)
                .get(&phase_label(&p.name, Some(id)))
                .copied()
                .unwrap_or(0)
                + 1;
            let recorded = lock(&self.journal)
                .finished_phase(&Subject::task(&self.slug, Some(id)), &p.name, attempt)
                .is_some();
            if !recorded {
                return Ok(());
            }
            self.phase(wf, p, Some(id), t, None)?;
        }
    }

    /// Wave timings from the store's own phase records: the tasks' phase intervals (every
    /// attempt), their sum, the wall time they covered, and the difference (time saved).
    pub(super) fn wave_record(&self, n: usize, wave: &[String]) -> Result<serde_json::Value> {
        let m = self.manifest()?;
        let mut spans: Vec<(i64, i64)> = Vec::new();
        let mut sum: u64 = 0;
        let (mut first, mut last) = (String::new(), String::new());
        for c in m.completed_phases.iter() {
            if c.phase != "implementation"
                || !c.task_id.as_ref().is_some_and(|id| wave.contains(id))
            {
                continue;
            }
            sum += c.duration_ms;
            if let (Some(a), Some(b)) = (
                baton_store::machine::epoch_ms(&c.started_at),
                baton_store::machine::epoch_ms(&c.ended_at),
            ) {
                spans.push((a, b));
            }
            if first.is_empty() || c.started_at < first {
                first = c.started_at.clone();
            }
            if c.ended_at > last {
                last = c.ended_at.clone();
            }
        }
        spans.sort_unstable();
        let mut wall: i64 = 0;
        let mut cur: Option<(i64, i64)> = None;
        for (s, e) in spans {
            cur = match cur {
                Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
                Some((cs, ce)) => {
                    wall += ce - cs;
                    Some((s, e))
                }
                None => Some((s, e)),
            };
        }
        wall += cur.map_or(0, |(s, e)| e - s);
        let wall = wall.max(0) as u64;
        Ok(serde_json::json!({
            "wave": n,
            "tasks": wave,
            "started_at": first,
            "ended_at": last,
            "wall_ms": wall,
            "sum_task_ms": sum,
            "savings_ms": sum.saturating_sub(wall),
        }))
    }

    /// Run `ids` of phase `p` at once, up to `parallel` threads.
    pub(super) fn parallel(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        ids: &[String],
        tasks: &[SpecTask],
    ) -> Result<Vec<(String, Verdict)>> {
        let n = if self.opts.parallel > 0 {
            self.opts.parallel
        } else {
            wf.policy.parallel
        }
        .max(1)
        .min(ids.len().max(1));
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<(String, Result<Verdict>)>> = Mutex::new(vec![]);
        std::thread::scope(|sc| {
            for _ in 0..n {
                sc.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(id) = ids.get(i) else { break };
                        let t = tasks.iter().find(|t| &t.id == id);
                        let r = self.task_attempts(wf, p, id, t);
                        lock(&results).push((id.clone(), r));
                    }
                });
            }
        });
        let mut out = Vec::new();
        for (id, r) in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
            out.push((id, r?));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// One task's phase, tried up to `max_attempts` times.
    pub(super) fn task_attempts(
        &self,
        wf: &TaskWorkflow,
        p: &TaskPhase,
        id: &str,
        t: Option<&SpecTask>,
    ) -> Result<Verdict> {
        let mut last = Verdict::Error("not run".into());
        for _ in 0..wf.policy.max_attempts {
            last = self.phase(wf, p, Some(id), t, None)?;
            if p.name == "implementation" {
                let detail = match &last {
                    Verdict::Pass => self.last_detail(&p.name, Some(id)),
                    Verdict::Fail(w) | Verdict::Error(w) => w.clone(),
                };
                self.task_completed(
                    wf,
                    TaskDone {
                        phase: &p.name,
                        task_id: Some(id),
                        ok: last == Verdict::Pass,
                        detail: &detail,
                    },
                )?;
            }
            if last == Verdict::Pass {
                break;
            }
        }
        Ok(last)
    }

    /// Tests: one phase per implementation task, all at once (up to `parallel`).
    pub(super) fn tests(&self, wf: &TaskWorkflow, p: &TaskPhase) -> Result<Option<Stop>> {
        let tasks = match self.spec_tasks()? {
            Breakdown::Tasks(tasks, _) => tasks,
            // The waves ran from this very plan: it can only have been changed since.
            Breakdown::Unusable(why) => {
                return Err(Error::state(why).hint(
                    "the spec changed after its implementation ran: restore it, then rerun",
                ));
            }
        };
        let mut pending: Vec<String> = tasks.iter().map(|t| t.id.clone()).collect();
        let mut round = 0;
        loop {
            round += 1;
            let failed: Vec<(String, Verdict)> = self
                .parallel(wf, p, &pending, &tasks)?
                .into_iter()
                .filter(|(_, v)| *v != Verdict::Pass)
                .collect();
            if failed.is_empty() {
                return Ok(None);
            }
            let why = failed
                .iter()
                .map(|(id, v)| format!("tests#{id}: {v:?}"))
                .collect::<Vec<_>>()
                .join("; ");
            if let Some(stop) = self.pause_point(&format!("tests@{round}"), &why)? {
                return Ok(Some(stop));
            }
            pending = failed.into_iter().map(|(id, _)| id).collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "# Spec\n\n## Signatures\n\n`fn login()`\n\n## Tasks\n\n### Task 1: Model\nDepends on: none\nFiles: src/user.rs\n\n### Task 2: Service\n- **Depends on:** 1\n- Files: src/auth.rs, src/token.rs\n\n### Task 3: API\nDepends on: 1, 2\n\n### Task 4: Docs\n\n```\n### Task 9: not a heading\n```\n";

    #[test]
    fn spec_tasks_are_parsed_from_headings_and_lines() {
        let t = parse_tasks(SPEC);
        let ids: Vec<&str> = t.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "3", "4"]);
        assert_eq!(t[1].title, "Service");
        assert_eq!(t[1].depends_on, ["1"]);
        assert_eq!(t[1].files, ["src/auth.rs", "src/token.rs"]);
        assert_eq!(t[2].depends_on, ["1", "2"]);
        assert!(t[0].depends_on.is_empty() && t[3].depends_on.is_empty());
    }

    #[test]
    fn the_simulated_agents_spec_tasks_parse() {
        let md = baton_agent::sim::task::tasks_md(&["tasks=3", "deps=3:1+2"]);
        let t = parse_tasks(&md);
        assert_eq!(t.len(), 3);
        assert_eq!(t[2].depends_on, ["1", "2"]);
    }

    #[test]
    fn waves_are_topological_levels() {
        let w = compute_waves(&parse_tasks(SPEC), "spec.md").unwrap();
        assert_eq!(w, vec![vec!["1", "4"], vec!["2"], vec!["3"]]);
    }

    #[test]
    fn unknown_dependencies_and_cycles_name_the_spec() {
        let t = parse_tasks("### Task 1: a\nDepends on: 9\n");
        let e = compute_waves(&t, "spec.md").unwrap_err();
        assert!(e.contains("spec.md") && e.contains("task 9"), "{e}");
        let t = parse_tasks(
            "### Task 1: a\nDepends on: 2\n### Task 2: b\nDepends on: 1\n### Task 3: c\n",
        );
        let e = compute_waves(&t, "spec.md").unwrap_err();
        assert!(
            e.contains("spec.md: dependency cycle among tasks 1, 2"),
            "{e}"
        );
    }
}
