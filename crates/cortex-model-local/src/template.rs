//! Prompt rendering with the model's own chat template (the GGUF's
//! `tokenizer.chat_template`), evaluated by minijinja the way Hugging Face
//! `transformers` evaluates it: `messages`, `tools`, `add_generation_prompt`,
//! `bos_token`/`eos_token`, `raise_exception`, a Python-style `tojson`, and
//! Python string/dict methods.
//!
//! Templates that know nothing about tools (SmolLM2's plain ChatML) get a
//! Hermes-style tool section appended to the system message, their assistant
//! calls written as `<tool_call>` text and tool results sent as user messages.

use crate::error::LocalError;
use cortex_protocol::{Message, Role, ToolSpec};
use minijinja::value::{Kwargs, Value};
use minijinja::{Environment, Error, ErrorKind};
use serde_json::json;
use std::collections::HashMap;

/// Used when the GGUF carries no chat template.
pub const CHATML_TEMPLATE: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

const TEMPLATE_NAME: &str = "chat";

/// A compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    native_tools: bool,
    bos_token: String,
    eos_token: String,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("native_tools", &self.native_tools)
            .finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// Compile `source` (or ChatML when `None`).
    pub fn new(
        source: Option<&str>,
        bos_token: impl Into<String>,
        eos_token: impl Into<String>,
    ) -> Result<Self, LocalError> {
        let source = source.unwrap_or(CHATML_TEMPLATE).to_owned();
        let native_tools = source.contains("tools");
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        env.add_filter("tojson", tojson);
        env.add_template_owned(TEMPLATE_NAME, source)
            .map_err(|e| LocalError::Template(e.to_string()))?;
        Ok(ChatTemplate {
            env,
            native_tools,
            bos_token: bos_token.into(),
            eos_token: eos_token.into(),
        })
    }

    /// Whether the template renders `tools` itself.
    pub fn native_tools(&self) -> bool {
        self.native_tools
    }

    /// The prompt for `messages` after `system`, offering `tools`, ending
    /// with the assistant's generation prompt.
    pub fn render(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolSpec],
    ) -> Result<String, LocalError> {
        let msgs = if self.native_tools {
            native_messages(system, messages)
        } else {
            inline_messages(system, messages, tools)
        };
        let tools_value = if self.native_tools && !tools.is_empty() {
            // Keys in the order HF writes them (`type` before `function`,
            // `name`, `description`, `parameters`).
            Value::from_iter(tools.iter().map(|t| {
                let function = Value::from_iter([
                    ("name", Value::from(t.name.as_str())),
                    ("description", Value::from(t.description.as_str())),
                    ("parameters", Value::from_serialize(&t.parameters)),
                ]);
                Value::from_iter([("type", Value::from("function")), ("function", function)])
            }))
        } else {
            Value::from(())
        };
        let template = self
            .env
            .get_template(TEMPLATE_NAME)
            .map_err(|e| LocalError::Template(e.to_string()))?;
        template
            .render(minijinja::context! {
                messages => Value::from_serialize(&msgs),
                tools => tools_value,
                add_generation_prompt => true,
                bos_token => self.bos_token.as_str(),
                eos_token => self.eos_token.as_str(),
            })
            .map_err(|e| LocalError::Template(format!("{e:#}")))
    }
}

fn role_str(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Arguments as HF templates expect them: a JSON object, or the raw text
/// when the model wrote something that is not JSON.
fn arguments_value(raw: &str) -> serde_json::Value {
    if raw.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(raw).unwrap_or_else(|_| serde_json::Value::String(raw.to_owned()))
}

/// Messages in the OpenAI/HF shape, for templates that handle tools.
fn native_messages(system: &str, messages: &[Message]) -> Vec<serde_json::Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if !system.is_empty() {
        out.push(json!({"role": "system", "content": system}));
    }
    let mut call_names: HashMap<&str, &str> = HashMap::new();
    for m in messages {
        // The embedded model takes no images: tools' images become a note.
        let mut v = json!({"role": role_str(m.role), "content": m.text_only_content()});
        if !m.tool_calls.is_empty() {
            let calls: Vec<serde_json::Value> = m
                .tool_calls
                .iter()
                .map(|c| {
                    call_names.insert(c.id.as_str(), c.name.as_str());
                    json!({"id": c.id.as_str(), "type": "function", "function": {
                        "name": c.name, "arguments": arguments_value(&c.arguments),
                    }})
                })
                .collect();
            v["tool_calls"] = serde_json::Value::Array(calls);
        }
        if let Some(id) = &m.tool_call_id {
            v["tool_call_id"] = json!(id.as_str());
            if let Some(name) = call_names.get(id.as_str()) {
                v["name"] = json!(name);
            }
        }
        out.push(v);
    }
    out
}

/// Messages for templates that only know roles and content (plain ChatML).
fn inline_messages(
    system: &str,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Vec<serde_json::Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut system = system.to_owned();
    if !tools.is_empty() {
        system.push_str(&tool_section(tools));
    }
    if !system.is_empty() {
        out.push(json!({"role": "system", "content": system.trim_start()}));
    }
    for m in messages {
        match m.role {
            Role::Tool => out.push(json!({
                "role": "user",
                "content": format!("<tool_response>\n{}\n</tool_response>", m.text_only_content()),
            })),
            Role::Assistant if !m.tool_calls.is_empty() => {
                let mut content = m.content.clone();
                for c in &m.tool_calls {
                    if !content.is_empty() {
                        content.push('\n');
                    }
                    content.push_str(&format!(
                        "<tool_call>\n{{\"name\": {}, \"arguments\": {}}}\n</tool_call>",
                        py_json(&json!(c.name)),
                        py_json(&arguments_value(&c.arguments)),
                    ));
                }
                out.push(json!({"role": "assistant", "content": content}));
            }
            role => out.push(json!({"role": role_str(role), "content": m.content})),
        }
    }
    out
}

/// The Hermes/Qwen tool section, for templates without tool support.
pub fn tool_section(tools: &[ToolSpec]) -> String {
    let mut s = String::from(
        "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>",
    );
    for t in tools {
        s.push_str(&format!(
            "\n{{\"type\": \"function\", \"function\": {{\"name\": {}, \"description\": {}, \"parameters\": {}}}}}",
            py_json(&json!(t.name)),
            py_json(&json!(t.description)),
            py_json(&t.parameters),
        ));
    }
    s.push_str("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>");
    s
}

fn raise_exception(message: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// `json.dumps(value, ensure_ascii=False)` as HF's `tojson` does it: `", "`
/// and `": "` separators, or `indent=N` pretty printing.
fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    let _: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    // Serialize the minijinja value directly: it keeps key order.
    let mut buf = Vec::new();
    let result = match indent {
        Some(n) => {
            let pad = " ".repeat(n);
            let fmt = serde_json::ser::PrettyFormatter::with_indent(pad.as_bytes());
            serde::Serialize::serialize(
                &value,
                &mut serde_json::Serializer::with_formatter(&mut buf, fmt),
            )
        }
        None => serde::Serialize::serialize(
            &value,
            &mut serde_json::Serializer::with_formatter(&mut buf, PyFormatter),
        ),
    };
    result.map_err(|e| Error::new(ErrorKind::InvalidOperation, e.to_string()))?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    Ok(Value::from_safe_string(text))
}

/// JSON with Python's default separators.
pub fn py_json(value: &serde_json::Value) -> String {
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, PyFormatter);
    match serde::Serialize::serialize(value, &mut ser) {
        Ok(()) => String::from_utf8_lossy(&buf).into_owned(),
        Err(_) => value.to_string(),
    }
}

struct PyFormatter;

impl serde_json::ser::Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{CallId, ToolCallRequest, ToolName};

    const QWEN: &str = include_str!("../tests/fixtures/qwen2.5-coder-chat-template.jinja");
    const SMOL: &str = include_str!("../tests/fixtures/smollm2-chat-template.jinja");

    fn history() -> Vec<Message> {
        vec![
            Message::user("Show me a.txt"),
            Message::assistant(
                "",
                vec![ToolCallRequest {
                    id: CallId::from("call_1"),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a.txt"}"#.into(),
                }],
            ),
            Message::tool(CallId::from("call_1"), "1\thello"),
        ]
    }

    fn tools() -> Vec<ToolSpec> {
        vec![ToolName::ReadFile.spec()]
    }

    #[test]
    fn qwen_template_renders_tools_calls_and_results() -> Result<(), LocalError> {
        let t = ChatTemplate::new(Some(QWEN), "", "<|im_end|>")?;
        assert!(t.native_tools());
        let out = t.render("You are Cortex.", &history(), &tools())?;
        let expected_head = "<|im_start|>system\nYou are Cortex.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{\"type\": \"function\", \"function\": {";
        assert!(out.starts_with(expected_head), "{out}");
        assert!(out.contains("\"name\": \"read_file\""), "{out}");
        assert!(
            out.contains(
                "<|im_start|>user\nShow me a.txt<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n1\thello\n</tool_response><|im_end|>\n<|im_start|>assistant\n"
            ),
            "{out}"
        );
        assert!(out.ends_with("<|im_start|>assistant\n"), "{out}");
        Ok(())
    }

    #[test]
    fn qwen_template_without_tools_uses_plain_system() -> Result<(), LocalError> {
        let t = ChatTemplate::new(Some(QWEN), "", "<|im_end|>")?;
        let out = t.render("Be brief.", &[Message::user("hi")], &[])?;
        assert_eq!(
            out,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
        Ok(())
    }

    #[test]
    fn smollm2_template_gets_inline_tools() -> Result<(), LocalError> {
        let t = ChatTemplate::new(Some(SMOL), "<|im_start|>", "<|im_end|>")?;
        assert!(!t.native_tools());
        let out = t.render("You are Cortex.", &history(), &tools())?;
        assert!(
            out.starts_with("<|im_start|>system\nYou are Cortex.\n\n# Tools\n"),
            "{out}"
        );
        assert!(out.contains("</tools>"), "{out}");
        assert!(
            out.contains("<|im_start|>assistant\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call><|im_end|>\n"),
            "{out}"
        );
        assert!(
            out.contains(
                "<|im_start|>user\n<tool_response>\n1\thello\n</tool_response><|im_end|>\n"
            ),
            "{out}"
        );
        assert!(out.ends_with("<|im_start|>assistant\n"), "{out}");
        Ok(())
    }

    #[test]
    fn smollm2_template_without_system_uses_its_default() -> Result<(), LocalError> {
        let t = ChatTemplate::new(Some(SMOL), "", "")?;
        let out = t.render("", &[Message::user("hi")], &[])?;
        assert!(out.starts_with("<|im_start|>system\nYou are a helpful AI assistant named SmolLM"));
        assert!(out.ends_with("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"));
        Ok(())
    }

    #[test]
    fn raise_exception_and_tojson_work_like_hf() -> Result<(), LocalError> {
        let t = ChatTemplate::new(
            Some(
                "{% if messages|length > 1 %}{{ raise_exception('too many') }}{% endif %}{{ messages[0] | tojson }}|{{ {'a': [1, 2]} | tojson(indent=2) }}|{{ 'x'.upper() }}",
            ),
            "",
            "",
        )?;
        let out = t.render("", &[Message::user("<b>")], &[])?;
        assert_eq!(
            out,
            "{\"role\": \"user\", \"content\": \"<b>\"}|{\n  \"a\": [\n    1,\n    2\n  ]\n}|X"
        );
        let err = t
            .render("", &[Message::user("a"), Message::user("b")], &[])
            .expect_err("raises");
        assert!(err.to_string().contains("too many"), "{err}");
        Ok(())
    }

    #[test]
    fn missing_template_falls_back_to_chatml() -> Result<(), LocalError> {
        let t = ChatTemplate::new(None, "", "")?;
        let out = t.render("S", &[Message::user("u")], &[])?;
        assert_eq!(
            out,
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n"
        );
        Ok(())
    }

    #[test]
    fn a_tools_images_become_a_note_in_both_shapes() -> Result<(), LocalError> {
        let mut history = history();
        history[2] = Message::tool_with(
            CallId::from("call_1"),
            "[image 1: image/png]",
            vec![cortex_protocol::Attachment::Image {
                mime_type: "image/png".into(),
                data: "aGk=".into(),
            }],
        );
        for template in [QWEN, SMOL] {
            let t = ChatTemplate::new(Some(template), "", "<|im_end|>")?;
            let out = t.render("S", &history, &tools())?;
            assert!(
                out.contains("[image 1: image/png]\n(note: the 1 image(s)"),
                "{out}"
            );
            assert!(!out.contains("aGk="), "{out}");
        }
        Ok(())
    }
}
