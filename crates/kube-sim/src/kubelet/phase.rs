//! The pod phase and QoS class the kubelet reports, computed from container statuses as
//! `getPhase` and `GetPodQOS` do.

use super::conditions;
use serde_json::Value;

fn restart_policy(pod: &Value) -> &str {
    pod["spec"]["restartPolicy"].as_str().unwrap_or("Always")
}

/// `getPhase`, over the generated statuses.
pub fn phase(pod: &Value, init: &[Value], main: &[Value], terminal: bool) -> &'static str {
    let find = |list: &[Value], c: &Value| list.iter().find(|s| s["name"] == c["name"]).cloned();
    let specs = |k: &str| pod["spec"][k].as_array().cloned().unwrap_or_default();
    let policy = restart_policy(pod);
    let (mut pending_init, mut failed_init) = (0, 0);
    let (mut unknown, mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0, 0);
    for c in specs("initContainers") {
        let s = find(init, &c);
        let st = s.as_ref().map(|s| &s["state"]);
        let last_term = s
            .as_ref()
            .map(|s| &s["lastState"]["terminated"])
            .filter(|t| t.is_object());
        if c["restartPolicy"] == "Always" {
            match st {
                Some(st) if st.get("running").is_some() => {
                    if s.as_ref().is_some_and(|s| s["started"] != true) {
                        pending_init += 1;
                    }
                    running += 1;
                }
                Some(st) if st.get("terminated").is_some() => {}
                Some(st) if st.get("waiting").is_some() => {
                    if last_term.is_none() {
                        pending_init += 1;
                        waiting += 1;
                    }
                }
                Some(_) => {
                    pending_init += 1;
                    unknown += 1;
                }
                None => unknown += 1,
            }
            continue;
        }
        match st {
            Some(st) if st.get("terminated").is_some() => {
                if st["terminated"]["exitCode"] != 0 {
                    failed_init += 1;
                }
            }
            Some(st) if st.get("waiting").is_some() && last_term.is_some() => {
                if last_term.is_some_and(|t| t["exitCode"] != 0) {
                    failed_init += 1;
                }
            }
            _ => pending_init += 1,
        }
    }
    for c in specs("containers") {
        let Some(s) = find(main, &c) else {
            unknown += 1;
            continue;
        };
        let st = &s["state"];
        if st.get("running").is_some() {
            running += 1;
        } else if st.get("terminated").is_some() {
            stopped += 1;
            if st["terminated"]["exitCode"] == 0 {
                succeeded += 1;
            }
        } else if st.get("waiting").is_some() {
            if s["lastState"].get("terminated").is_some() {
                stopped += 1;
            } else {
                waiting += 1;
            }
        } else {
            unknown += 1;
        }
    }
    if failed_init > 0 && policy == "Never" {
        return "Failed";
    }
    let all: Vec<Value> = init.iter().chain(main).cloned().collect();
    if (pending_init > 0 && !conditions::any_regular_started(pod, &all)) || waiting > 0 {
        return "Pending";
    }
    if running > 0 && unknown == 0 {
        return "Running";
    }
    if running == 0 && stopped > 0 && unknown == 0 {
        if terminal {
            return if stopped == succeeded {
                "Succeeded"
            } else {
                "Failed"
            };
        }
        return match policy {
            "Always" => "Running",
            _ if stopped == succeeded => "Succeeded",
            "Never" => "Failed",
            _ => "Running",
        };
    }
    "Pending"
}

/// `GetPodQOS`, for pods the API server did not classify.
pub fn qos_class(pod: &Value) -> &'static str {
    let all: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .flat_map(|k| pod["spec"][*k].as_array().into_iter().flatten())
        .collect();
    let has =
        |c: &Value, list: &str, r: &str| c["resources"][list].get(r).is_some_and(|q| q != "0");
    let any = all.iter().any(|c| {
        ["cpu", "memory"]
            .iter()
            .any(|r| has(c, "requests", r) || has(c, "limits", r))
    });
    if !any {
        return "BestEffort";
    }
    let guaranteed = all.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let req = &c["resources"]["requests"][*r];
            has(c, "limits", r) && (req.is_null() || *req == c["resources"]["limits"][*r])
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn case(pod: &Value, states: &[Value], want: &str) {
        let main: Vec<Value> = states.to_vec();
        assert_eq!(phase(pod, &[], &main, false), want);
    }

    #[test]
    fn phase_follows_get_phase() {
        let pod = |policy: &str| json!({"spec": {"restartPolicy": policy, "containers": [{"name": "a"}, {"name": "b"}]}});
        let run = |n: &str| json!({"name": n, "state": {"running": {}}, "lastState": {}});
        let exit = |n: &str, code: i32| json!({"name": n, "state": {"terminated": {"exitCode": code}}, "lastState": {}});
        let wait = |n: &str| json!({"name": n, "state": {"waiting": {"reason": "ImagePullBackOff"}}, "lastState": {}});
        let crash = |n: &str| {
            json!({"name": n, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                                     "lastState": {"terminated": {"exitCode": 3}}})
        };
        case(&pod("Always"), &[run("a"), wait("b")], "Pending");
        case(&pod("Always"), &[run("a"), crash("b")], "Running");
        case(&pod("Always"), &[exit("a", 0), exit("b", 0)], "Running");
        case(&pod("Never"), &[exit("a", 0), exit("b", 0)], "Succeeded");
        case(&pod("Never"), &[exit("a", 0), exit("b", 1)], "Failed");
        case(&pod("OnFailure"), &[exit("a", 0), crash("b")], "Running");
        case(
            &pod("OnFailure"),
            &[exit("a", 0), exit("b", 0)],
            "Succeeded",
        );
        case(&pod("Never"), &[run("a")], "Pending");
    }

    #[test]
    fn qos_classes() {
        let with = |res: Value| json!({"spec": {"containers": [{"name": "a", "resources": res}]}});
        assert_eq!(qos_class(&with(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&with(json!({"requests": {"cpu": "100m"}}))),
            "Burstable"
        );
        assert_eq!(
            qos_class(&with(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&with(
                json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}})
            )),
            "Burstable"
        );
    }
}
