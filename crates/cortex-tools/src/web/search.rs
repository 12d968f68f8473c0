//! `web_search`: one GET to the search API the user configured
//! (`[web_search] url = "https://…?q={query}"`), its JSON answer shown as a
//! numbered list of titles, URLs and snippets. The harness runs it (the
//! API's key is the user's and never reaches the guest); the key goes in the
//! one header the config names, and nowhere else.

use super::{MAX_TEXT_BYTES, USER_AGENT, WebError, http};
use reqwest::Url;
use serde_json::Value;
use std::time::Duration;

/// The most results shown.
pub const MAX_RESULTS: usize = 10;
const TIMEOUT: Duration = Duration::from_secs(30);

/// A configured search API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchApi {
    /// The URL with `{query}` where the query goes (percent-encoded).
    pub url: String,
    /// A header sent with every search (`X-Subscription-Token`, the key),
    /// if the API takes one.
    pub header: Option<(String, String)>,
}

/// A `[web_search] url` without `{query}`, or that is no http(s) URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[web_search] url `{0}` must be an http(s) URL with `{{query}}` where the query goes")]
pub struct BadSearchUrl(pub String);

impl SearchApi {
    /// Check the URL template.
    pub fn new(url: &str, header: Option<(String, String)>) -> Result<SearchApi, BadSearchUrl> {
        let bad = || BadSearchUrl(url.to_owned());
        if !url.contains("{query}") {
            return Err(bad());
        }
        let probe = Url::parse(&url.replace("{query}", "x")).map_err(|_| bad())?;
        if !matches!(probe.scheme(), "http" | "https") {
            return Err(bad());
        }
        Ok(SearchApi {
            url: url.to_owned(),
            header,
        })
    }

    /// Search for `query`: the results as the model reads them. Dropping
    /// the future cancels it.
    pub async fn search(&self, query: &str) -> Result<String, WebError> {
        let url = self.url.replace("{query}", &encode(query.trim()));
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::limited(3))
            .user_agent(USER_AGENT)
            .timeout(TIMEOUT)
            .build()
            .map_err(|e| http(&url, &e))?;
        let mut request = client.get(&url).header("Accept", "application/json");
        if let Some((name, value)) = &self.header {
            request = request.header(name.as_str(), value.as_str());
        }
        // The URL may hold a key too: errors name the API's host only.
        let host = Url::parse(&url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_default();
        let response = request.send().await.map_err(|e| WebError::Http {
            url: host.clone(),
            reason: if e.is_timeout() {
                "no answer within 30 s".into()
            } else {
                "the search API did not answer".into()
            },
        })?;
        let status = response.status();
        let body = response.bytes().await.map_err(|_| WebError::Http {
            url: host.clone(),
            reason: "the answer was cut".into(),
        })?;
        if !status.is_success() {
            return Err(WebError::Http {
                url: host,
                reason: format!("the search API answered {status}"),
            });
        }
        let json: Value = serde_json::from_slice(&body).map_err(|e| WebError::Http {
            url: host,
            reason: format!("the answer is not JSON: {e}"),
        })?;
        Ok(render(query, &json))
    }
}

/// Percent-encode everything but RFC 3986's unreserved characters.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The results of any common search API's JSON (Brave's `web.results`,
/// SearXNG's and Tavily's `results`, Bing's `webPages.value`, …): the first
/// array of objects that have a URL, each as title, URL and snippet.
fn render(query: &str, json: &Value) -> String {
    let results = find_results(json).unwrap_or_default();
    if results.is_empty() {
        return format!("No results for `{query}`.");
    }
    let mut out = format!("Results for `{query}`:\n");
    for (n, item) in results.iter().take(MAX_RESULTS).enumerate() {
        let field = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| item.get(*k).and_then(Value::as_str))
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        };
        let url = field(&["url", "link", "href"]).unwrap_or_default();
        let title = field(&["title", "name"]).unwrap_or_else(|| url.clone());
        out.push_str(&format!("\n{}. {title}\n   {url}\n", n + 1));
        if let Some(snippet) = field(&["description", "snippet", "content", "body"]) {
            // Snippets carry the API's highlighting as HTML.
            let snippet = match Url::parse(&url) {
                Ok(base) => super::html::to_markdown(&snippet, &base, MAX_TEXT_BYTES).1,
                Err(_) => snippet,
            };
            out.push_str(&format!("   {snippet}\n"));
        }
        if out.len() > MAX_TEXT_BYTES {
            break;
        }
    }
    out
}

fn find_results(json: &Value) -> Option<Vec<&serde_json::Map<String, Value>>> {
    match json {
        Value::Array(items) => {
            let objects: Vec<_> = items.iter().filter_map(Value::as_object).collect();
            if !objects.is_empty()
                && objects.iter().any(|o| {
                    ["url", "link", "href"]
                        .iter()
                        .any(|k| o.get(*k).is_some_and(Value::is_string))
                })
            {
                return Some(objects);
            }
            items.iter().find_map(find_results)
        }
        Value::Object(map) => map.values().find_map(find_results),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_results_of_common_apis_are_listed() {
        let brave = json!({"query": {"original": "serde"}, "web": {"results": [
            {"title": "serde - Rust", "url": "https://docs.rs/serde", "description": "A <strong>serialization</strong> framework"},
            {"title": "serde.rs", "url": "https://serde.rs/"}
        ]}});
        assert_eq!(
            render("serde", &brave),
            "Results for `serde`:\n\n1. serde - Rust\n   https://docs.rs/serde\n   A **serialization** framework\n\n2. serde.rs\n   https://serde.rs/\n"
        );
        let bing = json!({"webPages": {"value": [{"name": "N", "url": "https://n.example/", "snippet": "s"}]}});
        assert!(render("q", &bing).contains("1. N\n   https://n.example/\n   s\n"));
        assert_eq!(render("q", &json!({"results": []})), "No results for `q`.");
    }

    #[test]
    fn a_template_needs_its_query_and_queries_are_encoded() {
        assert!(SearchApi::new("https://s.example/?q={query}", None).is_ok());
        assert!(SearchApi::new("https://s.example/?q=", None).is_err());
        assert!(SearchApi::new("file:///{query}", None).is_err());
        assert_eq!(encode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
    }

    #[tokio::test]
    async fn a_search_sends_the_configured_header_and_reads_the_json() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
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
            let body = r#"{"results":[{"title":"T","url":"https://t.example/","content":"c"}]}"#;
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(reply.as_bytes()).await.expect("write");
            String::from_utf8_lossy(&head).into_owned()
        });
        let api = SearchApi::new(
            &format!("http://127.0.0.1:{port}/search?q={{query}}&format=json"),
            Some(("X-Key".into(), "k1".into())),
        )
        .expect("api");
        let shown = api.search("rust async").await.expect("results");
        assert!(
            shown.contains("1. T\n   https://t.example/\n   c"),
            "{shown}"
        );
        let head = served.await.expect("server");
        assert!(
            head.starts_with("GET /search?q=rust%20async&format=json "),
            "{head}"
        );
        assert!(
            head.to_ascii_lowercase().contains("x-key: k1\r\n"),
            "{head}"
        );
    }
}
