//! When to try a GitHub request again and how long to wait first, as a pure decision on the
//! answer. GitHub asks clients to honour `Retry-After`, to wait for `x-ratelimit-reset` when
//! the quota is spent, and to back off at least a minute on secondary rate limits; retrying
//! at once (octocrab's default) only deepens a rate limit.
//!
//! The schedule (how many attempts, the doubling back-off and its cap) is a `backon`
//! [`ExponentialBuilder`] driven by the client's retry loop; this module only reads what an
//! answer asks for on top of the back-off it is handed.

use backon::ExponentialBuilder;
use std::time::Duration;

/// How persistent to be. Delays are fields so tests can make them tiny.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per request, the first included.
    pub max_attempts: u32,
    /// First back-off after a 5xx or a transport error; doubles per attempt.
    pub base_delay: Duration,
    /// Cap for the doubling back-off.
    pub max_backoff: Duration,
    /// Least wait after a secondary rate limit without `Retry-After`.
    pub secondary_min: Duration,
    /// A rate limit asking for a longer wait than this gives up instead: a deploy step
    /// should not hang for the better part of an hour over a report.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_secs(2),
            max_backoff: Duration::from_secs(30),
            secondary_min: Duration::from_secs(60),
            max_wait: Duration::from_secs(300),
        }
    }
}

impl RetryPolicy {
    /// The back-off between attempts: `base_delay` doubling up to `max_backoff`, for
    /// `max_attempts - 1` retries. No jitter: the waits stay exactly what the tests pin.
    pub(crate) fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::new()
            .with_min_delay(self.base_delay)
            .with_factor(2.0)
            .with_max_delay(self.max_backoff)
            .with_max_times(usize::try_from(self.max_attempts.saturating_sub(1)).unwrap_or(0))
    }
}

/// The rate-limit headers of an answer, raw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RateHeaders {
    pub retry_after: Option<String>,
    pub remaining: Option<String>,
    pub reset: Option<String>,
}

/// What went wrong with one attempt.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Failure<'a> {
    Status {
        status: u16,
        headers: &'a RateHeaders,
        message: &'a str,
    },
    /// No answer (connection refused, reset, timeout): the request may or may not have
    /// been processed.
    Transport,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Retry(Duration),
    /// Not worth retrying, or out of attempts.
    GiveUp,
    /// Rate limited for longer than [`RetryPolicy::max_wait`].
    TooLong(Duration),
}

/// Whether a status is a rate limit rather than a refusal: 429, or a 403 that says so.
pub(crate) fn is_rate_limited(status: u16, headers: &RateHeaders, message: &str) -> bool {
    status == 429
        || (status == 403
            && (headers.retry_after.is_some()
                || headers.remaining.as_deref().map(str::trim) == Some("0")
                || message.to_ascii_lowercase().contains("rate limit")))
}

/// The decision after attempt number `attempt` (1-based) failed: [`decide_after`] with
/// that attempt's back-off from a fresh schedule.
#[cfg(test)]
pub(crate) fn decide(
    policy: &RetryPolicy,
    failure: Failure<'_>,
    attempt: u32,
    now_unix: i64,
) -> Decision {
    let nth = usize::try_from(attempt.saturating_sub(1)).unwrap_or(usize::MAX);
    let backoff = backon::BackoffBuilder::build(policy.backoff()).nth(nth);
    decide_after(policy, failure, backoff, now_unix)
}

/// The decision after a failed attempt, given the schedule's next back-off (`None`: out of
/// attempts). `now_unix` is the current time in seconds since the epoch (best taken from
/// the answer's `Date`, the clock `x-ratelimit-reset` is on).
pub(crate) fn decide_after(
    policy: &RetryPolicy,
    failure: Failure<'_>,
    backoff: Option<Duration>,
    now_unix: i64,
) -> Decision {
    let Some(backoff) = backoff else {
        return Decision::GiveUp;
    };
    let (status, headers, message) = match failure {
        Failure::Transport => return Decision::Retry(backoff),
        Failure::Status {
            status,
            headers,
            message,
        } => (status, headers, message),
    };
    let rate_limited = is_rate_limited(status, headers, message);
    let server_error = (500..=599).contains(&status) && !matches!(status, 501 | 505);
    if !rate_limited && !server_error {
        return Decision::GiveUp;
    }
    let wait = if let Some(after) = headers
        .retry_after
        .as_deref()
        .and_then(|v| retry_after(v, now_unix))
    {
        after
    } else if rate_limited && headers.remaining.as_deref().map(str::trim) == Some("0") {
        match headers
            .reset
            .as_deref()
            .and_then(|r| r.trim().parse::<i64>().ok())
        {
            // One second more: the reset instant itself may still be limited.
            Some(reset) => secs(reset.saturating_sub(now_unix).saturating_add(1)),
            None => backoff.max(policy.secondary_min),
        }
    } else if rate_limited {
        backoff.max(policy.secondary_min)
    } else {
        backoff
    };
    if wait > policy.max_wait {
        Decision::TooLong(wait)
    } else {
        Decision::Retry(wait)
    }
}

/// `Retry-After` as seconds or as an HTTP date.
fn retry_after(value: &str, now_unix: i64) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = http_date(value)?;
    Some(secs(at.saturating_sub(now_unix)))
}

/// Seconds since the epoch of an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`).
pub(crate) fn http_date(value: &str) -> Option<i64> {
    static PARSER: jiff::fmt::rfc2822::DateTimeParser = jiff::fmt::rfc2822::DateTimeParser::new();
    PARSER
        .parse_timestamp(value.trim())
        .ok()
        .map(jiff::Timestamp::as_second)
}

fn secs(n: i64) -> Duration {
    Duration::from_secs(u64::try_from(n).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_741_944_413; // Fri, 14 Mar 2025 09:26:53 GMT

    fn headers(
        retry_after: Option<&str>,
        remaining: Option<&str>,
        reset: Option<&str>,
    ) -> RateHeaders {
        RateHeaders {
            retry_after: retry_after.map(str::to_owned),
            remaining: remaining.map(str::to_owned),
            reset: reset.map(str::to_owned),
        }
    }

    #[track_caller]
    fn case(status: u16, h: &RateHeaders, message: &str, attempt: u32, expected: Decision) {
        let failure = Failure::Status {
            status,
            headers: h,
            message,
        };
        assert_eq!(
            decide(&RetryPolicy::default(), failure, attempt, NOW),
            expected
        );
    }

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn server_errors_back_off_exponentially_up_to_a_cap() {
        let none = RateHeaders::default;
        case(502, &none(), "Bad Gateway", 1, Decision::Retry(secs(2)));
        case(503, &none(), "", 2, Decision::Retry(secs(4)));
        case(500, &none(), "", 4, Decision::Retry(secs(16)));
        case(504, &none(), "", 5, Decision::GiveUp);
        let long = RetryPolicy {
            max_attempts: 10,
            ..RetryPolicy::default()
        };
        let h = none();
        let failure = Failure::Status {
            status: 502,
            headers: &h,
            message: "",
        };
        assert_eq!(decide(&long, failure, 9, NOW), Decision::Retry(secs(30)));
        assert_eq!(
            decide(&long, Failure::Transport, 1, NOW),
            Decision::Retry(secs(2))
        );
    }

    #[test]
    fn refusals_are_not_retried() {
        let none = RateHeaders::default;
        case(401, &none(), "Bad credentials", 1, Decision::GiveUp);
        case(
            403,
            &none(),
            "Resource not accessible by integration",
            1,
            Decision::GiveUp,
        );
        case(404, &none(), "Not Found", 1, Decision::GiveUp);
        case(
            422,
            &none(),
            "Invalid request.\n\nNo subschema in \"anyOf\" matched.",
            1,
            Decision::GiveUp,
        );
        case(501, &none(), "", 1, Decision::GiveUp);
    }

    #[test]
    fn retry_after_is_honoured_in_seconds_or_as_a_date() {
        case(
            429,
            &headers(Some("7"), None, None),
            "",
            1,
            Decision::Retry(secs(7)),
        );
        case(
            403,
            &headers(Some("Fri, 14 Mar 2025 09:27:23 GMT"), None, None),
            "You have exceeded a secondary rate limit.",
            1,
            Decision::Retry(secs(30)),
        );
        case(
            503,
            &headers(Some("12"), None, None),
            "",
            1,
            Decision::Retry(secs(12)),
        );
        case(
            429,
            &headers(Some("3600"), None, None),
            "",
            1,
            Decision::TooLong(secs(3600)),
        );
    }

    #[test]
    fn a_spent_quota_waits_for_the_reset() {
        let reset = (NOW + 42).to_string();
        case(
            403,
            &headers(None, Some("0"), Some(&reset)),
            "API rate limit exceeded for installation ID 1.",
            1,
            Decision::Retry(secs(43)),
        );
        case(
            429,
            &headers(None, Some("0"), Some(&(NOW - 5).to_string())),
            "",
            1,
            Decision::Retry(secs(0)),
        );
        case(
            403,
            &headers(None, Some("0"), Some(&(NOW + 1800).to_string())),
            "",
            1,
            Decision::TooLong(secs(1801)),
        );
    }

    #[test]
    fn secondary_limits_wait_at_least_a_minute() {
        case(
            403,
            &headers(None, Some("4987"), None),
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            1,
            Decision::Retry(secs(60)),
        );
        case(
            429,
            &RateHeaders::default(),
            "",
            1,
            Decision::Retry(secs(60)),
        );
    }

    #[test]
    fn http_dates_parse() {
        assert_eq!(http_date("Fri, 14 Mar 2025 09:26:53 GMT"), Some(NOW));
        assert_eq!(http_date("yesterday"), None);
    }
}
