//! The judging loop fed a stream of watch events instead of live watchers, as
//! kube-runtime's own tests feed theirs: what the watches deliver, and only that, decides.

use super::{Judging, NoLogs, Pending, judge_stream};
use crate::cluster::watch::{Seen, WatchScope, listing};
use crate::manifest::load_str;
use crate::rules::{Prepared, Target, fixtures};
use crate::vocab::events::{Recorder, RunEvent};
use crate::vocab::verdict::{Reason, Verdict};
use futures::stream;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::discovery::ApiResource;
use serde_json::json;
use std::time::Duration;
use tokio::time::Instant;

const POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: task, namespace: shop}
spec:
  containers: [{name: web, image: ghcr.io/acme/web:v2}]
";

/// The scopes a Pod target in `shop` reads: its Pods (0) and their Events (1).
fn scopes() -> Vec<WatchScope> {
    let scope = |resource| WatchScope {
        resource,
        namespace: Some("shop".to_owned()),
        labels: None,
    };
    vec![
        scope(ApiResource::erase::<Pod>(&())),
        scope(ApiResource::erase::<Event>(&())),
    ]
}

fn crash_looping_pod() -> Prepared {
    let pod = fixtures::pod(
        "task",
        None,
        &json!({"app": "task"}),
        &fixtures::crash_loop_status(1, "Error", 2),
    );
    Prepared::of(pod).unwrap()
}

/// What the loop says of the Pod `task` given `events`, and what it reported meanwhile.
async fn judge_pod(events: Vec<Seen<Prepared>>) -> (crate::vocab::outcome::Outcome, Recorder) {
    judge_pod_absent(events, false).await
}

/// [`judge_pod`], with `absent_fails` as `watch` (true) or `watch --wait-for-creation` sets it.
async fn judge_pod_absent(
    events: Vec<Seen<Prepared>>,
    absent_fails: bool,
) -> (crate::vocab::outcome::Outcome, Recorder) {
    let manifests = load_str("task.yaml", POD).unwrap();
    let mut recorder = Recorder::default();
    let start = Instant::now();
    let judging = Judging {
        manifests: &manifests,
        timeout: Duration::from_secs(60),
        settle: Duration::ZERO,
        fail_fast: true,
        lookups: None,
        logs: &NoLogs,
        health_rules: std::sync::Arc::default(),
        absent_fails,
        start,
        observer: &mut recorder,
    };
    let targets = vec![Pending {
        index: 0,
        target: Target::new("v1", "Pod", Some("shop"), "task"),
        applied_at: start,
    }];
    let run = judge_stream(
        judging,
        &scopes(),
        targets,
        Vec::new(),
        stream::iter(events),
    )
    .await;
    let [outcome] = <[_; 1]>::try_from(run.outcomes).unwrap();
    (outcome, recorder)
}

#[tokio::test(start_paused = true)]
async fn a_verdict_comes_from_what_the_watches_deliver() {
    let (outcome, recorder) = judge_pod(
        listing(0, vec![crash_looping_pod()])
            .chain(listing(1, Vec::new()))
            .collect(),
    )
    .await;
    assert_eq!(
        (outcome.verdict, outcome.reason),
        (Verdict::Failed, Some(Reason::CrashLoop))
    );
    assert_eq!(
        outcome.source.map(|s| (s.file, s.line)),
        Some(("task.yaml".into(), 1))
    );
    assert!(
        recorder
            .events
            .iter()
            .any(|(_, e)| matches!(e, RunEvent::Verdict(o) if o.reason == Some(Reason::CrashLoop)))
    );
}

/// Both scopes listed, and neither holds the pod.
fn empty_lists() -> Vec<Seen<Prepared>> {
    (0..2)
        .flat_map(|scope| listing(scope, Vec::new()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn watch_reports_a_resource_its_kind_lacks_as_absent_once_listed() {
    let start = Instant::now();
    let (outcome, _) = judge_pod_absent(empty_lists(), true).await;
    assert_eq!(
        (outcome.verdict, outcome.reason, outcome.message.as_str()),
        (
            Verdict::Failed,
            Some(Reason::Absent),
            "Pod task does not exist in namespace shop; --wait-for-creation waits for it"
        )
    );
    // At once: the 60 s timeout was not waited out.
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn absence_is_not_judged_before_the_kind_has_listed() {
    // Only the Events listed: the Pods' list has not arrived, so the pod may exist.
    let (outcome, _) = judge_pod_absent(listing(1, Vec::new()).collect(), true).await;
    assert_eq!(
        (outcome.verdict, outcome.reason),
        (Verdict::TimedOut, Some(Reason::NotReady)),
        "{}",
        outcome.message
    );
}

#[tokio::test(start_paused = true)]
async fn wait_for_creation_waits_for_an_absent_resource() {
    let (outcome, _) = judge_pod_absent(empty_lists(), false).await;
    assert_eq!(
        (outcome.verdict, outcome.reason, outcome.message.as_str()),
        (
            Verdict::TimedOut,
            Some(Reason::NotReady),
            "not seen in the cluster yet"
        )
    );
}

#[tokio::test(start_paused = true)]
async fn no_verdict_is_taken_before_every_watch_it_reads_has_listed() {
    // The Events were never listed (and the watches ended): the crash in the pod's status
    // is not judged without them, and the deadline says what was missing.
    let (outcome, _) = judge_pod(listing(0, vec![crash_looping_pod()]).collect()).await;
    assert_eq!(
        (outcome.verdict, outcome.reason),
        (Verdict::TimedOut, Some(Reason::NotReady))
    );
    assert!(
        outcome
            .message
            .contains("waiting for the first complete list of Event"),
        "{}",
        outcome.message
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_list_is_the_cause_the_verdict_names() {
    let (outcome, recorder) = judge_pod(
        listing(0, vec![crash_looping_pod()])
            .chain([Seen::Trouble {
                scope: 1,
                message: "list failed: 503 ServiceUnavailable".to_owned(),
                forbidden: false,
            }])
            .collect(),
    )
    .await;
    assert_eq!(
        (outcome.verdict, outcome.reason),
        (Verdict::TimedOut, Some(Reason::ApiUnavailable))
    );
    assert!(
        recorder
            .events
            .iter()
            .any(|(_, e)| matches!(e, RunEvent::WatchTrouble(m) if m.contains("503")))
    );
}
