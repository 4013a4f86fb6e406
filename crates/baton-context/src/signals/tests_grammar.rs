use super::*;

const ORCH: Grammar = Grammar {
    success: &["ARCHITECT COMPLETE", "DESIGN AUDIT PASSED"],
    failure: &["DESIGN AUDIT FAILED"],
};
const IMPL: Grammar = Grammar {
    success: &["IMPLEMENTATION COMPLETE"],
    failure: &["IMPLEMENTATION BLOCKED"],
};
const TESTS: Grammar = Grammar {
    success: &["TEST RESULTS PASSED"],
    failure: &["TEST RESULTS FAILED"],
};
const REVIEW: Grammar = Grammar {
    success: &["REVIEW PASSED", "REVIEW PASSED WITH FIXES"],
    failure: &["REVIEW FAILED"],
};
const UAT: Grammar = Grammar {
    success: &["UAT COMPLETE"],
    failure: &[],
};

fn found(text: &str, id: &str, g: Grammar) -> Option<Found> {
    parse_grammar(text, id, g).signal
}

fn keyword(text: &str, id: &str, g: Grammar) -> Option<String> {
    found(text, id, g).map(|f| f.keyword)
}

#[test]
fn success_and_failure_keywords() {
    let r = parse_grammar("ARCHITECT COMPLETE: add-login", "add-login", ORCH);
    let f = r.signal.clone().unwrap();
    assert_eq!(f.keyword, "ARCHITECT COMPLETE");
    assert!(f.success);
    assert_eq!(f.id, "add-login");
    assert_eq!(f.detail, None);
    assert_eq!(f.line, 1);
    assert_eq!(r.verdict(), Verdict::Success);
    assert_eq!(r.line().as_deref(), Some("ARCHITECT COMPLETE: add-login"));

    let r = parse_grammar(
        "DESIGN AUDIT FAILED: add-login - no error handling",
        "add-login",
        ORCH,
    );
    assert!(!r.signal.as_ref().unwrap().success);
    assert_eq!(
        r.verdict(),
        Verdict::Failed {
            reason: "DESIGN AUDIT FAILED: no error handling".into()
        }
    );
    assert_eq!(
        r.line().as_deref(),
        Some("DESIGN AUDIT FAILED: add-login - no error handling")
    );

    let r = parse_grammar("TEST RESULTS FAILED: add-login", "add-login", TESTS);
    assert_eq!(
        r.verdict(),
        Verdict::Failed {
            reason: "TEST RESULTS FAILED: no reason given".into()
        }
    );
    let r = parse_grammar(
        "TEST RESULTS FAILED: add-login - 2 failing",
        "add-login",
        TESTS,
    );
    assert_eq!(
        r.verdict(),
        Verdict::Failed {
            reason: "TEST RESULTS FAILED: 2 failing".into()
        }
    );
}

#[test]
fn wrong_id_is_missing_and_names_the_other() {
    let r = parse_grammar("ARCHITECT COMPLETE: other-task", "add-login", ORCH);
    assert!(r.signal.is_none());
    assert_eq!(r.other_ids, vec!["other-task".to_string()]);
    assert_eq!(r.line(), None);
    assert_eq!(
        r.verdict(),
        Verdict::Missing {
            message: "no completion signal for add-login (found signals for: other-task)".into()
        }
    );
    match parse_grammar("nothing here", "add-login", ORCH).verdict() {
        Verdict::Missing { message } => {
            assert_eq!(message, "no completion signal for add-login")
        }
        v => panic!("{v:?}"),
    }
    // Another grammar's keywords are no signal at all.
    let r = parse_grammar("REVIEW PASSED: add-login", "add-login", ORCH);
    assert!(r.signal.is_none() && r.other_ids.is_empty());
}

#[test]
fn last_valid_signal_wins() {
    let text = "DESIGN AUDIT FAILED: add-login - first try\nfixing\nDESIGN AUDIT PASSED: add-login\nDESIGN AUDIT FAILED: other - x\n";
    let r = parse_grammar(text, "add-login", ORCH);
    let f = r.signal.as_ref().unwrap();
    assert_eq!(f.keyword, "DESIGN AUDIT PASSED");
    assert_eq!(f.line, 3);
    assert_eq!(r.other_ids, vec!["other".to_string()]);
    assert_eq!(r.verdict(), Verdict::Success);
    // And the other way round.
    let text = "DESIGN AUDIT PASSED: add-login\nDESIGN AUDIT FAILED: add-login: missing tests";
    let r = parse_grammar(text, "add-login", ORCH);
    assert_eq!(
        r.verdict(),
        Verdict::Failed {
            reason: "DESIGN AUDIT FAILED: missing tests".into()
        }
    );
}

#[test]
fn longest_keyword_first() {
    let f = found(
        "REVIEW PASSED WITH FIXES: 1.2 - Fixed 3 issues",
        "1.2",
        REVIEW,
    )
    .unwrap();
    assert_eq!(f.keyword, "REVIEW PASSED WITH FIXES");
    assert_eq!(f.detail.as_deref(), Some("Fixed 3 issues"));
    assert_eq!(
        keyword("REVIEW PASSED: 1.2", "1.2", REVIEW).as_deref(),
        Some("REVIEW PASSED")
    );
    // A keyword glued to more letters is no keyword.
    assert_eq!(keyword("REVIEW PASSEDX: 1.2", "1.2", REVIEW), None);
}

#[test]
fn signal_label_is_tolerated() {
    for text in [
        "Signal: ARCHITECT COMPLETE: add-login",
        "signal:ARCHITECT COMPLETE: add-login",
        "**Signal:** ARCHITECT COMPLETE: add-login",
        "SIGNAL : ARCHITECT COMPLETE: add-login",
    ] {
        assert_eq!(
            keyword(text, "add-login", ORCH).as_deref(),
            Some("ARCHITECT COMPLETE"),
            "{text:?}"
        );
    }
    let r = parse_grammar(
        "Fail signal: DESIGN AUDIT FAILED: add-login - vague",
        "add-login",
        ORCH,
    );
    assert_eq!(
        r.verdict(),
        Verdict::Failed {
            reason: "DESIGN AUDIT FAILED: vague".into()
        }
    );
    for text in [
        "Signals: ARCHITECT COMPLETE: add-login",
        "The signal: ARCHITECT COMPLETE: add-login",
        "> Signal: ARCHITECT COMPLETE: add-login",
        "`Signal: ARCHITECT COMPLETE: add-login`",
        "Failsignal: DESIGN AUDIT FAILED: add-login",
    ] {
        assert_eq!(found(text, "add-login", ORCH), None, "{text:?}");
    }
    // The built-in parser keeps its stricter rule.
    assert!(
        parse_signal("Signal: IMPLEMENTATION COMPLETE: 1.2", "1.2")
            .signal
            .is_none()
    );
}

#[test]
fn fenced_quoted_indented_or_inline_signals_do_not_count() {
    for text in [
        "I will print ARCHITECT COMPLETE: add-login when done.",
        "> ARCHITECT COMPLETE: add-login",
        "`ARCHITECT COMPLETE: add-login`",
        "```\nARCHITECT COMPLETE: add-login\n```",
        "~~~~text\nARCHITECT COMPLETE: add-login\n~~~\nstill inside\n~~~~",
        "    ARCHITECT COMPLETE: add-login",
        "\tARCHITECT COMPLETE: add-login",
        "- ARCHITECT COMPLETE: add-login",
    ] {
        let r = parse_grammar(text, "add-login", ORCH);
        assert!(r.signal.is_none(), "counted: {text:?}");
        assert!(matches!(r.verdict(), Verdict::Missing { .. }));
    }
    let text = "```\nDESIGN AUDIT PASSED: add-login\n```\nDESIGN AUDIT FAILED: add-login - x";
    assert_eq!(
        keyword(text, "add-login", ORCH).as_deref(),
        Some("DESIGN AUDIT FAILED")
    );
}

#[test]
fn lenient_forms() {
    for text in [
        "**ARCHITECT COMPLETE: add-login**",
        "**ARCHITECT COMPLETE:** add-login",
        "ARCHITECT COMPLETE: add-login.",
        "ARCHITECT COMPLETE: `add-login`",
        "architect complete: Add_Login",
        "## ARCHITECT COMPLETE: add-login",
        "ARCHITECT COMPLETE - add-login",
        "ARCHITECT COMPLETE add-login",
        "   ARCHITECT \t COMPLETE: add-login!",
        "__ARCHITECT COMPLETE: add.login__",
        "ARCHITECT COMPLETE: add-login\r",
    ] {
        let f = found(text, "add-login", ORCH);
        assert_eq!(
            f.as_ref().map(|f| f.keyword.as_str()),
            Some("ARCHITECT COMPLETE"),
            "{text:?}"
        );
    }
    // The id as written, trimmed but not normalised.
    assert_eq!(
        found("ARCHITECT COMPLETE: `Add_Login`.", "add-login", ORCH)
            .unwrap()
            .id,
        "Add_Login"
    );
    // Every reason separator.
    for sep in [" - ", " – ", " — ", ": ", " :"] {
        let text = format!("DESIGN AUDIT FAILED: add-login{sep}too vague.");
        let f = found(&text, "add-login", ORCH).unwrap();
        assert_eq!(f.detail.as_deref(), Some("too vague"), "{text:?}");
    }
}

#[test]
fn story_and_epic_words_join_the_id() {
    for id in ["1", "epic-1", "Epic 1"] {
        assert_eq!(
            keyword("UAT COMPLETE: Epic 1", id, UAT).as_deref(),
            Some("UAT COMPLETE"),
            "{id}"
        );
    }
    assert_eq!(found("UAT COMPLETE: Epic 1", "11", UAT), None);
    let f = found("UAT COMPLETE: Epic epic-1.", "1", UAT).unwrap();
    assert_eq!(f.id, "epic-1");
    let f = found(
        "IMPLEMENTATION COMPLETE: Story 1.2 - done",
        "story-1-2",
        IMPL,
    )
    .unwrap();
    assert_eq!(f.detail.as_deref(), Some("done"));
}

#[test]
fn slash_ids() {
    let text = "IMPLEMENTATION COMPLETE: add-login/3";
    assert!(found(text, "add-login/3", IMPL).is_some());
    assert!(found(text, "add_login/03", IMPL).is_some());
    assert!(found(text, "add-login/30", IMPL).is_none());
    assert!(found(text, "add-login", IMPL).is_none());
    let r = parse_grammar("IMPLEMENTATION COMPLETE: add-login", "add-login/3", IMPL);
    assert!(r.signal.is_none());
    assert_eq!(r.other_ids, vec!["add-login".to_string()]);
    let r = parse_grammar(
        "IMPLEMENTATION BLOCKED: add-login/3 - no db",
        "add-login/3",
        IMPL,
    );
    assert_eq!(
        r.line().as_deref(),
        Some("IMPLEMENTATION BLOCKED: add-login/3 - no db")
    );
    assert_eq!(normalize_id("add-login/3"), "add.login/3");
    assert_ne!(normalize_id("add-login/3"), normalize_id("add-login/30"));
    assert_ne!(normalize_id("add-login/3"), normalize_id("add-login"));
    assert_ne!(normalize_id("add-login/3"), normalize_id("add-login-3"));
}

#[test]
fn odd_grammars() {
    // Empty keywords never match everything; a keyword in both lists is success.
    let g = Grammar {
        success: &["", "DONE"],
        failure: &["  ", "done"],
    };
    assert!(found("add-login", "add-login", g).is_none());
    assert!(found("done: x", "x", g).unwrap().success);
    let g = Grammar {
        success: &[],
        failure: &[],
    };
    assert!(found("ARCHITECT COMPLETE: x", "x", g).is_none());
    // Keywords with regex metacharacters are plain text.
    let g = Grammar {
        success: &["C++ DONE (OK)"],
        failure: &[],
    };
    assert!(found("c++  done (ok): x", "x", g).is_some());
    assert!(found("C DONE OK: x", "x", g).is_none());
}

mod prop {
    use super::super::*;
    use proptest::prelude::*;

    const G: Grammar = Grammar {
        success: &[
            "ARCHITECT COMPLETE",
            "REVIEW PASSED",
            "REVIEW PASSED WITH FIXES",
        ],
        failure: &["DESIGN AUDIT FAILED", "ÉCHEC"],
    };

    proptest! {
        #[test]
        fn never_panics(text in any::<String>(), id in any::<String>()) {
            let r = parse_grammar(&text, &id, G);
            let _ = (r.verdict(), r.line());
        }

        #[test]
        fn never_panics_on_signal_like_text(
            lines in proptest::collection::vec(
                prop_oneof![
                    Just("```".to_string()),
                    Just("~~~".to_string()),
                    Just("**Signal:** ".to_string()),
                    Just("Fail signal: DESIGN AUDIT FAILED".to_string()),
                    Just("échec: é".to_string()),
                    "[A-Za-z :*_`#>/\\-–—0-9.]{0,40}",
                    "\\PC{0,30}",
                ],
                0..20,
            ),
            id in "[a-z0-9._ /-]{0,10}",
        ) {
            let r = parse_grammar(&lines.join("\n"), &id, G);
            let _ = (r.verdict(), r.line());
        }

        /// A well-formed signal line is always found, whatever prose surrounds it.
        #[test]
        fn well_formed_signal_found(
            before in "[a-z ,.]{0,200}",
            slug in "[a-z]{1,8}(-[a-z]{1,8}){0,2}",
            n in 0u32..100,
        ) {
            let id = format!("{slug}/{n}");
            let text = format!("{before}\nSignal: DESIGN AUDIT FAILED: {id} - because\n");
            let r = parse_grammar(&text, &id, G);
            prop_assert_eq!(
                r.verdict(),
                Verdict::Failed { reason: "DESIGN AUDIT FAILED: because".into() }
            );
        }
    }
}
