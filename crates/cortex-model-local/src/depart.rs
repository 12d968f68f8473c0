//! Where a reply drawn again leaves a refused call: at the first character
//! where the refused call's arguments differ from the call the refusal
//! handed over instead ([`cortex_model::RefusedCall::instead`]).
//!
//! Drawn again at a temperature, the 1.5B wrote its refused call unchanged: its
//! tokens were too sure for sampling to change one. Drawn greedily again with
//! only the refused call's way past that character barred, the reply follows
//! the model's own next choice at the one place the refusal disagreed with it,
//! and is the same as before everywhere else.

use serde_json::{Map, Value};

/// The refused reply and where a new draw must leave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Departure {
    /// The refused reply's text, as generated.
    text: String,
    /// The byte of `text` no new draw may reach along `text`.
    at: usize,
}

impl Departure {
    /// The departure from the reply `text`, whose call has `arguments`
    /// (JSON text, as parsed from `text`), towards the call with `instead`.
    /// `None` when either is not a JSON object, when every argument of the
    /// reply's call is as `instead` has it, or when `text` does not write
    /// the arguments out as an object.
    pub(crate) fn new(text: &str, arguments: &str, instead: &str) -> Option<Departure> {
        let ours: Map<String, Value> = serde_json::from_str(arguments).ok()?;
        let theirs: Map<String, Value> = serde_json::from_str(instead).ok()?;
        let at = ours
            .iter()
            .filter(|(key, value)| theirs.get(*key) != Some(value))
            .map(|(key, value)| {
                let start = value_start(text, key)?;
                match (value, theirs.get(key)) {
                    (Value::String(ours), Some(Value::String(theirs))) => {
                        let same = ours
                            .chars()
                            .zip(theirs.chars())
                            .take_while(|(a, b)| a == b)
                            .count();
                        Some(start + 1 + raw_len(&text[start + 1..], same)?)
                    }
                    _ => Some(start),
                }
            })
            .collect::<Option<Vec<usize>>>()?
            .into_iter()
            .min()?;
        Some(Departure {
            text: text.to_owned(),
            at,
        })
    }

    /// When the reply generated so far is `so_far` (bytes), whether a token
    /// whose text is `piece` is barred: it would go on along the refused
    /// reply past the departure.
    pub(crate) fn bars(&self, so_far: &[u8], piece: &[u8]) -> bool {
        let refused = self.text.as_bytes();
        !piece.is_empty()
            && so_far.len() <= self.at
            && refused.starts_with(so_far)
            && refused[so_far.len()..].starts_with(piece)
            && so_far.len() + piece.len() > self.at
    }

    /// Whether some token may be barred after `so_far` ([`Departure::bars`]
    /// is false for every piece otherwise).
    pub(crate) fn bars_any(&self, so_far: &[u8]) -> bool {
        so_far.len() <= self.at && self.text.as_bytes().starts_with(so_far)
    }
}

/// Where the value of the argument `key` begins in `text`: after the first
/// `"key":` (spaces allowed) that is not inside a string, counting from the
/// `"arguments"` member when there is one (a call written as
/// `{"name": …, "arguments": {…}}`).
fn value_start(text: &str, key: &str) -> Option<usize> {
    let from = member_value(text, "arguments", 0).unwrap_or(0);
    member_value(text, key, from)
}

/// The start of the value of the first member named `key` at or after
/// `from`, skipping the text of strings.
fn member_value(text: &str, key: &str, from: usize) -> Option<usize> {
    let quoted = serde_json::to_string(key).ok()?;
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] != b'"' {
            i += 1;
            continue;
        }
        let end = i + 1 + raw_string_len(&text[i + 1..])?;
        let after = text[end + 1..].trim_start();
        if text[i..=end] == *quoted
            && let Some(value) = after.strip_prefix(':')
        {
            let value = value.trim_start();
            return Some(text.len() - value.len());
        }
        i = end + 1;
    }
    None
}

/// The bytes of the raw JSON string text `raw` (after its opening quote)
/// that its first `chars` characters take, escapes counted whole.
fn raw_len(raw: &str, chars: usize) -> Option<usize> {
    let mut at = 0;
    for _ in 0..chars {
        at += raw_char_len(&raw[at..])?;
    }
    Some(at)
}

/// The bytes of the raw JSON string text `raw` before its closing quote.
fn raw_string_len(raw: &str) -> Option<usize> {
    let mut at = 0;
    while !raw[at..].starts_with('"') {
        at += raw_char_len(&raw[at..])?;
    }
    Some(at)
}

/// The bytes of the first character of the raw JSON string text `raw`: an
/// escape whole (a surrogate pair as one), `None` at the closing quote or
/// the end.
fn raw_char_len(raw: &str) -> Option<usize> {
    let first = raw.chars().next()?;
    match first {
        '"' => None,
        '\\' if raw[1..].starts_with('u') => {
            let code = u32::from_str_radix(raw.get(2..6)?, 16).ok()?;
            let pair = (0xD800..0xDC00).contains(&code) && raw[6..].starts_with("\\u");
            Some(if pair { 12 } else { 6 })
        }
        '\\' => Some(1 + raw[1..].chars().next()?.len_utf8()),
        c => Some(c.len_utf8()),
    }
}

#[cfg(test)]
mod tests {
    use super::Departure;

    const TYPO: &str = "<tool_call>\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"cli.py\", \
        \"old_string\": \"    return 'Usage: tool [--verbse] FILE'\", \
        \"new_string\": \"    return 'Usage: tool --verbose FILE'\"}}\n</tool_call>";

    fn arguments_of(text: &str) -> String {
        let start = text.find("{\"path\"").expect("arguments");
        let end = text.rfind("}}").expect("end");
        text[start..=end].to_owned()
    }

    #[test]
    fn a_string_departs_at_its_first_different_character() {
        let instead = r#"{"path":"cli.py","old_string":"    return 'Usage: tool [--verbse] FILE'","new_string":"    return 'Usage: tool [--verbose] FILE'"}"#;
        let d = Departure::new(TYPO, &arguments_of(TYPO), instead).expect("departs");
        let new_value = TYPO.find("\"new_string\": \"").expect("new") + 15;
        assert_eq!(&TYPO[d.at..d.at + 3], "--v");
        assert_eq!(d.at, new_value + "    return 'Usage: tool ".len());
        // Along the refused reply, up to the departure: only a piece that
        // crosses it is barred.
        let so_far = &TYPO.as_bytes()[..d.at - 2];
        assert!(d.bars_any(so_far));
        assert!(!d.bars(so_far, b"l "));
        assert!(d.bars(so_far, b"l --"));
        assert!(!d.bars(so_far, b"l ["));
        assert!(d.bars(&TYPO.as_bytes()[..d.at], b"-"));
        // Once the reply has left it, nothing is.
        let left = format!("{}[", &TYPO[..d.at]);
        assert!(!d.bars_any(left.as_bytes()));
        assert!(!d.bars(left.as_bytes(), b"--"));
    }

    #[test]
    fn the_first_differing_argument_in_the_text_decides() {
        let text =
            r#"{"name": "write_file", "arguments": {"path": "tests/t.py", "content": "x = 1\n"}}"#;
        let instead = r#"{"path":"t.py","content":"x = 2\n"}"#;
        let args = r#"{"path": "tests/t.py", "content": "x = 1\n"}"#;
        let d = Departure::new(text, args, instead).expect("departs");
        // "t" is common to both paths.
        assert_eq!(&text[d.at..], r#"ests/t.py", "content": "x = 1\n"}}"#);
    }

    #[test]
    fn escapes_count_as_one_character() {
        let text =
            r#"{"name": "edit_file", "arguments": {"new_string": "a\"\u00e9\nb", "path": "x"}}"#;
        let args = r#"{"new_string": "a\"\u00e9\nb", "path": "x"}"#;
        let instead = r#"{"new_string": "a\"é\nc", "path": "x"}"#;
        let d = Departure::new(text, args, instead).expect("departs");
        assert_eq!(&text[d.at..d.at + 2], "b\"");
    }

    #[test]
    fn a_key_inside_a_string_is_not_the_member() {
        let text =
            r#"{"name": "edit_file", "arguments": {"old_string": "\"path\": 1", "path": "a.py"}}"#;
        let args = r#"{"old_string": "\"path\": 1", "path": "a.py"}"#;
        let instead = r#"{"old_string": "\"path\": 1", "path": "b.py"}"#;
        let d = Departure::new(text, args, instead).expect("departs");
        assert_eq!(&text[d.at..], "a.py\"}}");
    }

    #[test]
    fn no_departure_without_a_difference_or_an_object() {
        let args = r#"{"path":"a"}"#;
        assert_eq!(
            Departure::new(r#"{"path": "a"}"#, args, r#"{"path":"a"}"#),
            None
        );
        assert_eq!(Departure::new(r#"{"path": "a"}"#, args, "[1]"), None);
        // An argument the handed call lacks departs at its value.
        let text = r#"{"path": "a", "replace_all": true}"#;
        let args = r#"{"path":"a","replace_all":true}"#;
        let d = Departure::new(text, args, r#"{"path":"a"}"#).expect("departs");
        assert_eq!(&text[d.at..], "true}");
    }
}
