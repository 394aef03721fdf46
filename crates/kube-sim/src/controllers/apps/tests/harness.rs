//! What the scenario tests share: a cluster without nodes (so no scheduler or kubelet
//! touches the pods), a stand-in kubelet that runs pods and makes them Ready on demand,
//! realistic Deployments, and readers for ReplicaSets and events.

use crate::Sim;
use crate::controllers::apps::hash::pod_template_hash;
use crate::scenario::Scenario;
use crate::store::{ObjectKey, Store};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn sim() -> Sim {
    Sim::start(Scenario::builder().no_nodes().build())
}

pub(crate) fn namespace(sim: &Sim, name: &str) {
    sim.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
        .expect("namespace");
}

/// A Deployment as `kubectl apply` sends it; `spec` entries override the defaults here.
pub(crate) fn deployment(name: &str, image: &str, spec: &Value) -> Value {
    let mut d = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": name}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": name, "image": image,
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}}}]}
            }
        }
    });
    for (k, v) in spec.as_object().cloned().unwrap_or_default() {
        d["spec"][k] = v;
    }
    d
}

pub(crate) fn deploy_key(name: &str) -> ObjectKey {
    ObjectKey::new("apps", "deployments", "shop", name)
}

/// Change an object the way a client's update does.
pub(crate) fn edit(sim: &Sim, key: &ObjectKey, f: impl FnOnce(&mut Value)) {
    let mut obj = (*sim.store.get(key).expect("object to edit")).clone();
    f(&mut obj);
    sim.store.update(key, obj, None).expect("update");
}

pub(crate) fn get(sim: &Sim, key: &ObjectKey) -> Value {
    (*sim
        .store
        .get(key)
        .unwrap_or_else(|| panic!("{key:?} exists")))
    .clone()
}

/// The namespace's ReplicaSets, oldest first.
pub(crate) fn replica_sets(sim: &Sim) -> Vec<Value> {
    let mut rss: Vec<Value> = sim
        .store
        .list("apps", "replicasets", Some("shop"))
        .0
        .iter()
        .map(|r| (**r).clone())
        .collect();
    rss.sort_by(|a, b| {
        let c = |v: &Value| {
            v["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        c(a).cmp(&c(b)).then(
            a["metadata"]["uid"]
                .as_str()
                .cmp(&b["metadata"]["uid"].as_str()),
        )
    });
    rss
}

pub(crate) fn pods(sim: &Sim) -> Vec<Value> {
    sim.store
        .list("", "pods", Some("shop"))
        .0
        .iter()
        .map(|p| (**p).clone())
        .collect()
}

/// `reason: message` of the events about objects of `kind`, in the order recorded.
pub(crate) fn events(sim: &Sim, kind: &str) -> Vec<String> {
    let mut evs: Vec<Value> = sim
        .store
        .list("", "events", Some("shop"))
        .0
        .iter()
        .filter(|e| e["involvedObject"]["kind"] == kind)
        .map(|e| (**e).clone())
        .collect();
    let seq = |e: &Value| {
        let name = e["metadata"]["name"].as_str().unwrap_or_default();
        u64::from_str_radix(name.rsplit('.').next().unwrap_or_default(), 16).unwrap_or(0)
    };
    evs.sort_by_key(seq);
    evs.iter()
        .map(|e| {
            format!(
                "{}: {}",
                e["reason"].as_str().unwrap_or_default(),
                e["message"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

/// One pass of the stand-in kubelet: pods being deleted are gone; new pods run on a node
/// of their own and are Ready when `ready` says so, from now on.
pub(crate) fn kubelet_tick(store: &Store, ready: fn(&Value) -> bool) {
    let now = store.clock().now_rfc3339();
    for pod in store.list("", "pods", None).0 {
        let key = ObjectKey::new(
            "",
            "pods",
            pod["metadata"]["namespace"].as_str().unwrap_or_default(),
            pod["metadata"]["name"].as_str().unwrap_or_default(),
        );
        if pod["metadata"].get("deletionTimestamp").is_some() {
            store.remove_now(&key);
            continue;
        }
        if pod["status"]["phase"] == "Running" {
            continue;
        }
        let r = if ready(&pod) { "True" } else { "False" };
        let cond = |t: &str, s: &str| json!({"type": t, "status": s, "lastProbeTime": null, "lastTransitionTime": now});
        let mut p = (*pod).clone();
        p["spec"]["nodeName"] = json!("test-node");
        p["status"] = json!({
            "phase": "Running",
            "conditions": [cond("PodReadyToStartContainers", "True"), cond("Initialized", "True"),
                           cond("Ready", r), cond("ContainersReady", r), cond("PodScheduled", "True")],
            "hostIP": "10.0.0.9", "podIP": "10.244.0.17", "startTime": now,
            "qosClass": pod["status"]["qosClass"].clone(),
        });
        let _ = store.update(&key, p, None);
    }
}

/// Run the stand-in kubelet every `period` until the test ends.
pub(crate) fn spawn_kubelet(store: Arc<Store>, period: Duration, ready: fn(&Value) -> bool) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(period).await;
            kubelet_tick(&store, ready);
        }
    });
}

pub(crate) fn always(_: &Value) -> bool {
    true
}

/// Ready unless the image is tagged `broken`.
pub(crate) fn unless_broken(pod: &Value) -> bool {
    !pod["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or_default()
        .ends_with(":broken")
}

pub(crate) async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

/// The name the Deployment's current template gives its ReplicaSet.
pub(crate) fn rs_name(sim: &Sim, deployment: &str) -> String {
    let template = get(sim, &deploy_key(deployment))["spec"]["template"].clone();
    format!("{deployment}-{}", pod_template_hash(&template, None))
}

/// A healthy Deployment `web` in `shop`: its pods are Ready at 1s; returns at 2s.
pub(crate) async fn healthy(sim: &Sim, spec: Value) {
    namespace(sim, "shop");
    sim.create(deployment("web", "registry.example.com/web:1.4.2", &spec))
        .unwrap();
    sleep_ms(1000).await;
    kubelet_tick(&sim.store, always);
    sleep_ms(1000).await;
}

/// Change the image of the `web` Deployment, as `kubectl set image` does.
pub(crate) fn set_image(sim: &Sim, image: &str) {
    edit(sim, &deploy_key("web"), |d| {
        d["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image);
    });
}
