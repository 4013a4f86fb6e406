//! Colour for people: failures red, what went well green, warnings yellow. Only baton's own
//! words are painted, and only for a stream that takes colour — a terminal, without
//! `NO_COLOR`, or any stream with `CLICOLOR_FORCE` (anstream's rules, as clap's own messages
//! follow them). The streams themselves are never filtered: text baton passes on (a spec
//! section, an artifact, an agent's output) reaches them byte for byte.

use std::sync::OnceLock;

use anstyle::{AnsiColor, Style};

pub const ERROR: Style = AnsiColor::Red.on_default().bold();
pub const WARNING: Style = AnsiColor::Yellow.on_default().bold();
pub const NOTE: Style = AnsiColor::Cyan.on_default();
pub const BAD: Style = AnsiColor::Red.on_default();
pub const GOOD: Style = AnsiColor::Green.on_default();

/// The stream a painted word goes to.
#[derive(Debug, Clone, Copy)]
pub enum To {
    Stdout,
    Stderr,
}

/// Whether `to` takes colour (decided once per process).
fn colour(to: To) -> bool {
    static OUT: OnceLock<bool> = OnceLock::new();
    static ERR: OnceLock<bool> = OnceLock::new();
    let never = anstream::ColorChoice::Never;
    match to {
        To::Stdout => {
            *OUT.get_or_init(|| anstream::AutoStream::choice(&std::io::stdout()) != never)
        }
        To::Stderr => {
            *ERR.get_or_init(|| anstream::AutoStream::choice(&std::io::stderr()) != never)
        }
    }
}

/// `text` in `style`, when `to` takes colour.
pub fn paint(to: To, style: Style, text: &str) -> String {
    if colour(to) {
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}

/// A result word in its colour (padded first: codes must not count as width).
pub fn result(to: To, word: &str, width: usize) -> String {
    let padded = format!("{word:<width$}");
    let style = match word {
        "done" | "ok" | "passed" | "finished" | "complete" | "completed" => GOOD,
        "failed" | "FAILED" | "rejected" | "broken" | "damaged" => BAD,
        "interrupted" | "skipped" | "running" => WARNING,
        _ => return padded,
    };
    paint(to, style, &padded)
}
