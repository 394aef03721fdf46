//! Image-pull verdicts end to end through `assess`, on pods and events exactly as the API
//! server returns them after a kubelet wrote them, so the evidence rules are tested on the
//! timelines they exist for (1.31 bare back-off, 1.33 back-off with cause, merged events).

use crate::rules::assessment::{Assessment, judge};
use crate::rules::fixtures::{self, uid};
use crate::rules::images::registry_view::RegistryView;
use crate::rules::snapshot::Snapshot;
use crate::rules::target::Target;
use crate::rules::{assess, fixtures::merged};
use crate::vocab::outcome::ContainerRef;
use crate::vocab::verdict::{Reason, Verdict};
use serde_json::{Value, json};
use std::time::Duration;

const MISSING: &str = "registry.local/shop/web:missing";
const WORKER: &str = "registry.local/shop/worker:7";
const DEADLINE: Duration = Duration::from_secs(600);

/// A ReplicaSet pod with one container, scheduled on node-1, with `container_status`.
fn pod(name: &str, container: &str, image: &str, container_status: &Value) -> Value {
    let ready = container_status["ready"] == json!(true);
    let (phase, ready_status) = if ready {
        ("Running", "True")
    } else {
        ("Pending", "False")
    };
    let mut ready_cond = json!({"type": "Ready", "status": ready_status, "lastProbeTime": null,
        "lastTransitionTime": "2025-03-04T10:15:00Z"});
    let mut containers_ready = json!({"type": "ContainersReady", "status": ready_status,
        "lastProbeTime": null, "lastTransitionTime": "2025-03-04T10:15:00Z"});
    if !ready {
        for c in [&mut ready_cond, &mut containers_ready] {
            c["reason"] = json!("ContainersNotReady");
            c["message"] = json!(format!("containers with unready status: [{container}]"));
        }
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "generateName": format!("{container}-6d8f5b7c9-"), "namespace": "shop",
            "uid": uid(name), "resourceVersion": "51234", "creationTimestamp": "2025-03-04T10:15:00Z",
            "labels": {"app": container, "pod-template-hash": "6d8f5b7c9"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": format!("{container}-6d8f5b7c9"), "uid": uid(&format!("{container}-6d8f5b7c9")),
                "controller": true, "blockOwnerDeletion": true}]},
        "spec": {
            "containers": [{"name": container, "image": image,
                "ports": [{"containerPort": 8080, "protocol": "TCP"}], "resources": {},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent"}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default", "nodeName": "node-1",
            "securityContext": {}, "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"
        },
        "status": {
            "phase": phase,
            "conditions": [
                {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2025-03-04T10:15:01Z"},
                {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2025-03-04T10:15:00Z"},
                ready_cond, containers_ready,
                {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2025-03-04T10:15:00Z"}],
            "hostIP": "10.0.0.11", "hostIPs": [{"ip": "10.0.0.11"}],
            "podIP": "10.244.1.23", "podIPs": [{"ip": "10.244.1.23"}],
            "startTime": "2025-03-04T10:15:00Z",
            "containerStatuses": [container_status],
            "qosClass": "BestEffort"
        }
    })
}

fn waiting(container: &str, image: &str, reason: &str, message: Option<&str>) -> Value {
    let mut w = json!({"reason": reason});
    if let Some(m) = message {
        w["message"] = json!(m);
    }
    json!({"name": container, "image": image, "imageID": "", "ready": false, "restartCount": 0,
        "started": false, "state": {"waiting": w}, "lastState": {}})
}

fn running(container: &str, image: &str) -> Value {
    json!({"name": container, "image": image,
        "imageID": format!("{}@sha256:3e1f0c5a9b7d", image.split(':').next().unwrap()),
        "containerID": "containerd://8f2a61c0d4e3", "ready": true, "restartCount": 0, "started": true,
        "state": {"running": {"startedAt": "2025-03-04T10:16:02Z"}}, "lastState": {}})
}

/// `2025-03-04T10:15:00Z` plus `secs`.
fn at(secs: i64) -> String {
    let base: jiff::Timestamp = "2025-03-04T10:15:00Z".parse().unwrap();
    base.checked_add(jiff::SignedDuration::from_secs(secs))
        .unwrap()
        .to_string()
}

/// A kubelet event about `container` of pod `pod`, merged `count` times between `first`
/// and `last` seconds. Same reason and message, same name: a re-upsert is a MODIFIED.
fn event(
    pod: &str,
    container: &str,
    kind: &str,
    reason: &str,
    message: &str,
    count: i32,
    span: (i64, i64),
) -> Value {
    let name = format!(
        "{pod}.{}",
        uid(&format!("{reason}{message}")).replace('-', "")[..16].to_owned()
    );
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "shop", "uid": uid(&name),
            "resourceVersion": format!("{}", 52000 + count), "creationTimestamp": at(span.0)},
        "involvedObject": {"kind": "Pod", "namespace": "shop", "name": pod, "uid": uid(pod),
            "apiVersion": "v1", "resourceVersion": "51200", "fieldPath": format!("spec.containers{{{container}}}")},
        "reason": reason, "message": message,
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": at(span.0), "lastTimestamp": at(span.1), "count": count, "type": kind,
        "eventTime": null, "reportingComponent": "kubelet", "reportingInstance": "node-1"
    })
}

fn not_found(r: &str) -> String {
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image \"{r}\": failed to resolve reference \"{r}\": {r}: not found"
    )
}

fn too_many_requests(r: &str) -> String {
    format!(
        "rpc error: code = Unknown desc = failed to pull and unpack image \"{r}\": failed to resolve reference \"{r}\": unexpected status from HEAD request to https://registry.local/v2/shop/worker/manifests/7: 429 Too Many Requests"
    )
}

fn unauthorized(r: &str) -> String {
    format!(
        "rpc error: code = Unknown desc = failed to pull and unpack image \"{r}\": failed to resolve reference \"{r}\": failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://registry.local/token?scope=repository%3Ashop%2Fweb%3Apull&service=registry.local: 401 Unauthorized"
    )
}

/// The kubelet's events for `attempts` failed pulls of `image` over `secs` seconds.
fn failed_pulls(pod: &str, image: &str, error: &str, attempts: i32, secs: i64) -> Vec<Value> {
    let e = |kind, reason, message: &str, count, span| {
        event(pod, "web", kind, reason, message, count, span)
    };
    vec![
        e(
            "Normal",
            "Pulling",
            &format!("Pulling image \"{image}\""),
            attempts,
            (0, secs - 2),
        ),
        e(
            "Warning",
            "Failed",
            &format!("Failed to pull image \"{image}\": {error}"),
            attempts,
            (1, secs - 1),
        ),
        e(
            "Warning",
            "Failed",
            "Error: ErrImagePull",
            attempts,
            (1, secs - 1),
        ),
        e(
            "Normal",
            "BackOff",
            &format!("Back-off pulling image \"{image}\""),
            attempts + 1,
            (2, secs),
        ),
        e(
            "Warning",
            "Failed",
            "Error: ImagePullBackOff",
            attempts + 1,
            (2, secs),
        ),
    ]
}

const POD: &str = "web-6d8f5b7c9-k2v7q";

fn pod_target() -> Target {
    Target::new("v1", "Pod", Some("shop"), POD)
}

fn snapshot(objects: &[Value], registry: &[(&str, RegistryView)]) -> Snapshot {
    let mut snap = Snapshot::new();
    for o in objects {
        snap.upsert(o.clone()).unwrap();
    }
    for (image, view) in registry {
        snap.set_registry_view(image, view.clone());
    }
    snap
}

/// The verdict at the deadline (or earlier, for final assessments).
#[track_caller]
fn verdict(target: &Target, snap: &Snapshot, expected: (Verdict, Reason, &str)) -> Assessment {
    let a = assess(target, snap);
    let got = judge(a.clone(), DEADLINE, DEADLINE);
    assert_eq!(
        got,
        Some((expected.0, Some(expected.1), expected.2.to_owned())),
        "{a:?}"
    );
    a
}

fn web(image: &str) -> ContainerRef {
    ContainerRef {
        pod: POD.into(),
        container: "web".into(),
        image: Some(image.into()),
    }
}

#[test]
fn a_missing_image_fails_on_the_first_err_image_pull() {
    let p = pod(
        POD,
        "web",
        MISSING,
        &waiting("web", MISSING, "ErrImagePull", Some(&not_found(MISSING))),
    );
    let a = verdict(
        &pod_target(),
        &snapshot(&[p], &[]),
        (
            Verdict::Failed,
            Reason::ImageNotFound,
            "image \"registry.local/shop/web:missing\" not found (container web): failed to resolve reference \"registry.local/shop/web:missing\": registry.local/shop/web:missing: not found",
        ),
    );
    assert_eq!(a.container().cloned(), Some(web(MISSING)));
}

#[test]
fn on_1_31_a_bare_back_off_is_explained_by_the_events() {
    let bare = format!("Back-off pulling image \"{MISSING}\"");
    let p = pod(
        POD,
        "web",
        MISSING,
        &waiting("web", MISSING, "ImagePullBackOff", Some(&bare)),
    );
    let mut objects = failed_pulls(POD, MISSING, &not_found(MISSING), 2, 40);
    objects.push(p.clone());
    verdict(
        &pod_target(),
        &snapshot(&objects, &[]),
        (
            Verdict::Failed,
            Reason::ImageNotFound,
            "image \"registry.local/shop/web:missing\" not found (container web): failed to resolve reference \"registry.local/shop/web:missing\": registry.local/shop/web:missing: not found",
        ),
    );
    // Without the events nothing names the cause.
    verdict(
        &pod_target(),
        &snapshot(&[p], &[]),
        (
            Verdict::TimedOut,
            Reason::ImagePullBackoff,
            "container web cannot pull image \"registry.local/shop/web:missing\" yet (ImagePullBackOff), no pull error visible",
        ),
    );
}

#[test]
fn on_1_33_the_back_off_message_carries_the_cause() {
    let message = format!(
        "Back-off pulling image \"{MISSING}\": ErrImagePull: {}",
        not_found(MISSING)
    );
    let p = pod(
        POD,
        "web",
        MISSING,
        &waiting("web", MISSING, "ImagePullBackOff", Some(&message)),
    );
    verdict(
        &pod_target(),
        &snapshot(&[p], &[]),
        (
            Verdict::Failed,
            Reason::ImageNotFound,
            "image \"registry.local/shop/web:missing\" not found (container web): failed to resolve reference \"registry.local/shop/web:missing\": registry.local/shop/web:missing: not found",
        ),
    );
}

#[test]
fn a_429_then_a_successful_pull_is_not_a_failure() {
    let image = "registry.local/shop/web:8";
    let throttled = pod(
        POD,
        "web",
        image,
        &waiting(
            "web",
            image,
            "ErrImagePull",
            Some(&too_many_requests(image)),
        ),
    );
    let first = failed_pulls(POD, image, &too_many_requests(image), 1, 3);
    let mut objects = first.clone();
    objects.push(throttled);
    let snap = snapshot(&objects, &[]);
    let a = assess(&pod_target(), &snap);
    assert_eq!(a.reason(), Some(Reason::RegistrySlow), "{a:?}");
    assert_eq!(judge(a, Duration::from_secs(30), DEADLINE), None);

    let mut objects = first;
    objects.push(event(
        POD,
        "web",
        "Normal",
        "Pulling",
        &format!("Pulling image \"{image}\""),
        2,
        (0, 14),
    ));
    objects.push(event(POD, "web", "Normal", "Pulled",
        &format!("Successfully pulled image \"{image}\" in 1.204s (11.4s including waiting). Image size: 48213337 bytes."), 1, (15, 15)));
    objects.push(pod(POD, "web", image, &running("web", image)));
    let a = assess(&pod_target(), &snapshot(&objects, &[]));
    assert_eq!(a, Assessment::succeeded("running and ready"));
}

#[test]
fn a_slow_registry_times_out_with_attempts_and_duration() {
    let name = "worker-6d8f5b7c9-z8m4t";
    let message = format!(
        "Back-off pulling image \"{WORKER}\": ErrImagePull: {}",
        too_many_requests(WORKER)
    );
    let mut objects: Vec<Value> = failed_pulls(name, WORKER, &too_many_requests(WORKER), 4, 130)
        .into_iter()
        .map(|e| {
            merged(
                e,
                json!({"involvedObject": {"fieldPath": "spec.containers{worker}"}}),
            )
        })
        .collect();
    objects.push(pod(
        name,
        "worker",
        WORKER,
        &waiting("worker", WORKER, "ImagePullBackOff", Some(&message)),
    ));
    let target = Target::new("v1", "Pod", Some("shop"), name);
    let snap = snapshot(&objects, &[]);
    assert_eq!(
        judge(assess(&target, &snap), Duration::from_secs(599), DEADLINE),
        None
    );
    verdict(
        &target,
        &snap,
        (
            Verdict::TimedOut,
            Reason::RegistrySlow,
            "still pulling registry.local/shop/worker:7 after 4 failed attempts over 2m10s; last error: 429 Too Many Requests",
        ),
    );
}

#[test]
fn a_node_not_found_waits_when_the_registry_has_the_image() {
    let p = pod(
        POD,
        "web",
        MISSING,
        &waiting("web", MISSING, "ErrImagePull", Some(&not_found(MISSING))),
    );
    let a = verdict(
        &pod_target(),
        &snapshot(&[p], &[(MISSING, RegistryView::Exists)]),
        (
            Verdict::TimedOut,
            Reason::RegistrySlow,
            "node reports image \"registry.local/shop/web:missing\" not found, but the registry has it (replication lag or a mirror?); still waiting",
        ),
    );
    assert_eq!(a.container().cloned(), Some(web(MISSING)));
}

#[test]
fn a_denial_fails_on_the_second_attempt_unless_the_registry_serves_the_image() {
    let image = "registry.local/shop/web:8";
    let once = pod(
        POD,
        "web",
        image,
        &waiting("web", image, "ErrImagePull", Some(&unauthorized(image))),
    );
    let mut objects = failed_pulls(POD, image, &unauthorized(image), 1, 3);
    objects.push(once);
    let mut snap = snapshot(&objects, &[]);
    let cause = "failed to resolve reference \"registry.local/shop/web:8\": failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://registry.local/token?scope=repository%3Ashop%2Fweb%3Apull&service=registry.local: 401 Unauthorized";
    verdict(
        &pod_target(),
        &snap,
        (
            Verdict::TimedOut,
            Reason::RegistrySlow,
            &format!(
                "pull of image \"{image}\" denied (container web) once, waiting for another attempt: {cause}"
            ),
        ),
    );

    // The second attempt: the kubelet's Failed event is merged (count 2) and the pod backs off.
    for e in failed_pulls(POD, image, &unauthorized(image), 2, 25) {
        snap.upsert(e).unwrap();
    }
    let message = format!(
        "Back-off pulling image \"{image}\": ErrImagePull: {}",
        unauthorized(image)
    );
    snap.upsert(pod(
        POD,
        "web",
        image,
        &waiting("web", image, "ImagePullBackOff", Some(&message)),
    ))
    .unwrap();
    verdict(
        &pod_target(),
        &snap,
        (
            Verdict::Failed,
            Reason::ImageUnauthorized,
            &format!("pull of image \"{image}\" denied (container web) on 2 attempts: {cause}"),
        ),
    );

    snap.set_registry_view(image, RegistryView::Exists);
    verdict(
        &pod_target(),
        &snap,
        (
            Verdict::TimedOut,
            Reason::RegistrySlow,
            "node is denied image \"registry.local/shop/web:8\", but the registry serves it to the runner (node credentials or imagePullSecrets?); still waiting",
        ),
    );
}

#[test]
fn old_dockers_image_not_found_needs_the_registrys_word_too() {
    // krane's test_deploy_failed_is_true_for_missing_image_error: Docker Hub gave this for a
    // private repository as well, so it is not proof until the registry says which.
    let image = "docker.io/library/hello-world:latest";
    let error = "rpc error: code = Unknown desc = Error: image library/hello-world not found";
    let mut objects = failed_pulls(POD, image, error, 2, 25);
    objects.push(pod(
        POD,
        "web",
        image,
        &waiting("web", image, "ErrImagePull", Some(error)),
    ));
    let mut snap = snapshot(&objects, &[]);
    let judged = |snap: &Snapshot| {
        let (verdict, reason, _) = judge(
            assess(&pod_target(), snap),
            Duration::from_secs(30),
            Duration::from_secs(600),
        )
        .unwrap_or((Verdict::Unfinished, None, String::new()));
        (verdict, reason)
    };
    assert_eq!(judged(&snap), (Verdict::Unfinished, None), "no verdict yet");
    snap.set_registry_view(image, RegistryView::Missing);
    assert_eq!(
        judged(&snap),
        (Verdict::Failed, Some(Reason::ImageNotFound))
    );
}

#[test]
fn dockers_repository_not_found_needs_the_registrys_word() {
    // dockershim / cri-dockerd nodes: Docker Hub said this for private repositories too.
    let image = "docker.io/acme/web:8";
    let error = "rpc error: code = Unknown desc = Error response from daemon: repository acme/web not found";
    let mut objects = failed_pulls(POD, image, error, 2, 25);
    objects.push(pod(
        POD,
        "web",
        image,
        &waiting(
            "web",
            image,
            "ImagePullBackOff",
            Some(&format!("Back-off pulling image \"{image}\"")),
        ),
    ));
    let cause = "Error response from daemon: repository acme/web not found";
    let mut snap = snapshot(&objects, &[]);
    verdict(
        &pod_target(),
        &snap,
        (
            Verdict::TimedOut,
            Reason::ImagePullBackoff,
            &format!(
                "pull of image \"{image}\" not found, or private (Docker says the same of both) (container web): {cause}; no registry answer yet to tell the two apart"
            ),
        ),
    );
    snap.set_registry_view(
        image,
        RegistryView::Unknown(
            "HEAD https://registry-1.docker.io/v2/acme/web/manifests/8: connection reset".into(),
        ),
    );
    verdict(
        &pod_target(),
        &snap,
        (
            Verdict::TimedOut,
            Reason::ImagePullBackoff,
            &format!(
                "pull of image \"{image}\" not found, or private (Docker says the same of both) (container web): {cause}; registry lookup inconclusive: HEAD https://registry-1.docker.io/v2/acme/web/manifests/8: connection reset"
            ),
        ),
    );
    snap.set_registry_view(image, RegistryView::Missing);
    verdict(
        &pod_target(),
        &snap,
        (
            Verdict::Failed,
            Reason::ImageNotFound,
            &format!(
                "image \"{image}\" not found (container web): the registry has no such manifest; the node reports: {cause}"
            ),
        ),
    );
    snap.set_registry_view(image, RegistryView::Denied);
    verdict(
        &pod_target(),
        &snap,
        (
            Verdict::Failed,
            Reason::ImageUnauthorized,
            &format!(
                "pull of image \"{image}\" not found, or private (Docker says the same of both) (container web) on 2 attempts: {cause}"
            ),
        ),
    );
}

#[test]
fn the_registry_saying_missing_fails_a_container_the_node_cannot_pull() {
    let bare = format!("Back-off pulling image \"{MISSING}\"");
    let backing_off = pod(
        POD,
        "web",
        MISSING,
        &waiting("web", MISSING, "ImagePullBackOff", Some(&bare)),
    );
    verdict(
        &pod_target(),
        &snapshot(&[backing_off], &[(MISSING, RegistryView::Missing)]),
        (
            Verdict::Failed,
            Reason::ImageNotFound,
            "image \"registry.local/shop/web:missing\" not found (container web): the registry has no such manifest; the node reports: back-off with no error visible",
        ),
    );
    // A first pull still running is left to finish: a mirror may have what the registry lacks.
    let creating = pod(
        POD,
        "web",
        MISSING,
        &waiting("web", MISSING, "ContainerCreating", None),
    );
    let pulling = event(
        POD,
        "web",
        "Normal",
        "Pulling",
        &format!("Pulling image \"{MISSING}\""),
        1,
        (0, 0),
    );
    verdict(
        &pod_target(),
        &snapshot(&[creating, pulling], &[(MISSING, RegistryView::Missing)]),
        (
            Verdict::TimedOut,
            Reason::RegistrySlow,
            "container web is still pulling image \"registry.local/shop/web:missing\"; the registry has no such image",
        ),
    );
}

mod deployment {
    use super::*;

    const DEP_UID: &str = "6f1c2a3b-58d4-4e7a-9b0c-1d2e3f4a5b6c";

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": DEP_UID, "resourceVersion": "48200",
                "generation": 5, "creationTimestamp": "2025-03-01T09:00:00Z", "labels": {"app": "web"},
                "annotations": {"deployment.kubernetes.io/revision": "4"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                "template": fixtures::pod_template(&json!({"app": "web"})),
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
            "status": {"observedGeneration": 5, "replicas": 3, "updatedReplicas": 3, "unavailableReplicas": 3,
                "conditions": [{"type": "Progressing", "status": "True", "lastUpdateTime": "2025-03-04T10:15:01Z",
                    "lastTransitionTime": "2025-03-04T10:15:01Z", "reason": "ReplicaSetUpdated",
                    "message": "ReplicaSet \"web-7d4b9c\" is progressing."}]}
        })
    }

    fn objects(others: Value) -> Vec<Value> {
        let missing = format!(
            "rpc error: code = NotFound desc = failed to pull and unpack image \"{0}\": failed to resolve reference \"{0}\": {0}: not found",
            fixtures::IMAGE
        );
        let pod = |i: usize, status| {
            fixtures::rs_pod(
                &format!("web-7d4b9c-{i}"),
                &uid("web-7d4b9c"),
                "7d4b9c",
                &status,
            )
        };
        vec![
            deployment(),
            fixtures::replica_set("7d4b9c", "4", DEP_UID, 3, 0, "2025-03-04T10:15:00Z"),
            pod(0, fixtures::waiting_status("ErrImagePull", &missing)),
            pod(1, others.clone()),
            pod(2, others),
        ]
    }

    #[test]
    fn one_missing_template_image_dooms_the_revision_unless_a_node_has_it() {
        let target = Target::new("apps/v1", "Deployment", Some("shop"), "web");
        let creating = fixtures::waiting_status("ContainerCreating", "");
        verdict(
            &target,
            &snapshot(&objects(creating), &[]),
            (
                Verdict::Failed,
                Reason::ImageNotFound,
                "1 of 3 new pods cannot pull its image: image \"ghcr.io/acme/web:v2\" not found (container web): failed to resolve reference \"ghcr.io/acme/web:v2\": ghcr.io/acme/web:v2: not found; all 3 use this image and none has it yet",
            ),
        );
        // Other nodes run the image (pulled before the tag went away): not proof enough.
        let a = assess(&target, &snapshot(&objects(fixtures::ready_status()), &[]));
        assert!(matches!(a, Assessment::Pending { .. }), "{a:?}");
        assert_eq!(a.reason(), Some(Reason::NotReady));
    }
}
