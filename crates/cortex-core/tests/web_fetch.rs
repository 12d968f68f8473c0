//! `web_fetch` under the session's network policy (issue 41 item 5): with
//! the network off it is refused unless the host is on the user's
//! allow-list, and then fetched by the harness, each redirect hop held to
//! the list; with the network on the guest fetches and refuses loopback
//! hosts the list does not name; Stop cancels a fetch in flight. The pages
//! come from loopback servers, which is what makes them private addresses.

mod common;

use common::{config, parts};
use cortex_core::{Session, WebAccess};
use cortex_protocol::{
    EventKind, Mode, NetworkPolicy, Sandbox, StopRule, ToolName, ToolStatus, TurnOutcome,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// A loopback server: `/page` is HTML, `/away/PORT` redirects to that
/// port's `/page`, `/hang` never answers. Counts the requests it read.
struct Site {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl Site {
    async fn start() -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let counted = Arc::clone(&counted);
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    counted.fetch_add(1, Ordering::SeqCst);
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                    let reply = if path == "/hang" {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        return;
                    } else if let Some(to) = path.strip_prefix("/away/") {
                        format!(
                            "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{to}/page\r\n\
                             Content-Length: 0\r\nConnection: close\r\n\r\n"
                        )
                    } else {
                        let body = "<html><head><title>Guide</title></head><body>\
                                    <h1>Hello</h1><p>from the guide</p></body></html>";
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                             Connection: close\r\n\r\n{body}",
                            body.len()
                        )
                    };
                    let _ = stream.write_all(reply.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Site { port, requests }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

fn fetches(urls: &[String]) -> serde_json::Value {
    let mut responses: Vec<serde_json::Value> = urls
        .iter()
        .map(|url| json!({"tool_calls": [{"name": "web_fetch", "arguments": {"url": url}}]}))
        .collect();
    responses.push(json!({"text": "done"}));
    json!({ "responses": responses })
}

/// A session in `mode` with `network` and the allow-list `allow`, whose
/// model fetches `urls` one per round; the tool results and whether the
/// first request offered `web_fetch`.
async fn fetch_turn(
    mode: Mode,
    network: NetworkPolicy,
    allow: &[String],
    urls: &[String],
) -> (Vec<(ToolStatus, String)>, bool) {
    let (repo, store, model) = parts(&[], &fetches(urls));
    let mut config = config(
        repo.path(),
        store.clone(),
        model.clone(),
        mode,
        StopRule::Code,
    );
    config.sandbox = Sandbox {
        network,
        ..Sandbox::default()
    };
    let mut session = Session::create(config).await.expect("session");
    session.set_web_access(WebAccess::new(allow).expect("allow-list"));
    let outcome = session
        .run_turn("read the guide", CancellationToken::new())
        .await
        .expect("turn");
    assert!(
        matches!(outcome, TurnOutcome::Completed { .. }),
        "{outcome:?}"
    );
    let offered = model.requests()[0]
        .tools
        .iter()
        .any(|t| t.name == ToolName::WebFetch.as_str());
    let results = common::tool_results(&store, &session).await;
    session.close().await;
    (results, offered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_network_off_a_fetch_is_refused_unless_its_host_is_allow_listed() {
    let site = Site::start().await;
    let away = Site::start().await;
    // No allow-list: not offered, and refused with the reason when called.
    let (results, offered) =
        fetch_turn(Mode::Ask, NetworkPolicy::Off, &[], &[site.url("/page")]).await;
    assert!(!offered, "nothing to reach, nothing offered");
    let (status, output) = &results[0];
    assert_eq!(*status, ToolStatus::Refused, "{output}");
    assert!(
        output.contains("the network is off for this session")
            && output.contains("127.0.0.1 is not on the allow-list ([network] allow"),
        "{output}"
    );
    assert_eq!(site.requests(), 0, "nothing was sent");
    // The loopback server allow-listed: fetched, in Ask mode, by the
    // harness; a redirect to a port the list does not name is refused.
    let allow = [format!("127.0.0.1:{}", site.port)];
    let urls = [site.url("/page"), site.url(&format!("/away/{}", away.port))];
    let (results, offered) = fetch_turn(Mode::Ask, NetworkPolicy::Off, &allow, &urls).await;
    assert!(offered);
    let (status, output) = &results[0];
    assert_eq!(*status, ToolStatus::Ok, "{output}");
    assert!(
        output.starts_with(&format!("URL: {}\n", site.url("/page"))),
        "{output}"
    );
    assert!(
        output.contains("Title: Guide\n\n# Hello\n\nfrom the guide"),
        "{output}"
    );
    let (status, output) = &results[1];
    assert_eq!(*status, ToolStatus::Error, "{output}");
    assert!(
        output.contains(&format!("127.0.0.1:{} is not on the allow-list", away.port)),
        "{output}"
    );
    assert_eq!(away.requests(), 0, "the redirect was not followed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_network_on_the_guest_fetches_and_refuses_loopback_not_allowed() {
    let site = Site::start().await;
    let (results, offered) =
        fetch_turn(Mode::Agent, NetworkPolicy::On, &[], &[site.url("/page")]).await;
    assert!(offered);
    let (status, output) = &results[0];
    assert_eq!(*status, ToolStatus::Error, "{output}");
    assert!(
        output.contains("a loopback, private or link-local address"),
        "{output}"
    );
    assert_eq!(site.requests(), 0);
    // The guest is sent the allow-list: a listed loopback host is fetched.
    let allow = [format!("127.0.0.1:{}", site.port)];
    let (results, _) =
        fetch_turn(Mode::Agent, NetworkPolicy::On, &allow, &[site.url("/page")]).await;
    let (status, output) = &results[0];
    assert_eq!(*status, ToolStatus::Ok, "{output}");
    assert!(output.contains("# Hello"), "{output}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_cancels_a_fetch_in_flight_in_the_harness_and_in_the_guest() {
    let site = Site::start().await;
    for network in [NetworkPolicy::Off, NetworkPolicy::On] {
        let (repo, store, model) = parts(&[], &fetches(&[site.url("/hang")]));
        let mut config = config(repo.path(), store.clone(), model, Mode::Ask, StopRule::Code);
        config.sandbox = Sandbox {
            network,
            ..Sandbox::default()
        };
        let mut session = Session::create(config).await.expect("session");
        let allow = [format!("127.0.0.1:{}", site.port)];
        session.set_web_access(WebAccess::new(&allow).expect("allow-list"));
        let mut events = session.subscribe();
        let cancel = CancellationToken::new();
        let stopper = cancel.clone();
        tokio::spawn(async move {
            // Stop once the call is under way.
            while let Ok(published) = events.recv().await {
                if matches!(published.event.kind, EventKind::ToolCall { .. }) {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    stopper.cancel();
                    return;
                }
            }
        });
        let outcome = session.run_turn("read it", cancel).await.expect("turn");
        assert!(
            matches!(outcome, TurnOutcome::Stopped { .. }),
            "{network}: {outcome:?}"
        );
        // Answered by the fetch itself, which Stop ended: a call that
        // ignored Stop would be answered when the grace period ran out,
        // by the dispatcher, with no time of its own (0 ms).
        let events = store.events(session.id(), 0).await.expect("events");
        let answered_by_the_call = events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::ToolResult { ms, .. } if *ms > 0.0));
        assert!(
            answered_by_the_call,
            "{network}: the grace period answered it"
        );
        let results = common::tool_results(&store, &session).await;
        assert_eq!(results[0].0, ToolStatus::Stopped, "{network}: {results:?}");
        session.close().await;
    }
    assert_eq!(site.requests(), 2, "each fetch reached the server");
}

/// A loopback search API answering any query with one result, and the
/// request head it got.
async fn search_api() -> (String, tokio::task::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let served = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.expect("accept");
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.expect("read");
            assert!(n > 0, "the request ended early");
            head.extend_from_slice(&buf[..n]);
        }
        let body = r#"{"web":{"results":[{"title":"serde","url":"https://docs.rs/serde","description":"A framework"}]}}"#;
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(reply.as_bytes()).await.expect("write");
        String::from_utf8_lossy(&head).into_owned()
    });
    (
        format!("http://127.0.0.1:{port}/search?q={{query}}"),
        served,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn web_search_is_offered_only_with_a_search_api_and_its_key_stays_in_the_harness() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "web_search", "arguments": {"query": "serde json"}}]},
        {"text": "found"}
    ]});
    // Without a search API: not offered, refused with the reason.
    let (repo, store, model) = parts(&[], &script);
    let session_config = config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Ask,
        StopRule::Code,
    );
    let mut session = Session::create(session_config).await.expect("session");
    session
        .run_turn("look it up", CancellationToken::new())
        .await
        .expect("turn");
    let offered: Vec<String> = model.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(
        !offered.iter().any(|t| t.starts_with("web_")),
        "{offered:?}"
    );
    let results = common::tool_results(&store, &session).await;
    assert_eq!(results[0].0, ToolStatus::Refused);
    assert!(
        results[0].1.contains("[web_search] url"),
        "{}",
        results[0].1
    );
    session.close().await;

    // With one (network off, no allow-list): searched by the harness with
    // the key in its header; web_fetch is still not offered.
    let (url, served) = search_api().await;
    let api =
        cortex_core::SearchApi::new(&url, Some(("X-Key".into(), "sk-search".into()))).expect("api");
    let (repo, store, model) = parts(&[], &script);
    let session_config = config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Ask,
        StopRule::Code,
    );
    let mut session = Session::create(session_config).await.expect("session");
    session.set_web_access(WebAccess::new::<&str>(&[]).expect("empty").with_search(api));
    session
        .run_turn("look it up", CancellationToken::new())
        .await
        .expect("turn");
    let offered: Vec<String> = model.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(offered.contains(&"web_search".to_owned()), "{offered:?}");
    assert!(!offered.contains(&"web_fetch".to_owned()), "{offered:?}");
    let results = common::tool_results(&store, &session).await;
    assert_eq!(results[0].0, ToolStatus::Ok, "{}", results[0].1);
    assert!(
        results[0]
            .1
            .contains("1. serde\n   https://docs.rs/serde\n   A framework"),
        "{}",
        results[0].1
    );
    let head = served.await.expect("served");
    assert!(head.starts_with("GET /search?q=serde%20json "), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("x-key: sk-search"),
        "{head}"
    );
    let events = store.events(session.id(), 0).await.expect("events");
    let timeline = serde_json::to_string(&events).expect("json");
    assert!(
        !timeline.contains("sk-search"),
        "the key is on the timeline"
    );
    session.close().await;
}
