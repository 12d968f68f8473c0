//! The spec tool's phases and arguments: Spec mode proposes a feature's
//! requirements, then its design, then its tasks, one phase at a time, each
//! waiting for the user's accept before the next.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One phase of a spec, in the order they are proposed: the requirements
/// (user stories with `WHEN … THE SYSTEM SHALL …` acceptance criteria),
/// the design (with a mermaid diagram), the tasks (a checkbox list). The
/// variants carry no doc comments of their own: those would go into the
/// tool's schema, which every request carries.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SpecPhase {
    Requirements,
    Design,
    Tasks,
}

impl SpecPhase {
    /// Every phase, in the order they are proposed.
    pub const ALL: [SpecPhase; 3] = [SpecPhase::Requirements, SpecPhase::Design, SpecPhase::Tasks];

    /// The wire name: `requirements`, `design` or `tasks`.
    pub fn as_str(self) -> &'static str {
        match self {
            SpecPhase::Requirements => "requirements",
            SpecPhase::Design => "design",
            SpecPhase::Tasks => "tasks",
        }
    }

    /// The phase proposed after this one is accepted; `None` after tasks.
    pub fn next(self) -> Option<SpecPhase> {
        match self {
            SpecPhase::Requirements => Some(SpecPhase::Design),
            SpecPhase::Design => Some(SpecPhase::Tasks),
            SpecPhase::Tasks => None,
        }
    }

    /// The file the accepted phase is written to (`specs/<slug>/…`).
    pub fn file_name(self) -> &'static str {
        match self {
            SpecPhase::Requirements => "requirements.md",
            SpecPhase::Design => "design.md",
            SpecPhase::Tasks => "tasks.md",
        }
    }
}

impl fmt::Display for SpecPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Arguments of the `spec` tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpecArgs {
    /// In order: requirements, design, tasks.
    pub phase: SpecPhase,
    /// The phase's Markdown.
    pub markdown: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_run_in_order_and_name_their_files() {
        assert_eq!(SpecPhase::Requirements.next(), Some(SpecPhase::Design));
        assert_eq!(SpecPhase::Design.next(), Some(SpecPhase::Tasks));
        assert_eq!(SpecPhase::Tasks.next(), None);
        for phase in SpecPhase::ALL {
            let json = serde_json::to_string(&phase).expect("serialize");
            assert_eq!(json, format!("\"{phase}\""));
            assert!(phase.file_name().starts_with(phase.as_str()));
        }
    }
}
