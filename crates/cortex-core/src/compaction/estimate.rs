//! How many tokens the next request will take, before it is sent.
//!
//! The provider's own count is the best figure: after a response reports
//! `input_tokens`, the next request is estimated as that count plus the
//! messages added since, at about 4 bytes a token (serialised JSON, which
//! over-counts a little, so compaction errs on the early side). Without a
//! reported count (first request, a provider without usage, or after the
//! history or the mode changed) the whole request is estimated at 4 bytes a
//! token: system prompt, history as JSON and tool schemas.

use cortex_model::ModelRequest;
use cortex_protocol::Message;

/// Bytes per token of the fallback estimate.
pub(crate) const BYTES_PER_TOKEN: usize = 4;

/// The provider's count for one request: `input_tokens` covered the first
/// `messages` messages of the history (plus system prompt and tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UsageAnchor {
    pub input_tokens: u64,
    pub messages: usize,
}

pub(crate) fn tokens_of_bytes(bytes: usize) -> u64 {
    u64::try_from(bytes.div_ceil(BYTES_PER_TOKEN)).unwrap_or(u64::MAX)
}

/// What one image counts for, in tokens: about what providers charge for a
/// large one, not the length of its base64 text (a 1 MB screenshot is not
/// 350,000 tokens).
pub(crate) const IMAGE_TOKENS: usize = 1_600;

/// The history's size as JSON (an array of messages), each image counted as
/// [`IMAGE_TOKENS`] instead of its bytes.
fn messages_bytes(messages: &[Message]) -> usize {
    let json = |m: &Message| serde_json::to_vec(m).map_or(0, |v| v.len());
    let each: usize = messages
        .iter()
        .map(|m| {
            if m.attachments.is_empty() {
                json(m)
            } else {
                let text = Message {
                    attachments: Vec::new(),
                    ..m.clone()
                };
                json(&text) + m.attachments.len() * IMAGE_TOKENS * BYTES_PER_TOKEN
            }
        })
        .sum();
    // The brackets and the commas between messages.
    each + 2 + messages.len().saturating_sub(1)
}

/// Size of what is sent: system prompt, history and tool schemas.
pub(crate) fn request_bytes(request: &ModelRequest) -> usize {
    let tools = serde_json::to_vec(&request.tools).map_or(0, |v| v.len());
    request.system.len() + messages_bytes(&request.messages) + tools
}

/// Estimated input tokens of `request`.
pub(crate) fn estimate(request: &ModelRequest, anchor: Option<UsageAnchor>) -> u64 {
    match anchor {
        Some(a) if a.messages <= request.messages.len() => {
            a.input_tokens
                .saturating_add(tokens_of_bytes(messages_bytes(
                    &request.messages[a.messages..],
                )))
        }
        _ => tokens_of_bytes(request_bytes(request)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "m".into(),
            system: "x".repeat(400),
            messages,
            tools: Vec::new(),
            tool_choice: Default::default(),
            hints: Default::default(),
        }
    }

    #[test]
    fn falls_back_to_bytes_and_prefers_the_providers_count() {
        let r = request(vec![Message::user("a".repeat(4000))]);
        let bytes = tokens_of_bytes(request_bytes(&r));
        assert!(bytes > 1100 && bytes < 1200, "{bytes}");
        assert_eq!(estimate(&r, None), bytes);
        // The provider counted the first message: only what came after is
        // estimated from bytes.
        let mut r2 = r.clone();
        r2.messages.push(Message::user("b".repeat(400)));
        let anchor = UsageAnchor {
            input_tokens: 50,
            messages: 1,
        };
        let e = estimate(&r2, Some(anchor));
        assert!(e > 150 && e < 170, "{e}");
        // An anchor past the history (it was compacted) is ignored.
        let stale = UsageAnchor {
            input_tokens: 50,
            messages: 5,
        };
        assert_eq!(estimate(&r, Some(stale)), bytes);
    }

    #[test]
    fn an_image_counts_as_a_fixed_number_of_tokens_not_its_bytes() {
        let plain = vec![Message::user("look at this")];
        let mut with_image = plain.clone();
        with_image[0]
            .attachments
            .push(cortex_protocol::Attachment::Image {
                mime_type: "image/png".into(),
                data: "A".repeat(1_000_000),
            });
        assert_eq!(
            messages_bytes(&plain),
            serde_json::to_vec(&plain).expect("json").len()
        );
        assert_eq!(
            messages_bytes(&with_image) - messages_bytes(&plain),
            IMAGE_TOKENS * BYTES_PER_TOKEN
        );
    }
}
