//! The Messages API request body.
//!
//! History: user, system-note and tool-result messages become `user` turns,
//! assistant messages `assistant` turns made of content blocks; consecutive
//! messages of one role are merged into one turn (the API wants them
//! alternating, and all tool results of a round in one user message).
//!
//! Prompt caching: three `cache_control` breakpoints (of the four allowed):
//! the system prompt, the last tool definition, and the last block of the
//! last message. The prefix up to the last message is what the next round
//! sends again, so each round reads the previous round's prefix from the
//! cache and writes only what is new.

use crate::{ModelRequest, ToolChoice};
use cortex_protocol::{Attachment, Message, Role, ToolSpec};
use serde_json::{Map, Value, json};

pub(crate) const PROVIDER: &str = "anthropic";

pub(crate) struct Options {
    pub(crate) max_tokens: u32,
    pub(crate) thinking_budget: Option<u32>,
    pub(crate) cache: bool,
    pub(crate) parallel_tool_calls: bool,
}

/// The JSON body of a streaming request for `model`.
pub(crate) fn build_body(
    model: &str,
    request: &ModelRequest,
    options: &Options,
) -> Result<Vec<u8>, serde_json::Error> {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    let mut max_tokens = options.max_tokens;
    if let Some(budget) = options.thinking_budget {
        // The budget is part of max_tokens, which must exceed it.
        max_tokens = max_tokens.max(budget.saturating_add(1024));
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    body.insert("max_tokens".into(), max_tokens.into());
    if !request.system.is_empty() {
        let mut block = json!({"type": "text", "text": request.system});
        if options.cache {
            block["cache_control"] = ephemeral();
        }
        body.insert("system".into(), Value::Array(vec![block]));
    }
    let mut messages = turns(&request.messages, options.thinking_budget.is_some());
    if options.cache {
        mark_last_block(&mut messages);
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request.tools.iter().map(tool).collect();
        if options.cache
            && let Some(last) = tools.last_mut()
        {
            last["cache_control"] = ephemeral();
        }
        body.insert("tools".into(), Value::Array(tools));
        let mut choice = match request.tool_choice {
            ToolChoice::Auto | ToolChoice::AutoWithout(_) => json!({"type": "auto"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": name.as_str()}),
            ToolChoice::Answer => json!({"type": "none"}),
        };
        if request.tool_choice == ToolChoice::Answer {
            // `disable_parallel_tool_use` is not a field of `none`.
            body.insert("tool_choice".into(), choice);
        } else if !options.parallel_tool_calls {
            choice["disable_parallel_tool_use"] = true.into();
            body.insert("tool_choice".into(), choice);
        } else if request.tool_choice.forces_call() {
            body.insert("tool_choice".into(), choice);
        }
    }
    body.insert("stream".into(), true.into());
    serde_json::to_vec(&Value::Object(body))
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The history as alternating `{role, content: [blocks]}` turns.
fn turns(history: &[Message], thinking: bool) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in history {
        let (role, blocks) = match message.role {
            Role::User | Role::System => {
                let mut blocks = text_block(&message.content);
                blocks.extend(message.attachments.iter().filter_map(image_block));
                ("user", blocks)
            }
            Role::Tool => ("user", vec![tool_result(message)]),
            Role::Assistant => ("assistant", assistant_blocks(message, thinking)),
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// The API rejects empty text blocks.
fn text_block(text: &str) -> Vec<Value> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![json!({"type": "text", "text": text})]
    }
}

fn tool_result(message: &Message) -> Value {
    let id = message.tool_call_id.as_ref().map_or("", |id| id.as_str());
    let mut block = json!({"type": "tool_result", "tool_use_id": id});
    if !message.attachments.is_empty() {
        let mut content = text_block(&message.content);
        content.extend(message.attachments.iter().filter_map(image_block));
        block["content"] = Value::Array(content);
    } else if !message.content.is_empty() {
        block["content"] = message.content.clone().into();
    }
    block
}

/// An image block (of a tool result or a user message); `None` for one
/// whose bytes are not here.
fn image_block(attachment: &Attachment) -> Option<Value> {
    let (mime_type, data) = attachment.inline()?;
    Some(json!({
        "type": "image",
        "source": {"type": "base64", "media_type": mime_type, "data": data},
    }))
}

/// Thinking blocks (replayed only while thinking is on: the API requires
/// them, signed, before the tool calls of the round they belong to), the
/// text, then one `tool_use` block per call.
fn assistant_blocks(message: &Message, thinking: bool) -> Vec<Value> {
    let mut blocks: Vec<Value> = if thinking {
        message
            .provider_items
            .iter()
            .filter(|item| item.provider == PROVIDER)
            .map(|item| item.item.clone())
            .collect()
    } else {
        Vec::new()
    };
    blocks.extend(text_block(&message.content));
    for call in &message.tool_calls {
        blocks.push(json!({
            "type": "tool_use",
            "id": call.id.as_str(),
            "name": call.name,
            "input": tool_input(&call.arguments),
        }));
    }
    blocks
}

/// `input` must be an object. Arguments that are not one (a model that
/// wrote broken JSON) are kept as text so the model sees what it sent.
fn tool_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(value @ Value::Object(_)) => value,
        _ => json!({"_unparsed_arguments": arguments}),
    }
}

fn tool(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.parameters,
    })
}

/// `cache_control` on the last block of the last turn that can carry one
/// (thinking blocks cannot).
fn mark_last_block(messages: &mut [Value]) {
    let Some(content) = messages
        .last_mut()
        .and_then(|m| m.get_mut("content"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    if let Some(block) = content.iter_mut().rev().find(|b| {
        !matches!(
            b.get("type").and_then(Value::as_str),
            Some("thinking" | "redacted_thinking")
        )
    }) {
        block["cache_control"] = ephemeral();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{CallId, ProviderItem, ToolCallRequest};

    fn body(request: &ModelRequest, options: &Options) -> Value {
        let bytes = build_body("claude-test", request, options).expect("serialises");
        serde_json::from_slice(&bytes).expect("valid json")
    }

    fn call(id: &str, name: &str, arguments: &str) -> ToolCallRequest {
        ToolCallRequest {
            id: CallId::from(id),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    fn history() -> ModelRequest {
        let mut thinking = Message::assistant(
            "Reading both.",
            vec![
                call("toolu_1", "read_file", "{\"path\":\"a.rs\"}"),
                call("toolu_2", "grep", "not json"),
            ],
        );
        thinking.provider_items.push(ProviderItem {
            provider: "anthropic".into(),
            item: json!({"type": "thinking", "thinking": "hm", "signature": "sig"}),
        });
        thinking.provider_items.push(ProviderItem {
            provider: "openai-responses".into(),
            item: json!({"type": "reasoning"}),
        });
        ModelRequest {
            model: String::new(),
            system: "You are Cortex.".into(),
            messages: vec![
                Message::user("look at a.rs"),
                thinking,
                Message::tool(CallId::from("toolu_1"), "fn main() {}"),
                Message::tool(CallId::from("toolu_2"), ""),
                Message::system("note"),
                Message::assistant("", vec![]),
            ],
            tools: vec![
                ToolSpec {
                    name: "read_file".into(),
                    description: "Read".into(),
                    parameters: json!({"type": "object"}),
                },
                ToolSpec {
                    name: "grep".into(),
                    description: "Search".into(),
                    parameters: json!({"type": "object"}),
                },
            ],
            tool_choice: Default::default(),
            hints: Default::default(),
        }
    }

    #[test]
    fn a_required_tool_call_is_tool_choice_any() {
        let mut request = history();
        let parallel = Options {
            max_tokens: 1024,
            thinking_budget: None,
            cache: false,
            parallel_tool_calls: true,
        };
        assert!(body(&request, &parallel).get("tool_choice").is_none());
        request.tool_choice = ToolChoice::Required;
        assert_eq!(
            body(&request, &parallel)["tool_choice"],
            json!({"type": "any"})
        );
        let serial = Options {
            parallel_tool_calls: false,
            ..parallel
        };
        assert_eq!(
            body(&request, &serial)["tool_choice"],
            json!({"type": "any", "disable_parallel_tool_use": true})
        );
        request.tool_choice = ToolChoice::Tool(cortex_protocol::ToolName::EditFile);
        assert_eq!(
            body(&request, &parallel)["tool_choice"],
            json!({"type": "tool", "name": "edit_file"})
        );
        assert_eq!(
            body(&request, &serial)["tool_choice"],
            json!({"type": "tool", "name": "edit_file", "disable_parallel_tool_use": true})
        );
        // An answer without a call: `none`, parallel or not.
        request.tool_choice = ToolChoice::Answer;
        for options in [&parallel, &serial] {
            assert_eq!(
                body(&request, options)["tool_choice"],
                json!({"type": "none"})
            );
        }
    }

    #[test]
    fn maps_history_with_cache_breakpoints() {
        let options = Options {
            max_tokens: 1000,
            thinking_budget: None,
            cache: true,
            parallel_tool_calls: true,
        };
        assert_eq!(
            body(&history(), &options),
            json!({
                "model": "claude-test",
                "max_tokens": 1000,
                "system": [{"type": "text", "text": "You are Cortex.",
                            "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "look at a.rs"}]},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Reading both."},
                        {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                         "input": {"path": "a.rs"}},
                        {"type": "tool_use", "id": "toolu_2", "name": "grep",
                         "input": {"_unparsed_arguments": "not json"}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "fn main() {}"},
                        {"type": "tool_result", "tool_use_id": "toolu_2"},
                        {"type": "text", "text": "note", "cache_control": {"type": "ephemeral"}},
                    ]},
                ],
                "tools": [
                    {"name": "read_file", "description": "Read", "input_schema": {"type": "object"}},
                    {"name": "grep", "description": "Search", "input_schema": {"type": "object"},
                     "cache_control": {"type": "ephemeral"}},
                ],
                "stream": true,
            })
        );
    }

    #[test]
    fn thinking_replays_signed_blocks_and_raises_max_tokens() {
        let options = Options {
            max_tokens: 1000,
            thinking_budget: Some(4000),
            cache: false,
            parallel_tool_calls: false,
        };
        let value = body(&history(), &options);
        assert_eq!(
            value["thinking"],
            json!({"type": "enabled", "budget_tokens": 4000})
        );
        assert_eq!(value["max_tokens"], json!(5024));
        assert_eq!(
            value["messages"][1]["content"][0],
            json!({"type": "thinking", "thinking": "hm", "signature": "sig"})
        );
        assert_eq!(
            value["messages"][1]["content"].as_array().map(Vec::len),
            Some(4)
        );
        assert!(!value.to_string().contains("cache_control"));
        assert_eq!(
            value["tool_choice"],
            json!({"type": "auto", "disable_parallel_tool_use": true})
        );
        assert!(value["system"][0].get("cache_control").is_none());
    }

    #[test]
    fn tool_images_are_image_blocks_of_the_result() {
        let image = Attachment::Image {
            mime_type: "image/png".into(),
            data: "aGk=".into(),
        };
        let messages = turns(
            &[Message::tool_with(
                CallId::from("toolu_1"),
                "[image 1: image/png]",
                vec![image],
            )],
            false,
        );
        assert_eq!(
            messages,
            [json!({"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": "toolu_1", "content": [
                {"type": "text", "text": "[image 1: image/png]"},
                {"type": "image", "source": {
                    "type": "base64", "media_type": "image/png", "data": "aGk="}}
            ]}]})]
        );
    }
}
