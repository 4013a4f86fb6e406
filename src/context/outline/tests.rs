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
fn placeholder() {
    let o = ol("a.rs", "fn main() {}\n");
    assert_eq!(names(&o), vec![(0, "fn", "main")]);
}
