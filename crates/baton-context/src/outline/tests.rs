use super::def::table;
use super::parse::{SPLIT_PARSE_BYTES, code_items_with, fast_items, split_point};
use super::render::{doc_summary, single_file_operand};
use super::walk::compact;
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
    let dir = corpus_files("range_counts_are_exact");
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
    assert!(
        checked > 10 || !dir.is_dir(),
        "{checked} definitions checked"
    );
}

/// An outline with exact counts.
fn ol_enc(name: &str, text: &str, enc: Encoding) -> FileOutline {
    outline_with(
        &Source::from_bytes(name, text.as_bytes().to_vec()),
        None,
        enc,
        true,
    )
}

/// The estimate stays close to o200k_base on the corpus's real source files: per file, and
/// summed over the definitions of at least 200 tokens (small ones are noisy and cheap anyway).
#[test]
fn estimates_track_exact_counts() {
    let dir = corpus_files("estimates_track_exact_counts");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut report = Vec::new();
    let mut worst: f64 = 0.0;
    let mut checked = 0;
    for p in rd.filter_map(|e| e.ok()).map(|e| e.path()) {
        if Lang::from_path(&p).is_none_or(|l| l == Lang::Markdown) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let o = ol_enc(&p.display().to_string(), &text, Encoding::O200kBase);
        assert!(!o.tokens_estimated, "--exact-tokens counts exactly");
        assert!(ol(&p.display().to_string(), &text).tokens_estimated);
        let est = estimate::Estimator::new(&text);
        let mut rel = |what: String, exact: usize, guess: usize| {
            let r = guess as f64 / exact.max(1) as f64 - 1.0;
            report.push(format!(
                "{what}: exact {exact}, estimate {guess}, {:+.1}%",
                100.0 * r
            ));
            worst = worst.max(r.abs());
            checked += 1;
        };
        rel(p.display().to_string(), o.tokens, est.total);
        let (mut e, mut g) = (0, 0);
        let mut items_err = Vec::new();
        for it in o.items.iter().filter(|i| i.tokens >= 200) {
            e += it.tokens;
            g += est.count(it.start, it.end);
            items_err.push((est.count(it.start, it.end) as f64 / it.tokens as f64 - 1.0).abs());
        }
        if e > 0 {
            items_err.sort_by(f64::total_cmp);
            rel(
                format!(
                    "{}: items >= 200 tokens (|error| p50 {:.1}%, p90 {:.1}%)",
                    p.display(),
                    100.0 * items_err[items_err.len() / 2],
                    100.0 * items_err[items_err.len() * 9 / 10]
                ),
                e,
                g,
            );
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(checked >= 6, "{}", report.join("\n"));
    assert!(worst <= 0.10, "{}", report.join("\n"));
}

/// Items as compared between the fast and the whole parse: everything the outline shows.
fn fingerprint(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|i| {
            format!(
                "{} {} {} {} {} {}-{} {}..{} {:?} {:?} {}",
                i.depth,
                i.kind,
                i.scope,
                i.name,
                i.signature,
                i.start_line,
                i.end_line,
                i.start,
                i.end,
                i.parent,
                i.doc,
                i.brief
            )
        })
        .collect()
}

/// Skipped Rust bodies and the two-thread split give exactly the items of one whole parse:
/// on the corpus's real files, on all of them concatenated past the split size, and on
/// braces hidden in literals and comments.
#[test]
fn fast_parse_equals_whole_parse() {
    let dir = corpus_files("fast_parse_equals_whole_parse");
    let mut texts: Vec<(Lang, String)> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter_map(|p| {
                    let l = Lang::from_path(&p).filter(|l| *l != Lang::Markdown)?;
                    Some((l, std::fs::read_to_string(&p).ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    let tricky = r####"
/// Doc.
fn braces_in_literals() -> char {
    let a = "}}}";
    let b = r#"{ " }"#;
    let c = b'}';
    let d: &'static str = "\"{";
    /* } /* { */ } */
    // }
    let e = '}';
    let f = '\'';
    if a.len() > 100000 { '{' } else { e }
}

impl<'a> Thing<'a> {
    pub fn new(x: &'a str) -> Self {
        fn helper() -> u8 { 1 }
        let _ = x.len() + usize::from(helper()) + 1000000 * 2;
        Thing { x }
    }

    const fn n<const N: usize>() -> [u8; N] { [0; N] }
}

fn ptr(f: fn(u32) -> u32) -> u32 { let g: fn(u32) -> u32 = f; g(1) + g(2) + g(3) + g(4) }

fn unbalanced_later() { let s = "}"; }

/// A doc above a macro: it does not reach the function below.
lazy!(a, b);
fn after_macro() {}

macro_rules! m { ($x:expr) => { $x } }
m!(1);
m![2];
m! { 3 }
#[cfg(test)]
m!(4);
fn tail() -> Vec<u8> { fn k() {}
    m!(5);
    vec![6] }

pub struct Fields<T: Into<u8>> where T: Copy {
    a: u8,
    pub b: Vec<(u8, char)>,
}
struct Tuple(u32, String);
pub enum Kinds { A = 1, B { x: u8 }, C(u8) }
union U { a: u32, b: f32 }
const TABLE: [u8; 3] = [1, 2, 3];
static NAMES: &[&str] = &["{", "}"];
const _: () = { impl Fields<u8> { fn inside(&self) {} } };
const BUILT: Options = Options { a: Some(1), b: [0; 4] };
fn union() -> u8 { let union = 1; union }

// plain above
/// Doc of a run: this line is shown.
/// This line's text goes.
///
/// So does this one.
fn documented_run() {}

///
/// *
/// First real line after blanks.
/// cut
fn blank_first() {}

// plain
/// doc after a plain comment
fn mixed() {}

fn sig(
    // a comment in a signature
    // and its second line
    x: u8,
) {}
"####;
    texts.push((Lang::Rust, tricky.to_string()));
    // Past SPLIT_PARSE_BYTES: the split into halves is exercised too.
    let mut big = String::new();
    while big.len() < 2 * SPLIT_PARSE_BYTES {
        for (l, t) in &texts {
            if *l == Lang::Rust {
                big.push_str(t);
                big.push('\n');
            }
        }
    }
    texts.push((Lang::Rust, big));
    let mut compared = 0;
    for (lang, text) in &texts {
        let (fast, fast_notes) = code_items_with(*lang, text, true);
        let (whole, whole_notes) = code_items_with(*lang, text, false);
        assert_eq!(fast_notes, whole_notes);
        assert_eq!(fingerprint(&fast), fingerprint(&whole), "{lang:?}");
        compared += fast.len();
    }
    assert!(compared > 1000, "{compared}");
    // The bodies are really skipped (or the test would compare a parse with itself).
    let holes = rust::skippable_bodies(tricky).expect("balanced");
    assert!(!holes.is_empty());
    assert!(holes.iter().all(|&(s, e)| !tricky[s..e].contains("fn ")));
    let cut = |t: &str| holes.iter().any(|&(s, e)| &tricky[s..e] == t);
    // Whole macro statements, fields and constants' values; not a macro under an attribute.
    for t in ["m!(1);", "m![2];", "m! { 3 }", "m!(5);", "a, b", "4"] {
        assert!(cut(t), "{t} not cut");
    }
    assert!(!cut("m!(4);"));
    for t in [
        "pub b: Vec",
        "B { x: u8 }",
        "a: u32",
        "1, 2, 3",
        "a: Some(1)",
    ] {
        assert!(holes.iter().any(|&(s, e)| tricky[s..e].contains(t)), "{t}");
    }
    assert!(holes.iter().all(|&(s, e)| !tricky[s..e].contains("inside")));
    // A doc run's lines after its first with text; not that line, nor a signature's comments.
    for t in [" This line's text goes.", " So does this one.", " cut"] {
        assert!(cut(t), "{t} not cut");
    }
    for t in ["shown", "First real", "doc after", "second line"] {
        assert!(holes.iter().all(|&(s, e)| !tricky[s..e].contains(t)), "{t}");
    }
    // …and the fast parse is what produced the items above, not the fallback.
    let (grammar, tab) = (Lang::Rust.grammar().unwrap(), table(Lang::Rust).unwrap());
    assert!(fast_items(Lang::Rust, &grammar, &tab, tricky).is_some());
    let big = &texts.last().unwrap().1;
    assert!(split_point(big).is_some());
    assert!(fast_items(Lang::Rust, &grammar, &tab, big).is_some());
}

/// Skipped Python bodies give exactly the items of one whole parse (end lines included) on
/// the corpus's Python files, on tricky strings and comments, and on all of them
/// concatenated past the split size; and the fast parse is really taken.
#[test]
fn python_fast_parse_equals_whole_parse() {
    let dir = corpus_files("python_fast_parse_equals_whole_parse");
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "py"))
                .filter_map(|p| std::fs::read_to_string(&p).ok())
                .collect()
        })
        .unwrap_or_default();
    let corpus = dir.is_dir();
    assert!(!corpus || texts.len() >= 2, "corpus Python files missing");
    let tricky = r#"
import os

LIMIT = 10


def documented(a, b='''
def not_a_def():
'''):
    """First doc line.

    def inside_docstring(): pass
    """
    x = a + b  # def in a comment
    s = """
def in_a_string():
    pass
"""
# a comment at column 0 inside the body
    return x + len(s) + len("def, class")


async def runner(items):
    for it in items:
        if it:
            yield it
        else:
            continue
    # trailing comment


class Holder:
    """Holds."""

    @property
    def value(self):
        if self._v is None:
            self._v = compute(1, 2, 3, [
                4, 5,
            ])
        return self._v

    def outer(self):
        x = 1

        def inner():
            return x + 1000000 + 2000000 + 3000000

        return inner


def continued(a, \
              b):
    total = a + \
        b
    return total * 1000000 + 2000000 + 3000000


def last():
    return 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12"#;
    texts.push(tricky.to_string());
    let mut big = String::new();
    while big.len() < 8 * SPLIT_PARSE_BYTES {
        for t in texts.clone() {
            big.push_str(&t);
            big.push_str("\n\n");
        }
    }
    texts.push(big);
    let (grammar, tab) = (
        Lang::Python.grammar().unwrap(),
        table(Lang::Python).unwrap(),
    );
    let mut compared = 0;
    for text in &texts {
        let (fast, fast_notes) = code_items_with(Lang::Python, text, true);
        let (whole, whole_notes) = code_items_with(Lang::Python, text, false);
        assert_eq!(fast_notes, whole_notes);
        assert_eq!(fingerprint(&fast), fingerprint(&whole));
        assert!(!python::skippable_bodies(text).is_empty());
        assert!(fast_items(Lang::Python, &grammar, &tab, text).is_some());
        compared += fast.len();
    }
    assert!(compared > 300, "{compared}");
    let holes = python::skippable_bodies(tricky);
    assert!(
        holes
            .iter()
            .all(|h| !tricky[h.start..h.end].contains("inner"))
    );
    assert!(
        holes
            .iter()
            .any(|h| tricky[h.start..h.end].contains("in_a_string"))
    );
}

/// A wrong guess falls back: unbalanced braces, or a skipped body that breaks the parse.
#[test]
fn fast_parse_falls_back_on_errors() {
    assert!(rust::skippable_bodies("fn a() { \n").is_none());
    assert!(rust::skippable_bodies("fn a() {} }").is_none());
    let text = "fn good() {}\n\nfn broken( {\n  let x = ;\n\nstruct After { a: u32 }\n";
    let (fast, notes) = code_items_with(Lang::Rust, text, true);
    let (whole, _) = code_items_with(Lang::Rust, text, false);
    assert_eq!(fingerprint(&fast), fingerprint(&whole));
    assert!(
        notes.iter().any(|n| n.contains("syntax errors")),
        "{notes:?}"
    );
}

#[test]
fn estimates_of_ranges_add_up() {
    let text = "fn main() {\n    let fooBar = 12345;\n    x.y(\"s\");\n}\n";
    let e = estimate::Estimator::new(text);
    assert!(e.total > 10 && e.total < text.len(), "{}", e.total);
    assert_eq!(e.count(0, text.len()), e.total);
    // A line break starts a token (the next line's indentation).
    let mid = text.find('\n').unwrap_or(0);
    // Cut at a token start: the halves add up.
    assert_eq!(e.count(0, mid) + e.count(mid, text.len()), e.total);
    assert_eq!(e.count(5, 5), 0);
    assert_eq!(e.count(3, text.len() + 1), 0);
    assert_eq!(estimate::Estimator::new("").total, 0);
    assert_eq!(estimate::Estimator::new("日本語").total, 3);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// Rust-ish text: fragments that open and close bodies, strings, chars, lifetimes and
    /// comments in any order (most of it is not valid Rust, which is the point).
    fn rustish() -> impl Strategy<Value = String> {
        let frag = prop::sample::select(vec![
            "fn f() {",
            "fn g(x: u8) -> u8 {",
            "}",
            "{",
            "let a = 1;",
            "\"}\"",
            "'{'",
            "'a",
            "r#\"{\"#",
            "/* { */",
            "// }\n",
            "\n",
            "\n\n",
            "impl X {",
            "struct S;",
            "b'}'",
            "x.len() + 1000000 * 2 + y.z();",
            "'\\''",
            "é",
            "\"\\\"\"",
            "const _: () = {",
        ]);
        prop::collection::vec(frag, 0..40).prop_map(|v| v.concat())
    }

    /// Valid Rust: functions (some nested, some in impls) whose bodies hold statements with
    /// braces and quotes in strings, chars, raw strings, lifetimes and comments.
    fn valid_rust() -> impl Strategy<Value = String> {
        let stmt = prop::sample::select(vec![
            "let a = \"}\";",
            "let c = '{';",
            "/* } { /* } */ */",
            "// {\n",
            "let r = r#\"}\"#;",
            "fn inner() -> u8 { 1 }",
            "struct S;",
            "let l: &'static str = \"{\";",
            "x();",
            "{ let b = 2; }",
            "let q = '\\'';",
            "let p = ['\\'','}'];",
            "let e = \"\\\"{\";",
            "let v = b'}';",
            "if a.len() > 100000 { y(); } else { z(); }",
            "let é = \"ü{\";",
        ]);
        let body = prop::collection::vec(stmt, 0..8).prop_map(|v| v.join("\n    "));
        // Items between the functions: macro statements, fields, constants' values.
        let item = prop::sample::select(vec![
            "",
            "m!(1);",
            "/// Doc.\nm![2];",
            "#[cfg(test)]\nm!(3);",
            "m! {\n    4\n}",
            "m!(x).y();",
            "struct F<T> where T: Copy {\n    a: T,\n}",
            "pub enum E { A = 1, B { x: u8 } }",
            "struct P(u8);",
            "const K: [u8; 2] = [1, 2];",
            "static S: &str = \"}\";",
            "const _: () = { fn hidden() {} };",
            "// plain\n/// Doc a.\n/// Doc b.",
            "///\n/// Doc c.\n/// more\n// plain",
        ]);
        prop::collection::vec((body, any::<bool>(), item), 1..8).prop_map(|fns| {
            let mut out = String::new();
            for (i, (b, in_impl, item)) in fns.iter().enumerate() {
                out.push_str(item);
                out.push('\n');
                let f = format!("fn f{i}<'a>(x: &'a str) -> usize {{\n    {b}\n    x.len()\n}}\n");
                if *in_impl {
                    out.push_str(&format!("impl T{i} {{\n{f}}}\n\n"));
                } else {
                    out.push_str(&format!("/// Doc {i}.\n{f}\n"));
                }
            }
            out
        })
    }

    /// Python-ish text: definitions, docstrings, strings with quotes and `def` inside,
    /// comments, brackets and continuations at several indentations.
    fn pythonish() -> impl Strategy<Value = String> {
        let frag = prop::sample::select(vec![
            "def f(a, b):\n",
            "async def g():\n",
            "class C:\n",
            "@deco\n",
            "    ",
            "        ",
            "\t",
            "\"\"\"doc\n\"\"\"\n",
            "\"\"\"def x(): pass\"\"\"\n",
            "\'\'\'\n  def y():\n\'\'\'\n",
            "return a + b + 1000000 + 2000000\n",
            "x = (1,\n",
            ")\n",
            "if a:\n",
            "else:\n",
            "# def z():\n",
            "s = \"\\\"#\"\n",
            "t = \'(\'\n",
            "y = 1 + \\\n",
            "pass\n",
            "\n",
            "é = \"ü\"\n",
            "for i in range(10):\n",
        ]);
        prop::collection::vec(frag, 0..40).prop_map(|v| v.concat())
    }

    /// Valid Python: functions (some in classes, some holding a nested def) whose bodies
    /// hold docstrings, compound statements, strings and comments with `def` and brackets.
    fn valid_python() -> impl Strategy<Value = String> {
        let stmt = prop::sample::select(vec![
            "x = \"def a(): (\"",
            "y = \'\'\'\ndef b():\n    pass\n\'\'\'",
            "# def c():",
            "if x:\n        z = [1,\n  2]\n    else:\n        z = 3",
            "for i in range(10):\n        total = total + i * 1000000",
            "w = (1 +\n         2)",
            "v = 1 + \\\n        2",
            "def nested():\n        return 1",
            "try:\n        f()\n    except E:\n        raise",
            "return x",
            "s = \"é{ü\"",
        ]);
        let body = (any::<bool>(), prop::collection::vec(stmt, 1..6)).prop_map(|(doc, v)| {
            let d = if doc {
                "\"\"\"Doc line.\n\n    More.\n    \"\"\"\n    "
            } else {
                ""
            };
            format!("{d}{}", v.join("\n    "))
        });
        prop::collection::vec((body, any::<bool>()), 1..6).prop_map(|fns| {
            let mut out = String::new();
            for (i, (b, in_class)) in fns.iter().enumerate() {
                if *in_class {
                    let b = b.replace('\n', "\n    ");
                    out.push_str(&format!(
                        "class C{i}:\n    def m{i}(self, x):\n        {b}\n\n"
                    ));
                } else {
                    out.push_str(&format!("def f{i}(x):\n    {b}\n\n\n"));
                }
            }
            out
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Whatever the input, nothing panics, and where the whole parse finds no syntax
        /// error the fast parse gives its items and notes (or falls back). A syntax error
        /// inside a skipped body (`fn f() {'a}`) the fast parse does not see: it cannot hide a
        /// listed definition (a skipped body holds none), and tree-sitter's recovery from it
        /// can end the function early, so there the two may differ.
        #[test]
        fn fast_equals_whole_on_any_rustish_text(text in rustish()) {
            let (fast, fast_notes) = code_items_with(Lang::Rust, &text, true);
            let (whole, whole_notes) = code_items_with(Lang::Rust, &text, false);
            prop_assert!(fast_notes.is_empty() || fast_notes == whole_notes, "{fast_notes:?}");
            if whole_notes.is_empty() {
                prop_assert!(fast_notes.is_empty());
                prop_assert_eq!(fingerprint(&fast), fingerprint(&whole));
            }
            if let Some(holes) = rust::skippable_bodies(&text) {
                let mut last = 0;
                for (s, e) in holes {
                    prop_assert!(last <= s && s < e && e <= text.len());
                    prop_assert!(text.is_char_boundary(s) && text.is_char_boundary(e));
                    last = e;
                }
            }
        }

        /// Valid Rust with braces hidden in literals and comments: the fast parse is taken
        /// (the light lexer is not fooled) and gives the whole parse's items.
        #[test]
        fn fast_parse_is_taken_on_valid_rust(text in valid_rust()) {
            let (whole, notes) = code_items_with(Lang::Rust, &text, false);
            prop_assert!(notes.is_empty(), "{:?}\n{}", notes, text);
            let (grammar, tab) = (Lang::Rust.grammar().unwrap(), table(Lang::Rust).unwrap());
            let holes = rust::skippable_bodies(&text);
            prop_assert!(holes.is_some(), "braces do not balance in:\n{}", text);
            // Without a body worth skipping (or a split) there is no fast parse to take.
            if holes.is_some_and(|h| !h.is_empty()) {
                let fast = fast_items(Lang::Rust, &grammar, &tab, &text);
                prop_assert!(fast.is_some(), "fell back on:\n{}", text);
                prop_assert_eq!(fingerprint(&fast.unwrap_or_default()), fingerprint(&whole));
            }
        }

        /// Python-ish text (strings, comments, brackets, indentation in any order): the
        /// scanner never panics, its holes are ordered and on char boundaries, and on text
        /// that parses the fast parse gives the whole parse's items.
        #[test]
        fn python_fast_equals_whole_on_any_pythonish_text(text in pythonish()) {
            let holes = python::skippable_bodies(&text);
            let mut last = 0;
            for h in &holes {
                prop_assert!(last <= h.start && h.start < h.end && h.end <= text.len());
                prop_assert!(text.is_char_boundary(h.start) && text.is_char_boundary(h.end));
                prop_assert!(h.kept_line <= h.start && h.real_end <= h.end);
                last = h.end;
            }
            // A syntax error inside a skipped body goes unseen (as in Rust), so the two
            // parses are compared when the whole one has none.
            let (whole, whole_notes) = code_items_with(Lang::Python, &text, false);
            if whole_notes.is_empty() {
                let (fast, fast_notes) = code_items_with(Lang::Python, &text, true);
                prop_assert!(fast_notes.is_empty());
                prop_assert_eq!(fingerprint(&fast), fingerprint(&whole), "{}", text);
            }
        }

        /// Valid Python: the fast parse is taken when something is skipped, and gives the
        /// whole parse's items.
        #[test]
        fn python_fast_parse_is_taken_on_valid_python(text in valid_python()) {
            let (whole, notes) = code_items_with(Lang::Python, &text, false);
            prop_assert!(notes.is_empty(), "{:?}\n{}", notes, text);
            let (grammar, tab) = (Lang::Python.grammar().unwrap(), table(Lang::Python).unwrap());
            if !python::skippable_bodies(&text).is_empty() {
                let fast = fast_items(Lang::Python, &grammar, &tab, &text);
                prop_assert!(fast.is_some(), "fell back on:\n{}", text);
                prop_assert_eq!(fingerprint(&fast.unwrap_or_default()), fingerprint(&whole));
            }
        }

        /// Any text at all: the Python scanner never panics.
        #[test]
        fn python_scanner_never_panics(text in "\\PC{0,300}") {
            let _ = python::skippable_bodies(&text);
        }

        /// Estimates of any range of any text: no panic, never more than the whole plus one.
        #[test]
        fn estimates_never_panic(text in "\\PC{0,200}", a in 0usize..300, b in 0usize..300) {
            let e = estimate::Estimator::new(&text);
            prop_assert!(e.count(a, b) <= e.total + 1);
            prop_assert!(e.total <= text.len());
        }
    }
}

/// The shared corpus's real source files, found through `BATON_CORPUS`. Without it the path
/// does not exist, the corpus part of a test is empty (its synthetic cases still run), and
/// the skip is said.
fn corpus_files(test: &str) -> std::path::PathBuf {
    match std::env::var_os("BATON_CORPUS") {
        Some(d) if std::path::Path::new(&d).is_dir() => {
            std::path::Path::new(&d).join("tokens/files")
        }
        _ => {
            eprintln!(
                "skipped: {test} (corpus part): BATON_CORPUS not set (the shared test corpus)"
            );
            std::path::PathBuf::from("/nonexistent/baton-corpus")
        }
    }
}
