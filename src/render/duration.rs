//! Durations the way a reader scans them: tenths of a second for short waits (they tell
//! a fast failure from a slow one), minutes once the number would need mental division.
//! Hand-written on purpose: jiff's friendly printer truncates tenths (`41.2s`, `59.9s`),
//! pads every unit (`01m05s`) and rolls minutes into hours, none of which the reports want.

use std::time::Duration;

/// `3.1s`, `41.2s`, `7m03s`, for verdict and run times.
pub(crate) fn seconds(secs: f64) -> String {
    let secs = finite_non_negative(secs);
    let tenths = (secs * 10.0).round() / 10.0;
    if tenths < 60.0 {
        format!("{tenths:.1}s")
    } else {
        minutes(whole(secs))
    }
}

/// `0s`, `12s`, `1m05s`, for a ticking progress line where tenths would flicker.
pub(crate) fn elapsed(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    if secs < 60 {
        format!("{secs}s")
    } else {
        minutes(secs)
    }
}

/// `x` rounded to tenths for machine output; nonsense (NaN, negative) becomes 0.
pub(crate) fn round_tenths(x: f64) -> f64 {
    (finite_non_negative(x) * 10.0).round() / 10.0
}

fn minutes(secs: u64) -> String {
    format!("{}m{:02}s", secs / 60, secs % 60)
}

fn whole(secs: f64) -> u64 {
    // In range: callers pass run times, far below u64::MAX seconds.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "non-negative, finite"
    )]
    let whole = secs.round() as u64;
    whole
}

fn finite_non_negative(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 { x } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case_secs(input: f64, expected: &str) {
        assert_eq!(seconds(input), expected);
    }

    #[track_caller]
    fn case_elapsed(input: Duration, expected: &str) {
        assert_eq!(elapsed(input), expected);
    }

    #[test]
    fn verdict_times_use_tenths_then_minutes() {
        case_secs(3.12, "3.1s");
        case_secs(41.25, "41.3s");
        case_secs(0.0, "0.0s");
        // Rounds up across the minute boundary instead of printing 60.0s.
        case_secs(59.97, "1m00s");
        case_secs(423.4, "7m03s");
        case_secs(600.0, "10m00s");
        case_secs(f64::NAN, "0.0s");
        case_secs(-1.0, "0.0s");
    }

    #[test]
    fn progress_times_use_whole_seconds_then_minutes() {
        case_elapsed(Duration::from_millis(900), "0s");
        case_elapsed(Duration::from_millis(12_700), "12s");
        case_elapsed(Duration::from_secs(65), "1m05s");
        case_elapsed(Duration::from_secs(3723), "62m03s");
    }

    #[test]
    fn report_seconds_round_to_tenths() {
        assert_eq!(round_tenths(3.125_9).to_string(), "3.1");
        assert_eq!(round_tenths(41.25).to_string(), "41.3");
        assert_eq!(round_tenths(f64::INFINITY).to_string(), "0");
    }
}
