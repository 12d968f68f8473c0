//! System prompts, one per mode. Short on purpose: every byte is sent on
//! every request (the peers send 30-50 KB; ours is measured in
//! docs/BENCHMARKS.md), and small local models pay ~25 ms per token.

use cortex_protocol::Mode;

const COMMON: &str = "You are Cortex Code, a coding agent working in a repository. \
Paths are relative to the repository root. Inspect with tools before answering; never guess file contents. \
Be brief: state what you found or changed, with file paths.";

/// The system prompt of `mode`: the same for every turn of a mode in every
/// session, so providers can cache it and a local model can reuse its
/// evaluated prefix from one session to the next (the repository is named
/// in each turn's context instead, `context.rs`).
pub fn system_prompt(mode: Mode) -> String {
    let mode_rules = match mode {
        Mode::Ask => {
            "Mode: Ask (read-only). You can read and search, not change files or run commands. Answer the question."
        }
        Mode::Plan => {
            "Mode: Plan (read-only). Investigate, then call the plan tool once: goal, numbered steps naming files, risks, and a ```mermaid diagram (flowchart TD). Do not change anything."
        }
        Mode::Spec => {
            "Mode: Spec (read-only). Investigate, then propose one phase with the spec tool: requirements first (a # title, user stories, WHEN … THE SYSTEM SHALL … criteria), then design (with a ```mermaid diagram), then tasks (- [ ] items). After each proposal end your turn: the user accepts it before the next phase. Do not change anything."
        }
        Mode::Agent => {
            "Mode: Agent. You can read, search, edit files and run commands. Make the smallest change that solves the task, then verify it (build or tests) with bash. For multi-step work keep a todo list with todo_write."
        }
    };
    format!("{COMMON}\n{mode_rules}")
}

/// The model name a request carries: `describe()` is `provider:name`.
pub(crate) fn request_model_name(provider: &dyn cortex_model::ModelProvider) -> String {
    let describe = provider.describe();
    describe
        .split_once(':')
        .map(|(_, name)| name.to_owned())
        .unwrap_or(describe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_small_and_name_the_mode() {
        for mode in Mode::ALL {
            let p = system_prompt(mode);
            assert!(p.len() < 1024, "{mode}: {} bytes", p.len());
            assert!(p.to_lowercase().contains(mode.as_str()));
        }
    }
}
