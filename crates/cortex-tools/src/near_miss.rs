//! Where an `old_string` that did not match may have been meant to match.
//!
//! A model that edits from memory writes an `old_string` the file does not
//! contain, and small models then give up or describe the fix in prose. The
//! error shows the text that is there instead: a short file whole, otherwise
//! the lines most like the first line of `old_string`.

/// A file this small is shown whole.
const WHOLE_FILE_BYTES: usize = 1500;
const WHOLE_FILE_LINES: usize = 40;
const WHOLE_FILE_HINT: &str =
    "For a file this short, write_file with the whole corrected content works too.";
/// Lines shown from a larger file.
const MAX_LINES: usize = 3;
/// Shown lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 200;

/// The sentence appended to the "old_string not found" error (starting with
/// a space), or an empty string when nothing in `content` looks similar.
pub(crate) fn where_it_may_be(content: &str, old_string: &str) -> String {
    if content.trim().is_empty() {
        return " The file is empty.".to_owned();
    }
    if content.len() <= WHOLE_FILE_BYTES && content.lines().count() <= WHOLE_FILE_LINES {
        // Small models that cannot copy a line exactly still manage a whole
        // short file (the task set, docs/BENCHMARKS.md).
        return format!(" The file's current content:\n{content}\n{WHOLE_FILE_HINT}");
    }
    let Some(first) = old_string.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return String::new();
    };
    let wanted = words(first);
    let mut scored: Vec<(usize, usize, &str)> = content
        .lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let have = words(line);
            let shared = wanted.iter().filter(|w| have.contains(w)).count();
            (shared > 0).then_some((shared, i + 1, line))
        })
        .collect();
    if scored.is_empty() {
        return String::new();
    }
    // Most shared words first; among equals, the earliest line.
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(MAX_LINES);
    scored.sort_by_key(|s| s.1);
    let mut text = " Similar lines in the file:".to_owned();
    for (_, number, line) in scored {
        let cut: String = line.chars().take(MAX_LINE_CHARS).collect();
        text.push_str(&format!("\nline {number}: {cut}"));
    }
    text
}

/// The identifier-like words of a line.
fn words(line: &str) -> Vec<&str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_file_is_shown_whole() {
        let content = "def add(a, b):\n    return a - b\n";
        assert_eq!(
            where_it_may_be(content, "result = 5"),
            format!(" The file's current content:\n{content}\n{WHOLE_FILE_HINT}")
        );
    }

    #[test]
    fn a_long_file_shows_the_most_similar_lines() {
        let mut content = String::new();
        for i in 0..100 {
            content.push_str(&format!("let value_{i} = compute({i});\n"));
            if i % 10 == 0 {
                content.push_str("items.clear();\n");
            }
        }
        content.push_str("fn total(items: &[u32]) -> u32 {\n");
        let hint = where_it_may_be(&content, "fn total(items: &[u64]) -> u64 {\n    0\n}");
        assert!(hint.starts_with(" Similar lines in the file:\n"), "{hint}");
        // The best match, then the earliest of the lines sharing one word.
        let lines: Vec<&str> = hint.lines().collect();
        assert_eq!(
            lines[1..],
            [
                "line 2: items.clear();",
                "line 13: items.clear();",
                "line 111: fn total(items: &[u32]) -> u32 {"
            ]
        );
    }

    #[test]
    fn nothing_similar_adds_nothing() {
        let content = "alpha\n".repeat(200);
        assert_eq!(where_it_may_be(&content, "beta gamma"), "");
        assert_eq!(where_it_may_be("", "beta"), " The file is empty.");
    }
}
