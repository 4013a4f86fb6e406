use super::*;

fn kind(text: &str, id: &str) -> Option<SignalKind> {
    parse_signal(text, id).signal.map(|s| s.kind)
}

#[test]
fn every_keyword_parses() {
    let cases = [
        ("KICKOFF COMPLETE: 1.2", SignalKind::KickoffComplete),
        (
            "IMPLEMENTATION COMPLETE: 1.2",
            SignalKind::ImplementationComplete,
        ),
        (
            "IMPLEMENTATION BLOCKED: 1.2 - no db",
            SignalKind::ImplementationBlocked,
        ),
        ("REVIEW PASSED: 1.2", SignalKind::ReviewPassed),
        (
            "REVIEW PASSED WITH FIXES: 1.2 - Fixed 3 issues",
            SignalKind::ReviewPassedWithFixes,
        ),
        ("REVIEW FAILED: 1.2 - tests fail", SignalKind::ReviewFailed),
        (
            "ANALYSIS COMPLETE: 1.2 - Retry",
            SignalKind::AnalysisComplete,
        ),
    ];
    for (text, k) in cases {
        assert_eq!(kind(text, "1.2"), Some(k), "{text}");
    }
    assert_eq!(
        kind("RETRO COMPLETE: Epic 42", "42"),
        Some(SignalKind::RetroComplete)
    );
    assert_eq!(
        kind("RETRO COMPLETE: Epic epic-42", "epic-42"),
        Some(SignalKind::RetroComplete)
    );
}

#[test]
fn details_are_extracted() {
    let r = parse_signal(
        "IMPLEMENTATION BLOCKED: story-42-1 - Cannot resolve cycle",
        "42.1",
    );
    let s = r.signal.clone().unwrap();
    assert_eq!(s.id, "story-42-1");
    assert_eq!(s.detail.as_deref(), Some("Cannot resolve cycle"));
    assert_eq!(
        r.verdict_reason_for_test(),
        Some("Cannot resolve cycle".to_string())
    );

    let s = parse_signal("REVIEW PASSED WITH FIXES: 1.2 - Fixed 12 issues.", "1.2")
        .signal
        .unwrap();
    assert_eq!(s.fixed, Some(12));
    assert_eq!(s.detail.as_deref(), Some("Fixed 12 issues"));

    for (word, rec) in [
        ("Retry", Recommendation::Retry),
        ("skip", Recommendation::Skip),
        ("**Escalate**", Recommendation::Escalate),
    ] {
        let s = parse_signal(&format!("ANALYSIS COMPLETE: 1.2 - {word}"), "1.2")
            .signal
            .unwrap();
        assert_eq!(s.recommendation, Some(rec), "{word}");
    }
    let s = parse_signal("ANALYSIS COMPLETE: 1.2 - Maybe later", "1.2")
        .signal
        .unwrap();
    assert_eq!(s.recommendation, None);
}

impl SignalResult {
    fn verdict_reason_for_test(&self) -> Option<String> {
        match self.verdict() {
            Verdict::Blocked { reason } | Verdict::Failed { reason } => Some(reason),
            _ => None,
        }
    }
}

#[test]
fn last_valid_signal_for_the_right_id_wins() {
    let text = "IMPLEMENTATION BLOCKED: 1.2 - flaky\nretrying...\nIMPLEMENTATION COMPLETE: 1.2\nIMPLEMENTATION COMPLETE: 1.3\n";
    let r = parse_signal(text, "1.2");
    let s = r.signal.as_ref().unwrap();
    assert_eq!(s.kind, SignalKind::ImplementationComplete);
    assert_eq!(s.line, 3);
    assert_eq!(r.other_ids, vec!["1.3".to_string()]);
    assert_eq!(r.verdict(), Verdict::Success);
}

#[test]
fn quoted_fenced_indented_or_inline_signals_do_not_count() {
    for text in [
        "I will print IMPLEMENTATION COMPLETE: 1.2 when done.",
        "> IMPLEMENTATION COMPLETE: 1.2",
        "`IMPLEMENTATION COMPLETE: 1.2`",
        "```\nIMPLEMENTATION COMPLETE: 1.2\n```",
        "~~~~text\nIMPLEMENTATION COMPLETE: 1.2\n~~~\nstill inside\n~~~~",
        "    IMPLEMENTATION COMPLETE: 1.2",
        "- IMPLEMENTATION COMPLETE: 1.2",
    ] {
        let r = parse_signal(text, "1.2");
        assert!(r.signal.is_none(), "counted: {text:?}");
        assert!(matches!(r.verdict(), Verdict::Missing { .. }));
    }
    // After the fence closes, lines count again.
    let text = "```\nREVIEW FAILED: 1.2 - x\n```\nREVIEW PASSED: 1.2";
    assert_eq!(kind(text, "1.2"), Some(SignalKind::ReviewPassed));
}

#[test]
fn another_id_does_not_count() {
    let r = parse_signal("IMPLEMENTATION COMPLETE: 1.3", "1.2");
    assert!(r.signal.is_none());
    match r.verdict() {
        Verdict::Missing { message } => {
            assert!(message.contains("no completion signal"), "{message}");
            assert!(message.contains("1.3"), "{message}");
        }
        v => panic!("{v:?}"),
    }
    // 1.2 must not match 1.20 or 11.2.
    assert!(
        parse_signal("IMPLEMENTATION COMPLETE: 1.20", "1.2")
            .signal
            .is_none()
    );
    assert!(
        parse_signal("IMPLEMENTATION COMPLETE: 11.2", "1.2")
            .signal
            .is_none()
    );
}

#[test]
fn lenient_forms() {
    for text in [
        "**IMPLEMENTATION COMPLETE: 1.2**",
        "**IMPLEMENTATION COMPLETE:** 1.2",
        "IMPLEMENTATION COMPLETE: 1.2.",
        "IMPLEMENTATION COMPLETE: `1.2`",
        "implementation complete: story-1-2",
        "## IMPLEMENTATION COMPLETE: Story 1.2",
        "IMPLEMENTATION COMPLETE - 1.2",
        "  IMPLEMENTATION  COMPLETE: 1-2!",
        "__IMPLEMENTATION COMPLETE: 1_2__",
    ] {
        assert_eq!(
            kind(text, "story-1-2"),
            Some(SignalKind::ImplementationComplete),
            "{text:?}"
        );
    }
}

#[test]
fn id_normalisation() {
    assert_eq!(normalize_id("story-1-2"), "1.2");
    assert_eq!(normalize_id("Story 01.2"), "1.2");
    assert_eq!(normalize_id("1_2"), "1.2");
    assert_eq!(normalize_id("epic-42"), "42");
    assert_eq!(normalize_id("`auth-login`."), "auth.login");
    // A name that merely starts with "story" keeps it.
    assert_eq!(normalize_id("storyboard-1"), "storyboard.1");
    assert_ne!(normalize_id("1.2"), normalize_id("1.20"));
}

#[test]
fn status_block_goes_with_the_signal() {
    let text = r#"Done.

```json
{"status": "COMPLETE", "story_id": "1.2", "summary": "added login",
 "files_changed": ["src/a.rs", 3], "tests_added": 4,
 "decisions": [{"what": "bcrypt", "why": "standard"}],
 "issues": [{"severity": "low", "description": "naming", "location": "src/a.rs:3"}],
 "extra": true}
```

IMPLEMENTATION COMPLETE: 1.2
"#;
    let r = parse_signal(text, "1.2");
    let b = r.status.as_ref().unwrap();
    assert_eq!(b.status, Status::Complete);
    assert_eq!(b.summary.as_deref(), Some("added login"));
    assert_eq!(b.files_changed, vec!["src/a.rs".to_string()]);
    assert_eq!(b.tests_added, Some(serde_json::json!(4)));
    assert_eq!(b.decisions[0].why, "standard");
    assert_eq!(b.issues[0].location, "src/a.rs:3");
    assert_eq!(b.line, 3);
    assert_eq!(r.verdict(), Verdict::Success);
}

#[test]
fn contradicting_status_block_is_not_trusted() {
    let text = "```json\n{\"status\":\"FAILED\",\"story_id\":\"1.2\",\"summary\":\"tests red\"}\n```\nIMPLEMENTATION COMPLETE: 1.2";
    assert!(matches!(
        parse_signal(text, "1.2").verdict(),
        Verdict::Failed { .. }
    ));
    // A block for another story is ignored.
    let text =
        "```json\n{\"status\":\"FAILED\",\"story_id\":\"1.3\"}\n```\nIMPLEMENTATION COMPLETE: 1.2";
    let r = parse_signal(text, "1.2");
    assert!(r.status.is_none());
    assert_eq!(r.verdict(), Verdict::Success);
    // A block after the signal does not go with it.
    let text = "IMPLEMENTATION COMPLETE: 1.2\n```json\n{\"status\":\"FAILED\"}\n```";
    let r = parse_signal(text, "1.2");
    assert!(r.status.is_none());
}

#[test]
fn no_signal_keeps_the_status_block_for_diagnosis() {
    let text = "```json\n{\"status\":\"BLOCKED\",\"summary\":\"needs creds\"}\n```\nI stopped.";
    let r = parse_signal(text, "1.2");
    assert!(r.signal.is_none());
    assert_eq!(r.status.unwrap().status, Status::Blocked);
    let r = parse_signal("```json\nnot json\n```", "1.2");
    assert!(r.status.is_none());
}

#[test]
fn blocked_without_reason_and_crlf() {
    let r = parse_signal("text\r\nIMPLEMENTATION BLOCKED: 1.2\r\n", "1.2");
    assert_eq!(
        r.verdict(),
        Verdict::Blocked {
            reason: "no reason given".into()
        }
    );
    assert_eq!(r.signal.unwrap().id, "1.2");
}

mod prop {
    use super::super::*;
    use proptest::prelude::*;

    /// The built-in keywords as a [`Grammar`].
    fn builtin() -> Grammar<'static> {
        static KEYWORDS: std::sync::LazyLock<Vec<&str>> =
            std::sync::LazyLock::new(|| SignalKind::ALL.iter().map(|k| k.keyword()).collect());
        Grammar {
            success: &KEYWORDS,
            failure: &[],
        }
    }

    proptest! {
        #[test]
        fn never_panics(text in any::<String>(), id in any::<String>()) {
            let r = parse_signal(&text, &id);
            let _ = r.verdict();
            let _ = parse_grammar(&text, &id, builtin()).verdict();
        }

        #[test]
        fn never_panics_on_signal_like_text(
            lines in proptest::collection::vec(
                prop_oneof![
                    Just("```".to_string()),
                    Just("~~~".to_string()),
                    Just("**REVIEW PASSED WITH FIXES:** ".to_string()),
                    Just("RETRO COMPLETE: Epic".to_string()),
                    Just("Story story-1 x".to_string()),
                    "[A-Z :*_`#>\\-–—0-9.]{0,40}",
                    "\\PC{0,30}",
                ],
                0..20,
            ),
            id in "[a-z0-9._ -]{0,10}",
        ) {
            let text = lines.join("\n");
            let r = parse_signal(&text, &id);
            let _ = r.verdict();
            // The generic parser, given the built-in keywords, finds the same line (it only
            // adds the `Signal:` label).
            let g = parse_grammar(&text, &id, builtin());
            let _ = (g.verdict(), g.line());
            if !text.to_ascii_lowercase().contains("signal") {
                prop_assert_eq!(
                    r.signal.map(|s| (s.line, s.kind.keyword())),
                    g.signal.map(|f| (f.line, SignalKind::ALL.iter().find(|k| k.keyword() == f.keyword).unwrap().keyword()))
                );
            }
        }

        /// A well-formed signal line is always found, whatever prose surrounds it.
        #[test]
        fn well_formed_signal_found(before in "[a-z ,.]{0,200}", major in 0u32..100, minor in 0u32..100) {
            let id = format!("{major}.{minor}");
            let text = format!("{before}\nREVIEW PASSED: story-{major}-{minor}\n");
            let r = parse_signal(&text, &id);
            prop_assert_eq!(r.signal.map(|s| s.kind), Some(SignalKind::ReviewPassed));
        }
    }
}
