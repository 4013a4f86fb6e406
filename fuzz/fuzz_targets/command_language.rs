//! The context-manager command language, from its grammar: command words with their keys
//! and values (and the noise between them) in any order. Whatever parses names only
//! commands and keys the language has, at lines the script has.
#![no_main]

use arbitrary::Arbitrary;
use baton_store::lang::parse;
use libfuzzer_sys::fuzz_target;

const WORDS: &[&str] = &[
    "INIT",
    "START_PHASE",
    "END_PHASE",
    "BEGIN_PHASE",
    "COMPLETE_PHASE",
    "PAUSE",
    "SET_GATE",
    "RESUME",
    "STORE",
    "RETRIEVE",
    "METRICS",
    "LIST",
    "SUMMARY",
    "QUERY",
    "HISTORY",
    "//",
    "init",
    "",
];
const KEYS: &[&str] = &[
    "task",
    "mode",
    "workflow",
    "phase",
    "task_id",
    "status",
    "needs",
    "iteration",
    "content",
    "reason",
    "recommendations",
    "gate",
    "prompt",
    "artifacts",
    "decision",
    "for_phase",
    "format",
    "tail",
    "query",
    "nokey",
];

#[derive(Arbitrary, Debug)]
enum Piece {
    Word(u8),
    Key(u8),
    Text(String),
    Newline,
}

#[derive(Arbitrary, Debug)]
enum Input {
    Raw(String),
    Grammar(Vec<Piece>),
}

fuzz_target!(|input: Input| {
    let script = match input {
        Input::Raw(s) => s,
        Input::Grammar(pieces) => {
            let mut s = String::new();
            for p in pieces {
                match p {
                    Piece::Word(i) => s.push_str(WORDS[i as usize % WORDS.len()]),
                    Piece::Key(i) => {
                        s.push(' ');
                        s.push_str(KEYS[i as usize % KEYS.len()]);
                        s.push(':');
                    }
                    Piece::Text(t) => s.push_str(&t),
                    Piece::Newline => s.push('\n'),
                }
                s.push(' ');
            }
            s
        }
    };
    let lines = script.lines().count();
    if let Ok(commands) = parse(&script) {
        for c in &commands {
            assert!(WORDS[..15].contains(&c.name.as_str()), "{c:?}");
            assert!(c.line >= 1 && c.line <= lines, "{c:?} of {lines} lines");
            assert!(c.positional.is_empty() || c.name == "QUERY", "{c:?}");
            for (k, _) in &c.args {
                assert!(KEYS.contains(&k.as_str()), "{c:?}");
            }
        }
    }
});
