//! Test helpers for the controller scenario tests: a cluster with a paused clock, pods
//! whose status the test writes (frozen, so a kubelet leaves them alone), and the events
//! an object received in order.

use crate::store::{ChangeType, ObjectKey};
use crate::{Scenario, Sim};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

pub(crate) fn sim(nodes: usize) -> Sim {
    manual(Scenario::builder().nodes(nodes).build())
}

/// A cluster whose pods only the test runs: each pod is frozen the moment it is created,
/// so the simulated scheduler and kubelet leave its status to the test.
pub(crate) fn manual(scenario: Scenario) -> Sim {
    let sim = Sim::start(scenario);
    let store = sim.store.clone();
    let mut changes = store.subscribe();
    tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(c) if c.kind == ChangeType::Added && c.key.in_collection("", "pods", None) => {
                    store.freeze(&c.key);
                }
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            }
        }
    });
    sim
}

/// Let `secs` of simulated time pass.
pub(crate) async fn wait(secs: f64) {
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
}

/// Poll (every 10 ms of simulated time, up to a minute) until `f` yields something.
pub(crate) async fn eventually<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    for _ in 0..6000 {
        if let Some(v) = f() {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

pub(crate) fn pod(sim: &Sim, ns: &str, name: &str) -> Option<Value> {
    sim.get("v1", "Pod", ns, name)
}

/// Pods of a namespace, by name.
pub(crate) fn pods(sim: &Sim, ns: &str) -> Vec<Value> {
    sim.store
        .list("", "pods", Some(ns))
        .0
        .iter()
        .map(|p| (**p).clone())
        .collect()
}

pub(crate) fn names(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// Replace an object as a client's PUT would (generation rises on spec changes).
pub(crate) fn put(sim: &Sim, object: Value) {
    let key = sim.key_of(&object).expect("known kind");
    sim.store.update(&key, object, None).expect("update");
}

/// Change an existing object with `f`.
pub(crate) fn edit(
    sim: &Sim,
    api_version: &str,
    kind: &str,
    ns: &str,
    name: &str,
    f: impl FnOnce(&mut Value),
) {
    let mut object = sim
        .get(api_version, kind, ns, name)
        .unwrap_or_else(|| panic!("{kind} {name} exists"));
    f(&mut object);
    put(sim, object);
}

/// Write a pod's status as a kubelet would (freezing the pod, in case the test's cluster
/// freezes nothing by itself). The pod is also bound to `node`.
pub(crate) fn set_pod(
    sim: &Sim,
    ns: &str,
    name: &str,
    phase: &str,
    ready: bool,
    node: &str,
    ip: &str,
) {
    let key = ObjectKey::new("", "pods", ns, name);
    sim.store.freeze(&key);
    let mut pod = pod(sim, ns, name).unwrap_or_else(|| panic!("pod {name} exists"));
    let now = sim.store.clock().now_rfc3339();
    let ready_str = if ready { "True" } else { "False" };
    let previous_ready = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready").cloned());
    let ready_since = match previous_ready {
        Some(c) if c["status"] == ready_str => c["lastTransitionTime"].clone(),
        _ => json!(now),
    };
    let containers: Vec<String> = pod["spec"]["containers"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| c["name"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut ready_cond = json!({"type": "Ready", "status": ready_str, "lastProbeTime": null, "lastTransitionTime": ready_since});
    if !ready {
        ready_cond["reason"] = json!(if phase == "Running" {
            "ContainersNotReady"
        } else {
            "PodCompleted"
        });
        ready_cond["message"] = json!(format!(
            "containers with unready status: [{}]",
            containers.join(" ")
        ));
    }
    let terminated = matches!(phase, "Succeeded" | "Failed");
    let statuses: Vec<Value> = pod["spec"]["containers"].as_array().cloned().unwrap_or_default().iter().map(|c| {
        let state = if terminated {
            let code = i32::from(phase != "Succeeded");
            json!({"terminated": {"exitCode": code, "reason": if code == 0 { "Completed" } else { "Error" },
                                  "startedAt": now, "finishedAt": now}})
        } else {
            json!({"running": {"startedAt": now}})
        };
        json!({"name": c["name"], "image": c["image"], "imageID": "", "ready": ready, "restartCount": 0,
               "started": !terminated, "state": state})
    }).collect();
    pod["spec"]["nodeName"] = json!(node);
    pod["status"] = json!({
        "phase": phase,
        "conditions": [
            {"type": "PodReadyToStartContainers", "status": if terminated { "False" } else { "True" }, "lastProbeTime": null, "lastTransitionTime": now},
            {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": now},
            ready_cond.clone(),
            {"type": "ContainersReady", "status": ready_str, "lastProbeTime": null, "lastTransitionTime": ready_since},
            {"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": now},
        ],
        "hostIP": "172.18.0.2",
        "hostIPs": [{"ip": "172.18.0.2"}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "qosClass": "BestEffort",
        "startTime": now,
        "containerStatuses": statuses,
    });
    if ip.is_empty() {
        let status = pod["status"].as_object_mut().expect("status");
        status.remove("podIP");
        status.remove("podIPs");
    }
    put(sim, pod);
}

/// Freeze a pod and mark it Running and Ready on `node` with `ip`.
pub(crate) fn run_ready(sim: &Sim, ns: &str, name: &str, node: &str, ip: &str) {
    set_pod(sim, ns, name, "Running", true, node, ip);
}

/// (type, reason, message) of the events about the object named `involved`, oldest first.
pub(crate) fn events(sim: &Sim, ns: &str, involved: &str) -> Vec<(String, String, String)> {
    let mut list: Vec<Value> = sim
        .store
        .list("", "events", Some(ns))
        .0
        .iter()
        .filter(|e| e["involvedObject"]["name"] == involved)
        .map(|e| (**e).clone())
        .collect();
    // Event names end in a counter, so they sort in recording order.
    list.sort_by_key(|e| {
        e["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_owned()
    });
    list.iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (s("type"), s("reason"), s("message"))
        })
        .collect()
}

/// The reasons and messages only, for compact assertions.
pub(crate) fn event_lines(sim: &Sim, ns: &str, involved: &str) -> Vec<String> {
    events(sim, ns, involved)
        .into_iter()
        .map(|(t, r, m)| format!("{t} {r}: {m}"))
        .collect()
}

/// The count of an event (merged repeats).
pub(crate) fn event_count(sim: &Sim, ns: &str, involved: &str, reason: &str) -> i64 {
    sim.store
        .list("", "events", Some(ns))
        .0
        .iter()
        .filter(|e| e["involvedObject"]["name"] == involved && e["reason"] == reason)
        .map(|e| e["count"].as_i64().unwrap_or(0))
        .sum()
}
