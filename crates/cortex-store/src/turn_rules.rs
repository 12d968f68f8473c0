//! The rules every store applies when an event opens or closes a turn, so
//! SQLite and PostgreSQL refuse the same things with the same words.

use crate::{StoreError, TurnStatus};
use cortex_protocol::{EventKind, SessionId, TurnId};

/// The turn id a turn event must carry.
pub(crate) fn require_turn<'a>(
    turn: Option<&'a TurnId>,
    kind: &EventKind,
) -> Result<&'a TurnId, StoreError> {
    turn.ok_or_else(|| StoreError::Invalid(format!("`{}` needs a turn id", kind.type_name())))
}

/// A `turn.started` for a turn id that already has a row.
pub(crate) fn already_started(turn: &TurnId) -> StoreError {
    StoreError::Invalid(format!("turn `{turn}` has already started"))
}

/// Whether a turn whose stored status is `current` (`None`: no row) may end.
pub(crate) fn check_may_end(
    session: &SessionId,
    turn: &TurnId,
    current: Option<&str>,
) -> Result<(), StoreError> {
    match current {
        None => Err(StoreError::Invalid(format!(
            "turn `{turn}` was never started in session `{session}`"
        ))),
        Some(status) if status != TurnStatus::Running.as_str() => Err(StoreError::Invalid(
            format!("turn `{turn}` has already ended ({status})"),
        )),
        Some(_) => Ok(()),
    }
}
