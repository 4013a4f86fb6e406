//! The HTML report of a run: `baton report`, and the one every `baton run` writes at its end
//! (`.baton/runs/<run-id>/report.html`). Built from what the run left on disk — the journal
//! (`model::build`), the mask records, the task's manifest for waves — and rendered as one
//! self-contained file (`html::render`): a timeline of every phase attempt, the prompt of each
//! against its budget, usage and cost, signals, gate waits, rotations, totals, and relative
//! links to every prompt, agent log and masked output.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use baton_engine::definition::WorkflowKind;
use baton_engine::journal::{Entry, Journal, Record};
use baton_store::Store;

pub mod html;
pub mod model;

/// The file name a run's own report has in its run directory.
pub const FILE: &str = "report.html";

/// Which run to report on.
#[derive(Debug, Clone)]
pub enum Which {
    /// The newest run.
    Latest,
    Run(String),
    /// The newest run of this task (orchestrate, poc, graduate).
    Task(String),
    /// The newest verify run of this queue.
    Queue(String),
}

/// A report written.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Written {
    pub run_id: String,
    pub path: PathBuf,
    pub bytes: usize,
    pub phases: usize,
}

/// Run ids of `local`'s runs, oldest first (ids start with their UTC start time).
fn run_ids(local: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(Journal::runs_dir(local))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().join("events.jsonl").is_file())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| !n.starts_with(baton_core::fs::TEMP_PREFIX))
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// Open the journal of the run `which` names.
pub fn find(local: &Path, which: &Which) -> Result<Journal> {
    let newest = |pred: &dyn Fn(&Journal) -> bool| {
        run_ids(local).into_iter().rev().find_map(|id| {
            let j = Journal::open(local, &id).ok()?;
            pred(&j).then_some(j)
        })
    };
    let is = |j: &Journal, task: bool, name: &str| {
        j.started().is_some_and(|s| {
            let (wf, subjects) = (s.workflow, s.subjects);
            WorkflowKind::parse(wf).is_some_and(|k| {
                if task {
                    k.is_task()
                } else {
                    k == WorkflowKind::Verify
                }
            }) && subjects.first().map(String::as_str) == Some(name)
        })
    };
    match which {
        Which::Run(id) => Ok(Journal::open(local, id)?),
        Which::Latest => newest(&|_| true).ok_or_else(|| {
            Error::not_found(format!("no run in {}", Journal::runs_dir(local).display()))
                .hint("start one (`baton demo` shows one end to end), then `baton report`")
        }),
        Which::Task(slug) => newest(&|j| is(j, true, slug)).ok_or_else(|| {
            Error::not_found(format!("task `{slug}` has no run"))
                .hint(format!("run it with `baton run orchestrate {slug}` (or poc, graduate); `baton status` lists the runs"))
        }),
        Which::Queue(q) => newest(&|j| is(j, false, q)).ok_or_else(|| {
            Error::not_found(format!("queue `{q}` has no run"))
                .hint(format!("run it with `baton run verify --queue {q}`; `baton status` lists the runs"))
        }),
    }
}

/// The model of the run in `dir`; a task run's waves come from the task's manifest in `store`.
pub fn model(dir: &Path, records: &[Record], store: Option<&Store>) -> model::Model {
    let waves = match (records.first().map(|r| &r.entry), store) {
        (
            Some(Entry::RunStarted {
                workflow, subjects, ..
            }),
            Some(store),
        ) if WorkflowKind::parse(workflow).is_some_and(WorkflowKind::is_task) => subjects
            .first()
            .and_then(|slug| store.manifest(slug).ok())
            .map(|m| m.waves.execution)
            .unwrap_or_default(),
        _ => vec![],
    };
    let mut m = model::build(dir, records, &waves);
    // The project's deferred-work ledger, as it stands: what the stories left for later.
    if let Ok(top) = baton_engine::git::Git::new(dir).toplevel() {
        m.deferred = baton_engine::workflow::epic::bmad::deferred::all(&top)
            .into_iter()
            .filter(|d| d.closed_by.is_none())
            .map(|d| {
                let by = d
                    .deferred_by
                    .map(|b| format!(" — deferred by {b}"))
                    .unwrap_or_default();
                format!("{}: {}{by} ({})", d.id, d.summary, d.source)
            })
            .collect();
    }
    m
}

/// Write the report of `journal`'s run to `out` (default: `report.html` in the run's
/// directory), replacing an older one atomically.
pub fn write(journal: &Journal, store: Option<&Store>, out: Option<&Path>) -> Result<Written> {
    let out = match out {
        Some(p) => absolute(p)?,
        None => journal.dir.join(FILE),
    };
    if out.is_dir() {
        return Err(Error::invalid(format!(
            "{} is a directory; give the report's file name",
            out.display()
        ))
        .hint("e.g. -o run-report.html"));
    }
    // Only a regular file is replaced: a link, a FIFO or a device there is refused.
    baton_core::fs::own_file(&out)?;
    let base = out
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"));
    if !base.is_dir() {
        return Err(
            Error::not_found(format!("directory {} does not exist", base.display()))
                .hint("create it first, or write the report elsewhere with -o FILE"),
        );
    }
    let m = model(&journal.dir, &journal.records, store);
    let text = html::render(&m, &base)?;
    baton_core::fs::write_atomic(&out, text.as_bytes())?;
    Ok(Written {
        run_id: m.run_id,
        path: out,
        bytes: text.len(),
        phases: m.phases.len(),
    })
}

fn absolute(p: &Path) -> Result<PathBuf> {
    if p.is_absolute() {
        return Ok(p.to_path_buf());
    }
    Ok(std::env::current_dir()
        .map_err(|e| Error::io(".", e))?
        .join(p))
}

/// At the end of `baton run`: write the run's report and say where it is. A report that
/// cannot be written is a note: the run itself went as it went.
pub fn at_run_end(journal_dir: &Path, store: Option<&Store>) -> Option<PathBuf> {
    let records = match baton_engine::journal::read(&journal_dir.join("events.jsonl")) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("note: no report: {e}");
            return None;
        }
    };
    let m = model(journal_dir, &records, store);
    let out = journal_dir.join(FILE);
    let written = html::render(&m, journal_dir)
        .and_then(|text| baton_core::fs::write_atomic(&out, text.as_bytes()).map_err(Error::from));
    match written {
        Ok(()) => Some(out),
        Err(e) => {
            eprintln!("note: the run's report was not written: {e}");
            None
        }
    }
}
