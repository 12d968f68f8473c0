//! Unauthenticated liveness: `GET /healthz`.

use crate::state::AppState;
use axum::Router;
use axum::routing::get;
use cortex_api::Health;
use std::sync::Arc;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/healthz", get(healthz))
}

/// Liveness.
#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Health)), security(()))]
pub(crate) async fn healthz() -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok".into(),
    })
}
