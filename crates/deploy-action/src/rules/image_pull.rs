//! Image pull trouble, read from pod status and kubelet events. Never a failure here: this
//! module only gathers the evidence (which container, which image, the last error text), so
//! that an image-evidence module can later turn some of it into `image_not_found`.

use crate::outcome::ContainerRef;
use crate::rules::pod_failure::container_ref;
use crate::verdict::Reason;
use k8s_openapi::api::core::v1::{ContainerStatus, Event, Pod};

const PULL_WAITING_REASONS: [&str; 3] = ["ErrImagePull", "ImagePullBackOff", "RegistryUnavailable"];

/// A container that cannot start because its image is not there yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullTrouble {
    pub container: ContainerRef,
    /// `ErrImagePull`, `ImagePullBackOff` or `RegistryUnavailable`; `None` while the first
    /// pull is still running.
    pub waiting_reason: Option<String>,
    /// The runtime's error text, when one is visible: the ErrImagePull message, the 1.32+
    /// back-off message, or the newest `Failed to pull image` event.
    pub last_error: Option<String>,
}

impl PullTrouble {
    /// The timed-out reason: `image_pull_backoff` only when back-off hides every cause.
    pub fn reason(&self) -> Reason {
        match (&self.waiting_reason, &self.last_error) {
            (Some(_), None) => Reason::ImagePullBackoff,
            _ => Reason::RegistrySlow,
        }
    }

    pub fn detail(&self) -> String {
        let name = &self.container.container;
        let image = self.container.image.as_deref().unwrap_or("?");
        match (&self.waiting_reason, &self.last_error) {
            (None, _) => format!("container {name} is still pulling image {image:?}"),
            (Some(why), Some(err)) => {
                format!("container {name} cannot pull image {image:?} yet ({why}): {err}")
            }
            (Some(why), None) => {
                format!(
                    "container {name} cannot pull image {image:?} yet ({why}), no pull error visible"
                )
            }
        }
    }
}

/// The first container of `pod` held up by its image, with the best error text that
/// `events` (the pod's core/v1 Events) and the status offer.
pub fn image_pull_state(pod: &Pod, events: &[Event]) -> Option<PullTrouble> {
    let status = pod.status.as_ref()?;
    status
        .init_container_statuses
        .iter()
        .chain(status.container_statuses.iter())
        .flatten()
        .find_map(|cs| container_pull_state(pod, cs, events))
}

fn container_pull_state(pod: &Pod, cs: &ContainerStatus, events: &[Event]) -> Option<PullTrouble> {
    let waiting = cs.state.as_ref()?.waiting.as_ref()?;
    let reason = waiting.reason.as_deref().unwrap_or_default();
    let message = waiting.message.as_deref().unwrap_or_default();
    let container = container_ref(pod, &cs.name, Some(&cs.image));
    let image = container.image.clone().unwrap_or_default();
    let mine = |e: &&Event| is_about(e, &cs.name, &image);

    if PULL_WAITING_REASONS.contains(&reason) {
        let from_status = match reason {
            "ImagePullBackOff" => backoff_error(message),
            _ => Some(message.trim()).filter(|m| !m.is_empty()),
        };
        let from_events = || {
            newest(
                events
                    .iter()
                    .filter(mine)
                    .filter(|e| reason_is(e, "Failed") && pull_error(e).is_some()),
            )
            .and_then(pull_error)
        };
        let last_error = from_status.or_else(from_events).map(str::to_owned);
        return Some(PullTrouble {
            container,
            waiting_reason: Some(reason.to_owned()),
            last_error,
        });
    }
    // A first pull in progress shows only as ContainerCreating plus a `Pulling` event.
    if reason == "ContainerCreating" || reason == "PodInitializing" {
        let pulling = newest(
            events
                .iter()
                .filter(mine)
                .filter(|e| reason_is(e, "Pulling")),
        );
        let pulled = newest(
            events
                .iter()
                .filter(mine)
                .filter(|e| reason_is(e, "Pulled")),
        );
        let still = match (pulling, pulled) {
            (Some(_), None) => true,
            (Some(a), Some(b)) => last_seen(a) > last_seen(b),
            _ => false,
        };
        if still {
            return Some(PullTrouble {
                container,
                waiting_reason: None,
                last_error: None,
            });
        }
    }
    None
}

/// The error part of a back-off message: bare up to 1.31 (`Back-off pulling image "X"`),
/// `Back-off pulling image "X": ErrImagePull: <error>` from 1.32 (kubernetes PR #127918).
fn backoff_error(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("Back-off pulling image \"")?;
    let (_, after) = rest.split_once('"')?;
    let err = after.strip_prefix(':')?.trim();
    let err = err.strip_prefix("ErrImagePull:").map_or(err, str::trim);
    (!err.is_empty()).then_some(err)
}

fn is_about(e: &Event, container: &str, image: &str) -> bool {
    let by_field = e.involved_object.field_path.as_deref().is_some_and(|f| {
        f == format!("spec.containers{{{container}}}")
            || f == format!("spec.initContainers{{{container}}}")
    });
    let by_image = e
        .message
        .as_deref()
        .is_some_and(|m| m.contains(&format!("\"{image}\"")));
    by_field || (e.involved_object.field_path.is_none() && by_image)
}

fn reason_is(e: &Event, reason: &str) -> bool {
    e.reason.as_deref() == Some(reason)
}

fn last_seen(e: &Event) -> Option<jiff::Timestamp> {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
}

fn newest<'a>(events: impl Iterator<Item = &'a Event>) -> Option<&'a Event> {
    events.max_by_key(|e| (last_seen(e), e.count))
}

/// The runtime error in a kubelet `Failed to pull image "X": <error>` event.
fn pull_error(e: &Event) -> Option<&str> {
    let text = e
        .message
        .as_deref()?
        .strip_prefix("Failed to pull image \"")?;
    text.split_once("\": ").map(|(_, err)| err.trim())
}
