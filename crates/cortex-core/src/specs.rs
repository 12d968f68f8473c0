//! The spec in progress and the user's verdict on each phase.
//!
//! Spec mode proposes a spec one phase at a time: requirements, design,
//! tasks. Each `spec` tool call that validates is a new version
//! (`spec.proposed`) of the current phase; a proposal for another phase is
//! a tool error. Only the user accepts (`spec.accepted`: the next turn asks
//! for the next phase) or rejects (`spec.rejected`: the feedback is the next
//! turn's message, still in Spec). Accepting the tasks switches to Agent,
//! seeds the todo list from them, and leaves the three documents to be
//! written as `specs/<slug>/{requirements,design,tasks}.md` by the guest at
//! the start of the next turn (`Session::write_accepted_spec`), so the
//! host never writes into the workspace itself (nor follows its links). Leaving Spec mode discards
//! the spec in progress: nothing is written. The state is a fold of these
//! events and `mode.changed` ([`apply`]), live and on resume alike.

use crate::answer::Answer;
use crate::plans::step_todos;
use crate::{CoreError, Session};
use cortex_protocol::{
    EventKind, GuestReply, Mode, SpecArgs, SpecPhase, ToolArgs, TurnId, WriteFileArgs,
};
use cortex_tools::{checklist, spec_slug, validate_spec};

/// One proposal waiting for the user's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecProposal {
    /// The phase it proposes.
    pub phase: SpecPhase,
    /// Its version among the proposals of the spec.
    pub version: u32,
    /// The phase's document.
    pub markdown: String,
}

/// The spec in progress: the phases accepted so far and the proposal that
/// waits, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpecState {
    /// Accepted phases, in order (requirements first).
    pub accepted: Vec<SpecProposal>,
    /// The latest proposal of the current phase, until the user decides.
    pub proposed: Option<SpecProposal>,
    /// The last version any proposal of the session got.
    pub last_version: u32,
    /// An accepted spec's files until the guest has written them
    /// (`spec.written`): a turn that failed to write them, or a restart
    /// between the accept and the write, leaves them for the next turn.
    pub(crate) to_write: Option<SpecFiles>,
}

impl SpecState {
    /// The phase the model proposes next: the one after the last accepted.
    pub fn current_phase(&self) -> SpecPhase {
        self.accepted
            .last()
            .and_then(|p| p.phase.next())
            .unwrap_or(SpecPhase::Requirements)
    }

    /// The paths of an accepted spec's files the guest has not written yet
    /// (relative to the workspace); empty when none wait.
    pub fn unwritten(&self) -> Vec<&str> {
        self.to_write
            .iter()
            .flat_map(|f| f.files.iter().map(|(path, _)| path.as_str()))
            .collect()
    }
}

/// Why a spec verdict was refused.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// No phase waits for a verdict.
    #[error("there is no proposed spec phase to accept or reject (propose one in Spec mode first)")]
    NoProposedSpec,
    /// A rejection without feedback.
    #[error("the feedback must not be empty")]
    EmptyFeedback,
    /// The timeline could not be written.
    #[error(transparent)]
    Core(#[from] CoreError),
}

/// Fold one event into the spec state (live and on resume alike).
pub(crate) fn apply(spec: &mut SpecState, kind: &EventKind) {
    match kind {
        EventKind::SpecProposed {
            phase,
            version,
            markdown,
        } => {
            spec.last_version = spec.last_version.max(*version);
            spec.proposed = Some(SpecProposal {
                phase: *phase,
                version: *version,
                markdown: markdown.clone(),
            });
        }
        EventKind::SpecAccepted { version, .. } => {
            if let Some(p) = spec.proposed.take_if(|p| p.version == *version) {
                if p.phase == SpecPhase::Tasks {
                    // The spec is complete: its files wait for the next
                    // turn's guest, and the next spec starts over.
                    spec.to_write = SpecFiles::of(&spec.accepted, &p);
                    spec.accepted.clear();
                } else {
                    spec.accepted.push(p);
                }
            }
        }
        EventKind::SpecRejected { version, .. } => {
            spec.proposed.take_if(|p| p.version == *version);
        }
        EventKind::SpecWritten { .. } => spec.to_write = None,
        EventKind::ModeChanged { from, to } => {
            if *from == Mode::Spec && *to != Mode::Spec {
                spec.accepted.clear();
                spec.proposed = None;
            }
            if *to != Mode::Agent {
                // Files not yet written are given up with Agent mode.
                spec.to_write = None;
            }
        }
        _ => {}
    }
}

/// The documents of an accepted spec, to be written by the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpecFiles {
    /// `(path relative to the workspace, content)`, requirements first.
    pub files: Vec<(String, String)>,
}

impl SpecFiles {
    /// `specs/<slug>/…` for the accepted phases plus the tasks; `None` when
    /// a phase is missing or the requirements name no folder.
    fn of(accepted: &[SpecProposal], tasks: &SpecProposal) -> Option<SpecFiles> {
        let slug = spec_slug(&accepted.first()?.markdown)?;
        let files: Vec<(String, String)> = accepted
            .iter()
            .chain(std::iter::once(tasks))
            .map(|p| {
                (
                    format!("specs/{slug}/{}", p.phase.file_name()),
                    p.markdown.clone(),
                )
            })
            .collect();
        (files.len() == SpecPhase::ALL.len()).then_some(SpecFiles { files })
    }
}

/// What the model is asked for the phase after `accepted`.
fn next_phase_task(accepted: &SpecProposal, next: SpecPhase) -> String {
    let what = match next {
        SpecPhase::Requirements => "the requirements",
        SpecPhase::Design => {
            "the design: architecture, components, data and error handling, with a ```mermaid \
             diagram (e.g. flowchart TD)"
        }
        SpecPhase::Tasks => {
            "the tasks: a checklist of small implementation steps, one `- [ ] …` per line, \
             naming files"
        }
    };
    format!(
        "The user accepted the {} (v{}). Now write {what}, and propose it with the spec tool \
         (phase \"{next}\"). Then wait for the user's accept.",
        accepted.phase, accepted.version
    )
}

/// The message of the turn that implements an accepted spec.
fn implementation_task(files: &SpecFiles, tasks: &str) -> String {
    let paths: Vec<&str> = files.files.iter().map(|(p, _)| p.as_str()).collect();
    format!(
        "The user accepted the spec; it is in {}. Implement its tasks now, one by one, keeping \
         the todo list current with todo_write.\n\n{tasks}",
        paths.join(", ")
    )
}

impl Session {
    /// The spec in progress.
    pub fn spec(&self) -> &SpecState {
        &self.state.spec
    }

    /// Emit a spec event and fold it into the state.
    async fn record_spec(
        &mut self,
        turn: Option<&TurnId>,
        kind: EventKind,
    ) -> Result<(), CoreError> {
        self.record(turn, kind).await?;
        Ok(())
    }

    /// The `spec` tool: validate and record a proposal of the current phase.
    pub(crate) async fn spec_tool(
        &mut self,
        turn: &TurnId,
        args: SpecArgs,
    ) -> Result<Answer, CoreError> {
        let current = self.state.spec.current_phase();
        if args.phase != current {
            return Ok(Answer::error(format!(
                "the spec is at its {current} phase: propose the {current} (phase \"{current}\"); \
                 each phase waits for the user's accept before the next"
            )));
        }
        if let Err(problem) = validate_spec(args.phase, &args.markdown) {
            return Ok(Answer::error(problem.to_string()));
        }
        let version = self.state.spec.last_version + 1;
        self.record_spec(
            Some(turn),
            EventKind::SpecProposed {
                phase: args.phase,
                version,
                markdown: args.markdown,
            },
        )
        .await?;
        Ok(Answer::ok(format!(
            "Spec {current} v{version} recorded; the user will review it. Wait for the user's \
             accept before the next phase: end your turn with a one-line summary."
        )))
    }

    /// The user accepts the proposed phase. Requirements or design: the
    /// message asking for the next phase. Tasks: Agent mode, the todo list
    /// seeded from the tasks, the files left for the next turn to write, and
    /// the message implementing them. Call between turns; the caller runs
    /// the turn.
    pub async fn accept_spec(&mut self) -> Result<String, SpecError> {
        let proposal = self
            .state
            .spec
            .proposed
            .clone()
            .ok_or(SpecError::NoProposedSpec)?;
        let files = match proposal.phase {
            SpecPhase::Tasks => Some(
                SpecFiles::of(&self.state.spec.accepted, &proposal)
                    .ok_or(SpecError::NoProposedSpec)?,
            ),
            _ => None,
        };
        let accepted = EventKind::SpecAccepted {
            phase: proposal.phase,
            version: proposal.version,
        };
        self.record_spec(None, accepted).await?;
        let Some(files) = files else {
            let next = proposal.phase.next().unwrap_or(SpecPhase::Requirements);
            return Ok(next_phase_task(&proposal, next));
        };
        self.set_mode(Mode::Agent).await?;
        let todos = step_todos(checklist(&proposal.markdown));
        self.record(None, EventKind::TodoUpdated { todos }).await?;
        Ok(implementation_task(&files, &proposal.markdown))
    }

    /// The user rejects the proposed phase with `feedback`: `spec.rejected`,
    /// the mode stays. Returns the message of the next turn.
    pub async fn reject_spec(&mut self, feedback: &str) -> Result<String, SpecError> {
        let feedback = feedback.trim();
        if feedback.is_empty() {
            return Err(SpecError::EmptyFeedback);
        }
        let proposal = self
            .state
            .spec
            .proposed
            .clone()
            .ok_or(SpecError::NoProposedSpec)?;
        let (phase, version) = (proposal.phase, proposal.version);
        self.record_spec(
            None,
            EventKind::SpecRejected {
                phase,
                version,
                feedback: feedback.to_owned(),
            },
        )
        .await?;
        Ok(format!(
            "The user rejected the {phase} (v{version}). Their feedback:\n{feedback}\n\nRevise \
             the {phase} and propose it again with the spec tool (phase \"{phase}\")."
        ))
    }

    /// Write an accepted spec's files through the guest (attached, in
    /// Agent mode), then `spec.written`. `Some(error)` when a file could not
    /// be written: the turn fails with it and the files stay for the next
    /// turn. Called at the start of every turn; a no-op unless an accepted
    /// spec waits.
    pub(crate) async fn write_accepted_spec(
        &mut self,
        turn: &TurnId,
    ) -> Result<Option<String>, CoreError> {
        let Some(spec) = self.state.spec.to_write.clone() else {
            return Ok(None);
        };
        let mut paths = Vec::new();
        for (path, content) in spec.files {
            if let Some(error) = self.guest_write(&path, &content).await {
                return Ok(Some(format!(
                    "the spec file {path} could not be written: {error}"
                )));
            }
            paths.push(path);
        }
        self.record_spec(Some(turn), EventKind::SpecWritten { paths })
            .await?;
        Ok(None)
    }

    /// The guest's `write_file`: the path is confined to the workspace (and
    /// its links resolved) there, never by the host. `Some(reason)` when it
    /// failed.
    async fn guest_write(&self, path: &str, content: &str) -> Option<String> {
        let Some(guest) = self.guest.as_ref() else {
            return Some("the guest is not attached".to_owned());
        };
        let args = ToolArgs::WriteFile(WriteFileArgs {
            path: path.to_owned(),
            content: content.to_owned(),
        });
        let mut handle = match guest.call(args).await {
            Ok(handle) => handle,
            Err(e) => return Some(e.to_string()),
        };
        while let Some(reply) = handle.next().await {
            if let GuestReply::Result(outcome) = reply {
                return (!outcome.is_ok()).then_some(outcome.output);
            }
        }
        Some("the guest ended without an answer".to_owned())
    }
}
