//! `web_fetch`: one web page as readable text, fetched with a plain client.
//!
//! The caller decides where it runs (the guest, from its own network
//! namespace; the harness only for allow-listed hosts while the network is
//! off) and passes a [`FetchPolicy`]. Here every hop is checked before it is
//! requested: `http`/`https` only, no credentials in the URL, the host on the
//! allow-list when the policy says only those, and no loopback, private or
//! link-local address unless the host is allow-listed. Names are resolved by
//! [`CheckedResolver`], which hands the connector only the addresses it
//! checked, so the address checked is the address connected to (no DNS
//! rebinding between the two). Redirects are followed by hand, at most
//! [`MAX_REDIRECTS`], each one a new hop. The client sends no cookies, no
//! authorisation, ignores proxy variables and says `User-Agent: cortex-code`.

mod allow;
mod html;
mod search;

pub use allow::{AllowList, BadAllowEntry, is_public};
pub use search::{BadSearchUrl, MAX_RESULTS, SearchApi};

use cortex_protocol::WebFetchArgs;
use reqwest::Url;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The most bytes of text a fetch returns (the tool output cap, less room
/// for the header lines).
pub const MAX_TEXT_BYTES: usize = 30_000;
/// The most bytes of a response body read; the rest is not downloaded.
pub const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;
/// Redirects followed before the fetch gives up.
pub const MAX_REDIRECTS: usize = 5;
/// What the client calls itself.
pub const USER_AGENT: &str = "cortex-code";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const TOTAL_TIMEOUT: Duration = Duration::from_secs(30);

/// Who may be fetched.
#[derive(Debug, Clone, Default)]
pub struct FetchPolicy {
    /// The user's allow-list: these hosts may resolve to private addresses.
    pub allow: AllowList,
    /// Only allow-listed hosts, at every hop (the network is off, and the
    /// harness fetches for the guest).
    pub only_allowed: bool,
}

/// Why a fetch did not happen or did not finish; the message is for the
/// model.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// Not a URL.
    #[error("`{url}` is not a URL: {reason}")]
    BadUrl {
        /// As given.
        url: String,
        /// The parser's complaint.
        reason: String,
    },
    /// Not http or https.
    #[error("web_fetch takes http and https URLs only, not `{0}:`")]
    Scheme(String),
    /// `user:password@` in the URL.
    #[error("web_fetch does not send credentials: remove `user@` from the URL")]
    Credentials,
    /// The network is off and the host is not on the allow-list.
    #[error(
        "{url} is refused: the network is off for this session and {host} is not on the \
         allow-list ([network] allow in config.toml)"
    )]
    NotAllowed {
        /// The URL of the hop.
        url: String,
        /// `host` or `host:port`.
        host: String,
    },
    /// The host is (or resolves to) an address that is not public.
    #[error(
        "{url} is refused: {host} is {address}, a loopback, private or link-local address, \
         which web_fetch reaches only for hosts on the allow-list ([network] allow in config.toml)"
    )]
    Private {
        /// The URL of the hop.
        url: String,
        /// The host as the URL names it.
        host: String,
        /// The address it is or resolved to.
        address: IpAddr,
    },
    /// More than [`MAX_REDIRECTS`] redirects.
    #[error("more than {MAX_REDIRECTS} redirects; the last one was to {0}")]
    TooManyRedirects(String),
    /// A body that is not text, HTML or JSON.
    #[error("{url} is `{content_type}`, not text, HTML or JSON; web_fetch returns text only")]
    NotText {
        /// The final URL.
        url: String,
        /// Its `Content-Type`.
        content_type: String,
    },
    /// Past the connect or total timeout.
    #[error("{0} did not answer in time (10 s to connect, 30 s in all)")]
    Timeout(String),
    /// The connection or the HTTP exchange failed.
    #[error("fetching {url} failed: {reason}")]
    Http {
        /// The URL of the hop.
        url: String,
        /// What failed.
        reason: String,
    },
}

/// The host and port a URL names, checked for scheme and credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL, parsed.
    pub url: Url,
    /// The host as the URL names it (`[::1]` for IPv6).
    pub host: String,
    /// The port, the scheme's default when not written.
    pub port: u16,
}

impl Target {
    /// Parse and check `url`: http(s), a host, no credentials.
    pub fn parse(url: &str) -> Result<Target, WebError> {
        let parsed = Url::parse(url.trim()).map_err(|e| WebError::BadUrl {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        Target::of(parsed)
    }

    fn of(url: Url) -> Result<Target, WebError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(WebError::Scheme(url.scheme().to_owned()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(WebError::Credentials);
        }
        let host = url.host_str().unwrap_or_default().to_owned();
        let port = url.port_or_known_default().unwrap_or(80);
        if host.is_empty() {
            return Err(WebError::BadUrl {
                url: url.to_string(),
                reason: "no host".into(),
            });
        }
        Ok(Target { url, host, port })
    }

    /// `host:port` as an allow-list entry would name it.
    pub fn host_port(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The address the host is written as, if it is one.
    fn literal(&self) -> Option<IpAddr> {
        // The URL parser writes every IPv4 form (`0x7f.1`) dotted.
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        host.parse().ok()
    }
}

/// A fetched page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The URL asked for.
    pub requested: String,
    /// The URL after redirects.
    pub url: String,
    /// The final response's status.
    pub status: u16,
    /// Its `Content-Type` (what came before `;`).
    pub content_type: String,
    /// An HTML page's `<title>`.
    pub title: Option<String>,
    /// The text: Markdown for HTML, as sent for the rest.
    pub text: String,
    /// Not all of the page is in `text`: the body was longer than
    /// [`MAX_BODY_BYTES`], or its Markdown longer than can be shown.
    pub body_cut: bool,
}

impl Fetched {
    /// Whether the final status was 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// What the model reads: the final URL first, then the page's text
    /// within `max` bytes (at most [`MAX_TEXT_BYTES`]), a cut stated.
    pub fn render(&self, max: Option<u64>) -> String {
        let max = max.map_or(MAX_TEXT_BYTES, |m| (m as usize).clamp(1, MAX_TEXT_BYTES));
        let mut out = format!("URL: {}\n", self.url);
        if self.url != self.requested {
            out.push_str(&format!("Redirected from: {}\n", self.requested));
        }
        if !self.is_success() {
            out.push_str(&format!("Status: {}\n", self.status));
        }
        out.push_str(&format!("Content-Type: {}\n", self.content_type));
        if let Some(title) = &self.title {
            out.push_str(&format!("Title: {title}\n"));
        }
        out.push('\n');
        let mut end = self.text.len().min(max);
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        out.push_str(&self.text[..end]);
        if end < self.text.len() && !self.body_cut {
            out.push_str(&format!(
                "\n\n[cut: {} of the text's {} bytes are shown]",
                end,
                self.text.len()
            ));
        } else if end < self.text.len() {
            out.push_str(&format!(
                "\n\n[cut: the first {end} bytes of the text are shown; the page has more]"
            ));
        } else if self.body_cut {
            out.push_str("\n\n[cut: the page has more than is shown]");
        }
        out
    }
}

/// Fetch `args.url` under `policy` (module docs). Dropping the future
/// cancels the fetch.
pub async fn fetch(args: &WebFetchArgs, policy: &FetchPolicy) -> Result<Fetched, WebError> {
    let target = Target::parse(&args.url)?;
    let requested = target.url.to_string();
    match tokio::time::timeout(TOTAL_TIMEOUT, follow(target, policy)).await {
        Ok(result) => result.map(|mut fetched| {
            fetched.requested = requested;
            fetched
        }),
        Err(_) => Err(WebError::Timeout(requested)),
    }
}

async fn follow(mut target: Target, policy: &FetchPolicy) -> Result<Fetched, WebError> {
    for _ in 0..=MAX_REDIRECTS {
        let allowed = policy.allow.allows(&target.host, target.port);
        let url = target.url.to_string();
        if policy.only_allowed && !allowed {
            return Err(WebError::NotAllowed {
                url,
                host: target.host_port(),
            });
        }
        if let Some(address) = target.literal()
            && !allowed
            && !is_public(address)
        {
            return Err(WebError::Private {
                url,
                host: target.host,
                address,
            });
        }
        let refused = Arc::new(Mutex::new(None));
        let client = client(allowed, Arc::clone(&refused)).map_err(|e| http(&url, &e))?;
        let sent = client.get(target.url.clone()).send().await;
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                let refused = refused
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                return Err(match refused {
                    Some(address) => WebError::Private {
                        url,
                        host: target.host,
                        address,
                    },
                    None if e.is_timeout() => WebError::Timeout(url),
                    None => http(&url, &e),
                });
            }
        };
        let status = response.status();
        if status.is_redirection()
            && let Some(location) = response.headers().get(LOCATION)
        {
            let location = location.to_str().unwrap_or_default();
            let next = target.url.join(location).map_err(|e| WebError::BadUrl {
                url: location.to_owned(),
                reason: e.to_string(),
            })?;
            target = Target::of(next)?;
            continue;
        }
        return read(response, &url).await;
    }
    Err(WebError::TooManyRedirects(target.url.to_string()))
}

pub(crate) fn http(url: &str, e: &reqwest::Error) -> WebError {
    // reqwest's own message hides the cause ("error sending request").
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        reason = format!("{reason}: {cause}");
        source = cause.source();
    }
    WebError::Http {
        url: url.to_owned(),
        reason,
    }
}

/// One hop's client: no proxy, no redirects, no cookies, names resolved by
/// [`CheckedResolver`].
fn client(
    private_ok: bool,
    refused: Arc<Mutex<Option<IpAddr>>>,
) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(CONNECT_TIMEOUT)
        .user_agent(USER_AGENT)
        .dns_resolver(Arc::new(CheckedResolver {
            private_ok,
            refused,
        }))
        .build()
}

/// Resolves a name and keeps only its public addresses (all of them for an
/// allow-listed host); the connector gets nothing else. When none is kept,
/// the first refused address is left in `refused` for the error.
struct CheckedResolver {
    private_ok: bool,
    refused: Arc<Mutex<Option<IpAddr>>>,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let private_ok = self.private_ok;
        let refused = Arc::clone(&self.refused);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let (kept, other): (Vec<SocketAddr>, Vec<SocketAddr>) = found
                .into_iter()
                .partition(|a| private_ok || is_public(a.ip()));
            if kept.is_empty() {
                if let Some(first) = other.first() {
                    *refused.lock().unwrap_or_else(PoisonError::into_inner) = Some(first.ip());
                }
                return Err(format!("{host} has no public address").into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(kept.into_iter());
            Ok(addrs)
        })
    }
}

/// How a body is turned into text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    /// No `Content-Type`: text if it reads as UTF-8.
    Unknown,
}

fn kind_of(content_type: &str) -> Option<Kind> {
    let t = content_type.to_ascii_lowercase();
    if t.is_empty() {
        return Some(Kind::Unknown);
    }
    if t == "text/html" || t == "application/xhtml+xml" {
        return Some(Kind::Html);
    }
    let text = t.starts_with("text/")
        || t.ends_with("+json")
        || t.ends_with("+xml")
        || matches!(
            t.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
        );
    text.then_some(Kind::Text)
}

async fn read(mut response: reqwest::Response, url: &str) -> Result<Fetched, WebError> {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_owned();
    let Some(kind) = kind_of(&content_type) else {
        return Err(WebError::NotText {
            url: url.to_owned(),
            content_type,
        });
    };
    let mut body = Vec::new();
    let mut body_cut = false;
    while let Some(chunk) = response.chunk().await.map_err(|e| http(url, &e))? {
        let room = MAX_BODY_BYTES - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            body_cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    if kind == Kind::Unknown && (std::str::from_utf8(&body).is_err() || body.contains(&0)) {
        return Err(WebError::NotText {
            url: url.to_owned(),
            content_type: "no Content-Type, and not UTF-8 text".into(),
        });
    }
    let raw = String::from_utf8_lossy(&body);
    let base = Url::parse(url).map_err(|e| WebError::BadUrl {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    let (title, text) = match kind {
        Kind::Html => {
            let (title, text, stopped) = html::to_markdown(&raw, &base, 2 * MAX_TEXT_BYTES);
            body_cut |= stopped;
            (title, text)
        }
        Kind::Text | Kind::Unknown => (None, raw.into_owned()),
    };
    Ok(Fetched {
        requested: url.to_owned(),
        url: url.to_owned(),
        status,
        content_type: if content_type.is_empty() {
            "text/plain (none given)".into()
        } else {
            content_type
        },
        title,
        text,
        body_cut,
    })
}

#[cfg(test)]
mod tests;
