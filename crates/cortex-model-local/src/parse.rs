//! Reading tool calls out of a small model's reply, and deciding what part
//! of a reply is safe to stream as text before the reply is complete.
//!
//! Small Qwen models rarely use `<tool_call>` tags; they write
//! `{"name": …, "arguments": …}`, usually in a ```json fence. All three are
//! read. Fenced and bare objects count as calls only when they name a tool of
//! the request (otherwise they are an example in an answer); a tagged call is
//! always a call, so the dispatcher can tell the model the tool is unknown.

use serde_json::Value;

/// One call read from a reply. `arguments` is compact JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCall {
    /// The tool name as written; for a tagged call not necessarily a tool
    /// of the request.
    pub name: String,
    /// The arguments re-serialised compactly: `{}` when there were none, a
    /// string holding JSON unwrapped, a string that is not JSON kept as is.
    pub arguments: String,
}

/// A complete reply split into text and calls.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedReply {
    /// Text before the first call (all of it when there is no call).
    pub text: String,
    /// The calls, in the order written.
    pub calls: Vec<ParsedCall>,
}

const TAG_OPEN: &str = "<tool_call>";
const TAG_CLOSE: &str = "</tool_call>";
const FENCE: &str = "```";

/// Split `reply` into text and the calls it makes; `tools` are the names the
/// request offered.
pub fn parse_reply(reply: &str, tools: &[&str]) -> ParsedReply {
    let mut calls = Vec::new();
    let mut first_call: Option<usize> = None;
    let mut i = 0;
    while i < reply.len() {
        let rest = &reply[i..];
        if rest.starts_with(TAG_OPEN) {
            let body_start = i + TAG_OPEN.len();
            let body_end = reply[body_start..]
                .find(TAG_CLOSE)
                .map_or(reply.len(), |e| body_start + e);
            let found = calls_in(&reply[body_start..body_end], None);
            if !found.is_empty() {
                first_call.get_or_insert(i);
                calls.extend(found);
            }
            i = (body_end + TAG_CLOSE.len()).min(reply.len());
            continue;
        }
        if rest.starts_with(FENCE) {
            // ```lang\n … ```
            let after = i + FENCE.len();
            let body_start = reply[after..]
                .find('\n')
                .map_or(reply.len(), |n| after + n + 1);
            let body_end = reply[body_start..]
                .find(FENCE)
                .map_or(reply.len(), |e| body_start + e);
            let found = calls_in(&reply[body_start..body_end], Some(tools));
            if !found.is_empty() {
                first_call.get_or_insert(i);
                calls.extend(found);
            }
            i = (body_end + FENCE.len()).min(reply.len());
            continue;
        }
        if rest.starts_with('{')
            && let Some((value, len)) = first_json_value(rest)
        {
            let found = calls_of(&value, Some(tools));
            if !found.is_empty() {
                first_call.get_or_insert(i);
                calls.extend(found);
            }
            i += len.max(1);
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    let text_end = first_call.unwrap_or(reply.len());
    let text = if first_call.is_some() {
        reply[..text_end].trim_end().to_owned()
    } else {
        reply.to_owned()
    };
    ParsedReply { text, calls }
}

/// The first JSON value at the start of `s` and how many bytes it took.
fn first_json_value(s: &str) -> Option<(Value, usize)> {
    let mut it = serde_json::Deserializer::from_str(s).into_iter::<Value>();
    let value = it.next()?.ok()?;
    Some((value, it.byte_offset()))
}

/// Calls in a tag or fence body: one object, several objects, or an array.
fn calls_in(body: &str, tools: Option<&[&str]>) -> Vec<ParsedCall> {
    let mut out = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        let Some((value, len)) = first_json_value(rest) else {
            break;
        };
        out.extend(calls_of(&value, tools));
        rest = rest[len..]
            .trim_start()
            .trim_start_matches(',')
            .trim_start();
    }
    out
}

fn calls_of(value: &Value, tools: Option<&[&str]>) -> Vec<ParsedCall> {
    match value {
        Value::Array(items) => items.iter().filter_map(|v| call_of(v, tools)).collect(),
        other => call_of(other, tools).into_iter().collect(),
    }
}

/// `{"name": N, "arguments": A}` (also `parameters`, or OpenAI's
/// `{"function": {…}}`), with A an object or a string holding one.
fn call_of(value: &Value, tools: Option<&[&str]>) -> Option<ParsedCall> {
    let obj = value.as_object()?;
    if let Some(inner) = obj.get("function").filter(|f| f.is_object()) {
        return call_of(inner, tools);
    }
    let name = obj.get("name")?.as_str()?;
    if let Some(tools) = tools
        && !tools.contains(&name)
    {
        return None;
    }
    let args = obj.get("arguments").or_else(|| obj.get("parameters"));
    let arguments = match args {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v) => v.to_string(),
            Err(_) => s.clone(),
        },
        Some(v) => v.to_string(),
    };
    Some(ParsedCall {
        name: name.to_owned(),
        arguments,
    })
}

/// How a reply begins, for switching on the tool-call grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyStart {
    /// Only whitespace or a prefix of a call marker so far.
    Undecided,
    /// Prose: no grammar.
    Text,
    /// The reply starts a call in this form.
    Call(CallForm),
}

/// The shape of a call the model started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallForm {
    /// `<tool_call>{…}</tool_call>`
    Tagged,
    /// ```` ```json\n{…}\n``` ````
    Fenced,
    /// `{…}`
    Bare,
}

/// How `reply` (the reply so far) begins; called as it grows, until it is
/// no longer [`ReplyStart::Undecided`].
pub fn reply_start(reply: &str) -> ReplyStart {
    let t = reply.trim_start();
    if t.is_empty() {
        return ReplyStart::Undecided;
    }
    if t.starts_with('{') {
        return ReplyStart::Call(CallForm::Bare);
    }
    if let Some(after) = t.strip_prefix(FENCE) {
        // Only a JSON fence starts a call: ```json, or a bare ``` whose
        // body opens an object. A ```rust answer is text.
        let lower = after.to_ascii_lowercase();
        if lower.starts_with("json") {
            return ReplyStart::Call(CallForm::Fenced);
        }
        if "json".starts_with(lower.as_str()) {
            return ReplyStart::Undecided;
        }
        if let Some(body) = after.strip_prefix('\n') {
            let body = body.trim_start();
            return if body.is_empty() {
                ReplyStart::Undecided
            } else if body.starts_with('{') || body.starts_with('[') {
                ReplyStart::Call(CallForm::Fenced)
            } else {
                ReplyStart::Text
            };
        }
        return ReplyStart::Text;
    }
    if t.starts_with(TAG_OPEN) {
        return ReplyStart::Call(CallForm::Tagged);
    }
    if FENCE.starts_with(t) || TAG_OPEN.starts_with(t) {
        return ReplyStart::Undecided;
    }
    ReplyStart::Text
}

/// Decides how much of a growing reply may be streamed as text: everything
/// up to where a call may begin. Once a call marker is seen, the rest is
/// held until the reply is complete and parsed.
#[derive(Debug, Default)]
pub struct TextGate {
    sent: usize,
    holding: bool,
}

impl TextGate {
    /// A gate for a new reply: nothing released, nothing held.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes of the reply already released.
    pub fn sent(&self) -> usize {
        self.sent
    }

    /// New text of `reply` that is safe to stream now.
    pub fn advance<'a>(&mut self, reply: &'a str) -> &'a str {
        if self.holding || self.sent >= reply.len() {
            return "";
        }
        let start = self.sent;
        let end = match marker_at(reply, start) {
            Some(m) => {
                self.holding = true;
                start + reply[start..m].trim_end().len()
            }
            None => safe_end(reply, start),
        };
        if end <= start {
            return "";
        }
        self.sent = end;
        &reply[start..end]
    }

    /// What remains to send once the reply is complete and parsed.
    pub fn finish<'a>(&mut self, parsed: &'a ParsedReply) -> &'a str {
        let rest = parsed.text.get(self.sent..).unwrap_or("");
        self.sent = self.sent.max(parsed.text.len());
        rest
    }
}

/// Where a call may begin in `reply[from..]`: a tag, a fence, or `{` at the
/// start of the reply or of a line.
fn marker_at(reply: &str, from: usize) -> Option<usize> {
    let hay = &reply[from..];
    let mut best: Option<usize> = None;
    for m in [TAG_OPEN, FENCE] {
        if let Some(p) = hay.find(m) {
            best = Some(best.map_or(from + p, |b: usize| b.min(from + p)));
        }
    }
    for (p, _) in hay.match_indices('{') {
        let at = from + p;
        let line_start = reply[..at].trim_end_matches([' ', '\t']);
        if line_start.is_empty() || line_start.ends_with('\n') {
            best = Some(best.map_or(at, |b| b.min(at)));
            break;
        }
    }
    best
}

/// The end of what can be released without cutting a marker that may still
/// be completing: trailing whitespace and marker prefixes are held back.
fn safe_end(reply: &str, from: usize) -> usize {
    let mut end = reply.len();
    for m in [TAG_OPEN, FENCE] {
        for k in (1..m.len()).rev() {
            if reply[from..].ends_with(&m[..k]) {
                end = end.min(reply.len() - k);
                break;
            }
        }
    }
    let trimmed = reply[from..end].trim_end();
    from + trimmed.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &[&str] = &["read_file", "glob"];

    fn call(name: &str, args: &str) -> ParsedCall {
        ParsedCall {
            name: name.into(),
            arguments: args.into(),
        }
    }

    #[test]
    fn tagged_call() {
        let r = parse_reply(
            "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.rs\"}}\n</tool_call>",
            TOOLS,
        );
        assert_eq!(r.text, "Let me look.");
        assert_eq!(r.calls, vec![call("read_file", r#"{"path":"a.rs"}"#)]);
    }

    #[test]
    fn tagged_call_with_unknown_tool_is_still_a_call() {
        let r = parse_reply(
            "<tool_call>{\"name\": \"list_files\", \"arguments\": {}}</tool_call>",
            TOOLS,
        );
        assert_eq!(r.calls, vec![call("list_files", "{}")]);
        assert_eq!(r.text, "");
    }

    #[test]
    fn fenced_call_and_string_arguments() {
        let r = parse_reply(
            "```json\n{\n  \"name\": \"glob\",\n  \"arguments\": \"{\\\"pattern\\\": \\\"*.rs\\\"}\"\n}\n```",
            TOOLS,
        );
        assert_eq!(r.calls, vec![call("glob", r#"{"pattern":"*.rs"}"#)]);
    }

    #[test]
    fn bare_call_and_openai_shape() {
        let r = parse_reply(
            r#"{"name": "read_file", "arguments": {"path": "x"}}"#,
            TOOLS,
        );
        assert_eq!(r.calls, vec![call("read_file", r#"{"path":"x"}"#)]);
        let r = parse_reply(
            r#"{"type": "function", "function": {"name": "glob", "parameters": {"pattern": "*"}}}"#,
            TOOLS,
        );
        assert_eq!(r.calls, vec![call("glob", r#"{"pattern":"*"}"#)]);
    }

    #[test]
    fn several_calls_in_one_reply() {
        let r = parse_reply(
            "```json\n[{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*\"}}, {\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}]\n```",
            TOOLS,
        );
        assert_eq!(r.calls.len(), 2);
        let r = parse_reply(
            "<tool_call>\n{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>",
            TOOLS,
        );
        assert_eq!(r.calls.len(), 2);
    }

    #[test]
    fn json_that_is_not_a_call_stays_text() {
        for reply in [
            "Here is the config:\n```json\n{\"name\": \"my-app\", \"version\": 1}\n```",
            "{\"name\": \"unknown_tool\", \"arguments\": {}}",
            "Use `{ }` braces.",
            "```rust\nfn main() {}\n```",
        ] {
            let r = parse_reply(reply, TOOLS);
            assert!(r.calls.is_empty(), "{reply}");
            assert_eq!(r.text, reply);
        }
    }

    #[test]
    fn truncated_call_is_not_a_call() {
        let r = parse_reply("```json\n{\"name\": \"read_file\", \"argu", TOOLS);
        assert!(r.calls.is_empty());
    }

    #[test]
    fn reply_start_detects_forms() {
        assert_eq!(reply_start("  \n"), ReplyStart::Undecided);
        assert_eq!(reply_start("``"), ReplyStart::Undecided);
        assert_eq!(reply_start("<tool"), ReplyStart::Undecided);
        assert_eq!(reply_start("\n{\""), ReplyStart::Call(CallForm::Bare));
        assert_eq!(reply_start("```json"), ReplyStart::Call(CallForm::Fenced));
        assert_eq!(reply_start("```"), ReplyStart::Undecided);
        assert_eq!(reply_start("```js"), ReplyStart::Undecided);
        assert_eq!(reply_start("```\n"), ReplyStart::Undecided);
        assert_eq!(reply_start("```\n{"), ReplyStart::Call(CallForm::Fenced));
        assert_eq!(reply_start("```rust"), ReplyStart::Text);
        assert_eq!(reply_start("```\nfn main"), ReplyStart::Text);
        assert_eq!(
            reply_start("<tool_call>"),
            ReplyStart::Call(CallForm::Tagged)
        );
        assert_eq!(reply_start("Sure"), ReplyStart::Text);
        assert_eq!(reply_start("<b>"), ReplyStart::Text);
    }

    #[test]
    fn gate_streams_text_and_holds_calls() {
        let full = "I will read it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```";
        let mut gate = TextGate::new();
        let mut streamed = String::new();
        for end in 1..=full.len() {
            if full.is_char_boundary(end) {
                streamed.push_str(gate.advance(&full[..end]));
            }
        }
        assert_eq!(streamed, "I will read it.");
        assert!(!streamed.contains('`'));
        let parsed = parse_reply(full, TOOLS);
        streamed.push_str(gate.finish(&parsed));
        assert_eq!(streamed, "I will read it.");
        assert_eq!(parsed.calls.len(), 1);
    }

    #[test]
    fn gate_releases_held_text_when_no_call() {
        let full = "Answer:\n```rust\nfn main() {}\n```\nDone.";
        let mut gate = TextGate::new();
        let mut streamed = String::new();
        for end in 1..=full.len() {
            streamed.push_str(gate.advance(&full[..end]));
        }
        assert_eq!(streamed, "Answer:");
        let parsed = parse_reply(full, TOOLS);
        streamed.push_str(gate.finish(&parsed));
        assert_eq!(streamed, full);
    }

    #[test]
    fn gate_holds_partial_tag() {
        let mut gate = TextGate::new();
        assert_eq!(gate.advance("ok <tool"), "ok");
        assert_eq!(gate.advance("ok <tools are fine"), " <tools are fine");
    }
}
