//! The controllers together with the simulated scheduler and kubelet: nothing is written
//! by the test but the manifests.

use crate::controllers::workloads::testkit::{names, pods, wait};
use crate::scenario::{ImageBehaviour, Readiness};
use crate::{Scenario, Sim};
use serde_json::{Value, json};
use std::time::Duration;

fn status(sim: &Sim, api_version: &str, kind: &str, name: &str) -> Value {
    sim.get(api_version, kind, "shop", name)
        .unwrap_or_else(|| panic!("{kind} {name}"))["status"]
        .clone()
}

fn statefulset(image: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "shop"},
        "spec": {"serviceName": "db", "replicas": 3, "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "postgres", "image": image, "ports": [{"containerPort": 5432, "name": "pg"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}})
}

#[tokio::test(start_paused = true)]
async fn a_statefulset_with_storage_and_a_headless_service_comes_up() {
    let sim = Sim::start(Scenario::builder().nodes(3).build());
    sim.create(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db", "namespace": "shop"},
        "spec": {"clusterIP": "None", "selector": {"app": "db"}, "ports": [{"name": "pg", "port": 5432, "targetPort": "pg"}]}})).unwrap();
    sim.create(statefulset("postgres:16.4")).unwrap();
    wait(30.0).await;
    let s = status(&sim, "apps/v1", "StatefulSet", "db");
    assert_eq!(
        (
            s["readyReplicas"].as_i64(),
            s["availableReplicas"].as_i64(),
            s["currentReplicas"].as_i64()
        ),
        (Some(3), Some(3), Some(3)),
        "{s}"
    );
    for i in 0..3 {
        assert_eq!(
            status(&sim, "v1", "PersistentVolumeClaim", &format!("data-db-{i}"))["phase"],
            "Bound"
        );
    }
    let slices = sim
        .store
        .list("discovery.k8s.io", "endpointslices", Some("shop"))
        .0;
    let endpoints = slices[0]["endpoints"].as_array().expect("endpoints");
    let hosts: Vec<_> = endpoints
        .iter()
        .filter(|e| e["conditions"]["ready"] == true)
        .map(|e| e["hostname"].clone())
        .collect();
    assert_eq!(hosts, [json!("db-0"), json!("db-1"), json!("db-2")]);
}

#[tokio::test(start_paused = true)]
async fn a_crashing_first_replica_holds_back_the_rest() {
    // Crashes 2 s after each start and never passes its readiness probe meanwhile (without
    // a probe it would count as Ready for those 2 s, and db-1 would start, as on a cluster).
    let crash = ImageBehaviour {
        ready: Readiness::Never,
        ..ImageBehaviour::crashing(
            1,
            false,
            Duration::from_secs(2),
            &["FATAL: could not open file \"global/pg_control\""],
        )
    };
    let sim = Sim::start(
        Scenario::builder()
            .nodes(3)
            .image("postgres:broken", crash)
            .build(),
    );
    let mut set = statefulset("postgres:broken");
    set["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] =
        json!({"exec": {"command": ["pg_isready", "-U", "postgres"]}, "periodSeconds": 5});
    sim.create(set).unwrap();
    wait(120.0).await;
    assert_eq!(names(&pods(&sim, "shop")), ["db-0"]);
    let s = status(&sim, "apps/v1", "StatefulSet", "db");
    assert_eq!(
        (s["replicas"].as_i64(), s["readyReplicas"].as_i64()),
        (Some(1), None)
    );
    let db0 = sim.get("v1", "Pod", "shop", "db-0").unwrap();
    assert!(
        db0["status"]["containerStatuses"][0]["restartCount"]
            .as_i64()
            .unwrap()
            >= 2,
        "{db0}"
    );
}

#[tokio::test(start_paused = true)]
async fn jobs_and_daemonsets_run_to_their_verdicts() {
    let done = ImageBehaviour::crashing(0, false, Duration::from_secs(3), &["migrated 12 tables"]);
    let fail = ImageBehaviour::crashing(2, false, Duration::from_secs(1), &["connection refused"]);
    let sim = Sim::start(
        Scenario::builder()
            .nodes(3)
            .image("migrate:ok", done)
            .image("migrate:bad", fail)
            .build(),
    );
    let job = |name: &str, image: &str| {
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "shop"},
        "spec": {"completions": 2, "parallelism": 2, "backoffLimit": 1,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "migrate", "image": image}]}}}})
    };
    sim.create(job("ok", "migrate:ok")).unwrap();
    sim.create(job("bad", "migrate:bad")).unwrap();
    sim.create(json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "shop"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}}})).unwrap();
    wait(60.0).await;
    let types = |s: &Value| {
        s["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["type"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let ok = status(&sim, "batch/v1", "Job", "ok");
    assert_eq!(types(&ok), ["SuccessCriteriaMet", "Complete"], "{ok}");
    assert_eq!(ok["succeeded"], 2);
    let bad = status(&sim, "batch/v1", "Job", "bad");
    assert_eq!(types(&bad), ["FailureTarget", "Failed"], "{bad}");
    assert_eq!(bad["conditions"][1]["reason"], "BackoffLimitExceeded");
    let ds = status(&sim, "apps/v1", "DaemonSet", "agent");
    assert_eq!(
        (
            ds["desiredNumberScheduled"].as_i64(),
            ds["numberReady"].as_i64(),
            ds["numberAvailable"].as_i64()
        ),
        (Some(3), Some(3), Some(3)),
        "{ds}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_milestones_see_a_deployment_roll_out() {
    let sim = Sim::start(Scenario::builder().nodes(2).build());
    sim.create(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "shop/web:1"}]}}}}))
        .unwrap();
    let report = sim.server.milestones.report();
    assert_eq!(report["all_rolled_out_at_ms"], Value::Null, "{report}");
    wait(30.0).await;
    assert_eq!(
        status(&sim, "apps/v1", "Deployment", "web")["availableReplicas"],
        2
    );
    let report = sim.server.milestones.report();
    assert_eq!(
        (&report["deployments"], &report["rolling"]),
        (&json!(1), &json!(0))
    );
    assert!(report["all_rolled_out_at_ms"].is_u64(), "{report}");
    assert_eq!(
        report["first_image_pull_error_at_ms"],
        Value::Null,
        "{report}"
    );
}
