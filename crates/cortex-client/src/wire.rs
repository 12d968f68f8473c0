//! Decoding one event's JSON without serde's `flatten`.
//!
//! `Event` derives `Deserialize` with its kind flattened into it, which makes
//! serde buffer every field (the whole payload as a tree of owned values)
//! before it can pick the kind. The API always writes `type` and `payload`
//! as plain members, so the client reads the payload as raw JSON text and
//! hands the kind's own (adjacently tagged) deserializer a two-entry map:
//! the payload is then parsed once, straight into its type.

use cortex_protocol::{Event, EventKind, SessionId, TurnId};
use serde::Deserialize;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess};
use serde_json::value::RawValue;
use std::borrow::Cow;

#[derive(Deserialize)]
struct WireEvent<'a> {
    seq: u64,
    ts: String,
    session_id: SessionId,
    #[serde(default)]
    turn_id: Option<TurnId>,
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    payload: Option<&'a RawValue>,
}

/// The event in `json`, the same value `serde_json::from_slice::<Event>`
/// gives.
pub(crate) fn decode_event(json: &[u8]) -> Result<Event, serde_json::Error> {
    let wire: WireEvent<'_> = serde_json::from_slice(json)?;
    let kind = EventKind::deserialize(de::value::MapAccessDeserializer::new(KindFields {
        kind: Some(&wire.kind),
        payload: wire.payload,
        next: Field::Type,
    }))?;
    Ok(Event {
        seq: wire.seq,
        ts: wire.ts,
        session_id: wire.session_id,
        turn_id: wire.turn_id,
        kind,
    })
}

#[derive(Clone, Copy)]
enum Field {
    Type,
    Payload,
}

/// `{"type": kind, "payload": payload}` as a map, the payload unparsed.
struct KindFields<'a> {
    kind: Option<&'a str>,
    payload: Option<&'a RawValue>,
    next: Field,
}

impl<'de> MapAccess<'de> for KindFields<'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let key = match self.next {
            Field::Type if self.kind.is_some() => "type",
            Field::Type | Field::Payload if self.payload.is_some() => {
                self.next = Field::Payload;
                "payload"
            }
            _ => return Ok(None),
        };
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        match self.next {
            Field::Type => {
                self.next = Field::Payload;
                let kind = self.kind.take().unwrap_or_default();
                seed.deserialize(kind.into_deserializer())
            }
            Field::Payload => match self.payload.take() {
                Some(raw) => seed.deserialize(raw),
                None => Err(de::Error::custom("no payload")),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One event of each type a scripted turn writes, as `cortex exec
    /// --json` printed them, plus members in another order: the fast path
    /// decodes what the derived `Deserialize` does.
    #[test]
    fn decodes_as_the_derived_deserializer_does() {
        let reordered = r#"{"payload":{"text":"hi"},"type":"message.delta","seq":5,"ts":"t","session_id":"s","turn_id":"t1"}"#;
        let lines = include_str!("../testdata/turn-events.jsonl").lines();
        let mut kinds = 0;
        for json in lines.chain([reordered]) {
            let derived: Event = serde_json::from_str(json).expect("derived");
            let fast = decode_event(json.as_bytes()).expect("fast");
            assert_eq!(derived, fast, "{json}");
            kinds += 1;
        }
        assert!(kinds >= 12, "{kinds} events");
    }

    #[test]
    fn bad_events_are_errors() {
        for json in [
            r#"{"seq":1,"ts":"t","session_id":"s","type":"no.such.kind","payload":{}}"#,
            r#"{"seq":1,"ts":"t","session_id":"s","type":"turn.completed","payload":{"rounds":"x"}}"#,
            r#"{"seq":1,"ts":"t","session_id":"s","payload":{}}"#,
            r#"not json"#,
        ] {
            assert!(decode_event(json.as_bytes()).is_err(), "{json}");
        }
    }
}
