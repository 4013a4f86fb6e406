//! Shell completion of the names a project has: run ids, task slugs, queue names. The shell
//! asks this binary at each TAB (clap_complete's dynamic completion, as jj does): the
//! registration `baton completions SHELL` prints calls back with `BATON_COMPLETE=<shell>`.
//! A completion never fails and never prints anything but candidates: a project that cannot
//! be read offers none.

use clap_complete::engine::{ArgValueCandidates, CompletionCandidate};

use baton_engine::config::Project;

/// The variable the registration sets when it calls back.
pub const VAR: &str = "BATON_COMPLETE";

fn project() -> Option<Project> {
    Project::discover(&std::env::current_dir().ok()?).ok()
}

fn candidates(names: Vec<(String, Option<String>)>) -> Vec<CompletionCandidate> {
    names
        .into_iter()
        .map(|(n, help)| {
            let c = CompletionCandidate::new(n);
            match help {
                Some(h) => c.help(Some(h.into())),
                None => c,
            }
        })
        .collect()
}

/// Every run of the project, newest first, each with its workflow and subjects.
pub fn run_ids() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let Some(p) = project() else { return vec![] };
        let local = p.local_dir();
        let mut ids = baton_engine::journal::Journal::run_ids(&local);
        ids.reverse();
        candidates(
            ids.into_iter()
                .map(|id| {
                    let help = baton_engine::journal::Journal::open(&local, &id)
                        .ok()
                        .and_then(|j| {
                            let s = j.started()?;
                            let state = if j.run_finished() {
                                "finished"
                            } else {
                                "not finished"
                            };
                            Some(format!("{} {} ({state})", s.workflow, s.subjects.join(",")))
                        });
                    (id, help)
                })
                .collect(),
        )
    })
}

/// The task store's task slugs.
pub fn task_slugs() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        let Some(p) = project() else { return vec![] };
        let store = baton_store::Store::new(p.store_root(None));
        candidates(
            store
                .slugs()
                .unwrap_or_default()
                .into_iter()
                .map(|s| (s, None))
                .collect(),
        )
    })
}

/// The verify queues kept in files (a PostgreSQL backend is not asked at a TAB).
pub fn queue_names() -> ArgValueCandidates {
    ArgValueCandidates::new(|| {
        use baton_engine::workflow::verify::backend::{Backend, BackendKind};
        let Some(p) = project() else { return vec![] };
        if p.config.queue.backend != BackendKind::Files {
            return vec![];
        }
        let names = Backend::open(&p.config.queue, &p.local_dir())
            .and_then(|mut b| b.names())
            .unwrap_or_default();
        candidates(names.into_iter().map(|n| (n, None)).collect())
    })
}
