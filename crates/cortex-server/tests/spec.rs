//! The spec flow over the API: a scripted model proposes requirements,
//! design and tasks in Spec mode, each accepted (or rejected) by the user;
//! the files `specs/<slug>/…` appear only after the last accept, written by
//! the guest with the accepted contents, and the implementing turn runs in
//! Agent mode with the todo list seeded from the tasks. A decline (reject,
//! or leaving Spec) writes nothing.

mod common;

use common::{ALICE, Server, start};
use cortex_protocol::{EventKind, Mode, SpecPhase, TodoStatus, ToolStatus};
use reqwest::Method;
use serde_json::json;

const REQ_V1: &str = "# CSV export\n- WHEN the user exports THE SYSTEM SHALL write out.csv\n";
const REQ_V2: &str = "# CSV export\n## Story 1\nAs a user I want a CSV.\n- WHEN the user exports THE SYSTEM SHALL write out.csv\n- WHEN the table is empty THE SYSTEM SHALL write the header only\n";
const DESIGN: &str = "# Design\nOne module.\n```mermaid\nflowchart TD\n  Table-->Csv\n```\n";
const TASKS: &str = "# Tasks\n- [ ] write out.csv\n- [ ] handle the empty table\n";

fn spec_call(phase: &str, markdown: &str) -> serde_json::Value {
    json!({"tool_calls": [{"name": "spec", "arguments": {"phase": phase, "markdown": markdown}}]})
}

async fn verdict(
    server: &Server,
    id: &str,
    what: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    server.verdict(id, &format!("spec/{what}"), body).await
}

fn proposed(kinds: &[EventKind]) -> Option<(SpecPhase, u32)> {
    kinds.iter().find_map(|k| match k {
        EventKind::SpecProposed { phase, version, .. } => Some((*phase, *version)),
        _ => None,
    })
}

fn started(kinds: &[EventKind]) -> (String, Mode) {
    kinds
        .iter()
        .find_map(|k| match k {
            EventKind::TurnStarted { message, mode } => Some((message.clone(), *mode)),
            _ => None,
        })
        .expect("a turn started")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_phases_write_the_accepted_files_only_after_the_last_accept() {
    let server = start().await;
    let id = server.session_in(
        "spec",
        json!({"responses": [
            spec_call("tasks", TASKS),
            spec_call("requirements", REQ_V1),
            {"text": "Requirements v1."},
            spec_call("requirements", REQ_V2),
            {"text": "Requirements v2."},
            spec_call("design", DESIGN),
            {"text": "Design."},
            spec_call("tasks", TASKS),
            {"text": "Tasks."},
            {"tool_calls": [{"name": "write_file", "arguments": {"path": "out.csv", "content": "a\n"}}]},
            {"text": "Implemented."}
        ]}),
    )
    .await;
    let specs = server.repo.path().join("specs");
    let (status, body) = verdict(&server, &id, "accept", None).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("no_proposed_spec"))
    );

    let mut sse = server.events(&id, ALICE, None).await;
    assert_eq!(server.turn(&id, "spec a CSV export").await.0, 202);
    let first = Server::turn_kinds(&mut sse).await;
    let statuses: Vec<ToolStatus> = first
        .iter()
        .filter_map(|k| match k {
            EventKind::ToolResult { status, .. } => Some(*status),
            _ => None,
        })
        .collect();
    // Tasks before the requirements is the model's error to read.
    assert_eq!(statuses, [ToolStatus::Error, ToolStatus::Ok]);
    assert_eq!(proposed(&first), Some((SpecPhase::Requirements, 1)));

    let (status, body) = verdict(&server, &id, "reject", Some(json!({"feedback": ""}))).await;
    assert_eq!(status, 422, "{body}");
    let feedback = json!({"feedback": "cover the empty table"});
    let (status, body) = verdict(&server, &id, "reject", Some(feedback)).await;
    assert_eq!(status, 202, "{body}");
    let rejected = Server::turn_kinds(&mut sse).await;
    let (message, mode) = started(&rejected);
    assert_eq!(mode, Mode::Spec);
    assert!(message.contains("cover the empty table"), "{message}");
    assert_eq!(proposed(&rejected), Some((SpecPhase::Requirements, 2)));

    let mut versions = Vec::new();
    for next in [SpecPhase::Design, SpecPhase::Tasks] {
        let (status, body) = verdict(&server, &id, "accept", None).await;
        assert_eq!(status, 202, "{body}");
        let kinds = Server::turn_kinds(&mut sse).await;
        let (message, mode) = started(&kinds);
        assert_eq!(mode, Mode::Spec);
        assert!(message.contains(&format!("\"{next}\"")), "{message}");
        let (phase, version) = proposed(&kinds).expect("proposed");
        assert_eq!(phase, next);
        versions.push(version);
        assert!(!specs.exists(), "nothing is written before the last accept");
    }
    assert_eq!(versions, [3, 4]);

    let (status, body) = verdict(&server, &id, "accept", None).await;
    assert_eq!(status, 202, "{body}");
    let done = Server::turn_kinds(&mut sse).await;
    let order: Vec<&str> = done.iter().map(|k| k.type_name()).collect();
    let at = |name: &str| order.iter().position(|t| *t == name).unwrap_or(usize::MAX);
    assert!(
        at("spec.accepted") < at("mode.changed")
            && at("mode.changed") < at("turn.started")
            && at("turn.started") < at("spec.written")
            && at("spec.written") < at("model.request"),
        "{order:?}"
    );
    let (message, mode) = started(&done);
    assert_eq!(mode, Mode::Agent);
    assert!(message.contains("specs/csv-export/tasks.md"), "{message}");
    let todos = done
        .iter()
        .find_map(|k| match k {
            EventKind::TodoUpdated { todos } => Some(todos.clone()),
            _ => None,
        })
        .expect("todos seeded");
    let contents: Vec<_> = todos.iter().map(|t| t.content.as_str()).collect();
    assert_eq!(contents, ["write out.csv", "handle the empty table"]);
    assert!(todos.iter().all(|t| t.status == TodoStatus::Pending));
    assert!(matches!(done.last(), Some(EventKind::TurnCompleted { .. })));

    let dir = specs.join("csv-export");
    for (file, want) in [
        ("requirements.md", REQ_V2),
        ("design.md", DESIGN),
        ("tasks.md", TASKS),
    ] {
        let got = std::fs::read_to_string(dir.join(file)).expect(file);
        assert_eq!(got, want, "{file}");
    }
    assert_eq!(std::fs::read_dir(&specs).expect("specs").count(), 1);
    let written = std::fs::read_to_string(server.repo.path().join("out.csv")).expect("out");
    assert_eq!(written, "a\n");
    let (status, body) = verdict(&server, &id, "accept", None).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("no_proposed_spec"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_spec_mode_writes_nothing_and_ends_the_spec() {
    let server = start().await;
    let id = server
        .session_in(
            "spec",
            json!({"responses": [
                spec_call("requirements", REQ_V1),
                {"text": "Requirements."},
                spec_call("design", DESIGN),
                {"text": "Design."},
            ]}),
        )
        .await;
    let mut sse = server.events(&id, ALICE, None).await;
    server.turn(&id, "spec it").await;
    Server::turn_kinds(&mut sse).await;
    let (status, body) = verdict(&server, &id, "accept", None).await;
    assert_eq!(status, 202, "{body}");
    Server::turn_kinds(&mut sse).await;
    server.idle(&id).await;

    let (status, body) = server
        .send(
            Method::PUT,
            &format!("/v1/sessions/{id}/mode"),
            Some(ALICE),
            Some(json!({"mode": "agent"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    for (what, body) in [
        ("accept", None),
        ("reject", Some(json!({"feedback": "no"}))),
    ] {
        let (status, answer) = verdict(&server, &id, what, body).await;
        assert_eq!(status, 409, "{answer}");
        assert_eq!(answer["error"]["code"], "no_proposed_spec");
    }
    assert!(!server.repo.path().join("specs").exists());
}
