//! `edit_file` in the line-range format ([`cortex_protocol::EditFormat::Lines`]):
//! lines `start_line..=end_line` replaced by `new_text`.
//!
//! A small model writes `old_string` from memory and misses; it copies the
//! line numbers `read_file` (or the files in the prompt) showed it. The
//! result echoes the lines it replaced, so a call made from a stale view
//! shows what it hit, and the new numbering around the change, so the next
//! edit can use numbers that are true now.

use crate::edit::{plural, unified_diff, with_notes};
use crate::open::write_regular;
use crate::read::{read_text, render_line};
use crate::{ToolError, Workspace, Written};
use cortex_protocol::EditLinesArgs;

/// A file of at most this many lines is shown whole after the edit; a
/// longer one as a window around the change.
const SHOW_WHOLE_LINES: usize = 60;
/// Lines of context around the change in a longer file.
const WINDOW: usize = 3;

impl Workspace {
    /// Replace lines `start_line..=end_line` (1-based) with `new_text`;
    /// `end_line = start_line - 1` inserts before `start_line`.
    pub fn edit_lines(&self, args: &EditLinesArgs) -> Result<Written, ToolError> {
        let path = self.resolve_for_write(&args.path)?;
        let shown = self.display(&path);
        let old = match read_text(&path, &shown) {
            Err(ToolError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Err(self.not_found(shown));
            }
            other => other?,
        };
        let lines: Vec<&str> = old.split_inclusive('\n').collect();
        let (start, end) = range(args, lines.len(), &shown)?;
        let (new_text, unnumbered) = strip_line_numbers(&args.new_text);
        let replaced: String = lines[start - 1..end].concat();
        let (new_text, reindented) = match indent_like(&new_text, &replaced) {
            Some(indented) => (indented, true),
            None => (new_text, false),
        };
        let mut new_part = new_text.clone();
        // The new text ends its last line unless it is empty or replaces the
        // file's unterminated last line.
        let keeps_unterminated = end == lines.len() && !old.ends_with('\n') && end >= start;
        if !new_part.is_empty() && !new_part.ends_with('\n') && !keeps_unterminated {
            new_part.push('\n');
        }
        if replaced == new_part {
            return Err(ToolError::Invalid(format!(
                "new_text is what lines {start}-{end} of {shown} already hold; nothing would change"
            )));
        }
        let mut before = lines[..start - 1].concat();
        // Appending after an unterminated last line ends that line first.
        if start > lines.len() && !before.is_empty() && !before.ends_with('\n') {
            before.push('\n');
        }
        let new = [before, new_part.clone(), lines[end..].concat()].concat();
        write_regular(&path, &shown, &new)?;
        let added = new_part.split_inclusive('\n').count();
        let mut summary = summary(&shown, start, end, &replaced, added, &new);
        if unnumbered {
            summary.push_str("\n(The line numbers at the start of new_text's lines were removed.)");
        }
        if reindented {
            summary.push_str(
                "\n(new_text had no indentation; it was indented as the lines it replaced were.)",
            );
        }
        Ok(Written {
            summary: with_notes(
                summary,
                self.notes_after_write(&path, &shown, Some(&old), &new),
            ),
            diff: unified_diff(&shown, &old, &new),
        })
    }
}

/// The 1-based inclusive range, checked against a file of `total` lines.
fn range(args: &EditLinesArgs, total: usize, shown: &str) -> Result<(usize, usize), ToolError> {
    let start = usize::try_from(args.start_line).unwrap_or(usize::MAX);
    let end = usize::try_from(args.end_line).unwrap_or(usize::MAX);
    let invalid = |why: String| {
        Err(ToolError::Invalid(format!(
            "{why}; `{shown}` has {total} lines. Give start_line and end_line as read_file numbers them \
             (end_line = start_line - 1 inserts before start_line)."
        )))
    };
    if start == 0 {
        return invalid("start_line is 1-based; 0 is not a line".to_owned());
    }
    if start > total + 1 {
        return invalid(format!("start_line {start} is past the end"));
    }
    if end.saturating_add(1) < start {
        return invalid(format!("end_line {end} is before start_line {start}"));
    }
    if end > total {
        return invalid(format!("end_line {end} is past the end"));
    }
    Ok((start, end))
}

/// `new_text` without the `read_file` numbering a small model sometimes
/// copies with the lines (`     3\tx = 1`): stripped when every non-empty
/// line carries it. Also says whether it did.
fn strip_line_numbers(text: &str) -> (String, bool) {
    use crate::read::shown_line as unnumbered;
    let numbered = text
        .split_inclusive('\n')
        .filter(|l| !l.trim().is_empty())
        .all(|l| unnumbered(l).is_some());
    if !numbered || text.trim().is_empty() {
        return (text.to_owned(), false);
    }
    let stripped = text
        .split_inclusive('\n')
        .map(|l| unnumbered(l).unwrap_or(l))
        .collect();
    (stripped, true)
}

/// `new_text` indented as the lines it replaces, when those are all indented
/// and no line of it is: a small model copies `    return a - b` as
/// `return a + b`, and the function loses its body. `None` to keep it as
/// written (an insertion, a replaced line at the margin, or any indentation
/// in `new_text`, which then says what the model meant).
fn indent_like(new_text: &str, replaced: &str) -> Option<String> {
    fn indent(line: &str) -> &str {
        &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
    }
    let mut old = replaced.lines().filter(|l| !l.trim().is_empty());
    let first = indent(old.next()?);
    if first.is_empty() || old.any(|l| !l.starts_with(first)) {
        return None;
    }
    let mut new = new_text.lines().filter(|l| !l.trim().is_empty()).peekable();
    if new.peek().is_none() || new.any(|l| !indent(l).is_empty()) {
        return None;
    }
    Some(
        new_text
            .split_inclusive('\n')
            .map(|l| {
                if l.trim().is_empty() {
                    l.to_owned()
                } else {
                    format!("{first}{l}")
                }
            })
            .collect(),
    )
}

/// What the model reads: the lines replaced, then the file's new numbering
/// (whole when short, else a window around the change).
fn summary(
    shown: &str,
    start: usize,
    end: usize,
    replaced: &str,
    added: usize,
    new: &str,
) -> String {
    let removed = end + 1 - start;
    let mut out = if removed == 0 {
        format!(
            "Inserted {} before line {start} of {shown}.",
            plural(added, "line", "lines")
        )
    } else {
        let mut s = format!(
            "Replaced lines {start}-{end} of {shown} ({}) with {}. The lines replaced were:\n",
            plural(removed, "line", "lines"),
            plural(added, "line", "lines")
        );
        for (i, line) in replaced.split_inclusive('\n').enumerate() {
            s.push_str(&render_line(
                (start + i) as u64,
                line.trim_end_matches(['\n', '\r']),
            ));
        }
        s.pop();
        s
    };
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let (from, to) = if new_lines.len() <= SHOW_WHOLE_LINES {
        (1, new_lines.len())
    } else {
        (
            start.saturating_sub(WINDOW).max(1),
            (start + added + WINDOW - 1).min(new_lines.len()),
        )
    };
    if removed != added && to < new_lines.len() {
        let (way, by) = if added > removed {
            ("down", added - removed)
        } else {
            ("up", removed - added)
        };
        out.push_str(&format!("\nLines after these moved {way} by {by}."));
    }
    if from <= to {
        out.push_str(&format!("\nNow lines {from}-{to} of {shown}:\n"));
        for (i, line) in new_lines[from - 1..to].iter().enumerate() {
            out.push_str(&render_line(
                (from + i) as u64,
                line.trim_end_matches(['\n', '\r']),
            ));
        }
        out.pop();
    } else {
        out.push_str(&format!("\n`{shown}` is now empty."));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(content: &str) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("a.py"), content).expect("write");
        let ws = Workspace::new(dir.path()).expect("workspace");
        (dir, ws)
    }

    fn edit(ws: &Workspace, start: u64, end: u64, text: &str) -> Result<Written, ToolError> {
        ws.edit_lines(&EditLinesArgs {
            path: "a.py".into(),
            start_line: start,
            end_line: end,
            new_text: text.into(),
        })
    }

    fn content(dir: &tempfile::TempDir) -> String {
        std::fs::read_to_string(dir.path().join("a.py")).expect("read")
    }

    #[test]
    fn replaces_inserts_deletes_and_echoes() {
        let (dir, ws) = ws("a = 1\nb = 2\nc = 3\n");
        let w = edit(&ws, 2, 2, "b = 20").expect("replace");
        assert_eq!(content(&dir), "a = 1\nb = 20\nc = 3\n");
        assert!(
            w.summary
                .contains("The lines replaced were:\n     2\tb = 2"),
            "{}",
            w.summary
        );
        assert!(
            w.summary.contains("     2\tb = 20\n     3\tc = 3"),
            "{}",
            w.summary
        );
        assert!(w.diff.contains("+b = 20"), "{}", w.diff);
        edit(&ws, 2, 1, "x = 0\n").expect("insert");
        assert_eq!(content(&dir), "a = 1\nx = 0\nb = 20\nc = 3\n");
        edit(&ws, 5, 4, "d = 4").expect("append");
        assert_eq!(content(&dir), "a = 1\nx = 0\nb = 20\nc = 3\nd = 4\n");
        edit(&ws, 1, 2, "").expect("delete");
        assert_eq!(content(&dir), "b = 20\nc = 3\nd = 4\n");
    }

    #[test]
    fn refuses_bad_ranges_and_no_ops_without_writing() {
        let (dir, ws) = ws("a = 1\nb = 2\n");
        for (start, end, why) in [
            (0, 1, "1-based"),
            (4, 4, "past the end"),
            (2, 3, "past the end"),
            (2, 0, "before start_line"),
        ] {
            let err = edit(&ws, start, end, "z").expect_err("bad range");
            assert!(err.to_string().contains(why), "{err}");
            assert!(err.to_string().contains("has 2 lines"), "{err}");
        }
        let err = edit(&ws, 1, 1, "a = 1").expect_err("no-op");
        assert!(err.to_string().contains("nothing would change"), "{err}");
        assert_eq!(content(&dir), "a = 1\nb = 2\n");
    }

    #[test]
    fn copied_line_numbers_are_removed_and_an_unterminated_end_is_kept() {
        let (dir, ws) = ws("a = 1\nb = 2");
        let w = edit(&ws, 2, 2, "     2\tb = 3").expect("edit");
        assert_eq!(content(&dir), "a = 1\nb = 3");
        assert!(w.summary.contains("were removed"), "{}", w.summary);
        // Digits that are code are kept.
        edit(&ws, 1, 1, "10 + 1\n").expect("edit");
        assert_eq!(content(&dir), "10 + 1\nb = 3");
        // Appending after an unterminated last line ends it first.
        edit(&ws, 3, 2, "c = 4").expect("append");
        assert_eq!(content(&dir), "10 + 1\nb = 3\nc = 4\n");
        let err = edit(&ws, 1, u64::MAX, "x").expect_err("huge end");
        assert!(err.to_string().contains("past the end"), "{err}");
    }

    #[test]
    fn new_text_without_indentation_takes_the_replaced_lines_indentation() {
        let (dir, ws) = ws("def add(a, b):\n    return a - b\n");
        let w = edit(&ws, 2, 2, "return a + b").expect("edit");
        assert_eq!(content(&dir), "def add(a, b):\n    return a + b\n");
        assert!(w.summary.contains("it was indented"), "{}", w.summary);
        // Any indentation in new_text is kept as written.
        edit(&ws, 2, 2, "  return a * b").expect("edit");
        assert_eq!(content(&dir), "def add(a, b):\n  return a * b\n");
        // A line at the margin, or an insertion, is not indented.
        edit(&ws, 1, 1, "def plus(a, b):").expect("edit");
        edit(&ws, 3, 2, "x = 1").expect("insert");
        assert_eq!(content(&dir), "def plus(a, b):\n  return a * b\nx = 1\n");
    }

    #[test]
    fn a_long_file_shows_a_window_and_the_shift() {
        let text: String = (1..=100).map(|i| format!("x{i}\n")).collect();
        let (_dir, ws) = ws(&text);
        let w = edit(&ws, 50, 50, "y1\ny2\n").expect("edit");
        assert!(
            w.summary.contains("Now lines 47-54 of a.py"),
            "{}",
            w.summary
        );
        assert!(w.summary.contains("moved down by 1"), "{}", w.summary);
        assert!(!w.summary.contains("x10\n"), "{}", w.summary);
    }
}
