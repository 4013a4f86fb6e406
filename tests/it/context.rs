//! Context toolkit: corpus checks (exact token counts, exact sections) and the real binary.

use std::path::Path;

use baton_core::markdown;

use crate::util::corpus_or_skip;

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
    let dir = corpus_or_skip!(corpus_sections_match_exactly).join("markdown");
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

#[test]
fn corpus_token_counts_match_exactly() {
    use baton_context::tokens::Encoding;
    let dir = corpus_or_skip!(corpus_token_counts_match_exactly).join("tokens");
    let counts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("counts.json")).unwrap()).unwrap();
    let counts = counts.as_object().unwrap();
    assert!(counts.len() >= 13);
    let mut failures = Vec::new();
    for (name, want) in counts {
        let text = std::fs::read_to_string(dir.join("files").join(name)).unwrap();
        assert_eq!(text.len() as u64, want["bytes"].as_u64().unwrap(), "{name}");
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let got = enc.count(&text) as u64;
            let want = want[enc.name()].as_u64().unwrap();
            if got != want {
                failures.push(format!("{name} {}: want {want} got {got}", enc.name()));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------------
// Properties: on arbitrary markdown-ish text, nothing panics and sections tile the document.

mod props {
    use baton_context::{extract, summary, tokens::Encoding};
    use baton_core::markdown;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("# Title".to_string()),
            Just("## Data Model".to_string()),
            Just("### Decision 2".to_string()),
            Just("###### deep".to_string()),
            Just("####### too deep".to_string()),
            Just("   # indented".to_string()),
            Just("    # code block".to_string()),
            Just("#".to_string()),
            Just("#\tTab".to_string()),
            Just("## Summary".to_string()),
            Just("**Status:** Complete".to_string()),
            Just("| # | Severity | Description |".to_string()),
            Just("|---|---|---|".to_string()),
            Just("- item".to_string()),
            Just("- # heading in list".to_string()),
            Just("> # heading in quote".to_string()),
            Just("```".to_string()),
            Just("~~~".to_string()),
            Just("---".to_string()),
            Just("...".to_string()),
            Just("===".to_string()),
            Just("Setext".to_string()),
            Just("<div>".to_string()),
            Just("</div>".to_string()),
            Just("title: x".to_string()),
            Just(String::new()),
            Just("日本語 🎉 é".to_string()),
            Just("text\r".to_string()),
            "[a-z #=`~>*|:-]{0,12}",
        ]
    }

    fn doc() -> impl Strategy<Value = String> {
        (prop::collection::vec(line(), 0..40), any::<bool>()).prop_map(|(lines, nl)| {
            let mut s = lines.join("\n");
            if nl {
                s.push('\n');
            }
            s
        })
    }

    fn line_of(text: &str, byte: usize) -> usize {
        text.as_bytes()[..byte]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// The tiling property, stated precisely:
    /// 1. every section is a non-empty byte range starting at a line start and ending at a line
    ///    start or the end of the text; start_line/end_line are the lines of its first and last
    ///    byte; levels are 1..=6; starts strictly increase;
    /// 2. sections are laminar: two sections are disjoint, or the later one lies inside the
    ///    earlier one and is deeper;
    /// 3. the top-level sections tile [first heading's line, end of text) with no gap or
    ///    overlap, and the direct children of each section tile it from the first child to its
    ///    end (so the part before the first child is the section's own text);
    /// 4. hence every line from the first heading on lies in a chain of sections of strictly
    ///    increasing level, and no line before it lies in any section.
    fn assert_tiles(text: &str, all: &[markdown::Section]) {
        let is_line_start = |b: usize| b == 0 || text.as_bytes()[b - 1] == b'\n';
        for (i, s) in all.iter().enumerate() {
            assert!(s.start < s.end && s.end <= text.len(), "{s:?}");
            assert!(is_line_start(s.start), "{s:?}");
            assert!(s.end == text.len() || is_line_start(s.end), "{s:?}");
            assert_eq!(s.start_line, line_of(text, s.start), "{s:?}");
            assert_eq!(s.end_line, line_of(text, s.end - 1), "{s:?}");
            assert!((1..=6).contains(&s.level), "{s:?}");
            assert!(!s.title.contains('\n'), "{s:?}");
            if i > 0 {
                assert!(all[i - 1].start < s.start, "{:?} {s:?}", all[i - 1]);
            }
            for t in &all[i + 1..] {
                let disjoint = t.start >= s.end;
                let nested = t.end <= s.end && t.level > s.level;
                assert!(disjoint || nested, "not laminar: {s:?} {t:?}");
            }
        }
        let parent = |j: usize| -> Option<usize> {
            (0..j)
                .rev()
                .find(|&i| all[i].start <= all[j].start && all[j].end <= all[i].end)
        };
        let mut expect_root = all.first().map(|s| s.start);
        for (j, s) in all.iter().enumerate() {
            if parent(j).is_none() {
                assert_eq!(Some(s.start), expect_root, "gap before root {s:?}");
                expect_root = Some(s.end);
            }
        }
        if let Some(end) = expect_root {
            assert_eq!(end, text.len(), "roots do not reach the end");
        }
        for (i, s) in all.iter().enumerate() {
            let kids: Vec<_> = (i + 1..all.len())
                .filter(|&j| parent(j) == Some(i))
                .collect();
            if let Some(&first) = kids.first() {
                assert!(all[first].start > s.start);
                let mut at = all[first].start;
                for &k in &kids {
                    assert_eq!(all[k].start, at, "gap among children of {s:?}");
                    at = all[k].end;
                }
                assert_eq!(at, s.end, "children of {s:?} stop short");
            }
        }
        let lines = text.split('\n').count();
        let first = all.first().map_or(usize::MAX, |s| s.start_line);
        for ln in 1..=lines {
            let chain: Vec<_> = all
                .iter()
                .filter(|s| s.start_line <= ln && ln <= s.end_line)
                .collect();
            if ln < first {
                assert!(
                    chain.is_empty(),
                    "line {ln} before the first heading is in {chain:?}"
                );
            } else if ln <= line_of(text, text.len().saturating_sub(1)) {
                assert!(!chain.is_empty(), "line {ln} is in no section");
                assert!(
                    chain.windows(2).all(|w| w[0].level < w[1].level),
                    "line {ln}: {chain:?}"
                );
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn sections_tile(text in doc()) {
            assert_tiles(&text, &markdown::sections(&text));
            assert_tiles(&text, &markdown::sections_strict(&text));
        }

        #[test]
        fn extraction_never_panics(text in doc(), q in "[A-Za-z0-9 >.#-]{0,12}") {
            let all = markdown::sections(&text);
            let _ = extract::find(&all, &q);
            let _ = extract::find_decision(&all, "0002-x.md", &q);
            let _ = extract::route(&all, &extract::ExtractConfig::default().route("other").unwrap());
            if let Ok(s) = extract::find(&all, &q) {
                let body = s.text(&text);
                let (out, _) = extract::limit(body, Encoding::O200kBase, 20, "f.md", (s.start_line, s.end_line));
                prop_assert!(Encoding::O200kBase.count(&out) <= 20 || out.starts_with("[…"));
            }
            let _ = summary::parse(&text);
            let _ = summary::check_adr003(&text, |_| false);
        }

        #[test]
        fn truncation_is_a_bounded_prefix(text in "\\PC{0,200}", max in 0usize..60) {
            for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let (p, n) = enc.truncate(&text, max);
                prop_assert!(text.starts_with(p));
                prop_assert!(n <= max);
                prop_assert_eq!(n, enc.count(p));
                if enc.count(&text) <= max {
                    prop_assert_eq!(p, text.as_str());
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The real binary, in temp dirs.

mod cli {
    use std::path::Path;

    use assert_cmd::Command;
    use serde_json::Value;

    use crate::util::{Test, corpus_or_skip};

    /// A project directory (has `.git`, so baton.toml/.baton are looked up here).
    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        dir
    }

    fn baton(dir: &Path) -> Command {
        let mut c = Command::cargo_bin("baton").unwrap();
        c.current_dir(dir);
        c
    }

    struct Run {
        code: i32,
        out: String,
        err: String,
    }

    fn run(dir: &Path, args: &[&str], stdin: Option<&str>) -> Run {
        let mut c = baton(dir);
        c.args(args);
        c.write_stdin(stdin.unwrap_or("").as_bytes().to_vec());
        let o = c.output().unwrap();
        Run {
            code: o.status.code().unwrap_or(-1),
            out: String::from_utf8_lossy(&o.stdout).into_owned(),
            err: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    fn json(r: &Run) -> Value {
        serde_json::from_str(&r.out).unwrap_or_else(|e| panic!("{e}: {}", r.out))
    }

    const SPEC: &str = "---\ntitle: spec\n---\n# Shop\nA shop.\n\n## Overview\nSmall overview.\n\n## 2. Data Model\n\n```sql\n# not a heading\nCREATE TABLE users (id int);\n```\n\n### Users\nfields\n\n## API Contracts\nGET /users\n\n## API Errors\n404\n\n## Components\nweb, db\n";

    #[test]
    fn tokens_of_a_corpus_file_and_stdin() {
        let f = corpus_or_skip!(tokens_of_a_corpus_file_and_stdin)
            .join("tokens/files/ripgrep__standard.rs");
        let d = project();
        let f = f.to_str().unwrap();
        let r = run(d.path(), &["tokens", f], None);
        assert_eq!(r.code, 0, "{}", r.err);
        assert!(r.out.contains("30590"), "{}", r.out);
        let r = run(
            d.path(),
            &["--json", "tokens", "--encoding", "cl100k_base", f, "-"],
            Some("hello world"),
        );
        let v = json(&r);
        assert_eq!(v["files"][0]["tokens"], 30565);
        assert_eq!(v["files"][1]["file"], "<stdin>");
        assert_eq!(v["files"][1]["tokens"], 2);
        assert_eq!(v["total"], 30567);
        assert_eq!(v["estimate"], false);
    }

    #[test]
    fn tokens_files_stdin_json_and_estimates() {
        let d = project();
        std::fs::write(d.path().join("a.md"), "# Title\nhello world\n").unwrap();
        let r = run(
            d.path(),
            &["--json", "tokens", "--encoding", "cl100k_base", "a.md", "-"],
            Some("hello world"),
        );
        let v = json(&r);
        assert_eq!(v["files"][0]["file"], "a.md");
        assert_eq!(v["files"][1]["file"], "<stdin>");
        assert_eq!(v["files"][1]["tokens"], 2);
        assert_eq!(
            v["total"].as_u64().unwrap(),
            v["files"][0]["tokens"].as_u64().unwrap() + 2
        );
        assert_eq!(v["estimate"], false);
        std::fs::write(
            d.path().join("baton.toml"),
            "[budget]\nclaude_factor = 1.5\n",
        )
        .unwrap();
        let r = run(
            d.path(),
            &["--json", "tokens", "--model", "claude-opus-4", "-"],
            Some("hello world"),
        );
        let v = json(&r);
        assert_eq!(v["estimate"], true);
        assert_eq!(v["total"], 3); // ceil(2 × 1.5)
        let r = run(
            d.path(),
            &["tokens", "--model", "claude-opus-4", "-"],
            Some("hello world"),
        );
        assert!(
            r.out.contains("~3") && r.out.contains("estimate"),
            "{}",
            r.out
        );
    }

    #[test]
    fn bad_inputs_give_clear_errors() {
        let p = crate::util::Proj::new();
        p.test()
            .args(["tokens", "missing.md"])
            .stderr(
                "error: missing.md: no such file\n  \
                 hint: check the path (it is relative to the working directory)\n",
            )
            .status(4)
            .run();
        p.test()
            .args(["tokens", "."])
            .stderr("error: .: is a directory\n  hint: pass the files inside it, e.g. `dir/*.md`\n")
            .status(2)
            .run();
        let convert = "  hint: convert it to UTF-8 (e.g. `iconv -f latin1 -t utf-8`), \
                       or pass --lossy to replace invalid bytes with U+FFFD\n";
        std::fs::write(p.path().join("bin.dat"), b"\x7fELF\x02\x01\x00\x00\xff\xfe").unwrap();
        p.test()
            .args(["extract", "bin.dat", "--section", "x"])
            .stderr(&format!(
                "error: bin.dat: looks binary (contains NUL bytes) and is not valid UTF-8 \
                 (first bad byte at offset 8)\n{convert}"
            ))
            .status(2)
            .run();
        std::fs::write(p.path().join("latin1.md"), b"# Caf\xe9\nbody\n").unwrap();
        p.test()
            .args(["extract", "latin1.md", "-s", "caf"])
            .stderr(&format!(
                "error: latin1.md: is not valid UTF-8 (first bad byte at offset 5)\n{convert}"
            ))
            .status(2)
            .run();
        p.test()
            .args(["extract", "latin1.md", "-s", "caf", "--lossy"])
            .stdout("# Caf\u{fffd}\nbody\n")
            .run();
        p.test()
            .args(["--json", "tokens", "--encoding", "p50k"])
            .stderr(concat!(
                r#"{"error":{"kind":"invalid","message":"unknown encoding \"p50k\"","#,
                r#""hint":"use o200k_base (GPT-4o and later) or cl100k_base (GPT-4, GPT-3.5)"}}"#,
                "\n"
            ))
            .status(2)
            .run();
    }

    #[test]
    fn budget_verdicts_and_exit_codes() {
        let d = project();
        let p = d.path();
        let r = run(p, &["budget", "-"], Some("small context"));
        assert_eq!(r.code, 0, "{}{}", r.out, r.err);
        assert!(r.out.starts_with("ok:"), "{}", r.out);
        let r = run(p, &["budget", "--used", "90K"], None);
        assert_eq!(r.code, 10);
        assert!(r.out.contains("zone warning"), "{}", r.out);
        let r = run(p, &["--json", "budget", "--used", "120000"], None);
        assert_eq!(r.code, 10);
        assert_eq!(json(&r)["zone"], "danger");
        let r = run(p, &["budget", "--used", "140001"], None);
        assert_eq!(r.code, 11);
        assert!(r.out.contains("usage above 70%"), "{}", r.out);
        let r = run(
            p,
            &["budget", "--used", "1000", "--tasks-completed", "5"],
            None,
        );
        assert_eq!(r.code, 11);
        let r = run(
            p,
            &["budget", "--used", "1000", "--feedback-bytes", "10241"],
            None,
        );
        assert_eq!(r.code, 11);
        // The window scales the zones.
        let r = run(
            p,
            &["--json", "budget", "--used", "450K", "--window", "1M"],
            None,
        );
        assert_eq!((r.code, json(&r)["zone"].clone()), (10, "warning".into()));
        // Phase budgets: implementer 15K is the target; 13K is in its warning zone.
        let r = run(
            p,
            &[
                "--json",
                "budget",
                "--used",
                "13000",
                "--phase",
                "implementer",
            ],
            None,
        );
        let v = json(&r);
        assert_eq!(
            (r.code, v["target"].clone(), v["zone"].clone()),
            (10, 15000.into(), "warning".into())
        );
        // The percentage of a phase check is of the phase's budget, not of the window.
        let r = run(
            p,
            &["budget", "--used", "13500", "--phase", "implementer"],
            None,
        );
        assert!(
            r.out
                .contains("13500 tokens, 90.0% of phase implementer budget 15000"),
            "{}",
            r.out
        );
        let r = run(p, &["budget", "--used", "1", "--phase", "astrologer"], None);
        assert_eq!(r.code, 4);
        assert!(r.err.contains("implementer"), "{}", r.err);
        std::fs::write(
            p.join("baton.toml"),
            "[budget]\nwindow = 1000\n[budget.phases]\nimplementer = 100\n",
        )
        .unwrap();
        let r = run(p, &["budget", "--used", "500"], None);
        assert_eq!(r.code, 10, "{}", r.out);
        let r = run(
            p,
            &["budget", "--used", "101", "--phase", "implementer"],
            None,
        );
        assert_eq!(r.code, 10, "{}", r.out);
        std::fs::write(p.join("baton.toml"), "[budget]\nwarning = 0.9\n").unwrap();
        let r = run(p, &["budget", "--used", "1"], None);
        assert_eq!(r.code, 2);
        assert!(r.err.contains("warning"), "{}", r.err);
    }

    #[test]
    fn extract_sections_routes_and_limits() {
        let d = project();
        let p = d.path();
        std::fs::write(p.join("spec.md"), SPEC).unwrap();
        let r = run(p, &["extract", "spec.md", "--section", "data model"], None);
        assert_eq!(r.code, 0, "{}", r.err);
        assert_eq!(
            r.out,
            "## 2. Data Model\n\n```sql\n# not a heading\nCREATE TABLE users (id int);\n```\n\n### Users\nfields\n\n"
        );
        let r = run(
            p,
            &[
                "--json",
                "extract",
                "spec.md",
                "--task-type",
                "add_endpoint",
            ],
            None,
        );
        let v = json(&r);
        assert_eq!(v[0]["title"], "API Contracts");
        assert_eq!(
            (v[0]["start_line"].clone(), v[0]["end_line"].clone()),
            (20.into(), 22.into())
        );
        assert!(v[0]["tokens"].as_u64().unwrap() > 0);
        let r = run(p, &["extract", "spec.md", "--task-type", "other"], None);
        assert_eq!(r.out, "## Overview\nSmall overview.\n\n");
        std::fs::write(
            p.join("baton.toml"),
            "[extract.routes]\ncreate_model = [\"Schema\", \"Users\"]\n",
        )
        .unwrap();
        let r = run(
            p,
            &["extract", "spec.md", "--task-type", "create_model"],
            None,
        );
        assert_eq!(r.out, "### Users\nfields\n\n");
        let r = run(p, &["extract", "spec.md", "--task-type", "deploy"], None);
        assert_eq!(r.code, 2);
        // Ambiguous and missing titles.
        let r = run(p, &["extract", "spec.md", "-s", "API"], None);
        assert_eq!(r.code, 2);
        assert!(
            r.err.contains("line 20") && r.err.contains("line 23"),
            "{}",
            r.err
        );
        let r = run(p, &["extract", "spec.md", "-s", "Deployment"], None);
        assert_eq!(r.code, 4);
        assert!(
            r.err.contains("## Components (line 26)") && r.err.contains("### Users (line 17)"),
            "{}",
            r.err
        );
        // Token limit: bounded output with a marker naming file and lines.
        let big = format!("# Big\n{}", "lorem ipsum dolor sit amet ".repeat(400));
        std::fs::write(p.join("big.md"), &big).unwrap();
        let r = run(
            p,
            &["extract", "big.md", "-s", "big", "--max-tokens", "50"],
            None,
        );
        assert!(
            r.out
                .ends_with("[… truncated by baton at 50 tokens; full section: big.md lines 1-2]\n"),
            "{}",
            r.out
        );
        assert!(baton_context::tokens::Encoding::O200kBase.count(&r.out) <= 50);
        // Outline with token counts.
        let r = run(p, &["--json", "extract", "spec.md", "--outline"], None);
        let v = json(&r);
        assert_eq!(v.as_array().unwrap().len(), 7);
        assert_eq!(v[0]["title"], "Shop");
        assert_eq!(v[0]["start_line"], 4);
        let whole =
            baton_context::tokens::Encoding::O200kBase.count(&SPEC[SPEC.find("# Shop").unwrap()..]);
        assert_eq!(v[0]["tokens"], whole);
        let r = run(p, &["extract", "spec.md"], None);
        assert_eq!(r.code, 2);
    }

    #[test]
    fn extract_adr_decisions_from_corpus() {
        let md = corpus_or_skip!(extract_adr_decisions_from_corpus).join("markdown");
        let d = project();
        let adr = md.join("adr-tools__doc_adr_0004-markdown-format.md");
        let r = run(
            d.path(),
            &[
                "extract",
                "--adr",
                adr.to_str().unwrap(),
                "--decision",
                "ADR-0004",
            ],
            None,
        );
        assert_eq!(r.code, 0, "{}", r.err);
        assert!(r.out.starts_with("## Decision\n"), "{}", r.out);
        let madr = md.join("madr__docs_decisions_0013-use-yaml-front-matter-for-meta-data.md");
        let r = run(
            d.path(),
            &[
                "--json",
                "extract",
                "--adr",
                madr.to_str().unwrap(),
                "--decision",
                "13",
            ],
            None,
        );
        assert_eq!(json(&r)[0]["title"], "Decision Outcome");
        let r = run(
            d.path(),
            &[
                "extract",
                "--adr",
                madr.to_str().unwrap(),
                "--decision",
                "D7",
            ],
            None,
        );
        assert_eq!(r.code, 4);
        assert!(r.err.contains("Decision Outcome (line 23)"), "{}", r.err);
    }

    const BLOCK: &str = "I looked at everything.\n\n## Summary\n\n**Status:** Partial\n**Output file:** `out/report.md`\n**Lines written:** 1,204\n\n### Key Findings\n- Cache misses dominate\n\n### Issues Found\n| # | Severity | Description |\n|---|----------|-------------|\n| 1 | High | N+1 query in /users |\n\n### Key Numbers\n| Metric | Value | Source |\n|--------|-------|--------|\n| p99 | 840 ms | bench.txt |\n\n### Next Phase Needs\n- Fix the query first\n";

    #[test]
    fn summary_check_and_extract() {
        let d = project();
        let p = d.path();
        let long = format!("{}\n{BLOCK}", "chatter line\n".repeat(500));
        let r = run(p, &["summary", "check", "-"], Some(&long));
        assert_eq!(r.code, 0, "{}{}", r.out, r.err);
        let r = run(p, &["--json", "summary", "extract", "-"], Some(&long));
        assert_eq!(r.code, 0);
        let v = json(&r);
        assert_eq!(v["status"], "Partial");
        assert_eq!(v["output_file"], "out/report.md");
        assert_eq!(v["lines_written"], 1204);
        assert_eq!(v["issues"][0]["severity"], "High");
        assert_eq!(v["issues"][0]["n"], 1);
        assert_eq!(v["key_numbers"][0]["source"], "bench.txt");
        assert_eq!(v["next_phase_needs"][0], "Fix the query first");
        assert_eq!(v["start_line"], 504);
        let r = run(p, &["summary", "extract", "-"], Some(&long));
        assert!(
            r.out.starts_with("## Summary\n") && r.out.ends_with("- Fix the query first\n"),
            "{}",
            r.out
        );
        // Non-compliant: reported with line numbers, exit 1, never silently accepted.
        let bad = BLOCK
            .replace("Partial", "Mostly done")
            .replace("| p99 | 840 ms | bench.txt |", "| p99 | 840 ms |");
        std::fs::write(p.join("bad.md"), &bad).unwrap();
        let r = run(p, &["summary", "check", "bad.md"], None);
        assert_eq!(r.code, 1);
        assert!(
            r.out.contains("bad.md:5: Status must be one of"),
            "{}",
            r.out
        );
        assert!(r.out.contains("bad.md:20: row has 2 cells"), "{}", r.out);
        let r = run(p, &["summary", "extract", "bad.md"], None);
        assert_eq!(r.code, 1);
        assert!(r.err.contains("bad.md:5:"), "{}", r.err);
        let r = run(p, &["--json", "summary", "check", "bad.md"], None);
        assert_eq!(json(&r)["compliant"], false);
        let r = run(p, &["summary", "check", "-"], Some("just prose\n"));
        assert_eq!(r.code, 4);
        // ADR-003: short summary + an existing report path.
        std::fs::create_dir_all(p.join("reports")).unwrap();
        std::fs::write(p.join("reports/security.md"), "full").unwrap();
        let r = run(
            p,
            &["summary", "check", "--format", "adr003", "-"],
            Some("2 critical issues. Full report: reports/security.md\n"),
        );
        assert_eq!(r.code, 0, "{}", r.out);
        let r = run(
            p,
            &["summary", "check", "--format", "adr003", "-"],
            Some(&"word ".repeat(300)),
        );
        assert_eq!(r.code, 1);
        assert!(
            r.out.contains("under 200") && r.out.contains("no path"),
            "{}",
            r.out
        );
    }

    #[test]
    fn sessions_new_list_clean() {
        let d = project();
        let p = d.path();
        let r = run(p, &["session", "new", "pr_reviews"], None);
        assert_eq!(r.code, 0, "{}", r.err);
        let dir = std::path::PathBuf::from(r.out.trim());
        assert!(dir.is_dir());
        assert!(
            dir.starts_with(p.join(".baton/sessions/pr_reviews")),
            "{}",
            dir.display()
        );
        assert_eq!(
            std::fs::read_to_string(p.join(".baton/.gitignore")).unwrap(),
            "*\n"
        );
        // Ids come from baton, not the environment, and sort by time.
        let r2 = run(p, &["--json", "session", "new", "pr_reviews"], None);
        let id2 = json(&r2)["id"].as_str().unwrap().to_string();
        let id1 = dir.file_name().unwrap().to_str().unwrap().to_string();
        assert_ne!(id1, id2);
        assert!(id1[..15] <= id2[..15]);
        std::fs::write(dir.join("context.md"), "ctx").unwrap();
        let r = run(p, &["--json", "session", "list"], None);
        let v = json(&r);
        assert_eq!(v.as_array().unwrap().len(), 2);
        let ids: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert!(
            ids.contains(&id1.as_str()) && ids.contains(&id2.as_str()),
            "{ids:?}"
        );
        assert!(ids[0] <= ids[1]);
        // Age one session by 8 days.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(8 * 86_400);
        for f in [dir.join("context.md"), dir.clone()] {
            std::fs::File::open(&f).unwrap().set_modified(old).unwrap();
        }
        let r = run(
            p,
            &["session", "clean", "--older-than", "7d", "--dry-run"],
            None,
        );
        assert!(r.out.contains("would remove 1 session"), "{}", r.out);
        assert!(dir.exists());
        let r = run(p, &["session", "clean", "--older-than", "7d"], None);
        assert_eq!(r.code, 0);
        assert!(!dir.exists());
        assert_eq!(
            json(&run(p, &["--json", "session", "list", "pr_reviews"], None))
                .as_array()
                .unwrap()
                .len(),
            1
        );
        let p = crate::util::Proj::new();
        for bad in ["../up", "a/b", "/abs", "..", ""] {
            p.test()
                .args(["session", "new", bad])
                .stderr(&format!(
                    "error: bad session kind {bad:?}\n  \
                     hint: use letters, digits, '-', '_' or '.' (not first), e.g. `pr_reviews` or \
                     `workflow`; no '/', '..' or absolute paths\n"
                ))
                .status(2)
                .run();
        }
        p.test()
            .args(["session", "clean", "--older-than", "soon"])
            .stderr(
                "error: bad duration \"soon\"\n  hint: use a number and a unit: 90s, 30m, 12h, 7d, 2w\n",
            )
            .status(2)
            .run();
    }

    #[test]
    fn unwritable_session_directory() {
        // `.baton` is a file: no one (not even root) can create a directory inside it.
        Test::new()
            .write(".baton", "not a dir")
            .args(["session", "new", "build"])
            .stderr("error: [PROJECT]/.baton: File exists (os error 17)\n")
            .status(6)
            .run();
    }

    #[test]
    fn every_command_has_examples() {
        let d = project();
        for cmd in [
            &["tokens"][..],
            &["budget"],
            &["extract"],
            &["summary"],
            &["summary", "check"],
            &["summary", "extract"],
            &["session"],
            &["session", "new"],
            &["session", "list"],
            &["session", "clean"],
        ] {
            let mut args = cmd.to_vec();
            args.push("--help");
            let r = run(d.path(), &args, None);
            assert_eq!(r.code, 0);
            assert!(r.out.contains("\nExamples:\n  "), "{cmd:?}: {}", r.out);
        }
    }
}
