//! `baton config`: the configuration in force, each value with the file it came from (the
//! user's, the project's, or the built-in default), and `--reference`, every key baton.toml
//! accepts, generated from the configuration types.

use std::process::ExitCode;

use super::Ctx;
use crate::error::Result;
use baton_engine::config::reference;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton config                 # every value in force, and where it came from\n  \
baton config --json\n  baton config --reference     # every key: type, default, meaning (Markdown)\n\n\
The project's baton.toml lies over the user's ~/.config/baton/config.toml\n\
($XDG_CONFIG_HOME/baton/config.toml): tables merge key by key, the project's value wins."
)]
pub struct Args {
    /// Every key baton.toml accepts, with its type, default and meaning (Markdown; with
    /// --json, a list)
    #[arg(long)]
    pub reference: bool,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    if a.reference {
        let keys = reference::keys();
        ctx.out
            .emit(&keys, |w| write!(w, "{}", reference::reference()));
        return Ok(ExitCode::SUCCESS);
    }
    let p = &ctx.project;
    let values = reference::effective(&p.config, &p.layers);
    let files: Vec<serde_json::Value> = p
        .layers
        .iter()
        .map(|l| serde_json::json!({"level": l.level, "path": l.path}))
        .collect();
    // What a run would check before each commit: configured, or found from the project.
    let checks = baton_engine::checks::Checks::resolve(&p.config.checks, &p.dir, false);
    let v = serde_json::json!({"project_dir": p.dir, "files": files, "values": values, "checks": checks});
    ctx.out.emit(&v, |w| {
        writeln!(w, "project: {}", p.dir.display())?;
        if p.layers.is_empty() {
            writeln!(w, "no configuration file: every value is the default")?;
        }
        for l in &p.layers {
            writeln!(w, "{:<8} {}", l.level.as_str(), l.path.display())?;
        }
        writeln!(w)?;
        let width = values
            .iter()
            .map(|e| e.key.len() + e.value.len() + 3)
            .max()
            .unwrap_or(0)
            .min(60);
        for e in &values {
            let line = format!("{} = {}", e.key, e.value);
            let from = match e.from {
                Some(l) => l.as_str(),
                // Left to baton: `baton config --reference` says what it does then.
                None if e.value == reference::UNSET => "baton's default (--reference says it)",
                None => "default",
            };
            writeln!(w, "{line:<width$}  # {from}")?;
        }
        writeln!(w, "\n{}", checks.describe())?;
        Ok(())
    });
    Ok(ExitCode::SUCCESS)
}
