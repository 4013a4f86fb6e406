//! The project's BMAD configuration: where it keeps stories, epics and the documents an epic
//! run writes (UAT, retrospective, handoff).
//!
//! - v6: `_bmad/bmm/config.yaml` — `output_folder`, `planning_artifacts`,
//!   `implementation_artifacts` (older v6 alphas: `sprint_artifacts`, `dev_story_location`),
//!   values such as `"{project-root}/_bmad-output/implementation-artifacts"`; by BMAD's
//!   defaults `implementation_artifacts` is `{output_folder}/implementation-artifacts` and
//!   `planning_artifacts` `{output_folder}/planning-artifacts`.
//! - v4: `.bmad-core/core-config.yaml` — `devStoryLocation`, `qa.qaLocation`,
//!   `prd.prdShardedLocation`.
//!
//! A folder outside the project (absolute, `..`) or with a variable baton does not know is
//! ignored with a warning; with no configuration the documents go where they always did
//! (`docs/uat`, `docs/sprints`, `docs/handoffs`).

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use yaml_rust2::Yaml;

pub const V6_CONFIG: &str = "_bmad/bmm/config.yaml";
pub const V4_CONFIG: &str = ".bmad-core/core-config.yaml";

/// Folders named by the project's BMAD configuration, relative to the project.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// The file they came from.
    pub source: Option<PathBuf>,
    /// v6 `implementation_artifacts`: stories, sprint-status.yaml, retrospectives.
    pub implementation: Option<PathBuf>,
    /// v6 `planning_artifacts`: epics.
    pub planning: Option<PathBuf>,
    /// v4 `devStoryLocation`.
    pub stories: Option<PathBuf>,
    /// v4 `qa.qaLocation`.
    pub qa: Option<PathBuf>,
    /// v4 `prd.prdShardedLocation`: epic files.
    pub epics: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// Where an epic run's documents go, relative to the project.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Outputs {
    pub uat_dir: PathBuf,
    pub retro_dir: PathBuf,
    pub handoff_dir: PathBuf,
}

impl Default for Outputs {
    fn default() -> Outputs {
        Outputs {
            uat_dir: "docs/uat".into(),
            retro_dir: "docs/sprints".into(),
            handoff_dir: "docs/handoffs".into(),
        }
    }
}

impl Outputs {
    /// `template` with `{uat_dir}`, `{retro_dir}`, `{handoff_dir}` and `{epic}` filled in.
    pub fn fill(&self, template: &str, epic: &str) -> String {
        template
            .replace("{uat_dir}", &self.uat_dir.display().to_string())
            .replace("{retro_dir}", &self.retro_dir.display().to_string())
            .replace("{handoff_dir}", &self.handoff_dir.display().to_string())
            .replace("{epic}", epic)
    }
}

fn key<'a>(doc: &'a Yaml, path: &[&str]) -> Option<&'a str> {
    let mut y = doc;
    for k in path {
        y = y.as_hash()?.get(&Yaml::String((*k).into()))?;
    }
    y.as_str()
}

impl Config {
    /// Read the configuration under `root`: v6's if there is one, else v4's. Never fails:
    /// what cannot be read is a warning.
    pub fn load(root: &Path) -> Config {
        let mut c = Config::default();
        for file in [V6_CONFIG, V4_CONFIG] {
            let path = root.join(file);
            if !path.is_file() {
                continue;
            }
            let doc = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| {
                    super::load_yaml(&t).map_err(|(line, what)| format!("line {line}: {what}"))
                });
            let docs = match doc {
                Ok(d) => d,
                Err(e) => {
                    c.warnings.push(format!("{file}: {e}; ignored"));
                    continue;
                }
            };
            let Some(doc) = docs.into_iter().next() else {
                continue;
            };
            c.source = Some(file.into());
            if file == V6_CONFIG {
                c.read_v6(&doc, file);
            } else {
                c.read_v4(&doc, file);
            }
            break;
        }
        c
    }

    fn read_v6(&mut self, doc: &Yaml, file: &str) {
        let output =
            key(doc, &["output_folder"]).and_then(|v| self.folder(file, "output_folder", v, None));
        let out = output.as_ref().map(|p| p.display().to_string());
        let pick = |c: &mut Config, names: &[&str]| {
            names
                .iter()
                .find_map(|n| key(doc, &[n]).and_then(|v| c.folder(file, n, v, out.as_deref())))
        };
        self.implementation = pick(
            self,
            &[
                "implementation_artifacts",
                "sprint_artifacts",
                "dev_story_location",
            ],
        )
        .or_else(|| output.as_ref().map(|o| o.join("implementation-artifacts")));
        self.planning = pick(self, &["planning_artifacts"])
            .or_else(|| output.as_ref().map(|o| o.join("planning-artifacts")));
    }

    fn read_v4(&mut self, doc: &Yaml, file: &str) {
        self.stories = key(doc, &["devStoryLocation"])
            .and_then(|v| self.folder(file, "devStoryLocation", v, None));
        self.qa = key(doc, &["qa", "qaLocation"])
            .and_then(|v| self.folder(file, "qa.qaLocation", v, None));
        self.epics = key(doc, &["prd", "prdShardedLocation"])
            .and_then(|v| self.folder(file, "prd.prdShardedLocation", v, None));
    }

    /// A configured folder, relative to the project; `None` (with a warning) when it is not
    /// inside the project.
    fn folder(
        &mut self,
        file: &str,
        name: &str,
        value: &str,
        output: Option<&str>,
    ) -> Option<PathBuf> {
        let mut v = value.trim().to_string();
        for root in ["{project-root}/", "{project-root}"] {
            if let Some(rest) = v.strip_prefix(root) {
                v = rest.to_string();
            }
        }
        if let Some(o) = output {
            v = v.replace("{output_folder}", o);
        }
        let p = PathBuf::from(v.trim_end_matches('/'));
        let inside = !v.is_empty()
            && !v.contains('{')
            && p.components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            self.warnings.push(format!(
                "{file}: `{name}: {value}` is not a folder inside the project; ignored"
            ));
            return None;
        }
        Some(p)
    }

    /// Folders that may hold story files, besides the usual ones.
    pub fn story_dirs(&self) -> Vec<PathBuf> {
        self.implementation
            .iter()
            .chain(&self.stories)
            .cloned()
            .collect()
    }

    /// Folders that may hold epic files, besides the usual ones.
    pub fn epic_dirs(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = Vec::new();
        for p in self.planning.iter().chain(&self.epics) {
            v.push(p.clone());
            v.push(p.join("epics"));
        }
        v
    }

    /// The sprint-status file the configuration names (v6).
    pub fn sprint_file(&self) -> Option<PathBuf> {
        self.implementation
            .as_ref()
            .map(|p| p.join("sprint-status.yaml"))
    }

    /// Where UAT, retrospective and handoff go: v6's implementation artifacts (BMAD keeps
    /// retrospectives there), v4's QA folder for the UAT, else the usual folders.
    pub fn outputs(&self) -> Outputs {
        let d = Outputs::default();
        match &self.implementation {
            Some(i) => Outputs {
                uat_dir: i.clone(),
                retro_dir: i.clone(),
                handoff_dir: i.clone(),
            },
            None => Outputs {
                uat_dir: self.qa.clone().unwrap_or(d.uat_dir),
                ..d
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(file: &str, text: &str) -> Config {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        Config::load(d.path())
    }

    #[test]
    fn v6_folders() {
        // As BMAD's installer writes it.
        let c = load(
            V6_CONFIG,
            "# BMM Module Configuration\nuser_skill_level: intermediate\nplanning_artifacts: \"{project-root}/_bmad-output/planning-artifacts\"\nimplementation_artifacts: \"{project-root}/_bmad-output/implementation-artifacts\"\nproject_knowledge: \"{project-root}/docs\"\noutput_folder: \"{project-root}/_bmad-output\"\n",
        );
        let impl_dir = PathBuf::from("_bmad-output/implementation-artifacts");
        assert_eq!(c.implementation.as_ref(), Some(&impl_dir));
        assert_eq!(c.outputs().uat_dir, impl_dir);
        assert_eq!(c.outputs().retro_dir, impl_dir);
        assert_eq!(c.sprint_file(), Some(impl_dir.join("sprint-status.yaml")));
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        // Only an output folder: BMAD's defaults under it.
        let c = load(
            V6_CONFIG,
            "output_folder: \"{project-root}/out\"\nplanning_artifacts: \"{output_folder}/plans\"\n",
        );
        assert_eq!(
            c.implementation,
            Some("out/implementation-artifacts".into())
        );
        assert_eq!(c.planning, Some("out/plans".into()));
    }

    #[test]
    fn v4_folders_and_bad_ones() {
        let c = load(
            V4_CONFIG,
            "qa:\n  qaLocation: docs/qa\nprd:\n  prdShardedLocation: docs/prd\ndevStoryLocation: docs/stories\n",
        );
        assert_eq!(c.outputs().uat_dir, PathBuf::from("docs/qa"));
        assert_eq!(c.outputs().retro_dir, PathBuf::from("docs/sprints"));
        assert_eq!(c.story_dirs(), [PathBuf::from("docs/stories")]);
        let c = load(
            V6_CONFIG,
            "implementation_artifacts: /etc\nplanning_artifacts: \"../x\"\n",
        );
        assert_eq!(c.implementation, None);
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
        assert_eq!(c.outputs(), Outputs::default());
        let c = load(V6_CONFIG, "implementation_artifacts: [unclosed\n");
        assert!(c.warnings[0].contains(V6_CONFIG), "{:?}", c.warnings);
        assert_eq!(
            Outputs::default().fill("{uat_dir}/epic-{epic}-uat.md", "3.5"),
            "docs/uat/epic-3.5-uat.md"
        );
    }
}
