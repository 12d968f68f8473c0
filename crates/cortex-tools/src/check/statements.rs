//! Python's layout and compiler rules, one top-level statement at a time.
//!
//! What either set of rules finds in a statement of a module depends on
//! that statement's own lines and on whether the statement before it
//! holds a block (the wording of an indentation error), nothing else: the
//! module encloses every one of them alike. So each statement's findings
//! are kept by its text (from the start of its first line, so its
//! indentation counts) and that flag, and an edit re-checks only the
//! statements it changed; an unchanged statement's findings are reused
//! with their lines moved to where it now starts. `read_file` fills the
//! store in advance (`recent::warm`), so the first edit after a read
//! checks only what it changed too. The names a statement binds and loads
//! are kept the same way (`names.rs`, with [`StatementCache`]).

use super::{Found, layout, named_children, python};
use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use tree_sitter::Node;

/// Statements whose findings are kept, at most, in each store; past it the
/// store starts over. A session touches far fewer, and the bound keeps a
/// model that writes file after file from growing the guest without end
/// (an entry is a statement's names or findings: bytes to a few KiB).
const MAX_KEPT: usize = 20_000;

/// What one statement breaks: layout errors and compiler errors, each line
/// counted from the statement's first line (0).
#[derive(Debug, Default)]
struct Findings {
    layout: Vec<Found>,
    compile: Vec<Found>,
}

/// What was found in each statement, by the statement's text and what
/// else its findings depend on. The key's hash is keyed per process, so no
/// text can be written to collide with another's.
pub(crate) struct StatementCache<T> {
    hasher: RandomState,
    kept: Mutex<HashMap<u64, Arc<T>>>,
}

impl<T> StatementCache<T> {
    pub(crate) fn new() -> Self {
        StatementCache {
            hasher: RandomState::new(),
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// What `find` finds in `statement` (of `text`), given `also`: kept, or
    /// found now and kept.
    pub(crate) fn get(
        &self,
        statement: Node,
        text: &[u8],
        also: impl std::hash::Hash,
        find: impl FnOnce() -> T,
    ) -> Arc<T> {
        let line_start = text[..statement.start_byte().min(text.len())]
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |at| at + 1);
        let lines = text
            .get(line_start..statement.end_byte())
            .unwrap_or_default();
        let key = self.hasher.hash_one((lines, also));
        if let Some(kept) = self.lock().get(&key) {
            return Arc::clone(kept);
        }
        let found = Arc::new(find());
        let mut kept = self.lock();
        if kept.len() >= MAX_KEPT {
            kept.clear();
        }
        kept.insert(key, Arc::clone(&found));
        found
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<T>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

static FINDINGS: LazyLock<StatementCache<Findings>> = LazyLock::new(StatementCache::new);

/// The layout errors of the module `root` (of `text`, which parsed), or
/// when it has none its compiler errors: what `python3` says first.
pub(super) fn python_rules(root: Node, text: &[u8]) -> Vec<Found> {
    let mut layout = Vec::new();
    let mut compile = Vec::new();
    let mut after_compound = false;
    for statement in named_children(root) {
        let findings = findings(statement, after_compound, text);
        let row = statement.start_position().row;
        let moved = |found: &Found| Found {
            line: found.line + row,
            ..found.clone()
        };
        layout.extend(findings.layout.iter().map(moved));
        compile.extend(findings.compile.iter().map(moved));
        after_compound = layout::is_compound(statement);
    }
    if layout.is_empty() { compile } else { layout }
}

/// One statement's findings: kept ones, or found now and kept.
fn findings(statement: Node, after_compound: bool, text: &[u8]) -> Arc<Findings> {
    FINDINGS.get(statement, text, after_compound, || {
        let row = statement.start_position().row;
        let relative = |found: Vec<Found>| {
            found
                .into_iter()
                .map(|f| Found {
                    line: f.line - row,
                    ..f
                })
                .collect()
        };
        Findings {
            layout: relative(layout::statement_layout_errors(
                statement,
                after_compound,
                text,
            )),
            compile: relative(python::statement_compile_errors(statement, text)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{Lang, parse};

    /// The whole-module walks the statement rules replace.
    fn whole(text: &str) -> Vec<Found> {
        let tree = parse(Lang::Python, text.as_bytes()).expect("parse");
        let layout = layout::layout_errors(tree.root_node(), text.as_bytes());
        if layout.is_empty() {
            python::compile_errors(tree.root_node(), text.as_bytes())
        } else {
            layout
        }
    }

    fn by_statement(text: &str) -> Vec<Found> {
        let tree = parse(Lang::Python, text.as_bytes()).expect("parse");
        python_rules(tree.root_node(), text.as_bytes())
    }

    #[test]
    fn statement_by_statement_finds_what_the_whole_walks_find_and_kept_findings_move() {
        let texts = [
            "def f():\n    return 1\nreturn 2\n",
            "for x in y:\n    pass\nbreak\n",
            "def f():\n    x = 1\n  y = 2\n",
            "if x:\n    pass\n    else:\n        pass\n",
            "x = 1\n    y = 2\n",
            "while x:\n    continue\ncontinue\n",
            "async def f():\n    await g()\ndef h():\n    await g()\n",
            "class C:\n    nonlocal x\n",
            "print 'hello'\n",
            "def f(a, a):\n    pass\n",
            "x = [1,\n 2]\ny = 1 +\n2\n",
            "\n\n# comment\nreturn 1\n",
        ];
        for text in texts {
            let expected = whole(text);
            assert!(!expected.is_empty(), "{text:?} breaks a rule");
            assert_eq!(by_statement(text), expected, "{text:?}");
            // Again from the kept findings, and with lines added above:
            // the same findings, moved down.
            assert_eq!(by_statement(text), expected, "{text:?}");
            let moved: Vec<Found> = expected
                .iter()
                .map(|f| Found {
                    line: f.line + 3,
                    ..f.clone()
                })
                .collect();
            let shifted = format!("a = 1\nb = 2\nc = 3\n{text}");
            assert_eq!(by_statement(&shifted), moved, "{text:?}");
        }
    }
}
