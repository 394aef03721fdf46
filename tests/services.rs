//! Services against kube-sim, judged from the cluster's EndpointSlices rather than from
//! what the manifests contain: backends applied elsewhere count, a workload scaled to zero
//! on purpose excuses the lack of endpoints, and a selector matching nothing waits.

use crate::support::{outcome, run_yaml};
use deploy_action::config::Mode;
use deploy_action::vocab::verdict::{Reason, Verdict};
use kube_sim::{Scenario, Sim};
use serde_json::{Value, json};
use std::time::Duration;

const SERVICE: &str = "apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - {port: 80, targetPort: 8080}
";

fn deployment(replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.local/shop/web:1",
                    "ports": [{"containerPort": 8080}]}]}}}})
}

/// A cluster where `web` was deployed by someone else, with `replicas`.
async fn cluster_with_web(replicas: i64) -> Sim {
    let sim = Sim::start(Scenario::default());
    sim.create(deployment(replicas)).unwrap();
    tokio::time::sleep(Duration::from_secs(20)).await;
    sim
}

#[tokio::test(start_paused = true)]
async fn a_service_in_front_of_pods_deployed_elsewhere_succeeds() {
    let sim = cluster_with_web(2).await;
    let run = run_yaml(
        &sim,
        "svc.yaml",
        SERVICE,
        Mode::Deploy,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    let web = outcome(&run, "Service", "web");
    assert_eq!(web.verdict, Verdict::Succeeded, "{web:#?}");
    assert_eq!(web.message, "2 ready endpoints");
}

#[tokio::test(start_paused = true)]
async fn a_service_in_front_of_a_deployment_scaled_to_zero_elsewhere_succeeds() {
    let sim = cluster_with_web(0).await;
    let run = run_yaml(
        &sim,
        "svc.yaml",
        SERVICE,
        Mode::Deploy,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    let web = outcome(&run, "Service", "web");
    assert_eq!(web.verdict, Verdict::Succeeded, "{web:#?}");
    assert_eq!(
        web.message,
        "no endpoints wanted: selects Deployment/web, scaled to 0 replicas"
    );
    assert!(web.seconds < 10.0, "took {} s", web.seconds);
}

#[tokio::test(start_paused = true)]
async fn a_service_selecting_nothing_times_out_saying_so() {
    let sim = Sim::start(Scenario::default());
    let run = run_yaml(
        &sim,
        "svc.yaml",
        SERVICE,
        Mode::Deploy,
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    let web = outcome(&run, "Service", "web");
    assert_eq!(
        (web.verdict, web.reason),
        (Verdict::TimedOut, Some(Reason::NotReady)),
        "{web:#?}"
    );
    assert_eq!(
        web.message,
        "selector app=web matches no pods with an address (the EndpointSlices are empty)"
    );
}

#[tokio::test(start_paused = true)]
async fn a_service_shipped_with_its_deployment_waits_for_the_endpoints() {
    let sim = Sim::start(Scenario::default());
    let yaml = format!(
        "{SERVICE}---\n{}",
        serde_yaml_ng::to_string(&deployment(2)).unwrap()
    );
    let run = run_yaml(
        &sim,
        "web.yaml",
        &yaml,
        Mode::Deploy,
        Duration::from_secs(120),
    )
    .await
    .unwrap();
    let web = outcome(&run, "Service", "web");
    assert_eq!(web.verdict, Verdict::Succeeded, "{web:#?}");
    assert_eq!(web.message, "2 ready endpoints");
    let dep = outcome(&run, "Deployment", "web");
    assert_eq!(dep.verdict, Verdict::Succeeded, "{dep:#?}");
}
