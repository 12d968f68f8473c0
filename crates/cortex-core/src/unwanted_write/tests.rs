//! The refusals' texts, from the task's words and the edit.

use super::{
    elsewhere_named, import_again, misplaced_insertion, producer_of, replacement_and_more,
    replacements, unnamed_definition,
};
use cortex_protocol::{EditFileArgs, ToolArgs, ToolName, WriteFileArgs};

fn edit(old: &str, new: &str) -> EditFileArgs {
    EditFileArgs {
        path: "README.md".into(),
        old_string: old.into(),
        new_string: new.into(),
        replace_all: None,
    }
}

#[test]
fn an_import_the_file_has_is_not_inserted_again() {
    let file = "import os\n\ndef config_path(name):\n    return os.path.join('/etc', name)\n";
    let again = edit(
        "def config_path(name):",
        "import os\n\ndef config_path(name):",
    );
    assert_eq!(import_again(file, &again), Some(("import os".into(), 1)));
    // With a line the file does not have, it is another change.
    let more = edit(
        "def config_path(name):",
        "import os\nimport sys\n\ndef config_path(name):",
    );
    assert_eq!(import_again(file, &more), None);
    let first = edit(
        "def config_path(name):",
        "import sys\n\ndef config_path(name):",
    );
    assert_eq!(import_again(file, &first), None);
    // A line the file has, but no import: not this refusal's.
    let body = edit("def config_path(name):", "def config_path(name):\n\n");
    assert_eq!(import_again(file, &body), None);
}

#[test]
fn an_insertion_on_the_wrong_side_of_the_anchor_is_named() {
    let prompt = "Add a section '## Usage' to README.md, after Install, that says: run it.";
    let quote = "## Install\n\npip install tool";
    let before = edit(quote, &format!("## Usage\n\nrun it\n{quote}"));
    let said = misplaced_insertion(prompt, &before).expect("before Install");
    assert!(
        said.contains("puts its new text before `## Install`")
            && said.contains("the task says after Install"),
        "{said}"
    );
    // The call to make instead, with the new text after the quote.
    assert_eq!(
        said.handed.as_ref().map(|(tool, _)| *tool),
        Some(ToolName::EditFile)
    );
    let call = said.split_once("arguments: ").expect("a call").1;
    let call: serde_json::Value = serde_json::from_str(call).expect("JSON");
    assert_eq!(call["old_string"], quote);
    assert_eq!(
        call["new_string"],
        "## Install\n\npip install tool\n\n## Usage\n\nrun it"
    );
    let after = edit(quote, &format!("{quote}\n\n## Usage\n\nrun it"));
    assert_eq!(misplaced_insertion(prompt, &after), None);
    // A task that places nothing, or by a word the quote lacks: nothing.
    assert_eq!(misplaced_insertion("Add a Usage section.", &before), None);
    let elsewhere = edit("# tool", "## Usage\n\nrun it\n# tool");
    assert_eq!(misplaced_insertion(prompt, &elsewhere), None);
    // "before" asks the other side.
    let prompt = "Insert a line before the return in calc.py.";
    let line = edit("    return a", "    return a\n    print(a)");
    let said = misplaced_insertion(prompt, &line).expect("after the return");
    assert!(said.contains("after `    return a`"), "{said}");
    assert!(
        said.contains(r#""new_string":"    print(a)\n    return a""#),
        "{said}"
    );
}

#[test]
fn an_edit_of_a_definition_the_task_does_not_name_is_named() {
    let file = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
    let prompt = "Fix the add function in calc.py.";
    let mul = EditFileArgs {
        path: "calc.py".into(),
        old_string: "def mul(a, b):\n    return a * b".into(),
        new_string: "def mul(a, b):\n    return math.sqrt(a * b)".into(),
        replace_all: None,
    };
    assert_eq!(
        unnamed_definition(prompt, "calc.py", file, &mul),
        Some(("`mul`".into(), "`add`".into()))
    );
    // The named function, a prompt naming none, an edit that quotes the
    // name (a call site of a rename) and one at the top level: nothing.
    let add = EditFileArgs {
        old_string: "    return a - b".into(),
        new_string: "    return a + b".into(),
        ..mul.clone()
    };
    assert_eq!(unnamed_definition(prompt, "calc.py", file, &add), None);
    assert_eq!(
        unnamed_definition("Fix calc.py.", "calc.py", file, &mul),
        None
    );
    let call = EditFileArgs {
        new_string: "def mul(a, b):\n    return add(a, b) * 0 + a * b".into(),
        ..mul.clone()
    };
    assert_eq!(unnamed_definition(prompt, "calc.py", file, &call), None);
    let import = EditFileArgs {
        old_string: "def add(a, b):".into(),
        new_string: "import math\n\ndef add(a, b):".into(),
        ..mul
    };
    assert_eq!(unnamed_definition(prompt, "calc.py", file, &import), None);
}

#[test]
fn replacements_are_read_from_the_usual_phrasings() {
    assert_eq!(
        replacements("There is a typo in cli.py: --verbse should be --verbose. Fix it."),
        [("--verbse".to_owned(), "--verbose".to_owned())]
    );
    assert_eq!(
        replacements("build.sh should write the word ok (not done) into out/stamp."),
        [("done".to_owned(), "ok".to_owned())]
    );
    assert_eq!(
        replacements("Change the timeout from 30 to 45 in both files."),
        [("30".to_owned(), "45".to_owned())]
    );
    assert_eq!(
        replacements("Replace `print` with `log` in app.py."),
        [("print".to_owned(), "log".to_owned())]
    );
    // Plain words: no stated replacement.
    assert!(replacements("The heading should be bold. Move it from top to bottom.").is_empty());
}

#[test]
fn an_edit_that_loses_text_besides_the_replacement_gets_the_edit_alone() {
    let prompt = "There is a typo in the usage message in cli.py: --verbse should be --verbose.";
    let dropped = EditFileArgs {
        path: "cli.py".into(),
        old_string: "    return 'Usage: tool [--verbse] FILE'".into(),
        new_string: "    return 'Usage: tool --verbose FILE'".into(),
        replace_all: None,
    };
    let said = replacement_and_more(prompt, &dropped).expect("brackets dropped");
    let call = said.split_once("arguments: ").expect("a call").1;
    let call: serde_json::Value = serde_json::from_str(call).expect("JSON");
    assert_eq!(
        call["new_string"],
        "    return 'Usage: tool [--verbose] FILE'"
    );
    // The replacement alone, or with more added: made.
    let alone = EditFileArgs {
        new_string: "    return 'Usage: tool [--verbose] FILE'".into(),
        ..dropped.clone()
    };
    assert_eq!(replacement_and_more(prompt, &alone), None);
    let more = EditFileArgs {
        new_string: "    return 'Usage: tool [--verbose] FILE'  # fixed".into(),
        ..dropped
    };
    assert_eq!(replacement_and_more(prompt, &more), None);
}

#[test]
fn a_new_file_in_another_folder_than_the_task_names_is_named() {
    let prompt = "Add test_divide.py with asserts that safe_div(6, 3) == 2, then run it.";
    let write = |path: &str| {
        ToolArgs::WriteFile(WriteFileArgs {
            path: path.into(),
            content: "assert True\n".into(),
        })
    };
    let said = elsewhere_named(prompt, &write("tests/test_divide.py")).expect("elsewhere");
    assert!(
        said.starts_with(
            "not made: the task names test_divide.py, and this call would create \
             tests/test_divide.py."
        ),
        "{said}"
    );
    // The write of the named file, handed over as a call.
    assert_eq!(
        said.handed.as_ref().map(|(tool, _)| *tool),
        Some(ToolName::WriteFile)
    );
    let call = said.split_once("arguments: ").expect("a call").1;
    let call: serde_json::Value = serde_json::from_str(call).expect("JSON");
    assert_eq!(call["path"], "test_divide.py");
    assert_eq!(call["content"], "assert True\n");
    // The same call, kept as a value for the next request.
    assert_eq!(said.handed, Some((ToolName::WriteFile, call)));
    assert_eq!(elsewhere_named(prompt, &write("test_divide.py")), None);
    assert_eq!(elsewhere_named(prompt, &write("./test_divide.py")), None);
    assert_eq!(elsewhere_named(prompt, &write("tests/test_other.py")), None);
    let said = elsewhere_named("Create src/app/hello.txt.", &write("hello.txt"));
    assert!(said.is_some_and(|s| s.contains("\"path\":\"src/app/hello.txt\"")));
    // Refusals without a call hand over nothing.
    let edit_there = ToolArgs::EditFile(EditFileArgs {
        path: "tests/test_divide.py".into(),
        ..edit("a", "b")
    });
    let said = elsewhere_named("Add test_divide.py.", &edit_there);
    assert_eq!(said.map(|s| s.handed), Some(None));
}

#[test]
fn a_file_the_task_says_a_script_writes_has_that_script() {
    let prompt = "build.sh should write the word ok (not done) into out/stamp. Fix it and \
                  run it.";
    assert_eq!(
        producer_of(prompt, "out/stamp"),
        Some("build.sh".to_owned())
    );
    assert_eq!(
        producer_of(prompt, "./out/stamp"),
        Some("build.sh".to_owned())
    );
    assert_eq!(producer_of(prompt, "build.sh"), None);
    assert_eq!(
        producer_of("gen.py creates `dist/index.html`.", "dist/index.html"),
        Some("gen.py".to_owned())
    );
    // No file before the verb, the file not its subject, or the verb in
    // another sentence: none.
    assert_eq!(producer_of("Write hello.txt with hi.", "hello.txt"), None);
    assert_eq!(
        producer_of("Fix calc.py and write test_calc.py.", "test_calc.py"),
        None
    );
    assert_eq!(
        producer_of(
            "Fix build.sh. Then write the word ok into out/stamp.",
            "out/stamp"
        ),
        None
    );
}
