//! `baton outline` and `baton extract --symbol`: the real binary on real files. The reference
//! check runs Universal Ctags on the corpus's real source files and on fixtures written here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Proj, corpus_or_skip};
use serde_json::Value;

/// Source files of the corpus (`<corpus>/tokens/files`), by extension.
fn corpus_sources(corpus: &Path) -> Vec<PathBuf> {
    let dir = corpus.join("tokens/files");
    let rd = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("rs" | "py" | "ts" | "tsx" | "js" | "go")
            )
        })
        .collect();
    v.sort();
    v
}

fn ctags_ok() -> bool {
    Command::new("ctags")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("Universal Ctags"))
}

/// ctags' tags of `file`: (name, kind, line).
fn ctags(file: &Path) -> Vec<(String, String, usize)> {
    let out = Command::new("ctags")
        .args([
            "--output-format=json",
            "--fields=+nKe",
            // ctags leaves .tsx unmapped; its TypeScript parser reads TSX's definitions fine.
            "--map-TypeScript=+.tsx",
            "-f",
            "-",
        ])
        .arg(file)
        .output()
        .expect("run ctags");
    assert!(out.status.success(), "ctags failed on {}", file.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["_type"] == "tag")
        .map(|v| {
            (
                v["name"].as_str().unwrap_or("").to_string(),
                v["kind"].as_str().unwrap_or("").to_string(),
                v["line"].as_u64().unwrap_or(0) as usize,
            )
        })
        .collect()
}

/// ctags kinds that must appear in the outline, and the outline kinds each may map to.
fn expected_kinds(ext: &str, ctags_kind: &str) -> Option<&'static [&'static str]> {
    Some(match (ext, ctags_kind) {
        ("rs", "function" | "method") => &["fn", "method"],
        ("rs", "struct") => &["struct"],
        ("rs", "enum") => &["enum"],
        ("rs", "interface") => &["trait"],
        ("py", "function" | "member") => &["def", "method"],
        ("py", "class") => &["class"],
        ("ts" | "tsx" | "js", "function") => &["function"],
        // ctags calls `export default function f` a method; the name and line must still match.
        ("ts" | "tsx" | "js", "method") => &["method", "function"],
        ("ts" | "tsx" | "js", "class") => &["class"],
        ("ts" | "tsx" | "js", "interface") => &["interface"],
        ("ts" | "tsx" | "js", "enum") => &["enum"],
        ("go", "func") => &["func", "method"],
        ("go", "struct") => &["struct"],
        ("go", "interface") => &["interface"],
        ("go", "methodSpec") => &["method"],
        _ => return None,
    })
}

fn outline_json(p: &Proj, file: &Path) -> Value {
    let f = file.to_string_lossy();
    let v = p.json(&["outline", &f]);
    v["files"][0].clone()
}

/// Every definition ctags reports is in the outline, with the same line. Returns how many
/// were checked.
fn check_against_ctags(p: &Proj, file: &Path) -> usize {
    let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
    let o = outline_json(p, file);
    let items = o["items"].as_array().cloned().unwrap_or_default();
    let have: Vec<(String, String, usize)> = items
        .iter()
        .map(|i| {
            (
                i["name"].as_str().unwrap_or("").to_string(),
                i["kind"].as_str().unwrap_or("").to_string(),
                i["start_line"].as_u64().unwrap_or(0) as usize,
            )
        })
        .collect();
    let mut missing = Vec::new();
    let mut checked = 0;
    for (name, kind, line) in ctags(file) {
        let Some(kinds) = expected_kinds(ext, &kind) else {
            continue;
        };
        checked += 1;
        let found = have
            .iter()
            .any(|(n, k, l)| n == &name && *l == line && kinds.contains(&k.as_str()));
        if !found {
            let near: Vec<_> = have.iter().filter(|(n, _, _)| n == &name).collect();
            missing.push(format!("{kind} {name} line {line} (outline has {near:?})"));
        }
    }
    assert!(
        missing.is_empty(),
        "{}: {} of {checked} ctags definitions missing from the outline:\n{}",
        file.display(),
        missing.len(),
        missing.join("\n")
    );
    checked
}

#[test]
fn every_ctags_definition_of_the_corpus_is_in_the_outline() {
    let corpus = corpus_or_skip!(every_ctags_definition_of_the_corpus_is_in_the_outline);
    if !ctags_ok() {
        eprintln!("SKIPPED: Universal Ctags is not installed (apt-get install universal-ctags)");
        return;
    }
    let files = corpus_sources(&corpus);
    assert!(
        files.len() >= 4,
        "corpus source files not found under {}/tokens/files",
        corpus.display()
    );
    let p = Proj::new();
    let mut per_file = BTreeMap::new();
    for f in &files {
        per_file.insert(
            f.file_name().unwrap().to_owned(),
            check_against_ctags(&p, f),
        );
    }
    let total: usize = per_file.values().sum();
    // The corpus has hundreds of definitions; a broken ctags run would check none.
    assert!(
        total > 1000,
        "only {total} definitions checked: {per_file:?}"
    );
}

const GO: &str = r#"// Package shapes has shapes.
package shapes

import "fmt"

// Pi is close enough.
const Pi = 3.14

const (
	A = iota
	B
)

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Rect is a rectangle.
type Rect struct {
	W, H float64
}

type (
	Celsius float64
	Pair[T any] struct{ a, b T }
)

// Area of the rectangle.
func (r *Rect) Area() float64 {
	inner := func() float64 { return r.W * r.H }
	return inner()
}

func (p Pair[T]) First() T { return p.a }

// New makes a Rect.
func New(w, h float64) *Rect {
	fmt.Println("new")
	return &Rect{W: w, H: h}
}
"#;

const JS: &str = r#"/** Greets people. */
export class Greeter {
  constructor(name) { this.name = name; }
  /** Says hello. */
  greet() {
    function inner() { return 1; }
    return `hi ${this.name}` + inner();
  }
  static create() { return new Greeter("x"); }
}

export function helper(a, b) {
  return a + b;
}

export const arrow = (x) => x * 2;
const LIMIT = 10;

function* gen() { yield 1; }
"#;

const TS: &str = r#"import { x } from "./x";

/** A point. */
export interface Point {
  x: number;
  y: number;
}

export enum Color { Red, Green }

export type Id = string | number;

@Component({ selector: "app" })
export class Widget<T> implements Point {
  x = 0;
  y = 0;
  /** Renders it. */
  @Input()
  render(arg: T): string {
    return String(arg);
  }
  private async load(): Promise<void> {}
}

export abstract class Base {
  abstract run(): void;
}

namespace Util {
  export function clamp(v: number): number { return v; }
}

export default function main(): void {}
"#;

const PY: &str = r#"'''Module docstring.'''
import functools

MAX_SIZE = 10
lower_case = 3


def plain(a, b=2):
    """Adds things.

    More text.
    """
    def nested(c):
        return c
    return nested(a) + b


class Outer(Base):
    """An outer class."""

    class Inner:
        def method(self):
            pass

    @property
    def value(self) -> int:
        return 1

    @functools.lru_cache(maxsize=None)
    @staticmethod
    async def fetch(
        url: str,
        retries: int = 3,
    ) -> bytes:
        '''Fetch a url.'''
        return b""
"#;

const RS: &str = r#"//! Crate docs.

use std::fmt;

/// A thing.
/// With more docs.
#[derive(Debug, Clone)]
pub struct Thing<T> {
    value: T,
}

/// Kinds.
pub enum Kind {
    A,
    B(u32),
}

pub const LIMIT: usize = 10;
static NAME: &str = "x";
pub type Alias = Vec<u8>;

pub trait Shape {
    /// The area.
    fn area(&self) -> f64;
    fn name(&self) -> String {
        "shape".into()
    }
}

impl<T: Clone> Thing<T> {
    /// Makes one.
    pub fn new(value: T) -> Self {
        fn helper() -> u8 {
            1
        }
        let _ = helper();
        Thing { value }
    }

    #[inline]
    pub(crate) fn get(
        &self,
    ) -> &T {
        &self.value
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kind")
    }
}

macro_rules! make {
    ($x:expr) => { fn not_an_item() {} };
}

mod inner {
    pub fn deep() {}
}
"#;

fn write(p: &Proj, name: &str, text: &str) -> PathBuf {
    let f = p.path().join(name);
    std::fs::write(&f, text).unwrap();
    f
}

/// (depth, kind, name, start_line) of each item.
fn items(o: &Value) -> Vec<(u64, String, String, u64)> {
    o["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["depth"].as_u64().unwrap(),
                i["kind"].as_str().unwrap().to_string(),
                i["name"].as_str().unwrap().to_string(),
                i["start_line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn item<'a>(o: &'a Value, name: &str) -> &'a Value {
    o["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("no item {name} in {o:#}"))
}

fn tuple(d: u64, k: &str, n: &str, l: u64) -> (u64, String, String, u64) {
    (d, k.to_string(), n.to_string(), l)
}

#[test]
fn rust_items_nesting_docs_and_attributes() {
    let p = Proj::new();
    let f = write(&p, "lib.rs", RS);
    let o = outline_json(&p, &f);
    assert_eq!(o["language"], "rust");
    assert_eq!(
        items(&o),
        vec![
            tuple(0, "struct", "Thing", 8),
            tuple(0, "enum", "Kind", 13),
            tuple(0, "const", "LIMIT", 18),
            tuple(0, "static", "NAME", 19),
            tuple(0, "type", "Alias", 20),
            tuple(0, "trait", "Shape", 22),
            tuple(1, "method", "area", 24),
            tuple(1, "method", "name", 25),
            tuple(0, "impl", "Thing", 30),
            tuple(1, "method", "new", 32),
            tuple(2, "fn", "helper", 33),
            tuple(1, "method", "get", 41),
            tuple(0, "impl", "Kind", 48),
            tuple(1, "method", "fmt", 49),
            tuple(0, "macro", "make", 54),
            tuple(0, "mod", "inner", 58),
            tuple(1, "fn", "deep", 59),
        ],
        "macro bodies hold no items"
    );
    let thing = item(&o, "Thing");
    assert_eq!(thing["doc"], "A thing.");
    assert_eq!(
        thing["full_start_line"], 5,
        "docs and #[derive] belong to it"
    );
    assert_eq!(thing["signature"], "pub struct Thing<T>");
    assert_eq!(
        item(&o, "get")["signature"],
        "pub(crate) fn get(&self) -> &T"
    );
    assert_eq!(item(&o, "get")["full_start_line"], 40);
    assert_eq!(item(&o, "LIMIT")["signature"], "pub const LIMIT: usize");
    assert_eq!(item(&o, "area")["doc"], "The area.");
    assert_eq!(item(&o, "helper")["scope"], "Thing::new");
    check_against_ctags_if_present(&p, &f);

    let human = p.ok(&["outline", "lib.rs"]);
    assert!(human.starts_with("lib.rs  (rust, 60 lines, "), "{human}");
    assert!(
        human.contains("\n8-10 pub struct Thing<T> ["),
        "header, range, signature: {human}"
    );
    assert!(human.contains("  // A thing\n"), "{human}");
    assert!(human.contains("\n    33-35 fn helper() -> u8 ["), "{human}");
    // Trait impl members by name and line on the impl's line.
    assert!(
        human.contains("impl fmt::Display for Kind [") && human.contains("]: fmt:49\n"),
        "{human}"
    );
}

fn check_against_ctags_if_present(p: &Proj, f: &Path) {
    if ctags_ok() {
        let n = check_against_ctags(p, f);
        assert!(n > 0, "ctags found nothing in {}", f.display());
    } else {
        eprintln!("SKIPPED ctags comparison: Universal Ctags is not installed");
    }
}

#[test]
fn python_decorators_docstrings_nesting() {
    let p = Proj::new();
    let f = write(&p, "m.py", PY);
    let o = outline_json(&p, &f);
    assert_eq!(
        items(&o),
        vec![
            tuple(0, "const", "MAX_SIZE", 4),
            tuple(0, "def", "plain", 8),
            tuple(1, "def", "nested", 13),
            tuple(0, "class", "Outer", 18),
            tuple(1, "class", "Inner", 21),
            tuple(2, "method", "method", 22),
            tuple(1, "method", "value", 26),
            tuple(1, "method", "fetch", 31),
        ]
    );
    assert_eq!(item(&o, "plain")["doc"], "Adds things.");
    assert_eq!(item(&o, "fetch")["doc"], "Fetch a url.");
    assert_eq!(
        item(&o, "fetch")["full_start_line"],
        29,
        "decorators included"
    );
    assert_eq!(
        item(&o, "fetch")["signature"],
        "async def fetch(url: str, retries: int = 3) -> bytes"
    );
    assert_eq!(item(&o, "Outer")["signature"], "class Outer(Base)");
    check_against_ctags_if_present(&p, &f);
}

#[test]
fn typescript_javascript_and_go() {
    let p = Proj::new();
    let f = write(&p, "w.ts", TS);
    let o = outline_json(&p, &f);
    assert_eq!(
        items(&o),
        vec![
            tuple(0, "interface", "Point", 4),
            tuple(0, "enum", "Color", 9),
            tuple(0, "type", "Id", 11),
            tuple(0, "class", "Widget", 14),
            tuple(1, "method", "render", 19),
            tuple(1, "method", "load", 22),
            tuple(0, "class", "Base", 25),
            tuple(1, "method", "run", 26),
            tuple(0, "namespace", "Util", 29),
            tuple(1, "function", "clamp", 30),
            tuple(0, "function", "main", 33),
        ]
    );
    assert_eq!(item(&o, "Point")["doc"], "A point.");
    assert_eq!(item(&o, "render")["doc"], "Renders it.");
    assert_eq!(
        item(&o, "Widget")["full_start_line"],
        13,
        "decorator included"
    );
    assert_eq!(
        item(&o, "Widget")["signature"],
        "export class Widget<T> implements Point"
    );
    check_against_ctags_if_present(&p, &f);

    let f = write(&p, "g.js", JS);
    let o = outline_json(&p, &f);
    assert_eq!(
        items(&o),
        vec![
            tuple(0, "class", "Greeter", 2),
            tuple(1, "method", "constructor", 3),
            tuple(1, "method", "greet", 5),
            tuple(2, "function", "inner", 6),
            tuple(1, "method", "create", 9),
            tuple(0, "function", "helper", 12),
            tuple(0, "function", "arrow", 16),
            tuple(0, "const", "LIMIT", 17),
            tuple(0, "function", "gen", 19),
        ]
    );
    assert_eq!(item(&o, "Greeter")["doc"], "Greets people.");
    assert_eq!(
        item(&o, "arrow")["signature"],
        "export const arrow = (x) =>"
    );
    assert_eq!(item(&o, "LIMIT")["signature"], "const LIMIT");
    check_against_ctags_if_present(&p, &f);

    let f = write(&p, "shapes.go", GO);
    let o = outline_json(&p, &f);
    assert_eq!(
        items(&o),
        vec![
            tuple(0, "const", "Pi", 7),
            tuple(0, "const", "A", 10),
            tuple(0, "const", "B", 11),
            tuple(0, "interface", "Shape", 15),
            tuple(1, "method", "Area", 16),
            tuple(0, "struct", "Rect", 20),
            tuple(0, "type", "Celsius", 25),
            tuple(0, "struct", "Pair", 26),
            tuple(0, "method", "Area", 30),
            tuple(0, "method", "First", 35),
            tuple(0, "func", "New", 38),
        ]
    );
    // The interface's method spec (ctags' methodSpec), then the struct's method.
    let areas: Vec<&Value> = o["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["name"] == "Area")
        .collect();
    assert_eq!(areas[0]["signature"], "Area() float64");
    assert_eq!(areas[1]["scope"], "Rect");
    assert_eq!(areas[1]["doc"], "Area of the rectangle.");
    assert_eq!(item(&o, "Rect")["signature"], "type Rect struct");
    assert_eq!(item(&o, "Rect")["full_start_line"], 19);
    check_against_ctags_if_present(&p, &f);
}

#[test]
fn markdown_gets_its_heading_tree() {
    let p = Proj::new();
    write(
        &p,
        "d.md",
        "# Title\nintro\n## Part A\n```\n# not a heading\n```\n## Part B\ntext\n",
    );
    let o = p.json(&["outline", "d.md"]);
    let f = &o["files"][0];
    assert_eq!(f["language"], "markdown");
    assert_eq!(
        items(f),
        vec![
            tuple(0, "heading", "Title", 1),
            tuple(1, "heading", "Part A", 3),
            tuple(1, "heading", "Part B", 7),
        ]
    );
    let human = p.ok(&["outline", "d.md"]);
    assert!(human.contains("\n  3-6 ## Part A ["), "{human}");
}

#[test]
fn syntax_errors_give_a_partial_outline_and_a_note() {
    let p = Proj::new();
    write(
        &p,
        "bad.rs",
        "fn good() {}\n\nfn broken( {\n  let x = ;\n\nstruct After { a: u32 }\n\nfn tail() {}\n",
    );
    let o = p.json(&["outline", "bad.rs"]);
    let f = &o["files"][0];
    let notes = f["notes"].to_string();
    assert!(notes.contains("syntax errors (first at line 3)"), "{notes}");
    let names: Vec<String> = items(f).into_iter().map(|i| i.2).collect();
    assert!(names.contains(&"good".to_string()), "{names:?}");
    assert!(names.contains(&"tail".to_string()), "{names:?}");
    let human = p.ok(&["outline", "bad.rs"]);
    assert!(human.contains("note: syntax errors"), "{human}");

    write(
        &p,
        "bad.py",
        "def ok():\n    pass\n\ndef (:\n\nclass C:\n    def m(self): pass\n",
    );
    let o = p.json(&["outline", "bad.py"]);
    assert!(o["files"][0]["notes"].to_string().contains("syntax errors"));
    let names: Vec<String> = items(&o["files"][0]).into_iter().map(|i| i.2).collect();
    assert!(names.contains(&"ok".to_string()), "{names:?}");
}

#[test]
fn non_utf8_is_replaced_with_a_note_and_other_files_get_their_head() {
    let p = Proj::new();
    std::fs::write(
        p.path().join("latin.py"),
        b"# caf\xe9\ndef f():\n    return '\xe9'\n",
    )
    .unwrap();
    let o = p.json(&["outline", "latin.py"]);
    let f = &o["files"][0];
    assert!(f["notes"].to_string().contains("not valid UTF-8"), "{f}");
    assert_eq!(items(f), vec![tuple(0, "def", "f", 2)]);

    write(&p, "data.csv", "a,b\n1,2\n");
    let human = p.ok(&["outline", "data.csv"]);
    assert!(
        human.contains("no outline for this language (.csv)"),
        "{human}"
    );
    assert!(human.contains("  | a,b\n  | 1,2\n"), "{human}");
    assert!(human.contains("2 lines, 8 bytes"), "{human}");

    std::fs::write(p.path().join("blob.rs"), b"\x00\x01\x02fn x() {}").unwrap();
    let o = p.json(&["outline", "blob.rs"]);
    assert!(o["files"][0]["notes"].to_string().contains("binary"));
    assert_eq!(o["files"][0]["items"].as_array().unwrap().len(), 0);

    let err = p.fails(&["outline", "nope.rs"], 4);
    assert!(err.contains("no such file"), "{err}");
}

#[test]
fn huge_files_are_outlined() {
    let p = Proj::new();
    let mut s = String::new();
    let n = 20_000;
    for i in 0..n {
        s.push_str(&format!(
            "/// Doc {i}.\npub fn f{i}(a: u32) -> u32 {{\n    a + {i}\n}}\n\n"
        ));
    }
    // One enormous line too (minified code).
    s.push_str(&format!(
        "const BIG: &str = \"{}\";\n",
        "x".repeat(2_000_000)
    ));
    assert!(s.len() > 3_000_000);
    write(&p, "huge.rs", &s);
    let o = p.json(&["outline", "huge.rs"]);
    let f = &o["files"][0];
    let its = f["items"].as_array().unwrap();
    assert_eq!(its.len(), n + 1);
    assert_eq!(its[n - 1]["start_line"], (5 * (n - 1) + 2) as u64);
    assert_eq!(its[n]["signature"], "const BIG: &str");
    let human = p.ok(&["outline", "huge.rs"]);
    assert!(
        human.lines().all(|l| l.chars().count() < 400),
        "lines stay short"
    );
}

#[test]
fn deep_nesting_does_not_overflow() {
    let p = Proj::new();
    let depth = 3000;
    let s = format!("{}{}\n", "fn a() {\n".repeat(depth), "}\n".repeat(depth));
    write(&p, "deep.rs", &s);
    let o = p.json(&["outline", "deep.rs"]);
    assert!(!o["files"][0]["items"].as_array().unwrap().is_empty());
}

#[test]
fn a_directory_is_mapped_through_git() {
    let p = Proj::new();
    std::fs::create_dir_all(p.path().join("src/sub")).unwrap();
    write(&p, "src/a.rs", "pub fn a() {}\n");
    write(&p, "src/sub/b.py", "def b():\n    pass\n");
    write(&p, "src/notes.txt", "hello\n");
    write(&p, "src/ignored.rs", "fn hidden() {}\n");
    write(&p, "src/untracked.rs", "fn untracked() {}\n");
    write(&p, ".gitignore", "src/ignored.rs\n");
    let git = |args: &[&str]| {
        let st = Command::new("git")
            .args(args)
            .current_dir(p.path())
            .status()
            .unwrap();
        assert!(st.success());
    };
    git(&[
        "add",
        ".gitignore",
        "src/a.rs",
        "src/sub/b.py",
        "src/notes.txt",
    ]);
    let o = p.json(&["outline", "src"]);
    let files: Vec<&str> = o["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, vec!["src/a.rs", "src/notes.txt", "src/sub/b.py"]);
    let total: u64 = o["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(o["tokens"].as_u64().unwrap(), total);
    let human = p.ok(&["outline", "src"]);
    assert!(human.contains("src/a.rs  (rust, 1 lines, "), "{human}");
    assert!(human.contains("\n1 pub fn a() ["), "{human}");
    assert!(!human.contains("| hello"), "a map shows no heads: {human}");
    assert!(human.contains("total: 3 files"), "{human}");

    let outside = tempfile::tempdir().unwrap();
    let err = Proj::new().fails(&["outline", &outside.path().to_string_lossy()], 2);
    assert!(err.contains("git"), "{err}");
}

#[test]
fn extract_symbol_prints_exactly_the_definition() {
    let p = Proj::new();
    write(&p, "lib.rs", RS);
    write(&p, "m.py", PY);
    write(&p, "shapes.go", GO);
    let out = p.ok(&["extract", "lib.rs", "--symbol", "Thing::get"]);
    assert_eq!(
        out,
        "    #[inline]\n    pub(crate) fn get(\n        &self,\n    ) -> &T {\n        &self.value\n    }\n"
    );
    let out = p.ok(&["extract", "lib.rs", "--symbol", "Thing"]);
    assert!(
        out.starts_with(
            "/// A thing.\n/// With more docs.\n#[derive(Debug, Clone)]\npub struct Thing<T> {"
        ),
        "the struct, not its impl: {out}"
    );
    assert!(out.ends_with("}\n") && !out.contains("impl"), "{out}");
    let out = p.ok(&["extract", "m.py", "--symbol", "Outer.fetch"]);
    assert!(
        out.starts_with(
            "    @functools.lru_cache(maxsize=None)\n    @staticmethod\n    async def fetch("
        ),
        "{out}"
    );
    assert!(out.ends_with("        return b\"\"\n"), "{out}");
    let out = p.ok(&["extract", "shapes.go", "--symbol", "Rect.Area"]);
    assert!(
        out.starts_with("// Area of the rectangle.\nfunc (r *Rect) Area()"),
        "{out}"
    );

    let v = p.json(&[
        "extract",
        "lib.rs",
        "--symbol",
        "helper",
        "--symbol",
        "Shape::area",
    ]);
    assert_eq!(v[0]["start_line"], 33);
    assert_eq!(v[0]["scope"], "Thing::new");
    assert_eq!(
        v[1]["text"],
        "    /// The area.\n    fn area(&self) -> f64;\n"
    );
    assert!(v[1]["tokens"].as_u64().unwrap() > 5);

    // Ambiguous: the same method name in two impls.
    write(
        &p,
        "two.rs",
        "struct A;\nstruct B;\nimpl A { fn go(&self) {} }\nimpl B { fn go(&self) {} }\n",
    );
    let err = p.fails(&["extract", "two.rs", "--symbol", "go"], 2);
    assert!(err.contains("ambiguous"), "{err}");
    assert!(
        err.contains("line 3: method A::go") && err.contains("line 4: method B::go"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
    assert_eq!(
        p.ok(&["extract", "two.rs", "--symbol", "B::go"]),
        "fn go(&self) {}\n",
        "code before it on its line is not part of it"
    );

    let err = p.fails(&["extract", "lib.rs", "--symbol", "Thign"], 4);
    assert!(
        err.contains("nearest names") && err.contains("line 8: Thing"),
        "{err}"
    );
    assert!(err.contains("baton outline lib.rs"), "{err}");

    let err = p.fails(&["extract", "lib.rs", "--symbol", "x", "--section", "y"], 2);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = p.fails(&["extract", "d.txt", "--symbol", "x"], 4);
    assert!(err.contains("no such file"), "{err}");
}

#[test]
fn mask_points_a_huge_cat_at_the_outline() {
    let p = Proj::new();
    let mut s = String::new();
    for i in 0..400 {
        s.push_str(&format!(
            "pub fn function_{i}(x: u32) -> u32 {{\n    x * {i} + 1\n}}\n\n"
        ));
    }
    write(&p, "big.rs", &s);
    write(&p, "big.txt", &s);
    // A whole-file `cat` is answered outline first (tests/it/hooks.rs); --json keeps the
    // summary document, with the hint.
    let first = p.ok(&["mask", "--", "cat", "big.rs"]);
    assert!(first.starts_with("baton: big.rs is") && first.contains("\npub fn function_0("));
    let v: Value = serde_json::from_str(&p.ok(&["--json", "mask", "--", "cat", "big.rs"])).unwrap();
    assert_eq!(v["masked"], true);
    let h = &v["outline_hint"];
    assert_eq!(h["command"], "baton outline big.rs");
    let (ot, ft) = (
        h["outline_tokens"].as_u64().unwrap(),
        h["file_tokens"].as_u64().unwrap(),
    );
    assert!(ot > 0 && ot < ft, "{h}");
    assert_eq!(h["tokens_estimated"], true, "{h}");
    let v: Value =
        serde_json::from_str(&p.ok(&["mask", "--", "sed", "-n", "1,2000p", "big.rs"])).unwrap();
    assert_eq!(v["outline_hint"]["command"], "baton outline big.rs");
    let v: Value =
        serde_json::from_str(&p.ok(&["mask", "--", "head", "-n", "1500", "big.rs"])).unwrap();
    assert_eq!(v["outline_hint"]["command"], "baton outline big.rs");
    // Not a source file, or not a plain read: no hint.
    let v: Value =
        serde_json::from_str(&p.ok(&["--json", "mask", "--", "cat", "big.txt"])).unwrap();
    assert_eq!(v["masked"], true);
    assert!(v.get("outline_hint").is_none(), "{v}");
    let v: Value =
        serde_json::from_str(&p.ok(&["mask", "--", "cat", "big.rs", "big.txt"])).unwrap();
    assert!(v.get("outline_hint").is_none(), "{v}");
}

#[test]
fn corpus_outlines_cost_at_most_15_percent() {
    let corpus = corpus_or_skip!(corpus_outlines_cost_at_most_15_percent);
    let files = corpus_sources(&corpus);
    assert!(
        !files.is_empty(),
        "no source files under {}/tokens/files",
        corpus.display()
    );
    let p = Proj::new();
    let args: Vec<String> = files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let mut a: Vec<&str> = vec!["outline", "--exact-tokens"];
    a.extend(args.iter().map(String::as_str));
    let v = p.json(&a);
    let mut report = Vec::new();
    for f in v["files"].as_array().unwrap() {
        let (o, t) = (
            f["outline_tokens"].as_f64().unwrap(),
            f["tokens"].as_f64().unwrap(),
        );
        report.push(format!("{}: {o}/{t} = {:.1}%", f["file"], 100.0 * o / t));
        assert!(o / t <= 0.15, "{}", report.join("\n"));
    }
    let all = v["outline_tokens"].as_f64().unwrap() / v["tokens"].as_f64().unwrap();
    assert!(all <= 0.15, "{all}");
    eprintln!("{}", report.join("\n"));
}

#[test]
fn help_has_examples() {
    let p = Proj::new();
    let h = p.ok(&["outline", "--help"]);
    assert!(
        h.contains("Examples:") && h.contains("baton outline src/"),
        "{h}"
    );
    let h = p.ok(&["extract", "--help"]);
    assert!(h.contains("--symbol"), "{h}");
}

/// Token counts are estimated and labelled so (JSON and human output), whatever the size;
/// `--exact-tokens` counts exactly (equal to `baton tokens`); the items are the same.
#[test]
fn counts_are_estimated_unless_exact_ones_are_asked() {
    let p = Proj::new();
    let mut s = String::new();
    let mut i = 0;
    while s.len() <= 300 * 1024 {
        s.push_str(&format!(
            "/// Doc {i}.\npub fn function_{i}(a: u32) -> u32 {{\n    a.wrapping_mul({i}) + 1\n}}\n\n"
        ));
        i += 1;
    }
    write(&p, "big.rs", &s);
    write(&p, "small.rs", "pub fn small() {}\n");

    let est = p.json(&["outline", "big.rs", "small.rs"]);
    let exact = p.json(&["outline", "big.rs", "small.rs", "--exact-tokens"]);
    let (e, x) = (&est["files"][0], &exact["files"][0]);
    assert_eq!(e["tokens_estimated"], true, "{}", e["tokens"]);
    assert_eq!(est["tokens_estimated"], true);
    assert_eq!(x["tokens_estimated"], false);
    assert_eq!(exact["tokens_estimated"], false);
    assert_eq!(est["files"][1]["tokens_estimated"], true, "small files too");
    assert_eq!(exact["files"][1]["tokens_estimated"], false);
    assert_eq!(exact["files"][1]["tokens"], 5, "pub fn small() {{}}\\n");

    let counted = p.json(&["tokens", "big.rs"]);
    let truth = counted["files"][0]["tokens"]
        .as_u64()
        .or_else(|| counted["tokens"].as_u64())
        .unwrap();
    assert_eq!(x["tokens"].as_u64().unwrap(), truth);
    let guess = e["tokens"].as_u64().unwrap();
    let off = guess.abs_diff(truth) as f64 / truth as f64;
    assert!(off <= 0.15, "estimate {guess} vs exact {truth}");

    // Same definitions, same lines; each count estimated within reason.
    let (ei, xi) = (
        e["items"].as_array().unwrap(),
        x["items"].as_array().unwrap(),
    );
    assert_eq!(ei.len(), i);
    assert_eq!(ei.len(), xi.len());
    for (a, b) in ei.iter().zip(xi) {
        assert_eq!(
            (&a["name"], &a["start_line"]),
            (&b["name"], &b["start_line"])
        );
        let (g, t) = (a["tokens"].as_u64().unwrap(), b["tokens"].as_u64().unwrap());
        assert!(
            g.abs_diff(t) * 3 <= t,
            "{}: estimate {g}, exact {t}",
            a["name"]
        );
    }

    let human = p.ok(&["outline", "big.rs"]);
    let first = human.lines().next().unwrap();
    assert!(first.contains(" tokens, estimated;"), "{first}");
    assert!(
        human.contains("pub fn function_0(a: u32) -> u32 [~"),
        "{first}"
    );
    let human = p.ok(&["outline", "big.rs", "--exact-tokens"]);
    assert!(!human.contains("[~") && !human.contains("estimated"));
    let h = p.ok(&["outline", "--help"]);
    assert!(
        h.contains("--exact-tokens") && h.contains("estimates"),
        "{h}"
    );
}
