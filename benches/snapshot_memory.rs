//! Bytes deploy-action holds per watched Pod and per Event: objects as the API server sends
//! them on a watch (managedFields included) go the watchers' way (copied into compact
//! text, then indexed by the snapshot), under an allocator that counts what stays
//! allocated. A benchmark, not a test: it prints a Markdown table; the README quotes it.
//! Run: `cargo bench --bench snapshot_memory`.

#![expect(clippy::print_stdout, reason = "a benchmark reports by printing")]

use deploy_action::cluster::raw::RawObject;
use deploy_action::rules::kept::{EventFields, Kept, PodFields};
use deploy_action::rules::{Prepared, Snapshot};
use kube::core::ApiResource;
use serde_json::{Value, json};

/// dhat's allocator: counts what is allocated, so the bytes held are known exactly.
#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

fn held_now() -> isize {
    isize::try_from(dhat::HeapStats::get().curr_bytes).unwrap_or(isize::MAX)
}

const PODS: usize = 2_000;
/// kube-sim writes five Events per healthy pod (Scheduled, Pulling, Pulled, Created,
/// Started), as a kubelet does.
const EVENTS_PER_POD: usize = 5;

fn resource(api_version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: String::new(),
        version: api_version.to_owned(),
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        plural: plural.to_owned(),
    }
}

fn uid(n: usize) -> String {
    format!("5e1f0000-0000-4000-8000-{n:012x}")
}

/// A running pod of a Deployment as a watch delivers it, managedFields included.
fn pod(i: usize) -> Value {
    let name = format!("app-{:04}-f6c768df8-{i:05}", i / 4);
    let time = "2026-12-05T08:29:31Z";
    let conditions: Vec<Value> = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    .iter()
    .map(
        |t| json!({"lastProbeTime": null, "lastTransitionTime": time, "status": "True", "type": t}),
    )
    .collect();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "creationTimestamp": "2026-12-05T08:29:24Z",
            "generateName": format!("app-{:04}-f6c768df8-", i / 4),
            "labels": {"app": format!("app-{:04}", i / 4), "pod-template-hash": "f6c768df8"},
            "name": name, "namespace": "default", "resourceVersion": "23268", "uid": uid(i),
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": true,
                "controller": true, "kind": "ReplicaSet",
                "name": format!("app-{:04}-f6c768df8", i / 4), "uid": uid(100_000 + i / 4)}],
            "managedFields": [
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kube-controller-manager",
                 "operation": "Update", "time": "2026-12-05T08:29:24Z",
                 "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {},
                    "f:app": {}, "f:pod-template-hash": {}}, "f:ownerReferences": {".": {},
                    "k:{\"uid\":\"5e1f\"}": {}}}, "f:spec": {"f:containers": {
                    "k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {},
                    "f:name": {}, "f:ports": {".": {}, "k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":
                    {".": {}, "f:containerPort": {}, "f:protocol": {}}}, "f:resources": {},
                    "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                    "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
                    "f:schedulerName": {}, "f:securityContext": {},
                    "f:terminationGracePeriodSeconds": {}}}},
                {"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubelet",
                 "operation": "Update", "subresource": "status", "time": time,
                 "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"ContainersReady\"}":
                    {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {},
                    "f:type": {}}, "k:{\"type\":\"Ready\"}": {".": {}, "f:lastProbeTime": {},
                    "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}},
                    "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {},
                    "f:podIPs": {".": {}, "k:{\"ip\":\"10.244.1.7\"}": {".": {}, "f:ip": {}}},
                    "f:startTime": {}}}}
            ]
        },
        "spec": {
            "containers": [{"image": "registry.local/bench/app:1",
                "imagePullPolicy": "IfNotPresent", "name": "app",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}], "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"}],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": true,
            "nodeName": format!("sim-node-{}", i % 25),
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {}, "serviceAccount": "default",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
                 "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable",
                 "operator": "Exists", "tolerationSeconds": 300}]
        },
        "status": {
            "conditions": conditions,
            "containerStatuses": [{"containerID": format!("containerd://{:064x}", i),
                "image": "registry.local/bench/app:1",
                "imageID": "registry.local/bench/app@sha256:337d2b2687a459038aa1a81bad9af6210a4212d305f6f66172bc2985f30f6a9f",
                "lastState": {}, "name": "app", "ready": true, "resources": {},
                "restartCount": 0, "started": true,
                "state": {"running": {"startedAt": time}}}],
            "hostIP": "10.0.0.7", "hostIPs": [{"ip": "10.0.0.7"}], "phase": "Running",
            "podIP": "10.244.1.7", "podIPs": [{"ip": "10.244.1.7"}], "qosClass": "BestEffort",
            "startTime": "2026-12-05T08:29:25Z"
        }
    })
}

/// One of a pod's Events, as a watch delivers it.
fn event(i: usize, n: usize) -> Value {
    let pod = format!("app-{:04}-f6c768df8-{i:05}", i / 4);
    let (reason, message) = [
        (
            "Scheduled",
            format!("Successfully assigned default/{pod} to sim-node-{}", i % 25),
        ),
        (
            "Pulling",
            "Pulling image \"registry.local/bench/app:1\"".to_owned(),
        ),
        (
            "Pulled",
            "Successfully pulled image \"registry.local/bench/app:1\" in 10ms".to_owned(),
        ),
        ("Created", "Created container: app".to_owned()),
        ("Started", "Started container app".to_owned()),
    ][n % EVENTS_PER_POD]
        .clone();
    json!({"apiVersion": "v1", "kind": "Event", "count": 1, "eventTime": null,
        "firstTimestamp": "2026-12-05T08:29:25Z", "lastTimestamp": "2026-12-05T08:29:25Z",
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": pod,
            "namespace": "default", "resourceVersion": "3829", "uid": uid(i),
            "fieldPath": if n == 0 { Value::Null } else { json!("spec.containers{app}") }},
        "message": message, "reason": reason, "reportingComponent": "kubelet",
        "reportingInstance": "sim-node-1", "source": {"component": "kubelet", "host": "sim-node-1"},
        "type": "Normal",
        "metadata": {"creationTimestamp": "2026-12-05T08:29:25Z",
            "name": format!("{pod}.18800000000{n:05x}"), "namespace": "default",
            "resourceVersion": "9474", "uid": uid(1_000_000 + i * 8 + n),
            "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1",
                "manager": "kubelet", "operation": "Update", "time": "2026-12-05T08:29:25Z",
                "fieldsV1": {"f:count": {}, "f:firstTimestamp": {}, "f:involvedObject": {},
                    "f:lastTimestamp": {}, "f:message": {}, "f:reason": {},
                    "f:reportingComponent": {}, "f:reportingInstance": {}, "f:source": {
                    "f:component": {}, "f:host": {}}, "f:type": {}}}]}})
}

/// Feeds `objects` (wire JSON) into `snapshot` the watchers' way, keeping `K`'s fields;
/// the bytes that stay allocated, and the wire bytes.
fn held<K: Kept>(
    snapshot: &mut Snapshot,
    resource: &ApiResource,
    objects: &[String],
) -> (isize, usize) {
    let before = held_now();
    for text in objects {
        let raw: RawObject<K> = serde_json::from_str(text).expect("an object");
        let (text, head) = raw.into_parts(resource);
        let prepared = Prepared::from_parts(text, head).expect("identified");
        snapshot.insert(prepared);
    }
    // What changed is taken by the judging loop after each batch, not held; the texts are
    // packed once they have held for a few passes (measured settled: a deploy's objects
    // spend most of it so).
    drop(snapshot.take_touched());
    snapshot.pack_all();
    let after = held_now();
    (after - before, objects.iter().map(String::len).sum())
}

fn main() {
    // Testing mode: the figures are read here, and no profile file is written.
    let _profiler = dhat::Profiler::builder()
        .testing()
        .trim_backtraces(Some(1))
        .build();
    let pods: Vec<String> = (0..PODS).map(|i| pod(i).to_string()).collect();
    let events: Vec<String> = (0..PODS)
        .flat_map(|i| (0..EVENTS_PER_POD).map(move |n| event(i, n).to_string()))
        .collect();
    let mut snapshot = Snapshot::new();
    // Pods first: an Event is indexed under the pod it is about once that is known.
    let (pod_bytes, pod_wire) =
        held::<PodFields>(&mut snapshot, &resource("v1", "Pod", "pods"), &pods);
    let (event_bytes, event_wire) =
        held::<EventFields>(&mut snapshot, &resource("v1", "Event", "events"), &events);
    println!("| object | count | bytes held each | wire bytes each (managedFields included) |");
    println!("|---|---|---|---|");
    println!(
        "| Pod (running, one container) | {PODS} | {} | {} |",
        pod_bytes / PODS as isize,
        pod_wire / PODS
    );
    println!(
        "| Event | {} | {} | {} |",
        events.len(),
        event_bytes / events.len() as isize,
        event_wire / events.len()
    );
    println!();
    println!(
        "the snapshot of {} objects holds {:.1} MiB",
        snapshot.len(),
        (pod_bytes + event_bytes) as f64 / (1024.0 * 1024.0)
    );
}
