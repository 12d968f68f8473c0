//! The web client: its files, embedded in the binary and served at `/` and
//! `/assets/…` (no CDN, works offline), and the security headers every
//! answer of the server carries.
//!
//! The client is plain JavaScript modules and one stylesheet (no build
//! step), a client of the public `/v1` API like any other. The page's
//! Content-Security-Policy allows scripts, styles and connections to this
//! origin only and no inline script or style, so a string that slipped
//! into the page as markup could still not run. Mermaid (for plans'
//! diagrams) is vendored gzip-compressed and loaded only when a diagram
//! shows.

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;

use crate::error::ApiError;
use crate::state::AppState;

/// One embedded file.
struct Asset {
    path: &'static str,
    mime: &'static str,
    bytes: &'static [u8],
    /// Stored gzip-compressed (served with `Content-Encoding: gzip`).
    gzip: bool,
}

macro_rules! asset {
    ($path:literal, $mime:literal) => {
        Asset {
            path: $path,
            mime: $mime,
            bytes: include_bytes!(concat!("../web/", $path)),
            gzip: false,
        }
    };
}

const ASSETS: &[Asset] = &[
    asset!("app.css", "text/css; charset=utf-8"),
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("api.js", "text/javascript; charset=utf-8"),
    asset!("markdown.js", "text/javascript; charset=utf-8"),
    asset!("timeline.js", "text/javascript; charset=utf-8"),
    asset!("render.js", "text/javascript; charset=utf-8"),
    asset!("diagram.js", "text/javascript; charset=utf-8"),
    asset!("list.js", "text/javascript; charset=utf-8"),
    asset!("vendor/mermaid-LICENSE.txt", "text/plain; charset=utf-8"),
    Asset {
        path: "vendor/mermaid.min.js",
        mime: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../web/vendor/mermaid.min.js.gz"),
        gzip: true,
    },
];

const INDEX: &[u8] = include_bytes!("../web/index.html");

/// The page's policy: this origin only, no inline script or style, no
/// framing, no plugins, no form posts; images also from `data:` (a drawn
/// diagram is an SVG image made in the page, which cannot run script).
pub(crate) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// `/` and `/assets/{path}` (unauthenticated: the files hold no data).
pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(index))
        .route("/assets/{*path}", get(asset))
}

async fn index() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        INDEX,
    )
        .into_response()
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    let Some(asset) = ASSETS.iter().find(|a| a.path == path) else {
        return ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such file").into_response();
    };
    if asset.gzip && !accepts_gzip(&headers) {
        return ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            "not_acceptable",
            "this file is served gzip-compressed only (send `Accept-Encoding: gzip`)",
        )
        .into_response();
    }
    let mut response = (
        [
            (header::CONTENT_TYPE, asset.mime),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from(asset.bytes),
    )
        .into_response();
    if asset.gzip {
        response
            .headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q == 0.0))
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

/// The headers every answer carries, API and files alike: no content
/// sniffing, no framing, no referrer, and the page's policy.
pub(crate) async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_accepted_unless_refused() {
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT_ENCODING, HeaderValue::from_static(v));
            accepts_gzip(&h)
        };
        assert!(with("gzip, deflate, br"));
        assert!(with("br;q=1.0, gzip;q=0.8"));
        assert!(with("*"));
        assert!(!with("gzip;q=0"));
        assert!(!with("br, deflate"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }
}
