//! Pods the API server refuses: the ReplicaSet and its Deployment report ReplicaFailure
//! and recover once the cause is gone.

use super::harness::*;
use crate::store::ObjectKey;
use serde_json::json;

#[tokio::test(start_paused = true)]
async fn missing_service_account_is_reported_as_replica_failure_until_created() {
    let sim = sim();
    namespace(&sim, "shop");
    let mut d = deployment("web", "registry.example.com/web:1.4.2", &json!({}));
    d["spec"]["template"]["spec"]["serviceAccountName"] = json!("deployer");
    sim.create(d).unwrap();
    sleep_ms(3000).await;

    let rs = &replica_sets(&sim)[0];
    let rs_name = rs["metadata"]["name"].as_str().unwrap().to_owned();
    let message = format!(
        "pods \"{rs_name}-\" is forbidden: error looking up service account shop/deployer: serviceaccount \"deployer\" not found"
    );
    assert!(pods(&sim).is_empty());
    assert_eq!(
        rs["status"]["conditions"],
        json!([{"type": "ReplicaFailure", "status": "True",
        "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "FailedCreate", "message": message}])
    );
    assert_eq!(
        events(&sim, "ReplicaSet"),
        [format!("FailedCreate: Error creating: {message}")]
    );
    let failed = sim
        .store
        .list("", "events", Some("shop"))
        .0
        .into_iter()
        .find(|e| e["reason"] == "FailedCreate")
        .unwrap();
    assert!(
        failed["count"].as_i64().unwrap() > 5,
        "retries with backoff: {}",
        failed["count"]
    );
    let status = get(&sim, &deploy_key("web"))["status"].clone();
    let failure = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "ReplicaFailure")
        .unwrap()
        .clone();
    assert_eq!(
        failure,
        json!({"type": "ReplicaFailure", "status": "True", "lastUpdateTime": "2026-01-01T00:00:00Z",
        "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "FailedCreate", "message": message})
    );

    sim.store
        .create(&ObjectKey::new("", "serviceaccounts", "shop", "deployer"),
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "deployer", "namespace": "shop"}}))
        .unwrap();
    sleep_ms(12_000).await;
    assert_eq!(pods(&sim).len(), 3);
    assert_eq!(replica_sets(&sim)[0]["status"].get("conditions"), None);
    let status = get(&sim, &deploy_key("web"))["status"].clone();
    assert!(
        status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["type"] != "ReplicaFailure")
    );
}

#[tokio::test(start_paused = true)]
async fn replica_set_replaces_deleted_pods_and_removes_surplus() {
    let sim = sim();
    namespace(&sim, "shop");
    let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "cache", "namespace": "shop", "labels": {"app": "cache"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "cache"}},
                 "template": {"metadata": {"labels": {"app": "cache"}},
                              "spec": {"containers": [{"name": "redis", "image": "redis:7.4"}]}}}});
    sim.create(rs).unwrap();
    sleep_ms(1000).await;
    kubelet_tick(&sim.store, always);
    sleep_ms(1000).await;
    let first: Vec<String> = pods(&sim)
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(first.len(), 2);
    let victim = ObjectKey::new("", "pods", "shop", &first[0]);
    sim.store.remove_now(&victim);
    sleep_ms(1000).await;
    let now: Vec<String> = pods(&sim)
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(now.len(), 2);
    assert!(
        !now.contains(&first[0]),
        "a new name, never the deleted one"
    );

    let key = ObjectKey::new("apps", "replicasets", "shop", "cache");
    edit(&sim, &key, |r| r["spec"]["replicas"] = json!(1));
    sleep_ms(1000).await;
    let left: Vec<String> = pods(&sim)
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    let fresh = now.iter().find(|n| !first.contains(n)).unwrap();
    // The pod that is not running goes first; never scheduled, it is removed at once.
    assert_eq!(left, &first[1..]);
    assert_eq!(
        get(&sim, &key)["status"],
        json!({"replicas": 1, "fullyLabeledReplicas": 1, "readyReplicas": 1,
        "availableReplicas": 1, "observedGeneration": 2})
    );
    let evs = events(&sim, "ReplicaSet");
    assert_eq!(
        evs.last().unwrap(),
        &format!("SuccessfulDelete: Deleted pod: {fresh}")
    );
    assert_eq!(
        evs.iter()
            .filter(|e| e.starts_with("SuccessfulCreate"))
            .count(),
        3
    );
}
