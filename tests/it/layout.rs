//! The shape of the source tree: crates in layers, modules without import circles, files small
//! enough to read whole.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's crates, lowest first: each may depend only on crates before it.
const LAYERS: &[&[&str]] = &[
    &["baton-core"],
    &["baton-store", "baton-context", "baton-agent"],
    &["baton-engine"],
    &["baton-mcp"],
    &["baton"],
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every crate's source folder, by crate name.
fn crate_sources() -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::from([("baton".to_string(), root().join("src"))]);
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = e.unwrap().path();
        out.insert(
            dir.file_name().unwrap().to_string_lossy().into_owned(),
            dir.join("src"),
        );
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_source_file_is_over_800_lines() {
    let mut files = Vec::new();
    for src in crate_sources().values() {
        rust_files(src, &mut files);
    }
    assert!(files.len() > 150, "{} files", files.len());
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            let rel = f.strip_prefix(root()).unwrap().display();
            (n > 800).then(|| format!("{rel} ({n} lines)"))
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "split these by concern: {long:?}");
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let layer = |name: &str| LAYERS.iter().position(|l| l.contains(&name));
    let sources = crate_sources();
    assert!(sources.len() >= 5, "{sources:?}");
    for name in sources.keys() {
        let own = layer(name).unwrap_or_else(|| panic!("{name} is in no layer of LAYERS"));
        let dir = if name == "baton" {
            root().to_path_buf()
        } else {
            root().join("crates").join(name)
        };
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let doc: toml::Table = manifest.parse().unwrap();
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            let Some(deps) = doc.get(section).and_then(|d| d.as_table()) else {
                continue;
            };
            for dep in deps.keys().filter(|d| d.starts_with("baton")) {
                let theirs = layer(dep).unwrap_or_else(|| panic!("{dep} is in no layer"));
                assert!(
                    theirs < own,
                    "{name} depends on {dep}, which is not below it"
                );
            }
        }
        if name != "baton" {
            // Library crates never print: the lints that deny it apply to each of them.
            assert!(
                manifest.contains("[lints]\nworkspace = true"),
                "{name}: no [lints]"
            );
        }
    }
    let root_manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(root_manifest.contains("print_stderr = \"deny\""));
}

/// A module's path inside its crate (`["workflow", "verify", "pg"]`) from its file.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The paths a file names through `crate::` or `super::` (groups expanded one level), outside
/// comments and its test module.
fn named_paths(text: &str) -> Vec<Vec<String>> {
    let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or(text);
    let code: String = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let re =
        regex::Regex::new(r"(?:^|[^\w$])((?:crate|super)(?:::\w+)*)(?:::\{([^;]*?)\})?").unwrap();
    let mut out = Vec::new();
    for c in re.captures_iter(&code) {
        let head: Vec<String> = c[1].split("::").map(str::to_string).collect();
        match c.get(2) {
            Some(group) => {
                for item in group.as_str().split(',') {
                    let item = item.trim().trim_start_matches('{');
                    let mut p = head.clone();
                    p.extend(item.split("::").map(|s| s.trim().to_string()));
                    out.push(p);
                }
            }
            None => out.push(head),
        }
    }
    out
}

/// One crate's module graph: which module names which.
fn module_graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let me = module_of(src, file);
        let mut edges = BTreeSet::new();
        for path in named_paths(&std::fs::read_to_string(file).unwrap()) {
            let mut full = if path[0] == "crate" {
                vec![]
            } else {
                me.clone()
            };
            for seg in &path {
                match seg.as_str() {
                    "crate" | "self" | "" => {}
                    "super" => {
                        full.pop();
                    }
                    s => full.push(s.to_string()),
                }
            }
            let target = (0..=full.len())
                .rev()
                .map(|k| full[..k].to_vec())
                .find(|m| modules.contains(m))
                .unwrap_or_default();
            // A module naming one of its ancestors (not an item in it) is only its place.
            let names_an_ancestor = me.starts_with(&target) && full.len() == target.len();
            if target != me && !names_an_ancestor {
                edges.insert(target);
            }
        }
        graph.insert(me, edges);
    }
    graph
}

/// Every circle of `graph`, as the modules on it.
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for n in graph.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<_, _> = graph.keys().map(|m| (m.clone(), reach(m))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (m, r) in &reaches {
        if !r.contains(m) {
            continue;
        }
        let mut circle: Vec<String> = reaches
            .iter()
            .filter(|(n, rn)| r.contains(*n) && rn.contains(m))
            .map(|(n, _)| n.join("::"))
            .collect();
        circle.sort();
        if !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

#[test]
fn no_module_imports_in_a_circle() {
    let mut found = Vec::new();
    for (name, src) in crate_sources() {
        for c in circles(&module_graph(&src)) {
            found.push(format!("{name}: {}", c.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles: {found:#?}");
}

#[test]
fn the_circle_finder_finds_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("run")).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "pub mod plan;\npub mod run;\npub mod leaf;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("plan.rs"),
        "use super::run::Args;\nuse crate::leaf;\n",
    )
    .unwrap();
    std::fs::write(
        src.join("run/mod.rs"),
        "// crate::leaf in a comment\nfn f() { super::plan::go() }\n",
    )
    .unwrap();
    std::fs::write(src.join("leaf.rs"), "use crate::{plan::X, run};\n").unwrap();
    let graph = module_graph(src);
    let run = vec!["run".to_string()];
    assert_eq!(graph[&run], BTreeSet::from([vec!["plan".to_string()]]));
    assert_eq!(circles(&graph), vec![vec!["leaf", "plan", "run"]]);
}
