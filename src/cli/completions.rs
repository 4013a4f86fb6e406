//! `baton completions SHELL` and `baton man`: generated from the clap definitions, so they
//! never drift from the commands.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::CommandFactory;

use super::{Cli, Ctx};
use crate::error::{Error, Result};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
source <(baton completions bash)      # in ~/.bashrc\n  \
source <(baton completions zsh)       # in ~/.zshrc\n  \
baton completions fish > ~/.config/fish/completions/baton.fish\n\n\
At each TAB the shell asks baton: run ids, task slugs and queue names come from the\n\
project you are in.")]
pub struct CompletionsArgs {
    /// The shell to complete in
    #[arg(value_enum)]
    shell: Shell,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  baton man | man -l -\n  \
baton man --dir ~/.local/share/man/man1     # baton.1 and one page per command (baton-run.1, …)")]
pub struct ManArgs {
    /// Write baton.1 and a page for every command into this directory instead of printing
    /// baton.1
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// The shell's registration: at each TAB the shell calls this binary back (with
/// `BATON_COMPLETE=<shell>`), which completes commands and flags from the clap definitions and
/// run ids, task slugs and queue names from the project (`complete`).
pub fn completions(_ctx: &Ctx, a: CompletionsArgs) -> Result<ExitCode> {
    let name = match a.shell {
        Shell::Bash => "bash",
        Shell::Zsh => "zsh",
        Shell::Fish => "fish",
    };
    let shells = clap_complete::env::Shells::builtins();
    let shell = shells
        .completer(name)
        .ok_or_else(|| Error::internal(format!("clap_complete has no {name}")))?;
    // The binary called back: this one, by its path (it works off PATH too).
    let exe = std::env::current_exe().map_err(|e| Error::io("baton", e))?;
    let mut script = Vec::new();
    shell
        .write_registration(
            super::complete::VAR,
            "baton",
            "baton",
            &exe.display().to_string(),
            &mut script,
        )
        .map_err(|e| Error::io("<stdout>", e))?;
    print(&script)
}

pub fn man(_ctx: &Ctx, a: ManArgs) -> Result<ExitCode> {
    let cmd = Cli::command();
    match a.dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut page)
                .map_err(|e| Error::io("<stdout>", e))?;
            return print(&page);
        }
        Some(dir) => {
            if !dir.is_dir() {
                return Err(
                    Error::not_found(format!("{} is not a directory", dir.display()))
                        .hint(format!("create it first: mkdir -p {}", dir.display())),
                );
            }
            clap_mangen::generate_to(cmd, &dir).map_err(|e| Error::io(&dir, e))?;
            crate::outln!("man pages written to {}", dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Write to stdout; a reader that stopped early (`| head`) is not an error.
fn print(bytes: &[u8]) -> Result<ExitCode> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::io("<stdout>", e)),
        _ => Ok(ExitCode::SUCCESS),
    }
}
