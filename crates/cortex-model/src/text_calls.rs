//! Reading tool calls out of a model's reply text, and deciding what part
//! of a reply is safe to stream as text before the reply is complete.
//!
//! Small Qwen models rarely use `<tool_call>` tags; they write
//! `{"name": …, "arguments": …}`, usually in a ```json fence, sometimes in
//! `<tools>` tags. All of them are read. Fenced, bare and `<tools>` objects
//! count as calls only when they name a tool of the request (otherwise they
//! are an example in an answer, or the tool list echoed); a `<tool_call>` is
//! always a call, so the dispatcher can tell the model the tool is unknown.
//!
//! Used by the embedded model (`cortex-model-local`) on every reply, by
//! [`crate::recover::RecoverTextCalls`] for HTTP providers whose server
//! returns such calls as plain text, and by the turn loop to notice an answer
//! that is a call nobody ran ([`unreadable_call`]).

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
/// Qwen's template lists the tools in `<tools>` tags, and small models
/// sometimes answer in the same tags.
const TOOLS_OPEN: &str = "<tools>";
const TOOLS_CLOSE: &str = "</tools>";
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
        if rest.starts_with(TOOLS_OPEN) {
            let body_start = i + TOOLS_OPEN.len();
            let body_end = reply[body_start..]
                .find(TOOLS_CLOSE)
                .map_or(reply.len(), |e| body_start + e);
            let found = calls_in(&reply[body_start..body_end], Some(tools));
            if !found.is_empty() {
                first_call.get_or_insert(i);
                calls.extend(found);
            }
            i = (body_end + TOOLS_CLOSE.len()).min(reply.len());
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
/// Python's `None`, `True` and `False` outside strings are read as JSON's
/// `null`, `true` and `false` (same lengths): the 1.5B wrote
/// `"replace_all": None` in a call written as text, which then ran as
/// nothing.
fn first_json_value(s: &str) -> Option<(Value, usize)> {
    let strict = |s: &str| {
        let mut it = serde_json::Deserializer::from_str(s).into_iter::<Value>();
        let value = it.next()?.ok()?;
        Some((value, it.byte_offset()))
    };
    strict(s).or_else(|| strict(&json_literals(s)?))
}

/// `s` with the Python literals `None`, `True` and `False` outside strings
/// written as JSON's; `None` when it has none.
fn json_literals(s: &str) -> Option<String> {
    const PAIRS: [(&str, &str); 3] = [("None", "null"), ("True", "true"), ("False", "false")];
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(s.len());
    let (mut in_string, mut escaped, mut changed) = (false, false, false);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if !out.ends_with(word)
            && let Some((py, json)) = PAIRS.iter().find(|(py, _)| {
                rest.strip_prefix(py)
                    .is_some_and(|after| !after.starts_with(word))
            })
        {
            out.push_str(json);
            rest = &rest[py.len()..];
            changed = true;
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    changed.then_some(out)
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
    if args.is_some_and(is_schema) {
        // A tool's declaration (the tool list echoed back), not a call.
        return None;
    }
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

/// A JSON schema of parameters rather than arguments: `{"type": "object",
/// "properties": {…}}`.
fn is_schema(args: &Value) -> bool {
    args.get("type").and_then(Value::as_str) == Some("object")
        && args.get("properties").is_some_and(Value::is_object)
}

/// Why `reply` — which [`parse_reply`] found no call in — still looks like
/// a call to one of `tools`: a `<tool_call>` that does not parse, or a tag,
/// a JSON fence or an object opening a line that names an offered tool
/// (`"name": "read_file"`) but is not valid JSON or not a call's shape.
/// `None` when nothing in the reply looks like a call, or when the reply
/// holds calls that parse. The message is for the model: it says what was
/// wrong, so the next try can fix it.
pub fn unreadable_call(reply: &str, tools: &[&str]) -> Option<String> {
    if !parse_reply(reply, tools).calls.is_empty() {
        return None;
    }
    call_regions(reply).into_iter().find_map(|(body, tagged)| {
        let names_tool = tools.iter().any(|t| body.contains(&format!("\"{t}\"")));
        if !(tagged || names_tool) {
            return None;
        }
        let body = body.trim();
        let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
        Some(match values.next() {
            None => "the call is empty".to_owned(),
            Some(Err(e)) => format!("its JSON does not parse ({e})"),
            Some(Ok(value)) => match call_of(&value, None) {
                Some(call) => format!(
                    "`{}` is not one of the tools offered ({})",
                    call.name,
                    tools.join(", ")
                ),
                None => "it is not of the shape {\"name\": TOOL, \"arguments\": {…}}".to_owned(),
            },
        })
    })
}

/// The places a call may be written: `<tool_call>` bodies (`true`: always
/// meant as a call), `<tools>` and JSON-fence bodies, and from an object
/// that opens a line to the end of the reply.
fn call_regions(reply: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = marker_at(reply, from) {
        let rest = &reply[at..];
        let (body, tagged, end) = if let Some(after) = rest.strip_prefix(TAG_OPEN) {
            let len = after.find(TAG_CLOSE).unwrap_or(after.len());
            (
                &after[..len],
                true,
                at + TAG_OPEN.len() + len + TAG_CLOSE.len(),
            )
        } else if let Some(after) = rest.strip_prefix(TOOLS_OPEN) {
            let len = after.find(TOOLS_CLOSE).unwrap_or(after.len());
            (
                &after[..len],
                false,
                at + TOOLS_OPEN.len() + len + TOOLS_CLOSE.len(),
            )
        } else if let Some(after) = rest.strip_prefix(FENCE) {
            let start = after.find('\n').map_or(after.len(), |n| n + 1);
            let len = after[start..].find(FENCE).unwrap_or(after.len() - start);
            let end = at + FENCE.len() + start + len + FENCE.len();
            (&after[start..start + len], false, end)
        } else {
            (rest, false, reply.len())
        };
        out.push((body, tagged));
        from = end.min(reply.len());
    }
    out
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
    for m in [TAG_OPEN, TOOLS_OPEN, FENCE] {
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
    for m in [TAG_OPEN, TOOLS_OPEN, FENCE] {
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
    fn python_literals_outside_strings_are_read_as_json() {
        let reply = "```json\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"a.py\", \
                     \"old_string\": \"x = None\", \"new_string\": \"x = True\", \
                     \"replace_all\": None}}\n```";
        let parsed = parse_reply(reply, &["edit_file"]);
        assert_eq!(parsed.calls.len(), 1, "{parsed:?}");
        let args: Value = serde_json::from_str(&parsed.calls[0].arguments).expect("json");
        assert_eq!(
            args,
            serde_json::json!({"path": "a.py", "old_string": "x = None",
                "new_string": "x = True", "replace_all": null})
        );
        assert_eq!(unreadable_call(reply, &["edit_file"]), None);
        // Inside strings and inside words they stay as written.
        assert_eq!(
            json_literals(r#"{"a": "None", "NoneType": False, "b": [True,None]}"#).as_deref(),
            Some(r#"{"a": "None", "NoneType": false, "b": [true,null]}"#)
        );
        assert_eq!(json_literals(r#"{"a": "say \"None\""}"#), None);
    }

    #[test]
    fn truncated_call_is_not_a_call() {
        let r = parse_reply("```json\n{\"name\": \"read_file\", \"argu", TOOLS);
        assert!(r.calls.is_empty());
    }

    #[test]
    fn tools_tags_are_calls_only_for_offered_tools_and_never_a_declaration() {
        let r = parse_reply(
            "<tools>\n{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*.py\"}}\n</tools>",
            TOOLS,
        );
        assert_eq!(r.calls, vec![call("glob", r#"{"pattern":"*.py"}"#)]);
        let echoed = "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"glob\", \
                      \"parameters\": {\"type\": \"object\", \"properties\": {\"pattern\": {}}}}}\n</tools>";
        assert!(parse_reply(echoed, TOOLS).calls.is_empty());
        let unknown = "<tools>{\"name\": \"rm\", \"arguments\": {}}</tools>";
        assert!(parse_reply(unknown, TOOLS).calls.is_empty());
    }

    #[test]
    fn an_unreadable_call_says_what_is_wrong() {
        let broken = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}\n```";
        let why = unreadable_call(broken, TOOLS).expect("looks like a call");
        assert!(why.contains("does not parse"), "{why}");
        let tagged = "<tool_call>{\"tool\": \"read_file\"}</tool_call>";
        let why = unreadable_call(tagged, TOOLS).expect("a tag is always a call");
        assert!(why.contains("shape"), "{why}");
        let bare = "Reading it now.\n{\"name\": \"read_file\", \"arguments\": {\"path\": 1";
        assert!(unreadable_call(bare, TOOLS).is_some());
    }

    #[test]
    fn answers_and_readable_calls_are_not_unreadable_calls() {
        for reply in [
            "The port is 8080.",
            "Here is the config:\n```json\n{\"name\": \"my-app\", \"version\": 1}\n```",
            "```rust\nfn main() {}\n```",
            "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```",
        ] {
            assert_eq!(unreadable_call(reply, TOOLS), None, "{reply}");
        }
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
