//! `session/prompt` and `session/cancel`: one turn of the session API,
//! its timeline streamed to the editor as `session/update` notifications
//! until the turn ends, and Stop. A prompt `/rewind …` runs no turn: it is
//! the API's rewind (`rewind.rs`).

use crate::commands::slash_command;
use crate::map::{self, TurnEnd};
use crate::permission::{self, Ask};
use crate::sessions::{Tracked, acp_id};
use crate::{AcpAgent, api_error, internal, invalid_params, rewind};
use agent_client_protocol::Client as Editor;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, ContentChunk, EmbeddedResourceResource, PromptRequest,
    PromptResponse, SessionNotification, SessionUpdate, StopReason,
};
use cortex_client::EventStream;
use cortex_protocol::{EventKind, SessionId, TurnId};
use std::sync::atomic::Ordering;

impl AcpAgent {
    /// Run one turn with the prompt as its message; answers once the turn
    /// has ended, after every update of it was sent.
    pub(crate) async fn prompt(
        &self,
        request: PromptRequest,
        cx: &ConnectionTo<Editor>,
    ) -> Result<PromptResponse, agent_client_protocol::Error> {
        let id = acp_id(&request.session_id);
        let live = self.sessions.get(&id)?;
        let (message, images) = prompt_parts(&request.prompt)?;
        let mut tracked = live.tracked.lock().await;
        // `/rewind` is answered by the API's rewind, not a turn.
        if let Some((name, arguments)) = slash_command(&message)
            && name == rewind::NAME
        {
            if !images.is_empty() {
                return Err(invalid_params("/rewind takes no images"));
            }
            let text = self.rewind(&id, arguments).await?;
            cx.send_notification(SessionNotification::new(
                request.session_id.clone(),
                SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text))),
            ))?;
            return Ok(PromptResponse::new(StopReason::EndTurn));
        }
        live.cancel.store(false, Ordering::SeqCst);
        // Subscribed before the turn starts: nothing of it can be missed.
        let mut events = self
            .api
            .events(&id, tracked.seen)
            .await
            .map_err(api_error)?;
        let started = match self.command_of(&id, &message).await {
            Some(_) if !images.is_empty() => {
                return Err(invalid_params("a custom command takes no images"));
            }
            Some((name, arguments)) => self.api.run_command(&id, &name, &arguments).await,
            None => {
                let body = cortex_client::CreateTurn {
                    message,
                    attachments: images,
                };
                self.api.start_turn_with(&id, &body).await
            }
        };
        let turn = started.map_err(api_error)?.turn_id;
        // A cancel that arrived while the turn was being started found
        // nothing to stop.
        if live.cancel.load(Ordering::SeqCst) {
            self.stop(&id).await;
        }
        let end = stream_turn(
            &mut tracked,
            &mut events,
            &turn,
            |update| {
                cx.send_notification(SessionNotification::new(request.session_id.clone(), update))
            },
            |ask| permission::ask_editor(cx, &self.api, &id, ask),
        )
        .await?;
        // The turn could have been stopped by its stop rule at the same
        // moment the editor cancelled: the editor's cancel wins, as the
        // protocol requires.
        let cancelled = live.cancel.load(Ordering::SeqCst);
        match end {
            _ if cancelled => Ok(PromptResponse::new(StopReason::Cancelled)),
            TurnEnd::Stop(reason) => Ok(PromptResponse::new(reason)),
            TurnEnd::Failed(error) => Err(internal(error)),
        }
    }

    /// `session/cancel`: Stop the session's running turn. A notification
    /// has no answer; the prompt it cancels answers `cancelled`.
    pub(crate) async fn cancel(&self, note: CancelNotification) {
        let id = acp_id(&note.session_id);
        match self.sessions.get(&id) {
            Ok(live) => {
                live.cancel.store(true, Ordering::SeqCst);
                self.stop(&id).await;
            }
            Err(e) => tracing::warn!("session/cancel: {}", e.message),
        }
    }

    async fn stop(&self, id: &SessionId) {
        match self.api.stop(id).await {
            Ok(_) => {}
            // No turn running (it ended, or has not started yet): nothing
            // to stop.
            Err(e) if e.status() == Some(409) => {}
            Err(e) => tracing::warn!("session/cancel {id}: {e}"),
        }
    }
}

/// Send the updates of every event after `tracked.seen` until `turn` ends
/// (events of an earlier turn the editor has not seen come first). A call
/// of `turn` that waits for the user's approval goes to `ask`, which must
/// not wait for the answer: the stream goes on meanwhile.
async fn stream_turn(
    tracked: &mut Tracked,
    events: &mut EventStream,
    turn: &TurnId,
    mut send: impl FnMut(
        agent_client_protocol::v1::schema::SessionUpdate,
    ) -> Result<(), agent_client_protocol::Error>,
    mut ask: impl FnMut(Ask),
) -> Result<TurnEnd, agent_client_protocol::Error> {
    loop {
        let event = match events.next().await {
            Some(Ok(event)) => event,
            Some(Err(e)) => return Err(api_error(e)),
            None => return Err(internal("the server closed the event stream")),
        };
        if event.seq <= tracked.seen {
            continue;
        }
        tracked.seen = event.seq;
        for update in tracked.mapper.map(&event.kind, false) {
            send(update)?;
        }
        if let EventKind::ApprovalRequested {
            call_id,
            summary,
            reason,
            ..
        } = &event.kind
            && event.turn_id.as_ref() == Some(turn)
        {
            ask(Ask {
                call_id: call_id.clone(),
                summary: summary.clone(),
                reason: reason.clone(),
            });
        }
        if event.turn_id.as_ref() == Some(turn)
            && let Some(end) = map::turn_end(&event.kind)
        {
            return Ok(end);
        }
    }
}

/// The prompt as one message and its images: text as it is, a resource
/// link as its URI, an embedded text resource as its URI followed by its
/// text, an image as an attachment (the server checks what it is and
/// whether the model takes images). Anything else was not advertised and
/// is refused; so is a prompt without text.
fn prompt_parts(
    blocks: &[ContentBlock],
) -> Result<(String, Vec<cortex_client::TurnAttachment>), agent_client_protocol::Error> {
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(link.uri.clone()),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(resource) => {
                    parts.push(format!("{}:\n```\n{}\n```", resource.uri, resource.text))
                }
                _ => {
                    return Err(invalid_params(
                        "binary resources are not supported in prompts",
                    ));
                }
            },
            ContentBlock::Image(image) => images.push(cortex_client::TurnAttachment {
                mime_type: Some(image.mime_type.clone()),
                data: image.data.clone(),
            }),
            _ => {
                return Err(invalid_params(
                    "only text, resources and images are supported in prompts",
                ));
            }
        }
    }
    let message = parts.join("\n");
    if message.trim().is_empty() {
        return Err(invalid_params("the prompt has no text"));
    }
    Ok((message, images))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::{
        EmbeddedResource, ImageContent, ResourceLink, TextResourceContents,
    };

    #[test]
    fn text_links_and_embedded_text_make_one_message() {
        let blocks = vec![
            ContentBlock::from("fix the bug in"),
            ContentBlock::ResourceLink(ResourceLink::new("calc.py", "file:///r/calc.py")),
            ContentBlock::Resource(EmbeddedResource::new(
                EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                    "def add(a, b): return a - b",
                    "file:///r/calc.py",
                )),
            )),
        ];
        let (message, images) = prompt_parts(&blocks).expect("valid");
        assert!(images.is_empty());
        assert_eq!(
            message,
            "fix the bug in\nfile:///r/calc.py\nfile:///r/calc.py:\n```\ndef add(a, b): return a - b\n```"
        );
    }

    #[test]
    fn images_are_attachments_and_a_prompt_needs_text() {
        let blocks = vec![
            ContentBlock::from("what is this?"),
            ContentBlock::Image(ImageContent::new("iVBORw0KGgo=", "image/png")),
        ];
        let (message, images) = prompt_parts(&blocks).expect("valid");
        assert_eq!(message, "what is this?");
        assert_eq!(
            images,
            vec![cortex_client::TurnAttachment {
                mime_type: Some("image/png".into()),
                data: "iVBORw0KGgo=".into(),
            }]
        );
        let only_image = vec![ContentBlock::Image(ImageContent::new("AAAA", "image/png"))];
        let error = prompt_parts(&only_image).expect_err("no text");
        assert!(error.message.contains("no text"), "{error:?}");
        let error = prompt_parts(&[ContentBlock::from("  ")]).expect_err("empty");
        assert!(error.message.contains("no text"), "{error:?}");
    }
}
