//! Non-2xx responses as typed errors: the provider's own message from the JSON body, and the
//! `retry-after` header of a 429 (delay-seconds or an HTTP date).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::Response;
use reqwest::header::RETRY_AFTER;
use serde_json::Value;

use crate::llm::{ApiKey, LlmError, MAX_MESSAGE_CHARS};

/// The typed error for a response whose status is not 2xx.
pub(crate) async fn error_for_status(
    provider: &str,
    key: Option<&ApiKey>,
    response: Response,
) -> LlmError {
    let status = response.status();
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        return LlmError::RateLimited {
            provider: provider.to_owned(),
            retry_after,
            attempts: 1,
            elapsed: Duration::ZERO,
        };
    }
    // A body that cannot be read still leaves the status to report.
    let body = response.text().await.unwrap_or_default();
    let message = body_message(&body)
        .or_else(|| status.canonical_reason().map(str::to_owned))
        .unwrap_or_else(|| "no explanation given".to_owned());
    let message = crate::llm::scrub::redact(&message, key);
    LlmError::Http {
        provider: provider.to_owned(),
        status: status.as_u16(),
        message: truncate(&message, MAX_MESSAGE_CHARS),
        attempts: 1,
        elapsed: Duration::ZERO,
    }
}

/// The explanation in an error body: `error.message` (`OpenAI`, Anthropic), a plain `error`
/// string (Ollama), `message` or `detail` (other servers), else the body's text when it is
/// short plain text.
fn body_message(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() {
        return None;
    }
    match serde_json::from_str::<Value>(body) {
        Ok(value) => error_message(&value),
        Err(_) if !body.starts_with('<') => Some(body.to_owned()),
        // An HTML error page (a proxy's) says nothing the status does not.
        Err(_) => None,
    }
}

/// The message of a JSON error value: `{"error": {"type", "message"}}`, `{"error": "..."}`,
/// `{"type", "message"}`, `{"detail": "..."}` or a bare string. The error type is prefixed when
/// the API gives one (`overloaded_error: Overloaded`).
pub(crate) fn error_message(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Object(map) => {
            if let Some(inner) = map.get("error").and_then(error_message) {
                return Some(inner);
            }
            let message = ["message", "detail"]
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))
                .map(str::trim)
                .filter(|m| !m.is_empty())?;
            match map.get("type").and_then(Value::as_str) {
                Some(kind) if kind != "error" && !kind.is_empty() => {
                    Some(format!("{kind}: {message}"))
                }
                _ => Some(message.to_owned()),
            }
        }
        _ => None,
    }
}

/// `text` cut to at most `max` characters, marked with `…` when cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A `retry-after` value as a delay from `now`: delay-seconds (`"2"`, also `"1.5"`) or an
/// HTTP date (`"Wed, 21 Oct 2015 07:28:00 GMT"`; a date already past means no wait). The
/// obsolete RFC 850 and asctime date forms are not read; the router then uses its backoff.
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::try_from_secs_f64(seconds).ok())
            .flatten();
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An IMF-fixdate (RFC 9110 §5.6.7), the form servers send: `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_http_date(value: &str) -> Option<SystemTime> {
    let parts: Vec<&str> = value.split_ascii_whitespace().collect();
    let [weekday, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    if !weekday.ends_with(',') {
        return None;
    }
    let day: u32 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let month = MONTHS.iter().position(|m| m == month)?;
    let month = u32::try_from(month).ok()? + 1;
    let year: i64 = year.parse().ok().filter(|y| *y >= 1970)?;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (Some(Some(h)), Some(Some(m)), Some(Some(s)), None) =
        (hms.next(), hms.next(), hms.next(), hms.next())
    else {
        return None;
    };
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, day)).ok()?;
    let seconds = days * 86_400 + h * 3_600 + m * 60 + s;
    UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Days since 1970-01-01 of a proleptic Gregorian date (the well-known era-based algorithm:
/// years start in March so the leap day falls at the end).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_480); // Wed, 21 Oct 2015 07:28:00
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after(" 1.5 ", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO),
            "a date in the past means retry now"
        );
        for bad in [
            "-1",
            "soon",
            "",
            "Wed, 21 Oct 2015 07:28:30 PST",
            "NaN",
            "inf",
        ] {
            assert_eq!(parse_retry_after(bad, now), None, "{bad:?}");
        }
    }

    #[test]
    fn http_dates_match_the_calendar() {
        let epoch = parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT").unwrap();
        assert_eq!(epoch, UNIX_EPOCH);
        let rfc_example = parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(
            rfc_example.duration_since(UNIX_EPOCH).unwrap().as_secs(),
            784_111_777
        );
        let leap = parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT").unwrap();
        assert_eq!(
            leap.duration_since(UNIX_EPOCH).unwrap().as_secs(),
            1_835_438_400
        );
    }

    #[test]
    fn error_bodies_give_the_providers_message() {
        let anthropic = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert_eq!(
            error_message(&anthropic).as_deref(),
            Some("overloaded_error: Overloaded")
        );
        let openai = json!({"error": {"message": "Incorrect API key", "type": "invalid_request_error", "code": null}});
        assert_eq!(
            error_message(&openai).as_deref(),
            Some("invalid_request_error: Incorrect API key")
        );
        let ollama = json!({"error": "model 'llama9' not found"});
        assert_eq!(
            error_message(&ollama).as_deref(),
            Some("model 'llama9' not found")
        );
        assert_eq!(
            body_message("upstream connect error").as_deref(),
            Some("upstream connect error")
        );
        assert_eq!(body_message("<html><body>502</body></html>"), None);
        assert_eq!(body_message("{\"ok\": true}"), None);
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("héllo", 10), "héllo");
        assert_eq!(truncate("héllo wörld", 5), "héll…");
        assert_eq!(truncate(&"x".repeat(400), 300).chars().count(), 300);
    }
}
