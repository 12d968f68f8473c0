//! The trees of the texts this process checked last, so that the next
//! change of the same file is parsed incrementally.
//!
//! A full parse of a 1,000-line Python file takes tree-sitter a few
//! milliseconds; an edit of a file parsed before, given the old tree and
//! where the text changed, reparses only around the change (tens of
//! microseconds). Keyed by the text itself, not the path: a file changed on
//! disk since (by `bash`, by the user) has another text and misses, and
//! the guest's `Workspace` is made anew for each tool call.

use super::{Lang, parse_with};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::Sender;
use tree_sitter::{InputEdit, Point, Tree};

/// At most this many trees are kept (the files a turn is editing).
const KEPT: usize = 8;

/// A text larger than this is parsed but not kept: its tree would hold
/// memory for a file few turns edit twice.
const MAX_KEPT_BYTES: usize = 1 << 20;

/// The trees kept, the most recent last.
static RECENT: Mutex<Vec<(Lang, String, Tree)>> = Mutex::new(Vec::new());

/// Parses the file at `path` on a thread of its own and keeps its tree,
/// when it is source code: called after `read_file`, so that the edit that
/// usually follows reparses only around its change instead of the whole
/// file on the turn's path (the model takes far longer to answer than the
/// parse). One thread for all: reads in a row queue, never pile up.
pub(crate) fn warm(path: &std::path::Path) {
    static WORKER: std::sync::OnceLock<Option<Mutex<Sender<PathBuf>>>> = std::sync::OnceLock::new();
    if Lang::of(path).is_none() {
        return;
    }
    let worker = WORKER.get_or_init(|| {
        let (send, receive) = std::sync::mpsc::channel::<PathBuf>();
        let spawned = std::thread::Builder::new()
            .name("cortex-parse".into())
            .spawn(move || {
                for path in receive {
                    warm_now(&path);
                }
            });
        spawned.ok().map(|_| Mutex::new(send))
    });
    if let Some(send) = worker {
        let send = send.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // A worker gone (it cannot panic on a file) only loses the head start.
        let _ = send.send(path.to_path_buf());
    }
}

/// [`warm`] on this thread.
fn warm_now(path: &std::path::Path) {
    let Some(lang) = Lang::of(path) else {
        return;
    };
    let small = std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_KEPT_BYTES as u64);
    if let Some(text) = small.then(|| std::fs::read_to_string(path).ok()).flatten()
        && let Some(tree) = tree_of(lang, &text)
        && lang == Lang::Python
        && !tree.root_node().has_error()
    {
        // Each statement's findings and names kept: an edit re-checks only
        // what it changed.
        let _ = super::statements::python_rules(tree.root_node(), text.as_bytes());
        let _ = super::names::scan(&tree, text.as_bytes());
    }
}

/// `text` parsed as `lang`: the tree kept for it, or a new parse (kept).
pub(crate) fn tree_of(lang: Lang, text: &str) -> Option<Tree> {
    if let Some(tree) = kept(lang, text) {
        return Some(tree);
    }
    let tree = parse_with(lang, text.as_bytes(), None)?;
    keep(lang, text, &tree);
    Some(tree)
}

/// `new` parsed as `lang`, incrementally from the tree of `old` when one
/// is kept (the file's text before this change); kept in turn.
pub(crate) fn tree_after(lang: Lang, old: Option<&str>, new: &str) -> Option<Tree> {
    let old_tree = old.and_then(|old| Some((old, kept(lang, old)?)));
    let tree = match old_tree {
        Some((old, mut tree)) => {
            tree.edit(&change(old, new));
            parse_with(lang, new.as_bytes(), Some(&tree))?
        }
        None => parse_with(lang, new.as_bytes(), None)?,
    };
    keep(lang, new, &tree);
    Some(tree)
}

/// The tree kept for `text`, when there is one (a copy: editing it leaves
/// the kept one as it was).
fn kept(lang: Lang, text: &str) -> Option<Tree> {
    let recent = RECENT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    recent
        .iter()
        .rev()
        .find(|(l, t, _)| *l == lang && t.len() == text.len() && t == text)
        .map(|(_, _, tree)| tree.clone())
}

fn keep(lang: Lang, text: &str, tree: &Tree) {
    if text.len() > MAX_KEPT_BYTES {
        return;
    }
    let mut recent = RECENT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    recent.retain(|(l, t, _)| !(*l == lang && t == text));
    if recent.len() >= KEPT {
        recent.remove(0);
    }
    recent.push((lang, text.to_owned(), tree.clone()));
}

/// The edit that turns `old` into `new`: what lies between their common
/// start and their common end.
fn change(old: &str, new: &str) -> InputEdit {
    let (old_bytes, new_bytes) = (old.as_bytes(), new.as_bytes());
    let start = old_bytes
        .iter()
        .zip(new_bytes)
        .take_while(|(a, b)| a == b)
        .count();
    let room = old_bytes.len().min(new_bytes.len()) - start;
    let end = old_bytes
        .iter()
        .rev()
        .zip(new_bytes.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let old_end = old_bytes.len() - end;
    let new_end = new_bytes.len() - end;
    InputEdit {
        start_byte: start,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point(old_bytes, start),
        old_end_position: point(old_bytes, old_end),
        new_end_position: point(new_bytes, new_end),
    }
}

/// The row and byte column of byte `at` of `text`.
fn point(text: &[u8], at: usize) -> Point {
    let before = text.get(..at).unwrap_or(text);
    let row = memchr::memchr_iter(b'\n', before).count();
    let column = before.len() - memchr::memrchr(b'\n', before).map_or(0, |n| n + 1);
    Point { row, column }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_change_is_what_lies_between_the_common_ends() {
        let edit = change("ab\ncd\nef", "ab\ncXd\nef");
        assert_eq!(
            (edit.start_byte, edit.old_end_byte, edit.new_end_byte),
            (4, 4, 5)
        );
        assert_eq!(edit.start_position, Point { row: 1, column: 1 });
        // A repeated text: the common end never overlaps the common start.
        let edit = change("aaaa", "aaaaaa");
        assert_eq!(
            (edit.start_byte, edit.old_end_byte, edit.new_end_byte),
            (4, 4, 6)
        );
        let edit = change("x = 1\n", "");
        assert_eq!((edit.start_byte, edit.old_end_byte), (0, 6));
    }

    #[test]
    fn a_file_read_is_kept_for_its_edit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("warm.py");
        let text = "def warmed():\n    return 'read before its edit'\n";
        std::fs::write(&path, text).expect("write");
        assert!(kept(Lang::Python, text).is_none());
        warm_now(&path);
        assert!(kept(Lang::Python, text).is_some());
        // Not source code, or too large: nothing parsed.
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, text).expect("write");
        warm_now(&notes);
        let big = dir.path().join("big.py");
        let big_text = "x = 1\n".repeat(MAX_KEPT_BYTES / 6 + 1);
        std::fs::write(&big, &big_text).expect("write");
        warm_now(&big);
        assert!(kept(Lang::Python, &big_text).is_none());
    }

    #[test]
    fn an_edit_of_a_kept_text_parses_as_a_fresh_parse_would() {
        let old = "def f(a):\n    return a\n\n\ndef g():\n    pass\n";
        let tree = tree_of(Lang::Python, old).expect("parsed");
        assert!(!tree.root_node().has_error());
        for new in [
            "def f(a):\n    return a +\n\n\ndef g():\n    pass\n",
            "def f(a):\n    return a + 1\n\n\ndef g():\n    pass\n",
            "",
        ] {
            let incremental = tree_after(Lang::Python, Some(old), new).expect("parsed");
            let fresh = parse_with(Lang::Python, new.as_bytes(), None).expect("parsed");
            assert_eq!(
                incremental.root_node().to_sexp(),
                fresh.root_node().to_sexp(),
                "{new:?}"
            );
        }
    }

    /// A module of `functions` small functions, each ending in a dedent.
    fn module(functions: usize) -> String {
        let mut text = String::from("import os\n\n");
        for i in 0..functions {
            text.push_str(&format!(
                "def step_{i}(a, b):\n    total = a + b\n    if total > 5:\n        return total + 30\n    return total\n\n\n"
            ));
        }
        text
    }

    #[test]
    fn an_edit_near_the_top_reuses_the_statements_after_it() {
        // Upstream tree-sitter skipped every node after an edit of a Python
        // file (vendor/README.md): the whole rest was parsed again, and its
        // log named no function reused.
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let old = module(40);
        let new = old.replacen("total + 30", "total - 9", 1);
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&Lang::Python.grammar())
            .expect("the grammar loads");
        let mut tree = parser.parse(&old, None).expect("parsed");
        tree.edit(&change(&old, &new));
        let reused = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&reused);
        parser.set_logger(Some(Box::new(move |_, message: &str| {
            if message.starts_with("reuse_node symbol:function_definition") {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        })));
        let incremental = parser.parse(&new, Some(&tree)).expect("parsed");
        parser.set_logger(None);
        let fresh = parse_with(Lang::Python, new.as_bytes(), None).expect("parsed");
        assert_eq!(
            incremental.root_node().to_sexp(),
            fresh.root_node().to_sexp()
        );
        // Of the 39 functions after the edited one, every other one comes
        // back whole (the one after it starts in a parse state that lexes
        // its `def` anew, and reuses what is inside).
        let reused = reused.load(Ordering::Relaxed);
        assert!(
            reused >= 15,
            "{reused} of the 39 functions after the edit reused"
        );
    }

    #[test]
    fn random_edits_parse_as_a_fresh_parse_would() {
        // Deterministic edits of every kind that moves Python's scanner
        // state: newlines, indentation, brackets, quotes, backslashes.
        const PIECES: [&str; 12] = [
            "\n",
            "    ",
            "\"\"\"",
            "'",
            "(",
            ")",
            "\n    x = 1\n",
            "if x:\n",
            "else:\n",
            "\\\n",
            "#",
            "\n\n",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |below: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % below.max(1) as u64).unwrap_or(0)
        };
        let mut text = module(12);
        for _ in 0..300 {
            let start = next(text.len() + 1);
            let end = (start + next(30)).min(text.len());
            let piece = match next(3) {
                0 => String::new(),
                1 => PIECES[next(PIECES.len())].to_owned(),
                _ => {
                    let from = next(text.len());
                    text[from..(from + next(50)).min(text.len())].to_owned()
                }
            };
            if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
                continue;
            }
            let new = format!("{}{piece}{}", &text[..start], &text[end..]);
            tree_of(Lang::Python, &text).expect("parsed");
            let incremental = tree_after(Lang::Python, Some(&text), &new).expect("parsed");
            let fresh = parse_with(Lang::Python, new.as_bytes(), None).expect("parsed");
            assert_eq!(
                incremental.root_node().to_sexp(),
                fresh.root_node().to_sexp(),
                "{new:?}"
            );
            text = new;
        }
    }
}
