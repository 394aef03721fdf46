//! Throughput of kube-sim under a large cluster: 1,000 Deployments of 5 replicas (5,000
//! Pods), applied by server-side apply, then lists and watches over TCP and in-process.
//! A benchmark, not a test: it prints figures (and ratios between paths measured in the
//! same run) for the README. Run: `cargo bench -p kube-sim --bench throughput`.

#![expect(clippy::print_stdout, reason = "a benchmark reports by printing")]

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, Sim};
use serde_json::json;
use std::time::{Duration, Instant};

const DEPLOYMENTS: usize = 1_000;
const REPLICAS: usize = 5;
/// Enough nodes for every pod: like a real one, a simulated node admits at most 110 pods, so
/// the default three nodes would leave all but 330 of the 5,000 pods Pending.
const NODES: usize = (DEPLOYMENTS * REPLICAS).div_ceil(100);

fn deployment(i: usize) -> serde_json::Value {
    let name = format!("app-{i:04}");
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": REPLICAS, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.local/app:1"}]}}}})
}

async fn tcp_client(sim: &mut Sim) -> kube::Client {
    let addr = sim.serve("127.0.0.1:0").await.expect("bind");
    let config = kube::Config::new(format!("http://{addr}").parse().expect("url"));
    kube::Client::try_from(config).expect("client")
}

fn report(what: &str, n: usize, took: Duration) {
    let per_sec = n as f64 / took.as_secs_f64();
    println!(
        "| {what} | {n} | {:.2} s | {per_sec:.0}/s |",
        took.as_secs_f64()
    );
}

async fn list_all(api: &Api<Pod>, limit: Option<u32>) -> usize {
    let mut params = ListParams::default();
    if let Some(l) = limit {
        params = params.limit(l);
    }
    let mut total = 0;
    loop {
        let page = api.list(&params).await.expect("list");
        total += page.items.len();
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => params = params.continue_token(&c),
            _ => return total,
        }
    }
}

async fn initial_watch(api: &Api<Pod>) -> usize {
    let mut stream = api
        .watch(&WatchParams::default().timeout(60), "0")
        .await
        .expect("watch")
        .boxed();
    let mut n = 0;
    while n < DEPLOYMENTS * REPLICAS {
        match stream.try_next().await.expect("watch event") {
            Some(WatchEvent::Added(_)) => n += 1,
            Some(_) => {}
            None => break,
        }
    }
    n
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let scenario = Scenario::builder()
        .default_image(ImageBehaviour::pulls_in(Duration::from_millis(10)))
        .controller_delay(Duration::from_millis(1))
        .nodes(NODES)
        .build();
    let mut sim = Sim::start(scenario);
    let tcp = tcp_client(&mut sim).await;
    let local = sim.client();
    println!("| operation | count | time | rate |\n|---|---|---|---|");

    let deployments: Api<Deployment> = Api::namespaced(tcp.clone(), "default");
    let params = PatchParams::apply("bench").force();
    let start = Instant::now();
    futures::stream::iter(0..DEPLOYMENTS)
        .map(|i| {
            let api = deployments.clone();
            let params = params.clone();
            async move {
                let d = deployment(i);
                api.patch(
                    d["metadata"]["name"].as_str().unwrap(),
                    &params,
                    &Patch::Apply(&d),
                )
                .await
                .expect("apply");
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
    report(
        "server-side apply of a Deployment (TCP, 8 in flight)",
        DEPLOYMENTS,
        start.elapsed(),
    );

    let start = Instant::now();
    let want = DEPLOYMENTS * REPLICAS;
    loop {
        let (pods, _) = sim.store.list("", "pods", Some("default"));
        let running = pods
            .iter()
            .filter(|p| p.pointer("/status/phase").and_then(|v| v.as_str()) == Some("Running"))
            .count();
        if running >= want {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "only {running} of {want} pods running after 10 min"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    report(
        "controllers + kubelet: Pods created and Running",
        want,
        start.elapsed(),
    );

    for (label, client) in [("TCP", &tcp), ("in-process", &local)] {
        let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
        let start = Instant::now();
        let n = list_all(&pods, None).await;
        report(
            &format!("list of all Pods, one page ({label})"),
            n,
            start.elapsed(),
        );
        let start = Instant::now();
        let n = list_all(&pods, Some(500)).await;
        report(
            &format!("list of all Pods, pages of 500 ({label})"),
            n,
            start.elapsed(),
        );
        let start = Instant::now();
        let n = initial_watch(&pods).await;
        report(
            &format!("watch from resourceVersion 0: initial ADDED events ({label})"),
            n,
            start.elapsed(),
        );
    }
    println!("\nAPI calls served, by verb and resource (the recorder):");
    for ((verb, resource), n) in sim.server.recorder.counts() {
        println!("  {verb} {resource}: {n}");
    }
}
