//! Reads the timeout annotations' and `--timeout`'s durations with jiff, accepting what
//! users of deploy-action and of krane (whose annotations we honour) already write; units
//! must come largest first (jiff and ISO 8601 both insist, so humantime's `5m1h` is refused).

use std::time::Duration;

/// Parses a timeout annotation value. Accepted, in this order:
/// - plain seconds: `30`;
/// - ISO 8601 durations and jiff's friendly format: `PT1M30S`, `P1D`, `90s`, `1h 30m`,
///   `2days`, `5 minutes`;
/// - as krane takes it, the ISO time part alone in any case: `3M` = 3 minutes, `1H30M`.
///
/// Negative durations, and months or years (no fixed length), are refused.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok().map(Duration::from_secs);
    }
    parse_span(s).or_else(|| {
        let krane = !s.starts_with(['P', 'p']);
        krane.then(|| parse_span(&format!("PT{s}"))).flatten()
    })
}

/// A jiff [`jiff::Span`] (ISO 8601 or friendly), days and weeks counted as 24 hours and 7
/// days; `None` for negative spans and calendar units.
pub fn parse_span(s: &str) -> Option<Duration> {
    let span: jiff::Span = s.trim().parse().ok()?;
    let signed = span
        .to_duration(jiff::SpanRelativeTo::days_are_24_hours())
        .ok()?;
    Duration::try_from(signed).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(input: &str, expected: Option<u64>) {
        let got = parse_duration(input).map(|d| d.as_millis() as u64);
        assert_eq!(got, expected.map(|s| s * 1000), "duration {input:?}");
    }

    #[test]
    fn accepts_seconds_iso8601_and_friendly_forms() {
        case("30", Some(30));
        case(" 90s ", Some(90));
        case("5m", Some(300));
        case("3M", Some(180));
        case("1h30m", Some(5400));
        case("1h 30m", Some(5400));
        case("PT1M30S", Some(90));
        case("PT0.25H", Some(900));
        case("P1D", Some(86_400));
        case("P1DT2H", Some(93_600));
        case("2days", Some(172_800));
        case("0s", Some(0));
        case("", None);
        case("soon", None);
        case("-5s", None);
        case("P", None);
        case("PT", None);
        // humantime took any order; jiff, ISO 8601 and krane do not.
        case("5m1h", None);
        case("1H30M", Some(5400));
        case("45S", Some(45));
        case("1.5h", Some(5400));
        case("5 minutes", Some(300));
        case("P1W", Some(604_800));
        case("5s ago", None);
        case("1mo", None);
        case("1.5.5s", None);
    }
}
