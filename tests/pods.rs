//! Bare pods applied by name against kube-sim: a pod that restarts Always is done when
//! ready, a task when it completes, and a pod being deleted has failed.

use crate::support::{config, outcome, run_with, run_yaml};
use deploy_action::config::Mode;
use deploy_action::vocab::verdict::{Reason, Verdict};
use kube_sim::scenario::ImageBehaviour;
use kube_sim::store::DeleteOptions;
use kube_sim::{Scenario, Sim};
use serde_json::json;
use std::time::Duration;

const MINUTES_5: Duration = Duration::from_secs(300);

fn pod(name: &str, restart_policy: Option<&str>) -> String {
    let policy = restart_policy.map_or(String::new(), |p| format!("  restartPolicy: {p}\n"));
    format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
{policy}  containers:
    - name: {name}
      image: registry.local/shop/{name}:1
"
    )
}

#[tokio::test(start_paused = true)]
async fn a_bare_pod_with_the_default_restart_policy_is_done_when_ready() {
    let sim = Sim::start(Scenario::default());
    let run = run_yaml(
        &sim,
        "pod.yaml",
        &pod("proxy", None),
        Mode::Deploy,
        MINUTES_5,
    )
    .await
    .unwrap();
    let proxy = outcome(&run, "Pod", "proxy");
    assert_eq!(proxy.verdict, Verdict::Succeeded, "{proxy:#?}");
    assert!(proxy.seconds < 60.0, "took {} s", proxy.seconds);
}

#[tokio::test(start_paused = true)]
async fn a_pod_being_deleted_fails_at_once() {
    let sim = Sim::start(Scenario::default());
    let existing = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "proxy", "namespace": "default", "finalizers": ["example.com/drain"]},
        "spec": {"containers": [{"name": "proxy", "image": "registry.local/shop/proxy:1"}]}});
    let key = sim.key_of(&existing).unwrap();
    sim.create(existing).unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    sim.store
        .delete(&key, DeleteOptions::default())
        .expect("deleting the pod");
    let run = run_yaml(
        &sim,
        "pod.yaml",
        &pod("proxy", None),
        Mode::Deploy,
        MINUTES_5,
    )
    .await
    .unwrap();
    let proxy = outcome(&run, "Pod", "proxy");
    assert_eq!(proxy.reason, Some(Reason::PodFailed), "{proxy:#?}");
    assert!(
        proxy.message.contains("being deleted since"),
        "{}",
        proxy.message
    );
    assert!(proxy.seconds < 10.0, "took {} s", proxy.seconds);
}

/// A one-shot pod (restartPolicy Never) whose container exits `code` a second after it
/// starts, deployed with the CLI's default 10 s stability window.
async fn one_shot(code: i32) -> deploy_action::vocab::outcome::Outcome {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/migrate:1",
                ImageBehaviour::crashing(
                    code,
                    false,
                    Duration::from_secs(1),
                    &["applying migration 0042", "done"],
                ),
            )
            .build(),
    );
    let config = deploy_action::config::Config {
        settle: Duration::from_secs(10),
        ..config(Mode::Deploy, MINUTES_5)
    };
    let run = run_with(&sim, "migrate.yaml", &pod("migrate", Some("Never")), config)
        .await
        .unwrap();
    outcome(&run, "Pod", "migrate").clone()
}

#[tokio::test(start_paused = true)]
async fn a_one_shot_pod_that_exits_0_succeeds_through_the_stability_window() {
    let migrate = one_shot(0).await;
    assert_eq!(
        (migrate.verdict, migrate.reason),
        (Verdict::Succeeded, None),
        "{migrate:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_one_shot_pod_that_exits_1_fails_with_its_exit_code_and_logs() {
    let migrate = one_shot(1).await;
    assert_eq!(migrate.reason, Some(Reason::PodFailed), "{migrate:#?}");
    assert_eq!(
        migrate.message,
        "container migrate exited with code 1 (Error)"
    );
    let logs = migrate
        .logs
        .as_ref()
        .expect("the log tail of the container that exited");
    assert_eq!(logs.lines, ["applying migration 0042", "done"]);
    assert!(!logs.previous);
}

/// The Event watch asks the API server to leave out the Events whose news the pod's own
/// status carries (`Scheduled`, `Created`, `Started`, `SuccessfulCreate`), and keeps the
/// ones the pull rules read.
#[tokio::test(start_paused = true)]
async fn the_event_watch_leaves_out_what_the_pods_status_already_says() {
    use deploy_action::cluster::watch::{self, Seen, WatchScope};
    use deploy_action::rules::kept::UNWATCHED_EVENT_REASONS;
    use k8s_openapi::api::core::v1::Event;
    use kube::api::{Api, ApiResource, ListParams};

    let sim = Sim::start(Scenario::default());
    let manifest: serde_json::Value = serde_yaml_ng::from_str(&crate::support::deployment(
        "web",
        "registry.local/shop/web:1",
        "",
    ))
    .unwrap();
    sim.create(manifest).unwrap();
    tokio::time::sleep(Duration::from_secs(30)).await;
    let reasons = |events: &mut dyn Iterator<Item = String>| {
        let mut r: Vec<String> = events.collect();
        r.sort();
        r.dedup();
        r
    };
    // The simulated kubelet and controllers did record them: the test can fail.
    let all = Api::<Event>::namespaced(sim.client(), "default")
        .list(&ListParams::default())
        .await
        .unwrap();
    let recorded = reasons(&mut all.items.into_iter().filter_map(|e| e.reason));
    for r in UNWATCHED_EVENT_REASONS.iter().chain(&["Pulled"]) {
        assert!(recorded.iter().any(|x| x == r), "{r} in {recorded:?}");
    }

    let scope = WatchScope {
        resource: ApiResource::erase::<Event>(&()),
        namespace: Some("default".to_owned()),
        labels: None,
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let handles = watch::spawn(&sim.client(), &[scope], &tx, |text, _| Some(text));
    let mut seen = Vec::new();
    while let Some(s) = rx.recv().await {
        match s {
            Seen::Listed { object, .. } => seen.push(object),
            Seen::ListDone { .. } => break,
            _ => {}
        }
    }
    for h in &handles {
        h.abort();
    }
    let watched = reasons(&mut seen.iter().map(|text| {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["reason"].as_str().unwrap_or_default().to_owned()
    }));
    assert!(watched.iter().any(|r| r == "Pulled"), "{watched:?}");
    for r in UNWATCHED_EVENT_REASONS {
        assert!(!watched.iter().any(|x| x == r), "{r} watched: {watched:?}");
    }
}
