//! Workflow definitions, all three kinds (epic, task, verify pipeline): any text is a
//! definition or an error naming where it came from.
#![no_main]

use arbitrary::Arbitrary;
use baton_engine::workflow::{epic, task, verify};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    kind: u8,
    text: String,
}

fuzz_target!(|input: Input| {
    let source = "workflows/fuzzed.toml";
    let err = match input.kind % 3 {
        0 => epic::def::parse(source, &input.text).err(),
        1 => task::def::parse(source, &input.text).err(),
        _ => verify::pipeline::parse(source, &input.text).err(),
    };
    if let Some(e) = err {
        assert!(e.to_string().contains("fuzzed.toml"), "{e}");
    }
});
