//! Definitions a change removed: functions, classes and types that were in a
//! file before a write or edit and are not after it.
//!
//! Small models asked to add a function beside another often replace it
//! (`old_string: "def add(a, b):"`, `new_string: "def sub(a, b):"`): the edit
//! succeeds, the file still parses, and the task's other half is gone
//! (docs/BENCHMARKS.md, "The task set"). Saying so in the tool's result lets
//! the model see it while the change is in view; the harness also reads the
//! same names from a turn's diffs ([`removed_by_diff`]) to check the answer.
//!
//! The same scanner gives a larger workspace's symbol map for small models
//! ([`symbol_map`], Aider's repo map without a parser): the lines grep finds
//! with [`DEFINITION_LINES`], as `path: name, name, …`.
//!
//! Definitions are found per line by a small scanner per language (Python,
//! Rust, JavaScript/TypeScript, Go), not a parser: a name is what follows
//! `def`, `class`, `fn`, `function`, `struct`, `func`… at the start of a
//! line; in Markdown, a heading names its section; in a JSON or TOML file
//! that parses before and after, a top-level key is one. Other languages
//! have none, so nothing is said for them.

use std::collections::BTreeSet;
use std::path::Path;

/// The languages scanned, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Rust,
    Script,
    Go,
    /// A Markdown heading "defines" its section: a whole-file write that
    /// keeps only the new section drops the others.
    Markdown,
}

impl Lang {
    fn of(path: &str) -> Option<Lang> {
        let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "py" => Lang::Python,
            "rs" => Lang::Rust,
            "js" | "mjs" | "cjs" | "ts" | "tsx" | "jsx" => Lang::Script,
            "go" => Lang::Go,
            "md" | "markdown" => Lang::Markdown,
            _ => return None,
        })
    }

    /// Words that may come before the keyword (`pub async fn`, `export
    /// default function`).
    fn modifiers(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &["async"],
            Lang::Rust => &[
                "pub",
                "pub(crate)",
                "pub(super)",
                "async",
                "const",
                "unsafe",
            ],
            Lang::Script => &["export", "default", "async"],
            Lang::Go | Lang::Markdown => &[],
        }
    }

    fn keywords(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &["def", "class"],
            Lang::Rust => &["fn", "struct", "enum", "trait", "mod", "type"],
            Lang::Script => &["function", "function*", "class"],
            Lang::Go => &["func", "type"],
            Lang::Markdown => &[],
        }
    }
}

/// The name a line defines, if it defines one.
fn defined_on(lang: Lang, line: &str) -> Option<String> {
    if lang == Lang::Markdown {
        let title = line
            .strip_prefix('#')?
            .trim_start_matches('#')
            .strip_prefix(' ')?;
        let title = title.trim().trim_end_matches('#').trim();
        return (!title.is_empty()).then(|| title.to_owned());
    }
    let mut words = line.split_whitespace().peekable();
    while words.peek().is_some_and(|w| lang.modifiers().contains(w)) {
        words.next();
    }
    let keyword = words.next()?;
    if !lang.keywords().contains(&keyword) {
        return None;
    }
    let mut rest = words.next()?;
    // A Go method: `func (s *Server) Start()`.
    if lang == Lang::Go && keyword == "func" && rest.starts_with('(') {
        rest = line.split_once(')')?.1.split_whitespace().next()?;
    }
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

fn definitions<'a>(lang: Lang, lines: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    lines.filter_map(|l| defined_on(lang, l)).collect()
}

/// A regular expression (ripgrep's syntax) for the lines that may define
/// something in a scanned language; [`symbol_map`] keeps those that do.
pub const DEFINITION_LINES: &str = r"^\s*((pub(\([a-z]+\))?|export|default|async|const|unsafe)\s+)*(def|class|fn|struct|enum|trait|mod|type|function\*?|func)\s";

/// A compact map of the definitions per file, from grep's content output
/// (`path:line:text`) of [`DEFINITION_LINES`]: one line per file, `path:
/// name, name, …`, files in the order grep gave them, without the files in
/// `skip`, and no longer than `budget` bytes (the files left out are
/// counted on a last line). Empty when nothing is defined.
pub fn symbol_map(grep_output: &str, skip: &[String], budget: usize) -> String {
    let mut files: Vec<(&str, Vec<String>)> = Vec::new();
    for line in grep_output.lines() {
        let Some((path, text)) = split_hit(line) else {
            continue;
        };
        let Some(name) = Lang::of(path).and_then(|lang| defined_on(lang, text)) else {
            continue;
        };
        if skip.iter().any(|s| s == path) {
            continue;
        }
        match files.last_mut() {
            Some((last, names)) if *last == path => {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            _ => files.push((path, vec![name])),
        }
    }
    let mut out = String::new();
    for (i, (path, names)) in files.iter().enumerate() {
        let line = format!("{path}: {}\n", names.join(", "));
        let left = files.len() - i;
        // Room for the closing count whenever a file may be left out.
        if out.len() + line.len() + if left > 1 { 40 } else { 0 } > budget {
            out.push_str(&format!("({left} more files with definitions not shown)\n"));
            break;
        }
        out.push_str(&line);
    }
    out
}

/// A grep content line's path and text: `path:line:text`.
fn split_hit(line: &str) -> Option<(&str, &str)> {
    let mut from = 0;
    while let Some(at) = line[from..].find(':') {
        let colon = from + at;
        let rest = &line[colon + 1..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && rest[digits..].starts_with(':') {
            return Some((&line[..colon], &rest[digits + 1..]));
        }
        from = colon + 1;
    }
    None
}

/// Names defined in `old` and not in `new`, sorted; empty for a language
/// without a scanner.
pub fn removed(path: &str, old: &str, new: &str) -> Vec<String> {
    if let (Some(before), Some(after)) = (top_level_keys(path, old), top_level_keys(path, new)) {
        return before.difference(&after).cloned().collect();
    }
    let Some(lang) = Lang::of(path) else {
        return Vec::new();
    };
    let before = definitions(lang, old.lines());
    let after = definitions(lang, new.lines());
    gone_from(lang, &before, &after)
}

/// The names `text` defines (empty for a language without a scanner, and
/// for Markdown, whose headings name sections, not code).
pub fn defined(path: &str, text: &str) -> BTreeSet<String> {
    match Lang::of(path) {
        Some(lang) if lang != Lang::Markdown => definitions(lang, text.lines()),
        _ => BTreeSet::new(),
    }
}

/// The definitions the bytes `start..end` of `text` lie in or touch,
/// innermost first: each definition line among the range's lines, then,
/// reading up from its first line, each definition line indented less
/// than everything read so far (an indentation reading of nesting, exact
/// for Python, near enough for code indented by its braces). Empty for
/// Markdown and languages without a scanner, and for a range that starts
/// at the top level outside any definition.
pub fn enclosing(path: &str, text: &str, start: usize, end: usize) -> Vec<String> {
    let Some(lang) = Lang::of(path).filter(|l| *l != Lang::Markdown) else {
        return Vec::new();
    };
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut names = Vec::new();
    let mut offset = 0;
    let mut above: Vec<&str> = Vec::new();
    let mut least: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let (from, to) = (offset, offset + line.len());
        offset = to;
        if to <= start {
            above.push(line);
            continue;
        }
        if from >= end.max(start + 1) {
            break;
        }
        if let Some(name) = defined_on(lang, line) {
            names.push(name);
        }
        if !line.trim().is_empty() {
            least = Some(least.map_or(indent(line), |l| l.min(indent(line))));
        }
    }
    let mut least = least.unwrap_or(0);
    for line in above.iter().rev() {
        if least == 0 {
            break;
        }
        if line.trim().is_empty() || indent(line) >= least {
            continue;
        }
        least = indent(line);
        if let Some(name) = defined_on(lang, line) {
            names.push(name);
        }
    }
    names
}

/// The names of `before` not in `after`; in Markdown, a heading whose
/// spelling was fixed (`## Instalation` → `## Installation`: two edits at
/// most, nothing links to a heading's words) is kept, not removed (read as
/// a removal, the note and the answer check asked to put the typo back).
fn gone_from(lang: Lang, before: &BTreeSet<String>, after: &BTreeSet<String>) -> Vec<String> {
    before
        .difference(after)
        .filter(|name| {
            lang != Lang::Markdown
                || !after
                    .iter()
                    .any(|new| !before.contains(new) && edit_distance(name, new) <= 2)
        })
        .cloned()
        .collect()
}

/// Levenshtein distance by characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The top-level keys of a JSON or TOML file whose text parses as a table: a
/// whole-file write that keeps only the new key drops the others. `None` for
/// other files and for text that does not parse (the syntax check speaks for
/// that).
fn top_level_keys(path: &str, text: &str) -> Option<BTreeSet<String>> {
    let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "json" => serde_json::from_str::<serde_json::Value>(text)
            .ok()?
            .as_object()
            .map(|o| o.keys().cloned().collect()),
        "toml" => toml::from_str::<toml::Table>(text)
            .ok()
            .map(|t| t.keys().cloned().collect()),
        _ => None,
    }
}

/// What a change's unified diff (as `edit_file` and `write_file` report it)
/// removes and adds: names on `-` lines not defined on any `+` line, and
/// names on `+` lines. Both empty for a diff cut in the middle, whose
/// missing lines may hold either.
pub fn changed_by_diff(path: &str, diff: &str) -> (Vec<String>, Vec<String>) {
    let Some(lang) = Lang::of(path) else {
        return (Vec::new(), Vec::new());
    };
    if diff.contains("bytes cut from the middle] ...") {
        return (Vec::new(), Vec::new());
    }
    let body = diff
        .lines()
        .filter(|l| !l.starts_with("---") && !l.starts_with("+++"));
    let (minus, plus): (Vec<&str>, Vec<&str>) = body
        .filter(|l| l.starts_with('-') || l.starts_with('+'))
        .partition(|l| l.starts_with('-'));
    let gone = definitions(lang, minus.iter().map(|l| &l[1..]));
    let added = definitions(lang, plus.iter().map(|l| &l[1..]));
    (gone_from(lang, &gone, &added), added.into_iter().collect())
}

/// Names the diff removes (see [`changed_by_diff`]).
pub fn removed_by_diff(path: &str, diff: &str) -> Vec<String> {
    changed_by_diff(path, diff).0
}

/// How a result's note that the change removed definitions starts; the
/// names follow in backticks, up to " from the file".
pub const REMOVED_NOTE: &str = "Note: this change removed the definition of";

/// The names `line`, a result's removal note, says were removed; empty for
/// any other line.
pub fn noted_removals(line: &str) -> Vec<String> {
    let Some(rest) = line.strip_prefix(REMOVED_NOTE) else {
        return Vec::new();
    };
    let names = rest.split(" from the file").next().unwrap_or("");
    names
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The note for a tool result, `None` when nothing was removed.
pub(crate) fn note(path: &str, old: &str, new: &str) -> Option<String> {
    let gone = removed(path, old, new);
    if gone.is_empty() {
        return None;
    }
    let names: Vec<String> = gone.iter().map(|n| format!("`{n}`")).collect();
    Some(format!(
        "{REMOVED_NOTE} {} from the file. If the task did not ask for that (a rename or a \
         removal), put it back beside the new code.",
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_function_is_reported_and_an_added_one_is_not() {
        let old = "def add(a, b):\n    return a + b\n";
        let replaced = "def sub(a, b):\n    return a + b\n";
        let added = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
        assert_eq!(removed("calc.py", old, replaced), ["add"]);
        assert!(removed("calc.py", old, added).is_empty());
        assert!(note("calc.py", old, added).is_none());
        let text = note("calc.py", old, replaced).expect("a note");
        assert!(text.contains("`add`"), "{text}");
        assert_eq!(noted_removals(&text), ["add"]);
        assert!(noted_removals("Edited calc.py (1 replacement)").is_empty());
    }

    #[test]
    fn top_level_keys_of_json_and_toml_count_as_definitions() {
        let package = "{\n  \"name\": \"app\",\n  \"version\": \"1.0.0\",\n  \"scripts\": {}\n}\n";
        let fragment = "{\"scripts\": {\"test\": \"jest\"}}";
        assert_eq!(
            removed("package.json", package, fragment),
            ["name", "version"]
        );
        let added =
            "{\"name\": \"app\", \"version\": \"1.0.0\", \"scripts\": {\"test\": \"jest\"}}";
        assert!(removed("package.json", package, added).is_empty());
        // A fragment that does not parse is the syntax check's to report.
        assert!(removed("package.json", package, "\"scripts\": {}").is_empty());
        let cargo = "[package]\nname = \"a\"\n\n[dependencies]\nserde = \"1\"\n";
        assert_eq!(
            removed("Cargo.toml", cargo, "[package]\nname = \"a\"\n"),
            ["dependencies"]
        );
    }

    #[test]
    fn each_language_has_its_forms() {
        let rust = "pub fn run() {}\nasync fn go() {}\npub(crate) struct S;\nenum E {}\n";
        assert_eq!(removed("a.rs", rust, ""), ["E", "S", "go", "run"]);
        let js = "export default function main() {}\nclass A {}\nasync function f() {}\n";
        assert_eq!(removed("a.ts", js, ""), ["A", "f", "main"]);
        let go = "func (s *Server) Start() {}\nfunc main() {}\ntype T struct{}\n";
        assert_eq!(removed("a.go", go, ""), ["Start", "T", "main"]);
        let md = "# Tool\n\n## Install\n\npip install tool\n\n#no-heading\n";
        assert_eq!(
            removed("README.md", md, "# Tool\n\n## Usage\n"),
            ["Install"]
        );
        let py = "class C:\n    async def m(self):\n        pass\n";
        assert_eq!(removed("a.py", py, ""), ["C", "m"]);
        // A call or a comment defines nothing; unknown languages say nothing.
        assert!(removed("a.py", "add(1, 2)\n# def x\n", "").is_empty());
        assert!(removed("notes.txt", "def x():\n", "").is_empty());
    }

    #[test]
    fn a_symbol_map_lists_each_files_names_within_its_budget() {
        let hits = "src/a.py:1:class Store:\nsrc/a.py:4:    def get(self, key):\n\
                    src/a.py:9:    def get(self, key, default):\nsrc/b.rs:3:pub(crate) fn run() {\n\
                    src/c.py:2:# def not_this\nsrc/d:e.go:7:func (s *S) Start() {\nshown.py:1:def skip():\n";
        assert_eq!(
            symbol_map(hits, &["shown.py".to_owned()], 1000),
            "src/a.py: Store, get\nsrc/b.rs: run\nsrc/d:e.go: Start\n"
        );
        let cut = symbol_map(hits, &[], 70);
        assert_eq!(
            cut,
            "src/a.py: Store, get\n(3 more files with definitions not shown)\n"
        );
        assert!(symbol_map("notes.txt:1:def x():\n", &[], 1000).is_empty());
    }

    /// The pattern through the grep tool itself, as the harness runs it.
    #[test]
    fn grep_with_the_pattern_finds_every_form() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = [
            (
                "a.py",
                "def f():\n    async def m(self):\n    return define(x)\n",
            ),
            ("b.rs", "pub(crate) fn run() {\n}\nlet fn_ptr = 1;\n"),
            ("c.ts", "export default function main() {\n}\n"),
            ("d.go", "func (s *S) Start() {\n}\ntype T struct{}\n"),
        ];
        for (path, text) in files {
            std::fs::write(dir.path().join(path), text).expect("write");
        }
        let ws = crate::Workspace::new(dir.path()).expect("workspace");
        let out = ws
            .grep(&cortex_protocol::GrepArgs {
                pattern: DEFINITION_LINES.to_owned(),
                path: None,
                glob: None,
                mode: Some(cortex_protocol::GrepMode::Content),
                context: None,
                ignore_case: None,
            })
            .expect("grep");
        assert_eq!(
            symbol_map(&out, &[], 1000),
            "a.py: f, m\nb.rs: run\nc.ts: main\nd.go: Start, T\n",
            "{out}"
        );
    }

    #[test]
    fn a_heading_with_its_spelling_fixed_is_not_removed() {
        let old = "# Todo\n\n## Instalation\n\nRun it.\n";
        let fixed = old.replace("Instalation", "Installation");
        assert!(removed("README.md", old, &fixed).is_empty());
        let diff = "--- a/README.md\n+++ b/README.md\n-## Instalation\n+## Installation\n";
        assert_eq!(
            changed_by_diff("README.md", diff),
            (Vec::new(), vec!["Installation".to_owned()])
        );
        // Another section in its place is a removal; so is a renamed function.
        let usage = old.replace("## Instalation", "## Usage");
        assert_eq!(removed("README.md", old, &usage), ["Instalation"]);
        assert_eq!(removed("a.py", "def ad():\n", "def add():\n"), ["ad"]);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }

    #[test]
    fn a_diff_gives_what_it_removed_and_added() {
        let diff = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n-def add(a, b):\n+def sub(a, b):\n     return a + b\n";
        assert_eq!(
            changed_by_diff("calc.py", diff),
            (vec!["add".to_owned()], vec!["sub".to_owned()])
        );
        // A function moved within the file is not removed.
        let moved = "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n-def a():\n+def b():\n     pass\n-def b():\n+def a():\n";
        assert!(removed_by_diff("m.py", moved).is_empty());
        let cut = format!("{diff}\n... [10 bytes cut from the middle] ...\n");
        assert!(removed_by_diff("calc.py", &cut).is_empty());
    }

    #[test]
    fn the_definitions_a_range_lies_in_are_read_from_indentation() {
        let text = "import math\n\nclass Account:\n    def deposit(self, x):\n        \
                    self.b += x\n\n    def show(self):\n        return self.b\n\n\
                    def mul(a, b):\n    return a * b\n";
        let at = |quote: &str| {
            let start = text.find(quote).expect("quoted");
            enclosing("m.py", text, start, start + quote.len())
        };
        assert_eq!(at("self.b += x"), ["deposit", "Account"]);
        assert_eq!(at("    def show(self):\n"), ["show", "Account"]);
        assert_eq!(at("def mul(a, b):\n    return a * b"), ["mul"]);
        assert_eq!(at("    return a * b"), ["mul"]);
        assert!(at("import math").is_empty());
        assert!(enclosing("README.md", "# t\n\ntext\n", 5, 9).is_empty());
        assert_eq!(
            defined("m.py", text).into_iter().collect::<Vec<_>>(),
            ["Account", "deposit", "mul", "show"]
        );
    }
}
