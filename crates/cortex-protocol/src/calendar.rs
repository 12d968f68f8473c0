//! Proleptic Gregorian calendar arithmetic, the one copy every crate's
//! timestamps use: the timeline's RFC 3339 stamps, the terminal UI's
//! elapsed times, a provider's `Retry-After` date. Howard Hinnant's
//! `days_from_civil` and `civil_from_days` (exact for every `i64` day a
//! timestamp can hold), so no crate needs a date library for them.

/// Days since 1970-01-01 of the date `year-month-day` (`month` 1 to 12,
/// `day` 1 to 31; a day past the month's end counts on into the next).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // The year starts in March, so the leap day is the year's last.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `(year, month, day)` of `days` since 1970-01-01: the inverse
/// of [`days_from_civil`].
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `ms` milliseconds since the Unix epoch in the timeline's timestamp
/// form, `2026-11-30T12:00:00.123Z` (UTC, always milliseconds, so stamps
/// sort by their text).
pub fn format_rfc3339_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{millis:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1994, 11, 6), 9_075);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }

    #[test]
    fn days_round_trip() {
        for days in [-719_468, -1, 0, 59, 60, 11_016, 11_017, 20_787, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn formats_the_timeline_form() {
        assert_eq!(format_rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_rfc3339_ms(1_796_040_000_123),
            "2026-11-30T12:00:00.123Z"
        );
    }
}
