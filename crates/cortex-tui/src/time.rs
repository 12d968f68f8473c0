//! Timeline timestamps and elapsed times.
//!
//! Elapsed times of running work are measured from the event's own
//! timestamp, so a UI that attaches late (or replays) shows the same figure
//! as the one that started the turn.

/// Milliseconds since the Unix epoch.
pub type Millis = i64;

/// Now, in [`Millis`].
pub fn now_ms() -> Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as Millis)
        .unwrap_or_default()
}

/// `2026-11-30T20:13:05.093Z` (the timeline's format, UTC, optional
/// fraction) as [`Millis`]; `None` for anything else.
pub fn parse_rfc3339(ts: &str) -> Option<Millis> {
    let b = ts.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> { ts.get(range)?.parse().ok() };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let rest = ts.get(19..)?;
    let (fraction, zone) = match rest.strip_prefix('.') {
        Some(f) => {
            let digits = f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len());
            (&f[..digits], &f[digits..])
        }
        None => ("", rest),
    };
    if zone != "Z" || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let millis = match fraction.len() {
        0 => 0,
        n => fraction.get(..n.min(3))?.parse::<i64>().ok()? * 10_i64.pow(3 - n.min(3) as u32),
    };
    let days = cortex_protocol::calendar::days_from_civil(year, month, day);
    Some((((days * 24 + hour) * 60 + minute) * 60 + second) * 1000 + millis)
}

/// `850ms`, `3.2s`, `42s`, `1m05s`, `2h03m`.
pub fn elapsed(ms: f64) -> String {
    let ms = ms.max(0.0);
    if ms < 1_000.0 {
        return format!("{ms:.0}ms");
    }
    let secs = ms / 1_000.0;
    if secs < 10.0 {
        return format!("{secs:.1}s");
    }
    let whole = secs as u64;
    match whole {
        0..60 => format!("{whole}s"),
        60..3_600 => format!("{}m{:02}s", whole / 60, whole % 60),
        _ => format!("{}h{:02}m", whole / 3_600, (whole % 3_600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_timeline_format() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2026-11-30T12:00:00.123Z"),
            Some(1_796_040_000_123)
        );
        assert_eq!(
            parse_rfc3339("2026-11-30T12:00:00Z"),
            Some(1_796_040_000_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-30T12:00:00.5Z"),
            Some(1_796_040_000_500)
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2026-13-30T12:00:00.000Z"), None);
        assert_eq!(parse_rfc3339("2026-11-30T12:00:00.000+01:00"), None);
    }

    #[test]
    fn elapsed_is_short() {
        assert_eq!(elapsed(12.4), "12ms");
        assert_eq!(elapsed(3_240.0), "3.2s");
        assert_eq!(elapsed(42_000.0), "42s");
        assert_eq!(elapsed(65_000.0), "1m05s");
        assert_eq!(elapsed(7_380_000.0), "2h03m");
    }
}
