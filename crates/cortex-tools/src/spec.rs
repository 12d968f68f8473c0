//! Validating a spec phase's Markdown and naming the spec's folder. The
//! errors are written for the model, saying what to add.
//!
//! - requirements: at least one acceptance criterion in the EARS form
//!   `WHEN … THE SYSTEM SHALL …`, and a first heading (it names the folder);
//! - design: a valid mermaid diagram (the plan's check, [`validate_plan`]);
//! - tasks: at least one checkbox item `- [ ] …`.

use crate::plan::{PlanError, validate_plan};
use crate::plan_steps::{checklist, outside_code_blocks};
use cortex_protocol::SpecPhase;

/// The longest folder name a spec gets.
const MAX_SLUG: usize = 60;

/// What a spec phase lacks; its message is written for the model to act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Requirements without a `WHEN … THE SYSTEM SHALL …` line.
    #[error(
        "the requirements have no acceptance criterion; write user stories, each with criteria \
         of the form `WHEN <event> THE SYSTEM SHALL <response>` (on one line)"
    )]
    NoCriterion,
    /// Requirements without a first heading to name the spec's folder.
    #[error(
        "the requirements need a first heading naming the feature in letters or digits \
         (e.g. `# CSV export`); it names the spec's folder"
    )]
    NoTitle,
    /// The design's mermaid diagram does not validate.
    #[error("the design's diagram: {0}")]
    Design(PlanError),
    /// Tasks without a `- [ ]` item.
    #[error("the tasks have no checkbox item; list them as `- [ ] <task>`, one per line")]
    NoTasks,
}

/// Check `markdown` as the document of `phase`.
pub fn validate_spec(phase: SpecPhase, markdown: &str) -> Result<(), SpecError> {
    match phase {
        SpecPhase::Requirements => {
            if !outside_code_blocks(markdown)
                .iter()
                .any(|l| is_criterion(l))
            {
                return Err(SpecError::NoCriterion);
            }
            spec_slug(markdown).map(drop).ok_or(SpecError::NoTitle)
        }
        SpecPhase::Design => validate_plan(markdown).map_err(SpecError::Design),
        SpecPhase::Tasks => {
            if checklist(markdown).iter().any(|t| !t.done) {
                Ok(())
            } else {
                Err(SpecError::NoTasks)
            }
        }
    }
}

/// `WHEN` then `THE SYSTEM SHALL`, as words, in this order on one line.
fn is_criterion(line: &str) -> bool {
    let upper = line.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let Some(when) = words.iter().position(|w| *w == "WHEN") else {
        return false;
    };
    words[when + 1..]
        .windows(3)
        .any(|w| w == ["THE", "SYSTEM", "SHALL"])
}

/// The spec's folder name from the requirements' first heading: lower-case
/// ASCII letters, digits and single `-`, at most [`MAX_SLUG`] bytes. `None`
/// when there is no heading or it has no letter or digit. It can never hold
/// `/` or `..`, so `specs/<slug>/` stays one folder under `specs/`.
pub fn spec_slug(requirements: &str) -> Option<String> {
    let heading = outside_code_blocks(requirements)
        .into_iter()
        .find_map(|l| {
            let trimmed = l.trim_start_matches(' ');
            let hashes = trimmed.chars().take_while(|c| *c == '#').count();
            let rest = &trimmed[hashes..];
            ((1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with([' ', '\t'])))
                .then_some(rest)
        })?;
    let mut slug = String::new();
    for c in heading.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
        if slug.len() >= MAX_SLUG {
            break;
        }
    }
    let slug = slug.trim_end_matches('-').to_owned();
    (!slug.is_empty()).then_some(slug)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQ: &str = "# CSV export\n## Story\nAs a user I want CSV.\n- WHEN the user clicks Export THE SYSTEM SHALL download a CSV file\n";

    #[test]
    fn requirements_need_a_criterion_and_a_title() {
        assert_eq!(validate_spec(SpecPhase::Requirements, REQ), Ok(()));
        let lower = "# X\nwhen asked, the system shall answer";
        assert_eq!(validate_spec(SpecPhase::Requirements, lower), Ok(()));
        for (md, want) in [
            ("# X\nThe system shall export.", SpecError::NoCriterion),
            (
                "# X\nTHE SYSTEM SHALL export WHEN asked",
                SpecError::NoCriterion,
            ),
            (
                "# X\nWHENEVER it rains THE SYSTEM SHALL x",
                SpecError::NoCriterion,
            ),
            (
                "# X\n```\nWHEN a THE SYSTEM SHALL b\n```",
                SpecError::NoCriterion,
            ),
            ("WHEN a THE SYSTEM SHALL b", SpecError::NoTitle),
            ("# ../..\nWHEN a THE SYSTEM SHALL b", SpecError::NoTitle),
        ] {
            assert_eq!(
                validate_spec(SpecPhase::Requirements, md),
                Err(want),
                "{md}"
            );
        }
        let err = SpecError::NoCriterion.to_string();
        assert!(err.contains("WHEN <event> THE SYSTEM SHALL"), "{err}");
    }

    #[test]
    fn design_needs_a_mermaid_diagram() {
        let ok = "# Design\n```mermaid\nflowchart TD\n A-->B\n```";
        assert_eq!(validate_spec(SpecPhase::Design, ok), Ok(()));
        let err = validate_spec(SpecPhase::Design, "# Design\nno diagram")
            .expect_err("no diagram")
            .to_string();
        assert!(err.contains("```mermaid"), "{err}");
        assert!(validate_spec(SpecPhase::Design, "```mermaid\nA-->B\n```").is_err());
    }

    #[test]
    fn tasks_need_an_open_checkbox() {
        assert_eq!(
            validate_spec(SpecPhase::Tasks, "# Tasks\n- [ ] write it\n"),
            Ok(())
        );
        for md in [
            "# Tasks\n1. write it",
            "- [x] done",
            "```\n- [ ] in code\n```",
            "",
        ] {
            assert_eq!(
                validate_spec(SpecPhase::Tasks, md),
                Err(SpecError::NoTasks),
                "{md}"
            );
        }
    }

    #[test]
    fn slugs_are_one_safe_folder() {
        for (md, want) in [
            (REQ, Some("csv-export")),
            (
                "intro\n## Requirements: Fast `grep` (v2)!\n",
                Some("requirements-fast-grep-v2"),
            ),
            ("# ../../etc/passwd", Some("etc-passwd")),
            ("#   Ünïcode title 42", Some("n-code-title-42")),
            ("# /", None),
            ("#nospace", None),
            ("no heading", None),
        ] {
            assert_eq!(spec_slug(md).as_deref(), want, "{md}");
        }
        let long = format!("# {}", "a".repeat(200));
        assert_eq!(spec_slug(&long).map(|s| s.len()), Some(MAX_SLUG));
        let slug = spec_slug("# a/b\\c..d").expect("slug");
        assert!(slug.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
        assert!(!slug.contains(".."));
    }
}
