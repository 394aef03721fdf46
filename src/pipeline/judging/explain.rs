//! A verdict made into an explained outcome: the events that tell its story and, when a
//! container failed, the last lines it wrote, from a [`LogSource`] (the cluster, or
//! nothing in a test).

use super::watched::Watched;
use crate::cluster::logs;
use crate::manifest::Manifest;
use crate::pipeline::outcomes::{self, Judged};
use crate::rules::{ObjectKey, Snapshot};
use crate::vocab::outcome::{LogTail, Outcome};
use crate::vocab::verdict::Reason;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;

/// Where a failed container's last lines come from.
pub trait LogSource: Sync {
    /// The last lines of `container` in `pod` (of its previous instance when `previous`),
    /// or `None` when there are none to give.
    fn tail<'a>(
        &'a self,
        namespace: &'a str,
        pod: &'a str,
        container: &'a str,
        previous: bool,
    ) -> BoxFuture<'a, Option<LogTail>>;
}

impl LogSource for kube::Client {
    fn tail<'a>(
        &'a self,
        namespace: &'a str,
        pod: &'a str,
        container: &'a str,
        previous: bool,
    ) -> BoxFuture<'a, Option<LogTail>> {
        Box::pin(logs::tail(self, namespace, pod, container, previous))
    }
}

/// No logs to read (a judging loop fed by a test).
pub struct NoLogs;

impl LogSource for NoLogs {
    fn tail<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a str,
        _: bool,
    ) -> BoxFuture<'a, Option<LogTail>> {
        Box::pin(async { None })
    }
}

fn uid(snapshot: &Snapshot, key: &ObjectKey) -> Option<String> {
    snapshot.uid_of(key).map(str::to_owned)
}

/// The explained outcome of `judged`, with a log tail when a container failed.
pub async fn explain(
    logs: &dyn LogSource,
    snapshot: &Snapshot,
    manifest: &Manifest,
    w: &Watched,
    judged: Judged,
) -> Outcome {
    let id = &w.pending.target.id;
    let target_uid = uid(snapshot, &w.key);
    let ns = id.namespace.clone().unwrap_or_default();
    let container = judged.container.clone();
    let pod_uid = container
        .as_ref()
        .and_then(|c| snapshot.get::<Pod>(Some(&ns), &c.pod))
        .and_then(|p| p.metadata.uid);
    let events = outcomes::events(snapshot, target_uid.as_deref(), pod_uid.as_deref());
    let reason = judged.reason;
    let seconds = w.pending.applied_at.elapsed().as_secs_f64();
    let mut outcome = outcomes::outcome(manifest, judged, seconds, events);
    if let (
        Some(c),
        Some(
            Reason::CrashLoop
            | Reason::ContainerCannotRun
            | Reason::ReadinessFailing
            | Reason::PodFailed,
        ),
    ) = (&container, reason)
    {
        let previous = reason == Some(Reason::CrashLoop);
        outcome.logs = match logs.tail(&ns, &c.pod, &c.container, previous).await {
            Some(t) => Some(t),
            None if previous => logs.tail(&ns, &c.pod, &c.container, false).await,
            None => None,
        };
    }
    outcome
}
