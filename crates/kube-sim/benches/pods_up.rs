//! How fast kube-sim brings pods up: Deployments applied by server-side apply (in-process
//! client), then the wall time until every pod is Running and Ready. A benchmark, not a
//! test: it prints figures. Run: `cargo bench -p kube-sim --bench pods_up [-- DEPLOYMENTS
//! REPLICAS NODES]` (defaults 500 x 4 over 25 nodes, 10 ms image pulls).

#![expect(clippy::print_stdout, reason = "a benchmark reports by printing")]

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, Sim};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The allocator the `kube-sim` binary runs with (src/main.rs says why).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .filter(|a| !a.starts_with('-'))
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn deployment(i: usize, replicas: usize) -> Value {
    let name = format!("app-{i:04}");
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.local/app:1"}]}}}})
}

fn ready(pod: &Value) -> bool {
    pod.pointer("/status/phase").and_then(Value::as_str) == Some("Running")
        && pod
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (deployments, replicas, nodes) = (arg(1, 500), arg(2, 4), arg(3, 25));
    let sim = Sim::start(
        Scenario::builder()
            .default_image(ImageBehaviour::pulls_in(Duration::from_millis(10)))
            .nodes(nodes)
            .build(),
    );
    let api: Api<Deployment> = Api::namespaced(sim.client(), "default");
    let params = PatchParams::apply("bench").force();
    let start = Instant::now();
    futures::stream::iter(0..deployments)
        .map(|i| {
            let (api, params) = (api.clone(), params.clone());
            async move {
                let d = deployment(i, replicas);
                let name = d["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                api.patch(&name, &params, &Patch::Apply(&d))
                    .await
                    .expect("apply");
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await;
    let applied = start.elapsed();
    let want = deployments * replicas;
    loop {
        let (pods, _) = sim.store.list("", "pods", Some("default"));
        let up = pods.iter().filter(|p| ready(p)).count();
        if up >= want {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "only {up} of {want} pods ready after 10 min"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let took = start.elapsed();
    println!(
        "{deployments} Deployments x {replicas} over {nodes} nodes: applied in {:.2} s, \
         {want} pods Running and Ready in {:.2} s ({:.0} pods/s)",
        applied.as_secs_f64(),
        took.as_secs_f64(),
        want as f64 / took.as_secs_f64()
    );
}
