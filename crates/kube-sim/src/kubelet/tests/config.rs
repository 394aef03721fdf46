//! Pods that need ConfigMaps and Secrets: CreateContainerConfigError that recovers when
//! the ConfigMap appears, and volumes that keep the pod in ContainerCreating.

use super::*;
use crate::scenario::Scenario;

const WEB: &str = "web-7d4b9c8f5d-x2x9q";

fn config_map(name: &str, data: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS}, "data": data})
}

#[tokio::test(start_paused = true)]
async fn a_missing_config_map_blocks_the_container_until_it_is_created() {
    let sim = Sim::start(Scenario::default());
    let rec = record(&sim);
    let env = json!({"env": [
        {"name": "LOG_LEVEL", "valueFrom": {"configMapKeyRef": {"name": "app-config", "key": "LOG_LEVEL"}}},
        {"name": "FEATURE_X", "valueFrom": {"configMapKeyRef": {"name": "flags", "key": "x", "optional": true}}}
    ]});
    sim.create(pod(
        WEB,
        &json!({"containers": [container("web", "nginx:1.27", &env)]}),
    ))
    .unwrap();
    run_for(14.0).await;

    let missing = "configmap \"app-config\" not found";
    let s = get_pod(&sim, WEB)["status"].clone();
    assert_eq!(s["phase"], "Pending");
    assert_eq!(
        s["containerStatuses"][0]["state"],
        json!({"waiting": {"reason": "CreateContainerConfigError", "message": missing}})
    );
    assert_eq!(
        s["containerStatuses"][0]["image"], "nginx:1.27",
        "never created"
    );
    assert_eq!(s["conditions"][0]["status"], "True", "the sandbox is up");
    // Pulled at 1.2 s, then each sync finds the image present and fails again.
    let error = format!("Error: {missing}");
    let failures: Vec<_> = rec
        .events(WEB)
        .into_iter()
        .filter(|e| e.2 == "Failed")
        .map(|e| (e.0, e.1, e.3, e.4))
        .collect();
    assert_eq!(
        failures,
        [
            (1_200, "Warning".to_owned(), error.clone(), 1),
            (2_200, "Warning".into(), error.clone(), 2),
            (12_200, "Warning".into(), error, 3)
        ]
    );

    sim.create(config_map("app-config", &json!({"LOG_LEVEL": "info"})))
        .unwrap();
    run_for(1.0).await;
    let s = get_pod(&sim, WEB)["status"].clone();
    assert_eq!(s["phase"], "Running");
    assert_eq!(
        s["containerStatuses"][0]["state"],
        json!({"running": {"startedAt": ts(14)}})
    );
    let tail: Vec<_> = rec
        .events(WEB)
        .into_iter()
        .skip(6)
        .map(|e| (e.0, e.2, e.3, e.4))
        .collect();
    let present = "Container image \"nginx:1.27\" already present on machine".to_owned();
    assert_eq!(
        tail,
        [
            (12_200, "Pulled".to_owned(), present.clone(), 2),
            (12_200, "Failed".into(), format!("Error: {missing}"), 3),
            (14_100, "Pulled".into(), present, 3),
            (14_100, "Created".into(), "Created container: web".into(), 1),
            (14_100, "Started".into(), "Started container web".into(), 1),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn missing_secret_keys_and_env_from_are_reported_like_the_kubelet() {
    let sim = Sim::start(Scenario::default());
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": NS},
                        "type": "Opaque", "data": {"username": "YXBw"}});
    sim.create(secret).unwrap();
    let key_ref = json!({"env": [{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}}]});
    sim.create(pod(
        WEB,
        &json!({"containers": [container("web", "nginx:1.27", &key_ref)]}),
    ))
    .unwrap();
    let from = json!({"envFrom": [{"secretRef": {"name": "api-keys"}}]});
    sim.create(pod(
        "worker-6c8f7b9d4-plm2x",
        &json!({"containers": [container("worker", "nginx:1.27", &from)]}),
    ))
    .unwrap();
    run_for(3.0).await;
    let message = |name: &str| {
        get_pod(&sim, name)["status"]["containerStatuses"][0]["state"]["waiting"]["message"].clone()
    };
    assert_eq!(message(WEB), "couldn't find key password in Secret shop/db");
    assert_eq!(
        message("worker-6c8f7b9d4-plm2x"),
        "secret \"api-keys\" not found"
    );
}

#[tokio::test(start_paused = true)]
async fn a_missing_volume_source_keeps_the_pod_creating_with_failed_mount_back_off() {
    let sim = Sim::start(Scenario::default());
    let rec = record(&sim);
    let spec = json!({
        "containers": [container("web", "nginx:1.27", &json!({"volumeMounts": [{"name": "cfg", "mountPath": "/etc/web"}]}))],
        "volumes": [{"name": "cfg", "configMap": {"name": "web-config", "defaultMode": 420}},
                    {"name": "certs", "secret": {"secretName": "web-tls", "optional": true, "defaultMode": 420}}]
    });
    sim.create(pod(WEB, &spec)).unwrap();
    run_for(10.0).await;

    let s = get_pod(&sim, WEB)["status"].clone();
    assert_eq!(
        s["containerStatuses"][0]["state"],
        json!({"waiting": {"reason": "ContainerCreating"}})
    );
    assert_eq!(s.get("podIP"), None);
    let mount = "MountVolume.SetUp failed for volume \"cfg\" : configmap \"web-config\" not found";
    let failed: Vec<_> = rec
        .events(WEB)
        .into_iter()
        .filter(|e| e.2 == "FailedMount")
        .map(|e| (e.0, e.3, e.4))
        .collect();
    let expect: Vec<_> = [200, 700, 1_700, 3_700, 7_700]
        .into_iter()
        .zip(1..)
        .map(|(t, n)| (t, mount.to_owned(), n))
        .collect();
    assert_eq!(failed, expect, "retries after 0.5 s, doubling");
    let events = sim.store.list("", "events", Some(NS)).0;
    let ev = events
        .iter()
        .find(|e| e["reason"] == "FailedMount")
        .unwrap();
    assert_eq!(ev["involvedObject"].get("fieldPath"), None);

    sim.create(config_map(
        "web-config",
        &json!({"nginx.conf": "events {}"}),
    ))
    .unwrap();
    run_for(5.0).await;
    assert_eq!(
        get_pod(&sim, WEB)["status"]["phase"],
        "Pending",
        "the next mount attempt is at 15.7 s"
    );
    run_for(2.0).await;
    assert_eq!(rec.times(WEB, "Pulling"), [15_700]);
    assert_eq!(get_pod(&sim, WEB)["status"]["phase"], "Running");
}
