//! Colour for people: failures red, what went well green, warnings yellow. Written through
//! anstream, which drops the codes where the stream is not a terminal or `NO_COLOR` is set
//! (and keeps them with `CLICOLOR_FORCE`), as clap does for its own messages.

use anstyle::{AnsiColor, Style};

pub const ERROR: Style = AnsiColor::Red.on_default().bold();
pub const WARNING: Style = AnsiColor::Yellow.on_default().bold();
pub const NOTE: Style = AnsiColor::Cyan.on_default();
pub const BAD: Style = AnsiColor::Red.on_default();
pub const GOOD: Style = AnsiColor::Green.on_default();

pub fn paint(style: Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

/// A result word in its colour (padded first: codes must not count as width).
pub fn result(word: &str, width: usize) -> String {
    let padded = format!("{word:<width$}");
    match word {
        "done" | "ok" | "passed" | "finished" | "complete" | "completed" => paint(GOOD, &padded),
        "failed" | "FAILED" | "rejected" | "broken" | "damaged" => paint(BAD, &padded),
        "interrupted" | "skipped" | "running" => paint(WARNING, &padded),
        _ => padded,
    }
}

/// `text` for stdout as it is now: without its colour codes where stdout takes none (not a
/// terminal, `NO_COLOR`). For text written past anstream (a view rendered ahead of time).
pub fn for_stdout(text: &[u8]) -> Vec<u8> {
    if anstream::AutoStream::choice(&std::io::stdout()) == anstream::ColorChoice::Never {
        let mut plain = Vec::with_capacity(text.len());
        for chunk in anstream::adapter::strip_bytes(text) {
            plain.extend_from_slice(chunk);
        }
        plain
    } else {
        text.to_vec()
    }
}
