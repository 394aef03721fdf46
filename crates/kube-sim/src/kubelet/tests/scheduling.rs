//! The scheduler: spreading, Unschedulable with the scheduler's message and retries, and
//! pods waiting on PersistentVolumeClaims.

use super::*;
use crate::scenario::{NodeSpec, Scenario};
use std::collections::BTreeMap;

const WEB: &str = "web-7d4b9c8f5d-x2x9q";

fn web(name: &str, extra: &Value) -> Value {
    let mut spec = json!({"containers": [container("web", "nginx:1.27", &json!({}))]});
    for (k, v) in extra.as_object().expect("object") {
        spec[k] = v.clone();
    }
    pod(name, &spec)
}

fn node_of(sim: &Sim, name: &str) -> Value {
    get_pod(sim, name)["spec"]["nodeName"].clone()
}

fn scheduled_condition(sim: &Sim, name: &str) -> Value {
    let conds = get_pod(sim, name)["status"]["conditions"].clone();
    conds
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "PodScheduled")
        .cloned()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn pods_spread_over_nodes_by_count_then_name() {
    let sim = Sim::start(Scenario::default());
    for i in 0..4 {
        sim.create(web(&format!("web-{i}"), &json!({}))).unwrap();
        run_for(0.5).await;
    }
    let nodes: Vec<_> = (0..4).map(|i| node_of(&sim, &format!("web-{i}"))).collect();
    assert_eq!(
        nodes,
        [
            json!("sim-node-1"),
            json!("sim-node-2"),
            json!("sim-node-3"),
            json!("sim-node-1")
        ]
    );
    run_for(2.0).await;
    let ips: Vec<_> = (0..4)
        .map(|i| get_pod(&sim, &format!("web-{i}"))["status"]["podIP"].clone())
        .collect();
    assert_eq!(
        ips,
        [
            json!("10.244.1.2"),
            json!("10.244.2.2"),
            json!("10.244.3.2"),
            json!("10.244.1.3")
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_unmatched_node_selector_is_unschedulable_until_a_node_matches() {
    let sim = Sim::start(Scenario::default());
    let rec = record(&sim);
    sim.create(web(WEB, &json!({"nodeSelector": {"disktype": "ssd"}})))
        .unwrap();
    run_for(1.0).await;

    let message = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    assert_eq!(
        scheduled_condition(&sim, WEB),
        cond(
            "PodScheduled",
            "False",
            &ts(0),
            Some("Unschedulable"),
            Some(message)
        )
    );
    assert_eq!(get_pod(&sim, WEB)["status"]["phase"], "Pending");
    assert_eq!(get_pod(&sim, WEB)["spec"].get("nodeName"), None);
    let failed = (
        100,
        "Warning".to_owned(),
        "FailedScheduling".to_owned(),
        message.to_owned(),
        1,
    );
    assert_eq!(rec.events(WEB), [failed]);

    run_for(300.0).await;
    let repeated: Vec<_> = rec.events(WEB).into_iter().map(|e| (e.0, e.4)).collect();
    assert_eq!(
        repeated,
        [(100, 1), (300_100, 2)],
        "retried every five minutes"
    );

    let key = ObjectKey::new("", "nodes", "", "sim-node-2");
    let mut node = (*sim.store.get(&key).unwrap()).clone();
    node["metadata"]["labels"]["disktype"] = json!("ssd");
    sim.store.update(&key, node, None).unwrap();
    run_for(1.0).await;
    assert_eq!(node_of(&sim, WEB), "sim-node-2");
    assert_eq!(
        scheduled_condition(&sim, WEB),
        cond("PodScheduled", "True", &ts(301), None, None)
    );
    let last = rec
        .events(WEB)
        .into_iter()
        .find(|e| e.2 == "Scheduled")
        .unwrap();
    assert_eq!(
        (last.0, last.3),
        (
            301_100,
            format!("Successfully assigned shop/{WEB} to sim-node-2")
        )
    );
}

#[tokio::test(start_paused = true)]
async fn mixed_reasons_are_counted_per_node() {
    let cordoned = NodeSpec {
        name: "sim-node-4".into(),
        labels: BTreeMap::new(),
        unschedulable: true,
    };
    let sim = Sim::start(Scenario::builder().node(cordoned).build());
    let big = json!({"containers": [container("web", "nginx:1.27", &json!({"resources": {"requests": {"cpu": "6"}}}))]});
    sim.create(pod(WEB, &big)).unwrap();
    run_for(1.0).await;
    let message = "0/4 nodes are available: 1 node(s) were unschedulable, 3 Insufficient cpu. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.";
    assert_eq!(scheduled_condition(&sim, WEB)["message"], message);
}

#[tokio::test(start_paused = true)]
async fn no_nodes_and_deleting_an_unscheduled_pod() {
    let sim = Sim::start(Scenario::builder().no_nodes().build());
    sim.create(web(WEB, &json!({}))).unwrap();
    run_for(1.0).await;
    assert_eq!(
        scheduled_condition(&sim, WEB)["message"],
        "no nodes available to schedule pods"
    );
    delete_pod(&sim, WEB, 30);
    run_for(0.5).await;
    assert_eq!(
        sim.get("v1", "Pod", NS, WEB),
        None,
        "an unscheduled pod needs no kubelet to go away"
    );
}

fn pvc(name: &str, class: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": NS},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                    "storageClassName": class, "volumeMode": "Filesystem"},
           "status": {"phase": "Pending"}})
}

fn with_claim(claim: &str) -> Value {
    web(
        WEB,
        &json!({"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}),
    )
}

#[tokio::test(start_paused = true)]
async fn claims_that_are_missing_or_unbound_immediate_block_scheduling() {
    let sim = Sim::start(Scenario::default());
    sim.create(with_claim("data")).unwrap();
    run_for(1.0).await;
    let missing = "0/3 nodes are available: persistentvolumeclaim \"data\" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    assert_eq!(scheduled_condition(&sim, WEB)["message"], missing);

    // No class: only an existing volume could bind it, which is Immediate binding.
    sim.create(pvc("data", &json!(""))).unwrap();
    run_for(1.0).await;
    let unbound = "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
    assert_eq!(scheduled_condition(&sim, WEB)["message"], unbound);
}

#[tokio::test(start_paused = true)]
async fn a_wait_for_first_consumer_claim_gets_the_chosen_node_before_the_pod_binds() {
    let sim = Sim::start(Scenario::default());
    let class = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local-wffc"},
                       "provisioner": "kube-sim.io/local", "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"});
    sim.create(class).unwrap();
    sim.create(pvc("data", &json!("local-wffc"))).unwrap();
    sim.create(with_claim("data")).unwrap();
    run_for(0.5).await;

    let claim_key = key("persistentvolumeclaims", "data");
    let claim = (*sim.store.get(&claim_key).unwrap()).clone();
    assert_eq!(
        claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"],
        "sim-node-1"
    );

    let mut bound = claim;
    bound["spec"]["volumeName"] = json!("pvc-5e1f0000-0000-4000-8000-000000000009");
    bound["status"] =
        json!({"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}});
    sim.store.update(&claim_key, bound, None).unwrap();
    run_for(2.0).await;
    assert_eq!(node_of(&sim, WEB), "sim-node-1");
    assert_eq!(get_pod(&sim, WEB)["status"]["phase"], "Running");
}

#[tokio::test(start_paused = true)]
async fn a_pod_bound_to_a_node_that_registers_later_starts_then() {
    let sim = Sim::start(Scenario::default());
    let rec = record(&sim);
    sim.create(web(WEB, &json!({"nodeName": "sim-node-9"})))
        .unwrap();
    run_for(5.0).await;
    assert_eq!(
        get_pod(&sim, WEB)["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
    assert_eq!(
        rec.events(WEB),
        [],
        "no scheduler involved, and no kubelet yet"
    );

    let node = json!({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": "sim-node-9", "labels": {"kubernetes.io/hostname": "sim-node-9"}},
                      "status": {"addresses": [{"type": "InternalIP", "address": "172.18.0.9"}],
                                 "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
                      "spec": {"podCIDR": "10.244.9.0/24"}});
    sim.create(node).unwrap();
    run_for(2.0).await;
    let s = get_pod(&sim, WEB)["status"].clone();
    assert_eq!(
        (s["phase"].clone(), s["hostIP"].clone(), s["podIP"].clone()),
        (json!("Running"), json!("172.18.0.9"), json!("10.244.9.2"))
    );
}
