use super::*;
use crate::script::Script;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn typed(app: &mut App, text: &str) -> Vec<Command> {
    text.chars()
        .flat_map(|c| app.on_key(key(KeyCode::Char(c))))
        .collect()
}

fn app_with(script: &Script) -> App {
    let mut app = App::new(Theme::no_color());
    for event in &script.events {
        app.on_event(event);
    }
    app
}

#[test]
fn enter_sends_and_alt_enter_breaks_the_line() {
    let mut app = app_with(&Script::new("m"));
    typed(&mut app, "fix");
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    typed(&mut app, "it");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Command::StartTurn {
            message: "fix\nit".into(),
            mode: None
        }]
    );
    assert!(app.editor.is_empty());
}

#[test]
fn shift_tab_cycles_the_mode_at_once_and_applies_it_between_turns() {
    let mut app = app_with(&Script::new("m"));
    assert_eq!(app.mode(), Mode::Agent);
    assert_eq!(
        app.on_key(key(KeyCode::BackTab)),
        [Command::SetMode(Mode::Ask)]
    );
    assert_eq!(app.mode(), Mode::Ask);
    assert_eq!(
        app.on_key(key(KeyCode::BackTab)),
        [Command::SetMode(Mode::Plan)]
    );
    assert_eq!(app.mode(), Mode::Plan);

    // During a turn the border changes, the session's mode waits.
    let mut s = Script::new("m");
    s.turn("go");
    let mut app = app_with(&s);
    assert!(app.on_key(key(KeyCode::BackTab)).is_empty());
    assert_eq!(app.mode(), Mode::Ask);
    typed(&mut app, "next");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty(), "queued");
    s.completed(1);
    let end = s.events.last().cloned().expect("end");
    assert_eq!(
        app.on_event(&end),
        [Command::StartTurn {
            message: "next".into(),
            mode: Some(Mode::Ask)
        }]
    );
}

#[test]
fn esc_stops_a_running_turn() {
    let mut s = Script::new("m");
    s.turn("go")
        .call("c1", "bash", json!({"command": "sleep 100"}));
    let mut app = app_with(&s);
    assert_eq!(app.on_key(key(KeyCode::Esc)), [Command::Stop]);
    let mut idle = app_with(&Script::new("m"));
    assert!(idle.on_key(key(KeyCode::Esc)).is_empty());
}

#[test]
fn ctrl_c_clears_then_quits_only_twice_in_a_row() {
    let mut app = app_with(&Script::new("m"));
    typed(&mut app, "draft");
    assert!(app.on_key(ctrl('c')).is_empty());
    assert!(app.editor.is_empty());
    assert_eq!(app.on_key(ctrl('c')), [Command::Quit]);

    let mut app = app_with(&Script::new("m"));
    app.on_key(ctrl('c'));
    typed(&mut app, "x");
    assert!(app.on_key(ctrl('c')).is_empty(), "not in a row");
    assert_eq!(app.on_key(ctrl('c')), [Command::Quit]);
}

#[test]
fn slash_commands_run_and_unknown_ones_say_so() {
    let mut app = app_with(&Script::new("m"));
    typed(&mut app, "/mode plan");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Command::SetMode(Mode::Plan)]
    );
    // Before the session's commands are listed, the server decides.
    typed(&mut app, "/frobnicate now");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Command::RunCommand {
            name: "frobnicate".into(),
            arguments: "now".into(),
        }]
    );
    app.on_outcome(Outcome::Commands(Vec::new()));
    typed(&mut app, "/frobnicate");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert!(
        app.flash_text()
            .is_some_and(|f| f.contains("unknown command /frobnicate"))
    );
    typed(&mut app, "/comp");
    assert_eq!(app.on_key(key(KeyCode::Enter)), [Command::Compact]);
    typed(&mut app, "/rewind files force");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Command::Rewind {
            turn_id: None,
            scope: cortex_protocol::RewindScope::Files,
            force: true
        }]
    );
    typed(&mut app, "/rewind both");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Command::Rewind {
            turn_id: None,
            scope: cortex_protocol::RewindScope::Both,
            force: false
        }]
    );
    // Alone, it lists the turns: there is none yet.
    typed(&mut app, "/rewind");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.flash_text(), Some("no turn to rewind"));
    assert!(app.overlay.is_none());
    typed(&mut app, "/rewind sideways");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    typed(&mut app, "/help");
    app.on_key(key(KeyCode::Enter));
    assert!(app.overlay.is_some());
    app.on_key(key(KeyCode::Esc));
    assert!(app.overlay.is_none());
}

#[test]
fn history_walks_the_sessions_messages() {
    let mut s = Script::new("m");
    s.turn("first").completed(1).turn("second").completed(1);
    let mut app = app_with(&s);
    typed(&mut app, "dra");
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.editor.text(), "second");
    app.on_key(key(KeyCode::Up));
    assert_eq!(app.editor.text(), "first");
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Down));
    assert_eq!(app.editor.text(), "dra");
}

#[test]
fn at_paths_complete_from_the_listing() {
    let mut app = app_with(&Script::new("m"));
    let commands = typed(&mut app, "read @ca");
    assert_eq!(
        commands,
        [Command::ListFiles],
        "listed once, on the first @"
    );
    app.on_outcome(Outcome::Files(vec![
        "calc.py".into(),
        "test_calc.py".into(),
    ]));
    assert_eq!(app.completion_shown().map(|c| c.items.len()), Some(2));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.editor.text(), "read @calc.py ");
}

#[test]
fn a_rejected_turn_gives_the_message_back() {
    let mut app = app_with(&Script::new("m"));
    app.on_outcome(Outcome::TurnRejected {
        message: "hello".into(),
        error: "a turn is already running".into(),
    });
    assert_eq!(app.editor.text(), "hello");
    assert_eq!(app.flash_text(), Some("a turn is already running"));
}

fn goal_steps(done: &[bool]) -> Vec<cortex_protocol::GoalStep> {
    done.iter()
        .enumerate()
        .map(|(i, d)| cortex_protocol::GoalStep {
            title: format!("step {i}\u{1b}[2J"),
            done: *d,
        })
        .collect()
}

fn goal_session() -> Script {
    use cortex_protocol::{EventKind, GoalBudget};
    let mut s = Script::new("m");
    s.push(EventKind::GoalSet {
        objective: "ship \u{1b}]0;it".into(),
        budget: GoalBudget::default(),
    });
    s.turn("Goal: ship it").request(1);
    let steps = goal_steps(&[false, false, false]);
    s.push(EventKind::GoalUpdated {
        done: 0,
        total: 3,
        steps,
    });
    s.completed(1);
    s.turn("[Goal continuation] Objective: ship it");
    s.push(EventKind::GoalContinued { continuation: 1 });
    let steps = goal_steps(&[true, true, false]);
    s.push(EventKind::GoalUpdated {
        done: 2,
        total: 3,
        steps,
    });
    s
}

#[test]
fn goal_events_give_the_chip_and_a_continuation_is_not_a_user_message() {
    let mut app = app_with(&goal_session());
    assert_eq!(app.chips_shown(), ["Goal · 2/3"]);
    let goal = app.state.goal.clone().expect("goal");
    assert!(!goal.objective.contains('\u{1b}'), "{:?}", goal.objective);
    assert!(goal.steps.iter().all(|(t, _)| !t.contains('\u{1b}')));
    assert_eq!(app.state.messages, ["Goal: ship it"]);
    let users = app
        .state
        .cells
        .iter()
        .filter(|c| matches!(c.kind, crate::state::CellKind::User { .. }))
        .count();
    assert_eq!(users, 1, "the continuation shows as a notice");

    let mut s = goal_session();
    s.completed(1);
    s.push(cortex_protocol::EventKind::GoalPaused {
        reason: cortex_protocol::PauseReason::Stalled,
    });
    app = app_with(&s);
    assert_eq!(app.chips_shown(), ["Goal · 2/3 paused"]);
    typed(&mut app, "/goal");
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    let shown = app.flash_text().expect("shown").to_owned();
    assert!(
        shown.starts_with("Goal · 2/3 · paused (stalled) · ship"),
        "{shown}"
    );
}

#[test]
fn goal_slash_commands() {
    let mut app = app_with(&Script::new("m"));
    for line in ["/goal pause", "/goal resume", "/goal clear"] {
        typed(&mut app, line);
        assert!(
            app.on_key(key(KeyCode::Enter)).is_empty(),
            "{line}: no goal"
        );
        assert!(app.flash_text().is_some_and(|f| f.starts_with("no goal")));
    }
    typed(&mut app, "/goal make the tests pass");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Command::Goal(GoalCommand::Set(
            "make the tests pass".into()
        ))]
    );
    let mut app = app_with(&goal_session());
    for (line, command) in [
        ("/goal pause", GoalCommand::Pause),
        ("/goal resume", GoalCommand::Resume),
        ("/goal clear", GoalCommand::Clear),
    ] {
        typed(&mut app, line);
        assert_eq!(app.on_key(key(KeyCode::Enter)), [Command::Goal(command)]);
    }
}

fn proposed_plan() -> Script {
    let mut s = Script::new("m");
    s.turn("plan it").request(1);
    s.push(cortex_protocol::EventKind::PlanProposed {
        version: 1,
        title: "Fix add".into(),
        markdown: "1. edit calc.py".into(),
    });
    s.completed(1);
    s
}

#[test]
fn ctrl_y_accepts_and_ctrl_r_makes_the_next_message_the_feedback() {
    use crate::state::Subject;
    let mut app = app_with(&proposed_plan());
    let accept = Command::Verdict {
        subject: Subject::Plan,
        feedback: None,
    };
    assert_eq!(app.on_key(ctrl('y')), std::slice::from_ref(&accept));
    assert!(app.on_key(ctrl('r')).is_empty());
    assert_eq!(app.rejecting().map(|r| r.label.as_str()), Some("plan v1"));
    typed(&mut app, "smaller steps");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Command::Verdict {
            subject: Subject::Plan,
            feedback: Some("smaller steps".into())
        }]
    );
    // Esc gives up the rejection: the next message is a message.
    app.on_key(ctrl('r'));
    app.on_key(key(KeyCode::Esc));
    assert!(app.rejecting().is_none());
    typed(&mut app, "hi");
    assert!(matches!(
        app.on_key(key(KeyCode::Enter)).as_slice(),
        [Command::StartTurn { .. }]
    ));
    typed(&mut app, "/accept");
    assert_eq!(app.on_key(key(KeyCode::Enter)), [accept]);

    // Once decided, the keys are plain keys again.
    let mut s = proposed_plan();
    s.push(cortex_protocol::EventKind::PlanAccepted { version: 1 });
    let mut app = app_with(&s);
    assert!(app.on_key(ctrl('y')).is_empty());
    assert!(app.on_key(ctrl('r')).is_empty());
    assert!(app.rejecting().is_none());
}

#[test]
fn no_verdict_while_a_turn_runs() {
    let mut s = proposed_plan();
    s.turn("more").request(1);
    let mut app = app_with(&s);
    assert!(app.on_key(ctrl('y')).is_empty());
    assert!(app.on_key(ctrl('r')).is_empty());
    assert!(app.rejecting().is_none());
}

#[test]
fn doctor_asks_the_program_and_shows_its_report_as_notices() {
    use crate::app::command::ReportLine;
    use crate::state::{CellKind, Level};
    let mut app = app_with(&Script::new("m"));
    typed(&mut app, "/doctor");
    assert_eq!(app.on_key(key(KeyCode::Enter)), [Command::Doctor]);
    assert!(app.flash_text().is_some_and(|f| f.contains("checking")));
    let before = app.state.cells.len();
    app.on_outcome(Outcome::Doctor(vec![
        ReportLine {
            level: Level::Info,
            text: "store  /x/cortex.db: 0.1 MB".into(),
        },
        ReportLine {
            level: Level::Error,
            text: "model  missing\u{1b}[2J — fix: cortex models fetch".into(),
        },
    ]));
    assert!(app.flash_text().is_none(), "the report replaces the flash");
    let shown: Vec<CellKind> = app.state.cells[before..]
        .iter()
        .map(|c| c.kind.clone())
        .collect();
    assert_eq!(
        shown,
        [
            CellKind::Notice {
                level: Level::Info,
                text: "store  /x/cortex.db: 0.1 MB".into(),
            },
            CellKind::Notice {
                level: Level::Error,
                text: "model  missing^[[2J — fix: cortex models fetch".into(),
            },
        ],
        "one notice per line, cleaned"
    );
}

#[test]
fn custom_commands_are_listed_on_the_first_slash_completed_and_run_cleaned() {
    let mut app = app_with(&Script::new("m"));
    let asked = app.on_key(key(KeyCode::Char('/')));
    assert_eq!(asked, [Command::ListCommands]);
    app.on_outcome(Outcome::Commands(vec![
        cortex_protocol::CommandInfo {
            name: "review".into(),
            description: "Review \u{1b}[31mred".into(),
            argument_hint: Some("<file>".into()),
            mode: None,
            model: None,
            scope: cortex_protocol::ExtensionScope::Repository,
            path: ".cortex/commands/review.md".into(),
        },
        // A built-in name wins over a command file's.
        cortex_protocol::CommandInfo {
            name: "help".into(),
            description: "not the help".into(),
            argument_hint: None,
            mode: None,
            model: None,
            scope: cortex_protocol::ExtensionScope::Repository,
            path: ".cortex/commands/help.md".into(),
        },
    ]));
    // Asked once per session.
    assert!(app.on_key(key(KeyCode::Char('r'))).is_empty());
    let items = &app.completion_shown().expect("completion").items;
    let review = items.iter().find(|i| i.label == "/review").expect("listed");
    assert_eq!(review.detail, "<file> · Review ^[[31mred");
    app.on_key(key(KeyCode::Backspace));
    typed(&mut app, "he");
    let helps: Vec<_> = app
        .completion_shown()
        .expect("completion")
        .items
        .iter()
        .filter(|i| i.label == "/help")
        .map(|i| i.detail.clone())
        .collect();
    assert_eq!(helps, ["keys and commands"]);
    app.editor.set("");
    typed(&mut app, "/review src/a.py the style");
    assert_eq!(
        app.on_key(key(KeyCode::Enter)),
        [Command::RunCommand {
            name: "review".into(),
            arguments: "src/a.py the style".into(),
        }]
    );
    // Refused (a turn started elsewhere meanwhile): the line comes back.
    app.on_outcome(Outcome::TurnRejected {
        message: "/review src/a.py the style".into(),
        error: "a turn is already running".into(),
    });
    assert_eq!(app.editor.text(), "/review src/a.py the style");
}
