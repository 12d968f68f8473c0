//! Tool argument types, their generated JSON Schemas, and the parser that
//! turns a model's raw argument text into typed arguments.
//!
//! A malformed call is never a crash: `ToolArgs::parse` returns an
//! [`ArgError`] whose message is written for the model to read and correct.

use crate::goal::GoalArgs;
use crate::mode::ToolName;
use crate::spec::SpecArgs;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Raw argument text larger than this is refused before parsing. Large enough
/// for any sane `write_file`, small enough that a runaway model cannot make the
/// harness hold gigabytes.
pub const MAX_ARGUMENT_BYTES: usize = 1024 * 1024;

/// What the model is offered for one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's wire name, e.g. `read_file`.
    pub name: String,
    /// What the tool does, as the model reads it.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Read a text file of the workspace as numbered lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// Path relative to the workspace root.
    pub path: String,
    /// First line to return, 1-based (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// How many lines to return (default 2000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}

/// Create or overwrite a file of the workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// Path relative to the workspace root; parent folders are created.
    pub path: String,
    /// The whole new content of the file.
    pub content: String,
}

/// Replace an exact string in a file of the workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// Path relative to the workspace root.
    pub path: String,
    /// Exact text to replace; must occur once unless replace_all is true.
    pub old_string: String,
    /// Replacement text.
    pub new_string: String,
    /// Replace every occurrence instead of exactly one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_all: Option<bool>,
}

/// Replace a range of lines of a file of the workspace (the `lines` edit
/// format, [`EditFormat::Lines`]): the line numbers are those `read_file`
/// and the files in the prompt show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditLinesArgs {
    /// Path relative to the workspace root.
    pub path: String,
    /// First line to replace, 1-based.
    pub start_line: u64,
    /// Last line to replace (inclusive); start_line - 1 inserts before start_line.
    pub end_line: u64,
    /// The new text of those lines (empty deletes them).
    pub new_text: String,
}

/// How the model is offered `edit_file`: which shape of arguments it
/// writes. A call in either shape is accepted whichever was offered; the
/// format decides only the schema and description in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditFormat {
    /// `old_string` / `new_string`: exact text replaced ([`EditFileArgs`]).
    #[default]
    String,
    /// `start_line` / `end_line` / `new_text` ([`EditLinesArgs`]): small
    /// models quote text from memory, but copy line numbers they were shown.
    Lines,
    /// [`EditFileArgs`] with `old_string` held to whole lines of a file the
    /// model was shown: the request carries those files, and a provider
    /// that constrains generation (the embedded model's grammar) lets the
    /// model write only such lines; others see the `string` format.
    Quoted,
    /// No `edit_file`: the model changes a file by writing all of it with
    /// `write_file` (Aider's `whole` format for weak models). For small
    /// files; a call of `edit_file` anyway is refused.
    Whole,
    /// No `edit_file` offered: the model writes its changes in its reply as
    /// SEARCH/REPLACE blocks (Aider's format), which the harness runs as
    /// `edit_file` calls (and an `edit_file` call it makes anyway runs too).
    Blocks,
}

impl EditFormat {
    /// The config's name of the format (`string`, `lines`, `quoted`, `whole`,
    /// `blocks`).
    pub fn as_str(self) -> &'static str {
        match self {
            EditFormat::String => "string",
            EditFormat::Lines => "lines",
            EditFormat::Quoted => "quoted",
            EditFormat::Whole => "whole",
            EditFormat::Blocks => "blocks",
        }
    }

    /// Whether the model is offered `edit_file` (not in the `whole` and
    /// `blocks` formats, which change files by other means).
    pub fn offers_edit_file(self) -> bool {
        !matches!(self, EditFormat::Whole | EditFormat::Blocks)
    }
}

impl std::str::FromStr for EditFormat {
    type Err = UnknownEditFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            EditFormat::String,
            EditFormat::Lines,
            EditFormat::Quoted,
            EditFormat::Whole,
            EditFormat::Blocks,
        ]
        .into_iter()
        .find(|f| f.as_str().eq_ignore_ascii_case(s))
        .ok_or_else(|| UnknownEditFormat(s.to_owned()))
    }
}

/// A name that is not an [`EditFormat`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown edit format `{0}` (expected string, lines, quoted, whole or blocks)")]
pub struct UnknownEditFormat(pub String);

/// Find files of the workspace by name pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob such as `**/*.rs` or `src/*.toml`.
    pub pattern: String,
    /// Folder to search in, relative to the workspace root (default: the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

// What a grep returns. Not a doc comment: the grep schema inlines this type,
// so schemars would send it with every request.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum GrepMode {
    /// Paths of matching files.
    #[default]
    Files,
    /// Matching lines with line numbers.
    Content,
    /// Number of matching lines per file.
    Count,
}

/// Search file contents of the workspace with a regular expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression (Rust regex syntax, as ripgrep).
    pub pattern: String,
    /// File or folder to search, relative to the workspace root (default: the root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Only search files whose path matches this glob, e.g. `*.rs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    /// files (default), content or count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<GrepMode>,
    /// Lines of context around each match (content mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<u32>,
    /// Match case-insensitively.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_case: Option<bool>,
}

/// Run a shell command in the workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// Shell command, run with `bash -c` in the workspace root.
    pub command: String,
    /// Timeout in milliseconds (default 120000, at most 600000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Run in the background (a server, a watcher): returns an id at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
}

impl BashArgs {
    /// Whether the command is to run in the background (`background: true`).
    pub fn in_background(&self) -> bool {
        self.background == Some(true)
    }
}

/// Read the session's todo list; takes no arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct TodoReadArgs {}

// Where a todo item stands: `pending`, `in_progress` (the model keeps one
// item there) or `completed`. No doc comments on it or its variants: the
// `todo_write` schema inlines them, and every request carries it.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

// One item of the session's todo list: what is to be done and where it
// stands. No doc comments on it or its fields: the `todo_write` schema
// inlines them, and every request carries it.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    pub content: String,
    pub status: TodoStatus,
}

/// Replace the session's todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteArgs {
    /// The whole list; it replaces the previous one.
    pub todos: Vec<Todo>,
}

/// Propose a plan (Plan mode); it waits for the user's accept or reject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// Short title of the plan.
    pub title: String,
    /// The plan in Markdown; must contain a ```mermaid block declaring a diagram type.
    pub markdown: String,
}

/// Load a skill by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillArgs {
    /// A skill's name from the list.
    pub name: String,
    /// A listed file to read instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// Name a background command (`bash_output`, `bash_kill`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundIdArgs {
    /// From bash, e.g. bg1.
    pub id: String,
}

/// Hand a task to a subagent (`task`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskArgs {
    /// 3-8 words.
    pub description: String,
    /// All it needs: it sees nothing else.
    pub prompt: String,
    /// explore (read-only), general (default) or a listed kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// Fetch a web page (http or https) as readable text or Markdown. The
/// session's network policy decides whether it may: with the network off,
/// only hosts on the config's allow-list (`[network] allow`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchArgs {
    /// An http(s) URL.
    pub url: String,
    /// Most bytes of text returned (default and most 30000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
}

/// Search the web through the search API the user configured
/// (`[web_search]`); offered only when there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchArgs {
    /// What to search for.
    pub query: String,
}

/// Typed arguments of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "tool", content = "args", rename_all = "snake_case")]
pub enum ToolArgs {
    /// `read_file`.
    ReadFile(ReadFileArgs),
    /// `write_file`.
    WriteFile(WriteFileArgs),
    /// `edit_file` with `old_string` / `new_string`.
    EditFile(EditFileArgs),
    /// `edit_file` with a line range ([`EditFormat::Lines`]).
    EditLines(EditLinesArgs),
    /// `glob`.
    Glob(GlobArgs),
    /// `grep`.
    Grep(GrepArgs),
    /// `bash`.
    Bash(BashArgs),
    /// `todo_read`.
    TodoRead(TodoReadArgs),
    /// `todo_write`.
    TodoWrite(TodoWriteArgs),
    /// `plan`.
    Plan(PlanArgs),
    /// `spec`.
    Spec(SpecArgs),
    /// `goal`.
    Goal(GoalArgs),
    /// `skill`.
    Skill(SkillArgs),
    /// `bash_output`.
    BashOutput(BackgroundIdArgs),
    /// `bash_kill`.
    BashKill(BackgroundIdArgs),
    /// `task`.
    Task(TaskArgs),
    /// `web_fetch`.
    WebFetch(WebFetchArgs),
    /// `web_search`.
    WebSearch(WebSearchArgs),
}

/// Why a call's arguments were refused; the message is for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    /// The raw text is over [`MAX_ARGUMENT_BYTES`]; it was not parsed.
    #[error("arguments are {size} bytes; the limit is {limit} bytes")]
    TooLarge {
        /// The text's size, in bytes.
        size: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The text is not a JSON object matching the tool's schema.
    #[error("invalid arguments for {tool}: {reason}. Expected an object matching: {schema}")]
    Invalid {
        /// The tool called, by the name the model used (`mcp__SERVER__TOOL`
        /// for an MCP server's).
        tool: String,
        /// The parser's complaint.
        reason: String,
        /// The tool's argument schema, so the model can correct the call.
        schema: String,
    },
}

impl ArgError {
    /// The text a call's raw arguments are parsed from, for the built-in
    /// tools and MCP servers' alike: refused over [`MAX_ARGUMENT_BYTES`]
    /// (unparsed); empty text means "no arguments" (`{}`), which some
    /// providers send for tools that take none.
    pub fn text_to_parse(raw: &str) -> Result<&str, ArgError> {
        if raw.len() > MAX_ARGUMENT_BYTES {
            return Err(ArgError::TooLarge {
                size: raw.len(),
                limit: MAX_ARGUMENT_BYTES,
            });
        }
        Ok(if raw.trim().is_empty() { "{}" } else { raw })
    }
}

impl ToolArgs {
    /// Parse the raw argument text the model produced for `tool`. Empty text
    /// means "no arguments" (`{}`), which some providers send for tools that
    /// take none.
    pub fn parse(tool: ToolName, raw: &str) -> Result<ToolArgs, ArgError> {
        let raw = ArgError::text_to_parse(raw)?;
        let lines = tool == ToolName::EditFile && names_a_line_range(raw);
        let invalid = |e: serde_json::Error| ArgError::Invalid {
            tool: tool.as_str().to_owned(),
            reason: e.to_string(),
            schema: if lines {
                tool.spec_in(EditFormat::Lines).parameters.to_string()
            } else {
                tool.spec().parameters.to_string()
            },
        };
        fn de<T: serde::de::DeserializeOwned>(raw: &str) -> Result<T, serde_json::Error> {
            serde_json::from_str(raw)
        }
        Ok(match tool {
            ToolName::ReadFile => ToolArgs::ReadFile(de(raw).map_err(invalid)?),
            ToolName::WriteFile => ToolArgs::WriteFile(de(raw).map_err(invalid)?),
            ToolName::EditFile if lines => ToolArgs::EditLines(de(raw).map_err(invalid)?),
            ToolName::EditFile => ToolArgs::EditFile(de(raw).map_err(invalid)?),
            ToolName::Glob => ToolArgs::Glob(de(raw).map_err(invalid)?),
            ToolName::Grep => ToolArgs::Grep(de(raw).map_err(invalid)?),
            ToolName::Bash => ToolArgs::Bash(de(raw).map_err(invalid)?),
            ToolName::TodoRead => ToolArgs::TodoRead(de(raw).map_err(invalid)?),
            ToolName::TodoWrite => ToolArgs::TodoWrite(de(raw).map_err(invalid)?),
            ToolName::Plan => ToolArgs::Plan(de(raw).map_err(invalid)?),
            ToolName::Spec => ToolArgs::Spec(de(raw).map_err(invalid)?),
            ToolName::Goal => ToolArgs::Goal(de(raw).map_err(invalid)?),
            ToolName::Skill => ToolArgs::Skill(de(raw).map_err(invalid)?),
            ToolName::BashOutput => ToolArgs::BashOutput(de(raw).map_err(invalid)?),
            ToolName::BashKill => ToolArgs::BashKill(de(raw).map_err(invalid)?),
            ToolName::Task => ToolArgs::Task(de(raw).map_err(invalid)?),
            ToolName::WebFetch => ToolArgs::WebFetch(de(raw).map_err(invalid)?),
            ToolName::WebSearch => ToolArgs::WebSearch(de(raw).map_err(invalid)?),
        })
    }

    /// The file a `write_file` or `edit_file` (either shape) changes, as the
    /// model wrote it; `None` for every other call (a `bash` command may
    /// write too, but names no one file).
    pub fn written_path(&self) -> Option<&str> {
        match self {
            ToolArgs::WriteFile(a) => Some(&a.path),
            ToolArgs::EditFile(a) => Some(&a.path),
            ToolArgs::EditLines(a) => Some(&a.path),
            _ => None,
        }
    }

    /// The tool these arguments are for.
    pub fn tool(&self) -> ToolName {
        match self {
            ToolArgs::ReadFile(_) => ToolName::ReadFile,
            ToolArgs::WriteFile(_) => ToolName::WriteFile,
            ToolArgs::EditFile(_) | ToolArgs::EditLines(_) => ToolName::EditFile,
            ToolArgs::Glob(_) => ToolName::Glob,
            ToolArgs::Grep(_) => ToolName::Grep,
            ToolArgs::Bash(_) => ToolName::Bash,
            ToolArgs::TodoRead(_) => ToolName::TodoRead,
            ToolArgs::TodoWrite(_) => ToolName::TodoWrite,
            ToolArgs::Plan(_) => ToolName::Plan,
            ToolArgs::Spec(_) => ToolName::Spec,
            ToolArgs::Goal(_) => ToolName::Goal,
            ToolArgs::Skill(_) => ToolName::Skill,
            ToolArgs::BashOutput(_) => ToolName::BashOutput,
            ToolArgs::BashKill(_) => ToolName::BashKill,
            ToolArgs::Task(_) => ToolName::Task,
            ToolArgs::WebFetch(_) => ToolName::WebFetch,
            ToolArgs::WebSearch(_) => ToolName::WebSearch,
        }
    }
}

/// Whether an `edit_file` call's raw arguments are in the line-range shape:
/// an object with a `start_line` or `end_line` key.
fn names_a_line_range(raw: &str) -> bool {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(raw)
        .is_ok_and(|obj| obj.contains_key("start_line") || obj.contains_key("end_line"))
}

/// The specs an edit format changes, generated once: `edit_file` by line
/// ranges ([`EditFormat::Lines`]) or by whole lines ([`EditFormat::Quoted`]),
/// and `write_file` as the only way to change a file ([`EditFormat::Whole`]).
fn format_spec(tool: ToolName, format: EditFormat) -> Option<ToolSpec> {
    static SPECS: std::sync::LazyLock<Vec<(ToolName, EditFormat, ToolSpec)>> =
        std::sync::LazyLock::new(|| {
            let spec = |tool: ToolName, description: &str, parameters| ToolSpec {
                name: tool.as_str().to_owned(),
                description: description.to_owned(),
                parameters,
            };
            vec![
                (
                    ToolName::EditFile,
                    EditFormat::Lines,
                    spec(
                        ToolName::EditFile,
                        "Replace lines start_line..end_line (inclusive, numbered as read_file shows them) of a file you have read with new_text. Returns the lines replaced and the new numbering around them.",
                        schema_of::<EditLinesArgs>(),
                    ),
                ),
                (
                    ToolName::EditFile,
                    EditFormat::Quoted,
                    spec(
                        ToolName::EditFile,
                        "Replace whole lines of a file you have read. old_string: one or more complete, consecutive lines copied exactly from the file (with their indentation); new_string: the lines that take their place.",
                        schema_of::<EditFileArgs>(),
                    ),
                ),
                (
                    ToolName::WriteFile,
                    EditFormat::Whole,
                    spec(
                        ToolName::WriteFile,
                        "Create a file, or change one you have read: content is the file's whole new text, every line of it, changed or not.",
                        schema_of::<WriteFileArgs>(),
                    ),
                ),
            ]
        });
    SPECS
        .iter()
        .find(|(t, f, _)| *t == tool && *f == format)
        .map(|(_, _, spec)| spec.clone())
}

fn schema_of<T: JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(obj) = value.as_object_mut() {
        // Metadata the model does not need: every byte of a schema is sent on
        // every request.
        obj.remove("$schema");
        obj.remove("title");
        obj.remove("description");
    }
    value
}

impl ToolName {
    /// The description and generated schema offered to the model. Generated
    /// once per process: every model request carries the mode's tools, and
    /// generating a schema costs more than the rest of building a request.
    pub fn spec(self) -> ToolSpec {
        static SPECS: std::sync::LazyLock<Vec<ToolSpec>> = std::sync::LazyLock::new(|| {
            ToolName::ALL
                .iter()
                .map(|tool| tool.generate_spec())
                .collect()
        });
        SPECS[self as usize].clone()
    }

    /// [`ToolName::spec`], with `edit_file` in the given edit format.
    /// ([`EditFormat::Whole`] offers no `edit_file` at all: the caller
    /// leaves it out.)
    pub fn spec_in(self, format: EditFormat) -> ToolSpec {
        format_spec(self, format).unwrap_or_else(|| self.spec())
    }

    fn generate_spec(self) -> ToolSpec {
        let (description, parameters) = match self {
            ToolName::ReadFile => (
                "Read a text file. Returns numbered lines (default first 2000). Use offset/limit for long files.",
                schema_of::<ReadFileArgs>(),
            ),
            ToolName::WriteFile => (
                "Create or overwrite a file with the given content.",
                schema_of::<WriteFileArgs>(),
            ),
            ToolName::EditFile => (
                "Replace an exact string in a file you have read. old_string must match the file's text exactly once (include surrounding lines to make it unique) unless replace_all is true.",
                schema_of::<EditFileArgs>(),
            ),
            ToolName::Glob => (
                "Find files by name pattern (`*.py`, `src/**/*.rs`), newest first. Respects .gitignore.",
                schema_of::<GlobArgs>(),
            ),
            ToolName::Grep => (
                "Search file contents (not names) with a regular expression (ripgrep). Respects .gitignore.",
                schema_of::<GrepArgs>(),
            ),
            ToolName::Bash => (
                "Run a shell command in the workspace (build, test, git). Returns output and exit code.",
                schema_of::<BashArgs>(),
            ),
            ToolName::TodoRead => ("Read the current task list.", schema_of::<TodoReadArgs>()),
            ToolName::TodoWrite => (
                "Replace the task list. Use it for multi-step work; keep one item in_progress.",
                schema_of::<TodoWriteArgs>(),
            ),
            ToolName::Plan => (
                "Propose the plan: Markdown with numbered steps and a ```mermaid diagram (e.g. flowchart TD).",
                schema_of::<PlanArgs>(),
            ),
            ToolName::Spec => (
                "Propose the current spec phase for the user's accept: requirements (user stories, WHEN … THE SYSTEM SHALL … criteria), design (with a ```mermaid diagram), tasks (- [ ] list).",
                schema_of::<SpecArgs>(),
            ),
            ToolName::Goal => (
                "Record the goal's steps (the whole list each time, done true/false). complete: true only when every step is done, with evidence.",
                schema_of::<GoalArgs>(),
            ),
            ToolName::Skill => (
                "Load a listed skill: its instructions and files, or one file's text.",
                schema_of::<SkillArgs>(),
            ),
            ToolName::BashOutput => (
                "A background command's output since the last read, and whether it runs.",
                schema_of::<BackgroundIdArgs>(),
            ),
            ToolName::BashKill => (
                "End a background command and what it started.",
                schema_of::<BackgroundIdArgs>(),
            ),
            ToolName::Task => (
                "Hand a whole task to a subagent with its own context; only its answer returns. Calls in one reply run in parallel.",
                schema_of::<TaskArgs>(),
            ),
            ToolName::WebFetch => (
                "Fetch a web page (documentation, an issue) as Markdown or text.",
                schema_of::<WebFetchArgs>(),
            ),
            ToolName::WebSearch => (
                "Search the web; returns titles, URLs and snippets.",
                schema_of::<WebSearchArgs>(),
            ),
        };
        ToolSpec {
            name: self.as_str().to_owned(),
            description: description.to_owned(),
            parameters,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache is indexed by discriminant: `ALL` must list the tools in
    /// declaration order, and each cached spec is its own tool's.
    #[test]
    fn cached_specs_belong_to_their_tools() {
        for (i, tool) in ToolName::ALL.iter().enumerate() {
            assert_eq!(*tool as usize, i);
            assert_eq!(tool.spec(), tool.generate_spec());
            assert_eq!(tool.spec().name, tool.as_str());
        }
    }

    #[test]
    fn schemas_are_objects_with_required_fields() {
        for tool in ToolName::ALL {
            let spec = tool.spec();
            assert_eq!(spec.parameters["type"], "object", "{tool}");
            assert!(spec.parameters.get("$schema").is_none());
        }
        let read = ToolName::ReadFile.spec().parameters;
        assert_eq!(read["required"], serde_json::json!(["path"]));
        let grep = ToolName::Grep.spec().parameters.to_string();
        assert!(grep.contains("content"), "enum inlined: {grep}");
        assert!(!grep.contains("$ref"), "no refs: {grep}");
    }

    #[test]
    fn parse_accepts_valid_and_explains_invalid() {
        let ok = ToolArgs::parse(ToolName::ReadFile, r#"{"path":"a.rs","limit":5}"#);
        assert_eq!(
            ok,
            Ok(ToolArgs::ReadFile(ReadFileArgs {
                path: "a.rs".into(),
                offset: None,
                limit: Some(5)
            }))
        );
        assert_eq!(
            ToolArgs::parse(ToolName::TodoRead, ""),
            Ok(ToolArgs::TodoRead(TodoReadArgs {}))
        );
        for bad in [
            "{not json",
            r#"{"path": 3}"#,
            r#"{}"#,
            r#"{"path":"a","extra":1}"#,
        ] {
            let err = ToolArgs::parse(ToolName::ReadFile, bad).expect_err(bad);
            assert!(err.to_string().contains("read_file"), "{err}");
        }
        let huge = format!(
            r#"{{"path":"a","content":"{}"}}"#,
            "x".repeat(MAX_ARGUMENT_BYTES)
        );
        assert!(matches!(
            ToolArgs::parse(ToolName::WriteFile, &huge),
            Err(ArgError::TooLarge { .. })
        ));
    }

    #[test]
    fn an_edit_with_a_line_range_parses_as_edit_lines() {
        let raw = r#"{"path":"a.py","start_line":2,"end_line":3,"new_text":"x = 1\n"}"#;
        assert_eq!(
            ToolArgs::parse(ToolName::EditFile, raw),
            Ok(ToolArgs::EditLines(EditLinesArgs {
                path: "a.py".into(),
                start_line: 2,
                end_line: 3,
                new_text: "x = 1\n".into(),
            }))
        );
        let parsed = ToolArgs::parse(ToolName::EditFile, raw).expect("parses");
        assert_eq!(parsed.tool(), ToolName::EditFile);
        assert_eq!(parsed.written_path(), Some("a.py"));
        let read = ToolArgs::parse(ToolName::ReadFile, r#"{"path":"a.py"}"#).expect("parses");
        assert_eq!(read.written_path(), None);
        // A bad line-range call is explained with the line-range schema.
        let err = ToolArgs::parse(ToolName::EditFile, r#"{"path":"a.py","start_line":2}"#)
            .expect_err("no end_line");
        assert!(err.to_string().contains("new_text"), "{err}");
        assert!(!err.to_string().contains("old_string"), "{err}");
        // The string shape is unchanged.
        let raw = r#"{"path":"a.py","old_string":"a","new_string":"b"}"#;
        assert!(matches!(
            ToolArgs::parse(ToolName::EditFile, raw),
            Ok(ToolArgs::EditFile(_))
        ));
        // The offered spec follows the format; the name stays edit_file.
        let lines = ToolName::EditFile.spec_in(EditFormat::Lines);
        assert_eq!(lines.name, "edit_file");
        assert!(lines.parameters.to_string().contains("start_line"));
        assert_eq!(
            ToolName::EditFile.spec_in(EditFormat::String),
            ToolName::EditFile.spec()
        );
        assert_eq!(
            ToolName::Grep.spec_in(EditFormat::Lines),
            ToolName::Grep.spec()
        );
        // The whole-file format changes write_file's description only.
        let whole = ToolName::WriteFile.spec_in(EditFormat::Whole);
        assert_eq!(whole.parameters, ToolName::WriteFile.spec().parameters);
        assert!(whole.description.contains("whole new text"));
        assert_eq!("LINES".parse(), Ok(EditFormat::Lines));
        assert_eq!("whole".parse(), Ok(EditFormat::Whole));
        assert_eq!("blocks".parse(), Ok(EditFormat::Blocks));
        assert!(!EditFormat::Blocks.offers_edit_file() && EditFormat::Quoted.offers_edit_file());
        assert!("diff".parse::<EditFormat>().is_err());
    }

    #[test]
    fn catalog_bytes_stay_small() {
        let bytes: usize = ToolName::ALL
            .iter()
            .map(|t| {
                serde_json::to_string(&t.spec())
                    .map(|s| s.len())
                    .unwrap_or(0)
            })
            .sum();
        // The whole catalog must stay a small fraction of the peers' 30-50 KB
        // requests. (6,000 until the `skill` tool, which every mode offers,
        // added its ~200 bytes; 6,250 until background commands: bash's
        // `background` (~100 bytes, every Agent request) and `bash_output`
        // and `bash_kill` (~500, offered once a command runs in the
        // background); 6,900 until `web_fetch` (~400, offered where the
        // network policy lets it reach something), `web_search` (~250,
        // offered when a search API is configured) and `task` (~500,
        // offered to hosted models in every mode); 8,050 until the `skill`
        // tool's `file` (~90 bytes: how the model reads the files of a
        // skill in the user's folder, outside the workspace).)
        assert!(bytes < 8150, "catalog is {bytes} bytes");
    }
}
