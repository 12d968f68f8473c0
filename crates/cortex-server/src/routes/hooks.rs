//! `/v1/sessions/{id}/hooks`: the repository's hook files and whether the
//! user trusts each (`cortex_core::hooks`), and trusting one.
//!
//! A repository's hooks run in the session's guest, and only once trusted
//! at their exact content; the trust is kept in the server's trust file
//! (the one `cortex hooks trust` writes). A trust names the content the
//! caller was shown: a file that changed since is refused, never trusted
//! unseen. Trusting takes effect from the session's next turn.

use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::{Json, Path};
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use cortex_api::{ErrorBody, HookEntry, HookFile, HookList, RejectedHookFile, TrustHooks};
use cortex_core::hooks::repository::{FoundHooks, find};
use cortex_core::hooks::trust::TrustedHooks;
use cortex_protocol::SessionId;
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/sessions/{id}/hooks", get(list))
        .route("/sessions/{id}/hooks/trust", post(trust))
}

/// The session's repository and the folder its files are read from.
async fn where_read(
    state: &Arc<AppState>,
    principal: &Principal,
    id: &SessionId,
) -> Result<(PathBuf, Option<PathBuf>), ApiError> {
    let actor = state.owned_actor(principal, id).await?;
    let roots = actor.extension_roots();
    let repository = roots.repository.clone().ok_or_else(|| {
        ApiError::new(
            StatusCode::CONFLICT,
            "no_repository",
            "the session has no repository on this server",
        )
    })?;
    Ok((repository, roots.tree()))
}

async fn found(tree: Option<PathBuf>) -> FoundHooks {
    match tree {
        Some(tree) => tokio::task::spawn_blocking(move || find(&tree))
            .await
            .unwrap_or_default(),
        None => FoundHooks::default(),
    }
}

fn listed(state: &AppState, repository: &std::path::Path, found: FoundHooks) -> HookList {
    let trusted = state
        .config
        .hook_trust
        .as_deref()
        .and_then(|path| TrustedHooks::load(path).ok())
        .unwrap_or_default();
    HookList {
        files: found
            .files
            .into_iter()
            .map(|f| HookFile {
                trusted: trusted.is_trusted(repository, &f.file, &f.sha256),
                hooks: f
                    .hooks
                    .into_iter()
                    .map(|h| HookEntry {
                        event: h.event.as_str().to_owned(),
                        matcher: h.matcher,
                        command: h.command,
                        timeout_ms: h.timeout_ms,
                    })
                    .collect(),
                skipped: f.skipped,
                file: f.file,
                sha256: f.sha256,
            })
            .collect(),
        rejected: found
            .rejected
            .into_iter()
            .map(|(file, reason)| RejectedHookFile { file, reason })
            .collect(),
    }
}

/// The repository's hook files, each with its hooks and whether it is
/// trusted at its current content.
#[utoipa::path(get, path = "/v1/sessions/{id}/hooks",
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = HookList),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
) -> Result<axum::Json<HookList>, ApiError> {
    let (repository, tree) = where_read(&state, &principal, &id).await?;
    let found = found(tree).await;
    Ok(axum::Json(listed(&state, &repository, found)))
}

/// Trust one hook file at the content `GET …/hooks` showed: its hooks run
/// in the session's guest from the next turn on.
#[utoipa::path(post, path = "/v1/sessions/{id}/hooks/trust", request_body = TrustHooks,
    params(("id" = String, Path, description = "session id")),
    responses((status = 200, body = HookList),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody,
            description = "the file changed since it was shown (`hooks_changed`), or this \
                server keeps no trust (`trust_unavailable`)"),
        (status = 422, body = ErrorBody, description = "no such hook file (`unknown_hook_file`)")),
    security(("bearer" = [])))]
pub(crate) async fn trust(
    State(state): State<Arc<AppState>>,
    principal: Principal,
    Path(id): Path<SessionId>,
    Json(body): Json<TrustHooks>,
) -> Result<axum::Json<HookList>, ApiError> {
    let Some(path) = state.config.hook_trust.clone() else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "trust_unavailable",
            "this server keeps no trust file, so no repository hook can run",
        ));
    };
    let (repository, tree) = where_read(&state, &principal, &id).await?;
    let found = found(tree).await;
    let Some(file) = found.files.iter().find(|f| f.file == body.file) else {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown_hook_file",
            format!("the repository has no hook file `{}`", body.file),
        ));
    };
    if file.sha256 != body.sha256 {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "hooks_changed",
            format!(
                "`{}` changed since it was shown; read it again before trusting it",
                body.file
            ),
        ));
    }
    let (repo, name, sha) = (repository.clone(), file.file.clone(), file.sha256.clone());
    tokio::task::spawn_blocking(move || TrustedHooks::trust(&path, &repo, &name, &sha))
        .await
        .map_err(|e| ApiError::internal(format!("the trust was not written: {e}")))?
        .map_err(|e| ApiError::internal(format!("the trust was not written: {e}")))?;
    Ok(axum::Json(listed(&state, &repository, found)))
}
