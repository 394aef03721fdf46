//! PodDisruptionBudget and HorizontalPodAutoscaler status.

use crate::Sim;
use crate::controllers::workloads::testkit::{
    event_count, event_lines, eventually, pod, run_ready, set_pod, sim, wait,
};
use serde_json::{Value, json};

fn web_sts() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": 3, "serviceName": "web", "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
}

fn pdb(name: &str, budget: &Value, app: &str) -> Value {
    let mut spec = json!({"selector": {"matchLabels": {"app": app}}});
    spec.as_object_mut()
        .unwrap()
        .extend(budget.as_object().unwrap().clone());
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "shop"}, "spec": spec})
}

fn pdb_status(sim: &Sim, name: &str) -> Value {
    let mut s = sim
        .get("policy/v1", "PodDisruptionBudget", "shop", name)
        .expect("pdb")["status"]
        .clone();
    for c in s["conditions"].as_array_mut().into_iter().flatten() {
        c.as_object_mut().unwrap().remove("lastTransitionTime");
    }
    s
}

#[tokio::test(start_paused = true)]
async fn pdb_counts_healthy_pods_against_its_budget() {
    let sim = sim(3);
    sim.create(web_sts()).unwrap();
    sim.create(pdb("web-min", &json!({"minAvailable": 2}), "web"))
        .unwrap();
    sim.create(pdb("web-max", &json!({"maxUnavailable": "34%"}), "web"))
        .unwrap();
    sim.create(pdb("orphan", &json!({"minAvailable": 1}), "nothing"))
        .unwrap();
    for (i, name) in ["web-0", "web-1", "web-2"].iter().enumerate() {
        eventually(name, || pod(&sim, "shop", name)).await;
        set_pod(
            &sim,
            "shop",
            name,
            "Running",
            i < 2,
            "sim-node-1",
            &format!("10.244.1.{}", 20 + i),
        );
    }
    wait(1.0).await;
    let insufficient = |allowed: i64, healthy: i64, desired: i64, reason: &str, status: &str| {
        json!({
        "observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": desired,
        "expectedPods": 3, "conditions": [{"type": "DisruptionAllowed", "status": status, "observedGeneration": 1,
            "reason": reason, "message": ""}]})
    };
    assert_eq!(
        pdb_status(&sim, "web-min"),
        insufficient(0, 2, 2, "InsufficientPods", "False")
    );
    // 34% of 3 rounds up to 2 unavailable, so one must stay healthy.
    assert_eq!(
        pdb_status(&sim, "web-max"),
        insufficient(1, 2, 1, "SufficientPods", "True")
    );

    run_ready(&sim, "shop", "web-2", "sim-node-2", "10.244.1.22");
    wait(1.0).await;
    assert_eq!(
        pdb_status(&sim, "web-min"),
        insufficient(1, 3, 2, "SufficientPods", "True")
    );

    let orphan = pdb_status(&sim, "orphan");
    assert_eq!(
        (
            orphan["expectedPods"].as_i64(),
            orphan["disruptionsAllowed"].as_i64()
        ),
        (Some(0), Some(0))
    );
    assert_eq!(orphan["conditions"][0]["reason"], "InsufficientPods");
    assert_eq!(
        event_lines(&sim, "shop", "orphan")[0],
        "Normal NoPods: No matching pods found"
    );
}

fn hpa(target: &str, min: i64) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": target, "namespace": "shop"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": min, "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]}})
}

fn hpa_status(sim: &Sim, name: &str) -> Value {
    sim.get("autoscaling/v2", "HorizontalPodAutoscaler", "shop", name)
        .expect("hpa")["status"]
        .clone()
}

const METRICS_ERROR: &str = "failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)";

#[tokio::test(start_paused = true)]
async fn hpa_without_metrics_server_scales_only_to_its_bounds() {
    let sim = sim(1);
    sim.create(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "api"}},
            "template": {"metadata": {"labels": {"app": "api"}}, "spec": {"containers": [{"name": "api", "image": "api:1"}]}}}})).unwrap();
    sim.create(hpa("api", 2)).unwrap();
    sim.create(hpa("missing", 1)).unwrap();
    wait(1.0).await;
    assert_eq!(
        sim.get("apps/v1", "Deployment", "shop", "api").unwrap()["spec"]["replicas"],
        2
    );
    let s = hpa_status(&sim, "api");
    assert_eq!(
        (s["currentReplicas"].as_i64(), s["desiredReplicas"].as_i64()),
        (Some(1), Some(2))
    );
    assert_eq!(s["conditions"][0]["reason"], "SucceededRescale");
    assert_eq!(
        s["conditions"][0]["message"],
        "the HPA controller was able to update the target scale to 2"
    );
    let hpa_events: Vec<_> = event_lines(&sim, "shop", "api")
        .into_iter()
        .filter(|l| !l.contains("ScalingReplicaSet"))
        .collect();
    assert_eq!(
        hpa_events,
        [
            "Normal SuccessfulRescale: New size: 2; reason: Current number of replicas below Spec.MinReplicas"
        ]
    );

    // The next sync tries the CPU metric, which kind without metrics-server cannot serve.
    wait(30.0).await;
    let s = hpa_status(&sim, "api");
    assert_eq!(
        (s["currentReplicas"].as_i64(), s["desiredReplicas"].as_i64()),
        (Some(2), Some(2))
    );
    assert!(s["currentMetrics"].is_null());
    let conditions: Vec<_> = s["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap(),
                c["status"].as_str().unwrap(),
                c["reason"].as_str().unwrap(),
                c["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        conditions,
        [
            (
                "AbleToScale",
                "True",
                "SucceededGetScale",
                "the HPA controller was able to get the target's current scale"
            ),
            (
                "ScalingActive",
                "False",
                "FailedGetResourceMetric",
                &*format!("the HPA was unable to compute the replica count: {METRICS_ERROR}")
            ),
        ]
    );
    assert_eq!(
        event_count(&sim, "shop", "api", "FailedGetResourceMetric"),
        2,
        "once per 15 s sync"
    );
    assert!(event_lines(&sim, "shop", "api").contains(&format!(
        "Warning FailedComputeMetricsReplicas: invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: {METRICS_ERROR}")));

    let missing = hpa_status(&sim, "missing");
    assert_eq!(missing["conditions"][0]["reason"], "FailedGetScale");
    assert_eq!(
        missing["conditions"][0]["message"],
        "the HPA controller was unable to get the target's current scale: deployments.apps \"missing\" not found"
    );
    assert_eq!(
        event_lines(&sim, "shop", "missing")[0],
        "Warning FailedGetScale: deployments.apps \"missing\" not found"
    );
}
