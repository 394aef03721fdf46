//! The same rollouts end to end, with the simulated scheduler and kubelet running the
//! pods on the scenario's nodes instead of the stand-in.

use super::harness::*;
use crate::Sim;
use crate::scenario::{ImageBehaviour, Scenario};
use serde_json::{Value, json};

fn cluster() -> Sim {
    Sim::start(
        Scenario::builder()
            .image(
                "registry.example.com/web:broken",
                ImageBehaviour::never_ready(),
            )
            .build(),
    )
}

fn conditions(sim: &Sim) -> Vec<(String, String, String)> {
    let d = get(sim, &deploy_key("web"));
    d["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (s("type"), s("status"), s("reason"))
        })
        .collect()
}

fn counts(sim: &Sim) -> Value {
    let s = get(sim, &deploy_key("web"))["status"].clone();
    let n = |k: &str| s.get(k).cloned().unwrap_or(json!(0));
    json!([
        n("replicas"),
        n("updatedReplicas"),
        n("readyReplicas"),
        n("availableReplicas"),
        n("unavailableReplicas")
    ])
}

fn owned(s: &str, st: &str, r: &str) -> (String, String, String) {
    (s.to_owned(), st.to_owned(), r.to_owned())
}

#[tokio::test(start_paused = true)]
async fn rollout_and_rolling_update_with_the_real_kubelet() {
    let sim = cluster();
    namespace(&sim, "shop");
    let strategy =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}});
    sim.create(deployment(
        "web",
        "registry.example.com/web:1.4.2",
        &json!({"strategy": strategy}),
    ))
    .unwrap();
    let first = rs_name(&sim, "web");
    sleep_ms(30_000).await;
    assert_eq!(counts(&sim), json!([3, 3, 3, 3, 0]));
    assert_eq!(
        conditions(&sim),
        [
            owned("Available", "True", "MinimumReplicasAvailable"),
            owned("Progressing", "True", "NewReplicaSetAvailable")
        ]
    );
    let running = pods(&sim);
    assert!(running.iter().all(|p| {
        p["status"]["phase"] == "Running"
            && p["spec"]["nodeName"]
                .as_str()
                .is_some_and(|n| n.starts_with("sim-node-"))
    }));

    set_image(&sim, "registry.example.com/web:1.5.0");
    let second = rs_name(&sim, "web");
    sleep_ms(120_000).await;
    assert_eq!(counts(&sim), json!([3, 3, 3, 3, 0]));
    assert_eq!(
        events(&sim, "Deployment"),
        [
            format!("ScalingReplicaSet: Scaled up replica set {first} from 0 to 3"),
            format!("ScalingReplicaSet: Scaled up replica set {second} from 0 to 1"),
            format!("ScalingReplicaSet: Scaled down replica set {first} from 3 to 2"),
            format!("ScalingReplicaSet: Scaled up replica set {second} from 1 to 2"),
            format!("ScalingReplicaSet: Scaled down replica set {first} from 2 to 1"),
            format!("ScalingReplicaSet: Scaled up replica set {second} from 2 to 3"),
            format!("ScalingReplicaSet: Scaled down replica set {first} from 1 to 0"),
        ]
    );
    let hash = second.trim_start_matches("web-");
    let left = pods(&sim);
    assert_eq!(
        left.len(),
        3,
        "old pods terminated and removed by the kubelet"
    );
    assert!(
        left.iter()
            .all(|p| p["metadata"]["labels"]["pod-template-hash"] == hash)
    );
}

#[tokio::test(start_paused = true)]
async fn a_never_ready_image_exceeds_the_deadline_with_the_real_kubelet() {
    let sim = cluster();
    namespace(&sim, "shop");
    sim.create(deployment(
        "web",
        "registry.example.com/web:1.4.2",
        &json!({"progressDeadlineSeconds": 30}),
    ))
    .unwrap();
    sleep_ms(30_000).await;
    set_image(&sim, "registry.example.com/web:broken");
    let stuck = rs_name(&sim, "web");
    sleep_ms(20_000).await;
    assert_eq!(
        conditions(&sim)[1],
        owned("Progressing", "True", "ReplicaSetUpdated")
    );
    sleep_ms(30_000).await;
    assert_eq!(
        conditions(&sim),
        [
            owned("Available", "True", "MinimumReplicasAvailable"),
            owned("Progressing", "False", "ProgressDeadlineExceeded")
        ]
    );
    assert_eq!(
        get(&sim, &deploy_key("web"))["status"]["conditions"][1]["message"],
        format!("ReplicaSet \"{stuck}\" has timed out progressing.")
    );
    assert_eq!(counts(&sim), json!([4, 1, 3, 3, 1]));
}
