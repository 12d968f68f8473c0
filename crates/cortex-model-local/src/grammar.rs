//! GBNF grammars that constrain a tool call to the request's tools.
//!
//! Once a reply starts a call, the rest is generated under a grammar in
//! which the name can only be one of the offered tools and the arguments
//! follow that tool's JSON Schema: required properties in schema order, then
//! the optional ones, each typed (string, integer, number, boolean, enums,
//! arrays, nested objects, nullable types). Anything the translation does not
//! understand becomes a generic JSON value, so a complex schema loosens the
//! constraint instead of failing.
//!
//! With the request's quotable files (the `quoted` edit format), an
//! `edit_file` call names one of those paths, and its `old_string` is whole
//! consecutive lines of that file's text as the model was shown it: a small
//! model quotes from memory (`debug: true` for `"debug": true`, a single
//! letter, a line of another language), and the grammar makes the quote
//! the file's own text (docs/BENCHMARKS.md, edit formats).

use crate::parse::CallForm;
use cortex_model::QuotableFile;
use cortex_protocol::{ToolName, ToolSpec};
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

/// A reply that must be an answer in words
/// ([`cortex_model::ToolChoice::Answer`]): its first character cannot begin
/// a call written out (`{`, `[`, `<tool_call>`, a fence, a quote) nor be
/// blank. Given no tool, the 0.5B wrote its calls out as JSON, one line
/// after another, until the runaway check stopped it.
pub const ANSWER_GRAMMAR: &str = r#"root ::= [^{\[<`"' \t\r\n] [^\x00]*"#;

/// The grammar for one call in `form` to one of `tools`, an `edit_file`
/// held to `quotable` when there are any. Root rule: `root`.
pub fn tool_call_grammar(tools: &[ToolSpec], form: CallForm, quotable: &[QuotableFile]) -> String {
    let mut b = Builder::default();
    let mut alternatives = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let hint = format!("args{i}");
        let args = match quoted_edit(tool, quotable) {
            Some(props) => b.quoted_edit(props, &tool.parameters, quotable, &hint),
            None => b.schema(&tool.parameters, &hint, 0),
        };
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
                Some(Value::Object(props)) => self.object(obj, props, None, hint, depth),
                _ if obj.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    self.object(obj, &serde_json::Map::new(), None, hint, depth)
                }
                _ => "object".to_owned(),
            },
            _ => "value".to_owned(),
        }
    }

    /// `edit_file`'s arguments with `path` first, one of `files`, then
    /// `old_string` as whole lines of that file's text (any string for a
    /// file without one), then the schema's other properties as
    /// [`Builder::object`] orders them.
    fn quoted_edit(
        &mut self,
        props: &serde_json::Map<String, Value>,
        schema: &Value,
        files: &[QuotableFile],
        hint: &str,
    ) -> String {
        let mut alts = Vec::with_capacity(files.len());
        for (f, file) in files.iter().enumerate() {
            let rule = format!("{hint}-f{f}");
            let quote = file
                .text
                .as_deref()
                .and_then(|text| self.lines(text, &rule))
                .map_or_else(|| "string".to_owned(), |q| format!(r#""\"" {q} "\"""#));
            self.rules.push((
                rule.clone(),
                format!(
                    r#"{} ws "," ws "\"old_string\"" ws ":" ws {quote}"#,
                    literal(&Value::String(file.path.clone()).to_string())
                ),
            ));
            alts.push(rule);
        }
        let lead = format!(r#""\"path\"" ws ":" ws ({})"#, alts.join(" | "));
        let rest: serde_json::Map<String, Value> = props
            .iter()
            .filter(|(name, _)| !matches!(name.as_str(), "path" | "old_string"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let obj = schema.as_object().cloned().unwrap_or_default();
        self.object(&obj, &rest, Some(lead), hint, 0)
    }

    /// A rule matching one or more whole consecutive lines of `text` as the
    /// inside of a JSON string (a line break between lines, one after the
    /// last allowed), starting at a line with more than blanks, with or
    /// without its indentation; `None` when there is no such line.
    fn lines(&mut self, text: &str, hint: &str) -> Option<String> {
        let lines: Vec<&str> = text.lines().collect();
        let mut starts = Vec::new();
        for (n, line) in lines.iter().enumerate() {
            let json = Value::String((*line).to_owned()).to_string();
            let inner = &json[1..json.len() - 1];
            let here = if inner.is_empty() {
                String::new()
            } else {
                format!("{} ", literal(inner))
            };
            let next = if n + 1 < lines.len() {
                format!(r#"( "\\n" {hint}-l{}? )?"#, n + 1)
            } else {
                r#""\\n"?"#.to_owned()
            };
            self.rules
                .push((format!("{hint}-l{n}"), format!("{here}{next}")));
            if line.trim().is_empty() {
                continue;
            }
            starts.push(format!("{hint}-l{n}"));
            // A quote may leave out the line's indentation: the edit then
            // keeps it, and the model need not count spaces.
            let content = line.trim_start();
            if content.len() < line.len() {
                let json = Value::String(content.to_owned()).to_string();
                let inner = &json[1..json.len() - 1];
                let rule = format!("{hint}-t{n}");
                self.rules
                    .push((rule.clone(), format!("{} {next}", literal(inner))));
                starts.push(rule);
            }
        }
        if starts.is_empty() {
            return None;
        }
        let rule = format!("{hint}-quote");
        self.rules.push((rule.clone(), starts.join(" | ")));
        Some(rule)
    }

    /// Required properties first (in schema order), then optional ones;
    /// `lead`, when given, before them all.
    fn object(
        &mut self,
        obj: &serde_json::Map<String, Value>,
        props: &serde_json::Map<String, Value>,
        lead: Option<String>,
        hint: &str,
        depth: usize,
    ) -> String {
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut req: Vec<String> = lead.into_iter().collect();
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

/// The properties of `tool` when it is the `string` shape of `edit_file`
/// and there are files to hold it to.
fn quoted_edit<'t>(
    tool: &'t ToolSpec,
    quotable: &[QuotableFile],
) -> Option<&'t serde_json::Map<String, Value>> {
    if quotable.is_empty() || tool.name != ToolName::EditFile.as_str() {
        return None;
    }
    let props = tool.parameters.get("properties")?.as_object()?;
    (props.contains_key("path") && props.contains_key("old_string")).then_some(props)
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
    use cortex_protocol::Mode;

    fn catalog(tools: &[ToolName]) -> Vec<ToolSpec> {
        tools.iter().map(|t| t.spec()).collect()
    }

    #[test]
    fn names_only_offered_tools() {
        let g = tool_call_grammar(&catalog(Mode::Ask.tools()), CallForm::Bare, &[]);
        for t in Mode::Ask.tools() {
            assert!(g.contains(&format!(r#""\"{}\"""#, t.as_str())), "{t}: {g}");
        }
        for withheld in ["write_file", "edit_file", "bash", "todo_write", "plan"] {
            assert!(!g.contains(withheld), "{withheld} withheld: {g}");
        }
    }

    #[test]
    fn whole_catalog_translates_without_fallbacks_at_top_level() {
        let g = tool_call_grammar(&catalog(&ToolName::ALL), CallForm::Tagged, &[]);
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
        let g = tool_call_grammar(&[ToolName::ReadFile.spec()], CallForm::Bare, &[]);
        assert!(
            g.contains(
                r#"args0 ::= "{" ws "\"path\"" ws ":" ws string ( ws "," ws "\"offset\"" ws ":" ws (integer | null) )? ( ws "," ws "\"limit\"" ws ":" ws (integer | null) )? ws "}""#
            ) || g.contains(r#"args0 ::= "{" ws "\"path\"" ws ":" ws string ( ws "," ws "\"limit\"""#),
            "{g}"
        );
    }

    #[test]
    fn enums_arrays_and_optional_only_objects() {
        let g = tool_call_grammar(&[ToolName::Grep.spec()], CallForm::Fenced, &[]);
        assert!(
            g.contains(r#"("\"files\"" | "\"content\"" | "\"count\"""#),
            "{g}"
        );
        let g = tool_call_grammar(&[ToolName::TodoWrite.spec()], CallForm::Bare, &[]);
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
        let g = tool_call_grammar(&[spec], CallForm::Bare, &[]);
        assert!(
            g.contains(r#"args0 ::= "{" ws ( "\"a\"" ws ":" ws string ( ws "," ws "\"b\"" ws ":" ws boolean )? | "\"b\"" ws ":" ws boolean )? ws "}""#),
            "{g}"
        );
    }

    #[test]
    fn a_quoted_edit_names_known_paths_and_quotes_whole_lines() {
        let files = [
            QuotableFile {
                path: "cfg.json".into(),
                text: Some("{\n  \"debug\": true\n\n}\n".into()),
            },
            QuotableFile {
                path: "big.log".into(),
                text: None,
            },
        ];
        let g = tool_call_grammar(
            &[ToolName::ReadFile.spec(), ToolName::EditFile.spec()],
            CallForm::Tagged,
            &files,
        );
        // Path first, one of the files; then old_string, then the rest.
        assert!(
            g.contains(r#"args1 ::= "{" ws "\"path\"" ws ":" ws (args1-f0 | args1-f1) ws "," ws "\"new_string\"" ws ":" ws string ( ws "," ws "\"replace_all\"""#),
            "{g}"
        );
        assert!(
            g.contains(r#"args1-f0 ::= "\"cfg.json\"" ws "," ws "\"old_string\"" ws ":" ws "\"" args1-f0-quote "\"""#),
            "{g}"
        );
        // A file without its text: any old_string.
        assert!(
            g.contains(r#"args1-f1 ::= "\"big.log\"" ws "," ws "\"old_string\"" ws ":" ws string"#),
            "{g}"
        );
        // Each line JSON-escaped, followed by the next; the blank line is
        // no place to start, the last line may end with a line break.
        assert!(
            g.contains(r#"args1-f0-l1 ::= "  \\\"debug\\\": true" ( "\\n" args1-f0-l2? )?"#),
            "{g}"
        );
        assert!(
            g.contains(r#"args1-f0-l2 ::= ( "\\n" args1-f0-l3? )?"#),
            "{g}"
        );
        assert!(g.contains(r#"args1-f0-l3 ::= "}" "\\n"?"#), "{g}");
        assert!(
            g.contains(
                "args1-f0-quote ::= args1-f0-l0 | args1-f0-l1 | args1-f0-t1 | args1-f0-l3\n"
            ),
            "{g}"
        );
        // Without its indentation, a quote goes on as the whole line does.
        assert!(
            g.contains(r#"args1-f0-t1 ::= "\\\"debug\\\": true" ( "\\n" args1-f0-l2? )?"#),
            "{g}"
        );
        // read_file is untouched; without files, edit_file is the schema's.
        assert!(
            g.contains(r#"args0 ::= "{" ws "\"path\"" ws ":" ws string"#),
            "{g}"
        );
        let plain = tool_call_grammar(&[ToolName::EditFile.spec()], CallForm::Tagged, &[]);
        assert!(!plain.contains("-quote"), "{plain}");
        // The lines format has no old_string to hold.
        let lines = ToolName::EditFile.spec_in(cortex_protocol::EditFormat::Lines);
        let g = tool_call_grammar(&[lines], CallForm::Tagged, &files);
        assert!(!g.contains("-quote") && g.contains("start_line"), "{g}");
    }

    #[test]
    fn literal_escapes() {
        assert_eq!(literal(r#""a\b""#), r#""\"a\\b\"""#);
    }
}
