//! Identifiers a real runtime makes up (container IDs, image digests) derived from stable
//! seeds so runs are reproducible, and Go's `time.Duration` text used in kubelet messages.

use std::time::Duration;

/// 64 lowercase hex characters derived from `seed` (what containerd IDs and sha256
/// digests look like).
pub fn hex64(seed: &str) -> String {
    let mut state = seed.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mut words = [0_u64; 4];
    for word in &mut words {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        *word = z ^ (z >> 31);
    }
    let [a, b, c, d] = words;
    format!("{a:016x}{b:016x}{c:016x}{d:016x}")
}

/// `time.Duration.String()` as Go prints it: `250ms`, `1s`, `1.5s`, `1m20s`, `5m0s`.
pub fn go_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    if nanos < 1_000_000_000 {
        let (unit, scale) = match nanos {
            n if n < 1_000 => ("ns", 1),
            n if n < 1_000_000 => ("µs", 1_000),
            _ => ("ms", 1_000_000),
        };
        return format!("{}{unit}", fraction(nanos, scale));
    }
    let total_secs = nanos / 1_000_000_000;
    let (h, m) = (total_secs / 3600, (total_secs / 60) % 60);
    let secs = fraction(nanos % 60_000_000_000, 1_000_000_000);
    match (h, m) {
        (0, 0) => format!("{secs}s"),
        (0, m) => format!("{m}m{secs}s"),
        (h, m) => format!("{h}h{m}m{secs}s"),
    }
}

/// `value / scale` with the fractional part Go prints (trailing zeros trimmed).
fn fraction(value: u128, scale: u128) -> String {
    let (whole, rest) = (value / scale, value % scale);
    if rest == 0 {
        return whole.to_string();
    }
    let width = scale.to_string().len() - 1;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(d: Duration, want: &str) {
        assert_eq!(go_duration(d), want);
    }

    #[test]
    fn durations_print_as_go_does() {
        case(Duration::ZERO, "0s");
        case(Duration::from_millis(250), "250ms");
        case(Duration::from_micros(1500), "1.5ms");
        case(Duration::from_secs(1), "1s");
        case(Duration::from_millis(1500), "1.5s");
        case(Duration::from_secs(80), "1m20s");
        case(Duration::from_secs(300), "5m0s");
        case(Duration::from_secs(3600), "1h0m0s");
        case(Duration::from_millis(600_250), "10m0.25s");
    }

    #[test]
    fn ids_are_stable_hex_and_differ_by_seed() {
        let a = hex64("uid/web/0");
        assert_eq!(a.len(), 64);
        assert!(
            a.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(a, hex64("uid/web/0"));
        assert_ne!(a, hex64("uid/web/1"));
    }
}
