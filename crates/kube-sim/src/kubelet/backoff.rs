//! client-go's `flowcontrol.Backoff` as the kubelet uses it (no jitter): per-key delays that
//! double from an initial value up to a cap, and reset after twice the cap without failures.

use std::collections::HashMap;
use std::time::Duration;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy)]
struct Entry {
    backoff: Duration,
    last_update: Instant,
}

/// Back-off delays by key.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    entries: HashMap<String, Entry>,
}

impl Backoff {
    pub fn new(initial: Duration, max: Duration) -> Self {
        Backoff {
            initial,
            max,
            entries: HashMap::new(),
        }
    }

    /// Image pulls and container restarts: 10 s doubling to 5 min.
    pub fn kubelet() -> Self {
        Self::new(Duration::from_secs(10), Duration::from_secs(300))
    }

    /// Volume mount retries (nestedpendingoperations): 500 ms doubling to 2m2s.
    pub fn volumes() -> Self {
        Self::new(Duration::from_millis(500), Duration::from_secs(122))
    }

    fn expired(&self, event: Instant, entry: &Entry) -> bool {
        event.saturating_duration_since(entry.last_update) > self.max * 2
    }

    /// Record a failure at `now`: start at the initial delay or double the current one.
    pub fn next(&mut self, id: &str, now: Instant) {
        let backoff = match self.entries.get(id) {
            Some(e) if !self.expired(now, e) => (e.backoff * 2).min(self.max),
            _ => self.initial,
        };
        self.entries.insert(
            id.to_owned(),
            Entry {
                backoff,
                last_update: now,
            },
        );
    }

    /// The current delay for `id` (zero when it has none).
    pub fn get(&self, id: &str) -> Duration {
        self.entries.get(id).map_or(Duration::ZERO, |e| e.backoff)
    }

    /// Whether less than the delay has passed since the last failure was recorded.
    pub fn in_backoff_since_update(&self, id: &str, now: Instant) -> bool {
        self.entries
            .get(id)
            .is_some_and(|e| !self.expired(now, e) && now.duration_since(e.last_update) < e.backoff)
    }

    /// Whether less than the delay has passed since `event` (a container's finish time).
    pub fn in_backoff_since(&self, id: &str, event: Instant, now: Instant) -> bool {
        self.entries.get(id).is_some_and(|e| {
            !self.expired(event, e) && now.saturating_duration_since(event) < e.backoff
        })
    }

    /// When `in_backoff_since_update` turns false.
    pub fn release_after_update(&self, id: &str) -> Option<Instant> {
        self.entries.get(id).map(|e| e.last_update + e.backoff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn delays_double_to_the_cap_and_reset_after_a_quiet_spell() {
        let mut b = Backoff::kubelet();
        let t0 = Instant::now();
        assert!(!b.in_backoff_since_update("img", t0));
        let mut seen = Vec::new();
        let mut now = t0;
        for _ in 0..7 {
            b.next("img", now);
            seen.push(b.get("img").as_secs());
            assert!(
                b.in_backoff_since_update("img", now + b.get("img") - Duration::from_millis(1))
            );
            now += b.get("img");
            assert!(!b.in_backoff_since_update("img", now));
        }
        assert_eq!(seen, [10, 20, 40, 80, 160, 300, 300]);
        b.next("img", now + Duration::from_secs(601));
        assert_eq!(b.get("img"), Duration::from_secs(10));
    }

    #[tokio::test(start_paused = true)]
    async fn container_backoff_counts_from_the_finish_time() {
        let mut b = Backoff::kubelet();
        let t0 = Instant::now();
        b.next("web", t0);
        let finished = t0 + Duration::from_secs(5);
        assert!(b.in_backoff_since("web", finished, finished + Duration::from_secs(9)));
        assert!(!b.in_backoff_since("web", finished, finished + Duration::from_secs(10)));
        let long_run = t0 + Duration::from_secs(700);
        assert!(!b.in_backoff_since("web", long_run, long_run));
    }
}
