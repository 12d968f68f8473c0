//! Checking a file the model just wrote still parses.
//!
//! Small models make edits that succeed and break the file (`"debug": true`
//! turned into `"false": true` by replacing `debug`; a Python line left
//! half-indented). A write of a file whose syntax has a cheap checker —
//! JSON, TOML and YAML in process, Python with the guest's `python3`
//! (`compile`, which runs nothing and writes no `__pycache__`) — reports a
//! parse failure in the tool's result, so the model sees it broke the file
//! while it still has the change in view. Python's check is the compiler's,
//! not only the parser's: `ast.parse` accepts a `return` left outside its
//! function by an insertion at the wrong indentation, which `python3` then
//! refuses to run.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long `python3` may take to parse one file.
const PYTHON_TIMEOUT: Duration = Duration::from_secs(5);

/// The languages checked, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Json,
    Toml,
    Yaml,
    Python,
}

impl Syntax {
    fn of(path: &Path) -> Option<Syntax> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "json" => Syntax::Json,
            "toml" => Syntax::Toml,
            "yaml" | "yml" => Syntax::Yaml,
            "py" => Syntax::Python,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Syntax::Json => "JSON",
            Syntax::Toml => "TOML",
            Syntax::Yaml => "YAML",
            Syntax::Python => "Python",
        }
    }

    /// The parser's complaint, `None` when `text` parses (or cannot be
    /// checked here: no `python3`, a parser that did not finish in time).
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
            Syntax::Python => python_problem(text),
        }
    }
}

/// What to add to a write's summary when `path` no longer parses: a
/// sentence for the model, or `None` when it parses, is of no checked kind,
/// or was already broken before (`old`, when the file existed).
/// For a JSON, TOML or YAML file, parsed in process (never Python, whose
/// parser is a program to run): the format's name and the parser's
/// complaint when `text` does not parse; `None` when it parses or is of
/// another kind. The core checks a write with it before it runs.
pub fn data_problem(path: &str, text: &str) -> Option<(&'static str, String)> {
    let syntax = Syntax::of(Path::new(path))?;
    if syntax == Syntax::Python {
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

pub(crate) fn after_write(path: &Path, old: Option<&str>, new: &str) -> Option<String> {
    let syntax = Syntax::of(path)?;
    let problem = syntax.problem(new)?;
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

/// `python3`'s parser on `text`, given on stdin; `None` when it parses or
/// there is no `python3` to ask.
fn python_problem(text: &str) -> Option<String> {
    const PARSE: &str = "import sys\n\
        try:\n    compile(sys.stdin.read(), 'file', 'exec', dont_inherit=True)\n\
        except SyntaxError as e:\n    print(f'{e.msg} at line {e.lineno}'); sys.exit(1)\n";
    let (parsed, out) = run_python(PARSE, text)?;
    let out = out.trim();
    (!parsed && !out.is_empty()).then(|| out.to_owned())
}

/// Runs `script` with the guest's `python3` (isolated: no site, no user
/// paths) and `text` on stdin: whether it exited 0, and what it printed.
/// `None` when there is no `python3` or it did not finish in time.
pub(crate) fn run_python(script: &str, text: &str) -> Option<(bool, String)> {
    let mut child = Command::new("python3")
        .args(["-I", "-S", "-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A script that exits early closes the pipe: its verdict still stands.
        let _ = stdin.write_all(text.as_bytes());
    }
    let deadline = Instant::now() + PYTHON_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    Some((status.success(), out))
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
    fn python_is_parsed_by_python3_when_there_is_one() {
        if Command::new("python3").arg("-V").output().is_err() {
            cortex_testkit::skip_current("python3", "no python3 to compile the file");
            return;
        }
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
