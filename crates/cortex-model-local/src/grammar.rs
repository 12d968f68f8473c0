//! GBNF grammars that constrain a tool call to the request's tools.
//!
//! Once a reply starts a call, the rest is generated under a grammar in
//! which the name can only be one of the offered tools and the arguments
//! follow that tool's JSON Schema: required properties in schema order, then
//! the optional ones, each typed (string, integer, number, boolean, enums,
//! arrays, nested objects, nullable types). Anything the translation does not
//! understand becomes a generic JSON value, so a complex schema loosens the
//! constraint instead of failing.

use crate::parse::CallForm;
use cortex_protocol::ToolSpec;
use serde_json::Value;
use std::fmt::Write as _;

/// Shared JSON primitives.
const PRIMITIVES: &str = r#"ws ::= [ \t\n]{0,20}
string ::= "\"" char* "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" hex hex hex hex)
hex ::= [0-9a-fA-F]
integer ::= "-"? ("0" | [1-9] [0-9]{0,17})
number ::= integer ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}"
array ::= "[" ws ( value ( ws "," ws value )* )? ws "]"
"#;

/// Nesting deeper than this becomes a generic value.
const MAX_DEPTH: usize = 6;

/// The grammar for one call in `form` to one of `tools`. Root rule: `root`.
pub fn tool_call_grammar(tools: &[ToolSpec], form: CallForm) -> String {
    let mut b = Builder::default();
    let mut alternatives = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let args = b.schema(&tool.parameters, &format!("args{i}"), 0);
        let rule = format!("call{i}");
        b.rules.push((
            rule.clone(),
            format!(
                r#""{{" ws "\"name\"" ws ":" ws {} ws "," ws "\"arguments\"" ws ":" ws {args} ws "}}""#,
                literal(&Value::String(tool.name.clone()).to_string()),
            ),
        ));
        alternatives.push(rule);
    }
    let call = if alternatives.is_empty() {
        "object".to_owned()
    } else {
        alternatives.join(" | ")
    };
    let root = match form {
        CallForm::Tagged => r#"lead "<tool_call>" ws call ws "</tool_call>""#,
        CallForm::Fenced => r#"lead "```" ("json" | "JSON")? "\n" call ws "```""#,
        CallForm::Bare => "lead call",
    };
    let mut out = String::new();
    let _ = writeln!(out, "root ::= {root}");
    let _ = writeln!(out, "lead ::= [ \\t\\n]{{0,3}}");
    let _ = writeln!(out, "call ::= {call}");
    for (name, body) in &b.rules {
        let _ = writeln!(out, "{name} ::= {body}");
    }
    out.push_str(PRIMITIVES);
    out
}

#[derive(Default)]
struct Builder {
    rules: Vec<(String, String)>,
}

impl Builder {
    /// An expression matching `schema`; complex ones get their own rule
    /// named after `hint`.
    fn schema(&mut self, schema: &Value, hint: &str, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "value".to_owned();
        }
        let Some(obj) = schema.as_object() else {
            return "value".to_owned();
        };
        if let Some(c) = obj.get("const") {
            return literal(&c.to_string());
        }
        if let Some(Value::Array(options)) = obj.get("enum") {
            if options.is_empty() {
                return "value".to_owned();
            }
            let alts: Vec<String> = options.iter().map(|v| literal(&v.to_string())).collect();
            return format!("({})", alts.join(" | "));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(options)) = obj.get(key) {
                let alts: Vec<String> = options
                    .iter()
                    .enumerate()
                    .map(|(i, s)| self.schema(s, &format!("{hint}-{i}"), depth + 1))
                    .collect();
                if alts.is_empty() {
                    return "value".to_owned();
                }
                return format!("({})", alts.join(" | "));
            }
        }
        match obj.get("type") {
            Some(Value::String(t)) => self.typed(t, obj, hint, depth),
            Some(Value::Array(types)) => {
                let alts: Vec<String> = types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.typed(t, obj, hint, depth))
                    .collect();
                if alts.is_empty() {
                    "value".to_owned()
                } else if alts.len() == 1 {
                    alts.join("")
                } else {
                    format!("({})", alts.join(" | "))
                }
            }
            _ => "value".to_owned(),
        }
    }

    fn typed(
        &mut self,
        t: &str,
        obj: &serde_json::Map<String, Value>,
        hint: &str,
        depth: usize,
    ) -> String {
        match t {
            "string" => "string".to_owned(),
            "integer" => "integer".to_owned(),
            "number" => "number".to_owned(),
            "boolean" => "boolean".to_owned(),
            "null" => "null".to_owned(),
            "array" => match obj.get("items") {
                Some(items) if items.is_object() => {
                    let item = self.schema(items, &format!("{hint}-item"), depth + 1);
                    let rule = format!("{hint}-array");
                    self.rules.push((
                        rule.clone(),
                        format!(r#""[" ws ( {item} ( ws "," ws {item} )* )? ws "]""#),
                    ));
                    rule
                }
                _ => "array".to_owned(),
            },
            "object" => match obj.get("properties") {
                Some(Value::Object(props)) => self.object(obj, props, hint, depth),
                _ if obj.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    self.object(obj, &serde_json::Map::new(), hint, depth)
                }
                _ => "object".to_owned(),
            },
            _ => "value".to_owned(),
        }
    }

    /// Required properties first (in schema order), then optional ones.
    fn object(
        &mut self,
        obj: &serde_json::Map<String, Value>,
        props: &serde_json::Map<String, Value>,
        hint: &str,
        depth: usize,
    ) -> String {
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut req = Vec::new();
        let mut opt = Vec::new();
        for (i, (name, schema)) in props.iter().enumerate() {
            let value = self.schema(schema, &format!("{hint}-p{i}"), depth + 1);
            let pair = format!(
                r#"{} ws ":" ws {value}"#,
                literal(&Value::String(name.clone()).to_string())
            );
            if required.contains(&name.as_str()) {
                req.push(pair);
            } else {
                opt.push(pair);
            }
        }
        let body = if !req.is_empty() {
            let mut s = req.join(r#" ws "," ws "#);
            for o in &opt {
                let _ = write!(s, r#" ( ws "," ws {o} )?"#);
            }
            s
        } else if !opt.is_empty() {
            // Any subsequence of the optional properties, in order.
            let alts: Vec<String> = (0..opt.len())
                .map(|i| {
                    let mut s = opt[i].clone();
                    for o in &opt[i + 1..] {
                        let _ = write!(s, r#" ( ws "," ws {o} )?"#);
                    }
                    s
                })
                .collect();
            format!("( {} )?", alts.join(" | "))
        } else {
            String::new()
        };
        let rule = hint.to_owned();
        self.rules
            .push((rule.clone(), format!(r#""{{" ws {body} ws "}}""#)));
        rule
    }
}

/// A GBNF string literal matching `text` exactly.
fn literal(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 2);
    s.push('"');
    for c in text.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\t' => s.push_str("\\t"),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::{Mode, ToolName};

    fn catalog(tools: &[ToolName]) -> Vec<ToolSpec> {
        tools.iter().map(|t| t.spec()).collect()
    }

    #[test]
    fn names_only_offered_tools() {
        let g = tool_call_grammar(&catalog(Mode::Ask.tools()), CallForm::Bare);
        for t in Mode::Ask.tools() {
            assert!(g.contains(&format!(r#""\"{}\"""#, t.as_str())), "{t}: {g}");
        }
        for withheld in ["write_file", "edit_file", "bash", "todo_write", "plan"] {
            assert!(!g.contains(withheld), "{withheld} withheld: {g}");
        }
    }

    #[test]
    fn whole_catalog_translates_without_fallbacks_at_top_level() {
        let g = tool_call_grammar(&catalog(&ToolName::ALL), CallForm::Tagged);
        assert!(g.starts_with(r#"root ::= lead "<tool_call>" ws call ws "</tool_call>""#));
        for (i, t) in ToolName::ALL.iter().enumerate() {
            assert!(g.contains(&format!("call{i} ::= ")), "{t}");
            assert!(g.contains(&format!(r#""\"{}\"""#, t.as_str())), "{t}");
            // Every argument object has its own structured rule.
            assert!(g.contains(&format!("\nargs{i} ::= \"{{\" ws ")), "{t}: {g}");
        }
        // Every rule referenced is defined.
        let defined: Vec<&str> = g.lines().filter_map(|l| l.split(" ::= ").next()).collect();
        for line in g.lines() {
            let Some((_, body)) = line.split_once(" ::= ") else {
                continue;
            };
            let mut in_lit = false;
            let mut in_class = false;
            let mut prev = ' ';
            let mut word = String::new();
            for c in body.chars().chain(std::iter::once(' ')) {
                if in_lit {
                    if c == '"' && prev != '\\' {
                        in_lit = false;
                    }
                } else if in_class {
                    if c == ']' && prev != '\\' {
                        in_class = false;
                    }
                } else if c == '"' {
                    in_lit = true;
                } else if c == '[' {
                    in_class = true;
                } else if c.is_ascii_alphanumeric() || c == '-' {
                    word.push(c);
                } else {
                    if !word.is_empty() && !word.chars().all(|c| c.is_ascii_digit()) {
                        assert!(
                            defined.contains(&word.as_str()),
                            "undefined {word} in {line}"
                        );
                    }
                    word.clear();
                }
                prev = if prev == '\\' && c == '\\' { ' ' } else { c };
            }
        }
    }

    #[test]
    fn read_file_arguments_are_typed() {
        let g = tool_call_grammar(&[ToolName::ReadFile.spec()], CallForm::Bare);
        assert!(
            g.contains(
                r#"args0 ::= "{" ws "\"path\"" ws ":" ws string ( ws "," ws "\"offset\"" ws ":" ws (integer | null) )? ( ws "," ws "\"limit\"" ws ":" ws (integer | null) )? ws "}""#
            ) || g.contains(r#"args0 ::= "{" ws "\"path\"" ws ":" ws string ( ws "," ws "\"limit\"""#),
            "{g}"
        );
    }

    #[test]
    fn enums_arrays_and_optional_only_objects() {
        let g = tool_call_grammar(&[ToolName::Grep.spec()], CallForm::Fenced);
        assert!(
            g.contains(r#"("\"files\"" | "\"content\"" | "\"count\"""#),
            "{g}"
        );
        let g = tool_call_grammar(&[ToolName::TodoWrite.spec()], CallForm::Bare);
        assert!(g.contains(r#"args0-p0-array ::= "[" ws ( "#), "{g}");
        assert!(
            g.contains(r#""\"pending\"" | "\"in_progress\"" | "\"completed\"""#),
            "{g}"
        );
        let schema = serde_json::json!({"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"type": "boolean"}}});
        let spec = ToolSpec {
            name: "t".into(),
            description: String::new(),
            parameters: schema,
        };
        let g = tool_call_grammar(&[spec], CallForm::Bare);
        assert!(
            g.contains(r#"args0 ::= "{" ws ( "\"a\"" ws ":" ws string ( ws "," ws "\"b\"" ws ":" ws boolean )? | "\"b\"" ws ":" ws boolean )? ws "}""#),
            "{g}"
        );
    }

    #[test]
    fn literal_escapes() {
        assert_eq!(literal(r#""a\b""#), r#""\"a\\b\"""#);
    }
}
