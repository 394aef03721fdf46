//! Image pulls end to end on kube-sim: certain failures in seconds, slow or flaky
//! registries never called failures, and the registry's word weighed against the node's.

use crate::support::{config, outcome, run_with, run_yaml};
use deploy_action::cli::Preflight;
use deploy_action::config::Mode;
use deploy_action::vocab::verdict::{Reason, RunResult, Verdict};
use kube_sim::scenario::{ImageBehaviour, PullBehaviour};
use kube_sim::{Scenario, Sim};
use std::time::Duration;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

const MINUTES_5: Duration = Duration::from_secs(300);

fn deployment(image: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
        - name: web
          image: {image}
"
    )
}

fn scenario(version: &str, image: &str, behaviour: ImageBehaviour) -> Scenario {
    Scenario::builder()
        .kubernetes_version(version)
        .image(image, behaviour)
        .build()
}

#[tokio::test(start_paused = true)]
async fn a_missing_image_fails_in_seconds_at_its_image_line() {
    let image = "registry.local/shop/web:missing";
    let sim = Sim::start(scenario("1.33", image, ImageBehaviour::not_found()));
    let run = run_yaml(
        &sim,
        "k8s/web.yaml",
        &deployment(image),
        Mode::Deploy,
        MINUTES_5,
    )
    .await
    .unwrap();
    assert_eq!(run.result, RunResult::Failure);
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(web.reason, Some(Reason::ImageNotFound), "{web:#?}");
    assert!(web.seconds < 10.0, "a missing image took {} s", web.seconds);
    assert_eq!(
        web.annotation_source.as_ref().map(|s| s.line),
        Some(15),
        "points at the image: line"
    );
    assert_eq!(
        web.container.as_ref().and_then(|c| c.image.as_deref()),
        Some(image)
    );
}

/// First seen during back-off: on 1.31 the pod's message is bare, so the kubelet's events
/// must carry the cause.
async fn first_seen_in_backoff(version: &str) {
    let image = "registry.local/shop/web:missing";
    let sim = Sim::start(scenario(version, image, ImageBehaviour::not_found()));
    let yaml = deployment(image);
    let manifest: serde_json::Value = serde_yaml_ng::from_str(&yaml).unwrap();
    sim.create(manifest).unwrap();
    tokio::time::sleep(Duration::from_secs(15)).await;
    let (pods, _) = sim.store.list("", "pods", Some("default"));
    let waiting: Vec<_> = pods
        .iter()
        .filter_map(|p| p.pointer("/status/containerStatuses/0/state/waiting/reason"))
        .collect();
    assert!(
        waiting.iter().all(|r| *r == "ImagePullBackOff"),
        "pods not in back-off yet: {waiting:?}"
    );
    let run = run_yaml(&sim, "k8s/web.yaml", &yaml, Mode::Watch, MINUTES_5)
        .await
        .unwrap();
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        web.reason,
        Some(Reason::ImageNotFound),
        "{version}: {web:#?}"
    );
    assert!(
        web.seconds < 5.0,
        "{version}: took {} s after the watch began",
        web.seconds
    );
}

#[tokio::test(start_paused = true)]
async fn first_seen_in_backoff_on_1_31_the_events_decide() {
    first_seen_in_backoff("1.31").await;
}

#[tokio::test(start_paused = true)]
async fn first_seen_in_backoff_on_1_33_the_message_decides() {
    first_seen_in_backoff("1.33").await;
}

#[tokio::test(start_paused = true)]
async fn a_flaky_registry_that_recovers_is_no_failure() {
    let image = "registry.local/shop/api:flaky";
    let behaviour =
        ImageBehaviour::flaky(&["429 Too Many Requests", "503"], Duration::from_secs(1));
    let sim = Sim::start(scenario("1.33", image, behaviour));
    let run = run_yaml(
        &sim,
        "api.yaml",
        &deployment(image),
        Mode::Deploy,
        MINUTES_5,
    )
    .await
    .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
}

#[tokio::test(start_paused = true)]
async fn transient_errors_then_a_slow_pull_time_out_as_registry_slow() {
    let image = "registry.local/shop/worker:7";
    let behaviour = ImageBehaviour::flaky(&["429", "503", "timeout"], Duration::from_secs(600));
    let sim = Sim::start(scenario("1.33", image, behaviour));
    let run = run_yaml(
        &sim,
        "worker.yaml",
        &deployment(image),
        Mode::Deploy,
        Duration::from_secs(120),
    )
    .await
    .unwrap();
    assert_eq!(run.result, RunResult::TimedOut);
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        (web.verdict, web.reason),
        (Verdict::TimedOut, Some(Reason::RegistrySlow)),
        "{web:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn unauthorized_fails_after_two_attempts() {
    let image = "registry.local/shop/web:private";
    let sim = Sim::start(scenario("1.33", image, ImageBehaviour::unauthorized()));
    let run = run_yaml(
        &sim,
        "web.yaml",
        &deployment(image),
        Mode::Deploy,
        MINUTES_5,
    )
    .await
    .unwrap();
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(web.reason, Some(Reason::ImageUnauthorized), "{web:#?}");
    assert!(
        (5.0..60.0).contains(&web.seconds),
        "decided after {} s: needs a second attempt, not a long wait",
        web.seconds
    );
}

/// A fake registry on loopback answering every manifest HEAD with `status`.
async fn registry(status: u16) -> MockServer {
    let server = MockServer::start().await;
    let body = if status == 404 {
        r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#
    } else {
        ""
    };
    Mock::given(method("HEAD"))
        .and(path_regex("^/v2/.+/manifests/.+$"))
        .respond_with(ResponseTemplate::new(status).insert_header(
            "Docker-Content-Digest",
            "sha256:0000000000000000000000000000000000000000000000000000000000000001",
        ))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex("^/v2/.+$"))
        .respond_with(
            ResponseTemplate::new(status)
                .set_body_string(body)
                .insert_header("Content-Type", "application/json"),
        )
        .mount(&server)
        .await;
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replication_lag_node_says_not_found_but_the_registry_has_it() {
    let server = registry(200).await;
    let image = format!("{}/shop/web:1", server.address());
    let sim = Sim::start(
        Scenario::builder()
            .image(&image, ImageBehaviour::not_found())
            .controller_delay(Duration::from_millis(20))
            .build(),
    );
    let mut cfg = config(Mode::Deploy, Duration::from_secs(4));
    cfg.image_preflight = Preflight::Auto;
    let run = run_with(&sim, "web.yaml", &deployment(&image), cfg)
        .await
        .unwrap();
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        web.verdict,
        Verdict::TimedOut,
        "the registry has the image: {web:#?}"
    );
    assert!(web.message.contains("replication lag"), "{}", web.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preflight_stops_a_missing_image_before_anything_is_applied() {
    let server = registry(404).await;
    let image = format!("{}/shop/web:never-pushed", server.address());
    let sim = Sim::start(Scenario::default());
    let mut cfg = config(Mode::Deploy, MINUTES_5);
    cfg.image_preflight = Preflight::Auto;
    let yaml = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg}}\n---\n{}",
        deployment(&image)
    );
    let run = run_with(&sim, "web.yaml", &yaml, cfg).await.unwrap();
    assert_eq!(run.result, RunResult::Failure);
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(web.reason, Some(Reason::ImageNotFound));
    assert_eq!(web.annotation_source.as_ref().map(|s| s.line), Some(19));
    assert!(
        sim.get("v1", "ConfigMap", "default", "cfg").is_none(),
        "the preflight let something through"
    );
    assert!(sim.get("apps/v1", "Deployment", "default", "web").is_none());
}

#[tokio::test(start_paused = true)]
async fn dockers_repository_not_found_is_no_failure_without_the_registrys_word() {
    let image = "registry.local/shop/web:private";
    let text = "Error response from daemon: repository registry.local/shop/web not found: does not exist or no pull access";
    let behaviour = ImageBehaviour {
        pull: PullBehaviour::Errors {
            errors: vec![text.to_owned(); 50],
            then: Box::new(PullBehaviour::NotFound),
        },
        ..ImageBehaviour::default()
    };
    let sim = Sim::start(scenario("1.33", image, behaviour));
    let run = run_yaml(
        &sim,
        "web.yaml",
        &deployment(image),
        Mode::Deploy,
        Duration::from_secs(120),
    )
    .await
    .unwrap();
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        (web.verdict, web.reason),
        (Verdict::TimedOut, Some(Reason::ImagePullBackoff)),
        "{web:#?}"
    );
    assert!(
        web.message.contains("not found, or private"),
        "{}",
        web.message
    );
}
