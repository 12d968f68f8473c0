//! Screen tests of `/rewind` (and Esc Esc): the list of turns, the preview
//! of what a rewind would change with its scope, and the confirmation that
//! names the files changed outside the session, at 40×12 as everywhere.
//! Snapshots in `tests/snapshots/` (`cargo insta review` after an intended
//! change).

use cortex_protocol::{RewindDiff, RewindScope, ToolStatus};
use cortex_tui::app::App;
use cortex_tui::app::command::{Command, FilesPreview, Outcome, RewindPreview};
use cortex_tui::script::{Script, T0};
use cortex_tui::view::screen;
use cortex_tui::view::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

/// Two finished turns: one edits and runs a command, one writes a file.
fn two_turns() -> App {
    let mut s = Script::new("openai:gpt-4o");
    s.turn("fix the failing test\nit is in calc").request(1);
    s.call("c1", "edit_file", json!({"path": "calc.py"}));
    s.result(
        "c1",
        "edit_file",
        ToolStatus::Ok,
        "edited",
        Some("--- a\n+++ b\n"),
    );
    s.call("c2", "bash", json!({"command": "rm old.txt"}));
    s.result("c2", "bash", ToolStatus::Ok, "", None);
    s.completed(1);
    s.turn("add a \x1b[31mREADME").request(1);
    s.call("c3", "write_file", json!({"path": "README.md"}));
    s.result("c3", "write_file", ToolStatus::Ok, "wrote", Some("+++ b\n"));
    s.completed(1);
    let mut app = App::new(Theme::no_color());
    for event in &s.events {
        app.on_event(event);
    }
    app.now = T0 + s.at;
    app
}

fn press(app: &mut App, code: KeyCode) -> Vec<Command> {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn draw(app: &mut App) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(40, 12)).expect("terminal");
    terminal
        .draw(|frame| screen::draw(app, frame))
        .expect("draw");
    terminal
}

fn rows(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    let width = usize::from(buffer.area.width);
    let symbols: Vec<&str> = buffer.content().iter().map(|c| c.symbol()).collect();
    symbols
        .chunks(width.max(1))
        .map(|row| row.concat())
        .collect::<Vec<_>>()
        .join("\n")
}

fn preview(files: Result<FilesPreview, String>) -> Outcome {
    Outcome::RewindPreview(RewindPreview {
        turn_id: "t1".into(),
        files,
    })
}

fn conflict() -> FilesPreview {
    FilesPreview {
        diff: RewindDiff {
            created: vec!["old.txt".into()],
            changed: vec!["calc.py".into(), "notes\x1b[2J.md".into()],
            deleted: vec!["README.md".into()],
        },
        changed_outside: vec!["notes\x1b[2J.md".into()],
    }
}

#[test]
fn esc_esc_lists_turns_newest_first_and_enter_previews() {
    let mut app = two_turns();
    assert!(press(&mut app, KeyCode::Esc).is_empty());
    assert!(app.overlay.is_none(), "one Esc does not open it");
    assert!(press(&mut app, KeyCode::Esc).is_empty());
    assert!(app.overlay.is_some(), "Esc Esc opens the list");
    let terminal = draw(&mut app);
    let screen = rows(&terminal);
    let newest = screen.find("2. add a ^[[31mREADME").expect("newest turn");
    let oldest = screen.find("1. fix the failing test").expect("oldest turn");
    assert!(newest < oldest, "newest first:\n{screen}");
    assert!(screen.contains("calc.py · 1 command"), "{screen}");
    assert!(!screen.contains("it is in calc"), "first line only");
    insta::assert_snapshot!("rewind_list_40x12", terminal.backend());

    press(&mut app, KeyCode::Down);
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        [Command::PreviewRewind {
            turn_id: "t1".into()
        }]
    );
    assert!(app.overlay.is_none());
}

#[test]
fn a_typed_esc_esc_is_not_a_rewind() {
    let mut app = two_turns();
    press(&mut app, KeyCode::Char('x'));
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay.is_none(), "the composer is not empty");
}

#[test]
fn preview_names_user_changes_and_asks_before_overwriting_them() {
    let mut app = two_turns();
    app.on_outcome(preview(Ok(conflict())));
    let terminal = draw(&mut app);
    let screen = rows(&terminal);
    assert!(screen.contains("before: fix the failing test"), "{screen}");
    assert!(screen.contains("[both]"), "{screen}");
    assert!(screen.contains("conversation: 2 turns go"), "{screen}");
    assert!(screen.contains("2 restored · 1 removed · 1"), "{screen}");
    assert!(screen.contains("! notes^[[2J.md"), "sanitised:\n{screen}");
    insta::assert_snapshot!("rewind_preview_40x12", terminal.backend());

    // Enter does not overwrite the user's file: it asks.
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    let screen = rows(&draw(&mut app));
    assert!(screen.contains("y overwrites 1"), "{screen}");
    // n keeps them; the conversation alone needs no confirmation.
    assert!(press(&mut app, KeyCode::Char('n')).is_empty());
    press(&mut app, KeyCode::Char('c'));
    let screen = rows(&draw(&mut app));
    assert!(screen.contains("[conversation]"), "{screen}");
    assert!(screen.contains("files: left as they are"), "{screen}");
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        [Command::Rewind {
            turn_id: Some("t1".into()),
            scope: RewindScope::Conversation,
            force: false,
        }]
    );

    // Files: Enter, then y forces.
    app.on_outcome(preview(Ok(conflict())));
    press(&mut app, KeyCode::Char('f'));
    assert!(press(&mut app, KeyCode::Enter).is_empty());
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        [Command::Rewind {
            turn_id: Some("t1".into()),
            scope: RewindScope::Files,
            force: true,
        }]
    );
}

#[test]
fn preview_without_conflict_rewinds_both_on_enter() {
    let mut app = two_turns();
    let mut clean = conflict();
    clean.changed_outside.clear();
    app.on_outcome(preview(Ok(clean)));
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        [Command::Rewind {
            turn_id: Some("t1".into()),
            scope: RewindScope::Both,
            force: false,
        }]
    );
}

#[test]
fn files_that_cannot_be_rewound_leave_the_conversation() {
    let mut app = two_turns();
    app.on_outcome(preview(Err("no checkpoint `t1` (pruned)".into())));
    let screen = rows(&draw(&mut app));
    assert!(screen.contains("files: cannot rewind"), "{screen}");
    press(&mut app, KeyCode::Char('f'));
    press(&mut app, KeyCode::Tab);
    assert_eq!(
        press(&mut app, KeyCode::Enter),
        [Command::Rewind {
            turn_id: Some("t1".into()),
            scope: RewindScope::Conversation,
            force: false,
        }]
    );
}

#[test]
fn a_turn_rewound_meanwhile_is_not_previewed() {
    let mut app = two_turns();
    app.on_outcome(Outcome::RewindPreview(RewindPreview {
        turn_id: "t9".into(),
        files: Ok(FilesPreview::default()),
    }));
    assert!(app.overlay.is_none());
    assert!(app.flash_text().is_some_and(|f| f.contains("no longer")));
}
