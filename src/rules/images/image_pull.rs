//! Image pull trouble, gathered per container from every place Kubernetes leaves a trace:
//! the waiting state, the last state, and the kubelet's merged events (whose `count` is the
//! number of attempts). Gathering only: `pull_state` decides what the pieces prove.

use crate::rules::images::pull_error::{PullErrorClass, classify};
use crate::rules::images::pull_text;
use crate::rules::pods::pod_failure::container_ref;
use crate::vocab::outcome::ContainerRef;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{ContainerState, ContainerStatus, Event, Pod};

const PULL_WAITING_REASONS: [&str; 3] = ["ErrImagePull", "ImagePullBackOff", "RegistryUnavailable"];
/// What the kubelet shows while a container's first pull is still running.
const CREATING_REASONS: [&str; 2] = ["ContainerCreating", "PodInitializing"];

/// Where a pull error text was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorSource {
    /// The waiting message: the raw error under ErrImagePull, the 1.32+ back-off cause.
    Status,
    /// `lastState.waiting`, when the runtime left one there.
    LastState,
    /// A kubelet `Failed to pull image "X": <error>` event.
    Event,
}

/// One piece of evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullError {
    pub source: ErrorSource,
    /// The runtime's error text, without the kubelet's framing.
    pub text: String,
    pub class: PullErrorClass,
    /// Failed attempts this piece stands for: an event's `count`, 1 for a status.
    pub attempts: u32,
    pub seen: Option<Timestamp>,
}

/// Everything known about one container's pulls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullEvidence {
    pub container: ContainerRef,
    /// The runtime's name for the image (`docker.io/library/nginx:1.27` for `nginx:1.27`).
    pub status_image: Option<String>,
    /// `ErrImagePull`, `ImagePullBackOff` or `RegistryUnavailable`; `None` while the first
    /// pull is still running.
    pub waiting_reason: Option<String>,
    /// Status pieces first, then events newest first.
    pub errors: Vec<PullError>,
    /// Failed attempts so far: the Failed events' counts, at least 1 once the status shows
    /// a pull error.
    pub attempts: u32,
    /// First `Pulling`/`Failed` event and newest pull event, by the API server's clock.
    pub first_at: Option<Timestamp>,
    pub last_at: Option<Timestamp>,
}

impl PullEvidence {
    /// The image as the manifest wrote it, else as the runtime names it.
    pub fn image(&self) -> &str {
        self.container
            .image
            .as_deref()
            .or(self.status_image.as_deref())
            .unwrap_or("?")
    }

    /// The most current error: the status's own text, else the newest event's.
    pub fn last_error(&self) -> Option<&PullError> {
        self.errors.first()
    }

    /// The first piece of a class, current ones first.
    pub fn showing(&self, class: PullErrorClass) -> Option<&PullError> {
        self.errors.iter().find(|e| e.class == class)
    }

    /// Attempts that failed with one of `classes`: events count every attempt they stand
    /// for; a status alone is one attempt (it may be the same one an event counts).
    pub fn attempts_showing(&self, classes: &[PullErrorClass]) -> u32 {
        let mine = || self.errors.iter().filter(|e| classes.contains(&e.class));
        let from_events: u32 = mine()
            .filter(|e| e.source == ErrorSource::Event)
            .map(|e| e.attempts)
            .sum();
        let from_status = mine().any(|e| e.source != ErrorSource::Event);
        from_events.max(u32::from(from_status))
    }

    /// How long pulls have been going on, from the first attempt to the newest event.
    pub fn pulling_for(&self) -> Option<SignedDuration> {
        Some(self.last_at?.duration_since(self.first_at?)).filter(|d| !d.is_negative())
    }
}

/// Every container of `pod` held up by its image, init containers first; `events` are
/// the pod's core/v1 Events.
pub fn pull_evidence(pod: &Pod, events: &[Event]) -> Vec<PullEvidence> {
    let Some(status) = pod.status.as_ref() else {
        return Vec::new();
    };
    status
        .init_container_statuses
        .iter()
        .chain(status.container_statuses.iter())
        .flatten()
        .filter_map(|cs| container_evidence(pod, cs, events))
        .collect()
}

fn container_evidence(pod: &Pod, cs: &ContainerStatus, events: &[Event]) -> Option<PullEvidence> {
    let waiting = cs.state.as_ref()?.waiting.as_ref()?;
    let reason = waiting.reason.as_deref().unwrap_or_default();
    let container = container_ref(pod, &cs.name, Some(&cs.image));
    let status_image = Some(cs.image.clone()).filter(|i| !i.is_empty());
    let images: Vec<&str> = container
        .image
        .iter()
        .chain(status_image.iter())
        .map(String::as_str)
        .collect();
    let mine: Vec<&Event> = events
        .iter()
        .filter(|e| is_about(e, &cs.name, &images))
        .collect();

    let waiting_reason = if PULL_WAITING_REASONS.contains(&reason) {
        Some(reason.to_owned())
    } else if CREATING_REASONS.contains(&reason) && still_pulling(&mine) {
        None
    } else {
        return None;
    };

    let mut errors: Vec<PullError> = Vec::new();
    if let Some(text) = status_error(reason, waiting.message.as_deref()) {
        errors.push(piece(ErrorSource::Status, text, 1, None));
    }
    if let Some(text) = last_state_error(cs.last_state.as_ref()) {
        errors.push(piece(ErrorSource::LastState, text, 1, None));
    }
    let mut failed: Vec<&Event> = mine
        .iter()
        .copied()
        .filter(|e| reason_is(e, "Failed"))
        .filter(|e| {
            message(e)
                .and_then(pull_text::failed_pull)
                .is_some_and(|(i, _)| images.contains(&i))
        })
        .collect();
    failed.sort_by_key(|e| std::cmp::Reverse((last_seen(e), e.count)));
    for e in &failed {
        if let Some((_, text)) = message(e).and_then(pull_text::failed_pull) {
            errors.push(piece(ErrorSource::Event, text, count(e), last_seen(e)));
        }
    }

    let failed_to_pull: u32 = failed.iter().map(|e| count(e)).sum();
    // Each failed attempt also writes `Error: ErrImagePull`: a floor when the detailed
    // event was aggregated away or missed.
    let err_image_pull = mine
        .iter()
        .filter(|e| reason_is(e, "Failed") && message(e) == Some("Error: ErrImagePull"))
        .map(|e| count(e))
        .max()
        .unwrap_or(0);
    let from_status = u32::from(waiting_reason.is_some());
    let attempts = failed_to_pull.max(err_image_pull).max(from_status);

    let starts = mine
        .iter()
        .filter(|e| reason_is(e, "Pulling"))
        .chain(&failed)
        .filter_map(|e| first_seen(e));
    let pull_events = mine.iter().filter(|e| is_pull_event(e));
    Some(PullEvidence {
        container,
        status_image,
        waiting_reason,
        errors,
        attempts,
        first_at: starts.min(),
        last_at: pull_events.filter_map(|e| last_seen(e)).max(),
    })
}

fn piece(source: ErrorSource, text: &str, attempts: u32, seen: Option<Timestamp>) -> PullError {
    PullError {
        source,
        text: text.to_owned(),
        class: classify(text),
        attempts,
        seen,
    }
}

/// The error a waiting message carries: all of it under ErrImagePull, the cause after
/// the image under a 1.32+ ImagePullBackOff, nothing under a bare back-off.
fn status_error<'a>(reason: &str, message: Option<&'a str>) -> Option<&'a str> {
    let message = message.map(str::trim).filter(|m| !m.is_empty())?;
    match reason {
        "ImagePullBackOff" => pull_text::back_off(message).and_then(|(_, e)| e),
        "ErrImagePull" | "RegistryUnavailable" => Some(message),
        _ => None,
    }
}

fn last_state_error(state: Option<&ContainerState>) -> Option<&str> {
    let waiting = state?.waiting.as_ref()?;
    let reason = waiting.reason.as_deref().unwrap_or_default();
    PULL_WAITING_REASONS
        .contains(&reason)
        .then(|| status_error(reason, waiting.message.as_deref()))
        .flatten()
}

/// A first pull shows only as ContainerCreating plus a `Pulling` event newer than any
/// `Pulled` one.
fn still_pulling(events: &[&Event]) -> bool {
    let newest = |reason| {
        events
            .iter()
            .filter(|e| reason_is(e, reason))
            .filter_map(|e| last_seen(e))
            .max()
    };
    let pulling = events.iter().any(|e| reason_is(e, "Pulling"));
    pulling && newest("Pulling") > newest("Pulled")
}

fn is_pull_event(e: &Event) -> bool {
    let msg = message(e).unwrap_or_default();
    match e.reason.as_deref() {
        Some("Pulling" | "Pulled") => true,
        Some("Failed") => {
            pull_text::failed_pull(msg).is_some()
                || msg == "Error: ErrImagePull"
                || msg == "Error: ImagePullBackOff"
        }
        Some("BackOff") => pull_text::back_off(msg).is_some(),
        _ => false,
    }
}

/// About this container: by field path, or (for events without one) by the quoted image.
fn is_about(e: &Event, container: &str, images: &[&str]) -> bool {
    match e.involved_object.field_path.as_deref() {
        Some(f) => {
            f == format!("spec.containers{{{container}}}")
                || f == format!("spec.initContainers{{{container}}}")
        }
        None => message(e).is_some_and(|m| images.iter().any(|i| m.contains(&format!("\"{i}\"")))),
    }
}

fn message(e: &Event) -> Option<&str> {
    e.message.as_deref()
}

fn reason_is(e: &Event, reason: &str) -> bool {
    e.reason.as_deref() == Some(reason)
}

fn count(e: &Event) -> u32 {
    e.count
        .or_else(|| e.series.as_ref().and_then(|s| s.count))
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(1)
        .max(1)
}

fn first_seen(e: &Event) -> Option<Timestamp> {
    e.first_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
}

fn last_seen(e: &Event) -> Option<Timestamp> {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| {
            e.series
                .as_ref()
                .and_then(|s| s.last_observed_time.as_ref())
                .map(|t| t.0)
        })
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::{self, IMAGE};
    use crate::rules::snapshot::typed;
    use serde_json::json;

    const POD: &str = "web-7d4b9c-x2x9q";

    fn failed(message: &str, count: i32) -> Event {
        let e = fixtures::event(
            POD,
            &fixtures::uid(POD),
            "Warning",
            "Failed",
            message,
            count,
        );
        typed(&e).unwrap()
    }

    #[test]
    fn every_trace_is_gathered_and_stale_images_are_ignored() {
        let mut status = fixtures::waiting_status(
            "ImagePullBackOff",
            &format!("Back-off pulling image \"{IMAGE}\""),
        );
        // A runtime that left the previous pull error in lastState.
        status["containerStatuses"][0]["lastState"] = json!({"waiting": {"reason": "ErrImagePull",
            "message": "rpc error: code = Unknown desc = 502 Bad Gateway"}});
        let pod: Pod = typed(&fixtures::rs_pod(POD, "rs-uid-2", "7d4b9c", &status)).unwrap();
        let events = [
            failed(
                &format!(
                    "(combined from similar events): Failed to pull image \"{IMAGE}\": rpc error: code = Unknown desc = unauthorized: authentication required"
                ),
                3,
            ),
            // The image the pod ran before `kubectl set image`: not this image's attempts.
            failed(
                "Failed to pull image \"ghcr.io/acme/web:v1\": rpc error: code = NotFound desc = not found",
                5,
            ),
            failed("Error: ErrImagePull", 4),
        ];
        let found = pull_evidence(&pod, &events);
        assert_eq!(found.len(), 1);
        let ev = &found[0];
        let pieces: Vec<_> = ev
            .errors
            .iter()
            .map(|e| (e.source, e.class, e.attempts))
            .collect();
        assert_eq!(
            pieces,
            [
                (ErrorSource::LastState, PullErrorClass::Transient, 1),
                (ErrorSource::Event, PullErrorClass::Unauthorized, 3),
            ]
        );
        // The detailed events were partly aggregated away; `Error: ErrImagePull` counts 4.
        assert_eq!(ev.attempts, 4);
        assert_eq!(ev.attempts_showing(&[PullErrorClass::Unauthorized]), 3);
        assert_eq!(ev.image(), IMAGE);
    }
}
