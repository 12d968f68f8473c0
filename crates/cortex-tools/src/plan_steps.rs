//! The steps of a plan: its top-level numbered list (`1. …`, `2) …`) or,
//! when it has none, its checklist (`- [ ] …`). Code blocks (the mermaid
//! diagram among them) are skipped, so a diagram line never becomes a step.

use crate::plan::{closes, opening_fence};

/// One step of a plan, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStep {
    /// The item's text after its marker (`1.`, `- [ ]`), trimmed.
    pub title: String,
    /// A checklist item written as done (`- [x] …`).
    pub done: bool,
}

/// The plan's steps, in order; empty when it has neither list.
pub fn plan_steps(markdown: &str) -> Vec<PlanStep> {
    let lines = outside_code_blocks(markdown);
    let numbered: Vec<PlanStep> = lines.iter().filter_map(|l| numbered_item(l)).collect();
    if !numbered.is_empty() {
        return numbered;
    }
    lines.iter().filter_map(|l| checklist_item(l)).collect()
}

/// The top-level checklist items (`- [ ] …`, `* [x] …`) alone, in order:
/// a spec's tasks.
pub fn checklist(markdown: &str) -> Vec<PlanStep> {
    outside_code_blocks(markdown)
        .iter()
        .filter_map(|l| checklist_item(l))
        .collect()
}

/// The lines that are not inside a fenced code block.
pub(crate) fn outside_code_blocks(markdown: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        match opening_fence(line) {
            // An unclosed fence runs to the end of the document.
            Some(fence) => for _ in lines.by_ref().take_while(|l| !closes(&fence, l)) {},
            None => out.push(line),
        }
    }
    out
}

/// A top-level item: at most three spaces of indentation, as CommonMark.
fn top_level(line: &str) -> Option<&str> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    (indent <= 3).then(|| &line[indent..])
}

fn numbered_item(line: &str) -> Option<PlanStep> {
    let rest = top_level(line)?;
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    // CommonMark: at most nine digits.
    if digits == 0 || digits > 9 {
        return None;
    }
    let rest = rest[digits..]
        .strip_prefix('.')
        .or_else(|| rest[digits..].strip_prefix(')'))?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    // A numbered checklist item (`1. [x] …`) keeps its state.
    checklist_body(rest.trim()).unwrap_or_else(|| step(rest.trim(), false))
}

fn checklist_item(line: &str) -> Option<PlanStep> {
    let rest = top_level(line)?;
    let rest = rest.strip_prefix(['-', '*', '+'])?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    checklist_body(rest.trim())?
}

/// `[ ] text` or `[x] text`: `Some(None)` for an empty item.
fn checklist_body(text: &str) -> Option<Option<PlanStep>> {
    let (done, rest) = if let Some(rest) = text.strip_prefix("[ ]") {
        (false, rest)
    } else if let Some(rest) = text
        .strip_prefix("[x]")
        .or_else(|| text.strip_prefix("[X]"))
    {
        (true, rest)
    } else {
        return None;
    };
    Some(step(rest.trim(), done))
}

fn step(title: &str, done: bool) -> Option<PlanStep> {
    (!title.is_empty()).then(|| PlanStep {
        title: title.to_owned(),
        done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn titles(md: &str) -> Vec<String> {
        plan_steps(md).into_iter().map(|s| s.title).collect()
    }

    #[test]
    fn numbered_items_are_the_steps() {
        let md = "# Fix add\nIntro.\n\n1. Read `calc.py`\n2) Change `-` to `+`\n   - a detail\n10. Run the test\n\n```mermaid\nflowchart TD\n1. not a step\n```\n";
        assert_eq!(
            titles(md),
            ["Read `calc.py`", "Change `-` to `+`", "Run the test"]
        );
    }

    #[test]
    fn a_checklist_when_there_is_no_numbered_list() {
        let md = "## Tasks\n- [ ] write the parser\n* [x] add the event\n- plain bullet\n- [ ]\n";
        assert_eq!(
            plan_steps(md),
            [
                PlanStep {
                    title: "write the parser".into(),
                    done: false
                },
                PlanStep {
                    title: "add the event".into(),
                    done: true
                },
            ]
        );
    }

    #[test]
    fn not_steps() {
        for md in [
            "",
            "no list at all",
            "1.no space",
            "    1. indented code",
            "1234567890. too many digits",
            "```\n1. in a block\n```",
            "~~~\n1. in an unclosed block",
            "-[ ] glued",
        ] {
            assert!(plan_steps(md).is_empty(), "{md:?}");
        }
        assert_eq!(titles("1. [x] done already"), ["done already"]);
        assert!(plan_steps("1. [x] done")[0].done);
    }
}
