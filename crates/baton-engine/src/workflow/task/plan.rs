//! The specs discovery writes and the plan reads: where the spec files go (inside the project),
//! which are stored for a task, and the sections of them a planning prompt carries — extracted,
//! never the dialogue that produced them.

use std::path::{Path, PathBuf};

use super::def::{SpecFile, TaskPhase, TaskWorkflow};
use crate::error::{Error, Result};
use baton_context::extract;
use baton_core::markdown;
use baton_store::artifacts;

/// One spec file of a discovery phase, where it is written in the project.
#[derive(Debug, Clone)]
pub struct SpecPath {
    pub spec: SpecFile,
    /// Absolute.
    pub path: PathBuf,
    /// Relative to the project (what prompts and people see).
    pub rel: String,
}

/// The discovery phase of `wf`.
pub fn discovery_phase<'w>(wf: &'w TaskWorkflow, source: &str) -> Result<&'w TaskPhase> {
    wf.phase("discovery").ok_or_else(|| {
        Error::invalid(format!("workflow {source} has no `discovery` phase"))
            .hint("add one (see `baton workflow show plan`), or use the built-in `plan` workflow")
    })
}

/// Where discovery writes its spec files: `dir` (from `--spec-dir`) or the phase's `spec_dir`,
/// `{task}` replaced by the slug. Refused when it leads outside the project.
pub fn spec_paths(
    project_dir: &Path,
    p: &TaskPhase,
    slug: &str,
    dir: Option<&str>,
) -> Result<Vec<SpecPath>> {
    let dir = dir
        .or(p.spec_dir.as_deref())
        .unwrap_or("docs/specs/{task}")
        .replace("{task}", slug);
    let rel_dir = Path::new(&dir);
    let outside = || {
        Error::invalid(format!(
            "spec directory `{dir}` is outside the project ({})",
            project_dir.display()
        ))
        .hint("give a directory relative to the project, e.g. --spec-dir docs/specs/{task}")
    };
    if rel_dir.is_absolute()
        || rel_dir.components().any(|c| {
            !matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
    {
        return Err(outside());
    }
    let abs_dir = project_dir.join(rel_dir);
    baton_core::fs::confined(project_dir, &abs_dir).map_err(|_| outside())?;
    Ok(p.specs
        .iter()
        .map(|s| {
            let path = abs_dir.join(&s.file);
            let rel = Path::new(&dir).join(&s.file).display().to_string();
            SpecPath {
                spec: s.clone(),
                path,
                rel,
            }
        })
        .collect())
}

/// The stored spec of each of the discovery phase's files (latest version), if stored.
pub fn stored(task_dir: &Path, p: &TaskPhase) -> Vec<(SpecFile, Option<PathBuf>)> {
    p.specs
        .iter()
        .map(|s| {
            (
                s.clone(),
                artifacts::latest(&task_dir.join("discovery"), s.stem()),
            )
        })
        .collect()
}

/// A planning prompt's view of the specs: per stored spec, the sections the workflow names
/// (all of the file when it has none of them), as `{path, text}`.
pub fn extracted(
    task_dir: &Path,
    project_dir: &Path,
    p: &TaskPhase,
    slug: &str,
) -> Result<Vec<serde_json::Value>> {
    let specs = stored(task_dir, p);
    let missing: Vec<&SpecFile> = specs
        .iter()
        .filter(|(_, path)| path.is_none())
        .map(|(s, _)| s)
        .collect();
    // A plan from some of the specs would silently leave out what the others say.
    if let Some(first) = missing.first().filter(|_| missing.len() < specs.len()) {
        let names: Vec<&str> = missing.iter().map(|s| s.file.as_str()).collect();
        return Err(Error::state(format!(
            "task `{slug}` lacks specs to plan from: {} not stored",
            names.join(", ")
        ))
        .hint(format!(
            "run `baton discover {slug}` again, or store it: baton store discovery --task {slug} --task-id {} --file …",
            first.stem()
        )));
    }
    let mut out = vec![];
    for (spec, path) in specs {
        let Some(path) = path else { continue };
        let text = baton_core::fs::read_text(&path)?;
        let all = markdown::sections(&text);
        let picked: Vec<&str> = spec
            .sections
            .iter()
            .filter_map(|t| extract::find(&all, t).ok())
            .map(|s| s.text(&text).trim_end())
            .collect();
        let body = if picked.is_empty() {
            text.trim_end().to_string()
        } else {
            picked.join("\n\n")
        };
        let rel = path
            .strip_prefix(project_dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        out.push(serde_json::json!({"path": rel, "file": spec.file, "text": body}));
    }
    if out.is_empty() {
        return Err(
            Error::state(format!("task `{slug}` has no specs from discovery to plan from"))
                .hint(format!(
                    "run `baton discover {slug}` first (or store one: baton store discovery --task-id REQUIREMENTS --file …)"
                )),
        );
    }
    Ok(out)
}

/// What is wrong with a plan on disk, if anything: it needs at least one `### Task N` whose
/// dependencies form waves.
pub fn check(text: &str, file: &str) -> Option<String> {
    let tasks = super::parse_tasks(text);
    if tasks.is_empty() {
        return Some(format!(
            "the plan {file} has no `### Task N: <title>` sections under ## Tasks"
        ));
    }
    super::compute_waves(&tasks, file).err()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase() -> TaskPhase {
        let wf = super::super::def::load("plan", Path::new("/nonexistent"))
            .unwrap()
            .def;
        wf.phase("discovery").unwrap().clone()
    }

    #[test]
    fn spec_paths_stay_in_the_project() {
        let d = tempfile::tempdir().unwrap();
        let p = phase();
        let got = spec_paths(d.path(), &p, "add-login", None).unwrap();
        assert_eq!(got[0].rel, "docs/specs/add-login/REQUIREMENTS.md");
        assert_eq!(got[0].path, d.path().join(&got[0].rel));
        for bad in ["/tmp/specs", "../elsewhere", "docs/../../x"] {
            let e = spec_paths(d.path(), &p, "t", Some(bad)).unwrap_err();
            assert!(e.to_string().contains("outside the project"), "{bad}: {e}");
        }
        std::os::unix::fs::symlink("/tmp", d.path().join("out")).unwrap();
        assert!(spec_paths(d.path(), &p, "t", Some("out/specs")).is_err());
    }

    #[test]
    fn extraction_takes_the_named_sections_only() {
        let d = tempfile::tempdir().unwrap();
        let p = phase();
        let dir = d.path().join("discovery");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("REQUIREMENTS.md"),
            "# R\n\nchatter\n\n## Problem\nslow logins\n\n## Notes\nnot asked for\n",
        )
        .unwrap();
        // One of the two specs: refused, naming the other.
        let e = extracted(d.path(), d.path(), &p, "t").unwrap_err();
        assert_eq!(
            e.to_string(),
            "task `t` lacks specs to plan from: TECHNICAL_DESIGN.md not stored"
        );
        // A spec without any of the named sections is taken whole.
        std::fs::write(dir.join("TECHNICAL_DESIGN.md"), "# T\n\none service\n").unwrap();
        let got = extracted(d.path(), d.path(), &p, "t").unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0]["text"], "## Problem\nslow logins");
        assert_eq!(got[1]["text"], "# T\n\none service");
        let e = extracted(&d.path().join("none"), d.path(), &p, "t").unwrap_err();
        assert!(e.to_string().contains("no specs from discovery"), "{e}");
    }

    #[test]
    fn plans_are_checked() {
        assert!(check("# Plan\n\nno tasks\n", "spec.md").is_some());
        assert!(check("## Tasks\n### Task 1: a\nDepends on: 7\n", "spec.md").is_some());
        assert_eq!(
            check("## Tasks\n### Task 1: a\nDepends on: none\n", "spec.md"),
            None
        );
    }
}
