//! `baton stories <epic>`: what baton finds of an epic in a BMAD project.

use std::io::Write;
use std::process::ExitCode;

use clap::Args as ClapArgs;

use super::Ctx;
use crate::error::Result;
use baton_engine::workflow::epic::bmad::{self, Bmad, EpicReport, id};

#[derive(Debug, ClapArgs)]
#[command(
    after_help = "Stories are read where BMAD v4 and v6 put them: docs/stories/, \
docs/sprint-artifacts/ (and folders below it), _bmad-output/implementation-artifacts/. \
Also the folders the project's BMAD configuration names (_bmad/bmm/config.yaml, \
.bmad-core/core-config.yaml). A story's id comes from its title (`# Story 1.2: …`) or its file \
name (1.2.slug.md, story-1.2.md, 1-2-slug.md, 3-5-0-slug.md); the first number is the epic, or \
the first two for a decimal epic the project declares (`Epic 3.5` heading, epic-3.5 file or \
folder, `epic-3-5` sprint key): story 3.5.0 is then epic 3.5's. Stories listed in the \
epic (`### Story 1.3: …`) or in sprint-status.yaml without a file are shown as not created. \
When a story file and sprint-status.yaml disagree, both values are shown and marked `≠`.

A BMAD 6 spec folder (`bmad-spec`'s SPEC.md, stories.yaml and stories/<id>-<slug>.md) is \
given by its path or its name under _bmad-output/, docs/ or specs/: its stories in stories.yaml \
order, each with its file's frontmatter status.

Examples:
  baton stories 1
  baton stories epic-2 --verbose
  baton stories 3.5                # an epic inserted between 3 and 4
  baton stories 3 --json | jq '.stories[] | select(.disagreement)'
  baton stories _bmad-output/specs/rate-limiting   # a spec folder
  baton stories rate-limiting --json

Exit codes: 0 ok, 4 no such epic (the message lists the epics found)."
)]
pub struct Args {
    /// Epic: 1, epic-1, "Epic 1", a decimal one (3.5, epic-3.5), or a spec folder
    #[arg(value_name = "EPIC")]
    pub epic: String,
    /// Also list the files in story folders that are not stories, and why
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    if let Some(dir) = bmad::spec::find(&ctx.project.dir, &a.epic) {
        let f = bmad::tracking::load_spec(&ctx.project.dir, &dir)?;
        ctx.out.emit(&f, |w| spec_folder(w, &f));
        return Ok(ExitCode::SUCCESS);
    }
    let b = Bmad::scan(&ctx.project.dir);
    let Some(n) = id::parse_epic_arg(&a.epic) else {
        return Err(b.epic_not_found(&a.epic).into());
    };
    let report = b.epic(&n)?;
    ctx.out.emit(&report, |w| human(w, &report, a.verbose));
    Ok(ExitCode::SUCCESS)
}

/// A BMAD 6 spec folder: its stories in `stories.yaml` order, with their files' statuses.
fn spec_folder(w: &mut dyn Write, f: &bmad::spec::SpecFolder) -> std::io::Result<()> {
    let spec = f
        .spec
        .as_ref()
        .map_or("no SPEC.md".to_string(), |p| p.display().to_string());
    writeln!(w, "Spec folder {}  ({spec})", f.dir.display())?;
    if f.stories.is_empty() {
        writeln!(w, "no stories in stories.yaml yet")?;
    }
    let idw = f
        .stories
        .iter()
        .map(|s| s.id.len())
        .max()
        .unwrap_or(2)
        .max(2);
    for s in &f.stories {
        let status = match (&s.file, &s.status) {
            (None, _) => "not planned".to_string(),
            (Some(_), Some(st)) => st.clone(),
            (Some(_), None) => "no status".to_string(),
        };
        let file = s
            .file
            .as_ref()
            .map_or("(no story file yet)".to_string(), |p| {
                p.display().to_string()
            });
        let mut marks = String::new();
        if s.spec_checkpoint {
            marks.push_str("  [spec checkpoint]");
        }
        if s.done_checkpoint {
            marks.push_str("  [done checkpoint]");
        }
        writeln!(
            w,
            "  {:idw$}  {:13}  {}  {file}{marks}",
            s.id,
            status,
            super::style::visible(&s.title)
        )?;
        if let Some(b) = &s.blocking {
            writeln!(w, "  {:idw$}  ↳ blocked: {}", "", super::style::visible(b))?;
        }
    }
    Ok(())
}

fn human(w: &mut dyn Write, r: &EpicReport, verbose: bool) -> std::io::Result<()> {
    let title = if r.title.is_empty() {
        String::new()
    } else {
        format!(": {}", r.title)
    };
    match &r.epic_file {
        Some(f) => writeln!(w, "Epic {}{title}  ({})", r.epic, f.display())?,
        None => writeln!(w, "Epic {}{title}  (no epic file)", r.epic)?,
    }
    if let Some(f) = &r.sprint_file {
        let st = r.sprint_epic_status.as_deref().unwrap_or("no epic entry");
        writeln!(
            w,
            "sprint-status: {}  (epic-{}: {st})",
            f.display(),
            r.epic.dashed()
        )?;
    }
    if r.stories.is_empty() {
        writeln!(w, "no stories yet")?;
    }
    let idw = r
        .stories
        .iter()
        .map(|s| s.id.to_string().len())
        .max()
        .unwrap_or(0);
    let stw = r
        .stories
        .iter()
        .map(|s| status_text(s).chars().count())
        .max()
        .unwrap_or(0);
    let mut disagreements = 0;
    for s in &r.stories {
        let place = match (&s.file, &s.listed_in) {
            (Some(f), _) => f.display().to_string(),
            (None, Some(l)) => format!("listed in {l}"),
            (None, None) => String::new(),
        };
        let sprint = s
            .sprint_status
            .as_ref()
            .map(|v| format!("  [sprint: {v}]"))
            .unwrap_or_default();
        let mark = if s.disagreement.is_some() { " ≠" } else { "" };
        let id = s.id.to_string();
        let st = status_text(s);
        writeln!(
            w,
            "  {id:<idw$}  {st:<stw$}  {}  {place}{sprint}{mark}",
            s.title
        )?;
        if let Some(d) = &s.disagreement {
            disagreements += 1;
            writeln!(w, "  {:idw$}  ≠ {d}", "")?;
        }
        for n in &s.notes {
            writeln!(w, "  {:idw$}  note: {n}", "")?;
        }
    }
    if disagreements > 0 {
        writeln!(
            w,
            "{disagreements} disagreement{} with sprint-status.yaml",
            if disagreements == 1 { "" } else { "s" }
        )?;
    }
    for warn in &r.warnings {
        writeln!(w, "warning: {warn}")?;
    }
    if verbose && !r.skipped.is_empty() {
        writeln!(w, "skipped (not stories):")?;
        for s in &r.skipped {
            writeln!(w, "  {}: {}", s.file.display(), s.reason)?;
        }
    }
    Ok(())
}

/// `done`, `done (Complete)` when the file says it differently, `not created`, `no status`.
fn status_text(s: &bmad::StoryEntry) -> String {
    match (&s.status, &s.status_raw) {
        _ if !s.created => "not created".into(),
        (None, _) => "no status".into(),
        (Some(st), Some(raw))
            if !raw.eq_ignore_ascii_case(st.as_str())
                && !matches!(st, bmad::Status::Unknown(_)) =>
        {
            format!("{st} ({raw})")
        }
        (Some(st), _) => st.to_string(),
    }
}
