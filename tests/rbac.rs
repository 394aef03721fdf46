//! `deploy-action rbac` against a cluster that enforces what it prints: kube-sim with TLS,
//! bearer tokens and RBAC. The deployer reads discovery, an administrator applies the
//! printed roles and binds them, and the deploy then runs with exactly those grants.

use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, ServeOptions, Sim, TokenSpec};
use serde_json::{Value, json};
use std::process::Output;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_deploy-action");

const APP: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: shop}
data: {MODE: a}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: registry.local/shop/web:1
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80}]
";

async fn run(dir: &std::path::Path, args: &[&str]) -> Output {
    tokio::process::Command::new(BIN)
        .args(args)
        .arg("--kubeconfig")
        .arg(dir.join("ci.kubeconfig"))
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_TOKEN")
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .output()
        .await
        .expect("deploy-action runs")
}

/// Bind `ClusterRole` and each `Role` named deploy-action to user `ci`.
fn bind(sim: &Sim, roles: &[Value]) {
    for role in roles {
        let (kind, binding) = match role["metadata"]["namespace"].as_str() {
            None => (
                "ClusterRole",
                json!({"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding", "metadata": {"name": "deploy-action"}}),
            ),
            Some(ns) => (
                "Role",
                json!({"apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding", "metadata": {"name": "deploy-action", "namespace": ns}}),
            ),
        };
        let mut binding = binding;
        binding["roleRef"] =
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": "deploy-action"});
        binding["subjects"] =
            json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ci"}]);
        sim.create(role.clone()).expect("the role is taken");
        sim.create(binding).expect("the binding is taken");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deploy_succeeds_with_exactly_the_roles_rbac_prints_and_fails_forbidden_without_one() {
    let mut sim = Sim::start(
        Scenario::builder()
            .default_image(ImageBehaviour::pulls_in(Duration::from_millis(100)))
            .token(TokenSpec::token("ci-token", "ci", &[]))
            .rbac()
            .build(),
    );
    sim.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}))
        .unwrap();
    let served = sim
        .serve_with(ServeOptions::new("127.0.0.1:0").tls())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    served
        .kubeconfig()
        .namespace("shop")
        .token("ci-token")
        .write(&dir.path().join("ci.kubeconfig"))
        .unwrap();
    std::fs::write(dir.path().join("app.yaml"), APP).unwrap();

    // Without grants the deployer may still read discovery, which is all rbac needs.
    let printed = run(dir.path(), &["rbac", "-f", "app.yaml"]).await;
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let yaml = String::from_utf8(printed.stdout).unwrap();
    let roles: Vec<Value> = yaml
        .split("---\n")
        .map(|d| serde_yaml_ng::from_str(d).unwrap())
        .collect();

    // Nothing here is cluster-scoped: one Role, in the manifests' namespace.
    assert_eq!(roles.len(), 1, "{yaml}");
    assert_eq!(
        (
            roles[0]["kind"].as_str(),
            roles[0]["metadata"]["namespace"].as_str()
        ),
        (Some("Role"), Some("shop"))
    );

    // The Role less `list` on pods: the Deployment's verdict needs them.
    let mut short = roles.clone();
    for rule in short[0]["rules"].as_array_mut().unwrap() {
        if let Some(resources) = rule["resources"].as_array_mut() {
            resources.retain(|r| r != "pods");
        }
    }
    bind(&sim, &short);
    let denied = run(
        dir.path(),
        &[
            "deploy",
            "-f",
            "app.yaml",
            "--settle",
            "0",
            "--image-preflight",
            "off",
            "--report",
            "short.json",
        ],
    )
    .await;
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("short.json")).unwrap()).unwrap();
    assert_eq!(
        denied.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&denied.stderr)
    );
    let web = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "Deployment")
        .unwrap();
    assert_eq!(web["reason"], "forbidden", "{report:#}");
    let message = web["message"].as_str().unwrap();
    assert!(
        message.contains("cannot list resource \"pods\""),
        "{message}"
    );

    // With the roles as printed.
    sim.delete(
        "rbac.authorization.k8s.io/v1",
        "Role",
        "shop",
        "deploy-action",
    )
    .unwrap();
    sim.delete(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        "shop",
        "deploy-action",
    )
    .unwrap();
    bind(&sim, &roles);
    let deployed = run(
        dir.path(),
        &[
            "deploy",
            "-f",
            "app.yaml",
            "--settle",
            "0",
            "--image-preflight",
            "off",
        ],
    )
    .await;
    assert_eq!(
        deployed.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&deployed.stdout),
        String::from_utf8_lossy(&deployed.stderr)
    );
}
