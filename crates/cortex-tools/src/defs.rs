//! Definitions a change removed: functions, classes and types that were in a
//! file before a write or edit and are not after it.
//!
//! Small models asked to add a function beside another often replace it
//! (`old_string: "def add(a, b):"`, `new_string: "def sub(a, b):"`): the edit
//! succeeds, the file still parses, and the task's other half is gone
//! (docs/BENCHMARKS.md, run C). Saying so in the tool's result lets the
//! model see it while the change is in view; the harness also reads the same
//! names from a turn's diffs ([`removed_by_diff`]) to check the answer.
//!
//! Definitions are found per line by a small scanner per language (Python,
//! Rust, JavaScript/TypeScript, Go), not a parser: a name is what follows
//! `def`, `class`, `fn`, `function`, `struct`, `func`… at the start of a
//! line. Other languages have none, so nothing is said for them.

use std::collections::BTreeSet;
use std::path::Path;

/// The languages scanned, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Rust,
    Script,
    Go,
}

impl Lang {
    fn of(path: &str) -> Option<Lang> {
        let ext = Path::new(path).extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "py" => Lang::Python,
            "rs" => Lang::Rust,
            "js" | "mjs" | "cjs" | "ts" | "tsx" | "jsx" => Lang::Script,
            "go" => Lang::Go,
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
            Lang::Go => &[],
        }
    }

    fn keywords(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &["def", "class"],
            Lang::Rust => &["fn", "struct", "enum", "trait", "mod", "type"],
            Lang::Script => &["function", "function*", "class"],
            Lang::Go => &["func", "type"],
        }
    }
}

/// The name a line defines, if it defines one.
fn defined_on(lang: Lang, line: &str) -> Option<String> {
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

/// Names defined in `old` and not in `new`, sorted; empty for a language
/// without a scanner.
pub fn removed(path: &str, old: &str, new: &str) -> Vec<String> {
    let Some(lang) = Lang::of(path) else {
        return Vec::new();
    };
    let before = definitions(lang, old.lines());
    let after = definitions(lang, new.lines());
    before.difference(&after).cloned().collect()
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
    (
        gone.difference(&added).cloned().collect(),
        added.into_iter().collect(),
    )
}

/// Names the diff removes (see [`changed_by_diff`]).
pub fn removed_by_diff(path: &str, diff: &str) -> Vec<String> {
    changed_by_diff(path, diff).0
}

/// The note for a tool result, `None` when nothing was removed.
pub(crate) fn note(path: &str, old: &str, new: &str) -> Option<String> {
    let gone = removed(path, old, new);
    if gone.is_empty() {
        return None;
    }
    let names: Vec<String> = gone.iter().map(|n| format!("`{n}`")).collect();
    Some(format!(
        "Note: this change removed the definition of {} from the file. If the task did not ask \
         for that (a rename or a removal), put it back beside the new code.",
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
    }

    #[test]
    fn each_language_has_its_forms() {
        let rust = "pub fn run() {}\nasync fn go() {}\npub(crate) struct S;\nenum E {}\n";
        assert_eq!(removed("a.rs", rust, ""), ["E", "S", "go", "run"]);
        let js = "export default function main() {}\nclass A {}\nasync function f() {}\n";
        assert_eq!(removed("a.ts", js, ""), ["A", "f", "main"]);
        let go = "func (s *Server) Start() {}\nfunc main() {}\ntype T struct{}\n";
        assert_eq!(removed("a.go", go, ""), ["Start", "T", "main"]);
        let py = "class C:\n    async def m(self):\n        pass\n";
        assert_eq!(removed("a.py", py, ""), ["C", "m"]);
        // A call or a comment defines nothing; unknown languages say nothing.
        assert!(removed("a.py", "add(1, 2)\n# def x\n", "").is_empty());
        assert!(removed("notes.txt", "def x():\n", "").is_empty());
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
}
