//! The Responses API request body.

use super::PROVIDER;
use crate::{ModelRequest, ToolChoice};
use cortex_protocol::{Message, Role, ToolSpec};
use serde_json::{Map, Value, json};

/// The JSON body of a streaming request for `model`.
pub(crate) fn build_body(
    model: &str,
    request: &ModelRequest,
    parallel_tool_calls: bool,
) -> Result<Vec<u8>, serde_json::Error> {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    if !request.system.is_empty() {
        body.insert("instructions".into(), request.system.clone().into());
    }
    let mut input = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        items(message, &mut input);
    }
    body.insert("input".into(), Value::Array(input));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool).collect()),
        );
        if !parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), false.into());
        }
        match request.tool_choice {
            ToolChoice::Auto | ToolChoice::AutoWithout(_) => {}
            ToolChoice::Answer => {
                body.insert("tool_choice".into(), "none".into());
            }
            ToolChoice::Required => {
                body.insert("tool_choice".into(), "required".into());
            }
            ToolChoice::Tool(name) => {
                body.insert(
                    "tool_choice".into(),
                    json!({"type": "function", "name": name.as_str()}),
                );
            }
        }
    }
    body.insert("stream".into(), true.into());
    body.insert("store".into(), false.into());
    if is_reasoning_model(model) {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    serde_json::to_vec(&Value::Object(body))
}

/// Models that produce reasoning items (o-series, gpt-5, codex): only they
/// are asked for the encrypted content, as OpenAI's own Codex client does.
fn is_reasoning_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    let o_series = name
        .strip_prefix('o')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    o_series || name.starts_with("gpt-5") || name.contains("codex")
}

/// One history message as input items.
fn items(message: &Message, input: &mut Vec<Value>) {
    match message.role {
        Role::User if message.attachments.is_empty() => {
            input.push(json!({"role": "user", "content": message.content}))
        }
        Role::User => input.push(json!({"role": "user", "content": input_parts(message)})),
        Role::System => input.push(json!({"role": "developer", "content": message.content})),
        Role::Tool => input.push(json!({
            "type": "function_call_output",
            "call_id": message.tool_call_id.as_ref().map_or("", |id| id.as_str()),
            "output": tool_output(message),
        })),
        Role::Assistant => {
            input.extend(
                message
                    .provider_items
                    .iter()
                    .filter(|item| item.provider == PROVIDER)
                    .map(|item| item.item.clone()),
            );
            if !message.content.is_empty() {
                input.push(json!({"role": "assistant", "content": message.content}));
            }
            for call in &message.tool_calls {
                input.push(json!({
                    "type": "function_call",
                    "call_id": call.id.as_str(),
                    "name": call.name,
                    "arguments": if call.arguments.trim().is_empty() { "{}" } else { &call.arguments },
                }));
            }
        }
    }
}

/// A result's text, or (when the tool returned images) the text and the
/// images as input parts, which `function_call_output` takes.
fn tool_output(message: &Message) -> Value {
    if message.attachments.is_empty() {
        return message.content.clone().into();
    }
    input_parts(message)
}

/// A message's text and images as input parts.
fn input_parts(message: &Message) -> Value {
    let mut parts = vec![json!({"type": "input_text", "text": message.content})];
    parts.extend(
        message
            .attachments
            .iter()
            .filter_map(|a| a.data_url())
            .map(|url| json!({"type": "input_image", "image_url": url})),
    );
    Value::Array(parts)
}

fn tool(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{CallId, ProviderItem, ToolCallRequest};

    #[test]
    fn only_reasoning_models_ask_for_encrypted_reasoning() {
        for (model, reasoning) in [
            ("o3", true),
            ("o4-mini-2025-04-16", true),
            ("openai/o3-mini", true),
            ("gpt-5", true),
            ("codex-mini-latest", true),
            ("gpt-4.1", false),
            ("gpt-4o-mini", false),
            ("omni", false),
        ] {
            assert_eq!(is_reasoning_model(model), reasoning, "{model}");
        }
    }

    #[test]
    fn a_chosen_tool_is_a_function_choice() {
        let mut request = ModelRequest {
            model: String::new(),
            system: String::new(),
            messages: vec![Message::user("fix it")],
            tools: vec![ToolSpec {
                name: "bash".into(),
                description: "Run".into(),
                parameters: json!({"type": "object"}),
            }],
            tool_choice: ToolChoice::Required,
            hints: Default::default(),
        };
        let body = |r: &ModelRequest| -> Value {
            serde_json::from_slice(&build_body("gpt-4.1", r, true).expect("serialises"))
                .expect("json")
        };
        assert_eq!(body(&request)["tool_choice"], "required");
        request.tool_choice = ToolChoice::Tool(cortex_protocol::ToolName::Bash);
        assert_eq!(
            body(&request)["tool_choice"],
            json!({"type": "function", "name": "bash"})
        );
        request.tool_choice = ToolChoice::Answer;
        assert_eq!(body(&request)["tool_choice"], "none");
        request.tool_choice = ToolChoice::Auto;
        assert!(body(&request).get("tool_choice").is_none());
    }

    #[test]
    fn maps_history_and_replays_reasoning() {
        let mut assistant = Message::assistant(
            "",
            vec![ToolCallRequest {
                id: CallId::from("call_1"),
                name: "read_file".into(),
                arguments: "{\"path\":\"a.rs\"}".into(),
            }],
        );
        assistant.provider_items = vec![
            ProviderItem {
                provider: PROVIDER.into(),
                item: json!({"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
            },
            ProviderItem {
                provider: "anthropic".into(),
                item: json!({"type": "thinking"}),
            },
        ];
        let request = ModelRequest {
            model: String::new(),
            system: "You are Cortex.".into(),
            messages: vec![
                Message::user("read a.rs"),
                assistant,
                Message::tool(CallId::from("call_1"), "fn main() {}"),
                Message::assistant("Done.", vec![]),
                Message::system("note"),
            ],
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Read".into(),
                parameters: json!({"type": "object"}),
            }],
            tool_choice: Default::default(),
            hints: Default::default(),
        };
        let serial = build_body("o4-mini", &request, false).expect("serialises");
        let serial: Value = serde_json::from_slice(&serial).expect("json");
        assert_eq!(serial["parallel_tool_calls"], json!(false));
        let bytes = build_body("o4-mini", &request, true).expect("serialises");
        let value: Value = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(
            value,
            json!({
                "model": "o4-mini",
                "instructions": "You are Cortex.",
                "input": [
                    {"role": "user", "content": "read a.rs"},
                    {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"},
                    {"type": "function_call", "call_id": "call_1", "name": "read_file",
                     "arguments": "{\"path\":\"a.rs\"}"},
                    {"type": "function_call_output", "call_id": "call_1", "output": "fn main() {}"},
                    {"role": "assistant", "content": "Done."},
                    {"role": "developer", "content": "note"},
                ],
                "tools": [{"type": "function", "name": "read_file", "description": "Read",
                           "parameters": {"type": "object"}}],
                "stream": true,
                "store": false,
                "include": ["reasoning.encrypted_content"],
            })
        );
    }

    #[test]
    fn tool_images_are_input_parts_of_the_output() {
        let image = cortex_protocol::Attachment::Image {
            mime_type: "image/jpeg".into(),
            data: "/9j/".into(),
        };
        let mut out = Vec::new();
        items(
            &Message::tool_with(CallId::from("c1"), "[image 1: image/jpeg]", vec![image]),
            &mut out,
        );
        assert_eq!(
            out,
            [
                json!({"type": "function_call_output", "call_id": "c1", "output": [
                    {"type": "input_text", "text": "[image 1: image/jpeg]"},
                    {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/"}
                ]})
            ]
        );
    }
}
