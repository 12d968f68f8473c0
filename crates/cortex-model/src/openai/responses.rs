//! The Responses API (`POST /responses`): `request` builds the body,
//! `events` reads the typed stream events.
//!
//! Requests are sent with `store: false` (nothing is kept on OpenAI's side)
//! and, for reasoning models, `include: ["reasoning.encrypted_content"]`:
//! each reasoning item comes
//! back encrypted, is kept with the assistant message as a
//! [`cortex_protocol::ProviderItem`], and is sent again before that
//! message's calls, as the API requires for reasoning models.

mod events;
mod request;

pub(crate) use events::EventParser;
pub(crate) use request::build_body;

pub(crate) const PROVIDER: &str = "openai-responses";
