use super::*;
use crate::script::{Script, T0};
use cortex_protocol::OutputStream;
use serde_json::json;

fn fold(events: &[Event]) -> SessionState {
    let mut state = SessionState::default();
    for event in events {
        state.apply(event);
    }
    state
}

fn turn_with_tools() -> Script {
    let mut s = Script::new("openai:gpt-4o");
    s.turn("fix the test")
        .request(1)
        .delta("Let me ")
        .delta("look.");
    s.done("Let me look.").usage(1200, 30);
    s.call("c1", "bash", json!({"command": "pytest -q"}));
    s.wait(500).output("c1", "F.\n").output("c1", "1 failed\n");
    s.result(
        "c1",
        "bash",
        ToolStatus::Error,
        "F.\n1 failed\n[exit code 1]",
        None,
    );
    s.request(2).usage(1500, 20).completed(2);
    s
}

#[test]
fn the_fold_builds_the_transcript() {
    let state = fold(&turn_with_tools().events);
    let kinds: Vec<&str> = state
        .cells
        .iter()
        .map(|c| match &c.kind {
            CellKind::Header { .. } => "header",
            CellKind::User { .. } => "user",
            CellKind::Assistant { .. } => "assistant",
            CellKind::Tool(_) => "tool",
            CellKind::TurnEnd(_) => "end",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["header", "user", "assistant", "tool", "end"]);
    let CellKind::Tool(tool) = &state.cells[3].kind else {
        panic!("tool row");
    };
    assert_eq!(tool.summary, "pytest -q");
    assert_eq!(tool.state, ToolState::Done(ToolStatus::Error));
    assert!(tool.output.ends_with("[exit code 1]"));
    let CellKind::TurnEnd(end) = &state.cells[4].kind else {
        panic!("end");
    };
    assert_eq!(end.outcome, TurnOutcome::Completed { rounds: 2 });
    assert_eq!((end.tokens_in, end.tokens_out), (2700, 50));
    assert!(!state.running());
    assert_eq!(state.usage.context, 1520);
    assert_eq!(state.messages, ["fix the test"]);
}

#[test]
fn a_subagents_tokens_count_for_the_turn_but_not_the_context() {
    let mut s = Script::new("openai:gpt-4o");
    s.turn("explore").request(1).usage(1000, 10);
    s.call("t1", "task", json!({"description": "look", "prompt": "p"}));
    s.push(EventKind::SubagentEnded {
        call_id: "t1".into(),
        child: "child".into(),
        status: ToolStatus::Ok,
        used: cortex_protocol::SubagentUse {
            ms: 50.0,
            input_tokens: 300,
            output_tokens: 7,
            cost_usd: None,
        },
    });
    s.result("t1", "task", ToolStatus::Ok, "found", None);
    s.request(2).usage(1100, 5).completed(2);
    let state = fold(&s.events);
    let end = state
        .cells
        .iter()
        .find_map(|c| match &c.kind {
            CellKind::TurnEnd(end) => Some(end.clone()),
            _ => None,
        })
        .expect("end");
    assert_eq!((end.tokens_in, end.tokens_out), (2400, 22));
    assert_eq!(state.usage.context, 1105);
}

#[test]
fn replay_in_pieces_equals_one_pass_and_duplicates_are_ignored() {
    let events = turn_with_tools().events;
    let whole = fold(&events);
    // A reconnect replays from an earlier seq: the overlap changes nothing.
    let mut pieces = SessionState::default();
    for event in &events[..7] {
        pieces.apply(event);
    }
    for event in &events[4..] {
        pieces.apply(event);
    }
    assert_eq!(pieces, whole);
}

#[test]
fn streaming_state_mid_turn() {
    let mut s = Script::new("m");
    s.turn("go").request(1).delta("Work");
    s.call("c1", "bash", json!({"command": "sleep 100"}));
    s.output("c1", "tick\n");
    let state = fold(&s.events);
    let turn = state.turn.as_ref().expect("running");
    assert_eq!(turn.phase, Phase::Tools);
    let CellKind::Assistant { text, done } = &state.cells[2].kind else {
        panic!("assistant");
    };
    assert_eq!((text.as_str(), *done), ("Work", true));
    let CellKind::Tool(tool) = &state.cells[3].kind else {
        panic!("tool");
    };
    assert_eq!(tool.state, ToolState::Running);
    assert_eq!(tool.started, Some(T0));
    assert_eq!(tool.output, "tick\n");
}

#[test]
fn a_stop_marks_unanswered_calls_stopped() {
    let mut s = Script::new("m");
    s.turn("go")
        .call("c1", "bash", json!({"command": "sleep 100"}));
    s.stopped();
    let state = fold(&s.events);
    let CellKind::Tool(tool) = &state.cells[2].kind else {
        panic!("tool");
    };
    assert_eq!(tool.state, ToolState::Done(ToolStatus::Stopped));
    assert!(matches!(
        state.cells[3].kind,
        CellKind::TurnEnd(TurnEnd {
            outcome: TurnOutcome::Stopped { .. },
            ..
        })
    ));
}

#[test]
fn refusals_keep_their_reason() {
    let mut s = Script::new("m");
    s.turn("go");
    s.call("c1", "write_file", json!({"path": "a.txt", "content": "x"}));
    s.refuse("c1", "write_file", "write_file is not offered in Ask mode");
    let state = fold(&s.events);
    let CellKind::Tool(tool) = &state.cells[2].kind else {
        panic!("tool");
    };
    assert_eq!(tool.state, ToolState::Done(ToolStatus::Refused));
    assert_eq!(
        tool.reason.as_deref(),
        Some("write_file is not offered in Ask mode")
    );
}

#[test]
fn hostile_text_is_escaped_when_stored() {
    let mut s = Script::new("m\x1b[31m");
    s.turn("go").delta("\x1b]52;c;ZXZpbA==\x07hi");
    s.call("c1", "bash", json!({"command": "x"}));
    s.output("c1", "\x1b[2J\x1b[Hgotcha\r");
    let state = fold(&s.events);
    for cell in &state.cells {
        let text = format!("{:?}", cell.kind);
        assert!(
            !text.contains("\\u{1b}") && !text.contains("\\u{7}"),
            "{text}"
        );
    }
    assert!(!state.model.contains('\x1b'));
}

#[test]
fn streamed_output_keeps_its_tail() {
    let mut buffer = String::new();
    for i in 0..20_000 {
        append_tail(&mut buffer, &format!("line {i}\n"));
    }
    assert!(buffer.len() <= STREAM_TAIL_BYTES);
    assert!(buffer.starts_with("line ") && buffer.ends_with("line 19999\n"));
}

#[test]
fn guest_phases_follow_attach_and_setup() {
    let mut s = Script::new("m");
    s.turn("go");
    s.push(EventKind::RuntimeStarting {
        provider: "local".into(),
    });
    assert!(matches!(
        fold(&s.events).guest,
        GuestPhase::Attaching { since: Some(_) }
    ));
    s.push(EventKind::RuntimeAttached {
        provider: "local".into(),
        ms: 23.0,
        isolation: "namespaces".into(),
    });
    s.push(EventKind::EnvPreparing {
        workspace: "/w".into(),
    });
    s.push(EventKind::EnvOutput {
        stream: OutputStream::Stdout,
        text: "installing\n".into(),
    });
    let state = fold(&s.events);
    assert!(matches!(state.guest, GuestPhase::Preparing { .. }));
    s.push(EventKind::EnvReady { ms: 900.0 });
    let state = fold(&s.events);
    assert_eq!(state.guest, GuestPhase::Ready);
    let setup = state.cells.iter().find_map(|c| match &c.kind {
        CellKind::Tool(t) if t.name == "setup" => Some(t),
        _ => None,
    });
    assert_eq!(
        setup.map(|t| t.state),
        Some(ToolState::Done(ToolStatus::Ok))
    );
}

#[test]
fn prompt_progress_shows_while_waiting_and_clears_with_the_answer() {
    let mut s = Script::new("m");
    s.turn("go");
    s.push(EventKind::ModelRequest {
        round: 1,
        model: "local:m".into(),
        messages: 2,
        tools: Vec::new(),
        bytes: 6000,
    });
    s.push(EventKind::ModelProgress {
        round: 1,
        done: 512,
        total: 1500,
    });
    let turn = fold(&s.events).turn.expect("a running turn");
    assert_eq!(turn.progress, Some((512, 1500)));
    s.push(EventKind::MessageDelta { text: "Hi".into() });
    let turn = fold(&s.events).turn.expect("a running turn");
    assert_eq!(turn.progress, None, "the answer replaces the progress");
}

/// A reminder is the harness speaking to the model: the transcript shows
/// the same cells with it as without it.
#[test]
fn a_reminder_to_the_model_adds_nothing_to_the_transcript() {
    let script = |reminder: bool| {
        let mut s = Script::new("m");
        s.turn("how many files?").request(1);
        s.done("There are 3.");
        if reminder {
            s.push(EventKind::TurnReminder {
                text: "Check the answer with a tool before giving it.".into(),
                kind: None,
                next: Default::default(),
            });
        }
        s.request(2);
        s.done("There are 3.").completed(2);
        s
    };
    let with = fold(&script(true).events);
    let without = fold(&script(false).events);
    assert_eq!(with.cells.len(), without.cells.len());
    let shown = format!("{:?}", with.cells);
    assert!(!shown.contains("Check the answer"), "{shown}");
}
