//! RETRIEVE: condensed context for a target phase, from a table of what each phase needs
//! (docs/ARCHITECTURE.md, "The task store"; [`TABLE`] lists its rows). Where the table says a
//! phase needs "signatures, types, edge cases", it gets those sections of the spec, found with
//! a real Markdown parser, not the whole file.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::artifacts::{latest, latest_numbered, latest_per_task};
use super::model::Manifest;
use crate::error::{Error, Result};
use baton_core::fs;
use baton_core::markdown;

/// The needs RETRIEVE understands besides a target phase's own row.
pub const NEEDS: &[&str] = &[
    "memory",
    "architect-output",
    "spec",
    "spec-signatures",
    "investigation-summary",
    "audit-feedback",
    "implementations",
    "manifest",
    "none",
];

/// Target phases with a row in RETRIEVE's table.
pub const TABLE: &[&str] = &[
    "design-audit",
    "checkpoint",
    "spec",
    "implementation",
    "testing",
    "impl-audit",
    "revision",
    "fix",
    "graduate",
    "resume",
];

#[derive(Debug, Clone, Serialize)]
pub struct Part {
    /// Where the text comes from: `spec.md § Edge Cases (lines 40-52)`.
    pub source: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Retrieved {
    pub for_phase: String,
    pub parts: Vec<Part>,
    /// What was asked for but is not there yet (`spec.md: not stored yet`).
    pub notes: Vec<String>,
}

impl Retrieved {
    /// The context as one Markdown text, each part headed by its source.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            out.push_str(&format!("<!-- from {} -->\n", p.source));
            out.push_str(p.text.trim_end());
            out.push_str("\n\n");
        }
        for n in &self.notes {
            out.push_str(&format!("<!-- note: {n} -->\n"));
        }
        out
    }
}

struct Collector<'a> {
    task_dir: &'a Path,
    parts: Vec<Part>,
    notes: Vec<String>,
}

// Section title keywords for each condensed view (lowercase, matched as substrings).
const ARCHITECT_FOR_SPEC: &[&str] = &[
    "decision",
    "placement",
    "location",
    "constraint",
    "file",
    "component",
    "approach",
    "structure",
];
const SPEC_FOR_IMPL: &[&str] = &[
    "signature",
    "interface",
    "api",
    "type",
    "data model",
    "schema",
    "edge case",
    "error",
    "file",
];
const SPEC_FOR_TESTING: &[&str] = &[
    "signature",
    "interface",
    "api",
    "type",
    "data model",
    "edge case",
    "error",
];
const INVESTIGATION: &[&str] = &[
    "summary",
    "decision",
    "finding",
    "file",
    "pattern",
    "risk",
    "recommend",
    "option",
];
const TESTS_TO_VERIFY: &[&str] = &["fail", "verify", "regression", "test"];

impl<'a> Collector<'a> {
    fn rel(&self, p: &Path) -> String {
        p.strip_prefix(self.task_dir)
            .unwrap_or(p)
            .display()
            .to_string()
    }

    /// An artifact's text; one symlinked out of the task is refused, never printed.
    fn read(&self, path: &Path) -> Result<String> {
        fs::confined(self.task_dir, path)?;
        Ok(fs::read_text(path)?)
    }

    fn whole(&mut self, path: Option<PathBuf>, what: &str) -> Result<()> {
        let Some(path) = path else {
            self.notes.push(format!("{what}: not stored yet"));
            return Ok(());
        };
        let text = self.read(&path)?;
        let source = self.rel(&path);
        if !self.parts.iter().any(|p| p.source == source) {
            self.parts.push(Part { source, text });
        }
        Ok(())
    }

    /// The sections of `path` whose titles contain one of `keys`; the whole file when none do.
    fn sections(&mut self, path: Option<PathBuf>, what: &str, keys: &[&str]) -> Result<()> {
        let Some(path) = path else {
            self.notes.push(format!("{what}: not stored yet"));
            return Ok(());
        };
        let text = self.read(&path)?;
        let all = markdown::sections(&text);
        let chosen = markdown::select(&all, |t| {
            let t = t.to_lowercase();
            keys.iter().any(|k| t.contains(k))
        });
        let rel = self.rel(&path);
        if chosen.is_empty() {
            self.notes.push(format!(
                "{rel}: no section titled {}; whole file given",
                keys.join("/")
            ));
            self.parts.push(Part { source: rel, text });
            return Ok(());
        }
        for s in chosen {
            self.parts.push(Part {
                source: format!(
                    "{rel} § {} (lines {}-{})",
                    s.title, s.start_line, s.end_line
                ),
                text: s.text(&text).to_string(),
            });
        }
        Ok(())
    }

    fn all_of(&mut self, sub: &str, what: &str) -> Result<()> {
        let files = latest_per_task(self.task_dir, sub);
        if files.is_empty() {
            self.notes.push(format!("{what}: none stored yet"));
        }
        for f in files {
            self.whole(Some(f), what)?;
        }
        Ok(())
    }
}

/// The architect output a later phase should read: the latest revision if any, else architect.md.
fn architect_latest(dir: &Path) -> Option<PathBuf> {
    latest_numbered(dir, "architect-revision").or_else(|| latest(dir, "architect"))
}

/// Feedback of the latest design audit.
fn audit_latest(dir: &Path) -> Option<PathBuf> {
    latest(dir, "design-audit")
}

pub fn retrieve(
    task_dir: &Path,
    memory_dir: &Path,
    m: &Manifest,
    needs: &[String],
    for_phase: &str,
) -> Result<Retrieved> {
    for n in needs {
        if !NEEDS.contains(&n.as_str()) && !TABLE.contains(&n.as_str()) {
            return Err(Error::invalid(format!("unknown need `{n}`"))
                .hint(format!("needs takes: {}", NEEDS.join(", "))));
        }
    }
    let mut c = Collector {
        task_dir,
        parts: vec![],
        notes: vec![],
    };
    let d = task_dir;
    let has_row = TABLE.contains(&for_phase);
    match for_phase {
        "design-audit" => {
            c.whole(architect_latest(d), "architect.md")?;
            if let Some(a) = audit_latest(d) {
                c.whole(Some(a), "previous design audit")?;
            }
        }
        "checkpoint" => c.sections(latest(d, "architect"), "architect.md", INVESTIGATION)?,
        "spec" => c.sections(architect_latest(d), "architect.md", ARCHITECT_FOR_SPEC)?,
        "implementation" => c.sections(latest(d, "spec"), "spec.md", SPEC_FOR_IMPL)?,
        "testing" => c.sections(latest(d, "spec"), "spec.md", SPEC_FOR_TESTING)?,
        "impl-audit" => {
            c.whole(architect_latest(d), "architect.md")?;
            c.whole(latest(d, "spec"), "spec.md")?;
            c.all_of("implementations", "implementations")?;
            c.all_of("tests", "tests")?;
            c.whole(latest(d, "test-results"), "test-results.md")?;
        }
        "revision" => {
            c.whole(latest(d, "architect"), "architect.md")?;
            // The audit's feedback and its preserve list: the whole audit, which holds both.
            c.whole(audit_latest(d), "design-audit.md")?;
        }
        "fix" => {
            c.all_of("implementations", "implementations")?;
            c.whole(latest(d, "impl-audit"), "impl-audit.md")?;
            c.sections(
                latest(d, "test-results"),
                "test-results.md",
                TESTS_TO_VERIFY,
            )?;
        }
        "graduate" => {
            c.whole(latest(d, "architect"), "architect.md")?;
            c.all_of("implementations", "implementations")?;
            c.whole(latest(d, "debt"), "debt.md")?;
        }
        "resume" => manifest_part(&mut c, m)?,
        _ => {}
    }
    for n in needs {
        match n.as_str() {
            "memory" => {
                for f in ["decisions.md", "patterns.md"] {
                    let p = memory_dir.join(f);
                    fs::confined(memory_dir.parent().unwrap_or(memory_dir), &p)?;
                    if let Some(text) = fs::read_text_opt(&p)? {
                        c.parts.push(Part {
                            source: format!("memory/{f}"),
                            text,
                        });
                    }
                }
            }
            // A target phase with its own row gets what the row says; the other needs name
            // what a phase without a row should get.
            _ if has_row => {}
            "architect-output" => c.whole(architect_latest(d), "architect.md")?,
            "spec" => c.whole(latest(d, "spec"), "spec.md")?,
            "spec-signatures" => c.sections(latest(d, "spec"), "spec.md", SPEC_FOR_IMPL)?,
            "investigation-summary" => {
                c.sections(latest(d, "architect"), "architect.md", INVESTIGATION)?
            }
            "audit-feedback" => c.whole(audit_latest(d), "design-audit.md")?,
            "implementations" => c.all_of("implementations", "implementations")?,
            "manifest" => manifest_part(&mut c, m)?,
            _ => {}
        }
    }
    Ok(Retrieved {
        for_phase: for_phase.to_string(),
        parts: c.parts,
        notes: c.notes,
    })
}

fn manifest_part(c: &mut Collector, m: &Manifest) -> Result<()> {
    let text = serde_json::to_string_pretty(m).map_err(|e| Error::internal(e.to_string()))?;
    c.parts.push(Part {
        source: super::MANIFEST.to_string(),
        text,
    });
    Ok(())
}

/// Key findings of architect.md for the investigation gate (after the design audit, where the
/// workflow path is chosen).
pub fn investigation_summary(task_dir: &Path) -> Result<String> {
    let Some(path) = latest(task_dir, "architect") else {
        return Ok(String::new());
    };
    fs::confined(task_dir, &path)?;
    let text = fs::read_text(&path)?;
    let all = markdown::sections(&text);
    let chosen = markdown::select(&all, |t| {
        let t = t.to_lowercase();
        INVESTIGATION.iter().any(|k| t.contains(k))
    });
    let mut out = String::new();
    for s in chosen {
        out.push_str(s.text(&text).trim_end());
        out.push_str("\n\n");
    }
    if out.is_empty() {
        out = text;
    }
    Ok(out.trim_end().to_string())
}
