//! Build step of baton-context: ship the BPE vocabularies (o200k_base, cl100k_base) that
//! `bpe-openai` would embed as 47 MB of tables without what baton never reads (see
//! `counting_tables`): o200k_base (the default encoding) as its tables, deserialized from the
//! binary on the first count, cl100k_base compressed (zstd), decoded on its first count. A
//! process that counts nothing touches neither.
//!
//! See docs/BENCHMARKS.md, "The task store".
use std::path::PathBuf;

use serde::Deserialize;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    std::fs::write(
        out.join("o200k_base.bpe"),
        counting_tables(&bpe_openai::o200k_base().bpe),
    )
    .expect("OUT_DIR is writable");
    compress("cl100k_base", bpe_openai::cl100k_base(), &out);
    println!("cargo:rerun-if-changed=build.rs");
}

/// Frames decoded side by side on first use (one per core of a small machine).
const FRAMES: usize = 2;

/// Write `OUT_DIR/<name>.bpe.zst`: a header (frame count, then each frame's decoded and
/// compressed length, u64 little-endian) and the zstd frames of the vocabulary's tables
/// ([`counting_tables`]), cut into [`FRAMES`] equal parts.
fn compress(name: &str, tok: &bpe_openai::Tokenizer, out: &std::path::Path) {
    let raw = counting_tables(&tok.bpe);
    let part = raw.len().div_ceil(FRAMES);
    // zstd's level 19 is slow (~20 s for o200k on one core): the frames compress side by side.
    let frames: Vec<(usize, Vec<u8>)> = std::thread::scope(|s| {
        let jobs: Vec<_> = raw
            .chunks(part)
            .map(|c| s.spawn(move || (c.len(), zstd::bulk::compress(c, 19))))
            .collect();
        jobs.into_iter()
            .map(|j| {
                let (len, z) = j.join().expect("a compressing thread");
                (len, z.expect("zstd compresses"))
            })
            .collect()
    });
    let mut file = Vec::new();
    file.extend_from_slice(&(frames.len() as u64).to_le_bytes());
    for (len, z) in &frames {
        file.extend_from_slice(&(*len as u64).to_le_bytes());
        file.extend_from_slice(&(z.len() as u64).to_le_bytes());
    }
    for (_, z) in &frames {
        file.extend_from_slice(z);
    }
    std::fs::write(out.join(format!("{name}.bpe.zst")), file).expect("OUT_DIR is writable");
}

/// The vocabulary's tables without what baton never uses, serialized with postcard (read back
/// in three quarters of the time the MessagePack `bpe-openai` embeds takes, and 12.2 MB
/// instead of 14.6 for o200k_base). `BytePairEncoding` serializes as an array of its 10
/// fields (read here from that MessagePack); the 3rd is the
/// hash of every token's bytes (a map of 200K entries: read only by the bitfield encoder), the
/// 7th and 8th the two "overlapping" Aho-Corasick automata (~16 MB of o200k's 32 MB: read
/// only by the table, minimal and appendable/prependable encoders). baton counts (`count`:
/// the backtracking encoder), truncates (`encode_via_backtracking`, `decode_tokens`) and
/// pre-tokenizes, none of which reads them (bpe 0.2; `context::tokens` says so too). They are
/// replaced by those of a one-token vocabulary: valid tables, a few hundred bytes. Less than
/// half the bytes to hold and to read, for the same counts (checked against `bpe-openai`'s
/// own tokenizers in `context::tokens`'s tests and against the corpus).
fn counting_tables(bpe: &bpe_openai::byte_pair_encoding::BytePairEncoding) -> Vec<u8> {
    use bpe_openai::byte_pair_encoding::BytePairEncoding;
    const FIELDS: u32 = 10;
    const UNUSED: [usize; 3] = [2, 6, 7];
    fn fields(raw: &[u8]) -> Vec<&[u8]> {
        let mut rest = raw;
        let n = rmp::decode::read_array_len(&mut rest).expect("an array of fields");
        assert_eq!(n, FIELDS, "bpe's BytePairEncoding changed its fields");
        (0..n)
            .map(|_| {
                let before = rest;
                serde::de::IgnoredAny::deserialize(&mut rmp_serde::Deserializer::new(&mut rest))
                    .expect("a field");
                &before[..before.len() - rest.len()]
            })
            .collect()
    }
    let full = rmp_serde::to_vec(bpe).expect("the vocabulary serializes");
    let tiny = rmp_serde::to_vec(&BytePairEncoding::from_dictionary([b"\0".to_vec()], None))
        .expect("a one-token vocabulary serializes");
    let (full_fields, tiny_fields) = (fields(&full), fields(&tiny));
    let mut out = Vec::with_capacity(full.len() / 2);
    rmp::encode::write_array_len(&mut out, FIELDS).expect("writes to a Vec");
    for (i, f) in full_fields.iter().enumerate() {
        out.extend_from_slice(if UNUSED.contains(&i) {
            tiny_fields[i]
        } else {
            f
        });
    }
    let trimmed: BytePairEncoding = rmp_serde::from_slice(&out).expect("the trimmed tables");
    postcard::to_allocvec(&trimmed).expect("the tables serialize")
}
