use cortex_protocol::calendar::days_from_civil;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Exponential backoff with jitter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The ceiling of the first retry's delay; doubled for each retry after.
    pub base_delay: Duration,
    /// No delay is longer, whatever the backoff or a `Retry-After` says.
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
        if let Some(after) = retry_after {
            return after.min(self.max_delay);
        }
        let ceiling = self.backoff(attempt);
        let ceiling_ms = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
        if ceiling_ms < 2 {
            return ceiling;
        }
        Duration::from_millis(rand::random_range(ceiling_ms / 2..=ceiling_ms))
    }

    /// The un-jittered delay: base * 2^(attempt-1), capped by `max_delay`.
    fn backoff(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(31);
        self.base_delay
            .checked_mul(1u32 << exponent)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }
}

/// Reads a `Retry-After` header value: delta-seconds (fractions tolerated)
/// or an HTTP date (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`). A date in
/// the past means "now".
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)));
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// IMF-fixdate only (the form RFC 9110 requires servers to send).
fn parse_http_date(value: &str) -> Option<SystemTime> {
    let mut parts = value.split_ascii_whitespace();
    let _weekday = parts.next()?.strip_suffix(',')?;
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if parts.next()? != "GMT" || parts.next().is_some() || hms.next().is_some() {
        return None;
    }
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, i64::from(day))).ok()?;
    let secs = days * 86_400 + h * 3_600 + m * 60 + s;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        }
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let p = policy();
        assert_eq!(p.backoff(1), Duration::from_millis(100));
        assert_eq!(p.backoff(2), Duration::from_millis(200));
        assert_eq!(p.backoff(3), Duration::from_millis(400));
        assert_eq!(p.backoff(4), Duration::from_millis(800));
        assert_eq!(p.backoff(5), Duration::from_secs(1));
        assert_eq!(p.backoff(200), Duration::from_secs(1));
        assert_eq!(p.backoff(0), Duration::from_millis(100));
    }

    #[test]
    fn jitter_stays_in_half_to_full() {
        let p = policy();
        for attempt in 1..=6 {
            let ceiling = p.backoff(attempt);
            for _ in 0..50 {
                let d = p.delay(attempt, None);
                assert!(d <= ceiling, "{d:?} > {ceiling:?}");
                assert!(d >= ceiling / 2, "{d:?} < half of {ceiling:?}");
            }
        }
    }

    #[test]
    fn huge_base_does_not_overflow() {
        let p = RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_secs(u64::MAX / 2),
            max_delay: Duration::from_secs(60),
        };
        assert!(p.delay(40, None) <= Duration::from_secs(60));
    }

    #[test]
    fn zero_delays_stay_zero() {
        let p = RetryPolicy {
            max_retries: 1,
            base_delay: Duration::ZERO,
            max_delay: Duration::ZERO,
        };
        assert_eq!(p.delay(3, None), Duration::ZERO);
    }

    #[test]
    fn retry_after_overrides_but_is_capped() {
        let p = policy();
        assert_eq!(
            p.delay(1, Some(Duration::from_millis(700))),
            Duration::from_millis(700)
        );
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(120))),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn parses_retry_after_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770); // 08:49:30
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after(" 1.5 ", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 25:00:00 GMT", now),
            None
        );
    }
}
