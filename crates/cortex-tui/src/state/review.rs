//! The proposal waiting for the user's verdict: the latest plan or spec
//! phase, from its `*.proposed` event until it is accepted, rejected,
//! superseded or (a spec) given up by leaving Spec mode. The app offers
//! Accept / Reject for it between turns.

use super::{CellKind, Level, SessionState};
use crate::text::{clean, clean_line};
use cortex_protocol::{EventKind, Mode};

/// What a verdict is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// The proposed plan.
    Plan,
    /// The proposed spec phase.
    Spec,
}

/// A proposal that waits for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    /// A plan or a spec phase.
    pub subject: Subject,
    /// `plan v2`, `spec design v3`.
    pub label: String,
}

impl SessionState {
    /// Fold a plan or spec event; `false` when `kind` is neither.
    pub(super) fn apply_review(&mut self, kind: &EventKind) -> bool {
        match kind {
            EventKind::PlanProposed {
                version,
                title,
                markdown,
            } => {
                self.close_open();
                let (title, markdown) = (clean_line(title), clean(markdown));
                self.plan = Some((*version, title.clone(), markdown.clone()));
                self.review = Some(Review {
                    subject: Subject::Plan,
                    label: format!("plan v{version}"),
                });
                self.push(CellKind::Plan {
                    version: *version,
                    title,
                    markdown,
                });
            }
            EventKind::SpecProposed {
                phase,
                version,
                markdown,
            } => {
                self.close_open();
                self.review = Some(Review {
                    subject: Subject::Spec,
                    label: format!("spec {phase} v{version}"),
                });
                self.push(CellKind::Spec {
                    phase: *phase,
                    version: *version,
                    markdown: clean(markdown),
                });
            }
            EventKind::PlanAccepted { version } => {
                self.decided(format!("plan v{version} accepted"))
            }
            EventKind::PlanRejected { version, .. } => {
                self.decided(format!("plan v{version} rejected"))
            }
            EventKind::SpecAccepted { phase, version } => {
                self.decided(format!("spec {phase} v{version} accepted"))
            }
            EventKind::SpecRejected { phase, version, .. } => {
                self.decided(format!("spec {phase} v{version} rejected"))
            }
            EventKind::SpecWritten { paths } => {
                let paths = clean_line(&paths.join(", "));
                self.notice(Level::Info, format!("spec written: {paths}"));
            }
            _ => return false,
        }
        true
    }

    /// Leaving Spec mode gives up the spec in progress.
    pub(super) fn review_mode_changed(&mut self, from: Mode, to: Mode) {
        if from == Mode::Spec
            && to != Mode::Spec
            && self
                .review
                .as_ref()
                .is_some_and(|r| r.subject == Subject::Spec)
        {
            self.review = None;
        }
    }

    fn decided(&mut self, note: String) {
        self.review = None;
        self.notice(Level::Info, note);
    }
}
