//! The model's side of background processes: `bash` with `background:
//! true` (start), `bash_output` (read what is new) and `bash_kill`, and the
//! words of their results.

use super::{Background, BackgroundError, End, Snapshot};
use crate::answer::Answer;
use crate::{CoreError, Session};
use cortex_protocol::{BackgroundIdArgs, BashArgs, TurnId};
use std::time::Duration;

/// The most output one start or `bash_output` returns (the newest; what is
/// left out is counted in the result).
pub(crate) const READ_BYTES: usize = 16 * 1024;

impl Session {
    /// The session's background processes, for tasks that do not hold the
    /// session (the API lists and kills them while a turn runs).
    pub fn background(&self) -> &Background {
        &self.background
    }

    /// `bash` with `background: true`: start the command in the guest and
    /// answer at once with its id and what it printed within a moment.
    pub(crate) async fn start_background(
        &mut self,
        turn: &TurnId,
        args: BashArgs,
    ) -> Result<Answer, CoreError> {
        let Some(guest) = &self.guest else {
            return Ok(Answer::error("the guest is not attached"));
        };
        let started = self
            .background
            .start(guest, turn, args.command, READ_BYTES)
            .await;
        Ok(match started {
            Ok(snapshot) => started_answer(&snapshot),
            Err(BackgroundError::Core(e)) => return Err(*e),
            Err(e) => Answer::error(format!("the command could not start: {e}")),
        })
    }

    /// `bash_output`: what the process printed since the last read.
    pub(crate) fn bash_output(&self, args: &BackgroundIdArgs) -> Answer {
        match self.background.read(&args.id, READ_BYTES) {
            Ok(snapshot) => read_answer(&snapshot),
            Err(e) => Answer::error(e.to_string()),
        }
    }

    /// `bash_kill`: end the process with its process group.
    pub(crate) async fn bash_kill(&self, args: &BackgroundIdArgs) -> Answer {
        match self.background.kill(&args.id, "killed by bash_kill").await {
            Ok(info) if info.ended.as_deref() == Some("killed by bash_kill") => Answer::ok(
                format!("{} was killed, with everything it started.", info.id),
            ),
            Ok(info) if info.running => Answer::error(format!(
                "{} was asked to end but is still running; try again",
                info.id
            )),
            Ok(info) => Answer::ok(format!(
                "{} had already ended: {}",
                info.id,
                end_words(info.ended.as_deref().unwrap_or("ended"), info.exit_code)
            )),
            Err(e) => Answer::error(e.to_string()),
        }
    }
}

/// The answer to a start: the id, how to use it, and the output so far.
fn started_answer(snapshot: &Snapshot) -> Answer {
    let id = &snapshot.id;
    let mut text = match &snapshot.end {
        None => format!(
            "Started in the background as {id}; it keeps running after this call. \
             bash_output with id \"{id}\" reads its new output, bash_kill ends it."
        ),
        Some(end) => format!("{id} ended at once: {}.", end_line(end)),
    };
    push_output(&mut text, snapshot, "Output so far", "No output yet.");
    match &snapshot.end {
        Some(end) if end.exit_code != Some(0) => Answer::error(text),
        _ => Answer::ok(text),
    }
}

/// The answer to `bash_output`: where the process stands, then what is new.
fn read_answer(snapshot: &Snapshot) -> Answer {
    let id = &snapshot.id;
    let mut text = match &snapshot.end {
        None => format!("{id} is running ({}).", duration(snapshot.ran)),
        Some(end) => format!(
            "{id} has ended: {} after {}.",
            end_line(end),
            duration(end.ran)
        ),
    };
    push_output(&mut text, snapshot, "New output", "No new output.");
    Answer::ok(text)
}

fn push_output(text: &mut String, snapshot: &Snapshot, heading: &str, none: &str) {
    let read = &snapshot.read;
    if read.text.is_empty() && read.skipped == 0 {
        text.push(' ');
        text.push_str(none);
        return;
    }
    text.push_str(&format!("\n{heading}:\n"));
    if read.skipped > 0 {
        text.push_str(&format!(
            "[{} earlier bytes not shown: only the newest {} of a read are kept]\n",
            read.skipped, READ_BYTES
        ));
    }
    text.push_str(&read.text);
}

fn end_line(end: &End) -> String {
    end_words(&end.reason, end.exit_code)
}

fn end_words(reason: &str, exit_code: Option<i32>) -> String {
    match exit_code {
        Some(code) => format!("{reason} with exit code {code}"),
        None => reason.to_owned(),
    }
}

/// A running time as people say it: `4.2 s`, `3m 12s`, `1h 05m`.
pub(crate) fn duration(ran: Duration) -> String {
    let secs = ran.as_secs();
    if secs < 60 {
        format!("{:.1} s", ran.as_secs_f64())
    } else if secs < 3600 {
        format!("{}m {:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h {:02}m", secs / 3600, (secs % 3600) / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::background::buffer::Read;

    fn snapshot(text: &str, skipped: u64, end: Option<End>) -> Snapshot {
        Snapshot {
            id: "bg1".into(),
            read: Read {
                text: text.into(),
                skipped,
            },
            end,
            ran: Duration::from_millis(1500),
        }
    }

    #[test]
    fn a_read_says_where_the_process_stands_and_what_was_cut() {
        let running = read_answer(&snapshot("", 0, None)).output;
        assert_eq!(running, "bg1 is running (1.5 s). No new output.");
        let end = End {
            exit_code: Some(3),
            reason: "exited".into(),
            ran: Duration::from_secs(75),
        };
        let ended = read_answer(&snapshot("last\n", 10, Some(end))).output;
        assert!(
            ended.starts_with("bg1 has ended: exited with exit code 3 after 1m 15s."),
            "{ended}"
        );
        assert!(ended.contains("[10 earlier bytes not shown"), "{ended}");
        assert!(ended.ends_with("last\n"), "{ended}");
    }

    #[test]
    fn a_command_that_failed_at_once_is_an_error() {
        let end = End {
            exit_code: Some(127),
            reason: "exited".into(),
            ran: Duration::from_millis(5),
        };
        let answer = started_answer(&snapshot("nope: not found\n", 0, Some(end)));
        assert_eq!(answer.status, cortex_protocol::ToolStatus::Error);
        assert!(answer.output.starts_with("bg1 ended at once"));
        let answer = started_answer(&snapshot("", 0, None));
        assert_eq!(answer.status, cortex_protocol::ToolStatus::Ok);
        assert!(answer.output.contains("bash_kill ends it. No output yet."));
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration(Duration::from_millis(4200)), "4.2 s");
        assert_eq!(duration(Duration::from_secs(192)), "3m 12s");
        assert_eq!(duration(Duration::from_secs(3900)), "1h 05m");
    }
}
