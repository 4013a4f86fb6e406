//! Colour for people: failures red, what went well green, warnings yellow. Only baton's own
//! words are painted, and only for a stream that takes colour — a terminal, without
//! `NO_COLOR`, or any stream with `CLICOLOR_FORCE` (anstream's rules, as clap's own messages
//! follow them). The streams themselves are never filtered: text baton passes on (a spec
//! section, an artifact, an agent's output) reaches them byte for byte. Text from agents and
//! files that baton puts into its *own* lines (a run's progress, its errors) goes through
//! [`visible`] first: an escape sequence in a story title or an agent's reason must not set the
//! terminal's title, clear it, or hide what follows.

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

/// Text from files or agents for stdout: made [`visible`] when stdout is a terminal (an escape
/// sequence in a file must not retitle or clear it), as it is otherwise (a pipe gets the
/// bytes the file holds).
pub fn for_stdout(text: &str) -> std::borrow::Cow<'_, str> {
    use std::io::IsTerminal;
    static TTY: OnceLock<bool> = OnceLock::new();
    if *TTY.get_or_init(|| std::io::stdout().is_terminal()) {
        visible(text)
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// `text` with every control character made visible (`\x1B`, `\x00`, `\u{202E}`), line breaks
/// and tabs kept: escape sequences (title, clear, hyperlinks, colours), NUL, C1 controls and
/// the bidirectional overrides that reorder what a terminal shows. Text without any comes back
/// borrowed.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let shown_as_is = |c: char| c == '\n' || c == '\t' || !(c.is_control() || is_bidi(c));
    if text.chars().all(shown_as_is) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if shown_as_is(c) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            out.push_str(&format!("\\x{:02X}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The Unicode controls that reorder text (embeddings, overrides, isolates, marks).
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn control_characters_are_made_visible_and_nothing_else_changes() {
        assert!(matches!(
            visible("plain — text\n\tok"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            visible("a\x1b]0;owned\x07b\x1b[2Jc\0d\u{9b}e\u{202e}f\x7f"),
            "a\\x1B]0;owned\\x07b\\x1B[2Jc\\x00d\\x9Be\\u{202E}f\\x7F"
        );
        assert_eq!(visible("é ✓ 日本"), "é ✓ 日本");
    }
}
