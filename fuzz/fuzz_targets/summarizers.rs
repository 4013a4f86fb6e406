//! Every test-runner summarizer (and `auto`'s detection) on any output, fed in chunks as a
//! pipe delivers it: a summary always comes back, the same however the output was cut into
//! chunks.
#![no_main]

use arbitrary::Arbitrary;
use baton_context::mask::{Kind, Masker, summarize_command_output, summarizer};
use clap::ValueEnum;
use libfuzzer_sys::fuzz_target;

const COMMANDS: &[&str] = &[
    "cargo test",
    "pytest -q",
    "npx jest",
    "go test ./...",
    "git diff",
    "tsc",
    "make",
];

#[derive(Arbitrary, Debug)]
struct Input {
    kind: u8,
    command: u8,
    cut: u16,
    output: Vec<u8>,
}

fuzz_target!(|input: Input| {
    // Every kind `baton mask --kind` takes.
    let kinds = Kind::value_variants();
    let kind = kinds[input.kind as usize % kinds.len()];
    let command: Vec<String> = COMMANDS[input.command as usize % COMMANDS.len()]
        .split(' ')
        .map(String::from)
        .collect();
    let whole = summarize_command_output(kind, &command, &input.output);
    // The same output in two pieces cut anywhere.
    let cut = input.cut as usize % (input.output.len() + 1);
    let mut m = Masker::new(std::io::sink(), summarizer(kind, &command), 0);
    m.feed(&input.output[..cut]);
    m.feed(&input.output[cut..]);
    let pieces = m.finish().summary;
    assert_eq!(
        serde_json::to_value(&whole).unwrap(),
        serde_json::to_value(&pieces).unwrap(),
        "cut at {cut}"
    );
});
