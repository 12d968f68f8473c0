//! One MCP tool as the model is offered it: `mcp__SERVER__TOOL` with the
//! server's JSON Schema, compiled once, and the parser that checks a call's
//! arguments against that same schema (one type gives the schema and its
//! parser, as for the built-in tools).

use crate::config::valid_server_name;
use cortex_protocol::{ArgError, ToolSpec};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Every MCP tool's name starts with this.
pub const PREFIX: &str = "mcp__";
/// Longest tool name the providers accept (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_TOOL_NAME: usize = 64;
/// A description longer than this is cut: it is sent on every request.
const MAX_DESCRIPTION: usize = 1024;

/// `mcp__SERVER__TOOL` split back into its parts, if `name` has that shape.
pub fn split_qualified(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(PREFIX)?;
    let (server, tool) = rest.split_once("__")?;
    (valid_server_name(server) && !tool.is_empty()).then_some((server, tool))
}

/// Why a server's tool is not offered (the rest of the server's tools are).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolRejected {
    /// The tool's name has characters other than letters, digits, `-`, `_`.
    #[error("tool `{tool}`: its name has characters other than letters, digits, `-` and `_`")]
    BadName {
        /// The tool's name.
        tool: String,
    },
    /// The qualified name would be too long.
    #[error("tool `{tool}`: `{qualified}` would be longer than {MAX_TOOL_NAME} characters")]
    TooLong {
        /// The tool's name.
        tool: String,
        /// `mcp__SERVER__TOOL`.
        qualified: String,
    },
    /// The input schema does not compile.
    #[error("tool `{tool}`: invalid input schema: {reason}")]
    BadSchema {
        /// The tool's name.
        tool: String,
        /// Why.
        reason: String,
    },
}

/// A tool of a connected server, ready to offer and to check calls against.
#[derive(Clone)]
pub struct McpTool {
    /// The server's name for it.
    pub name: String,
    /// `mcp__SERVER__TOOL`.
    pub qualified: String,
    /// The tool's description, as the server gave it.
    pub description: String,
    /// The server's schema, as offered to the model.
    pub schema: Value,
    validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("qualified", &self.qualified)
            .finish_non_exhaustive()
    }
}

impl PartialEq for McpTool {
    fn eq(&self, other: &Self) -> bool {
        self.qualified == other.qualified && self.schema == other.schema
    }
}

impl McpTool {
    /// Check one tool a server listed. An invalid name or schema rejects
    /// this tool only.
    pub fn new(
        server: &str,
        name: &str,
        description: Option<&str>,
        schema: Map<String, Value>,
    ) -> Result<McpTool, ToolRejected> {
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(ToolRejected::BadName {
                tool: name.to_owned(),
            });
        }
        let qualified = format!("{PREFIX}{server}__{name}");
        if qualified.len() > MAX_TOOL_NAME {
            return Err(ToolRejected::TooLong {
                tool: name.to_owned(),
                qualified,
            });
        }
        let bad_schema = |reason: String| ToolRejected::BadSchema {
            tool: name.to_owned(),
            reason,
        };
        match schema.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            None if schema.is_empty() => {}
            _ => {
                return Err(bad_schema(
                    "the top level must be `\"type\": \"object\"`".into(),
                ));
            }
        }
        let mut schema = Value::Object(schema);
        if let Some(obj) = schema.as_object_mut() {
            // An empty schema means "no arguments"; providers want an object.
            obj.entry("type")
                .or_insert_with(|| Value::String("object".into()));
            obj.remove("$schema");
        }
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .build(&schema)
            .map_err(|e| bad_schema(e.to_string()))?;
        let description = description.unwrap_or_default();
        Ok(McpTool {
            name: name.to_owned(),
            qualified,
            description: cut(description, MAX_DESCRIPTION),
            schema,
            validator: Arc::new(validator),
        })
    }

    /// What the model is offered.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.qualified.clone(),
            description: self.description.clone(),
            parameters: self.schema.clone(),
        }
    }

    /// Parse and check the raw argument text the model produced. Empty text
    /// is `{}`.
    pub fn parse_args(&self, raw: &str) -> Result<Map<String, Value>, ArgError> {
        let raw = ArgError::text_to_parse(raw)?;
        let invalid = |reason: String| ArgError::Invalid {
            tool: self.qualified.clone(),
            reason,
            schema: self.schema.to_string(),
        };
        let value: Value = serde_json::from_str(raw).map_err(|e| invalid(e.to_string()))?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .take(3)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if !errors.is_empty() {
            return Err(invalid(errors.join("; ")));
        }
        match value {
            Value::Object(map) => Ok(map),
            _ => Err(invalid("the arguments must be a JSON object".into())),
        }
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::MAX_ARGUMENT_BYTES;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    fn add_tool() -> McpTool {
        McpTool::new(
            "calc",
            "add",
            Some("Add two numbers."),
            object(json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            })),
        )
        .expect("valid")
    }

    #[test]
    fn names_are_qualified_and_split_back() {
        let tool = add_tool();
        assert_eq!(tool.qualified, "mcp__calc__add");
        assert_eq!(tool.spec().name, "mcp__calc__add");
        assert_eq!(split_qualified("mcp__calc__add"), Some(("calc", "add")));
        assert_eq!(
            split_qualified("mcp__calc__add__more"),
            Some(("calc", "add__more"))
        );
        for not in [
            "read_file",
            "mcp__calc",
            "mcp__calc__",
            "mcp____x",
            "mcp__a.b__x",
        ] {
            assert_eq!(split_qualified(not), None, "{not}");
        }
    }

    #[test]
    fn arguments_are_checked_against_the_servers_schema() {
        let tool = add_tool();
        assert_eq!(
            tool.parse_args(r#"{"a": 1, "b": 2}"#).expect("valid")["b"],
            json!(2)
        );
        for bad in [r#"{"a": 1}"#, r#"{"a": "x", "b": 2}"#, "[1]", "{nope"] {
            let err = tool.parse_args(bad).expect_err(bad).to_string();
            assert!(err.contains("mcp__calc__add"), "{err}");
            assert!(err.contains("Expected an object matching"), "{err}");
        }
        let huge = format!(r#"{{"a": "{}"}}"#, "x".repeat(MAX_ARGUMENT_BYTES));
        assert!(matches!(
            tool.parse_args(&huge),
            Err(ArgError::TooLarge { .. })
        ));
    }

    #[test]
    fn an_empty_schema_means_no_arguments() {
        let tool = McpTool::new("s", "ping", None, Map::new()).expect("valid");
        assert_eq!(tool.schema, json!({"type": "object"}));
        assert!(tool.parse_args("").expect("empty is {}").is_empty());
    }

    #[test]
    fn bad_tools_are_rejected_alone() {
        let schema = || object(json!({"type": "object"}));
        assert!(matches!(
            McpTool::new("s", "a.b", None, schema()),
            Err(ToolRejected::BadName { .. })
        ));
        assert!(matches!(
            McpTool::new("s", &"x".repeat(60), None, schema()),
            Err(ToolRejected::TooLong { .. })
        ));
        let not_object = object(json!({"type": "string"}));
        assert!(matches!(
            McpTool::new("s", "t", None, not_object),
            Err(ToolRejected::BadSchema { .. })
        ));
        let invalid = object(json!({"type": "object", "properties": {"a": {"type": 7}}}));
        let err = McpTool::new("s", "t", None, invalid).expect_err("invalid schema");
        assert!(err.to_string().contains("invalid input schema"), "{err}");
    }
}
