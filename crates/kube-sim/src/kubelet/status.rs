//! The pod status the kubelet writes, generated from its runtime state the way
//! `generateAPIPodStatus` does: container statuses, phase, conditions, IPs, QoS class.

use super::conditions;
use super::phase::{phase, qos_class};
use super::runtime::{CState, Ctr, PodRuntime, Term};
use serde_json::{Map, Value, json};

/// What the status is generated from besides the pod and its runtime state.
pub struct Inputs<'a> {
    pub host_ip: &'a str,
    pub now: &'a str,
    /// 1.33 reports a running container's `resources` (InPlacePodVerticalScaling beta).
    pub with_resources: bool,
    /// The pod is being torn down for good (its containers will not restart).
    pub terminal: bool,
}

fn restart_policy(pod: &Value) -> &str {
    pod["spec"]["restartPolicy"].as_str().unwrap_or("Always")
}

/// `ShouldContainerBeRestarted` for a container that has exited with `code`.
pub fn should_restart(pod: &Value, c: &Ctr, code: i32) -> bool {
    if pod["metadata"]
        .get("deletionTimestamp")
        .is_some_and(|d| !d.is_null())
    {
        return false;
    }
    if c.sidecar {
        return true;
    }
    match restart_policy(pod) {
        "Never" => false,
        "OnFailure" => code != 0,
        _ => true,
    }
}

fn terminated(t: &Term) -> Value {
    let mut v = json!({"exitCode": t.exit_code, "reason": t.reason});
    if let Some(m) = &t.message {
        v["message"] = json!(m);
    }
    v["startedAt"] = json!(t.started_at);
    v["finishedAt"] = json!(t.finished_at);
    v["containerID"] = json!(format!("containerd://{}", t.id));
    json!({"terminated": v})
}

fn waiting(reason: &str, message: &str) -> Value {
    let mut w = json!({"reason": reason});
    if !message.is_empty() {
        w["message"] = json!(message);
    }
    json!({"waiting": w})
}

fn volume_mounts(spec: &Value) -> Option<Value> {
    let mounts: Vec<Value> = spec["volumeMounts"]
        .as_array()?
        .iter()
        .map(|m| {
            let mut v = json!({"name": m["name"], "mountPath": m["mountPath"]});
            if m["readOnly"] == true {
                v["readOnly"] = json!(true);
                v["recursiveReadOnly"] = json!("Disabled");
            }
            v
        })
        .collect();
    (!mounts.is_empty()).then(|| Value::Array(mounts))
}

/// `resources` of a running container: its cpu, memory and ephemeral-storage limits and
/// requests (requests defaulting to limits).
fn running_resources(spec: &Value) -> Value {
    let pick = |list: &Value| -> Option<Map<String, Value>> {
        let m: Map<String, Value> = list
            .as_object()?
            .iter()
            .filter(|(k, _)| ["cpu", "memory", "ephemeral-storage"].contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Some(m)
    };
    let res = &spec["resources"];
    let mut out = Map::new();
    if let Some(l) = pick(&res["limits"]) {
        out.insert("limits".into(), Value::Object(l));
    }
    if let Some(r) = pick(&res["requests"]).or_else(|| pick(&res["limits"])) {
        out.insert("requests".into(), Value::Object(r));
    }
    Value::Object(out)
}

/// One container's status.
fn container_status(pod: &Value, c: &Ctr, default_reason: &str, inp: &Inputs<'_>) -> Value {
    let spec = c.spec(pod);
    let last = c.last.as_ref().map_or_else(|| json!({}), terminated);
    let (state, last_state, id) = match &c.state {
        CState::Fresh => {
            let w = c.waiting.as_ref();
            let state = waiting(
                w.map_or(default_reason, |w| &w.reason),
                w.map_or("", |w| &w.message),
            );
            (state, last, c.last.as_ref().map(|t| t.id.clone()))
        }
        CState::Running(r) => (
            json!({"running": {"startedAt": r.started_at}}),
            last,
            Some(r.id.clone()),
        ),
        CState::Exited(t) => match &c.waiting {
            Some(w) if should_restart(pod, c, t.exit_code) && !inp.terminal => (
                waiting(&w.reason, &w.message),
                terminated(t),
                Some(t.id.clone()),
            ),
            _ => (terminated(t), last, Some(t.id.clone())),
        },
    };
    let run = c.running();
    let spec_image = spec["image"].as_str().unwrap_or_default();
    let (image, image_id) = match &c.image {
        Some((image, id)) => (image.as_str(), id.as_str()),
        None => (spec_image, ""),
    };
    let mut v = json!({
        "name": c.name,
        "state": state,
        "lastState": last_state,
        "ready": if c.init && !c.sidecar {
            matches!(&c.state, CState::Exited(t) if t.exit_code == 0)
        } else {
            run.is_some_and(|r| r.ready)
        },
        "restartCount": c.restart_count,
        "image": image,
        "imageID": image_id,
    });
    if let Some(id) = id {
        v["containerID"] = json!(format!("containerd://{id}"));
    }
    v["started"] = json!(run.is_some());
    if run.is_some() && inp.with_resources {
        v["resources"] = running_resources(spec);
    }
    if let Some(m) = volume_mounts(spec) {
        v["volumeMounts"] = m;
    }
    v
}

/// The whole status for `pod` (keeping status fields others own).
pub fn pod_status(pod: &Value, rt: &PodRuntime, inp: &Inputs<'_>) -> Value {
    let old = &pod["status"];
    let has_init = rt.ctrs.iter().any(|c| c.init);
    let default_reason = if has_init {
        "PodInitializing"
    } else {
        "ContainerCreating"
    };
    let init: Vec<Value> = rt
        .ctrs
        .iter()
        .filter(|c| c.init)
        .map(|c| container_status(pod, c, default_reason, inp))
        .collect();
    let mut main: Vec<Value> = rt
        .ctrs
        .iter()
        .filter(|c| !c.init)
        .map(|c| container_status(pod, c, default_reason, inp))
        .collect();
    main.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    let mut phase = phase(pod, &init, &main, inp.terminal);
    if let Some(p @ ("Succeeded" | "Failed")) = old["phase"].as_str() {
        phase = if p == "Succeeded" {
            "Succeeded"
        } else {
            "Failed"
        };
    }
    let old_conditions = old["conditions"].as_array().cloned().unwrap_or_default();
    let all: Vec<Value> = init.iter().chain(&main).cloned().collect();
    let sandbox_ready = rt.sandbox_alive && rt.ip_published;
    let conds = conditions::generate(pod, &all, phase, sandbox_ready, &old_conditions);
    let mut s =
        json!({"phase": phase, "conditions": conditions::merge(&old_conditions, conds, inp.now)});
    for k in ["message", "reason", "nominatedNodeName"] {
        if let Some(v) = old.get(k) {
            s[k] = v.clone();
        }
    }
    s["hostIP"] = json!(inp.host_ip);
    s["hostIPs"] = json!([{"ip": inp.host_ip}]);
    if let Some(ip) = rt.ip.as_ref().filter(|_| rt.ip_published) {
        s["podIP"] = json!(ip);
        s["podIPs"] = json!([{"ip": ip}]);
    }
    s["startTime"] = json!(rt.start_time);
    if has_init {
        s["initContainerStatuses"] = json!(init);
    }
    s["containerStatuses"] = json!(main);
    s["qosClass"] = old
        .get("qosClass")
        .cloned()
        .unwrap_or_else(|| json!(qos_class(pod)));
    if let Some(rest) = old.as_object() {
        for (k, v) in rest {
            if s.get(k).is_none()
                && !["podIP", "podIPs", "initContainerStatuses"].contains(&k.as_str())
            {
                s[k] = v.clone();
            }
        }
    }
    s
}
