//! RFC 3339 timestamps (UTC, milliseconds) from the system clock, without a date crate.
//!
//! Its own module because both the pipeline (timestamps in stage contracts) and the audit trail
//! (which sits above the pipeline) write them; neither may import the other for a clock.

use std::time::{SystemTime, UNIX_EPOCH};

/// `2025-02-27T14:32:01.123Z` for `at`; times before 1970 print as the epoch.
pub(crate) fn rfc3339(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// The current UTC time as RFC 3339 with milliseconds (`2026-11-22T09:15:02.120Z`).
pub(crate) fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// Whether `text` has exactly the form [`rfc3339`] writes (`YYYY-MM-DDTHH:MM:SS.mmmZ`). Two
/// such texts compare as their instants do, since every field has a fixed width.
pub(crate) fn is_rfc3339_millis(text: &str) -> bool {
    const FORM: &[u8] = b"dddd-dd-ddTdd:dd:dd.dddZ";
    text.len() == FORM.len()
        && text.bytes().zip(FORM).all(|(c, f)| match f {
            b'd' => c.is_ascii_digit(),
            _ => c == *f,
        })
}

/// Gregorian `(year, month, day)` of a day count since 1970-01-01 (Howard Hinnant's
/// days-to-civil algorithm, exact for every day in range).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(secs: u64, millis: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis)
    }

    #[test]
    fn known_instants_format_as_rfc3339_utc() {
        assert_eq!(rfc3339(at(0, 0)), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56.789.
        assert_eq!(rfc3339(at(951_827_696, 789)), "2000-02-29T12:34:56.789Z");
        assert_eq!(rfc3339(at(1_740_666_721, 5)), "2025-02-27T14:32:01.005Z");
        assert_eq!(rfc3339(at(4_107_542_399, 999)), "2100-02-28T23:59:59.999Z");
    }

    #[test]
    fn now_is_rfc3339_utc_with_milliseconds() {
        let now = now_rfc3339();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z'));
        assert!(is_rfc3339_millis(&now), "{now}");
    }

    #[test]
    fn only_the_written_form_is_recognised() {
        assert!(is_rfc3339_millis("2025-02-27T14:32:01.005Z"));
        for other in [
            "",
            "2025-02-27T14:32:01Z",
            "2025-02-27T14:32:01.005+00:00",
            "2025-02-27 14:32:01.005Z",
            "2025-02-27T14:32:01.0x5Z",
            "yesterday",
        ] {
            assert!(!is_rfc3339_millis(other), "{other}");
        }
    }
}
