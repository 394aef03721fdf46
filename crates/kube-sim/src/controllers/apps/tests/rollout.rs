//! Rollouts on the simulated cluster: a first rollout with its exact statuses, a rolling
//! update within maxSurge/maxUnavailable, and a rollout stuck past its deadline.

use super::harness::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn first_rollout_reaches_new_replica_set_available() {
    let sim = sim();
    namespace(&sim, "shop");
    sim.create(deployment(
        "web",
        "registry.example.com/web:1.4.2",
        &json!({}),
    ))
    .unwrap();
    let key = deploy_key("web");
    sleep_ms(50).await;
    assert_eq!(
        get(&sim, &key)["status"].get("observedGeneration"),
        None,
        "status lags the create by the controller delay"
    );

    sleep_ms(950).await;
    let rs = rs_name(&sim, "web");
    let d = get(&sim, &key);
    assert_eq!(
        d["metadata"]["annotations"],
        json!({"deployment.kubernetes.io/revision": "1"})
    );
    let t0 = "2026-01-01T00:00:00Z";
    assert_eq!(
        d["status"],
        json!({
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "unavailableReplicas": 3,
        "conditions": [
            {"type": "Available", "status": "False", "lastUpdateTime": t0, "lastTransitionTime": t0,
             "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."},
            {"type": "Progressing", "status": "True", "lastUpdateTime": t0, "lastTransitionTime": t0,
             "reason": "ReplicaSetUpdated", "message": format!("ReplicaSet \"{rs}\" is progressing.")}]})
    );

    let rss = replica_sets(&sim);
    assert_eq!(rss.len(), 1);
    let hash = rs.trim_start_matches("web-");
    assert!(
        hash.len() <= 10 && hash.chars().all(|c| "456789bcdf".contains(c)),
        "{hash}"
    );
    let r = &rss[0];
    assert_eq!(r["metadata"]["name"], rs.as_str());
    assert_eq!(
        r["metadata"]["labels"],
        json!({"app": "web", "pod-template-hash": hash})
    );
    assert_eq!(
        r["metadata"]["annotations"],
        json!({"deployment.kubernetes.io/desired-replicas": "3",
        "deployment.kubernetes.io/max-replicas": "4", "deployment.kubernetes.io/revision": "1"})
    );
    assert_eq!(
        r["metadata"]["ownerReferences"],
        json!([{"apiVersion": "apps/v1", "kind": "Deployment",
        "name": "web", "uid": d["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}])
    );
    assert_eq!(
        r["spec"]["selector"],
        json!({"matchLabels": {"app": "web", "pod-template-hash": hash}})
    );
    assert_eq!(
        r["spec"]["template"]["metadata"]["labels"],
        json!({"app": "web", "pod-template-hash": hash})
    );
    assert_eq!(
        r["status"],
        json!({"replicas": 3, "fullyLabeledReplicas": 3, "observedGeneration": 1})
    );

    let pods = pods(&sim);
    assert_eq!(pods.len(), 3);
    for p in &pods {
        assert_eq!(p["metadata"]["generateName"], format!("{rs}-"));
        assert_eq!(
            p["metadata"]["labels"],
            json!({"app": "web", "pod-template-hash": hash})
        );
        assert_eq!(p["metadata"]["ownerReferences"][0]["name"], rs.as_str());
    }

    sleep_ms(1000).await;
    kubelet_tick(&sim.store, always);
    sleep_ms(1000).await;
    let t2 = "2026-01-01T00:00:02Z";
    assert_eq!(
        get(&sim, &key)["status"],
        json!({
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
        "conditions": [
            {"type": "Available", "status": "True", "lastUpdateTime": t2, "lastTransitionTime": t2,
             "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
            {"type": "Progressing", "status": "True", "lastUpdateTime": t2, "lastTransitionTime": t0,
             "reason": "NewReplicaSetAvailable", "message": format!("ReplicaSet \"{rs}\" has successfully progressed.")}]})
    );
    assert_eq!(
        events(&sim, "Deployment"),
        [format!(
            "ScalingReplicaSet: Scaled up replica set {rs} from 0 to 3"
        )]
    );
    let mut created: Vec<String> = pods
        .iter()
        .map(|p| {
            format!(
                "SuccessfulCreate: Created pod: {}",
                p["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    let mut seen = events(&sim, "ReplicaSet");
    created.sort();
    seen.sort();
    assert_eq!(seen, created);
}

#[tokio::test(start_paused = true)]
async fn template_change_rolls_from_revision_one_to_two_within_surge() {
    let sim = sim();
    healthy(&sim, json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}})).await;
    let old = rs_name(&sim, "web");
    spawn_kubelet(sim.store.clone(), Duration::from_secs(1), always);
    set_image(&sim, "registry.example.com/web:1.5.0");
    let new = rs_name(&sim, "web");
    sleep_ms(20_000).await;

    assert_eq!(
        events(&sim, "Deployment"),
        [
            format!("ScalingReplicaSet: Scaled up replica set {old} from 0 to 3"),
            format!("ScalingReplicaSet: Scaled up replica set {new} from 0 to 1"),
            format!("ScalingReplicaSet: Scaled down replica set {old} from 3 to 2"),
            format!("ScalingReplicaSet: Scaled up replica set {new} from 1 to 2"),
            format!("ScalingReplicaSet: Scaled down replica set {old} from 2 to 1"),
            format!("ScalingReplicaSet: Scaled up replica set {new} from 2 to 3"),
            format!("ScalingReplicaSet: Scaled down replica set {old} from 1 to 0"),
        ]
    );
    let rss = replica_sets(&sim);
    assert_eq!(rss.len(), 2);
    assert_eq!(
        (
            rss[0]["metadata"]["name"].as_str(),
            rss[1]["metadata"]["name"].as_str()
        ),
        (Some(old.as_str()), Some(new.as_str()))
    );
    assert_eq!(rss[0]["spec"]["replicas"], 0);
    assert_eq!(
        rss[0]["status"],
        json!({"replicas": 0, "observedGeneration": 4})
    );
    assert_eq!(
        rss[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    assert_eq!(
        rss[1]["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    let d = get(&sim, &deploy_key("web"));
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    assert_eq!(d["metadata"]["generation"], 2);
    let status = &d["status"];
    assert_eq!(
        (
            status["observedGeneration"].clone(),
            status["replicas"].clone(),
            status["updatedReplicas"].clone(),
            status["availableReplicas"].clone(),
            status.get("unavailableReplicas")
        ),
        (json!(2), json!(3), json!(3), json!(3), None)
    );
    assert_eq!(status["conditions"][1]["reason"], "NewReplicaSetAvailable");
    assert_eq!(
        status["conditions"][1]["message"],
        format!("ReplicaSet \"{new}\" has successfully progressed.")
    );
    assert_eq!(
        status["conditions"][1]["lastTransitionTime"],
        "2026-01-01T00:00:00Z"
    );
    assert_eq!(
        status["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:01Z",
        "never unavailable"
    );
    assert!(pods(&sim).iter().all(|p| p["metadata"]["labels"]["pod-template-hash"] == new.trim_start_matches("web-")));
}

#[tokio::test(start_paused = true)]
async fn stuck_rollout_exceeds_its_progress_deadline_while_available() {
    let sim = sim();
    healthy(&sim, json!({"progressDeadlineSeconds": 30})).await;
    spawn_kubelet(sim.store.clone(), Duration::from_secs(1), unless_broken);
    sleep_ms(8000).await;
    set_image(&sim, "registry.example.com/web:broken");
    let new = rs_name(&sim, "web");
    let progressing =
        |sim: &crate::Sim| get(sim, &deploy_key("web"))["status"]["conditions"][1].clone();

    sleep_ms(29_000).await;
    assert_eq!(
        progressing(&sim)["reason"],
        "ReplicaSetUpdated",
        "39s: within the deadline"
    );
    assert_eq!(progressing(&sim)["lastUpdateTime"], "2026-01-01T00:00:10Z");
    sleep_ms(6000).await;
    let d = get(&sim, &deploy_key("web"));
    assert_eq!(
        d["status"],
        json!({
        "observedGeneration": 2, "replicas": 4, "updatedReplicas": 1, "readyReplicas": 3, "availableReplicas": 3,
        "unavailableReplicas": 1,
        "conditions": [
            {"type": "Available", "status": "True", "lastUpdateTime": "2026-01-01T00:00:01Z",
             "lastTransitionTime": "2026-01-01T00:00:01Z", "reason": "MinimumReplicasAvailable",
             "message": "Deployment has minimum availability."},
            {"type": "Progressing", "status": "False", "lastUpdateTime": "2026-01-01T00:00:41Z",
             "lastTransitionTime": "2026-01-01T00:00:41Z", "reason": "ProgressDeadlineExceeded",
             "message": format!("ReplicaSet \"{new}\" has timed out progressing.")}]})
    );
    sleep_ms(60_000).await;
    assert_eq!(
        get(&sim, &deploy_key("web"))["status"],
        d["status"],
        "a timed-out rollout stays reported"
    );
}
