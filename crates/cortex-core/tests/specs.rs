//! The spec in the session: each phase proposed by the spec tool in order
//! and validated (the errors are the model's to read), accepted or rejected
//! by the user only, discarded by leaving Spec mode, and rebuilt from the
//! timeline on resume. The full flow that writes the files is in the
//! server's tests/spec.rs.

mod common;

use common::*;
use cortex_core::{SpecError, TurnOutcome};
use cortex_protocol::{Mode, SpecPhase, ToolStatus};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const REQ: &str = "# CSV export\n## Story 1\nAs a user I want a CSV.\n- WHEN the user runs export THE SYSTEM SHALL write out.csv\n";
const DESIGN: &str = "# Design\nOne function.\n```mermaid\nflowchart TD\n  A-->B\n```\n";
const TASKS: &str = "# Tasks\n- [ ] add export()\n- [ ] test it\n";

fn spec_call(phase: &str, markdown: &str) -> serde_json::Value {
    json!({"tool_calls": [{"name": "spec", "arguments": {"phase": phase, "markdown": markdown}}]})
}

/// A model that proposes each phase in its turn, then answers `last`.
fn every_phase_then(last: &str) -> serde_json::Value {
    json!({"responses": [
        spec_call("requirements", REQ),
        {"text": "requirements"},
        spec_call("design", DESIGN),
        {"text": "design"},
        spec_call("tasks", TASKS),
        {"text": "tasks"},
        {"text": last},
    ]})
}

/// The three phases proposed (one turn each) and accepted; the message of
/// the implementing turn.
async fn accept_every_phase(h: &mut Harness) -> String {
    run(h, "spec a CSV export").await;
    for _ in 0..2 {
        let ask = h.session.accept_spec().await.expect("accept");
        run(h, &ask).await;
    }
    h.session.accept_spec().await.expect("accept tasks")
}

async fn run(h: &mut Harness, message: &str) {
    h.session
        .run_turn(message, CancellationToken::new())
        .await
        .expect("turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phases_are_validated_and_proposed_in_order_and_survive_resume() {
    let script = json!({"responses": [
        spec_call("design", DESIGN),
        spec_call("requirements", "# CSV export\nThe system exports."),
        spec_call("requirements", REQ),
        {"text": "requirements proposed"},
        spec_call("design", "# Design\nno diagram"),
        spec_call("design", DESIGN),
        {"text": "design proposed"},
        spec_call("tasks", "# Tasks\n1. add export()"),
        spec_call("tasks", TASKS),
        {"text": "tasks proposed"},
    ]});
    let mut h = harness(&[("a.py", "x = 1\n")], Mode::Spec, script).await;
    let before = snapshot(h.repo.path());
    assert!(matches!(
        h.session.accept_spec().await,
        Err(SpecError::NoProposedSpec)
    ));
    run(&mut h, "spec a CSV export").await;
    assert_eq!(h.session.spec().current_phase(), SpecPhase::Requirements);
    let ask = h.session.accept_spec().await.expect("accept requirements");
    assert!(
        ask.contains("\"design\"") && ask.contains("mermaid"),
        "{ask}"
    );
    assert_eq!(h.session.spec().current_phase(), SpecPhase::Design);
    run(&mut h, &ask).await;
    let ask = h.session.accept_spec().await.expect("accept design");
    assert!(ask.contains("\"tasks\"") && ask.contains("- [ ]"), "{ask}");
    run(&mut h, &ask).await;

    let results = h.results().await;
    let statuses: Vec<_> = results.iter().map(|(_, s, _)| *s).collect();
    use ToolStatus::{Error, Ok};
    assert_eq!(statuses, [Error, Error, Ok, Error, Ok, Error, Ok]);
    let errors: Vec<&str> = results
        .iter()
        .filter(|(_, s, _)| *s == Error)
        .map(|(_, _, o)| o.as_str())
        .collect();
    assert!(errors[0].contains("requirements phase"), "{}", errors[0]);
    assert!(
        errors[1].contains("WHEN <event> THE SYSTEM SHALL"),
        "{}",
        errors[1]
    );
    assert!(errors[2].contains("```mermaid"), "{}", errors[2]);
    assert!(errors[3].contains("- [ ]"), "{}", errors[3]);

    let spec = h.session.spec().clone();
    let proposed = spec.proposed.clone().expect("tasks wait");
    assert_eq!((proposed.phase, proposed.version), (SpecPhase::Tasks, 3));
    let accepted: Vec<_> = spec.accepted.iter().map(|p| p.markdown.as_str()).collect();
    assert_eq!(accepted, [REQ, DESIGN]);
    assert_eq!(h.session.mode(), Mode::Spec);
    // Nothing is written before the last accept.
    assert_eq!(snapshot(h.repo.path()), before);

    let resumed = h.resumed().await;
    assert_eq!(resumed.spec(), &spec);
    assert_eq!(resumed.mode(), Mode::Spec);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_keeps_spec_mode_and_leaving_spec_discards_it() {
    let script = json!({"responses": [
        spec_call("requirements", REQ),
        {"text": "proposed"},
        spec_call("requirements", REQ),
        {"text": "proposed again"},
    ]});
    let mut h = harness(&[], Mode::Spec, script).await;
    run(&mut h, "spec it").await;
    assert!(matches!(
        h.session.reject_spec(" ").await,
        Err(SpecError::EmptyFeedback)
    ));
    let message = h
        .session
        .reject_spec("one more story")
        .await
        .expect("reject");
    assert!(message.contains("one more story") && message.contains("requirements"));
    assert_eq!(h.session.mode(), Mode::Spec);
    assert!(h.session.spec().proposed.is_none());
    assert!(matches!(
        h.session.accept_spec().await,
        Err(SpecError::NoProposedSpec)
    ));
    run(&mut h, &message).await;
    h.session.accept_spec().await.expect("accept requirements");
    assert_eq!(h.session.spec().accepted.len(), 1);

    h.session.set_mode(Mode::Agent).await.expect("leave spec");
    assert_eq!(h.session.spec().current_phase(), SpecPhase::Requirements);
    assert!(h.session.spec().accepted.is_empty());
    assert!(matches!(
        h.session.accept_spec().await,
        Err(SpecError::NoProposedSpec)
    ));
    assert!(!h.repo.path().join("specs").exists());
    let resumed = h.resumed().await;
    assert_eq!(resumed.spec(), h.session.spec());
    assert_eq!(resumed.spec().last_version, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_spec_is_written_by_the_guest_after_a_restart_and_never_through_a_link() {
    let script = every_phase_then("implemented");
    let mut h = harness(&[("a.py", "x = 1\n")], Mode::Spec, script).await;
    let task = accept_every_phase(&mut h).await;
    assert_eq!(h.session.mode(), Mode::Agent);
    let files = [
        "specs/csv-export/requirements.md",
        "specs/csv-export/design.md",
        "specs/csv-export/tasks.md",
    ];
    assert_eq!(h.session.spec().unwritten(), files);
    // A hostile repository: `specs` links outside the workspace.
    let outside = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(outside.path(), h.repo.path().join("specs")).expect("symlink");

    // The server restarts between the accept and the turn.
    let mut resumed = h.resumed().await;
    assert_eq!(resumed.spec().unwritten(), files);
    let outcome = resumed
        .run_turn(&task, CancellationToken::new())
        .await
        .expect("turn");
    let TurnOutcome::Failed { error } = outcome else {
        panic!("written through a link: {outcome:?}");
    };
    assert!(
        error.contains("specs/csv-export/requirements.md"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_dir(outside.path()).expect("outside").count(),
        0
    );
    assert_eq!(resumed.spec().unwritten(), files, "still waiting");

    std::fs::remove_file(h.repo.path().join("specs")).expect("unlink");
    resumed
        .run_turn(&task, CancellationToken::new())
        .await
        .expect("turn");
    for (path, want) in files.iter().zip([REQ, DESIGN, TASKS]) {
        let got = std::fs::read_to_string(h.repo.path().join(path)).expect(path);
        assert_eq!(got, want, "{path}");
    }
    assert!(resumed.spec().unwritten().is_empty());
    let types = h.types().await;
    assert_eq!(types.iter().filter(|t| **t == "spec.written").count(), 1);
    assert!(h.resumed().await.spec().unwritten().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_agent_before_the_write_gives_the_files_up() {
    let script = every_phase_then("looked");
    let mut h = harness(&[], Mode::Spec, script).await;
    accept_every_phase(&mut h).await;
    h.session.set_mode(Mode::Ask).await.expect("ask");
    assert!(h.session.spec().unwritten().is_empty());
    run(&mut h, "look around").await;
    assert!(!h.repo.path().join("specs").exists());
    assert!(h.resumed().await.spec().unwritten().is_empty());
}
