//! The checks after a write, through the tools themselves: what
//! `edit_file` and `write_file` add to their result when the change
//! breaks a file, or leaves a Python name bound nowhere. In process: no
//! `python3` is needed or spawned (the tests run the same without one).

mod common;

use common::Fixture;
use cortex_protocol::{EditFileArgs, WriteFileArgs};
use cortex_tools::{BROKE_THE_FILE, STILL_BROKEN, WONT_RUN};

fn edit(f: &Fixture, path: &str, old: &str, new: &str) -> String {
    f.ws.edit_file(&EditFileArgs {
        path: path.to_owned(),
        old_string: old.to_owned(),
        new_string: new.to_owned(),
        replace_all: None,
    })
    .expect("the edit itself succeeds")
    .summary
}

fn write(f: &Fixture, path: &str, content: &str) -> String {
    f.ws.write_file(&WriteFileArgs {
        path: path.to_owned(),
        content: content.to_owned(),
    })
    .expect("the write itself succeeds")
    .summary
}

const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";

#[test]
fn a_python_edit_that_breaks_the_indentation_is_said_to_break_the_file() {
    let f = Fixture::new();
    f.write("calc.py", CALC);
    // An insertion at four spaces, the line after it left at two.
    let said = edit(
        &f,
        "calc.py",
        "    return a - b",
        "    x = 1\n  return a - b",
    );
    assert!(
        said.starts_with("Edited calc.py") && said.contains(BROKE_THE_FILE),
        "{said}"
    );
    assert!(
        said.contains(
            "as Python (unindent does not match any outer indentation level at line 7, column 3)"
        ),
        "{said}"
    );
    // Broken again by the next change: said to be still so.
    let again = edit(&f, "calc.py", "x = 1", "x = 2");
    assert!(again.contains(STILL_BROKEN), "{again}");
}

#[test]
fn a_return_left_outside_its_function_is_refused_as_python_would() {
    let f = Fixture::new();
    f.write(
        "paths.py",
        "import os\n\n\ndef config_path(name):\n    return name\n",
    );
    let said = edit(
        &f,
        "paths.py",
        "    return name\n",
        "    name = name.strip()\nreturn os.path.join('/etc', name)\n",
    );
    assert!(
        said.contains(BROKE_THE_FILE)
            && said.contains("'return' outside function at line 6, column 1"),
        "{said}"
    );
}

#[test]
fn a_name_the_change_left_unbound_is_said_with_its_import() {
    let f = Fixture::new();
    f.write(
        "text/slug.py",
        "def slugify(text):\n    return text.lower()\n",
    );
    f.write(
        "test_slug.py",
        "from text.slug import slugify\n\nassert slugify('A') == 'a'\n",
    );
    let said = edit(
        &f,
        "test_slug.py",
        "assert slugify('A') == 'a'",
        "assert slugify('A') == 'a'\nassert os.sep and MAX_LEN",
    );
    assert!(
        said.contains(&format!(
            "{WONT_RUN} uses `os`, `MAX_LEN` without importing"
        )),
        "{said}"
    );
    assert!(said.contains("Add `import os` at its top"), "{said}");
    // A file that does not run without the name, written whole.
    let said = write(&f, "test_new.py", "assert slugify('A B') == 'a b'\n");
    assert!(said.contains("`from text.slug import slugify`"), "{said}");
    // Imported: nothing said.
    let said = write(
        &f,
        "test_new.py",
        "from text.slug import slugify\nprint(slugify('x'))\n",
    );
    assert!(!said.contains('\n'), "{said}");
}

#[test]
fn a_rust_edit_that_breaks_the_file_is_said_with_its_place() {
    let f = Fixture::new();
    f.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn one() -> i32 {\n    1\n}\n",
    );
    let said = edit(&f, "src/lib.rs", "    a + b\n}", "    a + b\n");
    assert!(
        said.contains(BROKE_THE_FILE) && said.contains("as Rust"),
        "{said}"
    );
    let fixed = edit(&f, "src/lib.rs", "    a + b\n", "    a + b\n}");
    assert!(!fixed.contains('\n'), "{fixed}");
}

#[test]
fn each_source_language_is_checked_after_a_write() {
    let f = Fixture::new();
    for (path, broken, clean) in [
        ("web/app.js", "const f = () => {\n", "const f = () => 1;\n"),
        ("web/app.ts", "let n: number = ;\n", "let n: number = 1;\n"),
        (
            "web/view.tsx",
            "const v = <p>{1}</p;\n",
            "const v = <p>{1}</p>;\n",
        ),
        (
            "cmd/main.go",
            "package main\nfunc main() {\n",
            "package main\n\nfunc main() {}\n",
        ),
        (
            "run.sh",
            "if true; then\n  echo hi\n",
            "if true; then\n  echo hi\nfi\n",
        ),
    ] {
        let said = write(&f, path, broken);
        assert!(said.contains(BROKE_THE_FILE), "{path}: {said}");
        let said = write(&f, path, clean);
        assert!(!said.contains('\n'), "{path}: {said}");
    }
}
