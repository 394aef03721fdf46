//! Turning a verdict into an explained [`Outcome`]: where in the manifests it points, the
//! events that tell the story, and the log tail of the container that failed.

use crate::manifest::Manifest;
use crate::rules::Snapshot;
use crate::vocab::outcome::{ContainerRef, EventLine, Outcome, SourceSpan};
use crate::vocab::verdict::{Reason, Verdict};
use k8s_openapi::api::core::v1::Event;

/// How many events an outcome carries.
const MAX_EVENTS: usize = 10;

fn is_image_reason(reason: Option<Reason>) -> bool {
    matches!(
        reason,
        Some(
            Reason::ImageNotFound
                | Reason::ImageUnauthorized
                | Reason::InvalidImageName
                | Reason::RegistrySlow
                | Reason::ImagePullBackoff
        )
    )
}

/// The place an annotation should point at: the container's `image:` line for image
/// reasons (or any failure naming a container), else the document.
pub fn annotation_source(
    manifest: &Manifest,
    reason: Option<Reason>,
    container: Option<&ContainerRef>,
) -> SourceSpan {
    let doc = SourceSpan {
        file: manifest.file.clone(),
        line: manifest.line,
    };
    let Some(container) = container else {
        return doc;
    };
    let image_line = manifest
        .images
        .iter()
        .find(|i| i.container == container.container)
        .map(|i| i.line);
    match image_line {
        Some(line) if is_image_reason(reason) || reason.is_some() => SourceSpan {
            file: manifest.file.clone(),
            line,
        },
        _ => doc,
    }
}

fn event_line(e: &Event) -> EventLine {
    let obj = &e.involved_object;
    EventLine {
        kind: e.type_.clone().unwrap_or_default(),
        reason: e.reason.clone().unwrap_or_default(),
        message: e.message.clone().unwrap_or_default(),
        object: format!(
            "{}/{}",
            obj.kind.clone().unwrap_or_default(),
            obj.name.clone().unwrap_or_default()
        ),
        count: e.count.and_then(|c| u32::try_from(c).ok()).unwrap_or(1),
    }
}

fn last_seen(e: &Event) -> String {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0.to_string())
        .or_else(|| e.event_time.as_ref().map(|t| t.0.to_string()))
        .unwrap_or_default()
}

/// Events about the resource and, when a container is blamed, its pod: oldest first,
/// Warnings preferred, at most [`MAX_EVENTS`].
pub fn events(
    snapshot: &Snapshot,
    target_uid: Option<&str>,
    pod_uid: Option<&str>,
) -> Vec<EventLine> {
    let mut all: Vec<Event> = Vec::new();
    for uid in [target_uid, pod_uid].into_iter().flatten() {
        all.extend(snapshot.events_for(uid));
    }
    all.sort_by_key(last_seen);
    let warnings: Vec<&Event> = all
        .iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .collect();
    let chosen: Vec<&Event> = if warnings.is_empty() {
        all.iter().collect()
    } else {
        warnings
    };
    let skip = chosen.len().saturating_sub(MAX_EVENTS);
    chosen.into_iter().skip(skip).map(event_line).collect()
}

/// What was decided about one resource: its verdict, the reason and message, and the
/// container it blames.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub verdict: Verdict,
    pub reason: Option<Reason>,
    pub message: String,
    pub container: Option<ContainerRef>,
}

impl Judged {
    pub fn new(verdict: Verdict, reason: Option<Reason>, message: impl Into<String>) -> Judged {
        Judged {
            verdict,
            reason,
            message: message.into(),
            container: None,
        }
    }

    pub fn blaming(mut self, container: Option<ContainerRef>) -> Judged {
        self.container = container;
        self
    }
}

/// Everything about a verdict on `manifest`'s resource except the logs (fetched
/// separately, as it is I/O). The resource is named as the manifest names it.
pub fn outcome(
    manifest: &Manifest,
    judged: Judged,
    seconds: f64,
    events: Vec<EventLine>,
) -> Outcome {
    let Judged {
        verdict,
        reason,
        message,
        container,
    } = judged;
    let annotation = annotation_source(manifest, reason, container.as_ref());
    let source = SourceSpan {
        file: manifest.file.clone(),
        line: manifest.line,
    };
    // An object read from the cluster (`restart`) has no file to point at.
    let from_file = !manifest.file.is_empty();
    Outcome {
        resource: manifest.id(),
        verdict,
        reason,
        message,
        annotation_source: (from_file && annotation != source).then_some(annotation),
        source: from_file.then_some(source),
        origin: manifest.origin.clone(),
        container,
        seconds: (seconds * 10.0).round() / 10.0,
        events,
        logs: None,
        change: None,
        wave: None,
    }
}

/// A manifest the API server refused to take (`message` says what it answered).
pub fn refused(m: &Manifest, message: String, seconds: f64) -> Outcome {
    let judged = Judged::new(Verdict::Failed, Some(Reason::ApplyRejected), message);
    outcome(m, judged, seconds, Vec::new())
}

/// A manifest never applied: a skipped Helm hook, or one in a wave after one that did not
/// succeed. `message` says which.
pub fn not_applied(m: &Manifest, message: String, seconds: f64) -> Outcome {
    let judged = Judged::new(Verdict::Unfinished, Some(Reason::NotApplied), message);
    outcome(m, judged, seconds, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    const DEPLOY: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: registry.local/shop/web:missing
";

    #[test]
    fn image_failures_point_at_the_image_line() {
        let m = &load_str("k8s/web.yaml", DEPLOY).unwrap()[0];
        let c = ContainerRef {
            pod: "web-1".into(),
            container: "web".into(),
            image: None,
        };
        let at = annotation_source(m, Some(Reason::ImageNotFound), Some(&c));
        assert_eq!((at.file.as_str(), at.line), ("k8s/web.yaml", 12));
        let doc = annotation_source(m, Some(Reason::NotReady), None);
        assert_eq!(doc.line, 1);
    }
}
