//! Context toolkit: corpus checks (exact token counts, exact sections) and the real binary.

use std::path::{Path, PathBuf};

use baton::context::markdown;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
}

fn reference(path: &Path) -> Vec<(u8, String, usize, usize)> {
    let text = std::fs::read_to_string(path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["level"].as_u64().unwrap() as u8,
                s["title"].as_str().unwrap().to_string(),
                s["start_line"].as_u64().unwrap() as usize,
                s["end_line"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

fn ours(sections: &[markdown::Section]) -> Vec<(u8, String, usize, usize)> {
    sections
        .iter()
        .map(|s| (s.level, s.title.clone(), s.start_line, s.end_line))
        .collect()
}

#[test]
fn corpus_sections_match_exactly() {
    let dir = corpus().join("markdown");
    let mut docs = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".md") {
            continue;
        }
        docs += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        let stem = name.trim_end_matches(".md");
        let want = reference(&dir.join(format!("{stem}.sections.json")));
        let got = ours(&markdown::sections(&text));
        if got != want {
            failures.push(format!("{name}:\n  want {want:?}\n  got  {got:?}"));
        }
        let strict = dir.join(format!("{stem}.sections.strict.json"));
        if strict.exists() {
            let want = reference(&strict);
            let got = ours(&markdown::sections_strict(&text));
            if got != want {
                failures.push(format!("{name} (strict):\n  want {want:?}\n  got  {got:?}"));
            }
        }
    }
    assert!(docs >= 28, "corpus has {docs} documents");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
