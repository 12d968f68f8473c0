//! A Python file the model wrote that cannot run as written: a name it
//! neither defines nor imports, test functions nothing calls, a dataclass
//! whose field order Python rejects.
//!
//! Small models write a test file that calls the function under test and
//! never imports it (`assert slugify('Hello World') == …` alone in
//! `test_slug.py`), or use `os.path` in a file without `import os`: the
//! write succeeds, the file parses, and the first run fails with a
//! `NameError` the model then reads as a failure of the code under test
//! (docs/BENCHMARKS.md, "The task set"). Said in the write's result, with
//! the import that fixes it when the name is a standard module or a
//! top-level definition of another file of the workspace, the model sees
//! it while the file is in view (`range(MAX_RETRIES)` with the constant
//! defined nowhere). Only names the change made unbound are named.
//!
//! A test file whose `test_…` functions nothing calls tests nothing when
//! run as `python3 test_x.py`; a dataclass field without a default after
//! one with a default fails at import. Both are said the same way, outside
//! a pytest workspace for the first.
//!
//! What is said comes from the file's tree-sitter tree, read in process
//! (`crate::check::names`: nothing is run, no `python3` is needed); a file
//! with `from x import *` is not judged.

use crate::check::names::{Scan, scan};
use crate::check::{self, Lang};
use std::path::Path;
use tree_sitter::Tree;

/// How a write's result starts each warning of this module about what the
/// change did (the core's answer checks look for it).
pub const WONT_RUN: &str = "Warning: this file";

/// How a write's result starts the note that the file still cannot run as
/// written, as before the change.
pub const STILL_WONT_RUN: &str = "Note: this file still";

/// At most this many files are read to find where a name is defined.
const MAX_FILES: usize = 400;

/// At most this many names are named in one note.
const MAX_NAMES: usize = 4;

/// [`note_parsed`], parsing `new` itself.
#[cfg(test)]
pub(crate) fn note(root: &Path, path: &Path, old: Option<&str>, new: &str) -> Option<String> {
    let tree = check::recent::tree_of(Lang::Python, new);
    note_parsed(root, path, old, new, tree.as_ref())
}

/// The note for a write of `path` (under `root`) whose text was `old` (when
/// it existed) and is `new` (parsed as `tree`), or `None`: not Python, not
/// parsed in time, or nothing to say. What this change did starts
/// [`WONT_RUN`]; what was so before it too starts [`STILL_WONT_RUN`] (the
/// model may have made it earlier in the turn: the core's checks keep
/// their verdict on it).
pub(crate) fn note_parsed(
    root: &Path,
    path: &Path,
    old: Option<&str>,
    new: &str,
    tree: Option<&Tree>,
) -> Option<String> {
    if path.extension().and_then(|e| e.to_str()) != Some("py") {
        return None;
    }
    let after = scan(tree?, new.as_bytes());
    // The usual case, a file with nothing to say, never parses the old text.
    if after.is_empty() {
        return None;
    }
    let before = match old {
        Some(old) => scan(&check::recent::tree_of(Lang::Python, old)?, old.as_bytes()),
        None => Scan::default(),
    };
    let prefix = |was_so: bool| if was_so { STILL_WONT_RUN } else { WONT_RUN };
    let mut notes = Vec::new();
    let (still, fresh): (Vec<_>, Vec<_>) = after
        .unbound
        .into_iter()
        .partition(|(name, _)| before.unbound.iter().any(|(b, _)| b == name));
    for (names, was_so) in [(fresh, false), (still, true)] {
        notes.extend(unbound_note(prefix(was_so), &names, root, path));
    }
    if let Some((class, field, default)) = after.misordered {
        notes.push(format!(
            "{} has a dataclass, {class}, with the field `{field}` without a default after \
             `{default}`, which has one: importing it fails with TypeError. Put the fields with \
             defaults after those without.",
            prefix(before.misordered.is_some())
        ));
    }
    let mut fixed = new.to_owned();
    let mut mechanical = 0;
    if let Some((name, param)) = &after.method_outside {
        mechanical += 1;
        fixed = fixed
            .replacen(&format!("def {name}({param}, "), &format!("def {name}("), 1)
            .replacen(&format!("def {name}({param})"), &format!("def {name}()"), 1);
    }
    if let Some((name, param)) = after.method_outside {
        notes.push(format!(
            "{} defines {name}({param}) outside a class: calling {name}() fails with TypeError \
             (missing argument `{param}`), and pytest finds no `{param}` to give it. Remove \
             `{param}` from its parameters (it is no method), and call it at the end of the file.",
            prefix(before.method_outside.is_some())
        ));
    }
    // Tests left for pytest to call are fine where pytest runs them.
    if let Some(first) = after.uncalled_tests.first()
        && !uses_pytest(root)
    {
        // A method is called on an instance of its class.
        let call = match first.split_once('.') {
            Some((class, method)) => format!("{class}().{method}()"),
            None => format!("{first}()"),
        };
        notes.push(format!(
            "{} only defines test functions ({}) and calls none: run as `python3 {}` it tests \
             nothing. Call each at the end of the file (`{call}`), or write the asserts at its \
             top level.",
            prefix(!before.uncalled_tests.is_empty()),
            after.uncalled_tests.join(", "),
            path.file_name().and_then(|n| n.to_str()).unwrap_or("FILE"),
        ));
        mechanical += 1;
        fixed = format!("{}\n\n", fixed.trim_end());
        for test in &after.uncalled_tests {
            match test.split_once('.') {
                Some((class, method)) => fixed.push_str(&format!("{class}().{method}()\n")),
                None => fixed.push_str(&format!("{test}()\n")),
            }
        }
    }
    // What these two ask is mechanical: the file with it done, to copy (the
    // 1.5B wrote the same `def test_divide(self):` three times after being
    // told). Only when nothing else is said.
    if mechanical > 0 && notes.len() == mechanical && fixed != new {
        notes.push(format!(
            "The file with that done, as write_file's content:\n{fixed}"
        ));
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// The sentence for `names` used and bound nowhere (each with whether it
/// is a standard module), with the imports that fix them where known.
fn unbound_note(
    prefix: &str,
    names: &[(String, bool)],
    root: &Path,
    path: &Path,
) -> Option<String> {
    let names = &names[..names.len().min(MAX_NAMES)];
    if names.is_empty() {
        return None;
    }
    let mut modules = None;
    let mut fixes = Vec::new();
    for (name, is_module) in names {
        if *is_module {
            fixes.push(format!("`import {name}`"));
        } else {
            let modules = modules.get_or_insert_with(|| python_modules(root, path));
            if let Some((module, _)) = modules.iter().find(|(_, text)| defines(text, name)) {
                fixes.push(format!("`from {module} import {name}`"));
            }
        }
    }
    let fix = if fixes.is_empty() {
        "Nothing in the workspace defines it: define it, or use the name that is defined (a \
         rename must change every use)"
            .to_owned()
    } else {
        format!("Add {} at its top", fixes.join(" and "))
    };
    let shown: Vec<String> = names.iter().map(|(n, _)| format!("`{n}`")).collect();
    Some(format!(
        "{prefix} uses {} without importing or defining {}: running it fails with NameError. \
         {fix}.",
        shown.join(", "),
        if names.len() == 1 { "it" } else { "them" },
    ))
}

/// Whether the workspace runs its tests with pytest (a `conftest.py` or
/// `pytest.ini` at its root, or pytest named in `pyproject.toml`,
/// `setup.cfg` or `tox.ini`).
fn uses_pytest(root: &Path) -> bool {
    ["conftest.py", "pytest.ini"]
        .iter()
        .any(|f| root.join(f).is_file())
        || ["pyproject.toml", "setup.cfg", "tox.ini"].iter().any(|f| {
            std::fs::read_to_string(root.join(f)).is_ok_and(|text| text.contains("pytest"))
        })
}

/// The workspace's other Python files as (module name, text): `a/b.py` is
/// `a.b`. Hidden folders and files that cannot be read are skipped.
fn python_modules(root: &Path, written: &Path) -> Vec<(String, String)> {
    let walk = ignore::WalkBuilder::new(root)
        .follow_links(false)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter(|entry| entry.path() != written)
        .filter(|entry| entry.path().extension().and_then(|e| e.to_str()) == Some("py"))
        .take(MAX_FILES);
    walk.filter_map(|entry| {
        let rel = entry.path().strip_prefix(root).ok()?.with_extension("");
        let parts: Vec<&str> = rel.iter().map(|p| p.to_str()).collect::<Option<_>>()?;
        let module = parts.join(".").trim_end_matches(".__init__").to_owned();
        let text = std::fs::read_to_string(entry.path()).ok()?;
        Some((module, text))
    })
    .collect()
}

/// Whether `text` defines `name` at its top level: `def name`, `class
/// name` or `name = …` at the start of a line.
fn defines(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        let rest = line
            .strip_prefix("def ")
            .or_else(|| line.strip_prefix("async def "))
            .or_else(|| line.strip_prefix("class "))
            .unwrap_or(line);
        rest.strip_prefix(name).is_some_and(|after| {
            let after = after.trim_start();
            if rest.len() == line.len() {
                after.starts_with('=') && !after.starts_with("==") || after.starts_with(':')
            } else {
                after.starts_with('(') || after.starts_with(':')
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_that_never_imports_what_it_tests_is_told_the_import() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("text")).expect("dir");
        std::fs::write(
            dir.path().join("text/slug.py"),
            "import re\n\n\ndef slugify(text):\n    return text.lower()\n",
        )
        .expect("write");
        let test = dir.path().join("test_slug.py");
        let body = "def test_it():\n    assert slugify('A B') == 'a-b'\n    print(os.sep)\n";
        let said = note(dir.path(), &test, None, body).expect("a note");
        assert!(said.contains("`slugify`, `os`"), "{said}");
        assert!(
            said.contains("`from text.slug import slugify` and `import os`"),
            "{said}"
        );
        // Imported, defined, bound as a parameter or loop variable, a
        // builtin: nothing to say.
        let fine = "from text.slug import slugify\nimport os.path\n\n\ndef f(a):\n    \
                    for i in range(a):\n        print(slugify(str(i)), os.path.sep, len([x for x in 'ab']))\n";
        assert_eq!(note(dir.path(), &test, None, fine), None);
        // A name defined nowhere is said to be so; a star import is not judged.
        let nowhere = note(dir.path(), &test, None, "print(MAX_RETRIES)\n").expect("a note");
        assert!(
            nowhere.contains("`MAX_RETRIES` without") && nowhere.contains("define it"),
            "{nowhere}"
        );
        let star = "from text.slug import *\nslugify('x')\n";
        assert_eq!(note(dir.path(), &test, None, star), None);
        assert_eq!(
            note(dir.path(), &dir.path().join("a.txt"), None, body),
            None
        );
        // What was unbound before the change is said to be so still.
        let old = "print(legacy)\n";
        let still = note(dir.path(), &test, Some(old), "print(legacy, 1)\n").expect("a note");
        assert!(
            still.starts_with(STILL_WONT_RUN) && still.contains("`legacy`"),
            "{still}"
        );
        let added = note(dir.path(), &test, Some(old), "print(legacy, os.sep)\n").expect("a note");
        assert!(
            added.starts_with(&format!("{WONT_RUN} uses `os`")),
            "{added}"
        );
        assert!(
            added.contains(&format!("\n{STILL_WONT_RUN} uses `legacy`")),
            "{added}"
        );
    }

    #[test]
    fn tests_never_called_are_said_to_test_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let test = dir.path().join("test_slug.py");
        let pytest_style =
            "from slug import slugify\n\n\ndef test_slugify():\n    assert slugify('A') == 'a'\n";
        let said = note(dir.path(), &test, None, pytest_style).expect("a note");
        assert!(
            said.starts_with(WONT_RUN) && said.contains("(test_slugify)"),
            "{said}"
        );
        assert!(said.contains("`python3 test_slug.py`"), "{said}");
        // A pytest-style class of tests is called by nothing either.
        let class = "from slug import slugify\n\n\nclass TestSlug:\n    def test_slugify(self):\n        \
                     assert slugify('A') == 'a'\n";
        let said = note(dir.path(), &test, None, class).expect("a note");
        assert!(
            said.contains("(TestSlug.test_slugify)")
                && said.contains("`TestSlug().test_slugify()`"),
            "{said}"
        );
        let run = format!("{class}\n\nTestSlug().test_slugify()\n");
        assert_eq!(note(dir.path(), &test, None, &run), None);
        let called = format!("{pytest_style}\n\ntest_slugify()\n");
        assert_eq!(note(dir.path(), &test, None, &called), None);
        let main = format!("{pytest_style}\n\nif __name__ == '__main__':\n    test_slugify()\n");
        assert_eq!(note(dir.path(), &test, None, &main), None);
        // The file had them so before: still said, as such (the import
        // added, the tests still never called).
        let edited = pytest_style.replace("'a'", "'a' and True");
        let still = note(dir.path(), &test, Some(pytest_style), &edited).expect("a note");
        assert!(still.starts_with(STILL_WONT_RUN), "{still}");
        // Where pytest runs the tests: nothing.
        std::fs::write(dir.path().join("conftest.py"), "").expect("write");
        assert_eq!(note(dir.path(), &test, None, pytest_style), None);
    }

    #[test]
    fn a_test_function_taking_self_outside_a_class_is_said_to_fail() {
        let dir = tempfile::tempdir().expect("tempdir");
        let test = dir.path().join("test_divide.py");
        let body = "from divide import safe_div\n\n\ndef test_divide(self):\n    \
                    assert safe_div(6, 3) == 2\n\n\ntest_divide()\n";
        let said = note(dir.path(), &test, None, body).expect("a note");
        assert!(
            said.starts_with(&format!(
                "{WONT_RUN} defines test_divide(self) outside a class"
            )) && said.contains("Remove `self`"),
            "{said}"
        );
        let fixed = body.replace("(self)", "()");
        assert!(
            said.ends_with(&format!("as write_file's content:\n{fixed}")),
            "{said}"
        );
        assert_eq!(note(dir.path(), &test, None, &fixed), None);
        // Uncalled too: the call added at the end.
        let uncalled = "from divide import safe_div\n\ndef test_divide(self):\n    assert 1";
        let said = note(dir.path(), &test, None, uncalled).expect("a note");
        assert!(
            said.ends_with(
                "as write_file's content:\nfrom divide import safe_div\n\ndef test_divide():\n    \
                 assert 1\n\ntest_divide()\n"
            ),
            "{said}"
        );
        // In a class it is a method: nothing to say.
        let in_class = "import unittest\n\n\nclass T(unittest.TestCase):\n    \
                        def test_divide(self):\n        pass\n\n\nunittest.main()\n";
        assert_eq!(note(dir.path(), &test, None, in_class), None);
    }

    #[test]
    fn a_dataclass_field_without_a_default_after_one_with_is_said_to_fail() {
        let dir = tempfile::tempdir().expect("tempdir");
        let models = dir.path().join("models.py");
        let old = "from dataclasses import dataclass\n\n\n@dataclass\nclass User:\n    name: str\n    email: str\n";
        let wrong = old.replace("    name: str", "    age: int = 0\n    name: str");
        let said = note(dir.path(), &models, Some(old), &wrong).expect("a note");
        assert!(
            said.contains("dataclass, User, with the field `name` without a default after `age`"),
            "{said}"
        );
        let right = format!("{old}    age: int = 0\n");
        assert_eq!(note(dir.path(), &models, Some(old), &right), None);
    }

    #[test]
    fn top_level_definitions_are_found_by_their_line() {
        assert!(defines("def slugify(text):\n", "slugify"));
        assert!(defines("class User:\n", "User"));
        assert!(defines("TIMEOUT = 30\n", "TIMEOUT"));
        assert!(defines("limit: int = 3\n", "limit"));
        assert!(!defines("    def slugify(self):\n", "slugify"));
        assert!(!defines("def slugify_all(text):\n", "slugify"));
        assert!(!defines("TIMEOUT == 30\n", "TIMEOUT"));
    }
}
