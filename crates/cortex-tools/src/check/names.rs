//! What a Python file would fail on when run, read from its tree: each
//! name it loads and binds nowhere, a dataclass whose field order Python
//! rejects, test functions nothing calls, a test function outside a class
//! that takes `self` (said by `crate::python_lint`).
//!
//! Names are judged as the `ast` script this replaces judged them: a name
//! bound anywhere in the file (assigned, imported, a parameter, a loop or
//! comprehension variable, `as` of `with` and `except`, a walrus, a
//! `match` capture, `del`, `global`/`nonlocal`, a `def` or `class`) counts
//! as bound everywhere. Per-scope rules would catch more (a class
//! attribute read bare in a method) and also say wrong things of code
//! that runs (a name a function reads from a module global set later by
//! another function): a note that is wrong costs the model a turn, one not
//! said costs a run that shows the error. A file with `from x import *`
//! is not judged: it may bind anything.

use super::builtins::{is_builtin, is_stdlib_module};
use super::{children_with_fields, named_children, text_of, walk};
use std::collections::HashSet;
use tree_sitter::{Node, Tree};

/// What [`scan`] finds in a Python file.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Each name loaded and bound nowhere, in order of first use, with
    /// whether it is a standard module.
    pub(crate) unbound: Vec<(String, bool)>,
    /// The test functions of a module whose top level calls nothing
    /// (`Class.method` for a method of a `Test…` class).
    pub(crate) uncalled_tests: Vec<String>,
    /// A dataclass, its first field without a default after one with a
    /// default, and that one.
    pub(crate) misordered: Option<(String, String, String)>,
    /// A test function outside a class whose first parameter is `self` (or
    /// `cls`), and that parameter.
    pub(crate) method_outside: Option<(String, String)>,
}

impl Scan {
    /// Whether there is nothing to say.
    pub(crate) fn is_empty(&self) -> bool {
        self.unbound.is_empty()
            && self.uncalled_tests.is_empty()
            && self.misordered.is_none()
            && self.method_outside.is_none()
    }
}

/// How a node's names are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Read.
    Load,
    /// Bound: assigned, deleted, a parameter, a loop variable.
    Store,
    /// In a `case` pattern: a bare name binds, a dotted one is read.
    Pattern,
}

/// What `tree` (of `text`) says; empty for a file that does not parse or
/// star-imports. The names are read one top-level statement at a time,
/// each statement's kept by its text (`statements.rs`): an edit walks only
/// the statements it changed.
pub(crate) fn scan(tree: &Tree, text: &[u8]) -> Scan {
    let root = tree.root_node();
    if root.has_error() {
        return Scan::default();
    }
    let mut each = Vec::new();
    for statement in named_children(root) {
        let names =
            STATEMENT_NAMES.get(statement, text, (), || StatementNames::of(statement, text));
        if names.star {
            return Scan::default();
        }
        each.push((statement.start_byte(), names));
    }
    let bound: HashSet<&str> = each
        .iter()
        .flat_map(|(_, names)| names.bound.iter().map(String::as_str))
        .collect();
    let loads: Vec<(usize, &str)> = each
        .iter()
        .flat_map(|(at, names)| names.loads.iter().map(move |(o, n)| (at + o, n.as_str())))
        .collect();
    // The first in the file, as `ast.walk` mostly finds it.
    let mut classes: Vec<(usize, &Misordered)> = each
        .iter()
        .flat_map(|(at, names)| names.classes.iter().map(move |(o, m)| (at + o, m)))
        .collect();
    classes.sort_by_key(|(at, _)| *at);
    Scan {
        unbound: unbound(&bound, loads),
        uncalled_tests: uncalled_tests(root, text),
        misordered: classes.into_iter().find_map(|(_, m)| m.clone()),
        method_outside: method_outside(root, text),
    }
}

/// A dataclass's first field without a default after one with a default.
type Misordered = Option<(String, String, String)>;

/// What one top-level statement binds and loads (offsets from its start),
/// whether it star-imports, and what [`misordered`] says of each decorated
/// class in it (by its offset).
#[derive(Debug, Default)]
struct StatementNames {
    bound: Vec<String>,
    loads: Vec<(usize, String)>,
    star: bool,
    classes: Vec<(usize, Misordered)>,
}

static STATEMENT_NAMES: std::sync::LazyLock<super::statements::StatementCache<StatementNames>> =
    std::sync::LazyLock::new(super::statements::StatementCache::new);

impl StatementNames {
    /// The walk of [`Names`] over one statement of a module.
    fn of(statement: Node, text: &[u8]) -> StatementNames {
        let module = Context {
            how: Use::Load,
            kind: "module",
        };
        let start = statement.start_byte();
        let Some(names) = Names::of_from(statement, module, text) else {
            return StatementNames {
                star: true,
                ..StatementNames::default()
            };
        };
        StatementNames {
            bound: names.bound.iter().map(|n| (*n).to_owned()).collect(),
            loads: names
                .loads
                .iter()
                .map(|(at, n)| (at - start, (*n).to_owned()))
                .collect(),
            star: false,
            classes: names
                .classes
                .iter()
                .map(|&(class, decorators)| {
                    (
                        class.start_byte() - start,
                        misordered(class, decorators, text),
                    )
                })
                .collect(),
        }
    }
}

/// Each name loaded and bound nowhere, in order of first use, with
/// whether it is a standard module.
fn unbound(bound: &HashSet<&str>, mut loads: Vec<(usize, &str)>) -> Vec<(String, bool)> {
    loads.sort_unstable();
    let mut seen = HashSet::new();
    loads
        .into_iter()
        .filter(|(_, name)| !bound.contains(name) && !is_builtin(name))
        .filter(|(_, name)| seen.insert(*name))
        .map(|(_, name)| (name.to_owned(), is_stdlib_module(name)))
        .collect()
}

/// [`scan`] with one walk over the whole module, as it was before the
/// statements' names were kept: what the tests compare with.
#[cfg(test)]
pub(crate) fn scan_whole(tree: &Tree, text: &[u8]) -> Scan {
    let root = tree.root_node();
    if root.has_error() {
        return Scan::default();
    }
    let top = Context {
        how: Use::Load,
        kind: "",
    };
    let Some(mut names) = Names::of_from(root, top, text) else {
        return Scan::default();
    };
    names.classes.sort_by_key(|(class, _)| class.start_byte());
    Scan {
        unbound: unbound(&names.bound, names.loads.clone()),
        uncalled_tests: uncalled_tests(root, text),
        misordered: names
            .classes
            .iter()
            .find_map(|&(class, decorators)| misordered(class, decorators, text)),
        method_outside: method_outside(root, text),
    }
}

/// The names of a module: those bound, those loaded (with where), and its
/// decorated classes (for the dataclass rule).
struct Names<'t> {
    bound: HashSet<&'t str>,
    loads: Vec<(usize, &'t str)>,
    classes: Vec<(Node<'t>, Node<'t>)>,
}

/// How a node is used, and its kind (for how its children are).
#[derive(Debug, Clone, Copy)]
struct Context<'t> {
    how: Use,
    kind: &'t str,
}

impl<'t> Names<'t> {
    /// The names under `root`, whose parent is `top`; `None` when it
    /// star-imports.
    fn of_from(root: Node<'t>, top: Context<'t>, text: &'t [u8]) -> Option<Names<'t>> {
        let mut names = Names {
            bound: HashSet::new(),
            loads: Vec::new(),
            classes: Vec::new(),
        };
        let mut star = false;
        // Whether the node before was the `as` of `with f() as x`, `except
        // E as e`, `case [a] as b`: a leaf, so the next node entered is
        // the one after it.
        let mut after_as = false;
        walk(root, top, |node, field, parent| {
            let is_as = !node.is_named() && node.kind() == "as";
            let after = std::mem::replace(&mut after_as, is_as);
            if !node.is_named() || node.is_extra() {
                return None;
            }
            let how = if after || field == Some("alias") {
                Use::Store
            } else {
                use_in(node, field, parent)?
            };
            let kind = node.kind();
            if !names.visit(node, kind, how, parent, text) {
                star = true;
            }
            Some(Context { how, kind })
        });
        (!star).then_some(names)
    }

    /// Records what `node` (of `kind`, used as `how`) binds or loads;
    /// `false` for a star import. Its children are walked after, but for
    /// those read here ([`use_in`] skips them).
    fn visit(
        &mut self,
        node: Node<'t>,
        kind: &str,
        how: Use,
        parent: &Context,
        text: &'t [u8],
    ) -> bool {
        match kind {
            "identifier" => {
                let name = text_of(node, text);
                match how {
                    Use::Load => self.loads.push((node.start_byte(), name)),
                    Use::Store | Use::Pattern => {
                        self.bound.insert(name);
                    }
                }
            }
            "wildcard_import" => return false,
            "global_statement" | "nonlocal_statement" => self.bind_all(node, text),
            // `def f[T]`, `class C[T]`; the `[int]` of `list[int]` is read.
            "type_parameter" if parent.kind != "generic_type" => self.bind_all(node, text),
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                for (child, field) in children_with_fields(node) {
                    match child.kind() {
                        "wildcard_import" => return false,
                        _ if field == Some("name") => self.bind_import(child, text),
                        _ => {}
                    }
                }
            }
            "decorated_definition" => {
                if let Some(class) = node
                    .child_by_field_name("definition")
                    .filter(|d| d.kind() == "class_definition")
                {
                    self.classes.push((class, node));
                }
            }
            "function_definition" | "class_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.bound.insert(text_of(name, text));
                }
            }
            "dotted_name" => {
                // `case x:` binds x; `case Color.RED:` reads Color (and
                // `RED` is no name); `import a.b` is seen by its statement.
                let parts = named_children(node);
                match parts.as_slice() {
                    [one] if how == Use::Pattern => {
                        self.bound.insert(text_of(*one, text));
                    }
                    [first, ..] if first.kind() == "identifier" => {
                        self.loads.push((first.start_byte(), text_of(*first, text)));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        true
    }

    /// Binds what an import's `name` binds: `a` of `import a.b`, `c` of
    /// `import a as c`, `b` of `from a import b`.
    fn bind_import(&mut self, name: Node<'t>, text: &'t [u8]) {
        let bound = match name.kind() {
            "aliased_import" => name.child_by_field_name("alias"),
            _ => named_children(name).into_iter().next(),
        };
        if let Some(bound) = bound {
            self.bound.insert(text_of(bound, text));
        }
    }

    /// Binds every identifier under `node`.
    fn bind_all(&mut self, node: Node<'t>, text: &'t [u8]) {
        let mut stack = vec![node];
        while let Some(node) = stack.pop() {
            if node.kind() == "identifier" {
                self.bound.insert(text_of(node, text));
            }
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }
}

/// How `node`, in field `field` of `parent`, is used; `None` when it is
/// no name and holds none to walk (`b` of `a.b`, `key` of `f(key=1)`) or
/// was read with its parent (an import's names, a `dotted_name`'s parts).
fn use_in(node: Node, field: Option<&str>, parent: &Context) -> Option<Use> {
    let first = || node.prev_named_sibling().is_none();
    Some(match parent.kind {
        // The top of the tree.
        "" => Use::Load,
        "import_statement"
        | "import_from_statement"
        | "future_import_statement"
        | "global_statement"
        | "nonlocal_statement"
        | "dotted_name" => return None,
        "type_parameter" if parent.how != Use::Load => return None,
        // `a.b`: `a` is read, whatever is done to `a.b`; `b` is no name.
        "attribute" if field == Some("object") => Use::Load,
        "attribute" => return None,
        "keyword_argument" if field == Some("value") => Use::Load,
        "keyword_argument" => return None,
        // A parameter binds its name; its default and annotation are read.
        "parameters" | "lambda_parameters" => match node.kind() {
            "default_parameter" | "typed_default_parameter" | "typed_parameter" => Use::Load,
            _ => Use::Store,
        },
        "default_parameter" | "typed_default_parameter" if field == Some("name") => Use::Store,
        "default_parameter" | "typed_default_parameter" => Use::Load,
        "typed_parameter" if node.kind() == "type" => Use::Load,
        "typed_parameter" => Use::Store,
        // `case Point(x=0, y=y):` reads Point; its patterns bind.
        "class_pattern" if first() => Use::Load,
        "class_pattern" => Use::Pattern,
        // `x=` of `Point(x=0)` names an attribute, not a variable.
        "keyword_pattern" if first() => return None,
        "keyword_pattern" => Use::Pattern,
        // `a.B` as a type: `B` is no name.
        "member_type" if first() => parent.how,
        "member_type" => return None,
        kind => child_use(kind, parent.how, |name| field == Some(name)),
    })
}

/// How the child in field `field` of a `parent` used as `how` is used.
fn child_use(parent: &str, how: Use, field: impl Fn(&str) -> bool) -> Use {
    match parent {
        // What is assigned to, looped over, deleted binds.
        "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
            if field("left") { Use::Store } else { Use::Load }
        }
        "named_expression" => {
            if field("name") {
                Use::Store
            } else {
                Use::Load
            }
        }
        "delete_statement" | "as_pattern_target" => Use::Store,
        "type_alias_statement" if field("left") => Use::Store,
        "case_clause" if !field("guard") && !field("consequence") => Use::Pattern,
        "dict_pattern" if field("key") => Use::Load,
        // A target's parts bind (`a, (b, *c) = …`); an index or call in it
        // is read (`a[i] = …` reads a and i).
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "list_splat_pattern"
        | "dictionary_splat_pattern"
        | "parenthesized_expression"
        | "tuple"
        | "list"
        | "expression_list"
        | "list_splat"
        | "type"
        | "case_pattern"
        | "as_pattern"
        | "splat_pattern"
        | "union_pattern"
        | "dict_pattern" => how,
        _ => Use::Load,
    }
}

/// The top-level statements of a module, a decorated definition as the
/// definition.
fn top_level(root: Node) -> Vec<Node> {
    named_children(root)
        .into_iter()
        .map(|node| match node.kind() {
            "decorated_definition" => node.child_by_field_name("definition").unwrap_or(node),
            _ => node,
        })
        .collect()
}

/// The functions of a block (a module's or a class's) whose name starts
/// with `prefix`.
fn functions_named<'t>(block: Node<'t>, text: &[u8], prefix: &str) -> Vec<(Node<'t>, String)> {
    top_level(block)
        .into_iter()
        .filter(|n| n.kind() == "function_definition")
        .filter_map(|f| {
            let name = text_of(f.child_by_field_name("name")?, text);
            name.starts_with(prefix).then(|| (f, name.to_owned()))
        })
        .collect()
}

/// The test functions (and `Test…` classes' test methods, as
/// `Class.method`) of a module whose top level does nothing but define,
/// import and assign: run as a script, it tests nothing.
fn uncalled_tests(root: Node, text: &[u8]) -> Vec<String> {
    let mut tests: Vec<String> = functions_named(root, text, "test")
        .into_iter()
        .map(|(_, name)| name)
        .collect();
    for class in top_level(root)
        .into_iter()
        .filter(|n| n.kind() == "class_definition")
    {
        let name = class.child_by_field_name("name").map(|n| text_of(n, text));
        let (Some(name), Some(body)) = (name, class.child_by_field_name("body")) else {
            continue;
        };
        if name.starts_with("Test") {
            for (_, method) in functions_named(body, text, "test") {
                tests.push(format!("{name}.{method}"));
            }
        }
    }
    let quiet = |node: Node| match node.kind() {
        "import_statement"
        | "import_from_statement"
        | "future_import_statement"
        | "function_definition"
        | "class_definition"
        | "decorated_definition" => true,
        "expression_statement" => matches!(
            named_children(node).as_slice(),
            [only] if only.kind() == "assignment" || is_constant(*only)
        ),
        _ => false,
    };
    if tests.is_empty() || !named_children(root).into_iter().all(quiet) {
        return Vec::new();
    }
    tests
}

/// Whether `node` is a constant (a docstring, a number, `...`): what a
/// module's top level may hold and still call nothing. An f-string is not.
fn is_constant(node: Node) -> bool {
    match node.kind() {
        "integer" | "float" | "true" | "false" | "none" | "ellipsis" => true,
        "string" => named_children(node)
            .iter()
            .all(|c| c.kind() != "interpolation"),
        "concatenated_string" => named_children(node).into_iter().all(is_constant),
        _ => false,
    }
}

/// The first test function outside a class whose first positional
/// parameter is `self` or `cls`, with that parameter.
fn method_outside(root: Node, text: &[u8]) -> Option<(String, String)> {
    functions_named(root, text, "test")
        .into_iter()
        .find_map(|(function, name)| {
            let first = first_parameter(function.child_by_field_name("parameters")?, text)?;
            matches!(first, "self" | "cls").then(|| (name, first.to_owned()))
        })
}

/// The name of the first parameter that may be given by position or
/// keyword (not one before `/`, not `*args` or after it).
fn first_parameter<'t>(parameters: Node, text: &'t [u8]) -> Option<&'t str> {
    let mut first = None;
    for param in named_children(parameters) {
        let name = match param.kind() {
            "identifier" => Some(param),
            "typed_parameter" => named_children(param)
                .into_iter()
                .next()
                .filter(|n| n.kind() == "identifier"),
            "default_parameter" | "typed_default_parameter" => param.child_by_field_name("name"),
            // Those before were positional-only.
            "positional_separator" => {
                first = None;
                continue;
            }
            _ => break,
        };
        if first.is_none() {
            first = name.map(|n| text_of(n, text));
        }
    }
    first
}

/// For a dataclass (`class` under `decorators`), its first field without
/// a default after one with a default, and that one: `(class, field,
/// default)`. `kw_only=True` makes the order free; a `ClassVar` is no
/// field; fields after `_: KW_ONLY` are keyword-only.
fn misordered(class: Node, decorated: Node, text: &[u8]) -> Option<(String, String, String)> {
    let mut kw_only = false;
    let is_dataclass = named_children(decorated)
        .into_iter()
        .filter(|d| d.kind() == "decorator")
        .filter_map(|d| named_children(d).into_iter().next())
        .any(|mark| {
            let mark = match mark.kind() {
                "call" => {
                    let arguments = mark.child_by_field_name("arguments");
                    kw_only |= arguments.is_some_and(|a| {
                        named_children(a).into_iter().any(|k| {
                            k.kind() == "keyword_argument"
                                && k.child_by_field_name("name")
                                    .is_some_and(|n| text_of(n, text) == "kw_only")
                        })
                    });
                    mark.child_by_field_name("function")
                }
                _ => Some(mark),
            };
            mark.is_some_and(|m| match m.kind() {
                "identifier" => text_of(m, text) == "dataclass",
                "attribute" => m
                    .child_by_field_name("attribute")
                    .is_some_and(|a| text_of(a, text) == "dataclass"),
                _ => false,
            })
        });
    if !is_dataclass || kw_only {
        return None;
    }
    let class_name = text_of(class.child_by_field_name("name")?, text);
    let mut with_default: Option<&str> = None;
    for statement in named_children(class.child_by_field_name("body")?) {
        let Some(field) = named_children(statement)
            .into_iter()
            .next()
            .filter(|a| statement.kind() == "expression_statement" && a.kind() == "assignment")
        else {
            continue;
        };
        let (Some(target), Some(annotation)) = (
            field.child_by_field_name("left"),
            field.child_by_field_name("type"),
        ) else {
            continue;
        };
        if target.kind() != "identifier" {
            continue;
        }
        let annotation = text_of(annotation, text);
        if annotation.ends_with("KW_ONLY") {
            break;
        }
        if annotation.contains("ClassVar") {
            continue;
        }
        let name = text_of(target, text);
        match (field.child_by_field_name("right"), with_default) {
            (Some(_), None) => with_default = Some(name),
            (Some(_), Some(_)) => {}
            (None, Some(default)) => {
                return Some((class_name.into(), name.into(), default.into()));
            }
            (None, None) => {}
        }
    }
    None
}
