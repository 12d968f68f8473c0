//! Running one call that needs shared access to the session only (guest
//! tools, `todo_read`, `web_fetch`), so that the dispatcher can run several
//! of them at once: its output streamed as `tool.output.delta`, its result
//! the guest's.

use crate::answer::Answer;
use crate::{CoreError, Session};
use cortex_protocol::{CallId, EventKind, GuestReply, ToolArgs, TurnId};
use tokio_util::sync::CancellationToken;

impl Session {
    /// Run one call that needs only shared access: guest tools, todo_read
    /// and web_fetch (`web.rs`).
    pub(crate) async fn run_shared(
        &self,
        turn: &TurnId,
        call_id: &CallId,
        args: ToolArgs,
        cancel: &CancellationToken,
    ) -> Result<Answer, CoreError> {
        if let ToolArgs::TodoRead(_) = args {
            return Ok(Answer::ok(cortex_tools::render_todos(&self.state.todos)));
        }
        let mut handle = match self.start_call(args, cancel).await {
            Ok(handle) => handle,
            Err(answer) => return Ok(answer),
        };
        while let Some(reply) = handle.next().await {
            match reply {
                GuestReply::Delta { stream, text } => {
                    self.timeline
                        .emit(
                            Some(turn),
                            EventKind::ToolOutputDelta {
                                call_id: call_id.clone(),
                                stream,
                                text,
                            },
                        )
                        .await?;
                }
                GuestReply::Result(outcome) => return Ok(self.answer_of(outcome)),
            }
        }
        let why = handle
            .ended_because()
            .unwrap_or_else(|| "the guest exited".to_owned());
        Ok(Answer::error(format!(
            "the guest ended while running this call ({why}); a fresh guest is attached for the next call"
        )))
    }
}
