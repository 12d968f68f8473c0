//! The Chat Completions request body.

use super::ForcedCall;
use crate::{ModelRequest, ToolChoice};
use cortex_protocol::{Message, Role, ToolSpec};
use serde::Serialize;
use serde_json::json;

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    /// Sent only as `false` (models that cannot call tools in parallel);
    /// some compatible servers reject the field.
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    /// Sent only to force a call; the default is the server's.
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<serde_json::Value>,
    /// A forced call's JSON schema ([`ForcedCall::Schema`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<serde_json::Value>,
    stream: bool,
    stream_options: StreamOptions,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    /// `None` serialises as `null`: an assistant message that only calls tools.
    content: Option<WireContent<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

/// A message's content: text, or parts (the images tools returned).
#[derive(Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<serde_json::Value>),
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

/// The JSON body of a streaming request for `model`.
pub(crate) fn build_body(
    model: &str,
    request: &ModelRequest,
    parallel_tool_calls: bool,
    forced: ForcedCall,
) -> Result<Vec<u8>, serde_json::Error> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(WireMessage {
            role: "system",
            content: Some(WireContent::Text(&request.system)),
            tool_calls: Vec::new(),
            tool_call_id: None,
        });
    }
    for (index, message) in request.messages.iter().enumerate() {
        messages.push(wire_message(message));
        let next_is_tool = request
            .messages
            .get(index + 1)
            .is_some_and(|next| next.role == Role::Tool);
        if message.role == Role::Tool && !next_is_tool {
            messages.extend(tool_images(&request.messages[..=index]));
        }
    }
    let tools: Vec<WireTool<'_>> = request.tools.iter().map(wire_tool).collect();
    let (tool_choice, response_format) = forced_call(request, forced);
    let body = Body {
        model,
        messages,
        parallel_tool_calls: (!parallel_tool_calls && !tools.is_empty()).then_some(false),
        tools,
        tool_choice,
        response_format,
        stream: true,
        stream_options: StreamOptions {
            include_usage: true,
        },
    };
    serde_json::to_vec(&body)
}

/// The `tool_choice` or `response_format` that makes the reply call a tool
/// (neither without tools, or when the model may answer), or `"none"` when
/// it must answer (a server held to calls by a schema gets neither: it
/// may then call).
fn forced_call(
    request: &ModelRequest,
    forced: ForcedCall,
) -> (Option<serde_json::Value>, Option<serde_json::Value>) {
    if request.tool_choice == ToolChoice::Answer
        && !request.tools.is_empty()
        && forced == ForcedCall::ToolChoice
    {
        return (Some(json!("none")), None);
    }
    if request.tools.is_empty() || !request.tool_choice.forces_call() {
        return (None, None);
    }
    match (forced, request.tool_choice) {
        (ForcedCall::ToolChoice, ToolChoice::Tool(name)) => (
            Some(json!({"type": "function", "function": {"name": name.as_str()}})),
            None,
        ),
        (ForcedCall::ToolChoice, _) => (Some(json!("required")), None),
        (ForcedCall::Schema, choice) => {
            let named = |tool: &&ToolSpec| match choice {
                ToolChoice::Tool(name) => tool.name == name.as_str(),
                _ => true,
            };
            let mut calls: Vec<serde_json::Value> = request
                .tools
                .iter()
                .filter(named)
                .map(|tool| {
                    json!({"type": "object", "properties": {
                        "name": {"const": tool.name}, "arguments": tool.parameters},
                        "required": ["name", "arguments"]})
                })
                .collect();
            // A name not among the tools (a mode that withholds it): any
            // offered tool rather than none.
            if calls.is_empty() {
                return forced_call(
                    &ModelRequest {
                        tool_choice: ToolChoice::Required,
                        ..request.clone()
                    },
                    forced,
                );
            }
            let schema = if calls.len() == 1 {
                calls.remove(0)
            } else {
                json!({"anyOf": calls})
            };
            let format = json!({"type": "json_schema",
                "json_schema": {"name": "tool_call", "schema": schema}});
            (None, Some(format))
        }
    }
}

fn wire_message(message: &Message) -> WireMessage<'_> {
    match message.role {
        Role::User if !message.attachments.is_empty() => WireMessage {
            role: "user",
            content: Some(WireContent::Parts(user_parts(message))),
            tool_calls: Vec::new(),
            tool_call_id: None,
        },
        Role::System | Role::User => WireMessage {
            role: if message.role == Role::System {
                "system"
            } else {
                "user"
            },
            content: Some(WireContent::Text(&message.content)),
            tool_calls: Vec::new(),
            tool_call_id: None,
        },
        Role::Assistant => WireMessage {
            role: "assistant",
            content: if message.content.is_empty() && !message.tool_calls.is_empty() {
                None
            } else {
                Some(WireContent::Text(&message.content))
            },
            tool_calls: message
                .tool_calls
                .iter()
                .map(|call| WireToolCall {
                    id: call.id.as_str(),
                    kind: "function",
                    function: WireFunctionCall {
                        name: &call.name,
                        // Servers that parse arguments choke on "".
                        arguments: if call.arguments.trim().is_empty() {
                            "{}"
                        } else {
                            &call.arguments
                        },
                    },
                })
                .collect(),
            tool_call_id: None,
        },
        Role::Tool => WireMessage {
            role: "tool",
            content: Some(WireContent::Text(&message.content)),
            tool_calls: Vec::new(),
            tool_call_id: Some(message.tool_call_id.as_ref().map_or("", |id| id.as_str())),
        },
    }
}

/// Chat Completions takes no images in a `tool` message: the images of a
/// round's results (the run of tool messages ending `history`) follow them
/// as one `user` message, each after a line naming its call. None when
/// those results have none.
fn tool_images(history: &[Message]) -> Option<WireMessage<'static>> {
    let start = history
        .iter()
        .rposition(|m| m.role != Role::Tool)
        .map_or(0, |i| i + 1);
    let mut parts = Vec::new();
    for message in &history[start..] {
        if message.attachments.is_empty() {
            continue;
        }
        let id = message.tool_call_id.as_ref().map_or("", |id| id.as_str());
        parts.push(json!({"type": "text", "text": format!("The images of tool call {id}:")}));
        parts.extend(message.attachments.iter().filter_map(image_part));
    }
    (!parts.is_empty()).then(|| WireMessage {
        role: "user",
        content: Some(WireContent::Parts(parts)),
        tool_calls: Vec::new(),
        tool_call_id: None,
    })
}

/// A user message's text and images as content parts.
fn user_parts(message: &Message) -> Vec<serde_json::Value> {
    let mut parts = vec![json!({"type": "text", "text": message.content})];
    parts.extend(message.attachments.iter().filter_map(image_part));
    parts
}

/// An image as a content part; `None` for one whose bytes are not here.
fn image_part(attachment: &cortex_protocol::Attachment) -> Option<serde_json::Value> {
    let url = attachment.data_url()?;
    Some(json!({"type": "image_url", "image_url": {"url": url}}))
}

fn wire_tool(tool: &ToolSpec) -> WireTool<'_> {
    WireTool {
        kind: "function",
        function: WireFunction {
            name: &tool.name,
            description: &tool.description,
            parameters: &tool.parameters,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{CallId, ToolCallRequest};
    use serde_json::{Value, json};

    fn body(request: &ModelRequest) -> Value {
        body_forcing(request, ForcedCall::ToolChoice)
    }

    fn body_forcing(request: &ModelRequest, forced: ForcedCall) -> Value {
        let bytes = build_body("gpt-test", request, true, forced).expect("serialises");
        serde_json::from_slice(&bytes).expect("valid json")
    }

    #[test]
    fn maps_history_and_tools() {
        let request = ModelRequest {
            model: "ignored-here".into(),
            system: "You are Cortex.".into(),
            messages: vec![
                Message::user("read a.rs"),
                Message::assistant(
                    "",
                    vec![ToolCallRequest {
                        id: CallId::from("call_1"),
                        name: "read_file".into(),
                        arguments: "{\"path\":\"a.rs\"}".into(),
                    }],
                ),
                Message::tool(CallId::from("call_1"), "1\tfn main() {}"),
                Message::assistant("It is empty.", vec![]),
                Message::system("note"),
            ],
            tools: vec![ToolSpec {
                name: "read_file".into(),
                description: "Read a file".into(),
                parameters: json!({"type": "object"}),
            }],
            tool_choice: Default::default(),
            hints: Default::default(),
        };
        assert_eq!(
            body(&request),
            json!({
                "model": "gpt-test",
                "messages": [
                    {"role": "system", "content": "You are Cortex."},
                    {"role": "user", "content": "read a.rs"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "read_file", "arguments": "{\"path\":\"a.rs\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "1\tfn main() {}"},
                    {"role": "assistant", "content": "It is empty."},
                    {"role": "system", "content": "note"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "read_file", "description": "Read a file",
                    "parameters": {"type": "object"}}}],
                "stream": true,
                "stream_options": {"include_usage": true},
            })
        );
    }

    #[test]
    fn a_required_tool_call_is_sent_only_with_tools() {
        let spec = ToolSpec {
            name: "read_file".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object"}),
        };
        let mut request = ModelRequest {
            model: String::new(),
            system: String::new(),
            messages: vec![Message::user("check it")],
            tools: vec![spec],
            tool_choice: Default::default(),
            hints: Default::default(),
        };
        assert!(body(&request).get("tool_choice").is_none());
        request.tool_choice = ToolChoice::Required;
        assert_eq!(body(&request)["tool_choice"], "required");
        request.tool_choice = ToolChoice::Tool(cortex_protocol::ToolName::ReadFile);
        assert_eq!(
            body(&request)["tool_choice"],
            json!({"type": "function", "function": {"name": "read_file"}})
        );
        request.tool_choice = ToolChoice::Answer;
        assert_eq!(body(&request)["tool_choice"], "none");
        // A server held to calls by a schema is told nothing.
        let sent = body_forcing(&request, ForcedCall::Schema);
        assert!(sent.get("response_format").is_none() && sent.get("tool_choice").is_none());
        request.tools.clear();
        assert!(body(&request).get("tool_choice").is_none());
    }

    #[test]
    fn a_forced_call_as_a_schema_keeps_the_tools_and_names_the_call() {
        let spec = |name: &str| ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        };
        let mut request = ModelRequest {
            model: String::new(),
            system: String::new(),
            messages: vec![Message::user("fix it")],
            tools: vec![spec("read_file"), spec("write_file")],
            tool_choice: ToolChoice::Tool(cortex_protocol::ToolName::WriteFile),
            hints: Default::default(),
        };
        let sent = body_forcing(&request, ForcedCall::Schema);
        assert!(sent.get("tool_choice").is_none(), "{sent}");
        assert_eq!(sent["tools"].as_array().map(Vec::len), Some(2));
        let schema = &sent["response_format"]["json_schema"]["schema"];
        assert_eq!(sent["response_format"]["type"], "json_schema");
        assert_eq!(schema["properties"]["name"]["const"], "write_file");
        assert_eq!(
            schema["properties"]["arguments"],
            request.tools[1].parameters
        );
        // Any tool: one schema per tool.
        request.tool_choice = ToolChoice::Required;
        let sent = body_forcing(&request, ForcedCall::Schema);
        let any = sent["response_format"]["json_schema"]["schema"]["anyOf"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(any.len(), 2);
        assert_eq!(any[0]["properties"]["name"]["const"], "read_file");
        // A name the request does not offer: any of those it does.
        request.tools.remove(1);
        request.tool_choice = ToolChoice::Tool(cortex_protocol::ToolName::WriteFile);
        let sent = body_forcing(&request, ForcedCall::Schema);
        let schema = &sent["response_format"]["json_schema"]["schema"];
        assert_eq!(schema["properties"]["name"]["const"], "read_file");
        // Nothing forced: neither field.
        request.tool_choice = ToolChoice::Auto;
        let sent = body_forcing(&request, ForcedCall::Schema);
        assert!(sent.get("response_format").is_none() && sent.get("tool_choice").is_none());
    }

    #[test]
    fn omits_empty_tools_and_system_and_fills_empty_arguments() {
        let request = ModelRequest {
            model: String::new(),
            system: String::new(),
            messages: vec![Message::assistant(
                "thinking",
                vec![ToolCallRequest {
                    id: CallId::from("c"),
                    name: "todo_read".into(),
                    arguments: String::new(),
                }],
            )],
            tools: vec![],
            tool_choice: Default::default(),
            hints: Default::default(),
        };
        let value = body(&request);
        assert!(value.get("tools").is_none());
        let serial = build_body("m", &request, false, ForcedCall::ToolChoice).expect("serialises");
        // Without tools there is nothing to say about parallel calls.
        assert!(!String::from_utf8_lossy(&serial).contains("parallel_tool_calls"));
        assert_eq!(
            value["messages"],
            json!([{"role": "assistant", "content": "thinking", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "todo_read", "arguments": "{}"}}
            ]}])
        );
    }

    fn image() -> cortex_protocol::Attachment {
        cortex_protocol::Attachment::Image {
            mime_type: "image/png".into(),
            data: "aGk=".into(),
        }
    }

    #[test]
    fn tool_images_follow_the_rounds_results_as_a_user_message() {
        let call = |id: &str| ToolCallRequest {
            id: CallId::from(id),
            name: "mcp__s__shot".into(),
            arguments: "{}".into(),
        };
        let request = ModelRequest {
            model: String::new(),
            system: String::new(),
            messages: vec![
                Message::assistant("", vec![call("c1"), call("c2")]),
                Message::tool_with(CallId::from("c1"), "[image 1: image/png]", vec![image()]),
                Message::tool(CallId::from("c2"), "no picture"),
                Message::assistant("I see it.", vec![]),
            ],
            tools: vec![],
            tool_choice: Default::default(),
            hints: Default::default(),
        };
        let messages = body(&request)["messages"].clone();
        // The tool messages stay text and adjacent to their calls; the
        // images come after the last of them.
        assert_eq!(messages[1]["content"], "[image 1: image/png]");
        assert_eq!(messages[2]["role"], "tool");
        assert_eq!(
            messages[3],
            json!({"role": "user", "content": [
                {"type": "text", "text": "The images of tool call c1:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}}
            ]})
        );
        assert_eq!(messages[4]["role"], "assistant");
        assert_eq!(messages.as_array().map(Vec::len), Some(5));
    }
}
