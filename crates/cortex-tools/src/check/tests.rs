//! Tests of the in-process checks: each grammar on a clean and a broken
//! file, each compiler rule of Python, the names a Python file binds, and
//! input meant to make a parser crash or hang.

use super::names::scan;
use super::*;

/// What the check says of `text` as the language of `file`.
fn said(file: &str, text: &str) -> Option<String> {
    let lang = Lang::of(Path::new(file)).expect("a checked language");
    text_problem(lang, text)
}

/// The names `text` (Python) loads and binds nowhere.
fn unbound(text: &str) -> Vec<String> {
    let tree = parse(Lang::Python, text.as_bytes()).expect("parsed");
    scan(&tree, text.as_bytes())
        .unbound
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn a_clean_file_of_each_language_has_nothing_said() {
    let clean = [
        (
            "app.py",
            "import os\n\n\nasync def main(*args, key=None, **kw):\n    async with lock:\n        \
             await run()\n    return [x async for x in feed()]\n\n\nclass A:\n    def f(self, /, a, \
             b=1, *, c, d=2):\n        for i in range(3):\n            if i:\n                \
             continue\n            break\n        else:\n            pass\n        yield a\n\n\n\
             match command:\n    case [x, *rest] if x:\n        print(x, rest)\n",
        ),
        (
            "lib.rs",
            "use std::fmt;\n\n/// A point.\npub struct P<T> { x: T }\n\nimpl<T: fmt::Debug> P<T> {\n    \
             pub fn show(&self) -> String {\n        if let Some(v) = Some(&self.x) && true {\n            \
             format!(\"{v:?}\")\n        } else {\n            String::new()\n        }\n    }\n}\n",
        ),
        (
            "app.js",
            "import fs from 'fs';\nexport const read = async (p) => {\n  const t = await \
             fs.promises.readFile(p, 'utf8');\n  return <div>{t}</div>;\n};\n",
        ),
        (
            "app.ts",
            "interface User { name: string; age?: number }\nexport function greet<T extends User>(u: \
             T): string {\n  return `hi ${u.name}`;\n}\nconst x = <User>{ name: 'a' };\n",
        ),
        (
            "view.tsx",
            "export const View = ({ n }: { n: number }) => <p>{n}</p>;\n",
        ),
        (
            "main.go",
            "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfor i := range 3 {\n\t\t\
             fmt.Println(i)\n\t}\n}\n",
        ),
        (
            "run.sh",
            "#!/bin/bash\nset -euo pipefail\nfor f in \"$@\"; do\n  if [[ -f $f ]]; then\n    echo \
             \"${f%.txt}\"\n  fi\ndone\ncase $1 in\n  a) echo a ;;\nesac\n",
        ),
    ];
    for (file, text) in clean {
        assert_eq!(said(file, text), None, "{file}");
    }
}

#[test]
fn a_syntax_error_of_each_language_is_said_with_its_place() {
    let broken = [
        ("app.py", "def f(:\n    pass\n", "line 1"),
        ("lib.rs", "fn main() {\n    let x = ;\n}\n", "line 2"),
        ("app.js", "function f() {\n  return 1 +;\n}\n", "line 2"),
        ("app.ts", "let x: number = ;\nfunction (\n", "line 1"),
        (
            "main.go",
            "package main\n\nfunc main() {\n\tx := \n}\n",
            "line 4",
        ),
        ("run.sh", "if [ -f x ]; then\n  echo hi\n", "line"),
    ];
    for (file, text, place) in broken {
        let note = said(file, text).unwrap_or_else(|| panic!("{file}: nothing said"));
        assert!(
            note.contains(place) && note.contains("column"),
            "{file}: {note}"
        );
    }
    // A missing closer is named.
    let note = said("lib.rs", "fn main() {\n    let v = vec![1, 2;\n}\n").expect("broken");
    assert!(note.contains("line 2"), "{note}");
}

#[test]
fn what_python_compiles_and_its_grammar_allows_is_refused() {
    let refused = [
        (
            "x = 1\nreturn x\n",
            "'return' outside function at line 2, column 1",
        ),
        (
            "def f():\n    class A:\n        return 1\n",
            "'return' outside function",
        ),
        (
            "for i in x:\n    pass\nelse:\n    break\n",
            "'break' outside loop at line 4",
        ),
        (
            "for i in x:\n    def g():\n        continue\n",
            "'continue' not properly in loop at line 3",
        ),
        (
            "class A:\n    x = yield 1\n",
            "'yield' outside function at line 2",
        ),
        ("await x\n", "'await' outside function at line 1"),
        (
            "def f():\n    await x\n",
            "'await' outside async function at line 2",
        ),
        (
            "async def f():\n    g = lambda: await x\n",
            "'await' outside async function",
        ),
        (
            "def f():\n    async for x in y:\n        pass\n",
            "'async for' outside async",
        ),
        (
            "def f(a=1, b):\n    pass\n",
            "parameter without a default follows parameter with a default at line 1, column 12",
        ),
        (
            "f = lambda a=1, b: 0\n",
            "parameter without a default follows",
        ),
        (
            "def f(a, b, a):\n    pass\n",
            "duplicate argument 'a' in function definition",
        ),
        ("def f(a, *a):\n    pass\n", "duplicate argument 'a'"),
        (
            "nonlocal x\n",
            "nonlocal declaration not allowed at module level at line 1",
        ),
        (
            "print \"hello\"\n",
            "Missing parentheses in call to 'print'",
        ),
        (
            "f(a=1, b)\n",
            "positional argument follows keyword argument",
        ),
        ("f(a=1, a=2)\n", "keyword argument repeated: a"),
    ];
    for (text, expected) in refused {
        let note = said("app.py", text).unwrap_or_else(|| panic!("nothing said of {text:?}"));
        assert!(note.contains(expected), "{text:?}: {note}");
    }
    let accepted = [
        "def f():\n    return 1\n",
        "while True:\n    try:\n        break\n    finally:\n        continue\n",
        "def f():\n    def g():\n        nonlocal x\n    x = 1\n",
        "async def f():\n    [await y for y in x]\n    async for a in b:\n        yield a\n",
        "def f(a, b=1, *args, c, d=2, **kw):\n    pass\n",
        "def f(a=1, /, b=2, *, c):\n    pass\n",
        "f(1, *a, b=2, *c, **d)\n",
        "print(\"hello\")\nprint\n",
        "lambda: (yield)\n",
    ];
    for text in accepted {
        assert_eq!(said("app.py", text), None, "{text:?}");
    }
}

#[test]
fn python_layout_the_grammar_lets_through_is_refused() {
    let refused = [
        (
            "def greet():\n    return 1\n  x = 1\n",
            "unindent does not match any outer indentation level at line 3, column 3",
        ),
        (
            "def f():\n    a = 1\n      b = 2\n",
            "unexpected indent at line 3",
        ),
        ("  x = 1\n", "unexpected indent at line 1"),
        (
            "if x:\npass\n",
            "expected an indented block after 'if' statement",
        ),
        (
            "def f():\n    # nothing yet\n",
            "expected an indented block after function definition",
        ),
        (
            "while 1:\n    pass\n  else:\n    pass\n",
            "unindent does not match any outer indentation level at line 3",
        ),
        ("x = 1 +\n2\n", "invalid syntax at line 1"),
        ("x = 0777\n", "leading zeros in decimal integer literals"),
        ("x = 10L\n", "invalid decimal literal"),
        ("if a <> b:\n    pass\n", "invalid syntax"),
        ("raise E, 'x'\n", "invalid syntax"),
        (
            "try:\n    pass\nexcept ValueError, e:\n    pass\n",
            "multiple exception types must be parenthesized",
        ),
        (
            "def f((a, b)):\n    pass\n",
            "Function parameters cannot be parenthesized",
        ),
        (
            "def f(*):\n    pass\n",
            "named arguments must follow bare *",
        ),
        (
            "def f(**k, a):\n    pass\n",
            "arguments cannot follow var-keyword argument",
        ),
        (
            "f(x for x in y, 1)\n",
            "Generator expression must be parenthesized",
        ),
        ("del f()\n", "cannot delete function call"),
        (
            "a, *b, *c = d\n",
            "multiple starred expressions in assignment",
        ),
        (
            "(a, b) += 1\n",
            "'tuple' is an illegal expression for augmented assignment",
        ),
    ];
    for (text, expected) in refused {
        let note = said("app.py", text).unwrap_or_else(|| panic!("nothing said of {text:?}"));
        assert!(note.contains(expected), "{text:?}: {note}");
    }
    let accepted = [
        "x = (1,\n  2)\ny = [\n    3,\n]\nz = 1 + \\\n    2\n",
        "def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n",
        "def f():\n    pass\n# a comment\n  # anywhere\nx = 1\n",
        "if x: a = 1; b = 2\n",
        "from m import (a,\n    b)\ns = '''one\ntwo'''\nprint(f\"{s}\",\n      end='')\n",
        "try:\n    pass\nexcept (A, B) as e:\n    pass\nelse:\n    pass\nfinally:\n    pass\n",
        "print >> sys.stderr, 'x'\nprint (a), b\n",
        "x = 0\ny = 00\nz = 0o777 + 0x1F + 1_000\n",
        "class A:\n    def f(self):\n        pass\n\n    x = 1\n",
        "def outer():\n    x = 1\n    class C:\n        nonlocal x\n",
        "def f(n):\n    return (i for i in range(n) if await g(i))\n",
    ];
    for text in accepted {
        assert_eq!(said("app.py", text), None, "{text:?}");
    }
}

#[test]
fn problems_are_capped_and_ordered_by_place() {
    let text = "return 1\nbreak\ncontinue\nyield 2\nreturn 3\n";
    let note = said("app.py", text).expect("refused");
    assert!(
        note.starts_with("'return' outside function at line 1")
            && note.contains("'break' outside loop at line 2")
            && note.ends_with("; and 2 more"),
        "{note}"
    );
}

#[test]
fn every_way_python_binds_a_name_is_seen() {
    let binds = "\
import os.path, json as j
from a.b import c, d as e
from . import rel
from __future__ import annotations
x = y = 1
p: int
q: int = 2
r += 1
(s, [t, *u]) = v = w = (1, [2, 3])
for k, (l1, l2) in []: pass
lst = [m for m in range(3) if m]
gen = {n: o for n, o in {}.items()}
if (walrus := 3): pass
with open('f') as fh, open('g') as (ga, gb): pass
try:
    pass
except ValueError as err:
    pass
del gone
global gl
def fn(a1, a2: int, a3=1, a4: int = 2, *a5, a6, **a7) -> None:
    nonlocal nl
    return a1, a2, a3, a4, a5, a6, a7, nl, gl, gone
lam = lambda b1, b2=1, *b3, **b4: (b1, b2, b3, b4)
class K:
    attr = 1
async def co(): pass
match cmd:
    case [c1, *c2]: pass
    case {'k': c3, **c4}: pass
    case Point(x=c5, y=0) as c6: pass
    case Color.RED | str(): pass
type Alias = list[int]
def gen_t[T](v: T) -> T: return v
print(os, j, c, e, rel, x, y, p, q, r, s, t, u, v, w, k, l1, l2, lst, gen, walrus, fh, ga, gb,
      err, fn, lam, K, co, c1, c2, c3, c4, c5, c6, Alias, annotations, __file__, __name__, len)
";
    assert_eq!(unbound(binds), ["cmd", "Point", "Color"]);
    // Attribute and keyword names are no names; a subscript target reads.
    let reads = "obj.attr = f(key=1)\nitems[index] = obj.other\nprint(f'{width:>{pad}}')\n";
    assert_eq!(
        unbound(reads),
        ["obj", "f", "items", "index", "width", "pad"]
    );
    // A star import may bind anything: nothing is judged.
    assert_eq!(
        unbound("from m import *\nprint(anything)\n"),
        Vec::<String>::new()
    );
    // What is used and never bound is said in the order of first use.
    assert_eq!(unbound("def f():\n    return b + a + b\n"), ["b", "a"]);
}

#[test]
fn a_standard_module_is_known_as_one() {
    let tree = parse(Lang::Python, b"print(os.sep, slugify)\n").expect("parsed");
    let found = scan(&tree, b"print(os.sep, slugify)\n").unbound;
    assert_eq!(
        found,
        [("os".to_owned(), true), ("slugify".to_owned(), false)]
    );
}

#[test]
fn a_file_of_a_thousand_lines_is_checked_whole() {
    let mut text = String::from("import os\n\n");
    for n in 0..250 {
        text.push_str(&format!(
            "def step_{n}(items):\n    total = sum(x for x in items)\n    return total + {n}\n\n"
        ));
    }
    assert!(text.lines().count() > 1000);
    assert_eq!(said("big.py", &text), None);
    // A problem near the end is found all the same.
    let broken = format!("{text}def last(:\n    pass\n");
    let note = said("big.py", &broken).expect("broken");
    assert!(note.contains("line 1003"), "{note}");
    let unbound_at_end = format!("{text}print(MISSING)\n");
    assert_eq!(unbound(&unbound_at_end), ["MISSING"]);
}

#[test]
fn hostile_input_neither_crashes_nor_hangs() {
    // Nested far deeper than any parser's recursion would survive.
    let deep = format!("x = {}1{}\n", "(".repeat(100_000), ")".repeat(100_000));
    let _ = said("deep.py", &deep);
    let tree = parse(Lang::Python, deep.as_bytes());
    if let Some(tree) = tree {
        let _ = scan(&tree, deep.as_bytes());
    }
    let deep_rs = format!("fn f() {{ {} }}\n", "{".repeat(50_000));
    assert!(said("deep.rs", &deep_rs).is_some());
    // A megabyte of brackets: a parse that gives up in time says nothing.
    let brackets = "[".repeat(1 << 20);
    for file in ["a.py", "a.rs", "a.js", "a.ts", "a.go", "a.sh"] {
        let _ = said(file, &brackets);
    }
    // Over the size limit: not parsed at all.
    let huge = "x = 1\n".repeat(MAX_BYTES / 6 + 1);
    assert_eq!(parse(Lang::Python, huge.as_bytes()).map(|_| ()), None);
    // Bytes that are not UTF-8, NUL and odd characters are read, not trusted.
    let invalid: &[u8] = b"def f(\xff\xfe):\n    return '\x00\xc3'\n";
    let tree = parse(Lang::Python, invalid).expect("parsed");
    let _ = problem(Lang::Python, invalid, &tree);
    let _ = scan(&tree, invalid);
    for file in ["a.rs", "a.js", "a.go", "a.sh"] {
        let lang = Lang::of(Path::new(file)).expect("lang");
        let _ = parse(lang, invalid).map(|tree| problem(lang, invalid, &tree));
    }
}

#[test]
fn names_kept_per_statement_say_what_one_walk_of_the_module_says() {
    let texts = [
        "import os\nprint(os, missing)\n",
        "def f():\n    return b + a + b\nx = f()\n",
        "from m import *\nprint(anything)\n",
        "def test_one(self):\n    assert helper()\n",
        "class TestA:\n    def test_b(self):\n        pass\n",
        "from dataclasses import dataclass\n\n@dataclass\nclass C:\n    a: int = 1\n    b: str\n\n\
         @dataclass\nclass D:\n    x: int = 0\n    y: int\n",
        "with open('f') as fh:\n    data = fh.read()\nprint(data, later)\nlater = 1\n",
        "match cmd:\n    case Point(x=0, y=y):\n        print(y)\n",
        "def outer():\n    nonlocal_name = 1\n    def inner():\n        return nonlocal_name + other\n",
    ];
    for text in texts {
        for prefix in ["", "a = 1\nb = 2\n\n\n"] {
            let text = format!("{prefix}{text}");
            let tree = parse(Lang::Python, text.as_bytes()).expect("parsed");
            let whole = super::names::scan_whole(&tree, text.as_bytes());
            assert_eq!(scan(&tree, text.as_bytes()), whole, "{text:?}");
            // Again, from what was kept.
            assert_eq!(scan(&tree, text.as_bytes()), whole, "{text:?}");
        }
    }
    // The cases above say something: the comparison is not of nothing.
    let tree = parse(Lang::Python, texts[5].as_bytes()).expect("parsed");
    let found = scan(&tree, texts[5].as_bytes());
    assert_eq!(
        found.misordered,
        Some(("C".into(), "b".into(), "a".into())),
        "{found:?}"
    );
}
