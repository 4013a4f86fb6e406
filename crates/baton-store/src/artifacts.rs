//! STORE: which file each phase's content goes to (the task directory's layout,
//! docs/ARCHITECTURE.md, "The task store"). Nothing is ever
//! rewritten: storing a phase again writes the next version beside the first
//! (`spec.md`, `spec.v2.md`, …), and readers take the latest.

use std::path::{Path, PathBuf};

use super::names;
use crate::error::{Error, Result};

/// The phases STORE accepts (the error hint lists them in this order).
pub const STORE_PHASES: &[&str] = &[
    "architect",
    "spec",
    "implementation",
    "tests",
    "test-results",
    "impl-audit",
    "design-audit",
    "architect-revision",
    "implementation-fix",
    "debt",
    "graduate-complete",
    "discovery",
    "plan",
];

pub fn is_store_phase(phase: &str) -> bool {
    STORE_PHASES.contains(&phase)
}

/// `phase` is one the store can complete; else what it is not, and what was meant.
pub fn check_store_phase(phase: &str) -> Result<()> {
    if is_store_phase(phase) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "`{phase}` is not a phase of the task store{}",
        crate::names::did_you_mean(phase, STORE_PHASES.iter().copied())
    ))
    .hint(format!("phases: {}", STORE_PHASES.join(", "))))
}

/// Decide the file (relative to the task directory) for a STORE.
pub fn target(
    task_dir: &Path,
    phase: &str,
    task_id: Option<&str>,
    iteration: Option<u32>,
) -> Result<String> {
    if !is_store_phase(phase) {
        return Err(Error::invalid(format!("unknown STORE phase `{phase}`"))
            .hint(format!("STORE takes one of: {}", STORE_PHASES.join(", "))));
    }
    if let Some(id) = task_id {
        names::check_task_id(id)?;
    }
    if iteration == Some(0) {
        return Err(Error::invalid("iteration counts from 1"));
    }
    match phase {
        "implementation" | "tests" => {
            let id = task_id.ok_or_else(|| {
                Error::invalid(format!("STORE {phase} needs a task id")).hint(format!(
                    "pass --task-id N (the spec task this {phase} belongs to)"
                ))
            })?;
            let dir = if phase == "implementation" {
                "implementations"
            } else {
                "tests"
            };
            Ok(next_version(task_dir, &format!("{dir}/task-{id}")))
        }
        // One file per spec discovery wrote, named by the "task id" (the spec's stem).
        "discovery" => {
            let stem = task_id.ok_or_else(|| {
                Error::invalid("STORE discovery needs the spec's name as its task id")
                    .hint("pass --task-id REQUIREMENTS (stored as discovery/REQUIREMENTS.md)")
            })?;
            Ok(next_version(task_dir, &format!("discovery/{stem}")))
        }
        // The plan is the task breakdown the implementation waves read: the task's spec.
        "plan" => Ok(next_version(task_dir, "spec")),
        "architect-revision" | "implementation-fix" => match iteration {
            Some(n) => {
                let rel = format!("{phase}-{n}.md");
                if task_dir.join(&rel).exists() {
                    return Err(Error::state(format!("{rel} already exists and is never rewritten"))
                        .hint("store the next iteration, or omit --iteration to take the next free number"));
                }
                Ok(rel)
            }
            None => Ok(format!("{phase}-{}.md", next_numbered(task_dir, phase))),
        },
        _ => Ok(next_version(task_dir, phase)),
    }
}

/// The first number `k ≥ from` with no file, for files numbered `from, from+1, …` without
/// gaps: galloping, then bisecting, so the cost grows with the log of the count (a phase stored
/// for the hundredth time costs a few `stat`s, not a hundred).
fn first_free(from: u64, exists: impl Fn(u64) -> bool) -> u64 {
    if !exists(from) {
        return from;
    }
    // Invariant: `lo` exists, `hi` does not.
    let (mut lo, mut step) = (from, 1);
    let mut hi = loop {
        let probe = lo + step;
        if !exists(probe) {
            break probe;
        }
        lo = probe;
        step *= 2;
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if exists(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// `stem.md` (version 1) or `stem.vK.md` (K ≥ 2).
fn versioned(stem: &str, k: u64) -> String {
    if k == 1 {
        format!("{stem}.md")
    } else {
        format!("{stem}.v{k}.md")
    }
}

/// `stem.md` if free, else the first free `stem.vK.md` (K ≥ 2).
fn next_version(task_dir: &Path, stem: &str) -> String {
    versioned(
        stem,
        first_free(1, |k| task_dir.join(versioned(stem, k)).exists()),
    )
}

/// The latest version of `stem` (`spec` → `spec.v3.md` if it exists, else `spec.md`).
pub fn latest(task_dir: &Path, stem: &str) -> Option<PathBuf> {
    let next = first_free(1, |k| task_dir.join(versioned(stem, k)).exists());
    (next > 1).then(|| task_dir.join(versioned(stem, next - 1)))
}

/// The first free `<prefix>-<n>.md` (n ≥ 1).
fn next_numbered(task_dir: &Path, prefix: &str) -> u64 {
    first_free(1, |n| task_dir.join(format!("{prefix}-{n}.md")).exists())
}

/// The highest-numbered `<prefix>-<n>.md` (architect-revision-3.md).
pub fn latest_numbered(task_dir: &Path, prefix: &str) -> Option<PathBuf> {
    let next = next_numbered(task_dir, prefix);
    (next > 1).then(|| task_dir.join(format!("{prefix}-{}.md", next - 1)))
}

/// Latest version of every `task-<id>` file in `implementations/` or `tests/`, by id.
pub fn latest_per_task(task_dir: &Path, sub: &str) -> Vec<PathBuf> {
    let dir = task_dir.join(sub);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    let mut ids: Vec<String> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter_map(|n| {
            let rest = n.strip_prefix("task-")?.strip_suffix(".md")?;
            // `task-3.md` or `task-3.v2.md`: the id is what precedes an optional `.vK`.
            let id = match rest.rsplit_once(".v") {
                Some((id, k)) if k.bytes().all(|b| b.is_ascii_digit()) && !k.is_empty() => id,
                _ => rest,
            };
            Some(id.to_string())
        })
        .collect();
    ids.sort_by_key(|a| natural_key(a));
    ids.dedup();
    ids.iter()
        .filter_map(|id| latest(task_dir, &format!("{sub}/task-{id}")))
        .collect()
}

/// Sort `2` before `10`.
fn natural_key(s: &str) -> (u64, String) {
    (s.parse().unwrap_or(u64::MAX), s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_versions() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path();
        assert_eq!(target(t, "architect", None, None).unwrap(), "architect.md");
        std::fs::write(t.join("architect.md"), "a").unwrap();
        assert_eq!(
            target(t, "architect", None, None).unwrap(),
            "architect.v2.md"
        );
        std::fs::write(t.join("architect.v2.md"), "b").unwrap();
        assert_eq!(latest(t, "architect").unwrap(), t.join("architect.v2.md"));
        assert_eq!(
            target(t, "implementation", Some("3"), None).unwrap(),
            "implementations/task-3.md"
        );
        assert!(
            target(t, "implementation", None, None)
                .unwrap_err()
                .to_string()
                .contains("task id")
        );
        assert!(target(t, "tests", Some("../x"), None).is_err());
        assert_eq!(
            target(t, "architect-revision", None, None).unwrap(),
            "architect-revision-1.md"
        );
        std::fs::write(t.join("architect-revision-1.md"), "r").unwrap();
        assert_eq!(
            target(t, "architect-revision", None, None).unwrap(),
            "architect-revision-2.md"
        );
        assert!(target(t, "architect-revision", None, Some(1)).is_err());
        assert_eq!(
            target(t, "implementation-fix", None, Some(4)).unwrap(),
            "implementation-fix-4.md"
        );
        assert!(
            target(t, "checkpoint", None, None)
                .unwrap_err()
                .to_string()
                .contains("unknown STORE phase")
        );
    }

    #[test]
    fn first_free_agrees_with_counting_up_and_probes_logarithmically() {
        for count in 0..200u64 {
            let probes = std::cell::Cell::new(0);
            let got = first_free(1, |k| {
                probes.set(probes.get() + 1);
                k <= count
            });
            assert_eq!(got, count + 1);
            assert!(
                probes.get() <= 2 * (64 - count.leading_zeros()) + 2,
                "{count}: {}",
                probes.get()
            );
        }
        let d = tempfile::tempdir().unwrap();
        let t = d.path();
        assert_eq!(latest(t, "spec"), None);
        assert_eq!(latest_numbered(t, "architect-revision"), None);
        std::fs::write(t.join("spec.md"), "1").unwrap();
        for k in 2..=37 {
            std::fs::write(t.join(format!("spec.v{k}.md")), "k").unwrap();
        }
        assert_eq!(latest(t, "spec").unwrap(), t.join("spec.v37.md"));
        assert_eq!(target(t, "spec", None, None).unwrap(), "spec.v38.md");
    }

    #[test]
    fn latest_per_task_orders_naturally() {
        let d = tempfile::tempdir().unwrap();
        let i = d.path().join("implementations");
        std::fs::create_dir(&i).unwrap();
        for f in ["task-10.md", "task-2.md", "task-2.v2.md", "task-a.md"] {
            std::fs::write(i.join(f), f).unwrap();
        }
        let got: Vec<String> = latest_per_task(d.path(), "implementations")
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(got, vec!["task-2.v2.md", "task-10.md", "task-a.md"]);
    }
}
