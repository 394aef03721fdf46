//! Where a resource stands right now, and the one place that turns that into a verdict
//! once time is taken into account: rules never look at the clock, `judge` does.

use crate::vocab::outcome::ContainerRef;
use crate::vocab::verdict::{Reason, Verdict};
use std::time::Duration;

/// A rule's reading of the objects seen so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assessment {
    Succeeded {
        message: String,
    },
    /// Evidence that waiting cannot fix; `reason` is a failed-verdict reason.
    Failed {
        reason: Reason,
        message: String,
        container: Option<ContainerRef>,
    },
    /// Not there yet. `reason` is the timed-out reason that applies if the deadline passes
    /// now; `message` is the current state, shown as progress.
    Pending {
        reason: Reason,
        message: String,
        container: Option<ContainerRef>,
    },
}

impl Assessment {
    pub fn succeeded(message: impl Into<String>) -> Self {
        Assessment::Succeeded {
            message: message.into(),
        }
    }

    pub fn failed(reason: Reason, message: impl Into<String>) -> Self {
        debug_assert_eq!(
            reason.verdict(),
            Verdict::Failed,
            "{reason} is not a failure"
        );
        Assessment::Failed {
            reason,
            message: message.into(),
            container: None,
        }
    }

    pub fn pending(reason: Reason, message: impl Into<String>) -> Self {
        debug_assert_eq!(
            reason.verdict(),
            Verdict::TimedOut,
            "{reason} is not a timeout"
        );
        Assessment::Pending {
            reason,
            message: message.into(),
            container: None,
        }
    }

    /// Pending for the most common reason: nothing more specific is known.
    pub fn not_ready(message: impl Into<String>) -> Self {
        Assessment::pending(Reason::NotReady, message)
    }

    pub fn with_container(self, container: Option<ContainerRef>) -> Self {
        match self {
            Assessment::Failed {
                reason, message, ..
            } => Assessment::Failed {
                reason,
                message,
                container,
            },
            Assessment::Pending {
                reason, message, ..
            } => Assessment::Pending {
                reason,
                message,
                container,
            },
            done @ Assessment::Succeeded { .. } => done,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Assessment::Succeeded { message }
            | Assessment::Failed { message, .. }
            | Assessment::Pending { message, .. } => message,
        }
    }

    pub fn reason(&self) -> Option<Reason> {
        match self {
            Assessment::Succeeded { .. } => None,
            Assessment::Failed { reason, .. } | Assessment::Pending { reason, .. } => Some(*reason),
        }
    }

    pub fn container(&self) -> Option<&ContainerRef> {
        match self {
            Assessment::Succeeded { .. } => None,
            Assessment::Failed { container, .. } | Assessment::Pending { container, .. } => {
                container.as_ref()
            }
        }
    }
}

/// The verdict, once there is one. `now` is the time since the apply, `deadline` the
/// resource's timeout. Succeeded and Failed are final at once; Pending becomes TimedOut with
/// its reason when the deadline has passed, or at once when the cluster itself gave up
/// (a Deployment's ProgressDeadlineExceeded: waiting longer shows nothing new).
pub fn judge(
    assessment: Assessment,
    now: Duration,
    deadline: Duration,
) -> Option<(Verdict, Option<Reason>, String)> {
    match assessment {
        Assessment::Succeeded { message } => Some((Verdict::Succeeded, None, message)),
        Assessment::Failed {
            reason, message, ..
        } => Some((Verdict::Failed, Some(reason), message)),
        Assessment::Pending {
            reason, message, ..
        } => (reason == Reason::ProgressDeadlineExceeded || now >= deadline).then_some((
            Verdict::TimedOut,
            Some(reason),
            message,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEADLINE: Duration = Duration::from_secs(300);

    #[track_caller]
    fn case(assessment: Assessment, now_secs: u64, expected: Option<(Verdict, Option<Reason>)>) {
        let message = assessment.message().to_owned();
        let got = judge(assessment, Duration::from_secs(now_secs), DEADLINE);
        assert_eq!(got.as_ref().map(|(v, r, _)| (*v, *r)), expected);
        if let Some((_, _, m)) = got {
            assert_eq!(m, message);
        }
    }

    #[test]
    fn final_assessments_are_judged_at_once_and_pending_ones_at_the_deadline() {
        use Verdict::*;
        case(
            Assessment::succeeded("3/3 replicas updated and available"),
            1,
            Some((Succeeded, None)),
        );
        case(
            Assessment::failed(Reason::CrashLoop, "1 of 1 pod crash looping"),
            1,
            Some((Failed, Some(Reason::CrashLoop))),
        );
        case(
            Assessment::pending(Reason::RegistrySlow, "pulling"),
            299,
            None,
        );
        case(
            Assessment::pending(Reason::RegistrySlow, "pulling"),
            300,
            Some((TimedOut, Some(Reason::RegistrySlow))),
        );
        case(
            Assessment::pending(Reason::Unschedulable, "0/3 nodes are available"),
            301,
            Some((TimedOut, Some(Reason::Unschedulable))),
        );
    }

    #[test]
    fn progress_deadline_exceeded_ends_the_wait_before_our_deadline() {
        case(
            Assessment::pending(
                Reason::ProgressDeadlineExceeded,
                "ReplicaSet has timed out progressing",
            ),
            5,
            Some((Verdict::TimedOut, Some(Reason::ProgressDeadlineExceeded))),
        );
    }

    #[test]
    fn container_survives_reason_changes_and_is_dropped_on_success() {
        let c = ContainerRef {
            pod: "web-7d4b9c-x2x9q".into(),
            container: "web".into(),
            image: Some("ghcr.io/acme/web:v2".into()),
        };
        let a = Assessment::not_ready("starting").with_container(Some(c.clone()));
        assert_eq!(a.container(), Some(&c));
        assert_eq!(a.reason(), Some(Reason::NotReady));
        assert_eq!(
            Assessment::succeeded("ok")
                .with_container(Some(c))
                .container(),
            None
        );
    }
}
