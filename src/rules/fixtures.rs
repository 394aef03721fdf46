//! Test-only objects shaped exactly as a kube-apiserver returns them (managedFields left out),
//! so the rules are exercised on the real field layout rather than on hand-made shortcuts.

use crate::rules::snapshot::Snapshot;
use serde_json::{Value, json};

pub const IMAGE: &str = "ghcr.io/acme/web:v2";
pub const NS: &str = "shop";

/// A stable uid for a test object, shaped like the API server's UUIDs.
/// A snapshot holding `objects`, as the watchers would have fed it.
pub fn snapshot(objects: &[Value]) -> Snapshot {
    snapshot_with(std::sync::Arc::default(), objects)
}

/// [`snapshot`] with the run's own health rules.
pub fn snapshot_with(
    rules: std::sync::Arc<crate::rules::health::rule::HealthRules>,
    objects: &[Value],
) -> Snapshot {
    let mut snap = Snapshot::with_health_rules(rules);
    for o in objects {
        snap.upsert(o.clone()).expect("a valid object");
    }
    snap
}

pub fn uid(name: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let hex = format!("{h:016x}{:016x}", h.rotate_left(17));
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A pod with an init container `migrate` and an app container `web`.
pub fn pod(
    name: &str,
    owner: Option<(&str, &str, &str, &str)>,
    labels: &Value,
    status: &Value,
) -> Value {
    let mut metadata = json!({
        "name": name,
        "namespace": NS,
        "uid": uid(name),
        "resourceVersion": "48211",
        "creationTimestamp": "2025-03-04T10:15:00Z",
        "labels": labels
    });
    if let Some((api_version, kind, owner_name, owner_uid)) = owner {
        metadata["generateName"] = json!(format!("{owner_name}-"));
        metadata["ownerReferences"] = json!([{
            "apiVersion": api_version, "kind": kind, "name": owner_name, "uid": owner_uid,
            "controller": true, "blockOwnerDeletion": true
        }]);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "initContainers": [{
                "name": "migrate", "image": "ghcr.io/acme/migrate:v2", "command": ["/migrate"],
                "resources": {}, "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"
            }],
            "containers": [{
                "name": "web", "image": IMAGE,
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                    "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
                "resources": {"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent"
            }],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default", "nodeName": "node-1",
            "securityContext": {}, "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
            "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"
        },
        "status": status
    })
}

/// A pod of ReplicaSet `web-<hash>`.
pub fn rs_pod(name: &str, rs_uid: &str, hash: &str, status: &Value) -> Value {
    let rs = format!("web-{hash}");
    pod(
        name,
        Some(("apps/v1", "ReplicaSet", &rs, rs_uid)),
        &json!({"app": "web", "pod-template-hash": hash}),
        status,
    )
}

fn init_done() -> Value {
    json!([{
        "name": "migrate", "image": "ghcr.io/acme/migrate:v2",
        "imageID": "ghcr.io/acme/migrate@sha256:5b1d0c6e0f3a", "containerID": "containerd://1a2b3c",
        "ready": true, "restartCount": 0, "started": false,
        "state": {"terminated": {"exitCode": 0, "reason": "Completed",
            "startedAt": "2025-03-04T10:15:03Z", "finishedAt": "2025-03-04T10:15:04Z", "containerID": "containerd://1a2b3c"}},
        "lastState": {}
    }])
}

fn conditions(ready: bool, ready_reason: &str) -> Value {
    let (status, reason) = if ready {
        ("True", Value::Null)
    } else {
        ("False", json!(ready_reason))
    };
    let mut ready_cond = json!({"type": "Ready", "status": status, "lastProbeTime": null, "lastTransitionTime": "2025-03-04T10:15:05Z"});
    let mut containers_ready = json!({"type": "ContainersReady", "status": status, "lastProbeTime": null, "lastTransitionTime": "2025-03-04T10:15:05Z"});
    if !ready {
        let message = "containers with unready status: [web]";
        for c in [&mut ready_cond, &mut containers_ready] {
            c["reason"] = reason.clone();
            c["message"] = json!(message);
        }
    }
    json!([
        {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2025-03-04T10:15:02Z"},
        {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2025-03-04T10:15:04Z"},
        ready_cond,
        containers_ready,
        {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2025-03-04T10:15:00Z"}
    ])
}

fn running_status(ready: bool, web: &Value) -> Value {
    json!({
        "phase": "Running",
        "conditions": conditions(ready, "ContainersNotReady"),
        "hostIP": "10.0.0.11", "hostIPs": [{"ip": "10.0.0.11"}],
        "podIP": "10.244.1.17", "podIPs": [{"ip": "10.244.1.17"}],
        "startTime": "2025-03-04T10:15:00Z",
        "initContainerStatuses": init_done(),
        "containerStatuses": [web],
        "qosClass": "Burstable"
    })
}

pub fn ready_status() -> Value {
    running_status(
        true,
        &json!({
            "name": "web", "image": IMAGE, "imageID": "ghcr.io/acme/web@sha256:9f86d081884c",
            "containerID": "containerd://4d5e6f", "ready": true, "restartCount": 0, "started": true,
            "state": {"running": {"startedAt": "2025-03-04T10:15:05Z"}}, "lastState": {}
        }),
    )
}

pub fn running_not_ready_status() -> Value {
    running_status(
        false,
        &json!({
            "name": "web", "image": IMAGE, "imageID": "ghcr.io/acme/web@sha256:9f86d081884c",
            "containerID": "containerd://4d5e6f", "ready": false, "restartCount": 0, "started": true,
            "state": {"running": {"startedAt": "2025-03-04T10:15:05Z"}}, "lastState": {}
        }),
    )
}

pub fn crash_loop_status(exit_code: i32, reason: &str, restarts: i32) -> Value {
    running_status(
        false,
        &json!({
            "name": "web", "image": IMAGE, "imageID": "ghcr.io/acme/web@sha256:9f86d081884c",
            "containerID": "containerd://7a8b9c", "ready": false, "restartCount": restarts, "started": false,
            "state": {"waiting": {"reason": "CrashLoopBackOff",
                "message": "back-off 40s restarting failed container=web pod=web-7d4b9c-x2x9q_shop(2b1c)"}},
            "lastState": {"terminated": {"exitCode": exit_code, "reason": reason,
                "startedAt": "2025-03-04T10:16:40Z", "finishedAt": "2025-03-04T10:16:41Z", "containerID": "containerd://7a8b9c"}}
        }),
    )
}

/// A pod stuck before its app container started (image pulls, config errors).
pub fn waiting_status(reason: &str, message: &str) -> Value {
    json!({
        "phase": "Pending",
        "conditions": conditions(false, "ContainersNotReady"),
        "hostIP": "10.0.0.11", "hostIPs": [{"ip": "10.0.0.11"}],
        "podIP": "10.244.1.17", "podIPs": [{"ip": "10.244.1.17"}],
        "startTime": "2025-03-04T10:15:00Z",
        "initContainerStatuses": init_done(),
        "containerStatuses": [{
            "name": "web", "image": IMAGE, "imageID": "", "ready": false, "restartCount": 0, "started": false,
            "state": {"waiting": {"reason": reason, "message": message}}, "lastState": {}
        }],
        "qosClass": "Burstable"
    })
}

pub fn unschedulable_status() -> Value {
    json!({
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": null,
            "lastTransitionTime": "2025-03-04T10:15:00Z", "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."}],
        "qosClass": "Burstable"
    })
}

/// A kubelet event about container `web` of a pod.
pub fn event(
    pod: &str,
    pod_uid: &str,
    type_: &str,
    reason: &str,
    message: &str,
    count: i32,
) -> Value {
    let name = format!("{pod}.{}", &uid(&format!("{reason}{message}"))[..8]);
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": NS, "uid": uid(&name), "resourceVersion": "48302",
            "creationTimestamp": "2025-03-04T10:15:10Z"},
        "involvedObject": {"kind": "Pod", "namespace": NS, "name": pod, "uid": pod_uid,
            "apiVersion": "v1", "resourceVersion": "48211", "fieldPath": "spec.containers{web}"},
        "reason": reason, "message": message,
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2025-03-04T10:15:10Z", "lastTimestamp": format!("2025-03-04T10:{:02}:10Z", 15 + count),
        "count": count, "type": type_, "eventTime": null,
        "reportingComponent": "kubelet", "reportingInstance": "node-1"
    })
}

/// Applies a JSON merge patch (RFC 7386) so a test can state only what differs from a
/// realistic base object.
pub fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    b.remove(&k);
                } else {
                    merge(b.entry(k).or_insert(Value::Null), v);
                }
            }
        }
        (b, p) => *b = p,
    }
}

pub fn merged(mut base: Value, patch: Value) -> Value {
    merge(&mut base, patch);
    base
}

/// The pod template every workload fixture uses.
pub fn pod_template(labels: &Value) -> Value {
    json!({
        "metadata": {"labels": labels},
        "spec": {
            "containers": [{"name": "web", "image": IMAGE,
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {}, "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "securityContext": {}, "schedulerName": "default-scheduler"
        }
    })
}

/// ReplicaSet `web-<hash>` of Deployment `web`, at `revision`, with `available` of `replicas`.
pub fn replica_set(
    hash: &str,
    revision: &str,
    deployment_uid: &str,
    replicas: i32,
    available: i32,
    created: &str,
) -> Value {
    let name = format!("web-{hash}");
    let mut rs = json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": name, "namespace": NS, "uid": uid(&name), "resourceVersion": "48190", "generation": 2,
            "creationTimestamp": created,
            "labels": {"app": "web", "pod-template-hash": hash},
            "annotations": {"deployment.kubernetes.io/desired-replicas": "3",
                "deployment.kubernetes.io/max-replicas": "4", "deployment.kubernetes.io/revision": revision},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                "uid": deployment_uid, "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web", "pod-template-hash": hash}},
            "template": pod_template(&json!({"app": "web", "pod-template-hash": hash}))
        },
        "status": {"replicas": replicas, "fullyLabeledReplicas": replicas, "readyReplicas": available,
            "availableReplicas": available, "observedGeneration": 2}
    });
    // The API server omits zero counts (omitempty), except `replicas`.
    let status = rs["status"].as_object_mut().expect("status is an object");
    status.retain(|k, v| k == "replicas" || v != &json!(0));
    rs
}

/// A Node as the API server returns it; a NotReady one has stopped posting status (the
/// node lifecycle controller's Unknown and unreachable taints), a cordoned one is
/// unschedulable with the matching taint.
pub fn node(name: &str, ready: bool, cordoned: bool) -> Value {
    let pressure = |type_: &str, reason: &str, message: &str| {
        let status = if ready { "False" } else { "Unknown" };
        json!({"type": type_, "status": status, "lastHeartbeatTime": "2025-03-04T10:14:50Z",
            "lastTransitionTime": "2025-03-01T08:00:00Z", "reason": reason, "message": message})
    };
    let ready_condition = if ready {
        json!({"type": "Ready", "status": "True", "lastHeartbeatTime": "2025-03-04T10:14:50Z",
            "lastTransitionTime": "2025-03-01T08:00:00Z", "reason": "KubeletReady",
            "message": "kubelet is posting ready status"})
    } else {
        json!({"type": "Ready", "status": "Unknown", "lastHeartbeatTime": "2025-03-04T10:14:50Z",
            "lastTransitionTime": "2025-03-04T10:15:30Z", "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status."})
    };
    let mut taints = Vec::new();
    if !ready {
        taints.push(json!({"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": "2025-03-04T10:15:30Z"}));
        taints.push(json!({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2025-03-04T10:15:35Z"}));
    }
    if cordoned {
        taints.push(json!({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2025-03-04T10:10:00Z"}));
    }
    let mut spec = json!({"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"], "providerID": format!("kind://docker/shop/{name}")});
    if cordoned {
        spec["unschedulable"] = json!(true);
    }
    if !taints.is_empty() {
        spec["taints"] = json!(taints);
    }
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": uid(name), "resourceVersion": "47000",
            "creationTimestamp": "2025-03-01T08:00:00Z",
            "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": spec,
        "status": {
            "capacity": {"cpu": "4", "memory": "16331244Ki", "pods": "110", "ephemeral-storage": "102626232Ki"},
            "allocatable": {"cpu": "4", "memory": "16331244Ki", "pods": "110", "ephemeral-storage": "102626232Ki"},
            "conditions": [
                pressure("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                pressure("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                pressure("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                ready_condition
            ],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.11"}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"kubeletVersion": "v1.33.1", "containerRuntimeVersion": "containerd://2.1.1",
                "kernelVersion": "6.8.0-1017-aws", "osImage": "Ubuntu 24.04.2 LTS", "operatingSystem": "linux",
                "architecture": "amd64", "machineID": "ec2a8b", "systemUUID": "ec2a8b", "bootID": "b007",
                "kubeProxyVersion": ""}
        }
    })
}
