//! Durations as scenario files write them: `1s`, `250ms`, `5m`, or a bare number of seconds.

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use std::fmt;
use std::time::Duration;

/// A duration read from a scenario file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Dur(pub Duration);

impl From<Duration> for Dur {
    fn from(d: Duration) -> Self {
        Dur(d)
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration such as 1s, 250ms, 5m, or a number of seconds")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dur, E> {
                Ok(Dur(Duration::from_secs(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dur, E> {
                u64::try_from(v)
                    .map(|v| Dur(Duration::from_secs(v)))
                    .map_err(|_| E::custom("a duration cannot be negative"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dur, E> {
                Duration::try_from_secs_f64(v)
                    .map(Dur)
                    .map_err(|_| E::custom("a duration must be a positive number of seconds"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                parse_duration(v).map(Dur).ok_or_else(|| {
                    E::custom(format!(
                        "invalid duration {v:?}: use a form such as 1s, 250ms, 5m"
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// `1s`, `1m30s`, `250ms`, or plain seconds (`30`, `1.5`).
pub fn parse_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    humantime::parse_duration(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_forms_scenarios_use() {
        assert_eq!(parse_duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("2.5"), Some(Duration::from_millis(2500)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration("-1"), None);
    }
}
