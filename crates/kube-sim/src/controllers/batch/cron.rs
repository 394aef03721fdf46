//! Cron schedules as the CronJob controller parses them (`robfig/cron` standard parser):
//! five fields with ranges, steps, lists and names, the `@hourly`-style descriptors and
//! `@every`; the next activation after an instant in a time zone.

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::{Timestamp, ToSpan};

/// A parsed schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Schedule {
    Fields {
        minutes: u64,
        hours: u64,
        days: u64,
        months: u64,
        weekdays: u64,
        any_day: bool,
        any_weekday: bool,
    },
    Every(i64),
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

fn value(s: &str, names: &[&str], offset: u32) -> Result<u32, String> {
    if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(s)) {
        return Ok(i as u32 + offset);
    }
    s.parse().map_err(|_| {
        format!("failed to parse int from {s}: strconv.Atoi: parsing {s:?}: invalid syntax")
    })
}

/// One field as a bit set; `(bits, was_star)`.
fn field(
    text: &str,
    min: u32,
    max: u32,
    names: &[&str],
    offset: u32,
) -> Result<(u64, bool), String> {
    let mut bits = 0u64;
    let mut star = false;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (
                r,
                Some(
                    s.parse::<u32>()
                        .map_err(|_| format!("failed to parse int from {s}"))?,
                ),
            ),
            None => (part, None),
        };
        let (lo, hi) = if range == "*" || range == "?" {
            star = step.is_none();
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (value(a, names, offset)?, value(b, names, offset)?)
        } else {
            let v = value(range, names, offset)?;
            (v, if step.is_some() { max } else { v })
        };
        if lo < min || hi > max || lo > hi {
            return Err(format!("end of range ({hi}) above maximum ({max}): {part}"));
        }
        let step = step.unwrap_or(1);
        if step == 0 {
            return Err(format!("step of range should be a positive number: {part}"));
        }
        bits |= (lo..=hi).step_by(step as usize).fold(0, |b, v| b | 1 << v);
    }
    Ok((bits, star))
}

impl Schedule {
    pub(crate) fn parse(spec: &str) -> Result<Schedule, String> {
        let spec = spec.trim();
        let expanded = match spec {
            "@yearly" | "@annually" => "0 0 1 1 *",
            "@monthly" => "0 0 1 * *",
            "@weekly" => "0 0 * * 0",
            "@daily" | "@midnight" => "0 0 * * *",
            "@hourly" => "0 * * * *",
            _ => spec,
        };
        if let Some(every) = expanded.strip_prefix("@every ") {
            let d = humantime::parse_duration(every.trim())
                .map_err(|e| format!("failed to parse duration {every}: {e}"))?;
            return Ok(Schedule::Every(d.as_secs().max(1) as i64));
        }
        let fields: Vec<&str> = expanded.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!(
                "expected exactly 5 fields, found {}: [{}]",
                fields.len(),
                fields.join(" ")
            ));
        }
        let (minutes, _) = field(fields[0], 0, 59, &[], 0)?;
        let (hours, _) = field(fields[1], 0, 23, &[], 0)?;
        let (days, any_day) = field(fields[2], 1, 31, &[], 0)?;
        let (months, _) = field(fields[3], 1, 12, &MONTHS, 1)?;
        let (mut weekdays, any_weekday) = field(fields[4], 0, 7, &DAYS, 0)?;
        if weekdays & 1 << 7 != 0 {
            weekdays |= 1;
        }
        Ok(Schedule::Fields {
            minutes,
            hours,
            days,
            months,
            weekdays,
            any_day,
            any_weekday,
        })
    }

    /// The first activation strictly after `after`, within five years.
    pub(crate) fn next(&self, after: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
        let (minutes, hours, days, months, weekdays, any_day, any_weekday) = match *self {
            Schedule::Every(secs) => return after.checked_add(secs.seconds()).ok(),
            Schedule::Fields {
                minutes,
                hours,
                days,
                months,
                weekdays,
                any_day,
                any_weekday,
            } => (minutes, hours, days, months, weekdays, any_day, any_weekday),
        };
        let start = after.to_zoned(tz.clone()).datetime();
        let mut t = DateTime::new(
            start.year(),
            start.month(),
            start.day(),
            start.hour(),
            start.minute(),
            0,
            0,
        )
        .ok()?
        .checked_add(1.minute())
        .ok()?;
        let limit = start.year() + 5;
        let has = |bits: u64, v: i8| bits & (1 << v) != 0;
        while t.year() <= limit {
            if !has(months, t.month()) {
                t = t
                    .first_of_month()
                    .checked_add(1.month())
                    .ok()?
                    .with()
                    .hour(0)
                    .minute(0)
                    .build()
                    .ok()?;
                continue;
            }
            let dom = has(days, t.day());
            let dow = has(weekdays, t.weekday().to_sunday_zero_offset());
            // Both restricted: either matches (cron's OR rule).
            let day_ok = if any_day || any_weekday {
                dom && dow
            } else {
                dom || dow
            };
            if !day_ok {
                t = t.tomorrow().ok()?.with().hour(0).minute(0).build().ok()?;
                continue;
            }
            if !has(hours, t.hour()) {
                t = t
                    .with()
                    .minute(0)
                    .build()
                    .ok()?
                    .checked_add(1.hour())
                    .ok()?;
                continue;
            }
            if !has(minutes, t.minute()) {
                t = t.checked_add(1.minute()).ok()?;
                continue;
            }
            return t.to_zoned(tz.clone()).ok().map(|z| z.timestamp());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(spec: &str, after: &str, want: &str) {
        let s = Schedule::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        let next = s.next(after.parse().unwrap(), &TimeZone::UTC).unwrap();
        assert_eq!(next.to_string(), want, "{spec} after {after}");
    }

    #[test]
    fn next_activations() {
        case(
            "*/5 * * * *",
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:05:00Z",
        );
        case(
            "*/5 * * * *",
            "2026-01-01T00:07:30Z",
            "2026-01-01T00:10:00Z",
        );
        case("30 2 * * *", "2026-01-01T03:00:00Z", "2026-01-02T02:30:00Z");
        case(
            "0 0 * * MON",
            "2026-01-01T00:00:00Z",
            "2026-01-05T00:00:00Z",
        );
        case(
            "0 0 1,15 * 1",
            "2026-01-02T00:00:00Z",
            "2026-01-05T00:00:00Z",
        );
        case("0 0 29 2 *", "2026-01-01T00:00:00Z", "2028-02-29T00:00:00Z");
        case("@hourly", "2026-01-01T00:59:59Z", "2026-01-01T01:00:00Z");
        case(
            "15 9-17/4 * JAN-MAR *",
            "2026-03-31T17:15:00Z",
            "2027-01-01T09:15:00Z",
        );
        case("@every 90s", "2026-01-01T00:00:00Z", "2026-01-01T00:01:30Z");
        assert!(
            Schedule::parse("* * * *")
                .unwrap_err()
                .contains("expected exactly 5 fields")
        );
        assert!(Schedule::parse("61 * * * *").is_err());
    }
}
