//! Where one pod stands, in the terms the verdicts use: ready, finished, doomed, or held
//! up by something with a name (pulls, scheduling, readiness). Workload rules and the Pod
//! rule both build on this so a pod reads the same everywhere.

use crate::rules::images::pull_state::{PullDecision, PullTrouble, image_pull_state};
use crate::rules::images::registry_view::RegistryViews;
use crate::rules::pods::pod_failure::{Doom, container_ref, doom};
use crate::rules::snapshot::or_default;
use crate::vocab::outcome::ContainerRef;
use crate::vocab::verdict::Reason;
use k8s_openapi::api::core::v1::{
    ContainerStateTerminated, ContainerStatus, Event, Pod, PodCondition,
};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodState {
    Ready,
    /// Phase Succeeded.
    Completed,
    /// Phase Failed: `reason` is the pod's status reason (Evicted, DeadlineExceeded, ...).
    Terminated {
        reason: Option<String>,
        message: String,
    },
    Doomed(Doom),
    Pulling(PullTrouble),
    Unschedulable {
        message: String,
    },
    ReadinessFailing {
        container: ContainerRef,
        detail: String,
    },
    Starting {
        container: Option<ContainerRef>,
        detail: String,
    },
}

impl PodState {
    /// Phase Succeeded or Failed: the pod will not change any more.
    pub fn is_terminal(&self) -> bool {
        matches!(self, PodState::Completed | PodState::Terminated { .. })
    }

    /// The timed-out reason this pod would give a workload that times out waiting for it.
    pub fn pending_reason(&self) -> Reason {
        match self {
            PodState::Pulling(trouble) => trouble.reason(),
            PodState::Unschedulable { .. } => Reason::Unschedulable,
            PodState::ReadinessFailing { .. } => Reason::ReadinessFailing,
            _ => Reason::NotReady,
        }
    }

    pub fn detail(&self) -> String {
        match self {
            PodState::Ready => "ready".to_owned(),
            PodState::Completed => "completed".to_owned(),
            PodState::Terminated { reason, message } => match reason {
                Some(r) => format!("{r}: {message}"),
                None => message.clone(),
            },
            PodState::Doomed(d) => d.detail.clone(),
            PodState::Pulling(t) => t.detail(),
            PodState::Unschedulable { message } => message.clone(),
            PodState::ReadinessFailing { detail, .. } | PodState::Starting { detail, .. } => {
                detail.clone()
            }
        }
    }

    pub fn container(&self) -> Option<ContainerRef> {
        match self {
            PodState::Doomed(d) => Some(d.container.clone()),
            PodState::Pulling(t) => Some(t.container.clone()),
            PodState::ReadinessFailing { container, .. } => Some(container.clone()),
            PodState::Starting { container, .. } => container.clone(),
            _ => None,
        }
    }
}

/// Classifies a pod; `events` are the core/v1 Events about it, `registry` the runner's
/// registry lookups.
#[cfg(test)]
pub fn pod_state(pod: &Pod, events: &[Event], registry: &RegistryViews) -> PodState {
    pod_state_with(pod, || events.to_vec(), registry)
}

/// [`pod_state_with`] for a pod of `snapshot`: its Events and the registry views come
/// from there, the Events read only when needed.
pub fn pod_state_in(pod: &Pod, snapshot: &crate::rules::snapshot::Snapshot) -> PodState {
    let events = || {
        pod.metadata
            .uid
            .as_deref()
            .map(|uid| snapshot.events_for(uid))
            .unwrap_or_default()
    };
    pod_state_with(pod, events, snapshot.registry_views())
}

/// [`pod_state`] that reads the pod's Events only when its status alone cannot tell
/// (a ready, finished or doomed pod is classified without them).
pub fn pod_state_with(
    pod: &Pod,
    events: impl FnOnce() -> Vec<Event>,
    registry: &RegistryViews,
) -> PodState {
    let status = or_default(&pod.status);
    match status.phase.as_deref() {
        Some("Succeeded") => return PodState::Completed,
        Some("Failed") => {
            let message = status.message.clone().unwrap_or_else(|| last_exit(pod));
            return PodState::Terminated {
                reason: status.reason.clone(),
                message,
            };
        }
        _ => {}
    }
    if condition(pod, "Ready").is_some_and(|c| c.status == "True") {
        return PodState::Ready;
    }
    if let Some(d) = doom(pod) {
        return PodState::Doomed(d);
    }
    let events = &events();
    match image_pull_state(pod, events, registry) {
        Some(PullDecision::Doomed(d)) => return PodState::Doomed(d),
        Some(PullDecision::Waiting(t)) => return PodState::Pulling(t),
        None => {}
    }
    if let Some(c) = condition(pod, "PodScheduled").filter(|c| c.status == "False")
        && c.reason.as_deref() == Some("Unschedulable")
    {
        return PodState::Unschedulable {
            message: c.message.clone().unwrap_or_default(),
        };
    }
    let statuses = status.container_statuses.iter().flatten();
    if status.phase.as_deref() == Some("Running")
        && let Some(cs) = statuses
            .clone()
            .find(|cs| !cs.ready && cs.state.as_ref().is_some_and(|s| s.running.is_some()))
    {
        let probe = events
            .iter()
            .filter(|e| e.reason.as_deref() == Some("Unhealthy"))
            .filter_map(|e| e.message.as_deref())
            .find(|m| m.starts_with("Readiness probe failed"));
        let mut detail = format!("container {} is running but not ready", cs.name);
        if let Some(probe) = probe {
            detail = format!("{detail}: {}", probe.trim());
        }
        return PodState::ReadinessFailing {
            container: container_ref(pod, &cs.name, Some(&cs.image)),
            detail,
        };
    }
    let waiting = status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(statuses)
        .find_map(|cs| {
            let w = cs.state.as_ref()?.waiting.as_ref()?;
            let why = w.reason.as_deref().unwrap_or("waiting");
            let detail = match w.message.as_deref().filter(|m| !m.is_empty()) {
                Some(m) => format!("container {} is waiting ({why}): {m}", cs.name),
                None => format!("container {} is waiting ({why})", cs.name),
            };
            Some((cs, detail))
        });
    match waiting {
        Some((cs, detail)) => PodState::Starting {
            container: Some(container_ref(pod, &cs.name, Some(&cs.image))),
            detail,
        },
        None => PodState::Starting {
            container: None,
            detail: format!(
                "pod is {}",
                status.phase.as_deref().unwrap_or("not scheduled yet")
            ),
        },
    }
}

fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

/// The first container that exited non-zero, with its exit code and reason.
fn failed_exit(pod: &Pod) -> Option<(&ContainerStatus, &ContainerStateTerminated)> {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .find_map(|cs| {
            let t = cs.state.as_ref()?.terminated.as_ref()?;
            (t.exit_code != 0).then_some((cs, t))
        })
}

fn last_exit(pod: &Pod) -> String {
    failed_exit(pod).map_or_else(
        || "pod failed".to_owned(),
        |(cs, t)| {
            let why = t.reason.as_deref().unwrap_or("Error");
            format!(
                "container {} exited with code {} ({why})",
                cs.name, t.exit_code
            )
        },
    )
}

/// Whether a pod is in a terminal phase (Succeeded or Failed): it will not run again,
/// whatever its containers did.
pub fn finished(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

/// The container whose exit failed a pod that ended Failed on its own (no eviction or
/// deadline of the node's or the API's): the one whose logs say why.
pub fn failed_container(pod: &Pod) -> Option<ContainerRef> {
    let status = pod.status.as_ref()?;
    if status.phase.as_deref() != Some("Failed") || status.reason.is_some() {
        return None;
    }
    let (cs, _) = failed_exit(pod)?;
    Some(container_ref(pod, &cs.name, Some(&cs.image)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::{self, IMAGE};
    use crate::rules::snapshot::typed;
    use serde_json::{Value, json};

    const POD: &str = "web-7d4b9c-x2x9q";

    fn state(status: &Value, events: &[Value]) -> PodState {
        let pod: Pod = typed(&fixtures::rs_pod(POD, "rs-uid-2", "7d4b9c", status)).unwrap();
        let events: Vec<Event> = events.iter().map(|e| typed(e).unwrap()).collect();
        pod_state(&pod, &events, &RegistryViews::new())
    }

    fn event(type_: &str, reason: &str, message: &str, count: i32) -> Value {
        fixtures::event(POD, &fixtures::uid(POD), type_, reason, message, count)
    }

    #[track_caller]
    fn case(status: &Value, events: &[Value], reason: Reason, detail: &str) {
        let s = state(status, events);
        assert_eq!(
            (s.pending_reason(), s.detail().as_str()),
            (reason, detail),
            "{s:?}"
        );
    }

    #[test]
    fn a_bare_back_off_is_image_pull_backoff_but_a_visible_error_is_registry_slow() {
        let bare = format!("Back-off pulling image \"{IMAGE}\"");
        case(
            &fixtures::waiting_status("ImagePullBackOff", &bare),
            &[event("Normal", "BackOff", &bare, 6)],
            Reason::ImagePullBackoff,
            "container web cannot pull image \"ghcr.io/acme/web:v2\" yet (ImagePullBackOff), no pull error visible",
        );
        // Kubernetes 1.32+ appends the last error to the back-off message.
        case(
            &fixtures::waiting_status(
                "ImagePullBackOff",
                &format!(
                    "{bare}: ErrImagePull: failed to pull and unpack image \"{IMAGE}\": failed to resolve reference \"{IMAGE}\": unexpected status from HEAD request: 429 Too Many Requests"
                ),
            ),
            &[],
            Reason::RegistrySlow,
            "still pulling ghcr.io/acme/web:v2 after 1 failed attempt; last error: 429 Too Many Requests",
        );
        // Up to 1.31 the cause is only in the kubelet's Failed event.
        case(
            &fixtures::waiting_status("ImagePullBackOff", &bare),
            &[
                event("Warning", "Failed", "Error: ErrImagePull", 3),
                event(
                    "Warning",
                    "Failed",
                    &format!(
                        "Failed to pull image \"{IMAGE}\": rpc error: code = Unknown desc = dial tcp: lookup ghcr.io: i/o timeout"
                    ),
                    3,
                ),
                event("Normal", "BackOff", &bare, 5),
            ],
            Reason::RegistrySlow,
            "still pulling ghcr.io/acme/web:v2 after 3 failed attempts over 5m0s; last error: dial tcp: lookup ghcr.io: i/o timeout",
        );
        case(
            &fixtures::waiting_status(
                "ErrImagePull",
                "rpc error: code = Unknown desc = 503 Service Unavailable",
            ),
            &[],
            Reason::RegistrySlow,
            "still pulling ghcr.io/acme/web:v2 after 1 failed attempt; last error: 503 Service Unavailable",
        );
    }

    #[test]
    fn a_first_pull_in_progress_is_registry_slow_until_pulled() {
        let creating = fixtures::waiting_status("ContainerCreating", "");
        let pulling = event(
            "Normal",
            "Pulling",
            &format!("Pulling image \"{IMAGE}\""),
            1,
        );
        case(
            &creating,
            std::slice::from_ref(&pulling),
            Reason::RegistrySlow,
            "container web is still pulling image \"ghcr.io/acme/web:v2\"",
        );
        let pulled = event(
            "Normal",
            "Pulled",
            &format!(
                "Successfully pulled image \"{IMAGE}\" in 2.1s (2.1s including waiting). Image size: 4523456 bytes."
            ),
            2,
        );
        case(
            &creating,
            &[pulling, pulled],
            Reason::NotReady,
            "container web is waiting (ContainerCreating)",
        );
    }

    #[test]
    fn scheduling_and_readiness_trouble_have_their_own_reasons() {
        case(
            &fixtures::unschedulable_status(),
            &[],
            Reason::Unschedulable,
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
        );
        case(
            &fixtures::running_not_ready_status(),
            &[event(
                "Warning",
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                9,
            )],
            Reason::ReadinessFailing,
            "container web is running but not ready: Readiness probe failed: HTTP probe failed with statuscode: 503",
        );
    }

    #[test]
    fn phases_and_readiness_come_before_container_details() {
        assert_eq!(state(&fixtures::ready_status(), &[]), PodState::Ready);
        let evicted = json!({"phase": "Failed", "reason": "Evicted",
            "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki.",
            "startTime": "2025-03-04T10:15:00Z"});
        let s = state(&evicted, &[]);
        assert!(s.is_terminal());
        assert_eq!(
            s.detail(),
            "Evicted: The node was low on resource: memory. Threshold quantity: 100Mi, available: 51200Ki."
        );
        let crashed = fixtures::crash_loop_status(1, "Error", 3);
        assert!(
            matches!(state(&crashed, &[]), PodState::Doomed(d) if d.reason == Reason::CrashLoop)
        );
    }
}
