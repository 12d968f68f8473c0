//! Validating a plan's Markdown: it must carry a mermaid diagram that the UI
//! can render. The errors are written for the model, saying what to add.

/// Diagram types mermaid understands, as the first word of a diagram.
const DIAGRAM_TYPES: &[&str] = &[
    "flowchart",
    "graph",
    "sequenceDiagram",
    "classDiagram",
    "stateDiagram",
    "stateDiagram-v2",
    "erDiagram",
    "journey",
    "gantt",
    "pie",
    "quadrantChart",
    "requirementDiagram",
    "gitGraph",
    "mindmap",
    "timeline",
    "C4Context",
    "sankey-beta",
    "xychart-beta",
    "block-beta",
    "kanban",
    "architecture-beta",
    "packet-beta",
];

const EXAMPLE: &str = "```mermaid\nflowchart TD\n  A-->B\n```";

/// What a plan lacks; its message is written for the model to act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// No fenced block with the info string `mermaid`.
    #[error("the plan has no ```mermaid block; add one with a diagram, e.g. {EXAMPLE}")]
    NoDiagram,
    /// The mermaid block has nothing but blank lines, front matter and `%%`
    /// comments.
    #[error("the mermaid block is empty; put a diagram in it, e.g. {EXAMPLE}")]
    EmptyDiagram,
    /// The first line after front matter and `%%` comments does not start with a
    /// known diagram type; the field is that whole line.
    #[error(
        "the mermaid block does not declare a diagram type on its first line (found `{0}`); \
         start it with flowchart TD, sequenceDiagram, classDiagram, stateDiagram-v2, erDiagram, \
         gantt or another mermaid diagram type"
    )]
    NoDiagramType(String),
    /// The block is not closed; the field is the fence that would close it.
    #[error("the ```mermaid block is not closed; end the diagram with a line containing only {0}")]
    Unclosed(String),
}

/// An opening code fence: its character, length and info string.
pub(crate) struct Fence<'a> {
    ch: char,
    len: usize,
    info: &'a str,
}

pub(crate) fn opening_fence(line: &str) -> Option<Fence<'_>> {
    let trimmed = line.trim_start();
    let ch = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|c| *c == ch).count();
    if len < 3 {
        return None;
    }
    let info = trimmed[len..].trim();
    // CommonMark: a backtick fence's info string may not contain backticks.
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some(Fence { ch, len, info })
}

pub(crate) fn closes(fence: &Fence<'_>, line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.len() >= fence.len && trimmed.chars().all(|c| c == fence.ch)
}

fn is_mermaid(info: &str) -> bool {
    info.split_whitespace()
        .next()
        .is_some_and(|word| word.eq_ignore_ascii_case("mermaid"))
}

/// Check the body of one mermaid block: its first meaningful line must name a
/// diagram type.
fn check_body(body: &[&str]) -> Result<(), PlanError> {
    let mut lines = body.iter().map(|l| l.trim()).filter(|l| !l.is_empty());
    let mut first = lines.next();
    // Optional front matter (`---` … `---`) comes before the diagram.
    if first == Some("---") {
        first = lines
            .by_ref()
            .find(|l| *l == "---")
            .and_then(|_| lines.next());
    }
    while let Some(line) = first {
        if !line.starts_with("%%") {
            break;
        }
        first = lines.next();
    }
    let Some(line) = first else {
        return Err(PlanError::EmptyDiagram);
    };
    let word = line.split_whitespace().next().unwrap_or_default();
    if DIAGRAM_TYPES.contains(&word) {
        Ok(())
    } else {
        Err(PlanError::NoDiagramType(line.to_owned()))
    }
}

/// A plan must contain a ```mermaid block whose first non-empty line declares
/// a diagram type (flowchart, graph, sequenceDiagram, …). The error says what
/// is missing, for the model to fix.
pub fn validate_plan(markdown: &str) -> Result<(), PlanError> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut found = false;
    let mut i = 0;
    while i < lines.len() {
        let Some(fence) = opening_fence(lines[i]) else {
            i += 1;
            continue;
        };
        let end = lines[i + 1..]
            .iter()
            .position(|l| closes(&fence, l))
            .map(|p| i + 1 + p);
        let mermaid = is_mermaid(fence.info);
        match end {
            Some(end) => {
                if mermaid {
                    found = true;
                    check_body(&lines[i + 1..end])?;
                }
                i = end + 1;
            }
            None if mermaid => {
                let fence_text: String = std::iter::repeat_n(fence.ch, fence.len).collect();
                return Err(PlanError::Unclosed(fence_text));
            }
            // An unclosed non-mermaid fence runs to the end of the document.
            None => break,
        }
    }
    if found {
        Ok(())
    } else {
        Err(PlanError::NoDiagram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_known_diagrams() {
        for (md, why) in [
            (
                "# Plan\n1. a\n```mermaid\nflowchart TD\n  A-->B\n```\n",
                "flowchart",
            ),
            ("```Mermaid\ngraph LR\nA-->B\n```", "case-insensitive info"),
            (
                "  ~~~mermaid\n  sequenceDiagram\n  A->>B: hi\n  ~~~",
                "tilde, indented",
            ),
            (
                "```mermaid\n\n%% comment\n%%{init: {}}%%\nstateDiagram-v2\n```",
                "comments",
            ),
            (
                "```mermaid\n---\ntitle: x\n---\nerDiagram\n```",
                "front matter",
            ),
            ("````mermaid\ngantt\n````", "long fence"),
            ("```mermaid\nC4Context\n```", "C4"),
        ] {
            assert_eq!(validate_plan(md), Ok(()), "{why}");
        }
    }

    #[test]
    fn missing_block_is_explained() {
        let err = validate_plan("# Plan\n1. do it")
            .expect_err("no block")
            .to_string();
        assert!(err.contains("no ```mermaid block"), "{err}");
        assert!(err.contains("flowchart TD"), "{err}");
        let err = validate_plan("```rust\nfn main() {}\n```")
            .expect_err("rust block")
            .to_string();
        assert!(err.contains("no ```mermaid block"), "{err}");
    }

    #[test]
    fn missing_diagram_type_is_explained() {
        let err = validate_plan("```mermaid\nA-->B\n```")
            .expect_err("no type")
            .to_string();
        assert!(err.contains("found `A-->B`"), "{err}");
        assert!(err.contains("sequenceDiagram"), "{err}");
        let err = validate_plan("```mermaid\nflowchartTD\n```")
            .expect_err("glued")
            .to_string();
        assert!(err.contains("flowchartTD"), "{err}");
        let err = validate_plan("```mermaid\n\n%% only\n```")
            .expect_err("empty")
            .to_string();
        assert!(err.contains("empty"), "{err}");
    }

    #[test]
    fn unclosed_fence_is_explained() {
        let err = validate_plan("```mermaid\nflowchart TD\nA-->B\n")
            .expect_err("unclosed")
            .to_string();
        assert!(err.contains("not closed"), "{err}");
    }

    #[test]
    fn mermaid_inside_another_block_does_not_count() {
        let md = "````markdown\n```mermaid\nflowchart TD\n```\n````";
        assert!(validate_plan(md).is_err());
    }

    #[test]
    fn every_mermaid_block_must_be_valid() {
        let md = "```mermaid\nflowchart TD\n```\n```mermaid\nnope\n```";
        assert!(validate_plan(md).is_err());
    }
}
