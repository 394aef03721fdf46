//! The Job pod-failure back-off (`backoff_utils.go`): after failures, new pods wait 10 s,
//! doubling per failure since the last success, capped at 6 minutes.

use super::job_pods::finished_at;
use jiff::Timestamp;
use serde_json::Value;
use std::time::Duration;

const DEFAULT_BACKOFF: Duration = Duration::from_secs(10);
const MAX_BACKOFF: Duration = Duration::from_secs(360);

/// Failures since the last success and when the latest one finished.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BackoffRecord {
    pub failures_after_last_success: u32,
    pub last_failure: Option<Timestamp>,
}

impl BackoffRecord {
    /// The record after newly finished pods (`newBackoffRecord`).
    pub(crate) fn with_finished(
        self,
        succeeded: &[&Value],
        failed: &[&Value],
        now: Timestamp,
    ) -> Self {
        let mut failed_times: Vec<Timestamp> = failed
            .iter()
            .map(|p| finished_at(p).unwrap_or(now))
            .collect();
        failed_times.sort();
        if succeeded.is_empty() {
            let Some(last) = failed_times.last().copied() else {
                return self;
            };
            return BackoffRecord {
                failures_after_last_success: self.failures_after_last_success
                    + failed_times.len() as u32,
                last_failure: Some(last),
            };
        }
        let last_success = succeeded
            .iter()
            .map(|p| finished_at(p).unwrap_or(now))
            .max()
            .unwrap_or(now);
        let after: Vec<_> = failed_times
            .into_iter()
            .filter(|t| *t > last_success)
            .collect();
        BackoffRecord {
            failures_after_last_success: after.len() as u32,
            last_failure: after.last().copied(),
        }
    }

    /// How long pod creation must still wait (`getRemainingTime`).
    pub(crate) fn remaining(&self, now: Timestamp) -> Duration {
        let (Some(last), n) = (self.last_failure, self.failures_after_last_success) else {
            return Duration::ZERO;
        };
        if n == 0 {
            return Duration::ZERO;
        }
        let mut backoff = DEFAULT_BACKOFF;
        for _ in 1..n {
            backoff *= 2;
            if backoff >= MAX_BACKOFF {
                backoff = MAX_BACKOFF;
                break;
            }
        }
        let elapsed = Duration::try_from(now.duration_since(last)).unwrap_or(Duration::ZERO);
        backoff.saturating_sub(elapsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn failed_at(t: &str) -> Value {
        json!({"status": {"phase": "Failed", "containerStatuses": [{"state": {"terminated": {"exitCode": 1, "finishedAt": t}}}]}})
    }

    #[test]
    fn backoff_doubles_per_failure_and_resets_on_success() {
        let t = |s: &str| s.parse::<Timestamp>().unwrap();
        let first = failed_at("2026-01-01T00:00:10Z");
        let r = BackoffRecord::default().with_finished(&[], &[&first], t("2026-01-01T00:00:11Z"));
        assert_eq!(
            r.remaining(t("2026-01-01T00:00:12Z")),
            Duration::from_secs(8)
        );
        let second = failed_at("2026-01-01T00:00:30Z");
        let r = r.with_finished(&[], &[&second], t("2026-01-01T00:00:30Z"));
        assert_eq!(r.failures_after_last_success, 2);
        assert_eq!(
            r.remaining(t("2026-01-01T00:00:35Z")),
            Duration::from_secs(15)
        );
        assert_eq!(r.remaining(t("2026-01-01T00:01:00Z")), Duration::ZERO);
        let ok = json!({"status": {"phase": "Succeeded", "containerStatuses": [{"state": {"terminated": {"exitCode": 0, "finishedAt": "2026-01-01T00:00:40Z"}}}]}});
        assert_eq!(
            r.with_finished(&[&ok], &[], t("2026-01-01T00:00:41Z")),
            BackoffRecord::default()
        );
    }
}
