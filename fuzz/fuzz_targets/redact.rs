//! Redaction on any text: streamed in any chunks it redacts exactly what the whole text
//! does, it keeps every line, and what it returns has nothing left to redact.
#![no_main]

use std::io::Write;

use arbitrary::Arbitrary;
use baton_context::mask::redact::{RedactWriter, redact_bytes};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    /// Where the text is cut into writes (a xorshift seed).
    cuts: u64,
    text: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let text = &input.text;
    let whole = redact_bytes(text).into_owned();
    let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    assert_eq!(newlines(&whole), newlines(text), "lines are kept");
    assert_eq!(
        redact_bytes(&whole).as_ref(),
        whole.as_slice(),
        "nothing left to redact"
    );
    let mut w = RedactWriter::new(Vec::new());
    let (mut at, mut x) = (0, input.cuts | 1);
    while at < text.len() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let end = (at + (x % 97) as usize).min(text.len());
        w.write_all(&text[at..end]).unwrap();
        at = end;
    }
    let streamed = w.finish().unwrap();
    assert_eq!(streamed, whole, "streamed as the whole text");
});
