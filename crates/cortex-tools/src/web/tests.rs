//! Fetches from loopback servers: what an allow-listed host gets, what
//! every other host and every redirect hop is refused.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A loopback server answering every request with `reply(path)`; the
/// request heads it got are kept.
struct Server {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Server {
    async fn start(reply: fn(&str, u16) -> String) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&heads);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let kept = Arc::clone(&kept);
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                    kept.lock().expect("lock").push(head);
                    let _ = stream.write_all(reply(&path, port).as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Server { port, heads }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

fn response(status: &str, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn site(path: &str, port: u16) -> String {
    match path {
        "/page" => response(
            "200 OK",
            "Content-Type: text/html; charset=utf-8\r\n",
            "<html><head><title>Docs</title></head><body><h1>Hello</h1>\
             <p>See <a href=\"/next\">next</a>.</p></body></html>",
        ),
        "/moved" => response("302 Found", "Location: /page\r\n", ""),
        "/json" => response("200 OK", "Content-Type: application/json\r\n", "{\"a\":1}"),
        "/png" => response("200 OK", "Content-Type: image/png\r\n", "\u{89}PNG"),
        // To another port of the same loopback address: the `away` test
        // server's.
        p if p.starts_with("/away/") => response(
            "301 Moved Permanently",
            &format!("Location: http://127.0.0.1:{}/page\r\n", &p[6..]),
            "",
        ),
        "/loop" => response(
            "302 Found",
            &format!("Location: http://127.0.0.1:{port}/loop\r\n"),
            "",
        ),
        _ => response(
            "404 Not Found",
            "Content-Type: text/plain\r\n",
            "no such page",
        ),
    }
}

fn args(url: String) -> WebFetchArgs {
    WebFetchArgs {
        url,
        max_bytes: None,
    }
}

fn policy(allow: &[String], only_allowed: bool) -> FetchPolicy {
    FetchPolicy {
        allow: AllowList::parse(allow).expect("allow-list"),
        only_allowed,
    }
}

#[tokio::test]
async fn an_allow_listed_loopback_host_is_fetched_as_markdown_with_a_plain_client() {
    let server = Server::start(site).await;
    let allowed = policy(&[format!("127.0.0.1:{}", server.port)], true);
    let page = fetch(&args(server.url("/moved")), &allowed)
        .await
        .expect("fetched");
    assert_eq!(page.url, server.url("/page"));
    assert_eq!(page.requested, server.url("/moved"));
    let shown = page.render(None);
    assert!(
        shown.starts_with(&format!(
            "URL: {}\nRedirected from: {}\nContent-Type: text/html\nTitle: Docs\n\n# Hello",
            server.url("/page"),
            server.url("/moved")
        )),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("[next]({})", server.url("/next"))),
        "{shown}"
    );
    let heads = server.heads.lock().expect("lock").clone();
    assert_eq!(heads.len(), 2, "the redirect and the page");
    for head in heads {
        let head = head.to_ascii_lowercase();
        assert!(head.contains("user-agent: cortex-code\r\n"), "{head}");
        assert!(
            !head.contains("cookie") && !head.contains("authorization"),
            "{head}"
        );
    }
    // JSON passes through; a 404 is a page with its status.
    let json = fetch(&args(server.url("/json")), &allowed)
        .await
        .expect("json");
    assert_eq!(json.text, "{\"a\":1}");
    let missing = fetch(&args(server.url("/nope")), &allowed)
        .await
        .expect("404");
    assert!(!missing.is_success());
    assert!(missing.render(None).contains("Status: 404\n"));
}

#[tokio::test]
async fn loopback_is_refused_unless_allow_listed_by_address_or_name() {
    let server = Server::start(site).await;
    let open = policy(&[], false);
    let err = fetch(&args(server.url("/page")), &open)
        .await
        .expect_err("loopback");
    assert!(matches!(err, WebError::Private { .. }), "{err}");
    // A name is checked where it resolves.
    let by_name = format!("http://localhost:{}/page", server.port);
    let err = fetch(&args(by_name.clone()), &open)
        .await
        .expect_err("localhost");
    assert!(matches!(err, WebError::Private { .. }), "{err}");
    assert!(
        server.heads.lock().expect("lock").is_empty(),
        "nothing was sent"
    );
    let named = policy(&[format!("localhost:{}", server.port)], false);
    let page = fetch(&args(by_name), &named)
        .await
        .expect("allowed by name");
    assert_eq!(page.title.as_deref(), Some("Docs"));
    // With the network off, only allow-listed hosts: a public name too.
    let off = policy(&["docs.rs".into()], true);
    let err = fetch(&args("https://example.com/".into()), &off)
        .await
        .expect_err("not allowed");
    assert!(matches!(err, WebError::NotAllowed { .. }), "{err}");
    assert!(err.to_string().contains("[network] allow"), "{err}");
}

#[tokio::test]
async fn a_redirect_to_an_address_that_is_not_allowed_is_refused() {
    let server = Server::start(site).await;
    let away = Server::start(site).await;
    let allow = [format!("127.0.0.1:{}", server.port)];
    let start = server.url(&format!("/away/{}", away.port));
    // Network off: the next hop is not on the allow-list.
    let err = fetch(&args(start.clone()), &policy(&allow, true))
        .await
        .expect_err("refused");
    assert!(
        matches!(&err, WebError::NotAllowed { host, .. } if *host == format!("127.0.0.1:{}", away.port)),
        "{err}"
    );
    // Network on: the next hop is a loopback address not allowed.
    let err = fetch(&args(start), &policy(&allow, false))
        .await
        .expect_err("refused");
    assert!(matches!(err, WebError::Private { .. }), "{err}");
    assert!(away.heads.lock().expect("lock").is_empty(), "never reached");
    let err = fetch(&args(server.url("/loop")), &policy(&allow, true))
        .await
        .expect_err("loop");
    assert!(matches!(err, WebError::TooManyRedirects(_)), "{err}");
}

#[tokio::test]
async fn other_schemes_credentials_and_binary_bodies_are_refused() {
    let server = Server::start(site).await;
    let allowed = policy(&[format!("127.0.0.1:{}", server.port)], true);
    for (url, want) in [
        ("file:///etc/passwd".to_owned(), "http and https"),
        ("ftp://example.com/".to_owned(), "http and https"),
        (
            format!("http://me:pw@127.0.0.1:{}/page", server.port),
            "credentials",
        ),
        ("not a url".to_owned(), "not a URL"),
        (server.url("/png"), "`image/png`"),
    ] {
        let err = fetch(&args(url.clone()), &allowed).await.expect_err(&url);
        assert!(err.to_string().contains(want), "{url}: {err}");
    }
}

#[test]
fn a_long_text_is_cut_at_the_asked_size_and_says_so() {
    let page = Fetched {
        requested: "https://a.example/".into(),
        url: "https://a.example/".into(),
        status: 200,
        content_type: "text/plain".into(),
        title: None,
        text: "é".repeat(100),
        body_cut: false,
    };
    let shown = page.render(Some(51));
    assert!(shown.starts_with("URL: https://a.example/\nContent-Type: text/plain\n\n"));
    assert!(shown.contains(&"é".repeat(25)) && !shown.contains(&"é".repeat(26)));
    assert!(
        shown.ends_with("[cut: 50 of the text's 200 bytes are shown]"),
        "{shown}"
    );
    assert!(!page.render(None).contains("[cut"));
}
