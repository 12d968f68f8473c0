//! Sending the request, retrying before the first event, and turning the
//! response body into events, for any SSE wire format.

use super::StreamParser;
use super::sse::SseDecoder;
use super::status::{ErrorContext, classify};
use crate::retry::parse_retry_after;
use crate::{ModelError, ModelEvent, ModelStream, RetryPolicy, Timeouts};
use futures::{Stream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use std::time::{Duration, SystemTime};

/// Error bodies are cut to about this many bytes.
const MAX_ERROR_BODY: usize = 2048;
/// How long to wait for an error body before giving up on it.
const ERROR_BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and how to send one request.
pub(crate) struct Target {
    pub(crate) url: String,
    /// Sent with every attempt (authentication, API version).
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) retry: RetryPolicy,
    pub(crate) timeouts: Timeouts,
    pub(crate) errors: ErrorContext,
}

/// An HTTP client for one provider: no overall timeout (a response streams
/// for as long as the model writes; Stop drops the stream, which aborts the
/// request), only the connect timeout.
pub(crate) fn client(timeouts: &Timeouts) -> Result<reqwest::Client, ModelError> {
    reqwest::Client::builder()
        .connect_timeout(timeouts.connect)
        .user_agent(concat!("cortex-code/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))
}

/// Checks that a provider has a key unless its server is on this machine:
/// a hosted API without one answers 401 only after the request went out,
/// and an unreachable one only after every retry, neither naming the
/// variable to set. `vendor` is the API's name, `base_env` the variable
/// that points the provider at another server.
pub(crate) fn check_key(
    api_key: Option<&str>,
    key_env: &str,
    base_url: &str,
    vendor: &str,
    section: &str,
    base_env: &str,
) -> Result<(), ModelError> {
    if api_key.is_some_and(|key| !key.trim().is_empty())
        || crate::recover::is_loopback_url(base_url)
    {
        return Ok(());
    }
    Err(ModelError::Config(format!(
        "no {vendor} API key: {key_env} is not set (or is empty), so nothing was sent to \
         {base_url}. Set it (`export {key_env}=…`), or name the variable that holds the key \
         with `api_key_env` under [{section}] in Cortex's config.toml. A server on this \
         machine ({base_env}=http://127.0.0.1:PORT…) needs no key."
    )))
}

/// Checks that `url` is http(s).
pub(crate) fn check_url(url: &str, base_url: &str) -> Result<(), ModelError> {
    match reqwest::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => Ok(()),
        _ => Err(ModelError::Config(format!(
            "`{base_url}` is not an http(s) base URL"
        ))),
    }
}

/// A failed attempt, with the server's hint on when to try again.
struct Failure {
    error: ModelError,
    retry_after: Option<Duration>,
}

impl From<ModelError> for Failure {
    fn from(error: ModelError) -> Self {
        Failure {
            error,
            retry_after: None,
        }
    }
}

/// The events of one request. Retryable failures are retried while nothing
/// but `Retry` events has been yielded; after that, errors end the stream.
pub(crate) fn drive<P: StreamParser>(
    http: reqwest::Client,
    target: Target,
    body: Vec<u8>,
    new_parser: fn() -> P,
) -> ModelStream {
    Box::pin(async_stream::stream! {
        let mut attempt: u32 = 0;
        loop {
            let failure = match open(&http, &target, &body).await {
                Err(failure) => failure,
                Ok(response) => {
                    let events = response_events(response, new_parser(), target.timeouts.idle);
                    let mut events = std::pin::pin!(events);
                    let mut yielded = false;
                    let mut failure = None;
                    while let Some(item) = events.next().await {
                        match item {
                            Ok(event) => {
                                yielded = true;
                                yield Ok(event);
                            }
                            Err(error) if yielded => {
                                yield Err(error);
                                return;
                            }
                            Err(error) => {
                                failure = Some(Failure::from(error));
                                break;
                            }
                        }
                    }
                    match failure {
                        Some(failure) => failure,
                        None => return,
                    }
                }
            };
            if !failure.error.is_retryable() || attempt >= target.retry.max_retries {
                tracing::warn!(error = %failure.error, attempt, "model request failed");
                yield Err(failure.error);
                return;
            }
            attempt += 1;
            let delay = target.retry.delay(attempt, failure.retry_after);
            let reason = failure.error.to_string();
            let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
            tracing::warn!(%reason, attempt, delay_ms, "retrying model request");
            yield Ok(ModelEvent::Retry {
                attempt,
                of: target.retry.max_retries,
                delay_ms,
                reason,
            });
            tokio::time::sleep(delay).await;
        }
    })
}

/// Sends the request; a non-success status is a failure carrying the body.
async fn open(
    http: &reqwest::Client,
    target: &Target,
    body: &[u8],
) -> Result<reqwest::Response, Failure> {
    let mut request = http
        .post(&target.url)
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_vec());
    for (name, value) in &target.headers {
        request = request.header(*name, value);
    }
    tracing::debug!(url = %target.url, bytes = body.len(), "sending model request");
    let first_byte = target.timeouts.first_byte;
    let response = match tokio::time::timeout(first_byte, request.send()).await {
        Ok(sent) => sent.map_err(|e| Failure::from(connect_error(&e, &target.timeouts)))?,
        Err(_) => {
            return Err(Failure::from(ModelError::Timeout(format!(
                "no response within {:.1}s (first-byte timeout)",
                first_byte.as_secs_f64()
            ))));
        }
    };
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = retry_after(response.headers(), SystemTime::now());
    let body = error_body(response).await;
    Err(Failure {
        error: classify(status.as_u16(), &body, &target.errors),
        retry_after,
    })
}

/// The body of an SSE (or, from servers that ignore `stream`, JSON) response
/// as events.
fn response_events<P: StreamParser>(
    response: reqwest::Response,
    mut parser: P,
    idle: Duration,
) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send {
    async_stream::stream! {
        if is_json(response.headers()) {
            let result = match tokio::time::timeout(idle, response.bytes()).await {
                Ok(Ok(bytes)) => parser.whole_response(&bytes),
                Ok(Err(e)) => Err(ModelError::Stream(describe(&e))),
                Err(_) => Err(idle_error(idle)),
            };
            match result {
                Ok(events) => for event in events {
                    yield Ok(event);
                },
                Err(error) => yield Err(error),
            }
            return;
        }
        let mut body = response.bytes_stream();
        let mut sse = SseDecoder::default();
        loop {
            let (data, ended) = match tokio::time::timeout(idle, body.next()).await {
                Ok(Some(Ok(bytes))) => (sse.feed(&bytes), false),
                Ok(Some(Err(e))) => (Err(ModelError::Stream(describe(&e))), false),
                Ok(None) => (sse.finish(), true),
                Err(_) => (Err(idle_error(idle)), false),
            };
            let data = match data {
                Ok(data) => data,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            for data in data {
                match parser.event(&data) {
                    Ok(events) => for event in events {
                        yield Ok(event);
                    },
                    Err(error) => {
                        yield Err(error);
                        return;
                    }
                }
                if parser.is_done() {
                    return;
                }
            }
            if ended {
                break;
            }
        }
        if let Some(line) = sse.not_sse() {
            yield Err(ModelError::Protocol(format!(
                "the server did not answer with an event stream: {line}"
            )));
            return;
        }
        match parser.end_of_stream() {
            Ok(events) => for event in events {
                yield Ok(event);
            },
            Err(error) => yield Err(error),
        }
    }
}

/// A failed send; a connect timeout says so (reqwest words it as "deadline
/// has elapsed").
fn connect_error(error: &reqwest::Error, timeouts: &Timeouts) -> ModelError {
    let text = describe(error);
    if error.is_connect() && (error.is_timeout() || text.contains("deadline has elapsed")) {
        return ModelError::Connect(format!(
            "no connection within {:.1}s (connect timeout): {text}",
            timeouts.connect.as_secs_f64()
        ));
    }
    ModelError::Connect(text)
}

/// A stalled body is a cut stream: the turn loop may retry the round.
fn idle_error(idle: Duration) -> ModelError {
    ModelError::Stream(format!(
        "no data for {:.1}s (idle-stream timeout)",
        idle.as_secs_f64()
    ))
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("application/json"))
}

/// `retry-after-ms` (sent by OpenAI) or `Retry-After`.
fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let ms = header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0);
    if let Some(ms) = ms {
        return Some(Duration::from_secs_f64(ms.min(1e12) / 1000.0));
    }
    header("retry-after").and_then(|v| parse_retry_after(v, now))
}

/// The start of an error response's body, as text.
async fn error_body(response: reqwest::Response) -> String {
    let mut stream = response.bytes_stream();
    let mut buf = Vec::new();
    let read = async {
        while buf.len() <= MAX_ERROR_BODY {
            match stream.next().await {
                Some(Ok(bytes)) => buf.extend_from_slice(&bytes),
                _ => break,
            }
        }
    };
    // A body that never ends still leaves us the status.
    let _ = tokio::time::timeout(ERROR_BODY_TIMEOUT, read).await;
    let text = String::from_utf8_lossy(&buf);
    let text = text.trim();
    if text.len() <= MAX_ERROR_BODY {
        return text.to_owned();
    }
    let mut end = MAX_ERROR_BODY;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// An error with its causes: reqwest's own message rarely says what failed.
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn reads_retry_after_headers() {
        let now = SystemTime::UNIX_EPOCH;
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers, now), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers, now), Some(Duration::from_millis(250)));
    }

    #[test]
    fn json_content_type() {
        let mut headers = HeaderMap::new();
        assert!(!is_json(&headers));
        headers.insert(
            CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=utf-8"),
        );
        assert!(is_json(&headers));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        assert!(!is_json(&headers));
    }
}
