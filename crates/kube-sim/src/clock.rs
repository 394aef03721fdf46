//! Simulated wall-clock time: a fixed epoch plus tokio's monotonic clock, so that with a
//! paused runtime every timestamp the cluster writes is deterministic.

use jiff::Timestamp;
use std::time::Duration;
use tokio::time::Instant;

/// Maps tokio's (possibly paused) clock to timestamps written into objects.
#[derive(Debug, Clone)]
pub struct Clock {
    epoch: Timestamp,
    start: Instant,
}

impl Clock {
    /// A clock starting at `epoch` now.
    pub fn starting_at(epoch: Timestamp) -> Self {
        Clock {
            epoch,
            start: Instant::now(),
        }
    }

    /// The default for tests: 2026-01-01T00:00:00Z.
    pub fn fixed() -> Self {
        Self::starting_at(Timestamp::from_second(1_767_225_600).expect("valid epoch"))
    }

    /// Time since the cluster started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The tokio instant at which the cluster started.
    pub fn start(&self) -> Instant {
        self.start
    }

    pub fn now(&self) -> Timestamp {
        self.epoch + self.elapsed()
    }

    /// `metav1.Time`: RFC 3339 with whole seconds.
    pub fn now_rfc3339(&self) -> String {
        format_seconds(self.now())
    }

    /// `metav1.MicroTime`: RFC 3339 with microseconds.
    pub fn now_micro(&self) -> String {
        let now = self.now();
        let micros = now.subsec_microsecond();
        let base = format_seconds(now);
        format!("{}.{:06}Z", base.trim_end_matches('Z'), micros)
    }
}

fn format_seconds(t: Timestamp) -> String {
    let secs = Timestamp::from_second(t.as_second()).expect("in range");
    secs.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn paused_time_gives_deterministic_timestamps() {
        let clock = Clock::fixed();
        assert_eq!(clock.now_rfc3339(), "2026-01-01T00:00:00Z");
        tokio::time::sleep(Duration::from_millis(90_250)).await;
        assert_eq!(clock.now_rfc3339(), "2026-01-01T00:01:30Z");
        assert_eq!(clock.now_micro(), "2026-01-01T00:01:30.250000Z");
    }
}
