//! Rendering: one JSON document for machines, short lines for people.
//!
//! Nothing here panics on a closed stdout (`baton run … | head -3`): a write that fails is
//! dropped, and the command finishes with its own outcome. `println!` would panic, so the
//! crate forbids it (`clippy::print_stdout`) and prints with [`outln!`].

use std::io::Write;

use serde::Serialize;

#[derive(Debug, Clone, Copy)]
pub struct Out {
    pub json: bool,
}

impl Out {
    /// Print `value` as JSON when `--json` was given, else run `human`.
    pub fn emit<T: Serialize>(
        &self,
        value: &T,
        human: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) {
        let _ = if self.json {
            let mut lock = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut lock, value)
                .map_err(std::io::Error::other)
                .and_then(|_| writeln!(lock))
        } else {
            human(&mut std::io::stdout().lock())
        };
    }
}

/// `println!` that never panics: a line on stdout, dropped when stdout is closed (its reader
/// went away), so a run piped into `head` finishes as it would have.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}
