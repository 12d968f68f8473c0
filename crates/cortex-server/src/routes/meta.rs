//! Unauthenticated endpoints: `GET /healthz`, `GET /openapi.json`.

use crate::api::Health;
use crate::openapi::ApiDoc;
use crate::state::AppState;
use axum::Router;
use axum::routing::get;
use std::sync::Arc;
use utoipa::OpenApi;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/openapi.json", get(openapi))
}

/// Liveness.
#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Health)), security(()))]
pub(crate) async fn healthz() -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok".into(),
    })
}

async fn openapi() -> axum::Json<utoipa::openapi::OpenApi> {
    axum::Json(ApiDoc::openapi())
}
