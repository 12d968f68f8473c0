//! `/init`: what `cortex init` does, from the TUI: one Agent turn whose
//! message asks the model to write (or update) the repository's first
//! `AGENTS.md` from what it finds. The prompt lives here so the CLI's
//! `cortex init` sends the very same text; nothing here touches the
//! repository (the model does, in the guest, like any turn).

use crate::app::{App, Command};
use cortex_protocol::Mode;

/// The task: the facts an agent needs first, found rather than guessed.
pub const INIT_PROMPT: &str = "Write AGENTS.md at the repository root: the instructions \
a coding agent reads before working here. Find out first, with tools: how to build, test \
(one test too) and lint, from the build files, scripts and CI configuration; the layout (the \
main folders and what is in each); conventions the code follows. Then write a short \
Markdown file (under 60 lines) with sections for commands, layout and conventions, \
stating only what you found. If AGENTS.md already exists, read it and update it: keep \
what is still true.";

/// `/init`: an Agent turn with [`INIT_PROMPT`], between turns (the session
/// switches to Agent first when it is in another mode: the turn writes a
/// file, which no other mode can).
pub fn run(app: &mut App, args: &str) -> Vec<Command> {
    if !args.is_empty() {
        app.flash("usage: /init (writes or updates AGENTS.md)");
        return Vec::new();
    }
    if app.state.running() {
        app.flash("/init waits until the turn ends (Esc stops it)");
        return Vec::new();
    }
    app.transcript.to_bottom();
    vec![Command::StartTurn {
        message: INIT_PROMPT.to_owned(),
        mode: (app.state.mode != Mode::Agent).then_some(Mode::Agent),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Script;
    use crate::view::theme::Theme;

    /// An app whose session is in `mode`, with a turn running if `busy`.
    fn app_in(mode: Mode, busy: bool) -> App {
        let mut app = App::new(Theme::no_color());
        let mut s = Script::new("openai:gpt-4o");
        s.push(cortex_protocol::EventKind::ModeChanged {
            from: Mode::Agent,
            to: mode,
        });
        if busy {
            s.turn("busy");
        }
        for event in &s.events {
            app.on_event(event);
        }
        app
    }

    #[test]
    fn init_starts_an_agent_turn_with_the_cli_prompt() {
        let mut plan = app_in(Mode::Plan, false);
        assert_eq!(
            crate::app::slash::run(&mut plan, "/init"),
            [Command::StartTurn {
                message: INIT_PROMPT.to_owned(),
                mode: Some(Mode::Agent),
            }]
        );
        let mut agent = app_in(Mode::Agent, false);
        assert_eq!(
            crate::app::slash::run(&mut agent, "/init"),
            [Command::StartTurn {
                message: INIT_PROMPT.to_owned(),
                mode: None,
            }]
        );
        assert!(crate::app::slash::run(&mut agent, "/init now").is_empty());
        assert!(agent.flash_text().is_some_and(|f| f.starts_with("usage")));
    }

    #[test]
    fn init_waits_for_a_running_turn() {
        let mut app = app_in(Mode::Agent, true);
        assert!(app.state.running());
        assert!(crate::app::slash::run(&mut app, "/init").is_empty());
        assert!(app.flash_text().is_some_and(|f| f.contains("waits")));
    }
}
