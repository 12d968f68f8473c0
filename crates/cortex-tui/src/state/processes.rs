//! The session's background commands (`process.started`, `process.ended`),
//! folded for `/ps`: each one's id, command and whether it still runs. Every
//! text is cleaned here, as the model wrote the command.

use super::SessionState;
use crate::state::cell::Level;
use crate::text::clean_line;
use cortex_protocol::EventKind;

/// One background command as `/ps` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRow {
    /// Its handle, e.g. `bg1` (cleaned).
    pub id: String,
    /// The command's first line (cleaned).
    pub command: String,
    /// How it ended (cleaned, with the exit code); `None` while it runs.
    pub ended: Option<String>,
}

impl ProcessRow {
    /// `running` or `exited …`, as `/ps` shows it.
    pub fn state(&self) -> &str {
        self.ended.as_deref().unwrap_or("running")
    }
}

impl SessionState {
    /// Background commands' events: the row, and a notice in the transcript.
    pub(super) fn apply_process(&mut self, kind: &EventKind) -> bool {
        match kind {
            EventKind::ProcessStarted { id, command } => {
                let first = command.lines().next().unwrap_or_default();
                self.processes.push(ProcessRow {
                    id: clean_line(id),
                    command: clean_line(first),
                    ended: None,
                });
            }
            EventKind::ProcessEnded {
                id,
                exit_code,
                reason,
            } => {
                let id = clean_line(id);
                let ended = match exit_code {
                    Some(code) => format!("{} ({code})", clean_line(reason)),
                    None => clean_line(reason),
                };
                if let Some(row) = self.processes.iter_mut().find(|p| p.id == id) {
                    row.ended = Some(ended);
                }
            }
            _ => return false,
        }
        if let Some(line) = kind.process_line() {
            self.notice(Level::Info, clean_line(&line));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn started_and_ended_make_one_clean_row() {
        let mut state = SessionState::default();
        let started = EventKind::ProcessStarted {
            id: "bg1".into(),
            command: "python3 -m http.server\u{1b}[31m\nsecond line".into(),
        };
        assert!(state.apply_process(&started));
        assert_eq!(state.processes[0].state(), "running");
        assert_eq!(state.processes[0].command, "python3 -m http.server^[[31m");
        let ended = EventKind::ProcessEnded {
            id: "bg1".into(),
            exit_code: Some(1),
            reason: "exited".into(),
        };
        assert!(state.apply_process(&ended));
        assert_eq!(state.processes[0].state(), "exited (1)");
        assert!(!state.apply_process(&EventKind::Error {
            message: "x".into()
        }));
    }
}
