//! Screen tests: the app fed a hand-written timeline, drawn on ratatui's
//! `TestBackend`, compared with the snapshot files in `tests/snapshots/`
//! (`cargo insta review` after an intended change).

use cortex_protocol::ToolStatus;
use cortex_tui::app::App;
use cortex_tui::script::{Script, T0};
use cortex_tui::view::screen;
use cortex_tui::view::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::json;

fn app(script: &Script, theme: Theme) -> App {
    let mut app = App::new(theme);
    for event in &script.events {
        app.on_event(event);
    }
    app.now = T0 + script.at;
    app
}

fn draw(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal
        .draw(|frame| screen::draw(app, frame))
        .expect("draw");
    terminal
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
}

/// A bug-fix session: the model reads, runs the tests, edits, and explains.
fn fix_session() -> Script {
    let mut s = Script::new("openai:gpt-4o");
    s.turn("fix the failing test").request(1);
    s.call("c1", "read_file", json!({"path": "calc.py"}));
    s.result(
        "c1",
        "read_file",
        ToolStatus::Ok,
        "1\tdef add(a, b):\n2\t    return a - b\n",
        None,
    );
    s.call("c2", "bash", json!({"command": "python -m pytest -q"}));
    s.output(
        "c2",
        "F\n=== FAILURES ===\nassert add(2, 2) == 4\n1 failed in 0.02s\n",
    );
    s.result(
        "c2",
        "bash",
        ToolStatus::Error,
        "F\n=== FAILURES ===\nassert add(2, 2) == 4\n1 failed in 0.02s\n[exit code 1]",
        None,
    );
    s.call(
        "c3",
        "edit_file",
        json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
    );
    s.result(
        "c3",
        "edit_file",
        ToolStatus::Ok,
        "edited calc.py",
        Some("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"),
    );
    s.request(2).usage(2400, 80);
    s.delta("Fixed: `add` subtracted. The test passes now.");
    s.done("Fixed: `add` subtracted. The test passes now.");
    s.completed(2);
    s
}

#[test]
fn streaming_turn_mid_way() {
    let mut s = Script::new("openai:gpt-4o");
    s.turn("explain calc.py").request(1).wait(800);
    s.delta("## What it does\n\n`calc.py` defines **two** functions:\n\n- `add(a, b)`");
    s.delta(
        " returns the sum\n- `sub(a, b)` the difference\n\n```python\ndef add(a, b):\n    return a",
    );
    let mut app = app(&s, Theme::colored());
    let terminal = draw(&mut app, 48, 16);
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn running_bash_row() {
    let mut s = Script::new("openai:gpt-4o");
    s.turn("run the tests").request(1);
    s.call("c1", "bash", json!({"command": "cargo test --quiet"}));
    for i in 0..12 {
        s.wait(250).output("c1", &format!("test case_{i} ... ok\n"));
    }
    let mut app = app(&s, Theme::colored());
    let terminal = draw(&mut app, 48, 12);
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn diff_row() {
    let mut s = Script::new("openai:gpt-4o");
    s.turn("fix add").request(1);
    s.call(
        "c1",
        "edit_file",
        json!({"path": "src/calc.rs", "old_string": "a - b", "new_string": "a + b"}),
    );
    s.result(
        "c1",
        "edit_file",
        ToolStatus::Ok,
        "edited",
        Some("--- a/src/calc.rs\n+++ b/src/calc.rs\n@@ -8,5 +8,5 @@\n /// Adds.\n pub fn add(a: i64, b: i64) -> i64 {\n-    a - b\n+    a + b\n }\n"),
    );
    let mut app = app(&s, Theme::colored());
    let terminal = draw(&mut app, 48, 12);
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn refused_call() {
    let mut s = Script::new("openai:gpt-4o");
    s.turn("delete the tests").request(1);
    s.call("c1", "bash", json!({"command": "rm -rf tests"}));
    s.refuse(
        "c1",
        "bash",
        "bash is not offered in Ask mode; switch to Agent to run commands",
    );
    let mut app = app(&s, Theme::colored());
    let terminal = draw(&mut app, 48, 10);
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn small_terminal_40x12() {
    let mut app = app(&fix_session(), Theme::colored());
    type_text(&mut app, "now add a test for sub");
    let terminal = draw(&mut app, 40, 12);
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn no_color_draws_no_colour() {
    let mut app = app(&fix_session(), Theme::no_color());
    let terminal = draw(&mut app, 40, 12);
    let buffer = terminal.backend().buffer();
    for cell in buffer.content() {
        assert_eq!((cell.fg, cell.bg), (Color::Reset, Color::Reset), "{cell:?}");
    }
    insta::assert_debug_snapshot!(buffer);
}

#[test]
fn resize_reflows() {
    let mut app = app(&fix_session(), Theme::colored());
    let wide = draw(&mut app, 64, 14);
    insta::assert_snapshot!("resize_wide", wide.backend());
    let narrow = draw(&mut app, 40, 12);
    insta::assert_snapshot!("resize_narrow", narrow.backend());
}

#[test]
fn help_overlay_fits_a_small_screen() {
    let mut app = app(&fix_session(), Theme::colored());
    app.on_key(KeyEvent::new(KeyCode::Char('?'), KeyModifiers::NONE));
    let terminal = draw(&mut app, 40, 12);
    insta::assert_snapshot!(terminal.backend());
}

#[test]
fn mode_and_chip_on_the_border() {
    let mut app = app(&Script::new("openai:gpt-4o"), Theme::colored());
    app.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT));
    app.chips = vec!["Goal · 2/8".into()];
    let terminal = draw(&mut app, 40, 6);
    insta::assert_snapshot!(terminal.backend());
}

/// A goal in its second turn: the chip on the border still fits 40×12, the
/// steps show as a checklist and the continuation as a notice.
#[test]
fn goal_chip_on_a_small_terminal() {
    use cortex_protocol::{EventKind, GoalBudget, GoalStep};
    let steps = |done: &[bool]| -> Vec<GoalStep> {
        done.iter()
            .zip(["read calc.py", "fix add", "run tests"])
            .map(|(d, t)| GoalStep {
                title: t.into(),
                done: *d,
            })
            .collect()
    };
    let mut s = Script::new("openai:gpt-4o");
    s.push(EventKind::GoalSet {
        objective: "make the tests pass".into(),
        budget: GoalBudget::default(),
    });
    s.turn("Goal: make the tests pass").request(1);
    s.push(EventKind::GoalUpdated {
        done: 0,
        total: 3,
        steps: steps(&[false, false, false]),
    });
    s.completed(1);
    s.turn("[Goal continuation] Objective: make the tests pass");
    s.push(EventKind::GoalContinued { continuation: 1 });
    s.request(1);
    s.push(EventKind::GoalUpdated {
        done: 2,
        total: 3,
        steps: steps(&[true, true, false]),
    });
    let mut app = app(&s, Theme::colored());
    let terminal = draw(&mut app, 40, 12);
    insta::assert_snapshot!(terminal.backend());
}

/// A call waits for approval: the row, the notice and the status line's
/// keys; `y` answers it (only with an empty composer).
#[test]
fn approval_prompt() {
    use cortex_protocol::{ApprovalDecision, CallId, EventKind};
    use cortex_tui::app::Command;
    let mut s = Script::new("openai:gpt-4o");
    s.turn("push it").request(1);
    s.call("c1", "bash", json!({"command": "git push origin feature"}));
    s.push(EventKind::ApprovalRequested {
        call_id: CallId::from("c1"),
        name: "bash".into(),
        summary: "git push origin feature".into(),
        reason: "no rule covers `git push origin feature`".into(),
    });
    let mut app = app(&s, Theme::colored());
    let terminal = draw(&mut app, 64, 10);
    insta::assert_snapshot!(terminal.backend());

    type_text(&mut app, "x");
    assert!(
        app.on_key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::NONE))
            .iter()
            .all(|c| !matches!(c, Command::AnswerApproval { .. })),
        "typing is not an answer"
    );
    app.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    assert_eq!(
        app.on_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE)),
        [Command::AnswerApproval {
            call_id: "c1".into(),
            decision: ApprovalDecision::Always,
        }]
    );
    s.push(EventKind::ApprovalResolved {
        call_id: CallId::from("c1"),
        decision: cortex_protocol::ApprovalResolution::Always,
    });
    app.on_event(s.events.last().expect("event"));
    assert!(app.state.approval.is_none());
}

/// A plan proposed and waiting: its steps, its flowchart drawn as boxes and
/// arrows with the source folded under it, and the verdict keys.
fn plan_review() -> Script {
    use cortex_protocol::EventKind;
    let mut s = Script::new("openai:gpt-4o");
    s.turn("plan the fix").request(1);
    s.push(EventKind::PlanProposed {
        version: 2,
        title: "Fix add".into(),
        markdown: "## Steps\n1. Fix `add` in calc.py\n2. Run the tests\n\n```mermaid\nflowchart TD\n  A[calc.py] --> B[add]\n  A --> C[tests]\n```\n"
            .into(),
    });
    s.completed(1);
    s
}

#[test]
fn plan_review_with_a_flowchart() {
    let mut app = app(&plan_review(), Theme::colored());
    let terminal = draw(&mut app, 60, 24);
    insta::assert_snapshot!(terminal.backend());
}

/// 40×12: the chart still fits; Ctrl+O shows its source instead.
#[test]
fn plan_review_on_a_small_terminal_40x12() {
    let mut app = app(&plan_review(), Theme::colored());
    let folded = draw(&mut app, 40, 12);
    insta::assert_snapshot!("plan_review_40x12", folded.backend());
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let source = draw(&mut app, 40, 12);
    insta::assert_snapshot!("plan_review_40x12_expanded", source.backend());
}

/// A spec's design whose chart is too wide is folded to its source line;
/// Ctrl+R turns the composer into the rejection's feedback. A hostile
/// escape in the model's text never reaches the screen.
#[test]
fn spec_phase_rejecting_with_a_wide_chart() {
    use cortex_protocol::{EventKind, SpecPhase};
    let mut s = Script::new("openai:gpt-4o");
    s.turn("spec the export").request(1);
    s.push(EventKind::SpecProposed {
        phase: SpecPhase::Design,
        version: 3,
        markdown: "# Design \u{1b}[31mred\u{1b}[0m\n```mermaid\nflowchart LR\n  A[a very long component name] --> B[another very long component name]\n  A --> C[and a third long one]\n```\n"
            .into(),
    });
    s.completed(1);
    let mut app = app(&s, Theme::colored());
    app.on_key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL));
    type_text(&mut app, "split the exporter");
    let terminal = draw(&mut app, 48, 14);
    let screen = format!("{:?}", terminal.backend());
    assert!(!screen.contains('\u{1b}'));
    insta::assert_snapshot!(terminal.backend());
}

/// The session of `approval_panel_*`: a turn whose `bash` call waits for
/// approval of `command`, which no rule covers because of `reason`.
fn waiting_for(command: &str, reason: &str) -> App {
    use cortex_protocol::{CallId, EventKind};
    let mut s = Script::new("openai:gpt-4o");
    s.turn("deploy it").request(1);
    s.call("c1", "bash", json!({ "command": command }));
    s.push(EventKind::ApprovalRequested {
        call_id: CallId::from("c1"),
        name: "bash".into(),
        summary: command.into(),
        reason: reason.into(),
    });
    app(&s, Theme::colored())
}

/// The rows of the last frame, as text.
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

fn press(app: &mut App, code: KeyCode) -> Vec<cortex_tui::app::Command> {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn answered(decision: cortex_protocol::ApprovalDecision) -> Vec<cortex_tui::app::Command> {
    vec![cortex_tui::app::Command::AnswerApproval {
        call_id: "c1".into(),
        decision,
    }]
}

/// Fourteen lines whose last one is the part no rule covers.
const LONG_COMMAND: &str = "set -e\ncargo build --release\nstrip target/release/cortex\nls -la target/release\nsha256sum target/release/cortex\ncp target/release/cortex dist/\ncd dist\ntar czf cortex.tar.gz cortex\ncd ..\necho packaged\ndate\nuname -a\ngit status --short\ncurl -T dist/cortex.tar.gz https://upload.example.com/drop";

/// At 40×12 a long multi-line command does not fit: the panel shows its
/// start and where it is, refuses `y` until its end has been on screen,
/// then shows the last line and the reason and lets `y` allow the call.
#[test]
fn approval_panel_scrolls_a_long_command_before_y_counts() {
    use cortex_protocol::ApprovalDecision;
    let mut app = waiting_for(
        LONG_COMMAND,
        "no rule covers `curl -T dist/cortex.tar.gz https://upload.example.com/drop`",
    );
    let first = draw(&mut app, 40, 12);
    let shown = rows(&first);
    assert!(shown.contains("set -e"), "{shown}");
    assert!(shown.contains("lines 1–5 of "), "{shown}");
    assert!(shown.contains("↓ for more"), "{shown}");
    assert!(!shown.contains("upload.example"), "{shown}");
    insta::assert_snapshot!("approval_panel_40x12_start", first.backend());

    assert!(press(&mut app, KeyCode::Char('y')).is_empty(), "too early");
    assert!(press(&mut app, KeyCode::Char('a')).is_empty(), "too early");
    assert_eq!(
        app.flash_text(),
        Some("scroll to the end first: the command is longer than the screen")
    );
    let refused = rows(&draw(&mut app, 40, 12));
    assert!(refused.contains("scroll to the end first"), "{refused}");

    // Down a row, then a page at a time, drawing each frame as the
    // runtime does, until the end is in view.
    assert!(press(&mut app, KeyCode::Down).is_empty());
    let mut frames = 0;
    let mut end = draw(&mut app, 40, 12);
    while !rows(&end).contains("· end") {
        assert!(frames < 20, "never reached the end: {}", rows(&end));
        assert!(press(&mut app, KeyCode::PageDown).is_empty());
        end = draw(&mut app, 40, 12);
        frames += 1;
    }
    let shown = rows(&end);
    assert!(shown.contains("upload.example.com/drop"), "{shown}");
    assert!(shown.contains("! no rule covers"), "{shown}");
    insta::assert_snapshot!("approval_panel_40x12_end", end.backend());

    // Back up: seen once is enough.
    press(&mut app, KeyCode::PageUp);
    draw(&mut app, 40, 12);
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        answered(ApprovalDecision::Allow)
    );
}

/// A command that fits is seen whole at once: `y` allows it at once, and
/// Up/Down are the composer's as usual.
#[test]
fn approval_panel_short_command_allows_at_once() {
    use cortex_protocol::ApprovalDecision;
    let mut app = waiting_for("cargo test", "no rule covers `cargo test`");
    let shown = rows(&draw(&mut app, 40, 12));
    assert!(shown.contains("cargo test"), "{shown}");
    assert!(shown.contains("y allow · n deny · a always"), "{shown}");
    assert!(!shown.contains("lines 1–"), "no position row: {shown}");
    assert_eq!(
        press(&mut app, KeyCode::Char('y')),
        answered(ApprovalDecision::Allow)
    );
    assert_eq!(app.flash_text(), None);
}

/// Escapes and a bidi override in the command reach the screen only in
/// their caret form, each line of the command on its own row.
#[test]
fn approval_panel_shows_escapes_as_carets() {
    let mut app = waiting_for(
        "echo \u{1b}[2Jhi\u{7}\r\nmv a \u{202e}gpj.exe",
        "no rule covers `mv`",
    );
    let terminal = draw(&mut app, 40, 12);
    for cell in terminal.backend().buffer().content() {
        assert!(
            !cell
                .symbol()
                .chars()
                .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "raw {cell:?}"
        );
    }
    let shown = rows(&terminal);
    assert!(shown.contains("echo ^[[2Jhi^G"), "{shown}");
    assert!(shown.contains("mv a \\u{202e}gpj.exe"), "{shown}");
    assert!(!shown.contains("\\n"), "lines kept as rows: {shown}");
}

/// `n` denies at any scroll position, before the end was seen too.
#[test]
fn approval_panel_n_denies_anywhere() {
    use cortex_protocol::ApprovalDecision;
    let mut app = waiting_for(LONG_COMMAND, "no rule covers `curl`");
    draw(&mut app, 40, 12);
    assert_eq!(
        press(&mut app, KeyCode::Char('n')),
        answered(ApprovalDecision::Deny)
    );
    press(&mut app, KeyCode::Down);
    draw(&mut app, 40, 12);
    assert_eq!(
        press(&mut app, KeyCode::Char('n')),
        answered(ApprovalDecision::Deny)
    );
    assert_eq!(app.flash_text(), None);
}
