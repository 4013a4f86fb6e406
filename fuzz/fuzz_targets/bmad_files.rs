//! BMAD planning files: story and epic documents (classification, ids, the status field),
//! sprint-status.yaml, BMAD 6 spec folders' stories.yaml and frontmatter, and the
//! deferred-work ledger. What baton writes it must read back: a status rewritten into any
//! story text is the status found there, a sprint key set is the value then read, a
//! frontmatter status set is the one then read.
#![no_main]

use std::path::Path;

use arbitrary::Arbitrary;
use baton_engine::workflow::epic::bmad::{self, deferred, id, spec, sprint, status};
use libfuzzer_sys::fuzz_target;

const STATUSES: &[&str] = &["done", "in-progress", "review", "ready-for-dev", "backlog"];

#[derive(Arbitrary, Debug)]
struct Input {
    /// What the text is read as: a story or epic document (its first line the file's stem),
    /// sprint-status.yaml, or an id.
    what: u8,
    status: u8,
    text: String,
}

fuzz_target!(|input: Input| {
    let Input { what, status, text } = input;
    match what % 4 {
        0 => story(&text, status),
        1 => sprint_file(&text, status),
        2 => spec_folder(&text, status),
        _ => ids(&text),
    }
});

fn story(text: &str, status: u8) {
    let (stem, text) = text.split_once('\n').unwrap_or(("", text));
    let _ = bmad::classify(stem, text);
    let _ = id::from_file_stem(stem);
    let _ = id::epic_from_file_stem(stem);
    if let Some(line) = text.lines().next() {
        let _ = id::from_title(line);
        let _ = id::epic_from_title(line);
    }
    let _ = status::find(text);
    let value = STATUSES[status as usize % STATUSES.len()];
    let written = status::rewrite(text, value);
    let found = status::find(&written).expect("a rewritten status is found");
    assert_eq!(
        found.status,
        status::Status::normalize(value),
        "{text:?} rewritten to {written:?}"
    );
}

fn sprint_file(text: &str, status: u8) {
    let file = Path::new("sprint-status.yaml");
    let Ok(parsed) = sprint::SprintStatus::parse(file, text) else {
        return;
    };
    let value = STATUSES[status as usize % STATUSES.len()];
    for entry in parsed.entries.iter().take(4) {
        // What `sprint::write` would write: refused, or a file that reads back as set.
        let Ok(Some(updated)) = sprint::edit(file, text, &entry.key, value) else {
            continue;
        };
        let again =
            sprint::SprintStatus::parse(file, &updated).expect("a file baton updated still parses");
        let e = again
            .entries
            .iter()
            .find(|e| e.key == entry.key)
            .expect("the key stays");
        assert_eq!(e.value, value, "{text:?} -> {updated:?}");
    }
}

fn ids(s: &str) {
    if let Some(i) = id::StoryId::parse(s) {
        assert_eq!(id::StoryId::parse(&i.dashed()), Some(i.clone()), "{s:?}");
    }
    let _ = id::EpicId::parse(s);
    let _ = id::epic_from_key(s);
    let _ = id::parse_epic_arg(s);
}

fn spec_folder(text: &str, status: u8) {
    let _ = spec::parse(Path::new("stories.yaml"), text);
    let _ = deferred::parse_ledger(Path::new("deferred-work.md"), text);
    let _ = spec::frontmatter_yaml(text);
    let value = STATUSES[status as usize % STATUSES.len()];
    // A frontmatter that parses, with one `status` line: what is written reads back.
    let one = spec::frontmatter(text).is_some() && text.matches("\nstatus:").count() == 1;
    if let Some(written) = spec::set_status(text, value).filter(|_| one) {
        let fm = spec::frontmatter(&written).expect("the frontmatter written still parses");
        assert_eq!(fm.get("status").map(String::as_str), Some(value), "{text:?} -> {written:?}");
    }
}
