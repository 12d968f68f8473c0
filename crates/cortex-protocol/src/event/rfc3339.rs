//! RFC 3339 timestamps as the timeline writes them, over the one calendar
//! of `crate::calendar`.

use std::time::{SystemTime, UNIX_EPOCH};

pub fn format(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    crate::calendar::format_rfc3339_ms(d.as_millis() as i64)
}

/// The inverse of [`format`], for its exact shape only.
pub fn parse_ms(ts: &str) -> Option<i64> {
    let b = ts.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[10] != b'T' || b[19] != b'.' || b[23] != b'Z' {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> { ts.get(from..to)?.parse().ok() };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, s, ms) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
    let days = crate::calendar::days_from_civil(y, mo, d);
    Some((((days * 24 + h) * 60 + mi) * 60 + s) * 1000 + ms)
}

/// Now, as the timeline writes timestamps.
pub fn now_rfc3339() -> String {
    format(SystemTime::now())
}

/// A timestamp as the timeline writes them (`2026-11-30T12:00:00.123Z`), in
/// milliseconds since the Unix epoch; `None` for any other shape.
pub fn parse_rfc3339_ms(ts: &str) -> Option<i64> {
    parse_ms(ts)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn parses_what_it_formats() {
        for ms in [0u64, 1_796_040_000_123, 951_782_400_000, 4_107_542_399_999] {
            let text = super::format(UNIX_EPOCH + Duration::from_millis(ms));
            assert_eq!(super::parse_ms(&text), Some(ms as i64), "{text}");
        }
        assert_eq!(super::parse_ms("2026-11-30 12:00:00"), None);
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(super::format(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_796_040_000_123);
        assert_eq!(super::format(t), "2026-11-30T12:00:00.123Z");
    }
}
