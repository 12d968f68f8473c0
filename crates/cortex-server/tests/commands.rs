//! Custom commands over the API: `GET …/commands` lists the repository's and
//! the user's commands with the rejected files and why; `POST …/commands`
//! runs one as a turn whose message is its text with the arguments
//! substituted and an `@path` file included, in the session's own mode
//! whatever the command's front matter asks.

mod common;

use common::{ALICE, BOB, Server, start_with};
use cortex_protocol::{EventKind, Mode};
use cortex_server::ServerConfig;
use reqwest::Method;
use serde_json::json;
use std::time::Duration;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_listed_and_run_with_arguments_and_includes() {
    let config = tempfile::tempdir().expect("tempdir");
    write(&config.path().join("commands/mine.md"), "My own $ARGUMENTS");
    let server = start_with(ServerConfig {
        heartbeat: Duration::from_millis(200),
        harness_dirs: cortex_core::HarnessDirs::new().with("config", config.path()),
        ..ServerConfig::default()
    })
    .await;
    let repo = server.repo.path();
    write(
        &repo.join(".cortex/commands/review.md"),
        "---\ndescription: Review a file\nargument-hint: <file> <focus>\nmode: agent\n---\n\
         Review @$1 for $2.\n",
    );
    write(
        &repo.join(".claude/commands/empty.md"),
        "---\ndescription: x\n---\n",
    );
    std::os::unix::fs::symlink("/etc/passwd", repo.join(".cortex/commands/pw.md")).expect("link");
    let id = server
        .session_in("plan", json!({"responses": [{"text": "Reviewed."}]}))
        .await;

    let (status, list) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/commands"),
            Some(ALICE),
            None,
        )
        .await;
    assert_eq!(status, 200, "{list}");
    let names: Vec<_> = list["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().expect("name"),
                c["scope"].as_str().expect("scope"),
            )
        })
        .collect();
    assert_eq!(names, [("mine", "user"), ("review", "repository")]);
    assert_eq!(list["commands"][1]["description"], "Review a file");
    assert_eq!(list["commands"][1]["argument_hint"], "<file> <focus>");
    let rejected: Vec<_> = list["rejected"]
        .as_array()
        .expect("rejected")
        .iter()
        .map(|r| {
            format!(
                "{}: {}",
                r["path"].as_str().expect("path"),
                r["reason"].as_str().expect("reason")
            )
        })
        .collect();
    assert_eq!(
        rejected,
        [
            ".cortex/commands/pw.md: a symbolic link: not followed",
            ".claude/commands/empty.md: the prompt is empty",
        ]
    );
    // Another principal's session answers as if it did not exist.
    let (status, _) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/commands"),
            Some(BOB),
            None,
        )
        .await;
    assert_eq!(status, 404);

    let (status, body) = server
        .send(
            Method::POST,
            &format!("/v1/sessions/{id}/commands"),
            Some(ALICE),
            Some(json!({"name": "nope"})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["code"], "unknown_command");

    let mut sse = server.events(&id, ALICE, None).await;
    let (status, body) = server
        .send(
            Method::POST,
            &format!("/v1/sessions/{id}/commands"),
            Some(ALICE),
            Some(json!({"name": "/review", "arguments": "a.txt 'the style'"})),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    let kinds = Server::turn_kinds(&mut sse).await;
    let started = kinds
        .iter()
        .find_map(|k| match k {
            EventKind::TurnStarted { message, mode } => Some((message.clone(), *mode)),
            _ => None,
        })
        .expect("turn.started");
    // The message is the command's text; the file it includes was read in
    // the session's guest once attached, and given as the turn's context.
    assert_eq!(started.0, "Review @a.txt for the style.");
    assert!(
        kinds.iter().any(|k| matches!(k, EventKind::TurnContext { text }
            if text == "The files the command includes (`@path`), read from the workspace:\n\n`a.txt`:\n```\nalpha\n```")),
        "{kinds:#?}"
    );
    // The front matter's `mode: agent` is not honoured: Plan stays Plan.
    assert_eq!(started.1, Mode::Plan);
    assert!(
        kinds
            .iter()
            .any(|k| matches!(k, EventKind::TurnCompleted { .. })),
        "{kinds:#?}"
    );
}
