//! Fidelity with a second independent client: kpt, whose older client-go reads aggregated
//! discovery only as v2beta1 and probes `/livez/ping`. `kpt live init` and `kpt live apply`
//! must reconcile a Deployment as they would on a real cluster.

use kube_sim::kubeconfig::write_kubeconfig;
use kube_sim::{Scenario, Sim};
use std::process::Command;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kpt_live_apply_reconciles_a_deployment() {
    if Command::new("kpt").arg("version").output().is_err() {
        #[expect(clippy::print_stderr, reason = "a skipped fidelity test must say so")]
        {
            eprintln!("SKIPPED: no kpt on this machine; kpt fidelity is unchecked");
        }
        return;
    }
    let mut sim = Sim::start(Scenario::default());
    let addr = sim.serve("127.0.0.1:0").await.expect("bind loopback");
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    write_kubeconfig(&kubeconfig, addr, "default").unwrap();
    let pkg = dir.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("web.yaml"),
        "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.local/shop/web:1}]}
",
    )
    .unwrap();
    let kpt = |args: Vec<String>| {
        let kubeconfig = kubeconfig.clone();
        async move {
            tokio::time::timeout(
                Duration::from_secs(120),
                tokio::process::Command::new("kpt")
                    .args(&args)
                    .env("KUBECONFIG", &kubeconfig)
                    .output(),
            )
            .await
            .expect("kpt ended")
            .expect("kpt runs")
        }
    };
    let pkg = pkg.display().to_string();
    let init = kpt(vec!["live".into(), "init".into(), pkg.clone()]).await;
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    let apply = kpt(vec![
        "live".into(),
        "apply".into(),
        pkg,
        "--reconcile-timeout=60s".into(),
    ])
    .await;
    let out = String::from_utf8_lossy(&apply.stdout).into_owned()
        + &String::from_utf8_lossy(&apply.stderr);
    assert!(apply.status.success(), "{out}");
    assert!(
        out.contains(
            "reconcile result: 2 attempted, 2 successful, 0 skipped, 0 failed, 0 timed out"
        ) || out.contains("0 failed, 0 timed out"),
        "{out}"
    );
    assert!(sim.get("apps/v1", "Deployment", "default", "web").is_some());
}
