//! The pod conditions the kubelet owns, generated from container statuses exactly as
//! `pkg/kubelet/status/generate.go` does, with transition times kept while a status holds.

use serde_json::{Value, json};

/// Condition types the kubelet writes; any other condition on the pod is kept as it is.
const OWNED: [&str; 5] = [
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
    "PodScheduled",
];

/// A generated condition before transition times are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cond {
    pub type_: &'static str,
    pub status: &'static str,
    pub reason: Option<&'static str>,
    pub message: Option<String>,
}

impl Cond {
    fn new(type_: &'static str, ok: bool) -> Self {
        Cond {
            type_,
            status: if ok { "True" } else { "False" },
            reason: None,
            message: None,
        }
    }

    fn because(mut self, reason: &'static str, message: Option<String>) -> Self {
        self.reason = Some(reason);
        self.message = message.filter(|m| !m.is_empty());
        self
    }
}

fn name(s: &Value) -> &str {
    s["name"].as_str().unwrap_or_default()
}

fn status_of<'a>(statuses: &'a [Value], c: &Value) -> Option<&'a Value> {
    statuses.iter().find(|s| s["name"] == c["name"])
}

fn specs<'a>(pod: &'a Value, list: &str) -> impl Iterator<Item = &'a Value> {
    pod["spec"][list].as_array().into_iter().flatten()
}

fn is_sidecar(c: &Value) -> bool {
    c["restartPolicy"] == "Always"
}

/// Go's `%s` of a string slice: `[web sidecar]`.
fn go_list(names: &[&str]) -> String {
    format!("[{}]", names.join(" "))
}

fn messages(unknown: &[&str], other: &[&str], what: &str) -> String {
    let mut parts = Vec::new();
    if !unknown.is_empty() {
        parts.push(format!(
            "containers with unknown status: {}",
            go_list(unknown)
        ));
    }
    if !other.is_empty() {
        parts.push(format!("containers with {what} status: {}", go_list(other)));
    }
    parts.join(", ")
}

/// `HasAnyRegularContainerStarted`.
pub fn any_regular_started(pod: &Value, statuses: &[Value]) -> bool {
    specs(pod, "containers")
        .filter_map(|c| status_of(statuses, c))
        .any(|s| {
            let st = &s["state"];
            st.get("running").is_some()
                || st.get("terminated").is_some()
                || (st.get("waiting").is_some() && s["lastState"].get("terminated").is_some())
        })
}

fn initialized(pod: &Value, all: &[Value], phase: &str) -> Cond {
    let (mut unknown, mut incomplete) = (Vec::new(), Vec::new());
    for c in specs(pod, "initContainers") {
        let Some(s) = status_of(all, c) else {
            unknown.push(name(c));
            continue;
        };
        if is_sidecar(c) {
            if s["started"] != true {
                incomplete.push(name(c));
            }
        } else if s["state"]["terminated"]["exitCode"] != 0 {
            incomplete.push(name(c));
        }
    }
    if phase == "Succeeded" && unknown.is_empty() {
        return Cond::new("Initialized", true).because("PodCompleted", None);
    }
    if any_regular_started(pod, all) {
        return Cond::new("Initialized", true);
    }
    let msg = messages(&unknown, &incomplete, "incomplete");
    if msg.is_empty() {
        Cond::new("Initialized", true)
    } else {
        Cond::new("Initialized", false).because("ContainersNotInitialized", Some(msg))
    }
}

fn containers_ready(pod: &Value, all: &[Value], phase: &str) -> Cond {
    let (mut unknown, mut unready) = (Vec::new(), Vec::new());
    let sidecars = specs(pod, "initContainers").filter(|c| is_sidecar(c));
    for c in sidecars.chain(specs(pod, "containers")) {
        match status_of(all, c) {
            Some(s) if s["ready"] != true => unready.push(name(c)),
            Some(_) => {}
            None => unknown.push(name(c)),
        }
    }
    match phase {
        "Succeeded" if unknown.is_empty() => {
            return Cond::new("ContainersReady", false).because("PodCompleted", None);
        }
        "Failed" => return Cond::new("ContainersReady", false).because("PodFailed", None),
        _ => {}
    }
    let msg = messages(&unknown, &unready, "unready");
    if msg.is_empty() {
        Cond::new("ContainersReady", true)
    } else {
        Cond::new("ContainersReady", false).because("ContainersNotReady", Some(msg))
    }
}

fn ready(pod: &Value, containers: &Cond, old: &[Value]) -> Cond {
    if containers.status != "True" {
        return Cond {
            type_: "Ready",
            ..containers.clone()
        };
    }
    let gates = pod["spec"]["readinessGates"]
        .as_array()
        .into_iter()
        .flatten();
    let unready: Vec<String> = gates
        .filter_map(|g| {
            let t = g["conditionType"].as_str().unwrap_or_default();
            match old.iter().find(|c| c["type"] == t) {
                None => Some(format!(
                    "corresponding condition of pod readiness gate \"{t}\" does not exist."
                )),
                Some(c) if c["status"] != "True" => Some(format!(
                    "the status of pod readiness gate \"{t}\" is not \"True\", but {}",
                    c["status"].as_str().unwrap_or_default()
                )),
                Some(_) => None,
            }
        })
        .collect();
    if unready.is_empty() {
        Cond::new("Ready", true)
    } else {
        Cond::new("Ready", false).because("ReadinessGatesNotReady", Some(unready.join(", ")))
    }
}

/// The kubelet's conditions in the order it writes them.
pub fn generate(
    pod: &Value,
    all: &[Value],
    phase: &str,
    sandbox_ready: bool,
    old: &[Value],
) -> Vec<Cond> {
    let cr = containers_ready(pod, all, phase);
    vec![
        Cond::new("PodReadyToStartContainers", sandbox_ready),
        initialized(pod, all, phase),
        ready(pod, &cr, old),
        cr,
        Cond::new("PodScheduled", true),
    ]
}

/// Conditions others own (kept first), then `generated`, each keeping its old
/// `lastTransitionTime` while its status is unchanged.
pub fn merge(old: &[Value], generated: Vec<Cond>, now: &str) -> Vec<Value> {
    let mut out: Vec<Value> = old
        .iter()
        .filter(|c| !OWNED.iter().any(|t| c["type"] == *t))
        .cloned()
        .collect();
    for c in generated {
        let since = old
            .iter()
            .find(|o| o["type"] == c.type_ && o["status"] == c.status)
            .and_then(|o| o["lastTransitionTime"].as_str())
            .unwrap_or(now);
        let mut v = json!({"type": c.type_, "status": c.status, "lastProbeTime": null, "lastTransitionTime": since});
        if let Some(r) = c.reason {
            v["reason"] = json!(r);
        }
        if let Some(m) = c.message {
            v["message"] = json!(m);
        }
        out.push(v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(name: &str) -> Value {
        json!({"name": name, "state": {"waiting": {"reason": "PodInitializing"}}, "ready": false, "started": false})
    }

    #[test]
    fn pending_init_containers_block_initialized_and_ready() {
        let pod = json!({"spec": {"initContainers": [{"name": "migrate"}, {"name": "seed"}],
                                  "containers": [{"name": "web"}, {"name": "proxy"}]}});
        let all = [
            waiting("migrate"),
            waiting("seed"),
            waiting("proxy"),
            waiting("web"),
        ];
        let conds = generate(&pod, &all, "Pending", true, &[]);
        let init = &conds[1];
        assert_eq!(
            (init.status, init.reason),
            ("False", Some("ContainersNotInitialized"))
        );
        assert_eq!(
            init.message.as_deref(),
            Some("containers with incomplete status: [migrate seed]")
        );
        assert_eq!(
            conds[2].message.as_deref(),
            Some("containers with unready status: [web proxy]")
        );
        assert_eq!(conds[2].type_, "Ready");
    }

    #[test]
    fn terminal_phases_use_pod_completed_and_pod_failed() {
        let pod = json!({"spec": {"containers": [{"name": "job"}]}});
        let done =
            [json!({"name": "job", "state": {"terminated": {"exitCode": 0}}, "ready": false})];
        let conds = generate(&pod, &done, "Succeeded", false, &[]);
        let reasons: Vec<_> = conds
            .iter()
            .map(|c| (c.type_, c.status, c.reason))
            .collect();
        assert_eq!(
            reasons,
            [
                ("PodReadyToStartContainers", "False", None),
                ("Initialized", "True", Some("PodCompleted")),
                ("Ready", "False", Some("PodCompleted")),
                ("ContainersReady", "False", Some("PodCompleted")),
                ("PodScheduled", "True", None)
            ]
        );
        let failed = generate(&pod, &done, "Failed", false, &[]);
        assert_eq!(
            (failed[1].reason, failed[2].reason),
            (None, Some("PodFailed"))
        );
    }

    #[test]
    fn readiness_gates_and_transition_times() {
        let pod = json!({"spec": {"containers": [{"name": "web"}], "readinessGates": [{"conditionType": "example.com/lb"}]}});
        let ready =
            [json!({"name": "web", "state": {"running": {}}, "ready": true, "started": true})];
        let old = [
            json!({"type": "example.com/lb", "status": "False", "lastTransitionTime": "2026-01-01T00:00:01Z"}),
            json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:00Z"}),
        ];
        let conds = generate(&pod, &ready, "Running", true, &old);
        assert_eq!(
            conds[2].message.as_deref(),
            Some("the status of pod readiness gate \"example.com/lb\" is not \"True\", but False")
        );
        let merged = merge(&old, conds, "2026-01-01T00:00:09Z");
        assert_eq!(merged[0]["type"], "example.com/lb");
        assert_eq!(merged[5]["lastTransitionTime"], "2026-01-01T00:00:00Z");
        assert_eq!(merged[1]["lastTransitionTime"], "2026-01-01T00:00:09Z");
    }
}
