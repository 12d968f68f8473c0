//! The web client's files as `cortex serve` serves them: embedded, at `/`
//! and `/assets/…`, with the security headers (a CSP without inline script
//! or style, nosniff, no framing) on them and on API answers alike.

mod common;

use common::start;

fn header<'a>(response: &'a reqwest::Response, name: &str) -> &'a str {
    response
        .headers()
        .get(name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .to_str()
        .expect("ascii")
}

fn check_headers(response: &reqwest::Response) {
    let csp = header(response, "content-security-policy");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
        "connect-src 'self'",
    ] {
        assert!(csp.contains(directive), "{directive} missing from {csp}");
    }
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
    assert_eq!(header(response, "x-content-type-options"), "nosniff");
    assert_eq!(header(response, "x-frame-options"), "DENY");
}

#[tokio::test]
async fn the_page_and_its_assets_are_served_with_strict_headers() {
    let server = start().await;
    let client = reqwest::Client::new();
    let page = client.get(server.url("/")).send().await.expect("page");
    assert_eq!(page.status().as_u16(), 200);
    check_headers(&page);
    assert!(header(&page, "content-type").starts_with("text/html"));
    let html = page.text().await.expect("html");
    // No inline script or style: every script and sheet is a file of ours.
    assert!(html.contains(r#"<script type="module" src="/assets/app.js"></script>"#));
    assert!(
        !html.contains("<style") && !html.contains("style="),
        "{html}"
    );
    assert_eq!(html.matches("<script").count(), 1, "{html}");

    let mut first_paint = 0;
    for (path, kind) in [
        ("/assets/app.js", "text/javascript"),
        ("/assets/api.js", "text/javascript"),
        ("/assets/markdown.js", "text/javascript"),
        ("/assets/timeline.js", "text/javascript"),
        ("/assets/render.js", "text/javascript"),
        ("/assets/diagram.js", "text/javascript"),
        ("/assets/list.js", "text/javascript"),
        ("/assets/app.css", "text/css"),
    ] {
        let response = client.get(server.url(path)).send().await.expect(path);
        assert_eq!(response.status().as_u16(), 200, "{path}");
        check_headers(&response);
        assert!(
            header(&response, "content-type").starts_with(kind),
            "{path}"
        );
        let text = response.text().await.expect("text");
        assert!(!text.contains("innerHTML"), "{path} assigns innerHTML");
        first_paint += text.len();
    }
    assert!(
        first_paint < 300 * 1024,
        "{first_paint} bytes before any diagram"
    );

    // Mermaid is served gzip-compressed, and only to a client that takes it.
    let mermaid = client
        .get(server.url("/assets/vendor/mermaid.min.js"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .expect("mermaid");
    assert_eq!(mermaid.status().as_u16(), 200);
    assert_eq!(header(&mermaid, "content-encoding"), "gzip");
    let bytes = mermaid.bytes().await.expect("bytes");
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "a gzip stream");
    let plain = client
        .get(server.url("/assets/vendor/mermaid.min.js"))
        .header("accept-encoding", "identity")
        .send()
        .await
        .expect("mermaid");
    assert_eq!(plain.status().as_u16(), 406);
    let licence = client
        .get(server.url("/assets/vendor/mermaid-LICENSE.txt"))
        .send()
        .await
        .expect("licence");
    assert!(licence.text().await.expect("text").contains("MIT License"));

    for path in ["/assets/nope.js", "/assets/../Cargo.toml", "/assets/"] {
        let response = client.get(server.url(path)).send().await.expect(path);
        assert_eq!(response.status().as_u16(), 404, "{path}");
    }
}

#[tokio::test]
async fn api_answers_carry_the_same_headers() {
    let server = start().await;
    let response = reqwest::Client::new()
        .get(server.url("/v1/sessions"))
        .send()
        .await
        .expect("sessions");
    assert_eq!(response.status().as_u16(), 401);
    check_headers(&response);
}
