//! Subagents: `task` calls run child sessions with their own history, in
//! parallel, never with more tools than the parent's mode, stopped with the
//! parent, their failures tool errors, their use counted for the parent.

mod common;

use common::{Harness, harness};
use cortex_protocol::{ApprovalPolicy, Event, EventKind, Mode, SessionId, ToolStatus};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A `task` call.
fn task(kind: &str, description: &str, prompt: &str) -> Value {
    json!({"name": "task", "arguments": {"kind": kind, "description": description, "prompt": prompt}})
}

fn children(events: &[Event]) -> Vec<SessionId> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubagentStarted { child, .. } => Some(child.clone()),
            _ => None,
        })
        .collect()
}

async fn child_events(h: &Harness, child: &SessionId) -> Vec<Event> {
    h.store.events(child, 0).await.expect("child events")
}

/// (status, output) of each tool result of a session's events.
fn results(events: &[Event]) -> Vec<(String, ToolStatus, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult {
                name,
                status,
                output,
                ..
            } => Some((name.clone(), *status, output.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn three_explore_children_run_at_once_and_only_their_answers_return() {
    let mut script = vec![json!({"when": "PARENT", "tool_calls": [
        task("explore", "find alpha", "CHILD-A: where is alpha?"),
        task("explore", "find beta", "CHILD-B: where is beta?"),
        task("explore", "find gamma", "CHILD-C: where is gamma?"),
    ]})];
    for (tag, file) in [
        ("CHILD-A", "a.txt"),
        ("CHILD-B", "b.txt"),
        ("CHILD-C", "c.txt"),
    ] {
        script.push(json!({"when": tag, "tool_calls": [
            {"name": "read_file", "arguments": {"path": file}}
        ]}));
        // Long enough that every child has started before one answers.
        script.push(
            json!({"when": tag, "delay_ms": 400, "text": format!("{tag} found it in {file}")}),
        );
    }
    script.push(json!({"when": "PARENT", "text": "All three found."}));
    let files = [
        ("a.txt", "alpha\n"),
        ("b.txt", "beta\n"),
        ("c.txt", "gamma\n"),
    ];
    let mut h = harness(&files, Mode::Agent, json!({"responses": script})).await;
    let outcome = h
        .session
        .run_turn("PARENT: find them", CancellationToken::new())
        .await
        .expect("turn");
    assert!(
        matches!(outcome, cortex_core::TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );

    let events = h.events().await;
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.type_name()).collect();
    let first_end = kinds
        .iter()
        .position(|k| *k == "subagent.ended")
        .expect("ended");
    let starts: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == "subagent.started")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(starts.len(), 3);
    assert!(
        starts.iter().all(|s| *s < first_end),
        "ran one after another: {kinds:?}"
    );
    assert_eq!(kinds.iter().filter(|k| **k == "subagent.step").count(), 3);

    // Only each child's final answer is the parent's result.
    let parent = results(&events);
    assert_eq!(parent.len(), 3, "{parent:?}");
    for (tag, file) in [
        ("CHILD-A", "a.txt"),
        ("CHILD-B", "b.txt"),
        ("CHILD-C", "c.txt"),
    ] {
        let wanted = format!("{tag} found it in {file}");
        assert!(
            parent
                .iter()
                .any(|(n, s, o)| n == "task" && *s == ToolStatus::Ok && *o == wanted),
            "{parent:?}"
        );
    }
    // The children's reads are in their own timelines, not the parent's.
    assert!(parent.iter().all(|(name, ..)| name == "task"));
    for child in children(&events) {
        let record = h
            .store
            .get_session(&child)
            .await
            .expect("get")
            .expect("child");
        let link = record.parent.expect("linked");
        assert_eq!(&link.session, h.session.id());
        assert_eq!(record.mode, Mode::Ask, "explore is read-only");
        let mine = results(&child_events(&h, &child).await);
        assert_eq!(mine.len(), 1);
        assert_eq!(mine[0].0, "read_file");
    }
    // Each child's tokens are on its `subagent.ended`.
    for event in &events {
        if let EventKind::SubagentEnded { used, status, .. } = &event.kind {
            assert_eq!(*status, ToolStatus::Ok);
            assert!(used.input_tokens > 0 && used.output_tokens > 0, "{used:?}");
        }
    }
    // The children's requests had their own histories.
    for request in h.model.requests() {
        let user = &request.messages[0].content;
        let tags = ["PARENT", "CHILD-A", "CHILD-B", "CHILD-C"];
        assert_eq!(
            tags.iter().filter(|t| user.contains(*t)).count(),
            1,
            "{user}"
        );
    }
    // A child is no session of its own in listings.
    let listed = h.store.list_owned("local", None, 50).await.expect("list");
    assert!(listed.iter().all(|s| s.parent.is_none()));
}

#[tokio::test]
async fn with_a_limit_of_one_children_run_one_after_another() {
    let script = json!({"responses": [
        {"when": "PARENT", "tool_calls": [task("explore", "one", "CHILD-A: a"), task("explore", "two", "CHILD-B: b")]},
        {"when": "CHILD-A", "text": "A done"},
        {"when": "CHILD-B", "text": "B done"},
        {"when": "PARENT", "text": "ok"}
    ]});
    let repo = tempfile::tempdir().expect("repo");
    let (_dir, store, scripted) = common::parts(&[], &script);
    let mut config = common::config(
        repo.path(),
        store.clone(),
        scripted,
        Mode::Agent,
        Default::default(),
    );
    config.subagents.parallel = 1;
    let mut session = cortex_core::Session::create(config).await.expect("session");
    session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    let events = store.events(session.id(), 0).await.expect("events");
    let order: Vec<&str> = events
        .iter()
        .map(|e| e.kind.type_name())
        .filter(|k| k.starts_with("subagent."))
        .collect();
    assert_eq!(
        order,
        [
            "subagent.started",
            "subagent.ended",
            "subagent.started",
            "subagent.ended"
        ]
    );
}

#[tokio::test]
async fn without_a_folder_for_copies_writers_take_turns_beside_a_reader() {
    let script = json!({"responses": [
        {"when": "PARENT", "tool_calls": [
            task("general", "one", "CHILD-A: write a"),
            task("general", "two", "CHILD-B: write b"),
            task("explore", "three", "CHILD-C: read")
        ]},
        {"when": "CHILD-A", "delay_ms": 200, "tool_calls": [
            {"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}}]},
        {"when": "CHILD-A", "text": "A wrote"},
        {"when": "CHILD-B", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}}]},
        {"when": "CHILD-B", "text": "B wrote"},
        {"when": "CHILD-C", "text": "C read"},
        {"when": "PARENT", "text": "done"}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    h.session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    let events = h.events().await;
    let mut writers = Vec::new();
    let mut first_writer_end = None;
    for (at, event) in events.iter().enumerate() {
        match &event.kind {
            EventKind::SubagentStarted { description, .. } if description != "three" => {
                writers.push("started");
            }
            EventKind::SubagentEnded { child, .. } => {
                let record = h
                    .store
                    .get_session(child)
                    .await
                    .expect("get")
                    .expect("child");
                if record.mode == Mode::Agent {
                    writers.push("ended");
                    first_writer_end.get_or_insert(at);
                }
            }
            _ => {}
        }
    }
    // One writer at a time: each ends before the next starts.
    assert_eq!(writers, ["started", "ended", "started", "ended"]);
    assert!(h.repo.path().join("a.txt").exists() && h.repo.path().join("b.txt").exists());
    // The reader did not wait for the writers: it started before the
    // first of them (held up by its model) ended.
    let reader_started = events
        .iter()
        .position(|e| matches!(&e.kind, EventKind::SubagentStarted { description, .. } if description == "three"))
        .expect("reader started");
    assert!(reader_started < first_writer_end.expect("a writer ended"));
}

#[tokio::test]
async fn a_child_never_writes_where_its_kind_or_its_parent_cannot() {
    // An explore child of an Agent session, and a general child of an Ask
    // session: both try to write and run a command.
    for (mode, kind) in [(Mode::Agent, "explore"), (Mode::Ask, "general")] {
        let script = json!({"responses": [
            {"when": "PARENT", "tool_calls": [task(kind, "change it", "CHILD: change a.txt")]},
            {"when": "CHILD", "tool_calls": [
                {"name": "write_file", "arguments": {"path": "a.txt", "content": "changed\n"}},
                {"name": "bash", "arguments": {"command": "echo changed > a.txt"}}
            ]},
            {"when": "CHILD", "text": "I could not change it."},
            {"when": "PARENT", "text": "done"}
        ]});
        let mut h = harness(&[("a.txt", "original\n")], mode, script).await;
        h.session
            .run_turn("PARENT", CancellationToken::new())
            .await
            .expect("turn");
        let content = std::fs::read_to_string(h.repo.path().join("a.txt")).expect("read");
        assert_eq!(content, "original\n", "{mode} {kind}");
        let events = h.events().await;
        let child = children(&events).pop().expect("child");
        let refused: Vec<String> = child_events(&h, &child)
            .await
            .into_iter()
            .filter_map(|e| match e.kind {
                EventKind::ToolRefused { name, .. } => Some(name),
                _ => None,
            })
            .collect();
        assert_eq!(refused, ["write_file", "bash"], "{mode} {kind}");
        // The child's catalog never offered them, nor `task`.
        for request in h.model.requests() {
            if request.messages[0].content.contains("CHILD") {
                let offered: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
                assert!(
                    !offered
                        .iter()
                        .any(|t| ["write_file", "edit_file", "bash", "task"].contains(t)),
                    "{offered:?}"
                );
            }
        }
        let parent = results(&events);
        assert_eq!(parent[0].2, "I could not change it.");
    }
}

#[tokio::test]
async fn a_child_cannot_wait_for_an_approval_and_says_so() {
    let script = json!({"responses": [
        {"when": "PARENT", "tool_calls": [task("general", "build", "CHILD: run the build")]},
        {"when": "CHILD", "tool_calls": [{"name": "bash", "arguments": {"command": "touch built"}}]},
        {"when": "CHILD", "text": "The build needs approval: touch built."},
        {"when": "PARENT", "text": "done"}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    h.session
        .approvals()
        .set_policy(ApprovalPolicy::Ask)
        .await
        .expect("policy");
    h.session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    assert!(!h.repo.path().join("built").exists());
    let child = children(&h.events().await).pop().expect("child");
    let events = child_events(&h, &child).await;
    let refusal = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolRefused { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .expect("refused");
    assert!(
        refusal.contains("a subagent cannot ask the user"),
        "{refusal}"
    );
    assert!(
        !events
            .iter()
            .any(|e| e.kind.type_name() == "approval.requested")
    );
}

#[tokio::test]
async fn stop_stops_every_running_child() {
    let mut script = vec![json!({"when": "PARENT", "tool_calls": [
        task("explore", "one", "CHILD-A"),
        task("explore", "two", "CHILD-B"),
        task("explore", "three", "CHILD-C"),
    ]})];
    for tag in ["CHILD-A", "CHILD-B", "CHILD-C"] {
        script.push(json!({"when": tag, "hang": true, "text": "thinking"}));
    }
    let mut h = harness(&[], Mode::Agent, json!({"responses": script})).await;
    let mut live = h.session.subscribe();
    let cancel = CancellationToken::new();
    let stopper = cancel.clone();
    let watch = tokio::spawn(async move {
        let mut started = 0;
        while let Ok(published) = live.recv().await {
            if published.event.kind.type_name() == "subagent.started" {
                started += 1;
                if started == 3 {
                    stopper.cancel();
                    return;
                }
            }
        }
    });
    let outcome = h.session.run_turn("PARENT", cancel).await.expect("turn");
    watch.await.expect("watch");
    assert!(
        matches!(outcome, cortex_core::TurnOutcome::Stopped { .. }),
        "{outcome:?}"
    );
    let events = h.events().await;
    let parent = results(&events);
    assert_eq!(parent.len(), 3);
    assert!(
        parent.iter().all(|(_, s, _)| *s == ToolStatus::Stopped),
        "{parent:?}"
    );
    for child in children(&events) {
        let last = child_events(&h, &child).await.pop().expect("events");
        assert_eq!(last.kind.type_name(), "turn.stopped", "{child}");
    }
}

#[tokio::test]
async fn a_failed_child_or_an_unknown_kind_is_a_tool_error_and_the_turn_goes_on() {
    let script = json!({"responses": [
        {"when": "PARENT", "tool_calls": [
            task("general", "fail", "CHILD-F: fail"),
            task("nonesuch", "what", "CHILD-N: never runs")
        ]},
        {"when": "CHILD-F", "error": {"status": 400, "body": "bad request"}},
        {"when": "PARENT", "text": "recovered"}
    ]});
    let mut h = harness(&[], Mode::Agent, script).await;
    let outcome = h
        .session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    assert!(
        matches!(outcome, cortex_core::TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let parent = results(&h.events().await);
    assert_eq!(parent.len(), 2);
    let failed = parent
        .iter()
        .find(|(_, _, o)| o.contains("the subagent failed"))
        .expect("failed");
    assert_eq!(failed.1, ToolStatus::Error);
    let unknown = parent
        .iter()
        .find(|(_, _, o)| o.contains("unknown agent kind"))
        .expect("unknown");
    assert!(unknown.2.contains("explore, general"), "{}", unknown.2);
}

#[tokio::test]
async fn a_kind_from_a_file_narrows_the_child_and_reaches_the_parent_prompt() {
    let kind =
        "---\ndescription: reads one file\ntools: read_file\n---\nRead only what you are told.\n";
    let script = json!({"responses": [
        {"when": "PARENT", "tool_calls": [task("reader", "read", "CHILD: read a.txt")]},
        {"when": "CHILD", "tool_calls": [
            {"name": "grep", "arguments": {"pattern": "x"}},
            {"name": "read_file", "arguments": {"path": "a.txt"}}
        ]},
        {"when": "CHILD", "text": "read it"},
        {"when": "PARENT", "text": "done"}
    ]});
    let files = [("a.txt", "x\n"), (".cortex/agents/reader.md", kind)];
    let mut h = harness(&files, Mode::Agent, script).await;
    h.session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    let child = children(&h.events().await).pop().expect("child");
    let mine = results(&child_events(&h, &child).await);
    assert_eq!(mine[0].1, ToolStatus::Refused, "{mine:?}");
    assert_eq!(mine[1].1, ToolStatus::Ok, "{mine:?}");
    let requests = h.model.requests();
    let child_request = requests
        .iter()
        .find(|r| r.messages[0].content.contains("CHILD"))
        .expect("child request");
    let opening = &child_request.messages[0].content;
    assert!(
        opening.contains("Read only what you are told.\n\nTask: read"),
        "{opening}"
    );
    let parent_request = requests
        .iter()
        .find(|r| r.messages[0].content.contains("PARENT"))
        .expect("parent request");
    assert!(
        parent_request.system.contains("- reader: reads one file")
            || format!("{:?}", parent_request.messages).contains("- reader: reads one file")
    );
}

#[tokio::test]
async fn a_child_of_a_session_on_a_copy_works_in_that_copy() {
    let script = json!({"responses": [
        {"when": "PARENT", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "a.txt", "content": "in the copy\n"}},
            task("explore", "read", "CHILD: read a.txt")
        ]},
        {"when": "CHILD", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"when": "CHILD", "text": "it says: in the copy"},
        {"when": "PARENT", "text": "done"}
    ]});
    let (repo, store, scripted) = common::parts(&[("a.txt", "original\n")], &script);
    let copies = tempfile::tempdir().expect("copies");
    let mut config = common::config(
        repo.path(),
        store.clone(),
        scripted,
        Mode::Agent,
        Default::default(),
    );
    config.sandbox.workspace = cortex_protocol::WorkspaceMode::Copy;
    config.workspaces = Some(copies.path().to_path_buf());
    let mut session = cortex_core::Session::create(config).await.expect("session");
    session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    let events = store.events(session.id(), 0).await.expect("events");
    let parent = results(&events);
    assert_eq!(parent.len(), 2, "{parent:?}");
    assert_eq!(
        parent[1],
        (
            "task".to_owned(),
            ToolStatus::Ok,
            "it says: in the copy".to_owned()
        )
    );
    // The repository itself was never written.
    let original = std::fs::read_to_string(repo.path().join("a.txt")).expect("read");
    assert_eq!(original, "original\n");
    let child = children(&events).pop().expect("child");
    let read = results(&store.events(&child, 0).await.expect("child events"));
    assert!(read[0].2.contains("in the copy"), "{read:?}");
    session.close().await;
}

/// A session on `files` whose children that write can work in copies (a
/// folder for them, as `cortex exec` and `cortex serve` have).
async fn harness_with_copies(
    files: &[(&str, &str)],
    script: Value,
) -> (Harness, tempfile::TempDir) {
    let (repo, store, model) = common::parts(files, &script);
    let copies = tempfile::tempdir().expect("copies");
    let mut config = common::config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Agent,
        Default::default(),
    );
    config.workspaces = Some(copies.path().to_path_buf());
    let session = cortex_core::Session::create(config).await.expect("session");
    let h = Harness {
        repo,
        store,
        model,
        session,
    };
    (h, copies)
}

#[tokio::test]
async fn writers_run_at_once_in_copies_and_their_changes_are_merged_back() {
    let script = json!({"responses": [
        {"when": "PARENT", "tool_calls": [
            task("general", "one", "CHILD-A: write a"),
            task("general", "two", "CHILD-B: write b")
        ]},
        {"when": "CHILD-A", "delay_ms": 200, "tool_calls": [
            {"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}}]},
        {"when": "CHILD-A", "text": "A wrote"},
        {"when": "CHILD-B", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "sub/b.txt", "content": "b\n"}},
            {"name": "bash", "arguments": {"command": "rm gone.txt"}}]},
        {"when": "CHILD-B", "text": "B wrote"},
        {"when": "PARENT", "text": "done"}
    ]});
    let (mut h, copies) = harness_with_copies(&[("gone.txt", "x\n")], script).await;
    h.session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    let events = h.events().await;
    // Both writers started before either ended.
    let order: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SubagentStarted { .. } => Some("started"),
            EventKind::SubagentEnded { .. } => Some("ended"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["started", "started", "ended", "ended"]);
    let repo = h.repo.path();
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).expect("a"),
        "a\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("sub/b.txt")).expect("b"),
        "b\n"
    );
    assert!(
        !repo.join("gone.txt").exists(),
        "bash's removal came back too"
    );
    let answers = results(&events);
    let b = answers
        .iter()
        .find(|r| r.2.starts_with("B wrote"))
        .expect("B's answer");
    assert!(
        b.2.contains("applied: ") && b.2.contains("sub/b.txt"),
        "{b:?}"
    );
    // The copies are gone.
    assert_eq!(std::fs::read_dir(copies.path()).expect("copies").count(), 0);
}

#[tokio::test]
async fn a_file_two_writers_changed_keeps_the_first_merge_and_the_other_is_told() {
    let script = json!({"responses": [
        {"when": "PARENT", "tool_calls": [
            task("general", "one", "CHILD-A: write"),
            task("general", "two", "CHILD-B: write")
        ]},
        {"when": "CHILD-A", "delay_ms": 100, "tool_calls": [
            {"name": "write_file", "arguments": {"path": "shared.txt", "content": "from A\n"}}]},
        {"when": "CHILD-A", "text": "A wrote"},
        {"when": "CHILD-B", "tool_calls": [
            {"name": "write_file", "arguments": {"path": "shared.txt", "content": "from B\n"}}]},
        {"when": "CHILD-B", "text": "B wrote"},
        {"when": "PARENT", "text": "done"}
    ]});
    let (mut h, _copies) = harness_with_copies(&[("shared.txt", "original\n")], script).await;
    h.session
        .run_turn("PARENT", CancellationToken::new())
        .await
        .expect("turn");
    let answers = results(&h.events().await);
    let told: Vec<&(String, ToolStatus, String)> = answers
        .iter()
        .filter(|r| r.2.contains("Not applied") && r.2.contains("shared.txt"))
        .collect();
    assert_eq!(told.len(), 1, "{answers:?}");
    // Whichever merged first won; the other's answer says so.
    let content = std::fs::read_to_string(h.repo.path().join("shared.txt")).expect("read");
    let winner = if told[0].2.starts_with("A wrote") {
        "from B\n"
    } else {
        "from A\n"
    };
    assert_eq!(content, winner);
}
