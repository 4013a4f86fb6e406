//! `baton deferred`: the deferred-work ledger — findings a story's review judged real but not
//! its problem — from `deferred-work.md` and spec-folder stories' `deferred:` lists, with the
//! story that deferred each and the one that closed it.

use std::io::Write;
use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;
use baton_engine::workflow::epic::bmad::deferred::{self, Deferred};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Read from deferred-work.md (in _bmad-output/implementation-artifacts/, \
the folder the BMAD configuration names, docs/, and each spec folder) and from the frontmatter \
`deferred:` lists of spec-folder stories. An entry is closed by a done story whose \
`closes_deferred` names it (in stories.yaml or its frontmatter), or by the ledger itself \
(`[x]`, `status: closed`, struck through).

Examples:
  baton deferred
  baton deferred --all          # closed ones too
  baton deferred --json | jq -r '.[] | select(.severity == \"high\") | .summary'"
)]
pub struct Args {
    /// Closed entries too
    #[arg(long)]
    pub all: bool,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let mut list = deferred::all(&ctx.project.dir);
    if !a.all {
        list.retain(|d| d.closed_by.is_none());
    }
    ctx.out.emit(&list, |w| human(w, &list, a.all));
    Ok(ExitCode::SUCCESS)
}

fn human(w: &mut dyn Write, list: &[Deferred], all: bool) -> std::io::Result<()> {
    if list.is_empty() {
        let what = if all { "deferred" } else { "open deferred" };
        return writeln!(w, "no {what} work");
    }
    for d in list {
        let sev = d
            .severity
            .as_ref()
            .map_or(String::new(), |s| format!(" ({s})"));
        writeln!(w, "{}{sev}  {}", d.id, super::style::visible(&d.summary))?;
        if let Some(by) = &d.deferred_by {
            writeln!(w, "    deferred by {}", super::style::visible(by))?;
        }
        if let Some(l) = &d.location {
            writeln!(w, "    at {}", super::style::visible(l))?;
        }
        if let Some(c) = &d.closed_by {
            writeln!(w, "    closed: {}", super::style::visible(c))?;
        }
        writeln!(w, "    in {}", d.source)?;
    }
    Ok(())
}
