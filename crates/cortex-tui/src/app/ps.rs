//! `/ps`: the session's background commands (the model's `bash` with
//! `background: true`) as the timeline tells them: id, command, running or
//! how it ended; `/ps kill ID` ends one with its process group through the
//! API (a stopped turn leaves them running, so this is how the user stops a
//! dev server).

use crate::app::App;
use crate::app::command::Command;
use crate::state::Level;
use crate::text::clean_line;

/// Run `/ps` with `args`.
pub fn run(app: &mut App, args: &str) -> Vec<Command> {
    let mut words = args.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (None, _, _) => {
            app.list_processes();
            Vec::new()
        }
        (Some("kill"), Some(id), None) => {
            let known = app.state.processes.iter().any(|p| p.id == id);
            if !known {
                app.flash(&format!(
                    "/ps kill: no background command `{}` (/ps lists them)",
                    clean_line(id)
                ));
                return Vec::new();
            }
            app.flash(&format!("killing {id}…"));
            vec![Command::KillProcess(id.to_owned())]
        }
        _ => {
            app.flash("/ps takes nothing, or `kill ID`");
            Vec::new()
        }
    }
}

impl App {
    /// The background commands as notices of this screen (their texts were
    /// cleaned by the fold).
    fn list_processes(&mut self) {
        if self.state.processes.is_empty() {
            self.state
                .local_notice(Level::Info, "no background commands in this session");
        }
        let rows: Vec<String> = self
            .state
            .processes
            .iter()
            .map(|p| format!("{}  {}  {}", p.id, p.state(), p.command))
            .collect();
        for row in rows {
            self.state.local_notice(Level::Info, &row);
        }
        self.transcript.to_bottom();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{Event, EventKind, SessionId};

    fn app_with_process() -> App {
        let mut app = App::new(crate::view::theme::Theme::no_color());
        let event = Event {
            seq: 1,
            session_id: SessionId::from("s"),
            turn_id: None,
            ts: String::new(),
            kind: EventKind::ProcessStarted {
                id: "bg1".into(),
                command: "npm run dev".into(),
            },
        };
        app.state.apply(&event);
        app
    }

    #[test]
    fn kill_names_a_listed_command_only() {
        let mut app = app_with_process();
        assert_eq!(
            run(&mut app, "kill bg1"),
            vec![Command::KillProcess("bg1".into())]
        );
        assert!(run(&mut app, "kill bg9").is_empty());
        assert!(
            app.flash_text()
                .is_some_and(|f| f.contains("no background command"))
        );
        assert!(run(&mut app, "stop bg1").is_empty());
        let cells = app.state.cells.len();
        assert!(run(&mut app, "").is_empty());
        assert_eq!(app.state.cells.len(), cells + 1);
    }
}
