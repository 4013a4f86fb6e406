//! Notices: what a library crate has to tell the person at the terminal while it works (a
//! write that was cut short and cleaned up, a warning that does not stop the command).
//! Library crates never print: they hand a [`Notice`] to the sink the program installed with
//! [`set_sink`] (the `baton` binary writes it to stderr). With no sink installed, a notice is
//! dropped: a program that embeds the crates decides what to show.

use std::sync::OnceLock;

/// What a notice is, and how the binary prefixes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Something baton did on its own that the user should know of (`note: …`).
    Note,
    /// Something went wrong that did not stop the command (`warning: …`).
    Warning,
    /// A line that names its own subject (a queue worker's `<name>: …`).
    Said,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub kind: NoticeKind,
    pub text: String,
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            NoticeKind::Note => write!(f, "note: {}", self.text),
            NoticeKind::Warning => write!(f, "warning: {}", self.text),
            NoticeKind::Said => f.write_str(&self.text),
        }
    }
}

static SINK: OnceLock<fn(&Notice)> = OnceLock::new();

/// Install the process's sink (the first call wins).
pub fn set_sink(sink: fn(&Notice)) {
    let _ = SINK.set(sink);
}

pub fn emit(kind: NoticeKind, text: impl Into<String>) {
    if let Some(sink) = SINK.get() {
        sink(&Notice {
            kind,
            text: text.into(),
        });
    }
}

pub fn note(text: impl Into<String>) {
    emit(NoticeKind::Note, text);
}

pub fn warning(text: impl Into<String>) {
    emit(NoticeKind::Warning, text);
}

pub fn said(text: impl Into<String>) {
    emit(NoticeKind::Said, text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_renders_with_its_kinds_prefix() {
        let n = |kind| Notice {
            kind,
            text: "x".into(),
        };
        assert_eq!(n(NoticeKind::Note).to_string(), "note: x");
        assert_eq!(n(NoticeKind::Warning).to_string(), "warning: x");
        assert_eq!(n(NoticeKind::Said).to_string(), "x");
    }
}
