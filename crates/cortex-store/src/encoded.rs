//! An event kind serialised once: the same JSON text gives the store its
//! `payload` column and gives clients the event's wire form, so a streamed
//! event is not encoded a second time.

use crate::{Refused, StoreError};
use cortex_protocol::{Event, EventKind, SessionId, TurnId};
use serde_json::Value;
use std::ops::Range;

/// An [`EventKind`] with its JSON: `{"type":"…","payload":{…}}`.
#[derive(Debug, Clone)]
pub struct EncodedKind {
    kind: EventKind,
    json: String,
    /// Where the payload is in `json`; `None` for a variant without one.
    payload: Option<Range<usize>>,
}

impl EncodedKind {
    /// Serialise `kind`. [`StoreError::Invalid`] when it cannot be (it
    /// always can for the kinds serde derives today).
    pub fn new(kind: EventKind) -> Result<Self, StoreError> {
        let json = serde_json::to_string(&kind).map_err(|source| Refused::Unserializable {
            what: kind.type_name(),
            source,
        })?;
        match split(&json, kind.type_name()) {
            Some(payload) => Ok(EncodedKind {
                kind,
                json,
                payload,
            }),
            None => Self::through_value(kind, &json),
        }
    }

    /// The slow path, for a serialisation that does not have the expected
    /// shape (it always does for the kinds serde derives today).
    fn through_value(kind: EventKind, json: &str) -> Result<Self, StoreError> {
        let not_tagged = || Refused::NotTagged {
            what: kind.type_name(),
            json: json.to_owned(),
        };
        let Ok(Value::Object(mut map)) = serde_json::from_str(json) else {
            return Err(not_tagged().into());
        };
        let payload = map.remove("payload").unwrap_or(Value::Null);
        let mut tagged = serde_json::Map::new();
        tagged.insert("type".into(), Value::String(kind.type_name().into()));
        if !payload.is_null() {
            tagged.insert("payload".into(), payload);
        }
        let json = Value::Object(tagged).to_string();
        let payload = split(&json, kind.type_name()).ok_or_else(not_tagged)?;
        Ok(EncodedKind {
            kind,
            json,
            payload,
        })
    }

    /// The event kind.
    pub(crate) fn kind(&self) -> &EventKind {
        &self.kind
    }

    /// The kind's wire name (`turn.started`), the stored `type` column.
    pub fn type_name(&self) -> &'static str {
        self.kind.type_name()
    }

    /// The JSON text of the payload (`null` for a variant without one).
    pub fn payload(&self) -> &str {
        match &self.payload {
            Some(range) => &self.json[range.clone()],
            None => "null",
        }
    }

    /// The event this kind was stored as.
    pub fn into_event(self, session: &SessionId, turn: Option<&TurnId>, stamp: Stamp) -> Event {
        Event {
            seq: stamp.seq,
            ts: stamp.ts,
            session_id: session.clone(),
            turn_id: turn.cloned(),
            kind: self.kind,
        }
    }

    /// The event this kind was stored as, on the wire: exactly what
    /// `serde_json::to_string` writes for [`EncodedKind::into_event`]'s event.
    pub fn event_json(&self, session: &SessionId, turn: Option<&TurnId>, stamp: &Stamp) -> String {
        let mut out = String::with_capacity(self.json.len() + 128);
        out.push_str("{\"seq\":");
        out.push_str(&stamp.seq.to_string());
        out.push_str(",\"ts\":");
        push_json_str(&mut out, &stamp.ts);
        out.push_str(",\"session_id\":");
        push_json_str(&mut out, session.as_str());
        if let Some(turn) = turn {
            out.push_str(",\"turn_id\":");
            push_json_str(&mut out, turn.as_str());
        }
        out.push(',');
        // `json` starts with `{`: the kind's fields follow the event's.
        out.push_str(&self.json[1..]);
        out
    }
}

/// What the store assigned to an appended event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The event's place in its session's timeline, from 1.
    pub seq: u64,
    /// RFC 3339 with milliseconds.
    pub ts: String,
}

/// The payload's place in `{"type":"NAME","payload":P}` (`Some(None)` for
/// `{"type":"NAME"}`); `None` when `json` has another shape.
fn split(json: &str, type_name: &str) -> Option<Option<Range<usize>>> {
    let rest = json
        .strip_prefix("{\"type\":\"")?
        .strip_prefix(type_name)?
        .strip_prefix('"')?;
    if rest == "}" {
        return Some(None);
    }
    let payload = rest.strip_prefix(",\"payload\":")?.strip_suffix('}')?;
    let start = json.len() - payload.len() - 1;
    Some(Some(start..start + payload.len()))
}

fn push_json_str(out: &mut String, value: &str) {
    // Serialising a string into a String cannot fail.
    match serde_json::to_string(value) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{SessionId, TurnId};

    fn kinds() -> Vec<EventKind> {
        vec![
            EventKind::TurnCompleted {
                rounds: 3,
                finish: None,
                unverified: Vec::new(),
            },
            EventKind::MessageDelta {
                text: "a \"quoted\"\nline é }".into(),
            },
            EventKind::TurnStarted {
                message: "fix it".into(),
                mode: cortex_protocol::Mode::Agent,
            },
            EventKind::EnvReady { ms: 1.5 },
        ]
    }

    #[test]
    fn payload_is_the_tagged_content() {
        for kind in kinds() {
            let encoded = EncodedKind::new(kind.clone()).expect("encode");
            let value: Value = serde_json::to_value(&kind).expect("value");
            let payload: Value = serde_json::from_str(encoded.payload()).expect("payload");
            assert_eq!(payload, value["payload"]);
            assert_eq!(encoded.type_name(), kind.type_name());
        }
    }

    #[test]
    fn event_json_is_what_serde_writes() {
        for (i, kind) in kinds().into_iter().enumerate() {
            let encoded = EncodedKind::new(kind).expect("encode");
            let session = SessionId("s-\"1".into());
            let turn = (i % 2 == 0).then(|| TurnId("t1".into()));
            let stamp = Stamp {
                seq: i as u64 + 1,
                ts: "2026-11-30T17:00:00.123Z".into(),
            };
            let json = encoded.event_json(&session, turn.as_ref(), &stamp);
            let event = encoded.into_event(&session, turn.as_ref(), stamp);
            assert_eq!(json, serde_json::to_string(&event).expect("json"));
        }
    }

    #[test]
    fn an_unexpected_shape_is_split_or_refused() {
        assert_eq!(split(r#"{"type":"x"}"#, "x"), Some(None));
        assert_eq!(
            split(r#"{"type":"x","payload":{}}"#, "x"),
            Some(Some(22..24))
        );
        assert_eq!(split(r#"{"type":"y","payload":{}}"#, "x"), None);
        assert_eq!(split(r#"{"payload":{},"type":"x"}"#, "x"), None);
    }
}
