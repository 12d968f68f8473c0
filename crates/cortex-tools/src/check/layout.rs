//! Python's layout rules, which the tree-sitter grammar does not enforce:
//! a statement indented other than its block (`x = 1` left at two spaces
//! after a function), a block with nothing in it (`if x:` then `pass` at
//! the same indentation), an `else:` not under its `if`, a statement
//! running onto the next line outside brackets. The grammar's scanner
//! closes blocks on any dedent and reads on past a line break where an
//! operand must follow, so each of these parses there; `python3` refuses
//! them all, and small models write the first two (an insertion at the
//! wrong indentation) more than any other syntax error.

use super::{Found, named_children};
use tree_sitter::Node;

/// Statements that hold blocks: their lines are checked as their blocks'.
const COMPOUND: &[&str] = &[
    "if_statement",
    "for_statement",
    "while_statement",
    "try_statement",
    "with_statement",
    "function_definition",
    "class_definition",
    "decorated_definition",
    "match_statement",
];

/// The clauses that must line up with the statement they continue.
const CLAUSES: &[&str] = &[
    "elif_clause",
    "else_clause",
    "except_clause",
    "except_group_clause",
    "finally_clause",
];

/// Nodes within which a line break continues the statement (brackets and
/// strings).
const BRACKETED: &[&str] = &[
    "parenthesized_expression",
    "argument_list",
    "list",
    "dictionary",
    "set",
    "tuple",
    "subscript",
    "list_comprehension",
    "dictionary_comprehension",
    "set_comprehension",
    "generator_expression",
    "string",
    "tuple_pattern",
    "list_pattern",
    "type_parameter",
    "parenthesized_list_splat",
];

/// The layout errors of a Python tree that parsed.
#[cfg(test)]
pub(super) fn layout_errors(root: Node, text: &[u8]) -> Vec<Found> {
    let mut found = Vec::new();
    let mut previous: Option<Node> = None;
    for statement in named_children(root) {
        let after_compound = previous.is_some_and(is_compound);
        found.extend(statement_layout_errors(statement, after_compound, text));
        previous = Some(statement);
    }
    found
}

/// The layout errors of one statement of a module, which follows a
/// compound statement or not: they depend on its own lines only
/// (`statements.rs` keeps them by the statement's text).
pub(super) fn statement_layout_errors(
    statement: Node,
    after_compound: bool,
    text: &[u8],
) -> Vec<Found> {
    let mut found = Vec::new();
    one_statement(statement, Some(0), after_compound, text, &mut found);
    let mut stack = vec![statement];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "block" => block(node, text, &mut found),
            kind if CLAUSES.contains(&kind) => clause(node, text, &mut found),
            _ => {}
        }
        // Blocks are only under statements: expressions are not entered.
        if node.kind() == "block" || is_compound(node) || is_clause(node) {
            let mut cursor = node.walk();
            stack.extend(node.named_children(&mut cursor));
        }
    }
    found
}

pub(super) fn is_compound(node: Node) -> bool {
    COMPOUND.contains(&node.kind())
}

fn is_clause(node: Node) -> bool {
    CLAUSES.contains(&node.kind()) || node.kind() == "case_clause"
}

/// A block's statements: at least one, each on a line of its own at the
/// first one's indentation.
fn block(node: Node, text: &[u8], found: &mut Vec<Found>) {
    let owner = node.parent().unwrap_or(node);
    let children = named_children(node);
    let Some(first) = children.first() else {
        found.push(Found::at(
            owner,
            text,
            format!(
                "expected an indented block after {}",
                header_name(owner, text)
            ),
        ));
        return;
    };
    // `if x: a; b` has its block on the header's line: nothing to line up.
    let expected = (first.start_position().row != owner.start_position().row)
        .then(|| indent_of(*first, text))
        .flatten();
    if expected.is_some() {
        statements(node, expected, text, found);
    }
}

/// The statements of `container` (a module or block) that start a line
/// must start at `expected` columns; a simple one that runs onto more
/// lines must do so within brackets or after a `\`.
fn statements(container: Node, expected: Option<usize>, text: &[u8], found: &mut Vec<Found>) {
    let mut previous: Option<Node> = None;
    for statement in named_children(container) {
        let after_compound = previous.is_some_and(is_compound);
        one_statement(statement, expected, after_compound, text, found);
        previous = Some(statement);
    }
}

/// [`statements`]' rules for one statement.
fn one_statement(
    statement: Node,
    expected: Option<usize>,
    after_compound: bool,
    text: &[u8],
    found: &mut Vec<Found>,
) {
    if let (Some(expected), Some(indent)) = (expected, indent_of(statement, text))
        && indent != expected
    {
        // Deeper after a simple statement: an indent nothing opened;
        // otherwise a dedent to no level a block had.
        let what = if indent > expected && !after_compound {
            "unexpected indent"
        } else {
            "unindent does not match any outer indentation level"
        };
        found.push(Found::at(statement, text, what.to_owned()));
    }
    if !is_compound(statement) && !is_clause(statement) {
        continuation(statement, text, found);
    }
}

/// An `else:` (and the other clauses) at its statement's indentation.
fn clause(node: Node, text: &[u8], found: &mut Vec<Found>) {
    let (Some(owner), Some(indent)) = (node.parent(), indent_of(node, text)) else {
        return;
    };
    let expected = line_indent(text, owner.start_byte());
    if indent != expected {
        // The line before is in the body above: deeper than that is an
        // indent, anything else a dedent to no level.
        let what = if indent > previous_line_indent(text, node.start_byte()) {
            "unexpected indent"
        } else {
            "unindent does not match any outer indentation level"
        };
        found.push(Found::at(node, text, what.to_owned()));
    }
}

/// A line break inside a simple statement outside brackets, a string or a
/// `\` continuation: Python ends the statement there (`x = 1 +` then `2`).
fn continuation(statement: Node, text: &[u8], found: &mut Vec<Found>) {
    if statement.start_position().row == statement.end_position().row {
        return;
    }
    let range = statement.byte_range();
    let Some(body) = text.get(range.clone()) else {
        return;
    };
    // `from x import (a,` then `b)` has its brackets as bare tokens.
    if matches!(
        statement.kind(),
        "import_from_statement" | "future_import_statement"
    ) && body.contains(&b'(')
    {
        return;
    }
    for (offset, _) in body.iter().enumerate().filter(|(_, b)| **b == b'\n') {
        let at = range.start + offset;
        let before = text
            .get(range.start..at)
            .unwrap_or_default()
            .iter()
            .rev()
            .find(|b| **b != b'\r')
            .copied();
        if before == Some(b'\\') {
            continue;
        }
        let mut node = statement.descendant_for_byte_range(at, at + 1);
        let mut bracketed = false;
        while let Some(inner) = node.filter(|n| n.id() != statement.id()) {
            if BRACKETED.contains(&inner.kind()) {
                bracketed = true;
                break;
            }
            node = inner.parent();
        }
        if !bracketed {
            found.push(Found::at(statement, text, "invalid syntax".to_owned()));
            return;
        }
    }
}

/// How Python names the statement a block belongs to, for "expected an
/// indented block after …".
fn header_name(owner: Node, text: &[u8]) -> String {
    match owner.kind() {
        "function_definition" => "function definition".to_owned(),
        "class_definition" => "class definition".to_owned(),
        _ => {
            let keyword = owner
                .child(0)
                .and_then(|k| text.get(k.byte_range()))
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            format!("'{keyword}' statement")
        }
    }
}

/// The indentation of `node`'s line, in columns, when `node` starts it.
fn indent_of(node: Node, text: &[u8]) -> Option<usize> {
    let start = node.start_byte();
    let line_start = line_start(text, start);
    text.get(line_start..start)?
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\x0c'))
        .then(|| line_indent(text, start))
}

/// The indentation of the line holding byte `at`, in columns, a tab to the
/// next multiple of 8 as Python counts it.
fn line_indent(text: &[u8], at: usize) -> usize {
    let mut columns = 0;
    for byte in text.get(line_start(text, at)..).unwrap_or_default() {
        match byte {
            b' ' => columns += 1,
            b'\t' => columns = (columns / 8 + 1) * 8,
            b'\x0c' => columns = 0,
            _ => break,
        }
    }
    columns
}

/// The indentation of the last line before the one holding byte `at`
/// that holds code (not blank, not only a comment).
fn previous_line_indent(text: &[u8], at: usize) -> usize {
    let mut end = line_start(text, at);
    while end > 0 {
        let start = line_start(text, end - 1);
        let line = text.get(start..end).unwrap_or_default();
        let code = line.iter().find(|b| !b.is_ascii_whitespace());
        if code.is_some_and(|b| *b != b'#') {
            return line_indent(text, start);
        }
        end = start;
    }
    0
}

/// Where the line holding byte `at` starts.
fn line_start(text: &[u8], at: usize) -> usize {
    text.get(..at)
        .and_then(|before| before.iter().rposition(|b| *b == b'\n'))
        .map_or(0, |newline| newline + 1)
}
