//! The rules every store applies when an event opens or closes a turn, so
//! SQLite and PostgreSQL refuse the same things with the same words, and
//! which rows besides the event's own an event changes ([`row_change`]), so
//! both write the same columns for the same events.

use crate::{Corruption, Refused, StoreError, TurnStatus, rows};
use cortex_protocol::{EventKind, SessionId, TurnId};

/// The turn id a turn event must carry.
pub(crate) fn require_turn<'a>(
    turn: Option<&'a TurnId>,
    kind: &EventKind,
) -> Result<&'a TurnId, StoreError> {
    turn.ok_or_else(|| Refused::NoTurnId(kind.type_name()).into())
}

/// A `turn.started` for a turn id that already has a row.
pub(crate) fn already_started(turn: &TurnId) -> StoreError {
    Refused::TurnStarted(turn.clone()).into()
}

/// Whether a turn whose stored status is `current` (`None`: no row) may end.
pub(crate) fn check_may_end(
    session: &SessionId,
    turn: &TurnId,
    current: Option<&str>,
) -> Result<(), StoreError> {
    let refused = match current.map(TurnStatus::parse) {
        None => Refused::TurnNotStarted {
            turn: turn.clone(),
            session: session.clone(),
        },
        Some(Some(TurnStatus::Running)) => return Ok(()),
        Some(Some(status)) => Refused::TurnEnded {
            turn: turn.clone(),
            status: status.as_str(),
        },
        Some(None) => {
            return Err(StoreError::Corrupt {
                row: format!("turn `{turn}`"),
                reason: Corruption::Unknown {
                    column: "status",
                    value: current.unwrap_or_default().to_owned(),
                },
            });
        }
    };
    Err(refused.into())
}

/// What an appended event changes besides its own row and the session's
/// `last_seq`. Each store turns it into its SQL; the choice of event and
/// column is made here once.
#[derive(Debug, PartialEq)]
pub(crate) enum RowChange<'a> {
    /// `turn.started`: a `running` row for the turn (a second start of the
    /// same turn is refused), and the session's title from its first
    /// message when it has none yet.
    OpenTurn {
        /// The turn that starts.
        turn: &'a TurnId,
        /// The title the message gives, if any.
        title: Option<String>,
    },
    /// `mode.changed`: the session's `mode` column.
    SetMode(&'static str),
    /// `turn.completed|stopped|failed`: the turn, which must be running
    /// ([`check_may_end`]), ends with `status` (and `error`).
    CloseTurn {
        /// The turn that ends.
        turn: &'a TurnId,
        /// Its final status.
        status: TurnStatus,
        /// Why it failed, for a failed turn.
        error: Option<&'a str>,
    },
}

/// The row change `kind` makes (`None`: only its own row); an error when a
/// turn event carries no turn id.
pub(crate) fn row_change<'a>(
    kind: &'a EventKind,
    turn: Option<&'a TurnId>,
) -> Result<Option<RowChange<'a>>, StoreError> {
    Ok(match kind {
        EventKind::TurnStarted { message, .. } => Some(RowChange::OpenTurn {
            turn: require_turn(turn, kind)?,
            title: rows::title_from_message(message),
        }),
        EventKind::ModeChanged { to, .. } => Some(RowChange::SetMode(to.as_str())),
        _ => match TurnStatus::after(kind) {
            Some((status, error)) => Some(RowChange::CloseTurn {
                turn: require_turn(turn, kind)?,
                status,
                error,
            }),
            None => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cortex_protocol::Mode;

    #[test]
    fn turn_events_need_a_turn_id_and_others_change_nothing_else() {
        let turn = TurnId::from("t1".to_owned());
        let started = EventKind::TurnStarted {
            message: "fix the build".into(),
            mode: Mode::Agent,
        };
        assert!(matches!(
            row_change(&started, Some(&turn)),
            Ok(Some(RowChange::OpenTurn { title: Some(_), .. }))
        ));
        assert!(row_change(&started, None).is_err());
        let failed = EventKind::TurnFailed {
            error: "model down".into(),
            finish: None,
        };
        assert_eq!(
            row_change(&failed, Some(&turn)).ok().flatten(),
            Some(RowChange::CloseTurn {
                turn: &turn,
                status: TurnStatus::Failed,
                error: Some("model down"),
            })
        );
        let delta = EventKind::MessageDelta { text: "hi".into() };
        assert_eq!(row_change(&delta, None).ok().flatten(), None);
    }
}
