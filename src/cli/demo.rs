//! `baton demo`: a small BMAD project in a temporary git repository, run through
//! epic-execute with the simulated agent and every party phase. One story blocks, gets a
//! failure analysis, and the run goes on; another fails review and is fixed on retry.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use super::Ctx;
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton demo\n  baton demo --dir /tmp/baton-demo\n  \
baton demo --dir /tmp/try --no-run && cd /tmp/try && baton run epic-execute 1 --agent codex\n\n\
Everything happens in a new temporary git repository (kept, so you can look around).\n\
The agent is baton's simulated agent: deterministic, no LLM, no network."
)]
pub struct Args {
    /// Where to create the demo project (must not exist yet)
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Only create the project, ready for `baton run epic-execute 1` with an agent of yours
    #[arg(long)]
    no_run: bool,
}

const EPIC: &str = "# Epic 1: Notes service\n\nA small service to keep notes.\n\n## Stories\n\n- 1.1 Project skeleton\n- 1.2 Create notes\n- 1.3 Search notes\n- 1.4 Export notes\n";

const STORIES: &[(&str, &str, &str)] = &[
    ("1.1", "project-skeleton", "Project skeleton"),
    ("1.2", "create-notes", "Create notes"),
    ("1.3", "search-notes", "Search notes"),
    ("1.4", "export-notes", "Export notes"),
];

/// The demo's scenario: 1.2's first review fails (fixed on retry), 1.3 blocks twice.
const SCENARIO: &str = "# Simulated agent scenario of `baton demo`.\nlatency_ms = 0\n\n[story.\"1.2\"]\nreview = [\"fail\", \"pass\"]\n\n[story.\"1.3\"]\ndev = [\"block\"]\n";

pub fn write_project(dir: &Path) -> Result<()> {
    let w = |rel: &str, text: &str| -> Result<()> {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::fs::write(&p, text).map_err(|e| Error::io(&p, e))
    };
    w("docs/epics/epic-1.md", EPIC)?;
    for (id, slug, title) in STORIES {
        w(
            &format!("docs/stories/{id}.{slug}.md"),
            &format!(
                "# Story {id}: {title}\n\nStatus: ready-for-dev\n\n## Story\n\nAs a user, I want {}, so that my notes are useful.\n\n## Acceptance Criteria\n\n1. It works.\n2. It is tested.\n",
                title.to_lowercase()
            ),
        )?;
    }
    w(".baton/sim.toml", SCENARIO)?;
    w(".gitignore", ".baton/\n")?;
    w("README.md", "# notes\n\nA demo project for baton.\n")?;
    Ok(())
}

fn git(dir: &Path, args: &[&str]) -> Result<()> {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| Error::invalid(format!("cannot run git: {e}")))?;
    if !o.status.success() {
        return Err(Error::state(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        )));
    }
    Ok(())
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let dir = match a.dir {
        Some(d) if d.exists() => {
            return Err(Error::state(format!("{} already exists", d.display()))
                .hint("pick a new directory, or omit --dir"));
        }
        Some(d) => d,
        None => tempfile::Builder::new()
            .prefix("baton-demo-")
            .tempdir()
            .map_err(|e| Error::io(std::env::temp_dir(), e))?
            .keep(),
    };
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    write_project(&dir)?;
    git(&dir, &["init", "-q", "-b", "main"])?;
    git(&dir, &["config", "user.name", "baton demo"])?;
    git(&dir, &["config", "user.email", "demo@baton.invalid"])?;
    git(&dir, &["add", "-A"])?;
    git(
        &dir,
        &[
            "commit",
            "-q",
            "-m",
            "Notes service: epic 1 and its stories",
        ],
    )?;
    git(&dir, &["switch", "-q", "-c", "epic-1"])?;
    crate::outln!("demo project: {} (branch epic-1)", dir.display());
    if a.no_run {
        crate::outln!(
            "run it: cd {} && baton run epic-execute 1 --agent claude|codex|gemini|sim",
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    crate::outln!("running: baton run epic-execute 1 --agent sim --party-all\n");
    let project = baton_engine::config::Project::discover(&dir)?;
    let sub = super::Ctx {
        project,
        root: None,
        task: None,
        out: ctx.out,
    };
    let args = super::run::Args {
        workflow: Some(super::run::Workflow::EpicExecute(super::run::EpicArgs {
            epic: "1".into(),
            agent: super::agent_args::AgentArgs {
                agent: Some(baton_agent::AgentKind::Sim.into()),
                scenario: Some(dir.join(".baton/sim.toml")),
            },
            flags: super::run::EpicFlags {
                party_all: true,
                ..Default::default()
            },
        })),
        resume: None,
        no_wait: false,
        retry: Vec::new(),
        apply_stash: false,
        agent: None,
        store: Default::default(),
    };
    let code = super::run::run(&sub, args)?;
    let report = crate::report::find(&sub.project.local_dir(), &crate::report::Which::Latest)
        .map(|j| j.dir.join(crate::report::FILE))
        .ok()
        .filter(|p| p.is_file());
    crate::outln!(
        "\nlook at:\n  git -C {0} log --oneline            one commit per story\n  {0}/docs/stories/                    records appended by each phase\n  {0}/docs/uat/ docs/sprints/ docs/handoffs/",
        dir.display()
    );
    if let Some(r) = report {
        crate::outln!(
            "  {}   the run's HTML report: open it in a browser",
            r.display()
        );
    }
    // The demo's blocked story is the point of the demo, not a failure of the demo.
    let _ = code;
    Ok(ExitCode::SUCCESS)
}
