//! An answer to a question that counts files ("How many .py files are in
//! the src folder?") whose number is not the count of the paths the turn's
//! last `glob` listed: the 0.5B answered "There are 4 .py files" after a
//! glob that listed three.

use super::TurnWork;
use super::words::counted_files_pattern;

/// How the glob tool says it matched nothing.
const NONE_MATCHED: &str = "No files matched";

/// The paths a successful `glob` listed, from its `output`; `None` when it
/// did not list them all ("(N more not shown)").
pub(super) fn listed_paths(output: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.iter().any(|l| l.contains("more not shown")) {
        return None;
    }
    Some(
        lines
            .into_iter()
            .filter(|l| !l.starts_with('(') && *l != NONE_MATCHED)
            .map(str::to_owned)
            .collect(),
    )
}

/// The first number written in digits in `answer`, standing alone (not the
/// `1` of `file1.py`).
pub(super) fn first_number(answer: &str) -> Option<usize> {
    answer
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '.')
        .map(|w| w.trim_end_matches('.'))
        .find(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()))
        .and_then(|w| w.parse().ok())
}

impl TurnWork {
    /// The reminder for an answer to a question that counts files whose
    /// number is not how many paths the turn's last glob listed.
    pub(super) fn miscounted(&self, answer: &str) -> Option<crate::steer::Said> {
        counted_files_pattern(&self.prompt)?;
        let listed = self.listing.as_ref()?;
        let said = first_number(answer)?;
        if said == listed.len() {
            return None;
        }
        let paths = if listed.is_empty() {
            "none".to_owned()
        } else {
            listed.join(", ")
        };
        Some(crate::steer::Said::words(format!(
            "Your answer says {said}, and the glob you ran listed {} paths ({paths}). Answer \
             again with the number of paths it listed; if its pattern was not the files the \
             question asks about, call glob with the right one first.",
            listed.len()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::{first_number, listed_paths};

    #[test]
    fn a_listing_is_its_paths_unless_some_are_not_shown() {
        assert_eq!(
            listed_paths("src/a.py\nsrc/b.py\n(1 folders not searched: x)"),
            Some(vec!["src/a.py".to_owned(), "src/b.py".to_owned()])
        );
        assert_eq!(listed_paths("No files matched"), Some(Vec::new()));
        assert_eq!(listed_paths("a.py\n(3 more not shown)"), None);
    }

    #[test]
    fn the_number_of_an_answer_stands_alone() {
        assert_eq!(first_number("There are 4 .py files."), Some(4));
        assert_eq!(first_number("file1.py and file2.py: 2"), Some(2));
        assert_eq!(first_number("3."), Some(3));
        assert_eq!(first_number("three"), None);
    }
}
