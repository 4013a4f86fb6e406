//! Unit tests of the crate's root: cancel tokens, output tails, invocations.

use super::*;

#[test]
fn a_cancel_reaches_every_descendant_and_no_ancestor() {
    let root = CancelToken::new();
    let (child, sibling) = (root.child(), root.child());
    let grandchild = child.child();
    grandchild.cancel();
    assert!(grandchild.is_cancelled());
    assert!(!child.is_cancelled() && !root.is_cancelled());
    child.cancel();
    assert!(!sibling.is_cancelled() && !root.is_cancelled());
    let late = sibling.child().child();
    root.cancel();
    assert!(sibling.is_cancelled() && late.is_cancelled());
}

#[test]
fn tail_cuts_at_char_boundary() {
    let s = "é".repeat(10);
    let t = tail_str(&s, 5);
    assert_eq!(t, "éé");
    assert_eq!(tail_str("abc", 10), "abc");
}

#[test]
fn command_needs_program_and_sim_is_refused() {
    let req = AgentRequest::new("p", ".", ".", "x");
    let e = invocation(&AgentSpec::new(AgentKind::Command), &req).unwrap_err();
    assert_eq!(
        baton_core::error::Fault::kind(&e),
        baton_core::error::Kind::Invalid
    );
    let e = run(&AgentSpec::new(AgentKind::Sim), &req).unwrap_err();
    assert!(e.to_string().contains("sim"), "{e}");
    let mut spec = AgentSpec::command("prog", &["--x"]);
    spec.prompt_via = PromptVia::Argv;
    let inv = invocation(&spec, &req).unwrap();
    assert_eq!(inv.args, vec!["--x", "p"]);
    assert!(!inv.prompt_on_stdin);
}
