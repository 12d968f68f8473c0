//! Checking a source file in process with a tree-sitter grammar: whether
//! it parses, and for Python what the compiler refuses that the grammar
//! accepts, and what a run would fail on (a name bound nowhere).
//!
//! The check after a write ran `python3` three times for one Python edit
//! (about 100 ms of a scripted turn's critical path), and checked no other
//! language. A grammar compiled into the binary parses a 1,000-line file in
//! a few milliseconds, a change of a file it parsed before in a fraction
//! of one (`recent`), and needs nothing from the guest's image. JSON,
//! TOML and YAML keep their serde parsers (`crate::syntax`): exact, where a
//! tree-sitter grammar only approximates the format.
//!
//! What the model controls is bounded: a text over [`MAX_BYTES`] is not
//! checked, a parse stops at [`PARSE_DEADLINE`], and every walk over a tree
//! keeps its own stack (a file nested a million deep cannot overflow ours).

pub(crate) mod builtins;
mod layout;
pub(crate) mod names;
mod python;
pub(crate) mod recent;
pub(crate) mod statements;

use std::ops::ControlFlow;
use std::path::Path;
use std::time::{Duration, Instant};
use tree_sitter::{Node, Parser, Tree};

/// A larger text is not checked: no source file a model writes is this
/// large, and a parse of it would cost more than the check is worth.
pub(crate) const MAX_BYTES: usize = 2 << 20;

/// How long one parse may take before it is given up (the check then says
/// nothing): a few hundred times what a 1,000-line file takes.
const PARSE_DEADLINE: Duration = Duration::from_millis(250);

/// At most this many problems are named in one note.
const MAX_PROBLEMS: usize = 3;

/// At most this many characters of the text at a problem are quoted.
const MAX_QUOTE: usize = 40;

/// The languages with a grammar here, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    Rust,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Bash,
}

impl Lang {
    /// The language of `path`, by its extension.
    pub(crate) fn of(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "py" | "pyi" => Lang::Python,
            "rs" => Lang::Rust,
            // The JavaScript grammar parses JSX too.
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            "sh" | "bash" => Lang::Bash,
            _ => return None,
        })
    }

    /// The language's name, as a note says it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Lang::Python => "Python",
            Lang::Rust => "Rust",
            Lang::JavaScript => "JavaScript",
            Lang::TypeScript | Lang::Tsx => "TypeScript",
            Lang::Go => "Go",
            Lang::Bash => "Bash",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Bash => tree_sitter_bash::LANGUAGE.into(),
        }
    }
}

/// `text` parsed as `lang`; `None` when it is over [`MAX_BYTES`], the
/// parse ran past [`PARSE_DEADLINE`], or the grammar cannot be loaded
/// (each: nothing is said about the file).
#[cfg(test)]
pub(crate) fn parse(lang: Lang, text: &[u8]) -> Option<Tree> {
    parse_with(lang, text, None)
}

thread_local! {
    /// A parser for each thread that checks: its buffers are kept from one
    /// parse to the next.
    static PARSER: std::cell::RefCell<Parser> = std::cell::RefCell::new(Parser::new());
}

/// [`parse`], reusing `old` (the tree of the text before an edit, already
/// edited to match) for what did not change.
pub(crate) fn parse_with(lang: Lang, text: &[u8], old: Option<&Tree>) -> Option<Tree> {
    if text.len() > MAX_BYTES {
        return None;
    }
    let deadline = Instant::now() + PARSE_DEADLINE;
    let mut progress = |_: &tree_sitter::ParseState| {
        if Instant::now() < deadline {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    };
    let mut read = |offset: usize, _| text.get(offset..).unwrap_or_default();
    PARSER.with(|parser| {
        let mut parser = parser.try_borrow_mut().ok()?;
        parser.set_language(&lang.grammar()).ok()?;
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
        let tree = parser.parse_with_options(&mut read, old, Some(options));
        // A parse given up leaves the parser mid-way: the next starts anew.
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}

/// What is wrong with `text` (parsed as `tree`) as `lang`: the first few
/// places the grammar could not parse, each with its line and column, or
/// for a Python file that parses, what its compiler refuses. `None` when
/// nothing is.
pub(crate) fn problem(lang: Lang, text: &[u8], tree: &Tree) -> Option<String> {
    let mut found = syntax_errors(tree.root_node(), text);
    if found.is_empty() && lang == Lang::Python {
        // As Python: a line out of place is its tokenizer's error, said
        // before what the compiler would make of the tree around it (a
        // `return` dedented out of its function is "unindent does not
        // match", not "'return' outside function").
        found = statements::python_rules(tree.root_node(), text);
    }
    describe(&found)
}

/// [`problem`] of `text`, parsed (or its tree kept from before); `None`
/// too when it cannot be parsed in time.
pub(crate) fn text_problem(lang: Lang, text: &str) -> Option<String> {
    problem(lang, text.as_bytes(), &recent::tree_of(lang, text)?)
}

/// One thing wrong, at a place in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// 1-based.
    pub(crate) line: usize,
    /// 1-based, in characters.
    pub(crate) column: usize,
    /// What is wrong there.
    pub(crate) what: String,
}

impl Found {
    /// `what` at where `node` starts in `text`.
    pub(crate) fn at(node: Node, text: &[u8], what: String) -> Found {
        let point = node.start_position();
        let start = node.start_byte();
        let line_start = start.saturating_sub(point.column);
        let column = text.get(line_start..start).map_or(point.column, |bytes| {
            String::from_utf8_lossy(bytes).chars().count()
        });
        Found {
            line: point.row + 1,
            column: column + 1,
            what,
        }
    }
}

/// The sentence for what was found, in order of place, at most
/// [`MAX_PROBLEMS`] of them.
fn describe(found: &[Found]) -> Option<String> {
    let mut sorted = found.to_vec();
    sorted.sort_by_key(|f| (f.line, f.column));
    sorted.dedup_by(|a, b| a.line == b.line && a.what == b.what);
    let shown: Vec<String> = sorted
        .iter()
        .take(MAX_PROBLEMS)
        .map(|f| format!("{} at line {}, column {}", f.what, f.line, f.column))
        .collect();
    if shown.is_empty() {
        return None;
    }
    let mut said = shown.join("; ");
    if sorted.len() > MAX_PROBLEMS {
        said.push_str(&format!("; and {} more", sorted.len() - MAX_PROBLEMS));
    }
    Some(said)
}

/// The places the grammar could not parse: each outermost `ERROR` node
/// (text it had to skip) and each `MISSING` one (a token it had to assume).
/// Only subtrees that hold an error are entered, so a clean tree costs one
/// look at its root.
fn syntax_errors(root: Node, text: &[u8]) -> Vec<Found> {
    let mut found = Vec::new();
    if !root.has_error() {
        return found;
    }
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_missing() {
            found.push(Found::at(node, text, format!("missing `{}`", node.kind())));
        } else if node.is_error() {
            found.push(Found::at(node, text, unexpected(node, text)));
        } else if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor).filter(|c| c.has_error()));
        }
        // Enough for the note; the rest of a broken file is not walked.
        if found.len() > 4 * MAX_PROBLEMS {
            break;
        }
    }
    found
}

/// `unexpected `TEXT`` for an `ERROR` node: the start of what the grammar
/// skipped, on one line.
fn unexpected(node: Node, text: &[u8]) -> String {
    let skipped = text
        .get(node.byte_range())
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let line = skipped.lines().map(str::trim).find(|l| !l.is_empty());
    match line {
        None => "unexpected end of the text".to_owned(),
        Some(line) if line.chars().count() > MAX_QUOTE => {
            let cut: String = line.chars().take(MAX_QUOTE).collect();
            format!("unexpected `{cut}…`")
        }
        Some(line) => format!("unexpected `{line}`"),
    }
}

/// The text of `node`, or `""` when its range is not text of `text`.
pub(crate) fn text_of<'t>(node: Node, text: &'t [u8]) -> &'t str {
    text.get(node.byte_range())
        .and_then(|bytes| std::str::from_utf8(bytes).ok())
        .unwrap_or_default()
}

/// Visits `root` and every node under it, depth first, with one cursor
/// and no allocation per node (a 1,000-line file has tens of thousands):
/// `enter(node, field, parent)` gets each node with the field it is in and
/// its parent's context, and returns the node's own, for its children, or
/// `None` to skip them. The contexts are a stack of our own: a tree nested
/// any depth is walked all the same.
pub(crate) fn walk<'t, C>(
    root: Node<'t>,
    top: C,
    mut enter: impl FnMut(Node<'t>, Option<&'t str>, &C) -> Option<C>,
) {
    let Some(context) = enter(root, None, &top) else {
        return;
    };
    // The context of each node from the root to the cursor's parent.
    let mut contexts = vec![context];
    let mut cursor = root.walk();
    if !cursor.goto_first_child() {
        return;
    }
    loop {
        let entered = match contexts.last() {
            Some(parent) => enter(cursor.node(), cursor.field_name(), parent),
            None => return,
        };
        if let Some(context) = entered
            && cursor.goto_first_child()
        {
            contexts.push(context);
            continue;
        }
        while !cursor.goto_next_sibling() {
            if contexts.len() <= 1 || !cursor.goto_parent() {
                return;
            }
            contexts.pop();
        }
    }
}

/// The children of `node`, each with the field it is in. A cursor's walk:
/// `field_name_for_child` looks each index up from the first child, which
/// made the walks quadratic in a module's statements.
pub(crate) fn children_with_fields<'t>(node: Node<'t>) -> Vec<(Node<'t>, Option<&'t str>)> {
    let mut children = Vec::with_capacity(node.child_count() as usize);
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            children.push((cursor.node(), cursor.field_name()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    children
}

/// The named children of `node` that are not extras (comments, a `\`
/// continuing a line).
pub(crate) fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| !c.is_extra())
        .collect()
}

#[cfg(test)]
mod tests;
