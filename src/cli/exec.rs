//! `baton exec`: the context-manager command language, answered in its output format.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use super::Ctx;
use crate::error::{Error, Result};
use baton_store::lang;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  baton exec 'INIT task: add-login mode: standard workflow: orchestrate'\n  \
baton exec 'BEGIN_PHASE phase: architect needs: memory'\n  \
printf 'START_PHASE phase: spec\\nEND_PHASE phase: spec status: success\\n' | baton exec\n\n\
Commands: INIT, START_PHASE, END_PHASE, BEGIN_PHASE, COMPLETE_PHASE, PAUSE, SET_GATE, RESUME,\n\
STORE, RETRIEVE, METRICS, LIST, SUMMARY, QUERY, HISTORY, written as in the context-manager command language\n\
(`STORE phase: spec content: …`; content runs to the next command line).\n\
Each answers `STATUS: success | error`, `TASK:`, `DATA:`. Stops at the first error and exits\n\
with its code."
)]
pub struct Args {
    /// Command lines; read from stdin when none is given
    commands: Vec<String>,
    #[command(flatten)]
    pub store: super::StoreRoot,
}

pub fn run(ctx: &Ctx, a: Args) -> Result<ExitCode> {
    let script = if a.commands.is_empty() {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            return Err(Error::invalid("no commands given")
                .hint("pass them as arguments (baton exec 'LIST') or pipe them on stdin"));
        }
        let mut buf = Vec::new();
        stdin
            .lock()
            .read_to_end(&mut buf)
            .map_err(|e| Error::io("<stdin>", e))?;
        String::from_utf8(buf)
            .map_err(|_| Error::invalid("commands on stdin are not UTF-8 text"))?
    } else {
        a.commands.join("\n")
    };
    let responses = lang::run_script(&ctx.store(), &script);
    let code = responses
        .iter()
        .map(|r| r.code)
        .find(|c| *c != 0)
        .unwrap_or(0);
    ctx.out.emit(&responses, |w| {
        for (i, r) in responses.iter().enumerate() {
            if i > 0 {
                writeln!(w)?;
            }
            write!(w, "{}", r.render())?;
        }
        Ok(())
    });
    Ok(ExitCode::from(code))
}
