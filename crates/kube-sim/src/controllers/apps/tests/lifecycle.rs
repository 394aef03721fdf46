//! The rest of a Deployment's life: scaling to zero, a stable hash and a rollback,
//! Recreate, pausing, history pruning and minReadySeconds.

use super::harness::*;
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn scaling_to_zero_keeps_the_replica_set_and_reports_availability() {
    let sim = sim();
    healthy(&sim, json!({})).await;
    let rs = rs_name(&sim, "web");
    spawn_kubelet(sim.store.clone(), Duration::from_secs(1), always);
    edit(&sim, &deploy_key("web"), |d| {
        d["spec"]["replicas"] = json!(0);
    });
    sleep_ms(5000).await;
    assert!(pods(&sim).is_empty());
    let r = &replica_sets(&sim)[0];
    assert_eq!(r["spec"]["replicas"], 0);
    assert_eq!(
        r["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"],
        "0"
    );
    assert_eq!(r["status"], json!({"replicas": 0, "observedGeneration": 2}));
    let status = get(&sim, &deploy_key("web"))["status"].clone();
    assert_eq!(status["observedGeneration"], 2);
    for counter in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
    ] {
        assert_eq!(status.get(counter), None, "{counter} is omitted at zero");
    }
    assert_eq!(status["conditions"][0]["status"], "True");
    assert_eq!(status["conditions"][1]["reason"], "NewReplicaSetAvailable");
    assert_eq!(
        events(&sim, "Deployment").last().unwrap(),
        &format!("ScalingReplicaSet: Scaled down replica set {rs} from 3 to 0")
    );
    assert_eq!(
        events(&sim, "ReplicaSet")
            .iter()
            .filter(|e| e.starts_with("SuccessfulDelete: Deleted pod: "))
            .count(),
        3
    );
}

#[tokio::test(start_paused = true)]
async fn same_template_keeps_its_replica_set_and_a_rollback_raises_its_revision() {
    let sim = sim();
    healthy(&sim, json!({})).await;
    let first = rs_name(&sim, "web");
    spawn_kubelet(sim.store.clone(), Duration::from_secs(1), always);
    edit(&sim, &deploy_key("web"), |d| {
        d["metadata"]["labels"]["team"] = json!("payments");
    });
    sleep_ms(2000).await;
    assert_eq!(replica_sets(&sim).len(), 1, "metadata changes do not roll");
    assert_eq!(rs_name(&sim, "web"), first, "hash is stable");

    set_image(&sim, "registry.example.com/web:1.5.0");
    sleep_ms(20_000).await;
    set_image(&sim, "registry.example.com/web:1.4.2");
    sleep_ms(20_000).await;
    let rss = replica_sets(&sim);
    assert_eq!(rss.len(), 2);
    let back = rss
        .iter()
        .find(|r| r["metadata"]["name"] == first.as_str())
        .unwrap();
    assert_eq!(back["spec"]["replicas"], 3);
    assert_eq!(
        back["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
    assert_eq!(
        back["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"],
        "1"
    );
    assert_eq!(
        get(&sim, &deploy_key("web"))["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
}

#[tokio::test(start_paused = true)]
async fn recreate_waits_for_old_pods_before_creating_the_new_replica_set() {
    let sim = sim();
    healthy(&sim, json!({"strategy": {"type": "Recreate"}})).await;
    let old = rs_name(&sim, "web");
    set_image(&sim, "registry.example.com/web:1.5.0");
    let new = rs_name(&sim, "web");
    sleep_ms(2000).await;
    assert_eq!(
        replica_sets(&sim).len(),
        1,
        "no new ReplicaSet while old pods terminate"
    );
    assert_eq!(
        pods(&sim)
            .iter()
            .filter(|p| p["metadata"].get("deletionTimestamp").is_some())
            .count(),
        3
    );
    kubelet_tick(&sim.store, always);
    sleep_ms(1000).await;
    kubelet_tick(&sim.store, always);
    sleep_ms(1000).await;
    assert_eq!(
        events(&sim, "Deployment"),
        [
            format!("ScalingReplicaSet: Scaled up replica set {old} from 0 to 3"),
            format!("ScalingReplicaSet: Scaled down replica set {old} from 3 to 0"),
            format!("ScalingReplicaSet: Scaled up replica set {new} from 0 to 3"),
        ]
    );
    let status = get(&sim, &deploy_key("web"))["status"].clone();
    assert_eq!(
        (
            status["availableReplicas"].clone(),
            status["conditions"][1]["reason"].clone()
        ),
        (json!(3), json!("NewReplicaSetAvailable"))
    );
}

#[tokio::test(start_paused = true)]
async fn paused_deployment_holds_its_rollout_until_resumed() {
    let sim = sim();
    healthy(&sim, json!({})).await;
    spawn_kubelet(sim.store.clone(), Duration::from_secs(1), always);
    edit(&sim, &deploy_key("web"), |d| {
        d["spec"]["paused"] = json!(true);
        d["spec"]["template"]["spec"]["containers"][0]["image"] =
            json!("registry.example.com/web:1.5.0");
    });
    sleep_ms(3000).await;
    assert_eq!(replica_sets(&sim).len(), 1);
    let progressing = get(&sim, &deploy_key("web"))["status"]["conditions"][1].clone();
    assert_eq!(
        (
            progressing["status"].as_str(),
            progressing["reason"].as_str(),
            progressing["message"].as_str()
        ),
        (
            Some("Unknown"),
            Some("DeploymentPaused"),
            Some("Deployment is paused")
        )
    );
    assert_eq!(
        get(&sim, &deploy_key("web"))["status"]["observedGeneration"],
        2
    );

    edit(&sim, &deploy_key("web"), |d| {
        d["spec"]["paused"] = json!(false);
    });
    sleep_ms(20_000).await;
    assert_eq!(replica_sets(&sim).len(), 2);
    let status = get(&sim, &deploy_key("web"))["status"].clone();
    assert_eq!(
        (
            status["updatedReplicas"].clone(),
            status["conditions"][1]["reason"].clone()
        ),
        (json!(3), json!("NewReplicaSetAvailable"))
    );
}

#[tokio::test(start_paused = true)]
async fn old_replica_sets_beyond_the_history_limit_are_deleted() {
    let sim = sim();
    healthy(&sim, json!({"revisionHistoryLimit": 1})).await;
    spawn_kubelet(sim.store.clone(), Duration::from_secs(1), always);
    for version in ["1.5.0", "1.6.0", "1.7.0"] {
        set_image(&sim, &format!("registry.example.com/web:{version}"));
        sleep_ms(20_000).await;
    }
    let revisions: Vec<Value> = replica_sets(&sim)
        .iter()
        .map(|r| r["metadata"]["annotations"]["deployment.kubernetes.io/revision"].clone())
        .collect();
    assert_eq!(revisions, [json!("3"), json!("4")]);
}

#[tokio::test(start_paused = true)]
async fn min_ready_seconds_delays_availability() {
    let sim = sim();
    namespace(&sim, "shop");
    sim.create(deployment(
        "web",
        "registry.example.com/web:1.4.2",
        &json!({"minReadySeconds": 10}),
    ))
    .unwrap();
    sleep_ms(1000).await;
    kubelet_tick(&sim.store, always);
    sleep_ms(5000).await;
    let status = get(&sim, &deploy_key("web"))["status"].clone();
    assert_eq!(
        (
            status["readyReplicas"].clone(),
            status.get("availableReplicas")
        ),
        (json!(3), None)
    );
    assert_eq!(replica_sets(&sim)[0]["spec"]["minReadySeconds"], 10);
    sleep_ms(7000).await;
    let status = get(&sim, &deploy_key("web"))["status"].clone();
    assert_eq!(status["availableReplicas"], 3);
    assert_eq!(
        status["conditions"][0]["lastTransitionTime"],
        "2026-01-01T00:00:11Z"
    );
}
