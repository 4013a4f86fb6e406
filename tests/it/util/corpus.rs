//! The shared test corpus (real documents, real test-runner outputs, reference counts) lives
//! outside this repository. Tests find it through one setting, `BATON_CORPUS`, so a clone with
//! nothing beside it still passes: such a test says it was skipped and returns.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The corpus directory named by `BATON_CORPUS` (a relative path is taken from the crate's
/// root), or `None` after printing one `skipped: <test>: …` line to stderr. The line is written
/// past the test harness' capture, so a passing run shows it too.
pub fn corpus(test: &str) -> Option<PathBuf> {
    let Some(value) = std::env::var_os("BATON_CORPUS").filter(|v| !v.is_empty()) else {
        say(&format!(
            "skipped: {test}: BATON_CORPUS not set (the shared test corpus)"
        ));
        return None;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(value);
    if !dir.is_dir() {
        say(&format!(
            "skipped: {test}: BATON_CORPUS={} is not a directory (the shared test corpus)",
            dir.display()
        ));
        return None;
    }
    Some(dir)
}

/// `eprintln!` output of a passing test is captured and dropped; std::io::stderr() is not.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// `let dir = corpus_or_skip!(test_fn_name);` — the corpus directory, or a skip line and
/// `return` from the test.
macro_rules! corpus_or_skip {
    ($test:ident) => {
        match $crate::util::corpus(
            concat!(module_path!(), "::", stringify!($test)).trim_start_matches("it::"),
        ) {
            Some(dir) => dir,
            None => return,
        }
    };
}
pub(crate) use corpus_or_skip;
