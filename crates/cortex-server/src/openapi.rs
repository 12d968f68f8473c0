//! The OpenAPI document (`GET /openapi.json`), generated from the handlers'
//! annotations and `cortex-api`'s body types: the same types the server
//! sends and reads and the client decodes, so the document cannot drift
//! from the wire. A new route adds its handler to `paths` below; the types
//! its bodies name are collected from it.

use crate::routes::{
    approvals, commands, control, events, goal, hooks, mcp, meta, plan, processes, rewind, rules,
    sessions, shares, spec, turns,
};
use crate::state::AppState;
use axum::Router;
use axum::routing::get;
use std::sync::Arc;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The OpenAPI document of the session API, generated from the handlers'
/// annotations and `cortex-api`'s types (served at `GET /openapi.json`).
#[derive(OpenApi)]
#[openapi(
    info(title = "Cortex session API", description = "Sessions, turns and their event timelines. \
        Authenticate with `Authorization: Bearer TOKEN`."),
    paths(
        meta::healthz,
        sessions::create, sessions::list, sessions::show, sessions::close,
        turns::create, turns::stop, commands::list, commands::run, hooks::list, hooks::trust,
        processes::list, processes::kill,
        control::set_mode, control::compact, rewind::rewind, mcp::add,
        plan::accept, plan::reject, spec::accept, spec::reject,
        goal::set, goal::show, goal::clear, goal::pause, goal::resume,
        approvals::set_policy, approvals::answer, rules::list, rules::remove,
        shares::create, shares::list, shares::revoke,
        events::stream,
    ),
    components(schemas(cortex_api::ErrorBody)),
    modifiers(&BearerAuth),
)]
pub struct ApiDoc;

/// `GET /openapi.json` (unauthenticated).
pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/openapi.json", get(openapi))
}

async fn openapi() -> axum::Json<utoipa::openapi::OpenApi> {
    axum::Json(ApiDoc::openapi())
}

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}
