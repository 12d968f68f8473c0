//! The rules every store applies when an event opens or closes a turn, so
//! SQLite and PostgreSQL refuse the same things with the same words.

use crate::{Corruption, Refused, StoreError, TurnStatus};
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
