use std::time::Duration;

/// Exponential backoff with jitter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// Delay before retry number `attempt` (1-based): base * 2^(attempt-1),
    /// capped, with full jitter in [delay/2, delay]. A server's `Retry-After`
    /// overrides it (still capped by `max_delay`).
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let _ = (attempt, retry_after);
        unimplemented!()
    }
}
