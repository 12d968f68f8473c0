//! What CPython's compiler refuses in a file its grammar accepts (and
//! tree-sitter's with it): `ast.parse` takes a `return` left at the top
//! level by an insertion at the wrong indentation, `python3` then refuses
//! to run the file. Each rule is a walk over the tree with what encloses
//! the node (a function, async or not; a loop; a class), worded as
//! `python3` words it so the model reads the error it knows.
//!
//! Also refused here: Python 2's `print x` and `exec code`, which the
//! tree-sitter grammar keeps for old files.

use super::{Found, named_children, text_of, walk};
use std::collections::HashSet;
use tree_sitter::Node;

/// What encloses a node, for the rules that depend on it.
#[derive(Debug, Clone, Copy, Default)]
struct Within {
    /// The innermost function (or lambda), and whether it is `async`;
    /// `None` at the top level and in a class body.
    function: Option<bool>,
    /// In the body of a loop of that function (not its `else`).
    in_loop: bool,
    /// In a class body with no function between.
    in_class: bool,
    /// Within a function at any depth (a class in a function may say
    /// `nonlocal`).
    in_any_function: bool,
}

/// What encloses a node, with its kind (for what encloses its children).
#[derive(Debug, Clone, Copy)]
struct Context<'t> {
    within: Within,
    kind: &'t str,
    is_async: bool,
}

/// The compiler's errors in the tree of a file that parses.
#[cfg(test)]
pub(super) fn compile_errors(root: Node, text: &[u8]) -> Vec<Found> {
    let top = Context {
        within: Within::default(),
        kind: "",
        is_async: false,
    };
    compile_errors_from(root, top, text)
}

/// The compiler's errors in one statement of a module: what encloses it is
/// the module, so they depend on its subtree only
/// (`statements.rs` keeps them by the statement's text).
pub(super) fn statement_compile_errors(statement: Node, text: &[u8]) -> Vec<Found> {
    let module = Context {
        within: Within::default(),
        kind: "module",
        is_async: false,
    };
    compile_errors_from(statement, module, text)
}

/// The compiler's errors in the tree under `root`, whose parent is `top`.
fn compile_errors_from<'t>(root: Node<'t>, top: Context<'t>, text: &[u8]) -> Vec<Found> {
    let mut found = Vec::new();
    walk(root, top, |node, field, parent| {
        if !node.is_named() || node.is_extra() {
            return None;
        }
        let within = inner(parent, field);
        let kind = node.kind();
        let is_async = matches!(
            kind,
            "function_definition" | "for_statement" | "with_statement"
        ) && node.child(0).is_some_and(|c| c.kind() == "async");
        let what = |what: &str| Found::at(node, text, what.to_owned());
        match kind {
            "return_statement" if within.function.is_none() => {
                found.push(what("'return' outside function"));
            }
            "break_statement" if !within.in_loop => found.push(what("'break' outside loop")),
            "continue_statement" if !within.in_loop => {
                found.push(what("'continue' not properly in loop"));
            }
            "yield" if within.function.is_none() => {
                found.push(what("'yield' outside function"));
            }
            "await" => match within.function {
                None => found.push(what("'await' outside function")),
                Some(false) => found.push(what("'await' outside async function")),
                Some(true) => {}
            },
            "for_statement" | "with_statement" if is_async && within.function != Some(true) => {
                let kind = if kind == "for_statement" {
                    "for"
                } else {
                    "with"
                };
                found.push(what(&format!("'async {kind}' outside async function")));
            }
            "nonlocal_statement" if within.function.is_none() && !within.in_any_function => {
                if within.in_class {
                    for name in named_children(node) {
                        let name = text_of(name, text);
                        found.push(what(&format!("no binding for nonlocal '{name}' found")));
                    }
                } else {
                    found.push(what("nonlocal declaration not allowed at module level"));
                }
            }
            // `print >> f, x` is a tuple to Python 3 (and a TypeError when run).
            "print_statement" | "exec_statement"
                if !named_children(node).iter().any(|c| c.kind() == "chevron") =>
            {
                let name = if kind == "print_statement" {
                    "print"
                } else {
                    "exec"
                };
                found.push(what(&format!(
                    "Missing parentheses in call to '{name}'. Did you mean {name}(...)?"
                )));
            }
            "parameters" | "lambda_parameters" => parameters(node, text, &mut found),
            "argument_list" => arguments(node, text, &mut found),
            _ => python2_and_targets(node, text, &mut found),
        }
        Some(Context {
            within,
            kind,
            is_async,
        })
    });
    found
}

/// What encloses a node in field `field` of `parent`.
fn inner(parent: &Context, field: Option<&str>) -> Within {
    let within = parent.within;
    match (parent.kind, field) {
        ("function_definition", Some("body")) => Within {
            function: Some(parent.is_async),
            in_loop: false,
            in_class: false,
            in_any_function: true,
        },
        // A lambda is a function that is never async.
        ("lambda", Some("body")) => Within {
            function: Some(false),
            in_loop: false,
            in_class: false,
            in_any_function: true,
        },
        ("class_definition", Some("body")) => Within {
            function: None,
            in_loop: false,
            in_class: true,
            ..within
        },
        ("for_statement" | "while_statement", Some("body")) => Within {
            in_loop: true,
            ..within
        },
        // A generator expression with `await` is an asynchronous one,
        // allowed in any function since Python 3.7.
        ("generator_expression", _) if within.function.is_some() => Within {
            function: Some(true),
            ..within
        },
        _ => within,
    }
}

/// Python 2's spellings the grammar keeps (`0777`, `10L`, `` `x` ``, `<>`,
/// `raise E, "msg"`, `except E, e:`), and targets Python refuses.
fn python2_and_targets(node: Node, text: &[u8], found: &mut Vec<Found>) {
    let mut what = |what: &str| found.push(Found::at(node, text, what.to_owned()));
    let children = || {
        let mut cursor = node.walk();
        node.children(&mut cursor).collect::<Vec<_>>()
    };
    match node.kind() {
        "integer" => {
            let digits = text_of(node, text);
            if digits.ends_with(['l', 'L']) {
                what("invalid decimal literal");
            } else if digits.len() > 1
                && digits.starts_with('0')
                && digits.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
                && !digits.bytes().all(|b| b == b'0' || b == b'_')
            {
                what(
                    "leading zeros in decimal integer literals are not permitted; use an 0o \
                     prefix for octal integers",
                );
            }
        }
        "string" if text_of(node, text).starts_with('`') => what("invalid syntax"),
        "comparison_operator" if children().iter().any(|c| c.kind() == "<>") => {
            what("invalid syntax");
        }
        "raise_statement" if children().iter().any(|c| c.kind() == "expression_list") => {
            what("invalid syntax");
        }
        "except_clause" if children().iter().any(|c| c.kind() == ",") => {
            what("multiple exception types must be parenthesized");
        }
        "for_in_clause" if children().iter().any(|c| c.kind() == ",") => {
            let in_call = node.parent().is_some_and(|g| {
                g.kind() == "generator_expression"
                    && g.parent().is_some_and(|call| call.kind() == "call")
            });
            what(if in_call {
                "Generator expression must be parenthesized"
            } else {
                "invalid syntax"
            });
        }
        "delete_statement" if named_children(node).iter().any(|t| t.kind() == "call") => {
            what("cannot delete function call");
        }
        "assignment" => {
            let left = node.child_by_field_name("left");
            let starred = left.map_or(0, |l| {
                named_children(l)
                    .iter()
                    .filter(|c| c.kind() == "list_splat_pattern")
                    .count()
            });
            if starred > 1 {
                what("multiple starred expressions in assignment");
            }
            let right = node.child_by_field_name("right");
            let annotation = node.child_by_field_name("type");
            if right.is_some_and(|r| r.kind() == "augmented_assignment")
                || annotation.is_some_and(|t| {
                    named_children(t)
                        .iter()
                        .any(|c| c.kind() == "constrained_type")
                })
            {
                what("invalid syntax");
            }
        }
        "augmented_assignment" => {
            let left = node.child_by_field_name("left");
            if let Some(kind) = left
                .map(|l| l.kind())
                .filter(|k| matches!(*k, "pattern_list" | "tuple_pattern" | "list_pattern"))
            {
                let shown = if kind == "list_pattern" {
                    "list"
                } else {
                    "tuple"
                };
                what(&format!(
                    "'{shown}' is an illegal expression for augmented assignment"
                ));
            }
        }
        _ => {}
    }
}

/// A parameter list's errors: one without a default after one with a
/// default (before any `*`), a name given twice.
fn parameters(node: Node, text: &[u8], found: &mut Vec<Found>) {
    let mut seen_default = false;
    let mut star = false;
    let mut names = HashSet::new();
    // A bare `*` must have a parameter after it (before any `**`).
    let mut bare_star: Option<Node> = None;
    let mut double_star = false;
    for param in named_children(node) {
        if double_star {
            found.push(Found::at(
                param,
                text,
                "arguments cannot follow var-keyword argument".to_owned(),
            ));
        }
        match param.kind() {
            "keyword_separator" => bare_star = Some(param),
            "dictionary_splat_pattern" | "positional_separator" => {}
            "typed_parameter"
                if param
                    .named_child(0)
                    .is_some_and(|c| c.kind() == "dictionary_splat_pattern") => {}
            "tuple_pattern" => found.push(Found::at(
                param,
                text,
                "Function parameters cannot be parenthesized".to_owned(),
            )),
            _ => bare_star = None,
        }
        if param.kind() == "dictionary_splat_pattern"
            || param.kind() == "typed_parameter"
                && param
                    .named_child(0)
                    .is_some_and(|c| c.kind() == "dictionary_splat_pattern")
        {
            if let Some(star) = bare_star.take() {
                found.push(Found::at(
                    star,
                    text,
                    "named arguments must follow bare *".to_owned(),
                ));
            }
            double_star = true;
        }
        // (the name bound, has a default, positional without a default)
        let (name, has_default, positional) = match param.kind() {
            "identifier" => (Some(param), false, true),
            "typed_parameter" => match named_children(param).into_iter().next() {
                Some(inner) if inner.kind() == "identifier" => (Some(inner), false, true),
                Some(inner) => {
                    star |= inner.kind() == "list_splat_pattern";
                    (splat_name(inner), false, false)
                }
                None => (None, false, false),
            },
            "default_parameter" | "typed_default_parameter" => {
                (param.child_by_field_name("name"), true, false)
            }
            "list_splat_pattern" => {
                star = true;
                (splat_name(param), false, false)
            }
            "keyword_separator" => {
                star = true;
                (None, false, false)
            }
            "dictionary_splat_pattern" => (splat_name(param), false, false),
            _ => (None, false, false),
        };
        // After `*`, every parameter is keyword-only: a default is optional.
        if has_default && !star {
            seen_default = true;
        } else if positional && seen_default && !star {
            found.push(Found::at(
                param,
                text,
                "parameter without a default follows parameter with a default".to_owned(),
            ));
        }
        let Some(name) = name.filter(|n| n.kind() == "identifier") else {
            continue;
        };
        let name_text = text_of(name, text);
        if !names.insert(name_text) {
            found.push(Found::at(
                name,
                text,
                format!("duplicate argument '{name_text}' in function definition"),
            ));
        }
    }
    if let Some(star) = bare_star {
        found.push(Found::at(
            star,
            text,
            "named arguments must follow bare *".to_owned(),
        ));
    }
}

/// The name a `*args` or `**kwargs` pattern binds.
fn splat_name(node: Node) -> Option<Node> {
    named_children(node)
        .into_iter()
        .find(|c| c.kind() == "identifier")
}

/// A call's errors: a positional argument after a keyword one, or after
/// `**`; `*` after `**`; a keyword given twice.
fn arguments(node: Node, text: &[u8], found: &mut Vec<Found>) {
    let mut keyword = false;
    let mut double_star = false;
    let mut keywords = HashSet::new();
    for arg in named_children(node) {
        match arg.kind() {
            "keyword_argument" => {
                keyword = true;
                if let Some(name) = arg.child_by_field_name("name") {
                    let name = text_of(name, text);
                    if !keywords.insert(name) {
                        found.push(Found::at(
                            arg,
                            text,
                            format!("keyword argument repeated: {name}"),
                        ));
                    }
                }
            }
            "dictionary_splat" => double_star = true,
            "list_splat" if double_star => found.push(Found::at(
                arg,
                text,
                "iterable argument unpacking follows keyword argument unpacking".to_owned(),
            )),
            "list_splat" => {}
            _ if double_star => found.push(Found::at(
                arg,
                text,
                "positional argument follows keyword argument unpacking".to_owned(),
            )),
            _ if keyword => found.push(Found::at(
                arg,
                text,
                "positional argument follows keyword argument".to_owned(),
            )),
            _ => {}
        }
    }
}
