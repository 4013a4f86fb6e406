use super::*;

fn ol(name: &str, text: &str) -> FileOutline {
    outline(
        &Source::from_bytes(name, text.as_bytes().to_vec()),
        None,
        Encoding::O200kBase,
    )
}

fn names(o: &FileOutline) -> Vec<(usize, &str, &str)> {
    o.items
        .iter()
        .map(|i| (i.depth, i.kind, i.name.as_str()))
        .collect()
}

#[test]
fn one_function() {
    let o = ol("a.rs", "fn main() {}\n");
    assert_eq!(names(&o), vec![(0, "fn", "main")]);
    assert_eq!(o.items[0].signature, "fn main()");
}

#[test]
fn which_commands_read_one_file() {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(single_file_operand(&v(&["cat", "a.rs"])), Some("a.rs"));
    assert_eq!(
        single_file_operand(&v(&["/bin/cat", "-n", "a.rs"])),
        Some("a.rs")
    );
    assert_eq!(
        single_file_operand(&v(&["head", "-n", "50", "a.rs"])),
        Some("a.rs")
    );
    assert_eq!(
        single_file_operand(&v(&["tail", "-n100", "a.rs"])),
        Some("a.rs")
    );
    assert_eq!(
        single_file_operand(&v(&["sed", "-n", "1,200p", "a.rs"])),
        Some("a.rs")
    );
    assert_eq!(
        single_file_operand(&v(&["sed", "-n", "-e", "5p", "a.rs"])),
        Some("a.rs")
    );
    // Edits, several files, other programs: no.
    assert_eq!(
        single_file_operand(&v(&["sed", "-i", "s/a/b/", "a.rs"])),
        None
    );
    assert_eq!(single_file_operand(&v(&["sed", "s/a/b/", "a.rs"])), None);
    assert_eq!(single_file_operand(&v(&["cat", "a.rs", "b.rs"])), None);
    assert_eq!(single_file_operand(&v(&["grep", "x", "a.rs"])), None);
    assert_eq!(single_file_operand(&v(&["cat"])), None);
    assert_eq!(single_file_operand(&[]), None);
}

#[test]
fn signatures_and_docs_are_compact() {
    assert_eq!(
        compact("pub fn f(\n    a: u32,\n    b: u8,\n) -> X {"),
        "pub fn f(a: u32, b: u8) -> X"
    );
    assert_eq!(compact("def f(x):"), "def f(x)");
    assert_eq!(
        doc_summary("Returns the thing. More words."),
        "Returns the thing"
    );
    let long = "word ".repeat(30);
    let d = doc_summary(&long);
    assert!(d.ends_with('…') && d.chars().count() <= DOC_MAX + 1, "{d}");
    assert_eq!(cut("héllo wörld", 5), "héllo…");
}

/// The one-pass range counts equal direct counts for every definition of the corpus's real
/// files (and of a file with odd whitespace).
#[test]
fn range_counts_are_exact() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/tokens/files");
    let mut texts: Vec<(String, String)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| Lang::from_path(p).is_some())
                .filter_map(|p| Some((p.display().to_string(), std::fs::read_to_string(&p).ok()?)))
                .collect()
        })
        .unwrap_or_default();
    texts.push((
        "odd.rs".into(),
        "fn a() {}\n  \n\t\n}\n/// doc\n  fn b() {}   \n\n\n   fn c() { \"x\" }\n".into(),
    ));
    let mut checked = 0;
    for (name, text) in &texts {
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let o = ol_enc(name, text, enc);
            assert_eq!(o.tokens, enc.count(text));
            for it in &o.items {
                assert_eq!(
                    it.tokens,
                    enc.count(&text[it.start..it.end]),
                    "{name}: {}",
                    it.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 10);
}

fn ol_enc(name: &str, text: &str, enc: Encoding) -> FileOutline {
    outline(
        &Source::from_bytes(name, text.as_bytes().to_vec()),
        None,
        enc,
    )
}
