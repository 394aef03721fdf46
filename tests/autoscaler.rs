//! Autoscaled workloads on kube-sim: a deploy leaves `spec.replicas` to the
//! HorizontalPodAutoscaler, and the count never drops on the way (watched, not sampled).

use crate::support::{config, outcome, run_recorded};
use deploy_action::config::Mode;
use deploy_action::vocab::events::RunEvent;
use deploy_action::vocab::verdict::Verdict;
use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher;
use kube_sim::{Scenario, Sim};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// kube-sim, like a fresh cluster, has no metrics-server: the HPA itself never gets past
/// ScalingActive=False and times out; these tests are about its Deployment.
const TIMEOUT: Duration = Duration::from_secs(30);

fn release(replicas: u32, min: u32) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
        - name: web
          image: registry.local/shop/web:1
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: {min}
  maxReplicas: 10
"
    )
}

/// Every `spec.replicas` the Deployment `web` has had, in order, from a watch.
fn replicas_history(sim: &Sim) -> Arc<Mutex<Vec<i64>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let api: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(sim.client(), "default");
    let out = seen.clone();
    tokio::spawn(async move {
        let mut events =
            watcher(api, watcher::Config::default().fields("metadata.name=web")).boxed();
        while let Some(Ok(event)) = events.next().await {
            if let watcher::Event::Apply(d) | watcher::Event::InitApply(d) = event {
                let n = d.spec.and_then(|s| s.replicas).unwrap_or(-1);
                let mut v = out.lock().unwrap();
                if v.last() != Some(&i64::from(n)) {
                    v.push(i64::from(n));
                }
            }
        }
    });
    seen
}

fn live_replicas(sim: &Sim) -> i64 {
    sim.get("apps/v1", "Deployment", "default", "web").unwrap()["spec"]["replicas"]
        .as_i64()
        .unwrap()
}

async fn deploy(sim: &Sim, yaml: &str) -> (deploy_action::vocab::outcome::RunOutcome, Vec<String>) {
    let (run, recorder) = run_recorded(sim, "web.yaml", yaml, config(Mode::Deploy, TIMEOUT))
        .await
        .unwrap();
    let warnings = recorder
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            RunEvent::Warning(w) => Some(w.clone()),
            _ => None,
        })
        .collect();
    (run, warnings)
}

#[tokio::test(start_paused = true)]
async fn two_deploys_in_a_row_keep_the_autoscalers_count_throughout() {
    let sim = Sim::start(Scenario::default());
    let history = replicas_history(&sim);
    let (first, _) = deploy(&sim, &release(2, 4)).await;
    assert_eq!(
        outcome(&first, "Deployment", "web").verdict,
        Verdict::Succeeded
    );
    // The HPA controller syncs every 15 s and raises the count to minReplicas.
    tokio::time::sleep(Duration::from_secs(40)).await;
    assert_eq!(live_replicas(&sim), 4);
    for _ in 0..2 {
        let (run, warnings) = deploy(&sim, &release(2, 4)).await;
        assert_eq!(
            warnings,
            [
                "web.yaml:6: Deployment/web sets spec.replicas: 2, but HorizontalPodAutoscaler/web sizes it: the count is left to the autoscaler (now 4)"
            ]
        );
        let web = outcome(&run, "Deployment", "web");
        assert_eq!(web.verdict, Verdict::Succeeded);
        assert!(web.message.contains("4/4"), "{}", web.message);
        // The same warning in the summary and as a check-run annotation, at its line.
        let notices: Vec<(usize, &str)> = run
            .notices
            .iter()
            .map(|n| (n.source.line, n.message.as_str()))
            .collect();
        assert_eq!(
            notices,
            [(
                6,
                "Deployment/web sets spec.replicas: 2, but HorizontalPodAutoscaler/web sizes it: the count is left to the autoscaler (now 4)"
            )]
        );
    }
    // The count is the autoscaler's, and deploy-action's applied configuration no longer
    // holds it: applying that configuration again without force meets no conflict.
    let live = sim.get("apps/v1", "Deployment", "default", "web").unwrap();
    let owners: Vec<(&str, &str)> = live["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.pointer("/fieldsV1/f:spec/f:replicas").is_some())
        .map(|e| {
            (
                e["manager"].as_str().unwrap(),
                e["subresource"].as_str().unwrap_or(""),
            )
        })
        .collect();
    // (kube-sim names each controller its own manager, where a real cluster says
    // kube-controller-manager for all of them.)
    assert_eq!(owners, [("horizontal-pod-autoscaler", "scale")]);
    let mut applied: serde_json::Value =
        serde_yaml_ng::from_str(release(2, 4).split("---").next().unwrap()).unwrap();
    applied["spec"].as_object_mut().unwrap().remove("replicas");
    let api: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(sim.client(), "default");
    api.patch(
        "web",
        &PatchParams::apply("deploy-action"),
        &Patch::Apply(&applied),
    )
    .await
    .expect("no conflict on replicas");
    // The plan says so, and shows no change to the count.
    let (plan, _) = run_recorded(
        &sim,
        "web.yaml",
        &release(2, 4),
        config(Mode::DryRun, TIMEOUT),
    )
    .await
    .unwrap();
    let web = outcome(&plan, "Deployment", "web");
    assert_eq!(
        web.message,
        "server-side dry run passed; replicas left to the autoscaler (HorizontalPodAutoscaler/web)"
    );
    assert_eq!(
        web.change,
        Some(deploy_action::vocab::outcome::Change::Unchanged),
        "{web:#?}"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Created at the manifest's 2, raised to 4 by the HPA, and never lower again.
    assert_eq!(*history.lock().unwrap(), [2, 4]);
}

#[tokio::test(start_paused = true)]
async fn a_count_only_deploy_action_applied_is_handed_over_not_dropped_to_one() {
    // The HPA agrees with the manifest (minReplicas 2), so it never writes the count and
    // deploy-action stays its only owner: leaving it out would remove it (default 1)
    // unless another manager takes it on first.
    let sim = Sim::start(Scenario::default());
    let history = replicas_history(&sim);
    let (first, _) = deploy(&sim, &release(2, 2)).await;
    assert_eq!(
        outcome(&first, "Deployment", "web").verdict,
        Verdict::Succeeded
    );
    tokio::time::sleep(Duration::from_secs(40)).await;
    let (run, _) = deploy(&sim, &release(2, 2)).await;
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(web.verdict, Verdict::Succeeded, "{web:#?}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(*history.lock().unwrap(), [2]);
    let live = sim.get("apps/v1", "Deployment", "default", "web").unwrap();
    let owners: Vec<&str> = live["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e.pointer("/fieldsV1/f:spec/f:replicas").is_some())
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(owners, ["deploy-action-handover"]);
}

#[tokio::test(start_paused = true)]
async fn kube_sim_removes_a_count_its_only_applier_stops_sending_as_the_api_server_does() {
    // What the hand-over guards against, shown on kube-sim itself: the proof above means
    // nothing unless the simulated API server drops the field.
    let sim = Sim::start(Scenario::default());
    let api: Api<k8s_openapi::api::apps::v1::Deployment> = Api::namespaced(sim.client(), "default");
    let mut body = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "registry.local/shop/web:1"}]}}}});
    let params = PatchParams::apply("deploy-action").force();
    api.patch("web", &params, &Patch::Apply(&body))
        .await
        .unwrap();
    assert_eq!(live_replicas(&sim), 3);
    body["spec"].as_object_mut().unwrap().remove("replicas");
    api.patch("web", &params, &Patch::Apply(&body))
        .await
        .unwrap();
    assert_eq!(live_replicas(&sim), 1);
}
