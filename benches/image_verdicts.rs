//! How long a missing image takes to become a verdict: deploy-action (binary, with and
//! without its registry preflight) against a krane-style rule, on kube-sim over TCP in real
//! time, so the kubelet's pull back-off (10 s doubling) is what the rules race against.
//! A benchmark, not a test: it prints a Markdown table and ratios measured in the same run.
//! Run: `cargo bench --bench image_verdicts`.

#![expect(clippy::print_stdout, reason = "a benchmark reports by printing")]

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams};
use kube_sim::kubeconfig::write_kubeconfig;
use kube_sim::scenario::ImageBehaviour;
use kube_sim::store::Change;
use kube_sim::{Scenario, Sim};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

const BIN: &str = env!("CARGO_BIN_EXE_deploy-action");
const MISSING: &str = "registry.local/shop/web:missing";
const REPLICAS: usize = 2;
const RUNS: u32 = 3;
/// krane's resource watcher syncs every 3 s and gives a Deployment this long here.
const KRANE_SYNC: Duration = Duration::from_secs(3);
const KRANE_TIMEOUT: Duration = Duration::from_secs(60);
/// deploy-action gets the same budget as the krane-style rule, so neither can win by waiting.
const TIMEOUT_ARG: &str = "60s";

fn deployment_yaml(image: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: {REPLICAS}
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

/// kube-sim served over TCP, with a kubeconfig and the manifest on disk for the binary.
struct Cluster {
    sim: Sim,
    client: kube::Client,
    kubeconfig: PathBuf,
    manifest: PathBuf,
    report: PathBuf,
    _dir: tempfile::TempDir,
}

impl Cluster {
    async fn start(version: &str, image: &str) -> Cluster {
        let scenario = Scenario::builder()
            .kubernetes_version(version)
            .image(image, ImageBehaviour::not_found())
            .build();
        let mut sim = Sim::start(scenario);
        let addr = sim.serve("127.0.0.1:0").await.expect("bind");
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        write_kubeconfig(&kubeconfig, addr, "default").expect("kubeconfig");
        let manifest = dir.path().join("web.yaml");
        std::fs::write(&manifest, deployment_yaml(image)).expect("manifest");
        let config = kube::Config::new(format!("http://{addr}").parse().expect("url"));
        let client = kube::Client::try_from(config).expect("client");
        let report = dir.path().join("report.json");
        Cluster {
            sim,
            client,
            kubeconfig,
            manifest,
            report,
            _dir: dir,
        }
    }

    /// Create the Deployment as another tool would, bypassing deploy-action.
    async fn create_deployment(&self, image: &str) {
        let d: Deployment = serde_yaml_ng::from_str(&deployment_yaml(image)).expect("deployment");
        Api::<Deployment>::namespaced(self.client.clone(), "default")
            .create(&PostParams::default(), &d)
            .await
            .expect("create");
    }

    /// Run the binary; returns when it started, when it exited, and what it said.
    async fn run(&self, command: &str, extra: &[&str]) -> (Instant, Instant, String) {
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.arg(command)
            .arg("-f")
            .arg(&self.manifest)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig);
        cmd.arg("--timeout")
            .arg(TIMEOUT_ARG)
            .arg("--report")
            .arg(&self.report)
            .args(extra);
        cmd.env_remove("GITHUB_ACTIONS").env("NO_COLOR", "1");
        let started = Instant::now();
        let out = cmd.output().await.expect("deploy-action runs");
        let exited = Instant::now();
        let code = out
            .status
            .code()
            .map_or_else(|| "killed".to_owned(), |c| c.to_string());
        (started, exited, format!("exit {code} {}", self.reason()))
    }

    /// The reason the report gives the Deployment, to show what the exit code stood for.
    fn reason(&self) -> String {
        let Ok(text) = std::fs::read_to_string(&self.report) else {
            return "(no report)".into();
        };
        let report: Value = serde_json::from_str(&text).unwrap_or_default();
        report["resources"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["kind"] == "Deployment"))
            .map_or_else(
                || "(no verdict)".into(),
                |r| r["reason"].as_str().unwrap_or("none").to_owned(),
            )
    }

    fn pod_reasons(&self) -> Vec<String> {
        let (pods, _) = self.sim.store.list("", "pods", Some("default"));
        pods.iter()
            .map(|p| {
                p.pointer("/status/containerStatuses/0/state/waiting/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("-")
                    .to_owned()
            })
            .collect()
    }

    /// Until every pod of the Deployment is backing off, the state case d starts from.
    async fn wait_for_backoff(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let reasons = self.pod_reasons();
            if reasons.len() == REPLICAS && reasons.iter().all(|r| r == "ImagePullBackOff") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "pods never all reached ImagePullBackOff: {reasons:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The moment the cluster first shows a failed pull, seen inside kube-sim so that no
/// client's watch or poll latency is counted in the reference point.
struct FirstPullError {
    at: Arc<OnceLock<Instant>>,
    task: JoinHandle<()>,
}

impl FirstPullError {
    fn watch(sim: &Sim) -> FirstPullError {
        let mut changes = sim.store.subscribe();
        let at = Arc::new(OnceLock::new());
        let seen = at.clone();
        let task = tokio::spawn(async move {
            loop {
                match changes.recv().await {
                    Ok(change) if shows_pull_error(&change) => {
                        let _ = seen.set(Instant::now());
                        return;
                    }
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                }
            }
        });
        FirstPullError { at, task }
    }

    fn get(&self) -> Option<Instant> {
        self.at.get().copied()
    }
}

impl Drop for FirstPullError {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn shows_pull_error(change: &Change) -> bool {
    let o = &change.object;
    match change.key.plural.as_str() {
        "pods" => o
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.pointer("/state/waiting/reason").and_then(Value::as_str)
                        == Some("ErrImagePull")
                })
            }),
        "events" => [&o["message"], &o["note"]].iter().any(|m| {
            m.as_str()
                .is_some_and(|m| m.starts_with("Failed to pull image"))
        }),
        _ => false,
    }
}

/// krane 3.x's image rule (`Pod::Container#doom_reason`): doomed only while a container
/// waits in ErrImagePull right now with "not found" in its message; back-off is not doom.
fn krane_doomed(pods: &[Pod]) -> bool {
    pods.iter()
        .flat_map(|p| {
            p.status
                .iter()
                .flat_map(|s| s.container_statuses.iter().flatten())
        })
        .any(|c| {
            let waiting = c.state.as_ref().and_then(|s| s.waiting.as_ref());
            waiting.is_some_and(|w| {
                w.reason.as_deref() == Some("ErrImagePull")
                    && w.message
                        .as_deref()
                        .is_some_and(|m| m.to_lowercase().contains("not found"))
            })
        })
}

/// krane's sync loop: a pod list every 3 s until doomed or the timeout; returns the verdict
/// and its moment. The first poll comes `phase` after the start: whether a 3 s poll lands
/// in the 1 s an ErrImagePull lasts depends only on it, and a real krane's phase is set by
/// how long its `kubectl apply` happened to take, so runs sample different phases.
async fn krane_style(client: &kube::Client, phase: Duration) -> (String, Instant) {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let params = ListParams::default().labels("app=web");
    let started = Instant::now();
    let mut tick = tokio::time::interval_at(started + phase, KRANE_SYNC);
    let tag = format!("first poll +{} s", phase.as_secs());
    loop {
        tick.tick().await;
        if started.elapsed() >= KRANE_TIMEOUT {
            return (format!("{tag}: timed out"), Instant::now());
        }
        let list = pods.list(&params).await.expect("list pods");
        if krane_doomed(&list.items) {
            return (format!("{tag}: failed"), Instant::now());
        }
    }
}

/// One measurement: seconds (None when the reference point was never seen) and what ended it.
struct Sample {
    secs: Option<f64>,
    outcome: String,
}

fn since(from: Option<Instant>, to: Instant, outcome: String) -> Sample {
    Sample {
        secs: from.map(|f| to.saturating_duration_since(f).as_secs_f64()),
        outcome,
    }
}

/// a: preflight off, so only the node's ErrImagePull can decide.
async fn case_a() -> (Sample, Sample) {
    let c = Cluster::start("1.33", MISSING).await;
    let first = FirstPullError::watch(&c.sim);
    let (started, exited, outcome) = c.run("deploy", &["--image-preflight", "off"]).await;
    (
        since(first.get(), exited, outcome.clone()),
        since(Some(started), exited, outcome),
    )
}

/// A registry on loopback answering 404 MANIFEST_UNKNOWN to every manifest request.
async fn missing_registry() -> MockServer {
    let server = MockServer::start().await;
    let body = r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#;
    Mock::given(method("HEAD"))
        .and(path_regex("^/v2/.+/manifests/.+$"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path_regex("^/v2/.+$"))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_string(body)
                .insert_header("Content-Type", "application/json"),
        )
        .mount(&server)
        .await;
    server
}

/// b: the preflight asks the registry before anything is applied.
async fn case_b() -> Sample {
    let registry = missing_registry().await;
    let image = format!("{}/shop/web:missing", registry.address());
    let c = Cluster::start("1.33", &image).await;
    let (started, exited, mut outcome) = c.run("deploy", &[]).await;
    let applied = c
        .sim
        .get("apps/v1", "Deployment", "default", "web")
        .is_some();
    let asked = registry.received_requests().await.map_or(0, |r| r.len());
    outcome.push_str(if applied {
        ", APPLIED"
    } else {
        ", nothing applied"
    });
    outcome.push_str(&format!(", {asked} registry requests"));
    since(Some(started), exited, outcome)
}

/// c: the krane-style rule from its apply, timed from the first ErrImagePull.
async fn case_c(phase: Duration) -> Sample {
    let c = Cluster::start("1.33", MISSING).await;
    let first = FirstPullError::watch(&c.sim);
    c.create_deployment(MISSING).await;
    let (verdict, at) = krane_style(&c.client, phase).await;
    since(first.get(), at, verdict)
}

/// d: pods already in ImagePullBackOff on 1.31, whose waiting message names no cause.
async fn case_d_deploy_action() -> Sample {
    let c = Cluster::start("1.31", MISSING).await;
    c.create_deployment(MISSING).await;
    c.wait_for_backoff().await;
    let (started, exited, outcome) = c.run("watch", &["--image-preflight", "off"]).await;
    since(Some(started), exited, outcome)
}

async fn case_d_krane(phase: Duration) -> Sample {
    let c = Cluster::start("1.31", MISSING).await;
    c.create_deployment(MISSING).await;
    c.wait_for_backoff().await;
    let started = Instant::now();
    let (verdict, at) = krane_style(&c.client, phase).await;
    since(Some(started), at, verdict)
}

fn median(samples: &[Sample]) -> Option<f64> {
    let mut secs: Vec<f64> = samples.iter().filter_map(|s| s.secs).collect();
    secs.sort_by(f64::total_cmp);
    secs.get(secs.len() / 2)
        .copied()
        .filter(|_| secs.len() == samples.len())
}

fn row(case: &str, span: &str, samples: &[Sample]) {
    let secs: Vec<f64> = samples.iter().filter_map(|s| s.secs).collect();
    let range = match (
        secs.iter().copied().reduce(f64::min),
        secs.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => format!("{lo:.3}–{hi:.3} s"),
        _ => "n/a".into(),
    };
    let med = median(samples).map_or_else(|| "n/a".into(), |m| format!("{m:.3} s"));
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    for s in samples {
        *outcomes.entry(s.outcome.as_str()).or_default() += 1;
    }
    let outcomes: Vec<String> = outcomes.iter().map(|(o, n)| format!("{o} ×{n}")).collect();
    println!(
        "| {case} | {span} | {med} | {range} | {} |",
        outcomes.join("; ")
    );
}

fn ratio(what: &str, num: &[Sample], den: &[Sample]) {
    match (median(num), median(den)) {
        (Some(n), Some(d)) if d > 0.0 => println!("- {what}: {:.1}×", n / d),
        _ => println!("- {what}: n/a"),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let begun = Instant::now();
    let (mut a_first, mut a_whole, mut b, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // The fast cases run one at a time, so that one process's start-up does not slow another's.
    for _ in 0..RUNS {
        let (first, whole) = case_a().await;
        a_first.push(first);
        a_whole.push(whole);
        b.push(case_b().await);
        d.push(case_d_deploy_action().await);
    }
    // The krane-style runs are paced by a 3 s poll and the kubelet's back-off, not by CPU:
    // run them together to keep the benchmark short, one poll phase per run (0, 1, 2 s).
    let phase = |i: u32| KRANE_SYNC * i / RUNS;
    let c = futures::future::join_all((0..RUNS).map(|i| case_c(phase(i))));
    let d_krane = futures::future::join_all((0..RUNS).map(|i| case_d_krane(phase(i))));
    let (c, d_krane) = tokio::join!(c, d_krane);

    println!("| case | timed | median | min–max | outcome ({RUNS} runs) |\n|---|---|---|---|---|");
    row(
        "a. deploy-action, `--image-preflight off`",
        "first ErrImagePull → exit",
        &a_first,
    );
    row("a. (same runs)", "process start → exit", &a_whole);
    row(
        "b. deploy-action, preflight (registry 404)",
        "process start → exit",
        &b,
    );
    row(
        "c. krane-style, 3 s poll",
        "first ErrImagePull → verdict",
        &c,
    );
    row(
        "d. deploy-action `watch`, pods in ImagePullBackOff (1.31)",
        "process start → exit",
        &d,
    );
    row(
        "d. krane-style, same state",
        "rule start → verdict",
        &d_krane,
    );
    println!("\nRatios of medians:");
    ratio(
        "krane-style / deploy-action, from the first ErrImagePull (c / a)",
        &c,
        &a_first,
    );
    ratio(
        "krane-style / deploy-action, starting in back-off (d)",
        &d_krane,
        &d,
    );
    ratio(
        "deploy-action without / with preflight, start → exit (a / b)",
        &a_whole,
        &b,
    );
    println!(
        "\n{} replicas per Deployment; krane-style timeout {} s; total {:.0} s.",
        REPLICAS,
        KRANE_TIMEOUT.as_secs(),
        begun.elapsed().as_secs_f64()
    );
}
