//! EndpointSlices and Endpoints follow pod readiness, IPs and termination.

use crate::Sim;
use crate::controllers::workloads::testkit::{run_ready, set_pod, sim, wait};
use crate::store::{DeleteOptions, ObjectKey};
use serde_json::{Value, json};

fn web_pod(name: &str, finalizers: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web", "tier": "frontend"}, "finalizers": finalizers},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 8080, "name": "http"}]}]}})
}

fn slices(sim: &Sim) -> Vec<Value> {
    sim.store
        .list("discovery.k8s.io", "endpointslices", Some("shop"))
        .0
        .iter()
        .map(|s| (**s).clone())
        .collect()
}

fn only_slice(sim: &Sim) -> Value {
    let all = slices(sim);
    assert_eq!(all.len(), 1, "{all:#?}");
    all[0].clone()
}

/// (pod, ready, serving, terminating) per endpoint.
fn conditions(slice: &Value) -> Vec<(String, bool, bool, bool)> {
    slice["endpoints"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let c = &e["conditions"];
            (
                e["targetRef"]["name"].as_str().unwrap().to_owned(),
                c["ready"] == true,
                c["serving"] == true,
                c["terminating"] == true,
            )
        })
        .collect()
}

fn endpoints(sim: &Sim) -> Value {
    sim.get("v1", "Endpoints", "shop", "web")
        .expect("endpoints")
}

#[tokio::test(start_paused = true)]
async fn endpoints_follow_pod_readiness_and_termination() {
    let sim = sim(2);
    sim.create(json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"type": "ClusterIP", "clusterIP": "10.96.14.2", "selector": {"app": "web"},
                 "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}]}})).unwrap();
    wait(1.0).await;
    let placeholder = only_slice(&sim);
    assert!(
        placeholder["metadata"]["name"]
            .as_str()
            .unwrap()
            .starts_with("web-")
    );
    assert_eq!(
        placeholder["metadata"]["labels"],
        json!({"app": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io", "kubernetes.io/service-name": "web"})
    );
    assert_eq!(
        (
            placeholder["addressType"].as_str(),
            &placeholder["endpoints"],
            &placeholder["ports"]
        ),
        (Some("IPv4"), &Value::Null, &Value::Null)
    );
    assert_eq!(
        placeholder["metadata"]["ownerReferences"][0]["kind"],
        "Service"
    );
    let ep = endpoints(&sim);
    assert!(ep.get("subsets").is_none());
    assert_eq!(
        ep["metadata"]["labels"],
        json!({"app": "web", "endpoints.kubernetes.io/managed-by": "endpoint-controller"})
    );

    for name in ["web-a", "web-b", "web-c"] {
        sim.create(web_pod(name, &json!(["example.com/hold"])))
            .unwrap();
        sim.store.freeze(&ObjectKey::new("", "pods", "shop", name));
    }
    wait(1.0).await;
    assert_eq!(
        only_slice(&sim)["endpoints"],
        Value::Null,
        "pods without an IP are not endpoints yet"
    );

    run_ready(&sim, "shop", "web-a", "sim-node-1", "10.244.1.5");
    set_pod(
        &sim,
        "shop",
        "web-b",
        "Running",
        false,
        "sim-node-2",
        "10.244.2.6",
    );
    wait(1.0).await;
    let slice = only_slice(&sim);
    assert_ne!(
        slice["metadata"]["name"], placeholder["metadata"]["name"],
        "the placeholder is replaced"
    );
    assert_eq!(
        conditions(&slice),
        [
            ("web-a".into(), true, true, false),
            ("web-b".into(), false, false, false)
        ]
    );
    assert_eq!(
        slice["ports"],
        json!([{"name": "http", "port": 8080, "protocol": "TCP"}])
    );
    let a_uid = sim.get("v1", "Pod", "shop", "web-a").unwrap()["metadata"]["uid"].clone();
    assert_eq!(
        slice["endpoints"][0],
        json!({"addresses": ["10.244.1.5"], "conditions": {"ready": true, "serving": true, "terminating": false},
        "targetRef": {"kind": "Pod", "namespace": "shop", "name": "web-a", "uid": a_uid}, "nodeName": "sim-node-1"})
    );
    assert!(
        slice["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"]
            .is_string()
    );
    let ep = endpoints(&sim);
    assert_eq!(
        ep["subsets"],
        json!([{
        "addresses": [{"ip": "10.244.1.5", "nodeName": "sim-node-1", "targetRef": {"kind": "Pod", "namespace": "shop", "name": "web-a", "uid": a_uid}}],
        "notReadyAddresses": [{"ip": "10.244.2.6", "nodeName": "sim-node-2", "targetRef": {"kind": "Pod", "namespace": "shop", "name": "web-b",
            "uid": sim.get("v1", "Pod", "shop", "web-b").unwrap()["metadata"]["uid"]}}],
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}])
    );

    run_ready(&sim, "shop", "web-b", "sim-node-2", "10.244.2.6");
    wait(1.0).await;
    assert_eq!(
        conditions(&only_slice(&sim)),
        [
            ("web-a".into(), true, true, false),
            ("web-b".into(), true, true, false)
        ]
    );
    assert_eq!(
        endpoints(&sim)["subsets"][0]["addresses"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // web-a is deleted; a finalizer keeps it terminating: still serving, no longer ready.
    sim.store
        .delete(
            &ObjectKey::new("", "pods", "shop", "web-a"),
            DeleteOptions::default(),
        )
        .unwrap();
    wait(1.0).await;
    assert_eq!(
        conditions(&only_slice(&sim)),
        [
            ("web-a".into(), false, true, true),
            ("web-b".into(), true, true, false)
        ]
    );
    let addresses: Vec<_> = endpoints(&sim)["subsets"][0]["addresses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["ip"].clone())
        .collect();
    assert_eq!(
        addresses,
        [json!("10.244.2.6")],
        "Endpoints leaves terminating pods out"
    );

    // A finished pod leaves both.
    set_pod(
        &sim,
        "shop",
        "web-b",
        "Succeeded",
        false,
        "sim-node-2",
        "10.244.2.6",
    );
    wait(1.0).await;
    assert_eq!(
        conditions(&only_slice(&sim)),
        [("web-a".into(), false, true, true)]
    );
    assert!(endpoints(&sim).get("subsets").is_none());

    // Deleting the Service removes its slices and Endpoints.
    sim.store
        .delete(
            &ObjectKey::new("", "services", "shop", "web"),
            DeleteOptions::default(),
        )
        .unwrap();
    wait(1.0).await;
    assert!(slices(&sim).is_empty());
    assert!(sim.get("v1", "Endpoints", "shop", "web").is_none());
}

#[tokio::test(start_paused = true)]
async fn headless_services_publish_hostnames() {
    let sim = sim(1);
    sim.create(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db", "namespace": "shop"},
        "spec": {"clusterIP": "None", "selector": {"app": "db"}, "ports": [{"name": "pg", "port": 5432}]}})).unwrap();
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "db-0", "namespace": "shop", "labels": {"app": "db"}},
        "spec": {"hostname": "db-0", "subdomain": "db", "containers": [{"name": "pg", "image": "postgres:16"}]}});
    sim.create(pod).unwrap();
    run_ready(&sim, "shop", "db-0", "sim-node-1", "10.244.1.9");
    wait(1.0).await;
    let slice = only_slice(&sim);
    assert_eq!(
        slice["metadata"]["labels"]["service.kubernetes.io/headless"],
        ""
    );
    assert_eq!(slice["endpoints"][0]["hostname"], "db-0");
    assert_eq!(
        slice["ports"],
        json!([{"name": "pg", "port": 5432, "protocol": "TCP"}])
    );
    assert_eq!(
        endpoints_of(&sim, "db")["subsets"][0]["addresses"][0]["hostname"],
        "db-0"
    );
}

fn endpoints_of(sim: &Sim, name: &str) -> Value {
    sim.get("v1", "Endpoints", "shop", name).expect("endpoints")
}
