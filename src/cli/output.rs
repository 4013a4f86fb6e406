//! Rendering: one JSON document for machines, short lines for people.

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
