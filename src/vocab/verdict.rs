//! The verdict vocabulary: the words the terminal, the JSON report and the check run share.
//!
//! These names are a contract with users (scripts read the report), so they are spelled
//! here once, with serde renames, and nowhere else.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The final word on one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Succeeded,
    Failed,
    TimedOut,
    /// Not judged to the end, on purpose: the run stopped once its result was certain
    /// (fail fast), or a dry run could not have the server check it. Never a success.
    Unfinished,
}

/// Why a resource failed or timed out. Each reason belongs to exactly one verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    // Hard failures: evidence that waiting cannot fix.
    ImageNotFound,
    ImageUnauthorized,
    InvalidImageName,
    CrashLoop,
    ContainerConfigError,
    ContainerCannotRun,
    JobFailed,
    PodFailed,
    ApplyRejected,
    ConditionFailed,
    PvcLost,
    /// `watch` only: the resource does not exist, by its kind's first complete list.
    Absent,
    /// The deployer may not list or watch what the resource's verdict needs (403).
    Forbidden,
    // Timeouts: something time might still fix, named so the reader knows what was slow.
    RegistrySlow,
    ImagePullBackoff,
    Unschedulable,
    ReadinessFailing,
    ProgressDeadlineExceeded,
    NotReady,
    ApiUnavailable,
    /// A custom resource no controller has reported on yet, or whose status is for an
    /// older generation.
    NotReconciled,
    // Unfinished: the verdict was not waited for, and the reason says why.
    StoppedAfterFailure,
    NotValidated,
    Cancelled,
    /// In a wave after one that failed (or timed out): never applied.
    NotApplied,
}

impl Reason {
    /// Every reason, in the order of the vocabulary table.
    pub const ALL: [Reason; 25] = [
        Reason::ImageNotFound,
        Reason::ImageUnauthorized,
        Reason::InvalidImageName,
        Reason::CrashLoop,
        Reason::ContainerConfigError,
        Reason::ContainerCannotRun,
        Reason::JobFailed,
        Reason::PodFailed,
        Reason::ApplyRejected,
        Reason::ConditionFailed,
        Reason::PvcLost,
        Reason::Absent,
        Reason::Forbidden,
        Reason::RegistrySlow,
        Reason::ImagePullBackoff,
        Reason::Unschedulable,
        Reason::ReadinessFailing,
        Reason::ProgressDeadlineExceeded,
        Reason::NotReady,
        Reason::ApiUnavailable,
        Reason::NotReconciled,
        Reason::StoppedAfterFailure,
        Reason::NotValidated,
        Reason::Cancelled,
        Reason::NotApplied,
    ];

    /// The verdict this reason belongs to.
    pub fn verdict(self) -> Verdict {
        match self {
            Reason::ImageNotFound
            | Reason::ImageUnauthorized
            | Reason::InvalidImageName
            | Reason::CrashLoop
            | Reason::ContainerConfigError
            | Reason::ContainerCannotRun
            | Reason::JobFailed
            | Reason::PodFailed
            | Reason::ApplyRejected
            | Reason::ConditionFailed
            | Reason::PvcLost
            | Reason::Absent
            | Reason::Forbidden => Verdict::Failed,
            Reason::RegistrySlow
            | Reason::ImagePullBackoff
            | Reason::Unschedulable
            | Reason::ReadinessFailing
            | Reason::ProgressDeadlineExceeded
            | Reason::NotReady
            | Reason::ApiUnavailable
            | Reason::NotReconciled => Verdict::TimedOut,
            Reason::StoppedAfterFailure
            | Reason::NotValidated
            | Reason::Cancelled
            | Reason::NotApplied => Verdict::Unfinished,
        }
    }

    /// The snake_case word used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ImageNotFound => "image_not_found",
            Reason::ImageUnauthorized => "image_unauthorized",
            Reason::InvalidImageName => "invalid_image_name",
            Reason::CrashLoop => "crash_loop",
            Reason::ContainerConfigError => "container_config_error",
            Reason::ContainerCannotRun => "container_cannot_run",
            Reason::JobFailed => "job_failed",
            Reason::PodFailed => "pod_failed",
            Reason::ApplyRejected => "apply_rejected",
            Reason::ConditionFailed => "condition_failed",
            Reason::PvcLost => "pvc_lost",
            Reason::Absent => "absent",
            Reason::Forbidden => "forbidden",
            Reason::RegistrySlow => "registry_slow",
            Reason::ImagePullBackoff => "image_pull_backoff",
            Reason::Unschedulable => "unschedulable",
            Reason::ReadinessFailing => "readiness_failing",
            Reason::ProgressDeadlineExceeded => "progress_deadline_exceeded",
            Reason::NotReady => "not_ready",
            Reason::ApiUnavailable => "api_unavailable",
            Reason::NotReconciled => "not_reconciled",
            Reason::StoppedAfterFailure => "stopped_after_failure",
            Reason::NotValidated => "not_validated",
            Reason::Cancelled => "cancelled",
            Reason::NotApplied => "not_applied",
        }
    }

    /// A short human title ("Image not found", "Timed out: registry slow").
    pub fn title(self) -> &'static str {
        match self {
            Reason::ImageNotFound => "Image not found",
            Reason::ImageUnauthorized => "Image pull unauthorized",
            Reason::InvalidImageName => "Invalid image name",
            Reason::CrashLoop => "Crash loop",
            Reason::ContainerConfigError => "Container config error",
            Reason::ContainerCannotRun => "Container cannot run",
            Reason::JobFailed => "Job failed",
            Reason::PodFailed => "Pod failed",
            Reason::ApplyRejected => "Apply rejected",
            Reason::ConditionFailed => "Condition failed",
            Reason::PvcLost => "PVC lost",
            Reason::Absent => "Absent",
            Reason::Forbidden => "Forbidden",
            Reason::RegistrySlow => "Timed out: registry slow",
            Reason::ImagePullBackoff => "Timed out: image pull back-off",
            Reason::Unschedulable => "Timed out: unschedulable",
            Reason::ReadinessFailing => "Timed out: readiness failing",
            Reason::ProgressDeadlineExceeded => "Timed out: progress deadline exceeded",
            Reason::NotReady => "Timed out: not ready",
            Reason::ApiUnavailable => "Timed out: API server unavailable",
            Reason::NotReconciled => "Timed out: not reconciled",
            Reason::StoppedAfterFailure => "Unfinished: stopped after a failure",
            Reason::NotValidated => "Not validated by the server",
            Reason::Cancelled => "Unfinished: the run was cancelled",
            Reason::NotApplied => "Unfinished: not applied",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Succeeded => "succeeded",
            Verdict::Failed => "failed",
            Verdict::TimedOut => "timed_out",
            Verdict::Unfinished => "unfinished",
        })
    }
}

/// The result of a whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunResult {
    Success,
    Failure,
    TimedOut,
    /// Interrupted (SIGINT, SIGTERM) before every verdict was in.
    Cancelled,
}

impl RunResult {
    /// `failure` if any resource failed, else `timed_out` if any timed out, else `success`.
    /// `unfinished` resources do not decide it: in a deploy they only occur beside a
    /// failure (fail fast), and a dry run says separately what it could not validate.
    pub fn from_verdicts(verdicts: impl IntoIterator<Item = Verdict>) -> Self {
        let mut result = RunResult::Success;
        for v in verdicts {
            match v {
                Verdict::Failed => return RunResult::Failure,
                Verdict::TimedOut => result = RunResult::TimedOut,
                Verdict::Succeeded | Verdict::Unfinished => {}
            }
        }
        result
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RunResult::Success => "success",
            RunResult::Failure => "failure",
            RunResult::TimedOut => "timed_out",
            RunResult::Cancelled => "cancelled",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_serializes_to_its_vocabulary_word() {
        for reason in Reason::ALL {
            let json = serde_json::to_value(reason).unwrap();
            assert_eq!(json, serde_json::Value::String(reason.as_str().to_owned()));
        }
    }

    #[test]
    fn reasons_split_into_failures_and_timeouts_as_the_vocabulary_says() {
        let failed: Vec<_> = Reason::ALL
            .iter()
            .filter(|r| r.verdict() == Verdict::Failed)
            .map(|r| r.as_str())
            .collect();
        assert_eq!(
            failed,
            [
                "image_not_found",
                "image_unauthorized",
                "invalid_image_name",
                "crash_loop",
                "container_config_error",
                "container_cannot_run",
                "job_failed",
                "pod_failed",
                "apply_rejected",
                "condition_failed",
                "pvc_lost",
                "absent",
                "forbidden"
            ]
        );
        assert!(
            Reason::ALL
                .iter()
                .filter(|r| r.verdict() == Verdict::TimedOut)
                .count()
                == 8
        );
        let unfinished: Vec<_> = Reason::ALL
            .iter()
            .filter(|r| r.verdict() == Verdict::Unfinished)
            .map(|r| r.as_str())
            .collect();
        assert_eq!(
            unfinished,
            [
                "stopped_after_failure",
                "not_validated",
                "cancelled",
                "not_applied"
            ]
        );
    }

    #[test]
    fn run_result_prefers_failure_then_timeout() {
        use Verdict::*;
        assert_eq!(
            RunResult::from_verdicts([Succeeded, TimedOut, Failed]),
            RunResult::Failure
        );
        assert_eq!(
            RunResult::from_verdicts([Succeeded, TimedOut]),
            RunResult::TimedOut
        );
        assert_eq!(RunResult::from_verdicts([Succeeded]), RunResult::Success);
        assert_eq!(RunResult::from_verdicts([]), RunResult::Success);
    }
}
