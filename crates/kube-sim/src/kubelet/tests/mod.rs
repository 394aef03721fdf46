//! Scenario tests of the scheduler and kubelet on a paused clock: exact statuses and event
//! sequences as a real 1.31/1.33 cluster with containerd 1.7 produces them.

mod config;
mod crash;
mod healthy;
mod pulls;
mod scheduling;

use crate::Sim;
use crate::store::{Change, ChangeType, DeleteOptions, ObjectKey};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;

pub const NS: &str = "shop";

/// Let `secs` of simulated time pass.
pub async fn run_for(secs: f64) {
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
}

/// A Pod as the API server returns it after defaulting, with `spec` fields merged in.
pub fn pod(name: &str, spec: &Value) -> Value {
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": name.split('-').next().unwrap_or(name)}},
        "spec": {
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler",
            "serviceAccountName": "default",
            "securityContext": {},
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ]
        },
        "status": {"phase": "Pending", "qosClass": "BestEffort"}
    });
    for (k, v) in spec.as_object().expect("spec object") {
        pod["spec"][k] = v.clone();
    }
    pod
}

/// A container as defaulted by the API server.
pub fn container(name: &str, image: &str, extra: &Value) -> Value {
    let mut c = json!({
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
    });
    for (k, v) in extra.as_object().expect("container object") {
        c[k] = v.clone();
    }
    c
}

pub fn key(plural: &str, name: &str) -> ObjectKey {
    ObjectKey::new("", plural, NS, name)
}

pub fn get_pod(sim: &Sim, name: &str) -> Value {
    sim.get("v1", "Pod", NS, name)
        .unwrap_or_else(|| panic!("pod {name} exists"))
}

pub fn uid(sim: &Sim, name: &str) -> String {
    get_pod(sim, name)["metadata"]["uid"]
        .as_str()
        .expect("uid")
        .to_owned()
}

pub fn delete_pod(sim: &Sim, name: &str, grace: i64) {
    let opts = DeleteOptions {
        grace_period_seconds: Some(grace),
    };
    sim.store
        .delete(&key("pods", name), opts)
        .expect("pod deleted");
}

type Log = Arc<Mutex<Vec<(Duration, Arc<Change>)>>>;

/// Every store change, with the simulated time it happened at.
pub struct Recording {
    seen: Log,
    task: JoinHandle<()>,
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An observed event occurrence: (millis since start, type, reason, message, count).
pub type Seen = (u64, String, String, String, i64);

pub fn record(sim: &Sim) -> Recording {
    let mut rx = sim.store.subscribe();
    let start = sim.store.clock().start();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let task = tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(c) => sink.lock().expect("lock").push((start.elapsed(), c)),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    Recording { seen, task }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).expect("short test")
}

impl Recording {
    /// Every event recorded or merged about pod `name`, in order.
    pub fn events(&self, name: &str) -> Vec<Seen> {
        let seen = self.seen.lock().expect("lock");
        seen.iter()
            .filter(|(_, c)| c.key.plural == "events" && c.kind != ChangeType::Deleted)
            .filter(|(_, c)| c.object["involvedObject"]["name"] == name)
            .map(|(t, c)| {
                let e = &c.object;
                let s = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
                (
                    millis(*t),
                    s("type"),
                    s("reason"),
                    s("message"),
                    e["count"].as_i64().unwrap_or(0),
                )
            })
            .collect()
    }

    /// The times at which events with `reason` about pod `name` occurred.
    pub fn times(&self, name: &str, reason: &str) -> Vec<u64> {
        self.events(name)
            .into_iter()
            .filter(|e| e.2 == reason)
            .map(|e| e.0)
            .collect()
    }

    /// Every status the pod was written with, in order (deduplicated).
    pub fn statuses(&self, name: &str) -> Vec<(u64, Value)> {
        let seen = self.seen.lock().expect("lock");
        let mut out: Vec<(u64, Value)> = Vec::new();
        for (t, c) in seen
            .iter()
            .filter(|(_, c)| c.key.plural == "pods" && c.key.name == name)
        {
            let status = c.object["status"].clone();
            if out.last().is_none_or(|(_, s)| *s != status) {
                out.push((millis(*t), status));
            }
        }
        out
    }

    /// `(millis, summary)` of each distinct state of the pod's first container, like
    /// `kubectl get pods -w` shows it: a waiting reason, `Running`, `Ready` or a
    /// terminated reason, with the restart count.
    pub fn container_states(&self, name: &str) -> Vec<(u64, String)> {
        let mut out: Vec<(u64, String)> = Vec::new();
        for (t, s) in self.statuses(name) {
            let cs = &s["containerStatuses"][0];
            let state = &cs["state"];
            let what = if let Some(w) = state.get("waiting") {
                w["reason"].as_str().unwrap_or_default().to_owned()
            } else if state.get("running").is_some() {
                if cs["ready"] == true {
                    "Ready".into()
                } else {
                    "Running".into()
                }
            } else if let Some(term) = state.get("terminated") {
                term["reason"].as_str().unwrap_or_default().to_owned()
            } else {
                continue;
            };
            let summary = format!("{what}/{}", cs["restartCount"]);
            if out.last().is_none_or(|(_, s)| *s != summary) {
                out.push((t, summary));
            }
        }
        out
    }
}

/// Replace generated IDs with placeholders after checking their shape, so statuses can be
/// compared whole.
pub fn scrub(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if let (true, Some(s)) = (k == "containerID", x.as_str()) {
                        let hex = s.strip_prefix("containerd://").expect("containerd id");
                        assert!(
                            hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
                            "{s}"
                        );
                        *x = json!("containerd://<id>");
                    } else if let (true, Some(s)) = (k == "imageID", x.as_str()) {
                        if let Some((repo, digest)) = s.split_once("@sha256:") {
                            assert_eq!(digest.len(), 64, "{s}");
                            *x = json!(format!("{repo}@sha256:<digest>"));
                        }
                    } else {
                        walk(x);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

/// A condition as the kubelet and scheduler write it.
pub fn cond(
    type_: &str,
    status: &str,
    at: &str,
    reason: Option<&str>,
    message: Option<&str>,
) -> Value {
    let mut c =
        json!({"type": type_, "status": status, "lastProbeTime": null, "lastTransitionTime": at});
    if let Some(r) = reason {
        c["reason"] = json!(r);
    }
    if let Some(m) = message {
        c["message"] = json!(m);
    }
    c
}

/// `2026-01-01T00:00:SSZ`-style timestamp `secs` after the simulated epoch.
pub fn ts(secs: u64) -> String {
    format!("2026-01-01T00:{:02}:{:02}Z", secs / 60, secs % 60)
}
