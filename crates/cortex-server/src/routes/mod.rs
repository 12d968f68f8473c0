//! The `/v1` routes, one file per resource. Approval, plan/spec and goal
//! endpoints add a file here and one `merge` below.

pub(crate) mod approvals;
pub(crate) mod commands;
pub(crate) mod control;
pub(crate) mod events;
pub(crate) mod goal;
pub(crate) mod hooks;
pub(crate) mod mcp;
pub(crate) mod meta;
pub(crate) mod plan;
pub(crate) mod processes;
pub(crate) mod rewind;
pub(crate) mod rules;
pub(crate) mod sessions;
pub(crate) mod shares;
pub(crate) mod spec;
pub(crate) mod turns;

use crate::state::AppState;
use axum::Router;
use std::sync::Arc;

/// Everything under `/v1` (authenticated per handler by the `Principal`
/// extractor); `body_limit` is the server's, which a turn's images may
/// pass.
pub(crate) fn v1(body_limit: usize) -> Router<Arc<AppState>> {
    Router::new()
        .merge(sessions::routes())
        .merge(turns::routes(body_limit))
        .merge(commands::routes())
        .merge(hooks::routes())
        .merge(processes::routes())
        .merge(control::routes())
        .merge(rewind::routes())
        .merge(mcp::routes())
        .merge(plan::routes())
        .merge(spec::routes())
        .merge(goal::routes())
        .merge(approvals::routes())
        .merge(rules::routes())
        .merge(shares::routes())
        .merge(events::routes())
}
