//! Screen tests of a `task` call: its subagent's calls folded under the
//! call row (the count and the newest), each one after Ctrl+O, the answer
//! below, at 40×12 as everywhere. Snapshots in `tests/snapshots/`.

use cortex_protocol::{CallId, EventKind, SessionId, ToolStatus};
use cortex_tui::app::App;
use cortex_tui::script::{Script, T0};
use cortex_tui::view::screen;
use cortex_tui::view::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

fn explored() -> App {
    let mut s = Script::new("openai:gpt-4o");
    s.turn("where is the parser?").request(1);
    s.call(
        "t1",
        "task",
        json!({"kind": "explore", "description": "find the parser", "prompt": "find it"}),
    );
    s.push(EventKind::SubagentStarted {
        call_id: CallId::from("t1"),
        child: SessionId::from("child-1"),
        kind: "explore".into(),
        description: "find the parser".into(),
    });
    for (name, summary) in [
        ("grep", "fn parse in src"),
        ("read_file", "src/parse.rs"),
        ("read_file", "src/lex.rs"),
    ] {
        s.wait(300).push(EventKind::SubagentStep {
            call_id: CallId::from("t1"),
            name: name.into(),
            summary: summary.into(),
        });
    }
    s.result(
        "t1",
        "task",
        ToolStatus::Ok,
        "The parser is src/parse.rs:12 (fn parse).",
        None,
    );
    let mut app = App::new(Theme::colored());
    for event in &s.events {
        app.on_event(event);
    }
    app.now = T0 + s.at;
    app
}

fn draw(app: &mut App) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(40, 12)).expect("terminal");
    terminal
        .draw(|frame| screen::draw(app, frame))
        .expect("draw");
    terminal
}

#[test]
fn a_subagents_steps_are_folded_under_its_call() {
    let mut app = explored();
    let terminal = draw(&mut app);
    let text = format!("{:?}", terminal.backend());
    assert!(text.contains("3 steps · read_file src/lex.rs"), "{text}");
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn ctrl_o_shows_each_step() {
    let mut app = explored();
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let terminal = draw(&mut app);
    let text = format!("{:?}", terminal.backend());
    assert!(text.contains("↳ grep fn parse in src"), "{text}");
    insta::assert_snapshot!(terminal.backend());
}
