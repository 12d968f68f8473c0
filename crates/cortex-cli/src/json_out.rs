//! Machine output (`--json`): one JSON value per line, exact and safe on a
//! terminal.
//!
//! serde_json already escapes C0 controls, so an ESC can never reach the
//! terminal through JSON. It writes every other character as it is, though,
//! and a C1 control (U+0080..=U+009F, which some terminals read as an 8-bit
//! CSI or OSC), DEL, a bidi override or a line separator would then reach the
//! terminal of a user who runs `cortex exec --json` without a pipe. These are
//! written as `\uXXXX` escapes instead: the parsed value is the same string,
//! character for character, so the output stays exact for any consumer.

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};
use std::io;

/// `value` as one line of JSON (no trailing newline) in which every string
/// holds only printable characters besides JSON's own escapes.
pub fn to_line(value: &impl Serialize) -> serde_json::Result<String> {
    let mut bytes = Vec::with_capacity(256);
    let mut serializer = Serializer::with_formatter(&mut bytes, TerminalSafe);
    value.serialize(&mut serializer)?;
    // Only `str`s and JSON's ASCII punctuation were written.
    String::from_utf8(bytes).map_err(|e| serde_json::Error::io(io::Error::other(e)))
}

/// The compact formatter (the trait's default methods), with the characters
/// above escaped inside strings.
struct TerminalSafe;

fn needs_unicode_escape(c: char) -> bool {
    matches!(c,
        '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{2028}' | '\u{2029}')
}

impl Formatter for TerminalSafe {
    fn write_string_fragment<W>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()>
    where
        W: ?Sized + io::Write,
    {
        let mut rest = fragment;
        while let Some(at) = rest.find(needs_unicode_escape) {
            writer.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            write!(writer, "\\u{:04x}", c as u32)?;
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn hostile_strings_round_trip_exactly_and_print_as_ascii_escapes() {
        let hostile = "osc52 \x1b]52;c;cm0gLXJmIH4=\x07 csi \x1b[2A cr \r c1 \u{9b}31m \
                       bidi \u{202e}cba del \x7f sep \u{2028} nul \0 ok ✓ é";
        let value = json!({"text": hostile, hostile: [hostile]});
        let line = to_line(&value).expect("json");
        assert!(!line.contains('\n'));
        assert!(
            line.chars().all(|c| !c.is_control()
                && !needs_unicode_escape(c)
                && !matches!(c, '\u{202a}'..='\u{202e}')),
            "{line:?}"
        );
        assert!(
            line.contains("\\u009b") && line.contains("\\u202e"),
            "{line}"
        );
        assert!(line.contains('✓') && line.contains('é'), "{line}");
        let back: Value = serde_json::from_str(&line).expect("valid JSON");
        assert_eq!(back, value, "the parsed value is exactly the input");
        assert_eq!(line, to_line(&back).expect("json"));
    }

    #[test]
    fn plain_values_are_compact_json() {
        let value = json!({"a": [1, 2.5, null, true], "b": "x"});
        assert_eq!(
            to_line(&value).expect("json"),
            serde_json::to_string(&value).expect("json")
        );
    }
}
