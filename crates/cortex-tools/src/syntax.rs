//! Checking a file the model just wrote still parses.
//!
//! Small models make edits that succeed and break the file (`"debug": true`
//! turned into `"false": true` by replacing `debug`; a Python line left
//! half-indented). A write of a file whose syntax has a checker here
//! reports a parse failure in the tool's result, so the model sees it broke
//! the file while it still has the change in view. All in process, nothing
//! spawned: JSON, TOML and YAML with their serde parsers, source code
//! (Python, Rust, JavaScript, TypeScript, Go, Bash) with a tree-sitter
//! grammar (`crate::check`). Python's check is the compiler's, not only the
//! parser's: `ast.parse` accepts a `return` left outside its function by an
//! insertion at the wrong indentation, which `python3` then refuses to run.

use crate::check::{self, Lang};
use std::path::Path;
use tree_sitter::Tree;

/// The languages checked, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Json,
    Toml,
    Yaml,
    Code(Lang),
}

impl Syntax {
    fn of(path: &Path) -> Option<Syntax> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "json" => Syntax::Json,
            "toml" => Syntax::Toml,
            "yaml" | "yml" => Syntax::Yaml,
            _ => Syntax::Code(Lang::of(path)?),
        })
    }

    fn name(self) -> &'static str {
        match self {
            Syntax::Json => "JSON",
            Syntax::Toml => "TOML",
            Syntax::Yaml => "YAML",
            Syntax::Code(lang) => lang.name(),
        }
    }

    /// The parser's complaint, `None` when `text` parses (or cannot be
    /// checked here: too large, or a parse that did not finish in time).
    fn problem(self, text: &str) -> Option<String> {
        match self {
            Syntax::Json => serde_json::from_str::<serde::de::IgnoredAny>(text)
                .err()
                .map(|e| e.to_string()),
            Syntax::Toml => toml::from_str::<toml::Table>(text)
                .err()
                .map(|e| e.message().to_owned() + &toml_line(text, e.span())),
            Syntax::Yaml => yaml_rust2::YamlLoader::load_from_str(text)
                .err()
                .map(|e| e.to_string()),
            Syntax::Code(lang) => check::text_problem(lang, text),
        }
    }
}

/// For a JSON, TOML or YAML file (never source code, whose grammars only
/// approximate the language): the format's name and the parser's
/// complaint when `text` does not parse; `None` when it parses or is of
/// another kind. The core checks a write with it before it runs.
pub fn data_problem(path: &str, text: &str) -> Option<(&'static str, String)> {
    let syntax = Syntax::of(Path::new(path))?;
    if matches!(syntax, Syntax::Code(_)) {
        return None;
    }
    Some((syntax.name(), syntax.problem(text)?))
}

/// What a write's result says when its JSON content was completed with the
/// opening brace it left out.
pub(crate) const BRACE_ADDED: &str =
    "Note: your content began without the JSON object's opening `{`; it was added.";

/// The content of a JSON file written without its opening `{`, completed:
/// `content` does not parse and `{` before it makes it parse as an object.
/// `None` for every other file or content. The 1.5B, writing package.json
/// as a JSON string inside its call, left out the `{` each time while its
/// answer text showed the file whole.
pub fn json_object_completed(path: &str, content: &str) -> Option<String> {
    if Syntax::of(Path::new(path))? != Syntax::Json
        || content.trim_start().starts_with(['{', '['])
        || Syntax::Json.problem(content).is_none()
    {
        return None;
    }
    let completed = format!("{{\n{content}");
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&completed)
        .is_ok()
        .then_some(completed)
}

/// How a write's result starts the note that the file still does not parse
/// (and did not before the change either).
pub const STILL_BROKEN: &str = "Note: the file does not parse";

/// How the note of [`STILL_BROKEN`] ends (the core says instead that the
/// turn broke the file, when it did).
pub const NOT_BEFORE_EITHER: &str = "; it did not before this change either.";

/// How a write or edit's result starts the warning that the change left a
/// file that no longer parses (the core's answer checks look for it).
pub const BROKE_THE_FILE: &str = "Warning: this change broke the file";

/// [`after_write_parsed`], parsing `new` itself.
#[cfg(test)]
pub(crate) fn after_write(path: &Path, old: Option<&str>, new: &str) -> Option<String> {
    let tree = Lang::of(path).and_then(|lang| check::recent::tree_of(lang, new));
    after_write_parsed(path, old, new, tree.as_ref())
}

/// What to add to a write's summary when `path` no longer parses: a
/// sentence for the model, or `None` when it parses, is of no checked kind,
/// or was already broken before (`old`, when the file existed). `tree` is
/// `new` parsed, for source code (`None`: it could not be, and nothing is
/// said).
pub(crate) fn after_write_parsed(
    path: &Path,
    old: Option<&str>,
    new: &str,
    tree: Option<&Tree>,
) -> Option<String> {
    let syntax = Syntax::of(path)?;
    let problem = match syntax {
        Syntax::Code(lang) => check::problem(lang, new.as_bytes(), tree?),
        data => data.problem(new),
    }?;
    if old.is_some_and(|old| syntax.problem(old).is_some()) {
        return Some(format!(
            "{STILL_BROKEN} as {} ({problem}){NOT_BEFORE_EITHER}",
            syntax.name()
        ));
    }
    Some(format!(
        "{BROKE_THE_FILE}: it no longer parses as {} ({problem}). Fix it before going on.",
        syntax.name()
    ))
}

/// ` at line N` for a TOML error's byte span.
fn toml_line(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    span.and_then(|s| text.get(..s.start))
        .map(|before| format!(" at line {}", before.lines().count().max(1)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_object_without_its_opening_brace_is_completed() {
        let body = "  \"name\": \"web\",\n  \"scripts\": {\"test\": \"jest\"}\n}\n";
        assert_eq!(
            json_object_completed("package.json", body).as_deref(),
            Some(format!("{{\n{body}").as_str())
        );
        // Whole, broken otherwise, or not JSON: left as written.
        assert_eq!(json_object_completed("package.json", "{\"a\": 1}"), None);
        assert_eq!(json_object_completed("package.json", "\"a\": [1,\n}"), None);
        assert_eq!(json_object_completed("package.json", "\"a\": 1"), None);
        assert_eq!(json_object_completed("notes.txt", body), None);
        assert_eq!(json_object_completed("list.json", "[1, 2"), None);
    }

    #[test]
    fn a_broken_json_setting_is_reported_with_where() {
        let old = "{\n  \"debug\": true,\n  \"port\": 8080\n}\n";
        let new = "{\n  \"debug\": true\n  \"port\": 8080\n}\n";
        let note = after_write(Path::new("config.json"), Some(old), new).expect("broken");
        assert!(note.contains("no longer parses as JSON"), "{note}");
        assert!(note.contains("line 3"), "{note}");
        assert_eq!(after_write(Path::new("config.json"), Some(old), old), None);
    }

    #[test]
    fn toml_and_yaml_are_checked() {
        let note =
            after_write(Path::new("Cargo.toml"), None, "[package]\nname = \n").expect("toml");
        assert!(note.contains("TOML") && note.contains("line 2"), "{note}");
        assert_eq!(after_write(Path::new("a.toml"), None, "a = 1\n"), None);
        let note = after_write(Path::new("ci.yml"), None, "a: [1, 2\nb: 3\n").expect("yaml");
        assert!(note.contains("YAML"), "{note}");
        assert_eq!(
            after_write(Path::new("ci.yaml"), None, "a: 1\nb: [2]\n"),
            None
        );
    }

    #[test]
    fn a_file_broken_before_is_said_to_be_so() {
        let note = after_write(Path::new("x.json"), Some("{"), "{ \"a\": ").expect("broken");
        assert!(note.contains("did not before"), "{note}");
    }

    #[test]
    fn the_edit_that_breaks_a_setting_says_so_in_its_result() {
        use cortex_protocol::{EditFileArgs, WriteFileArgs};
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("settings.json"), "{\"debug\": true}\n").expect("write");
        let ws = crate::Workspace::new(dir.path()).expect("workspace");
        let edited = ws
            .edit_file(&EditFileArgs {
                path: "settings.json".into(),
                old_string: "debug".into(),
                new_string: "\"debug\": false".into(),
                replace_all: None,
            })
            .expect("the edit itself succeeds");
        assert!(
            edited.summary.starts_with("Edited settings.json"),
            "{}",
            edited.summary
        );
        assert!(
            edited.summary.contains("no longer parses as JSON"),
            "{}",
            edited.summary
        );
        let written = ws
            .write_file(&WriteFileArgs {
                path: "settings.json".into(),
                content: "{\"debug\": false}\n".into(),
            })
            .expect("write");
        assert!(!written.summary.contains("parse"), "{}", written.summary);
    }

    #[test]
    fn other_files_are_not_checked() {
        assert_eq!(after_write(Path::new("notes.txt"), None, "{"), None);
        assert_eq!(after_write(Path::new("Makefile"), None, "{"), None);
    }

    #[test]
    fn python_is_checked_as_its_compiler_would() {
        let good = "def greet():\n    return 'hi'\n";
        assert_eq!(after_write(Path::new("app.py"), Some(good), good), None);
        let bad = "def greet():\n    return 'hi'\n  x = 1\n";
        let note = after_write(Path::new("app.py"), Some(good), bad).expect("broken");
        assert!(note.contains("Python") && note.contains("line 3"), "{note}");
        // What the parser accepts and the compiler does not: an insertion
        // that left the function's `return` at the top level.
        let split = "def config_path(name):\n    import os\nreturn os.path.join('/etc', name)\n";
        let note = after_write(Path::new("paths.py"), Some(good), split).expect("broken");
        assert!(
            note.contains("'return' outside function") && note.contains("line 3"),
            "{note}"
        );
        // Parsing runs nothing the file says.
        let dir = tempfile::tempdir().expect("tempdir");
        let marker = dir.path().join("ran");
        let code = format!("open({:?}, 'w')\n", marker.display().to_string());
        assert_eq!(after_write(Path::new("evil.py"), None, &code), None);
        assert!(!marker.exists());
    }
}
