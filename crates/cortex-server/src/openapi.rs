//! The OpenAPI document, generated from the handlers' annotations and the
//! body types.

use crate::api;
use crate::error::{ErrorBody, ErrorDetail};
use crate::routes::{control, events, meta, sessions, turns};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(title = "Cortex session API", description = "Sessions, turns and their event timelines. \
        Authenticate with `Authorization: Bearer TOKEN`."),
    paths(
        meta::healthz,
        sessions::create, sessions::list, sessions::show, sessions::close,
        turns::create, turns::stop,
        control::set_mode, control::compact,
        events::stream,
    ),
    components(schemas(
        ErrorBody, ErrorDetail,
        api::CreateSession, api::SessionView, api::SessionPage, api::CreateTurn,
        api::TurnCreated, api::SetMode, api::StopAnswer, api::Health, api::SandboxRequest,
        api::ModeDoc, api::StopRuleDoc, api::SandboxPolicyDoc, api::NetworkPolicyDoc,
        api::WorkspaceModeDoc, api::CompactAnswer, api::CompactionKeptDoc,
    )),
    modifiers(&BearerAuth),
)]
pub struct ApiDoc;

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
