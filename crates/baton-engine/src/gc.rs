//! What `baton gc` may remove from `.baton/scratch`: [`baton_context::mask::retention`]'s
//! age and size limits, never a scratch file that a run which has not finished (running, or
//! interrupted and resumable) recorded, nor one the current task's files name.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::SystemTime;

use crate::config::Project;
use crate::error::{Error, Result};
use crate::journal::Journal;
use baton_context::mask::{record, retention};

/// The plan for this project's scratch folder, under `keep`.
pub fn scratch_plan(
    project: &Project,
    store: &baton_store::Store,
    keep: retention::Retention,
    now: SystemTime,
) -> Result<retention::Plan> {
    let local = project.local_dir();
    let mut named: BTreeSet<String> = BTreeSet::new();
    let runs = unfinished(&local);
    let ids: BTreeSet<String> = runs
        .iter()
        .filter_map(|j| j.dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    // The project's log is read once, and only when a run is unfinished (every run's end
    // collects: most find none).
    let mut records = Vec::new();
    if !runs.is_empty() {
        let read = record::read_all(&local);
        // A log that cannot be read may name what an unfinished run still needs: nothing is
        // removed on a guess.
        if let Some(f) = read.unreadable_files.first() {
            return Err(Error::state(format!(
                "{f}: the mask log cannot be read, so the scratch files unfinished runs use are not known"
            ))
            .hint("make the log a readable file again (or finish those runs), then run `baton gc` again"));
        }
        records.extend(
            read.records
                .into_iter()
                .filter(|r| r.run.as_ref().is_some_and(|id| ids.contains(id))),
        );
    }
    for j in &runs {
        records.extend(record::of_v1_run(&j.dir).records);
    }
    for r in records {
        if let Some(n) = Path::new(&r.scratch).file_name() {
            named.insert(n.to_string_lossy().into_owned());
        }
    }
    let task_text = match store.current() {
        Ok(Some(slug)) => texts(&store.task_dir(&slug)),
        _ => Vec::new(),
    };
    let in_use = |name: &str| named.contains(name) || task_text.iter().any(|t| t.contains(name));
    Ok(retention::plan(&local.join("scratch"), keep, &in_use, now)?)
}

/// Every run of the project that has not finished, whatever its workflow.
fn unfinished(local: &Path) -> Vec<Journal> {
    Journal::run_ids(local)
        .iter()
        .filter_map(|id| Journal::open(local, id).ok())
        .filter(|j| !j.run_finished())
        .collect()
}

/// The text of every file under `dir` (a task's folder: artifacts, events, manifest).
fn texts(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.extend(std::fs::read_to_string(&p).ok()),
                _ => {}
            }
        }
    }
    out
}
