//! A pod that starts and becomes ready, one that never does, and deleting a running pod.

use super::*;
use crate::scenario::{ImageBehaviour, Readiness, Scenario};

const WEB: &str = "web-7d4b9c8f5d-x2x9q";

fn web_pod() -> Value {
    pod(
        WEB,
        &json!({"containers": [container("web", "nginx:1.27", &json!({
            "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}],
            "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                               "initialDelaySeconds": 2, "periodSeconds": 5, "timeoutSeconds": 1,
                               "successThreshold": 1, "failureThreshold": 3},
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            "volumeMounts": [{"name": "kube-api-access-x7k2p", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}]
        }))]}),
    )
}

#[tokio::test(start_paused = true)]
async fn a_healthy_pod_is_scheduled_pulled_started_and_probed_ready() {
    let slow_start = ImageBehaviour {
        ready: Readiness::After(Duration::from_secs(3)),
        ..ImageBehaviour::pulls_in(Duration::from_secs(1))
    };
    let sim = Sim::start(Scenario::builder().image("nginx:1.27", slow_start).build());
    let rec = record(&sim);
    let mut p = web_pod();
    p["status"]["qosClass"] = json!("Burstable");
    sim.create(p).unwrap();
    run_for(30.0).await;

    let uid = uid(&sim, WEB);
    let pod = get_pod(&sim, WEB);
    assert_eq!(pod["spec"]["nodeName"], "sim-node-1");
    let mounts = json!([{"name": "kube-api-access-x7k2p", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                         "readOnly": true, "recursiveReadOnly": "Disabled"}]);
    assert_eq!(
        scrub(pod["status"].clone()),
        json!({
            "phase": "Running",
            "conditions": [
                cond("PodReadyToStartContainers", "True", &ts(1), None, None),
                cond("Initialized", "True", &ts(0), None, None),
                cond("Ready", "True", &ts(8), None, None),
                cond("ContainersReady", "True", &ts(8), None, None),
                cond("PodScheduled", "True", &ts(0), None, None),
            ],
            "hostIP": "172.18.0.2",
            "hostIPs": [{"ip": "172.18.0.2"}],
            "podIP": "10.244.1.2",
            "podIPs": [{"ip": "10.244.1.2"}],
            "startTime": ts(0),
            "containerStatuses": [{
                "name": "web",
                "state": {"running": {"startedAt": ts(1)}},
                "lastState": {},
                "ready": true,
                "restartCount": 0,
                "image": "docker.io/library/nginx:1.27",
                "imageID": "docker.io/library/nginx@sha256:<digest>",
                "containerID": "containerd://<id>",
                "started": true,
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                "volumeMounts": mounts,
            }],
            "qosClass": "Burstable"
        })
    );

    let first = &rec.statuses(WEB);
    let pending = first
        .iter()
        .find(|(_, s)| s["containerStatuses"].is_array())
        .expect("kubelet's first status");
    assert_eq!(
        pending.0, 200,
        "the kubelet reacts one controller delay after the binding"
    );
    assert_eq!(
        pending.1,
        json!({
            "phase": "Pending",
            "conditions": [
                cond("PodReadyToStartContainers", "False", &ts(0), None, None),
                cond("Initialized", "True", &ts(0), None, None),
                cond("Ready", "False", &ts(0), Some("ContainersNotReady"), Some("containers with unready status: [web]")),
                cond("ContainersReady", "False", &ts(0), Some("ContainersNotReady"), Some("containers with unready status: [web]")),
                cond("PodScheduled", "True", &ts(0), None, None),
            ],
            "hostIP": "172.18.0.2",
            "hostIPs": [{"ip": "172.18.0.2"}],
            "startTime": ts(0),
            "containerStatuses": [{
                "name": "web", "state": {"waiting": {"reason": "ContainerCreating"}}, "lastState": {},
                "ready": false, "restartCount": 0, "image": "nginx:1.27", "imageID": "", "started": false,
                "volumeMounts": mounts,
            }],
            "qosClass": "Burstable"
        })
    );
    assert_eq!(
        rec.container_states(WEB),
        [
            (200, "ContainerCreating/0".to_owned()),
            (1200, "Running/0".into()),
            (8200, "Ready/0".into())
        ]
    );

    let ev = |t: u64, type_: &str, reason: &str, msg: &str| {
        (t, type_.to_owned(), reason.to_owned(), msg.to_owned(), 1)
    };
    assert_eq!(
        rec.events(WEB),
        [
            ev(
                100,
                "Normal",
                "Scheduled",
                &format!("Successfully assigned shop/{WEB} to sim-node-1")
            ),
            ev(200, "Normal", "Pulling", "Pulling image \"nginx:1.27\""),
            ev(
                1200,
                "Normal",
                "Pulled",
                "Successfully pulled image \"nginx:1.27\" in 1s (1s including waiting). Image size: 28 bytes."
            ),
            ev(1200, "Normal", "Created", "Created container: web"),
            ev(1200, "Normal", "Started", "Started container web"),
            ev(
                3200,
                "Warning",
                "Unhealthy",
                "Readiness probe failed: Get \"http://10.244.1.2:80/healthz\": dial tcp 10.244.1.2:80: connect: connection refused"
            ),
        ]
    );
    let events = sim.store.list("", "events", Some(NS)).0;
    let started = events.iter().find(|e| e["reason"] == "Started").unwrap();
    assert_eq!(
        started["involvedObject"]["fieldPath"],
        "spec.containers{web}"
    );
    assert_eq!(started["involvedObject"]["uid"], uid.as_str());
    assert_eq!(
        started["source"],
        json!({"component": "kubelet", "host": "sim-node-1"})
    );
    let scheduled = events.iter().find(|e| e["reason"] == "Scheduled").unwrap();
    assert_eq!(
        scheduled["source"],
        json!({"component": "default-scheduler"})
    );
}

#[tokio::test(start_paused = true)]
async fn a_never_ready_container_keeps_failing_its_probe() {
    let sim = Sim::start(
        Scenario::builder()
            .image("nginx:1.27", ImageBehaviour::never_ready())
            .build(),
    );
    let rec = record(&sim);
    sim.create(web_pod()).unwrap();
    run_for(25.0).await;

    let pod = get_pod(&sim, WEB);
    assert_eq!(pod["status"]["phase"], "Running");
    let unready = Some("containers with unready status: [web]");
    assert_eq!(
        pod["status"]["conditions"][2],
        cond(
            "Ready",
            "False",
            &ts(0),
            Some("ContainersNotReady"),
            unready
        )
    );
    assert_eq!(pod["status"]["containerStatuses"][0]["ready"], false);
    assert_eq!(pod["status"]["containerStatuses"][0]["started"], true);
    let failed = "Readiness probe failed: HTTP probe failed with statuscode: 503";
    let unhealthy: Vec<_> = rec
        .events(WEB)
        .into_iter()
        .filter(|e| e.2 == "Unhealthy")
        .collect();
    assert_eq!(
        unhealthy,
        [3200, 8200, 13200, 18200, 23200]
            .iter()
            .zip(1..)
            .map(|(t, n)| (*t, "Warning".into(), "Unhealthy".into(), failed.into(), n))
            .collect::<Vec<_>>()
    );
}

#[tokio::test(start_paused = true)]
async fn deleting_a_running_pod_stops_its_containers_and_removes_it() {
    let logs = ImageBehaviour {
        logs: vec!["listening on :80".into()],
        ..ImageBehaviour::default()
    };
    let sim = Sim::start(Scenario::builder().image("nginx:1.27", logs).build());
    let rec = record(&sim);
    sim.create(web_pod()).unwrap();
    run_for(5.0).await;
    assert_eq!(
        sim.logs.read(NS, WEB, "web", false),
        Some(vec!["listening on :80".to_owned()])
    );

    delete_pod(&sim, WEB, 30);
    run_for(0.5).await;
    let terminating = get_pod(&sim, WEB);
    assert!(terminating["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(terminating["status"]["phase"], "Running");
    run_for(1.0).await;

    assert_eq!(sim.get("v1", "Pod", NS, WEB), None);
    assert_eq!(sim.logs.read(NS, WEB, "web", false), None);
    assert_eq!(rec.times(WEB, "Killing"), [5100]);
    let killing = rec
        .events(WEB)
        .into_iter()
        .find(|e| e.2 == "Killing")
        .unwrap();
    assert_eq!(killing.3, "Stopping container web");
    let (at, last) = rec.statuses(WEB).pop().unwrap();
    assert_eq!(
        at, 6100,
        "removed a second after the kubelet saw the deletion"
    );
    assert_eq!(last["phase"], "Succeeded");
    assert_eq!(last["conditions"][0]["status"], "False");
    let term = &last["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (term["exitCode"].clone(), term["reason"].clone()),
        (json!(0), json!("Completed"))
    );
    assert_eq!(
        (term["startedAt"].clone(), term["finishedAt"].clone()),
        (json!(ts(1)), json!(ts(6)))
    );
}

#[tokio::test(start_paused = true)]
async fn a_deleted_pod_with_a_finalizer_waits_for_it_after_stopping() {
    let sim = Sim::start(Scenario::default());
    let rec = record(&sim);
    let mut p = web_pod();
    p["metadata"]["finalizers"] = json!(["audit.example.com/retain"]);
    sim.create(p).unwrap();
    run_for(5.0).await;
    delete_pod(&sim, WEB, 30);
    run_for(10.0).await;

    let held = get_pod(&sim, WEB);
    assert_eq!(held["status"]["phase"], "Succeeded");
    assert_eq!(rec.times(WEB, "Killing"), [5_100]);
    let writes_after_stop = rec
        .statuses(WEB)
        .into_iter()
        .filter(|(t, _)| *t > 6_100)
        .count();
    assert_eq!(
        writes_after_stop, 0,
        "nothing more happens while the finalizer holds the pod"
    );

    let mut released = held;
    released["metadata"]["finalizers"] = json!([]);
    sim.store.update(&key("pods", WEB), released, None).unwrap();
    run_for(1.0).await;
    assert_eq!(sim.get("v1", "Pod", NS, WEB), None);
}
