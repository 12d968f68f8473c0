//! The router and the listeners (TCP, Unix socket).

use crate::error::ApiError;
use crate::state::AppState;
use crate::{listen, openapi, routes, web};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use std::future::Future;
use std::sync::Arc;

/// The whole API for `state`, and the web client at `/`.
pub fn router(state: Arc<AppState>) -> Router {
    let limit = state.config.body_limit;
    Router::new()
        .nest("/v1", routes::v1(limit))
        .merge(routes::meta::routes())
        .merge(openapi::routes())
        .merge(web::routes())
        .fallback(|| async {
            ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                "this endpoint does not take that method",
            )
        })
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::map_response(web::security_headers))
        .with_state(state)
}

/// Serve on a bound TCP listener until `shutdown` resolves, within the
/// server's [`crate::ConnectionLimits`] (a peer is an address).
pub async fn serve_tcp(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = state.config.connections;
    listen::serve(listener, router(state), limits, shutdown).await
}

/// Serve on a bound Unix socket until `shutdown` resolves, within the
/// server's [`crate::ConnectionLimits`] (a peer is a user id).
pub async fn serve_unix(
    listener: tokio::net::UnixListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = state.config.connections;
    listen::serve(listener, router(state), limits, shutdown).await
}
