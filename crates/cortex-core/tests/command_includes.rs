//! A custom command's `@path` includes (issue 40, item 1) are read in the
//! session's guest once attached, with the guest's `read_file`: a file only
//! the guest's workspace has (an isolated copy's) is included, and a link
//! that leads out of the workspace is refused. The message keeps the
//! command's text; the files arrive as the turn's context, next to it.

mod common;

use common::{config, write};
use cortex_core::Session;
use cortex_core::commands::{Command, expand};
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{
    CommandInfo, EventKind, ExtensionScope, Mode, Role, Sandbox, StopRule, WorkspaceMode,
};
use cortex_store::{SqliteStore, Store};
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

fn command(body: &str) -> Command {
    Command {
        info: CommandInfo {
            name: "review".into(),
            description: "Review".into(),
            argument_hint: None,
            mode: None,
            model: None,
            scope: ExtensionScope::Repository,
            path: ".cortex/commands/review.md".into(),
        },
        body: body.into(),
    }
}

/// The messages of every `turn.started` and the texts of every
/// `turn.context`, in order.
async fn started_and_context(
    store: &Arc<dyn Store>,
    session: &Session,
) -> (Vec<String>, Vec<String>) {
    let events = store.events(session.id(), 0).await.expect("events");
    let mut started = Vec::new();
    let mut context = Vec::new();
    for e in events {
        match e.kind {
            EventKind::TurnStarted { message, .. } => started.push(message),
            EventKind::TurnContext { text } => context.push(text),
            _ => {}
        }
    }
    (started, context)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_include_is_read_in_the_guests_workspace() {
    let repo = tempfile::tempdir().expect("repo");
    write(repo.path(), "a.txt", "alpha\n");
    let copies = tempfile::tempdir().expect("copies");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let model = Arc::new(
        ScriptedProvider::from_json(
            &json!({"responses": [
                {"tool_calls": [{"name": "write_file",
                    "arguments": {"path": "made.txt", "content": "made in the guest\n"}}]},
                {"text": "written"},
                {"text": "reviewed"}
            ]})
            .to_string(),
        )
        .expect("script"),
    );
    let mut cfg = config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Agent,
        StopRule::Code,
    );
    cfg.sandbox = Sandbox {
        workspace: WorkspaceMode::Copy,
        ..Sandbox::default()
    };
    cfg.workspaces = Some(copies.path().to_path_buf());
    let mut session = Session::create(cfg).await.expect("session");
    session
        .run_turn("write made.txt", CancellationToken::new())
        .await
        .expect("turn");
    // Only the guest's copy has the file.
    assert!(!repo.path().join("made.txt").exists());
    // The host's repository changes after the copy was made: the guest's
    // view is still the one read.
    write(repo.path(), "a.txt", "changed on the host\n");

    let input = expand(&command("Review @made.txt and @a.txt for $1."), "style");
    assert_eq!(input.includes, ["made.txt", "a.txt"]);
    session
        .run_user_turn_as(Session::new_turn_id(), input, CancellationToken::new())
        .await
        .expect("command turn");

    let (started, context) = started_and_context(&store, &session).await;
    assert_eq!(started[1], "Review @made.txt and @a.txt for style.");
    let included = "The files the command includes (`@path`), read from the workspace:\n\n\
        `made.txt`:\n```\nmade in the guest\n```\n\n`a.txt`:\n```\nalpha\n```";
    assert!(context.iter().any(|c| c == included), "{context:#?}");
    // The model gets the files right before the command's text.
    let requests = model.requests();
    let last = requests.last().expect("a request");
    let user = last
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .expect("the command's message");
    assert!(
        user.content.ends_with(&format!(
            "{included}\n\nReview @made.txt and @a.txt for style."
        )),
        "{}",
        user.content
    );
    // The first turn, a plain message, included nothing.
    assert_eq!(
        context
            .iter()
            .filter(|c| c.starts_with("The files the command"))
            .count(),
        1
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_include_through_a_link_out_of_the_workspace_is_refused() {
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("secret.txt"), "HOST SECRET\n").expect("secret");
    let repo = tempfile::tempdir().expect("repo");
    write(repo.path(), "src/a.py", "print(1)\n");
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        repo.path().join("pw.txt"),
    )
    .expect("link");
    std::os::unix::fs::symlink(outside.path(), repo.path().join("out")).expect("link");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let model = Arc::new(
        ScriptedProvider::from_json(&json!({"responses": [{"text": "ok"}]}).to_string())
            .expect("script"),
    );
    let cfg = config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Ask,
        StopRule::Code,
    );
    let mut session = Session::create(cfg).await.expect("session");
    let input = expand(
        &command("See @src/a.py, @pw.txt, @out/secret.txt and @../secret.txt."),
        "",
    );
    session
        .run_user_turn_as(Session::new_turn_id(), input, CancellationToken::new())
        .await
        .expect("turn");

    let (_, context) = started_and_context(&store, &session).await;
    let included = context
        .iter()
        .find(|c| c.starts_with("The files the command includes"))
        .expect("the includes");
    assert!(
        included.contains("`src/a.py`:\n```\nprint(1)\n```"),
        "{included}"
    );
    for refused in ["@pw.txt [not included: ", "@out/secret.txt [not included: "] {
        assert!(included.contains(refused), "{refused}: {included}");
    }
    assert!(
        included.contains(
            "@../secret.txt [not included: only a path inside the workspace, without `..`, can be included]"
        ),
        "{included}"
    );
    let requests = model.requests();
    assert!(
        requests
            .iter()
            .flat_map(|r| &r.messages)
            .all(|m| !m.content.contains("HOST SECRET")),
        "the file behind the link reached the model"
    );
    session.close().await;
}
