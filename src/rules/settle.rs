//! The stability window: a workload whose pods crash a second after they start can become
//! Available before the first crash, so "available" alone is no proof. A workload succeeds
//! only once its new pods have run for the window without a restart; a restart inside it
//! is `crash_loop`. Time is measured on the runner's clock from the moment the rule first
//! said "succeeded" (cluster timestamps may be skewed), and passed in as a value.

use crate::pointer::Pointer;
use crate::rules::annotations::timeout::parse_annotation_duration;
use crate::rules::assessment::Assessment;
use crate::rules::kinds;
use crate::rules::live::Live;
use crate::rules::pods::pod_state::finished;
use crate::rules::snapshot::{Snapshot, typed};
use crate::rules::target::Target;
use crate::rules::workloads::rollout_views::ReplicaSetView;
use crate::vocab::outcome::ContainerRef;
use crate::vocab::verdict::Reason;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// Per-resource override of `--settle`.
pub const SETTLE_ANNOTATION: &str = "deploy-action.io/settle";

/// Restart counts of the watched pods' containers, keyed by (pod name, container).
pub type Restarts = BTreeMap<(String, String), i32>;

/// What the window remembers between assessments of one resource.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settling {
    /// When (runner time since apply) the rule last started saying "succeeded".
    since: Option<Duration>,
    /// Restart counts when the workload was first seen succeeded: a count above these is
    /// a restart inside the window.
    baseline: Option<Restarts>,
}

impl Settling {
    /// The view of the cluster was interrupted: the window starts again once the rule
    /// says "succeeded" on a fresh view. The baseline stays, so a restart that happened
    /// unseen is still a restart inside the window.
    pub fn interrupted(&mut self) {
        self.since = None;
    }
}

/// The window for `target`: its annotation, else `default`, less the workload's own
/// `minReadySeconds` (the controller already waited that long before calling it available).
/// Zero for kinds without long-running pods.
pub fn window(target: &Target, obj: &Value, default: Duration) -> Duration {
    window_with(target, default, || {
        obj.at("/spec/minReadySeconds").and_then(Value::as_u64)
    })
}

/// [`window`] for the object as last seen: from its `Value` when a rule has parsed it
/// already, else reading only `minReadySeconds` from its text.
pub fn live_window(target: &Target, obj: &Live, default: Duration) -> Duration {
    /// The one field the window reads; anything else in the text is skipped.
    #[derive(serde::Deserialize)]
    struct MinReady {
        spec: Option<MinReadySpec>,
    }
    #[derive(serde::Deserialize)]
    struct MinReadySpec {
        #[serde(rename = "minReadySeconds")]
        min_ready_seconds: Option<u64>,
    }
    if let Some(value) = obj.parsed() {
        return window(target, value, default);
    }
    window_with(target, default, || {
        // Not a whole number of seconds (or not readable): none, as for `window`.
        let read: Option<MinReady> = obj.typed().ok();
        read?.spec?.min_ready_seconds
    })
}

fn window_with(
    target: &Target,
    default: Duration,
    min_ready: impl FnOnce() -> Option<u64>,
) -> Duration {
    if kinds::of(target.group(), target.kind()).settles().is_none() {
        return Duration::ZERO;
    }
    let own = target
        .annotations
        .get(SETTLE_ANNOTATION)
        .and_then(|v| parse_annotation_duration(v))
        .unwrap_or(default);
    if own.is_zero() {
        return own;
    }
    let min_ready = min_ready().map_or(Duration::ZERO, Duration::from_secs);
    own.saturating_sub(min_ready)
}

/// The live pods whose stability counts: those its row names (a Deployment's newest
/// ReplicaSet's, a StatefulSet's update revision's, a DaemonSet's or ReplicaSet's own, or
/// the Pod itself), less those being deleted. `obj` is the target's object as the caller
/// read it for the rule: its `Value` is reused when the rule parsed one.
pub fn pods_of(target: &Target, obj: &Live, snapshot: &Snapshot) -> Vec<Pod> {
    let Some(pods_of) = kinds::of(target.group(), target.kind()).settles() else {
        return Vec::new();
    };
    pods_of(obj.value(), snapshot)
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .collect()
}

fn uid(obj: &Value) -> Option<&str> {
    obj.at("/metadata/uid").and_then(Value::as_str)
}

/// A Pod's own stability.
pub(crate) fn the_pod(obj: &Value, _: &Snapshot) -> Vec<Pod> {
    typed(obj).into_iter().collect()
}

/// The pods it owns (a ReplicaSet's, a DaemonSet's).
pub(crate) fn owned_pods(obj: &Value, snapshot: &Snapshot) -> Vec<Pod> {
    uid(obj).map_or_else(Vec::new, |uid| snapshot.children::<Pod>(uid))
}

/// A Deployment's: the pods of its newest ReplicaSet.
pub(crate) fn newest_replica_set_pods(obj: &Value, snapshot: &Snapshot) -> Vec<Pod> {
    uid(obj)
        .and_then(|uid| {
            snapshot
                .children::<ReplicaSetView>(uid)
                .into_iter()
                .max_by_key(|rs| rs.metadata.revision)
        })
        .and_then(|rs| rs.metadata.uid)
        .map(|rs| snapshot.children::<Pod>(&rs))
        .unwrap_or_default()
}

/// A StatefulSet's: its pods of the update revision.
pub(crate) fn update_revision_pods(obj: &Value, snapshot: &Snapshot) -> Vec<Pod> {
    let update = obj.at("/status/updateRevision").and_then(Value::as_str);
    owned_pods(obj, snapshot)
        .into_iter()
        .filter(|p| {
            update.is_none()
                || p.metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("controller-revision-hash"))
                    .map(String::as_str)
                    == update
        })
        .collect()
}

fn statuses(pod: &Pod) -> impl Iterator<Item = &ContainerStatus> {
    pod.status
        .iter()
        .flat_map(|s| s.container_statuses.iter().flatten())
}

/// Restart counts of `pods`' containers.
pub fn restarts(pods: &[Pod]) -> Restarts {
    pods.iter()
        .flat_map(|p| {
            let name = p.metadata.name.clone().unwrap_or_default();
            statuses(p).map(move |c| ((name.clone(), c.name.clone()), c.restart_count))
        })
        .collect()
}

/// A container that went down inside the window: restarted past its baseline, or down
/// right now (terminated, or waiting in CrashLoopBackOff). Only containers meant to keep
/// running count, and only by their own restarts or exits: not a pod that has ended (one
/// evicted, or completed: its verdict is its phase's, and a controller replaces it), not a
/// container of a `restartPolicy: Never` pod (it runs once), and not one of an `OnFailure`
/// pod that exited 0 (it completed).
fn crashed<'a>(pods: &'a [Pod], baseline: &Restarts) -> Option<(&'a Pod, &'a ContainerStatus)> {
    pods.iter().filter(|p| !finished(p)).find_map(|p| {
        let name = p.metadata.name.clone().unwrap_or_default();
        let policy = p.spec.as_ref().and_then(|s| s.restart_policy.as_deref());
        statuses(p)
            .find(|c| {
                let before = baseline
                    .get(&(name.clone(), c.name.clone()))
                    .copied()
                    .unwrap_or(0);
                let state = c.state.as_ref();
                let exited =
                    state
                        .and_then(|s| s.terminated.as_ref())
                        .is_some_and(|t| match policy {
                            Some("Never") => false,
                            Some("OnFailure") => t.exit_code != 0,
                            _ => true,
                        });
                c.restart_count > before
                    || exited
                    || state
                        .and_then(|s| s.waiting.as_ref())
                        .and_then(|w| w.reason.as_deref())
                        == Some("CrashLoopBackOff")
            })
            .map(|c| (p, c))
    })
}

/// `restarted 1 time`, `restarted 3 times`.
fn times(n: i32) -> String {
    format!("{n} time{}", if n == 1 { "" } else { "s" })
}

fn crash_message(pod: &Pod, c: &ContainerStatus, before: i32, window: Duration) -> String {
    let pod_name = pod.metadata.name.as_deref().unwrap_or_default();
    let terminated = c
        .state
        .as_ref()
        .and_then(|s| s.terminated.as_ref())
        .or_else(|| c.last_state.as_ref().and_then(|s| s.terminated.as_ref()));
    let how = match terminated {
        Some(t) => {
            let mut how = format!("exited with code {}", t.exit_code);
            if let Some(reason) = t.reason.as_deref().filter(|r| *r != "Error") {
                how.push_str(&format!(" ({reason})"));
            }
            how
        }
        None => "went down".to_owned(),
    };
    let restarted = (c.restart_count - before).max(0);
    let count = if restarted > 0 {
        format!("restarted {}", times(restarted))
    } else {
        "stopped".to_owned()
    };
    format!(
        "container {} of pod {pod_name} {how} and {count} within the {}s stability window",
        c.name,
        window.as_secs()
    )
}

/// Pass the rule's assessment through the window. `now` is the runner's time since the
/// apply. Returns the assessment to judge, and when to look again if only time is missing.
#[cfg(test)]
pub fn settle(
    state: &mut Settling,
    assessment: Assessment,
    pods: &[Pod],
    window: Duration,
    now: Duration,
) -> (Assessment, Option<Duration>) {
    settle_with(state, assessment, || pods.to_vec(), window, now)
}

/// [`settle`] that reads the pods only when the window needs them: not with no window,
/// nor for an assessment short of success before any baseline was taken.
pub fn settle_with(
    state: &mut Settling,
    assessment: Assessment,
    pods: impl FnOnce() -> Vec<Pod>,
    window: Duration,
    now: Duration,
) -> (Assessment, Option<Duration>) {
    if window.is_zero() {
        return (assessment, None);
    }
    // What the code below does without a baseline to compare against.
    if state.baseline.is_none() && !matches!(assessment, Assessment::Succeeded { .. }) {
        state.since = None;
        return (assessment, None);
    }
    let pods = &pods();
    if let Some(baseline) = &state.baseline
        && let Some((pod, c)) = crashed(pods, baseline)
    {
        let key = (
            pod.metadata.name.clone().unwrap_or_default(),
            c.name.clone(),
        );
        let before = baseline.get(&key).copied().unwrap_or(0);
        let container = ContainerRef {
            pod: key.0,
            container: key.1,
            image: Some(c.image.clone()).filter(|i| !i.is_empty()),
        };
        let failed = Assessment::failed(Reason::CrashLoop, crash_message(pod, c, before, window))
            .with_container(Some(container));
        return (failed, None);
    }
    let Assessment::Succeeded { message } = assessment else {
        state.since = None;
        return (assessment, None);
    };
    let since = *state.since.get_or_insert(now);
    if state.baseline.is_none() {
        state.baseline = Some(restarts(pods));
    }
    let stable = now.saturating_sub(since);
    if stable >= window {
        let n = pods.len();
        let noun = if n == 1 { "pod" } else { "pods" };
        return (
            Assessment::succeeded(format!(
                "{message}; {n} {noun} ran {}s without a restart",
                window.as_secs()
            )),
            None,
        );
    }
    (
        // The wording stays the same while the window runs, so progress prints it once.
        Assessment::not_ready(format!(
            "{message}; watching {}s for restarts",
            window.as_secs()
        )),
        Some(since + window),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures;
    use serde_json::json;

    const WINDOW: Duration = Duration::from_secs(10);

    fn pod(restarts: i32, state: &Value, last_state: &Value) -> Pod {
        typed(&json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-7d4b9c-x2x9q", "namespace": "shop",
                "uid": "0a0a0a0a-0000-4000-8000-000000000001", "resourceVersion": "812"},
            "spec": {"containers": [{"name": "web", "image": "ghcr.io/acme/web:v2"}]},
            "status": {"phase": "Running", "containerStatuses": [{
                "name": "web", "image": "ghcr.io/acme/web:v2", "imageID": "",
                "ready": state.get("running").is_some(), "restartCount": restarts,
                "started": state.get("running").is_some(),
                "state": state, "lastState": last_state}]}
        }))
        .unwrap()
    }

    fn running() -> Value {
        json!({"running": {"startedAt": "2025-03-04T10:15:02Z"}})
    }

    /// A window that has seen one healthy pod succeed at time zero.
    fn seen_succeeded() -> Settling {
        let mut state = Settling::default();
        let pods = [pod(0, &running(), &json!({}))];
        settle(&mut state, ok(), &pods, WINDOW, Duration::ZERO);
        state
    }

    fn terminated(code: i32, reason: &str) -> Value {
        json!({"terminated": {"exitCode": code, "reason": reason,
            "startedAt": "2025-03-04T10:15:02Z", "finishedAt": "2025-03-04T10:15:03Z"}})
    }

    fn ok() -> Assessment {
        Assessment::succeeded("2/2 replicas updated and available")
    }

    #[test]
    fn success_waits_out_the_window_then_says_how_long_it_was_stable() {
        let mut state = Settling::default();
        let pods = [pod(0, &running(), &json!({}))];
        let (a, wake) = settle(&mut state, ok(), &pods, WINDOW, Duration::from_secs(2));
        assert_eq!(a.reason(), Some(Reason::NotReady));
        assert!(
            a.message().ends_with("; watching 10s for restarts"),
            "{a:?}"
        );
        assert_eq!(wake, Some(Duration::from_secs(12)));
        let (a, wake) = settle(&mut state, ok(), &pods, WINDOW, Duration::from_secs(7));
        assert_eq!(a.reason(), Some(Reason::NotReady));
        assert_eq!(wake, Some(Duration::from_secs(12)));
        let (a, wake) = settle(&mut state, ok(), &pods, WINDOW, Duration::from_secs(12));
        assert_eq!(
            a,
            Assessment::succeeded(
                "2/2 replicas updated and available; 1 pod ran 10s without a restart"
            )
        );
        assert_eq!(wake, None);
    }

    #[test]
    fn a_crash_inside_the_window_is_a_crash_loop_even_before_the_pod_restarts() {
        let mut state = seen_succeeded();
        // One second later the container exited 1 and the rollout no longer looks done.
        let down = pod(0, &terminated(1, "Error"), &json!({}));
        let (a, _) = settle(
            &mut state,
            Assessment::not_ready("1/2 available"),
            &[down],
            WINDOW,
            Duration::from_secs(1),
        );
        assert_eq!(a.reason(), Some(Reason::CrashLoop));
        assert_eq!(
            a.message(),
            "container web of pod web-7d4b9c-x2x9q exited with code 1 and stopped within the 10s stability window"
        );
        assert_eq!(
            a.container().unwrap().image.as_deref(),
            Some("ghcr.io/acme/web:v2")
        );
    }

    /// `pod` with its restart policy and phase set.
    fn with(mut pod: Pod, policy: &str, phase: &str) -> Pod {
        pod.spec.as_mut().unwrap().restart_policy = Some(policy.to_owned());
        pod.status.as_mut().unwrap().phase = Some(phase.to_owned());
        pod
    }

    #[test]
    fn only_containers_meant_to_keep_running_can_crash_and_only_by_their_own_doing() {
        let judged = |down: Pod| {
            let mut state = seen_succeeded();
            settle(&mut state, ok(), &[down], WINDOW, Duration::from_secs(1))
                .0
                .reason()
        };
        let exited = |code, reason| pod(0, &terminated(code, reason), &json!({}));
        // A one-shot container that completed, running or not yet marked Succeeded.
        assert_eq!(
            judged(with(exited(0, "Completed"), "Never", "Running")),
            Some(Reason::NotReady)
        );
        assert_eq!(
            judged(with(exited(0, "Completed"), "Never", "Succeeded")),
            Some(Reason::NotReady)
        );
        // A one-shot container that failed is the pod's failure to judge, not a crash loop.
        assert_eq!(
            judged(with(exited(1, "Error"), "Never", "Failed")),
            Some(Reason::NotReady)
        );
        // OnFailure: exit 0 completes, anything else is a crash.
        assert_eq!(
            judged(with(exited(0, "Completed"), "OnFailure", "Running")),
            Some(Reason::NotReady)
        );
        assert_eq!(
            judged(with(exited(1, "Error"), "OnFailure", "Running")),
            Some(Reason::CrashLoop)
        );
        // An evicted pod was stopped by its node; its replacement carries the rollout.
        assert_eq!(
            judged(with(exited(137, "Error"), "Always", "Failed")),
            Some(Reason::NotReady)
        );
        // A container meant to run that exits, even with 0, went down.
        assert_eq!(
            judged(with(exited(0, "Completed"), "Always", "Running")),
            Some(Reason::CrashLoop)
        );
    }

    #[test]
    fn a_restart_that_is_already_running_again_still_fails_and_names_oom() {
        let mut state = seen_succeeded();
        let again = pod(1, &running(), &terminated(137, "OOMKilled"));
        let (a, _) = settle(&mut state, ok(), &[again], WINDOW, Duration::from_secs(3));
        assert_eq!(
            a.message(),
            "container web of pod web-7d4b9c-x2x9q exited with code 137 (OOMKilled) and restarted 1 time within the 10s stability window"
        );
    }

    #[test]
    fn restarts_before_the_first_success_are_the_baseline_and_a_flap_restarts_the_clock() {
        let mut state = Settling::default();
        let pods = [pod(2, &running(), &json!({}))];
        settle(&mut state, ok(), &pods, WINDOW, Duration::from_secs(5));
        // Readiness flapped without a restart: the window starts again.
        let (a, _) = settle(
            &mut state,
            Assessment::not_ready("1/2 available"),
            &pods,
            WINDOW,
            Duration::from_secs(8),
        );
        assert_eq!(a, Assessment::not_ready("1/2 available"));
        let (a, wake) = settle(&mut state, ok(), &pods, WINDOW, Duration::from_secs(9));
        assert_eq!(a.reason(), Some(Reason::NotReady));
        assert_eq!(wake, Some(Duration::from_secs(19)));
    }

    #[test]
    fn zero_turns_it_off_and_failures_pass_through() {
        let mut state = Settling::default();
        let pods = [pod(0, &running(), &json!({}))];
        assert_eq!(
            settle(&mut state, ok(), &pods, Duration::ZERO, Duration::ZERO),
            (ok(), None)
        );
        let failed = Assessment::failed(Reason::ImageNotFound, "gone");
        assert_eq!(
            settle(&mut state, failed.clone(), &pods, WINDOW, Duration::ZERO),
            (failed, None)
        );
    }

    #[test]
    fn the_window_comes_from_the_annotation_less_min_ready_seconds_for_workloads_only() {
        let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "annotations": {SETTLE_ANNOTATION: "30s"}},
            "spec": {"minReadySeconds": 5}});
        let target = Target::from_manifest(&dep).unwrap();
        assert_eq!(window(&target, &dep, WINDOW), Duration::from_secs(25));
        let plain = Target::new("apps/v1", "Deployment", Some("shop"), "web");
        assert_eq!(window(&plain, &dep, WINDOW), Duration::from_secs(5));
        let job = Target::new("batch/v1", "Job", Some("shop"), "migrate");
        assert_eq!(window(&job, &json!({}), WINDOW), Duration::ZERO);
        // The object as last seen reads the same, whatever its minReadySeconds holds.
        let with = |min_ready: Value| {
            let mut dep = dep.clone();
            dep["spec"]["minReadySeconds"] = min_ready;
            dep
        };
        let odd = [
            json!(5),
            json!(50),
            json!(-3),
            json!("5"),
            json!(2.5),
            Value::Null,
        ];
        for obj in odd
            .into_iter()
            .map(with)
            .chain([json!({}), json!({"spec": 3})])
        {
            for t in [&target, &plain, &job] {
                // Read from the text, and from the Value a rule parsed before.
                for live in [Live::text(obj.to_string()), Live::value_of(obj.clone())] {
                    assert_eq!(
                        live_window(t, &live, WINDOW),
                        window(t, &obj, WINDOW),
                        "{obj}"
                    );
                }
            }
        }
        let off = Duration::ZERO;
        assert_eq!(live_window(&plain, &Live::text(dep.to_string()), off), off);
    }

    #[test]
    fn a_deployment_is_watched_through_its_newest_replica_set() {
        let objects = vec![
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop", "uid": "d-1", "resourceVersion": "1"}}),
            fixtures::merged(
                json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": "web-old", "namespace": "shop", "uid": "rs-1", "resourceVersion": "2",
                        "annotations": {"deployment.kubernetes.io/revision": "9"},
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-1", "controller": true}]}}),
                json!({}),
            ),
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": "web-new", "namespace": "shop", "uid": "rs-2", "resourceVersion": "3",
                    "annotations": {"deployment.kubernetes.io/revision": "10"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-1", "controller": true}]}}),
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web-old-a", "namespace": "shop", "uid": "p-1", "resourceVersion": "4",
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-old", "uid": "rs-1", "controller": true}]}}),
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web-new-a", "namespace": "shop", "uid": "p-2", "resourceVersion": "5",
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-new", "uid": "rs-2", "controller": true}]}}),
        ];
        let snap = fixtures::snapshot(&objects);
        let target = Target::new("apps/v1", "Deployment", Some("shop"), "web");
        let obj = snap.live(&target.key()).unwrap();
        let names: Vec<_> = pods_of(&target, &obj, &snap)
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect();
        assert_eq!(names, ["web-new-a"]);
    }
}
