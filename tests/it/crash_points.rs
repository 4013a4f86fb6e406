//! Random crash points. The task store under random command sequences with a crash after any of them: two stores
//! get the same commands; after each one the first loses what a kill at a random point of the
//! write could cost it (its manifest, a fresh manifest, its history line; a torn half-written
//! next event; a temp file), and must still answer exactly as the second, with its manifest
//! equal to the replay of its events. A run journal cut at any byte (a kill inside an append)
//! reopens to exactly its complete records and takes the next one on a fresh line.

use std::path::Path;

use baton_core::error::Fault;
use baton_store::model::{Decision, Gate, Manifest, Mode, PhaseStatus, Workflow};
use baton_store::{Content, Store};
use proptest::prelude::*;

const PHASES: &[&str] = &[
    "architect",
    "design-audit",
    "spec",
    "implementation",
    "tests",
];

#[derive(Debug, Clone)]
enum Cmd {
    Begin(usize),
    End(usize, bool),
    Complete(usize, String),
    Store(usize, String),
    Pause,
    SetGate(usize),
    Resume(usize),
}

/// What a kill during the command's write could leave behind.
#[derive(Debug, Clone, Copy)]
enum Crash {
    None,
    /// Killed after the event was durable, before manifest.json was replaced.
    StaleManifest,
    /// manifest.json gone (a hand deletion, or a crash of an older version).
    NoManifest,
    /// Killed before history.md got the command's line.
    NoHistory,
    /// The next command's event cut half-way: never acknowledged.
    TornTail,
    /// A temp file of an atomic write that never got renamed.
    StrayTemp,
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let phase = 0..PHASES.len();
    prop_oneof![
        phase.clone().prop_map(Cmd::Begin),
        (phase.clone(), any::<bool>()).prop_map(|(p, ok)| Cmd::End(p, ok)),
        (phase.clone(), "[a-z ]{0,40}").prop_map(|(p, t)| Cmd::Complete(p, t)),
        (phase, "[a-z ]{1,40}").prop_map(|(p, t)| Cmd::Store(p, t)),
        Just(Cmd::Pause),
        (0..Gate::ALL.len()).prop_map(Cmd::SetGate),
        (0..Decision::ALL.len()).prop_map(Cmd::Resume),
    ]
}

fn crash() -> impl Strategy<Value = Crash> {
    prop_oneof![
        3 => Just(Crash::None),
        1 => Just(Crash::StaleManifest),
        1 => Just(Crash::NoManifest),
        1 => Just(Crash::NoHistory),
        1 => Just(Crash::TornTail),
        1 => Just(Crash::StrayTemp),
    ]
}

/// Ok, or the error's exit code: both stores must agree on which.
fn apply(s: &Store, slug: &str, c: &Cmd) -> Result<(), u8> {
    let content = |t: &str| Content {
        task_id: None,
        iteration: None,
        text: format!("# {t}\n"),
    };
    let r = match c {
        Cmd::Begin(p) => s.start_phase(slug, PHASES[*p], None).map(drop),
        Cmd::End(p, ok) => {
            let st = if *ok {
                PhaseStatus::Success
            } else {
                PhaseStatus::Failed
            };
            s.end_phase(slug, PHASES[*p], None, st).map(drop)
        }
        Cmd::Complete(p, t) => s
            .complete_phase(
                slug,
                PHASES[*p],
                None,
                PhaseStatus::Success,
                Some(content(t)),
            )
            .map(drop),
        Cmd::Store(p, t) => s.store(slug, PHASES[*p], content(t)).map(drop),
        Cmd::Pause => s.pause(slug, "stuck", vec![]).map(drop),
        Cmd::SetGate(g) => s.set_gate(slug, Gate::ALL[*g], "ok?", vec![]).map(drop),
        Cmd::Resume(d) => s.resume(slug, Decision::ALL[*d]).map(drop),
    };
    r.map_err(|e| e.exit_code())
}

/// The manifest without what depends on the clock.
fn normalized(m: &Manifest) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(o) => {
                o.retain(|k, _| {
                    !(k.ends_with("_at") || k.ends_with("_ms") || k == "created" || k == "ts")
                });
                o.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(m).unwrap();
    strip(&mut v);
    v
}

fn hit(dir: &Path, c: Crash, manifest_before: &[u8]) {
    let manifest = dir.join(baton_store::MANIFEST);
    let events = dir.join(baton_store::EVENTS);
    match c {
        Crash::None => {}
        Crash::StaleManifest => std::fs::write(&manifest, manifest_before).unwrap(),
        Crash::NoManifest => {
            let _ = std::fs::remove_file(&manifest);
        }
        Crash::NoHistory => {
            let h = dir.join("../../history.md");
            if let Ok(text) = std::fs::read_to_string(&h) {
                let mut lines: Vec<&str> = text.lines().collect();
                lines.pop();
                let mut t = lines.join("\n");
                t.push('\n');
                std::fs::write(&h, t).unwrap();
            }
        }
        Crash::TornTail => {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&events)
                .unwrap();
            f.write_all(b"{\"v\":1,\"seq\":999,\"ts\":\"2026-").unwrap();
        }
        Crash::StrayTemp => {
            std::fs::write(dir.join(".baton-tmp-crash"), b"half").unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_crash_after_any_command_changes_no_answer(
        steps in prop::collection::vec((cmd(), crash()), 1..20)
    ) {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (Store::new(t.path().join("a")), Store::new(t.path().join("b")));
        a.init("Prop task", Mode::Standard, Workflow::Orchestrate).unwrap();
        let slug = baton_store::names::slugify("Prop task").unwrap();
        b.init("Prop task", Mode::Standard, Workflow::Orchestrate).unwrap();
        let dir = a.task_dir(&slug);
        for (i, (c, k)) in steps.iter().enumerate() {
            let before = std::fs::read(dir.join(baton_store::MANIFEST)).unwrap_or_default();
            let ra = apply(&a, &slug, c);
            let rb = apply(&b, &slug, c);
            prop_assert_eq!(ra, rb, "step {}: {:?}", i, c);
            hit(&dir, *k, &before);
            let ma = a.manifest(&slug).map_err(|e| TestCaseError::fail(format!("step {i} after {k:?}: {e}")))?;
            let mb = b.manifest(&slug).unwrap();
            prop_assert_eq!(normalized(&ma), normalized(&mb), "step {} {:?} after {:?}", i, c, k);
            // The manifest on disk, whatever the crash left, is the replay of the events.
            let replayed = baton_store::log::replay(&dir.join(baton_store::EVENTS)).unwrap().unwrap();
            prop_assert_eq!(normalized(&replayed), normalized(&ma));
        }
        // doctor leaves the crashed store healthy and equal to the clean one.
        let report = baton_store::doctor::run(&a).unwrap();
        prop_assert!(report.healthy(), "{:?}", report.findings);
        prop_assert_eq!(normalized(&a.manifest(&slug).unwrap()), normalized(&b.manifest(&slug).unwrap()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_journal_cut_at_any_byte_reopens_to_its_complete_records(
        phases in prop::collection::vec("[a-z]{1,12}", 1..12),
        cut in 0.0f64..1.0,
    ) {
        use baton_engine::events::{Subject, SubjectKind};
        use baton_engine::journal::{Entry, Journal};
        let t = tempfile::tempdir().unwrap();
        let local = t.path();
        let subject = Subject { kind: SubjectKind::Task, id: "t".into(), epic: None, unit: None };
        let started = |i: usize| Entry::PhaseStarted { subject: subject.clone(), phase: phases[i].clone(), attempt: i as u32 + 1 };
        let (mut j, _hold) = Journal::start(local, "20990101T000000-abcdef", started(0)).unwrap();
        for i in 1..phases.len() {
            j.log(started(i)).unwrap();
        }
        let path = j.dir.join("events.jsonl");
        let bytes = std::fs::read(&path).unwrap();
        let at = (bytes.len() as f64 * cut) as usize;
        std::fs::write(&path, &bytes[..at]).unwrap();
        let complete = bytes[..at].iter().filter(|&&b| b == b'\n').count();
        let mut j = Journal::open(local, "20990101T000000-abcdef").unwrap();
        prop_assert_eq!(j.records.len(), complete);
        for (r, p) in j.records.iter().zip(&phases) {
            let same = matches!(&r.entry, Entry::PhaseStarted { phase, .. } if phase == p);
            prop_assert!(same, "record {:?}", r.seq);
        }
        j.log(Entry::PhaseStarted { subject: subject.clone(), phase: "next".into(), attempt: 1 }).unwrap();
        let j = Journal::open(local, "20990101T000000-abcdef").unwrap();
        prop_assert_eq!(j.records.len(), complete + 1);
        let seqs: Vec<u64> = j.records.iter().map(|r| r.seq).collect();
        prop_assert_eq!(seqs, (1..=complete as u64 + 1).collect::<Vec<_>>());
    }
}
