//! Reads the timeout annotations' durations, accepting what users of deploy-action and of
//! krane (whose annotations we honour) already write.

use std::time::Duration;

/// Parses a timeout annotation value. Accepted, in this order:
/// - plain seconds: `30`;
/// - ISO 8601 durations as krane takes them: `PT1M30S`, `P1D`, and the time part alone
///   in any case (`45s`, `3M` = 3 minutes, `1h30m`, `PT0.25H`);
/// - humantime forms: `90s`, `5m`, `1h 30m`, `2days`.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().ok().map(Duration::from_secs);
    }
    iso8601(s).or_else(|| humantime::parse_duration(s).ok())
}

fn iso8601(s: &str) -> Option<Duration> {
    let upper = s.to_ascii_uppercase();
    let (date, time) = match upper.strip_prefix('P') {
        Some(rest) => match rest.split_once('T') {
            Some((date, time)) => (date, Some(time)),
            None => (rest, None),
        },
        None => ("", Some(upper.as_str())),
    };
    if time.is_some_and(str::is_empty) || (date.is_empty() && time.is_none()) {
        return None;
    }
    let mut seconds = components(date, &[('W', 604_800.0), ('D', 86_400.0)])?;
    if let Some(time) = time {
        seconds += components(time, &[('H', 3_600.0), ('M', 60.0), ('S', 1.0)])?;
    }
    Duration::try_from_secs_f64(seconds).ok()
}

/// Sums `<number><unit>` pairs whose units appear at most once and in `units` order.
fn components(s: &str, units: &[(char, f64)]) -> Option<f64> {
    let mut total = 0.0;
    let mut rest = s;
    let mut next_unit = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let value: f64 = rest[..digits].parse().ok()?;
        let unit = rest[digits..].chars().next()?;
        let position = units[next_unit..].iter().position(|(u, _)| *u == unit)?;
        total += value * units[next_unit + position].1;
        next_unit += position + 1;
        rest = &rest[digits + unit.len_utf8()..];
    }
    Some(total)
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
    fn accepts_seconds_iso8601_and_humantime() {
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
        case("5m1h", Some(3900)); // humantime takes any order, ISO does not
        case("1.5.5s", None);
    }
}
