//! `POST …/rewind`: back to before a turn (files, conversation or both).

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use cortex_api::{ErrorBody, Rewind, RewindAnswer};
use cortex_core::Rewound;
use cortex_protocol::SessionId;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/sessions/{id}/rewind", post(rewind))
}

/// Go back to before a turn, between turns: the workspace's files as the
/// checkpoint taken before it holds them (`files`), the conversation as if
/// it and later turns were not there (`conversation`), or both (the
/// default). Answers with the paths created, changed and deleted, and the
/// checkpoint that undoes it; a `session.rewound` event is on the timeline.
/// Files changed outside the session since it last ran are not
/// overwritten without `force`: 409 `changed_outside` lists them in
/// `error.paths`. With `dry_run`, nothing changes and nothing is recorded:
/// the answer is the diff the rewind would apply, with the paths changed
/// outside the session in `changed_outside` (not a 409).
#[utoipa::path(post, path = "/v1/sessions/{id}/rewind", request_body = Rewind,
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = RewindAnswer),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody,
            description = "no such session, turn or checkpoint (never taken, or pruned)"),
        (status = 409, body = ErrorBody,
            description = "a turn runs (`conflict`), files changed outside the session \
                (`changed_outside`, with `paths`), or the session keeps no checkpoints \
                (`checkpoints_unavailable`)"),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn rewind(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<Rewind>,
) -> Result<axum::Json<RewindAnswer>, ApiError> {
    let actor = state.owned_actor(&principal, &id).await?;
    let dry_run = body.dry_run;
    let done = actor.rewind(body).await?;
    Ok(axum::Json(answer(done, dry_run)))
}

fn answer(r: Rewound, dry_run: bool) -> RewindAnswer {
    RewindAnswer {
        turn_id: r.turn_id,
        scope: r.scope,
        created: r.diff.created,
        changed: r.diff.changed,
        deleted: r.diff.deleted,
        undo: r.undo,
        forced: r.forced,
        dry_run,
        changed_outside: r.changed_outside,
    }
}
