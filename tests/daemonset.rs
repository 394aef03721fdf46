//! DaemonSets against kube-sim: pods on NotReady or cordoned nodes and evicted pods do not
//! hold a rollout, and the verdict says how many were left out and why.

use crate::support::{outcome, run_yaml};
use deploy_action::config::Mode;
use deploy_action::vocab::verdict::{Reason, Verdict};
use kube_sim::{Scenario, Sim};
use serde_json::{Value, json};
use std::time::Duration;

const DS_UID: &str = "3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a";

const YAML: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
        - name: agent
          image: registry.local/shop/agent:1
";

fn daemonset(available: i32) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default", "uid": DS_UID,
            "annotations": {"deprecated.daemonset.template.generation": "1"}},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "registry.local/shop/agent:1"}]}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}},
        "status": {"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
            "numberReady": available, "observedGeneration": 1, "updatedNumberScheduled": 3,
            "numberAvailable": available, "numberUnavailable": 3 - available}
    })
}

fn pod(node: &str, ready: bool) -> Value {
    let status = if ready { "True" } else { "False" };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("agent-{node}"), "namespace": "default",
            "labels": {"app": "agent", "pod-template-generation": "1", "controller-revision-hash": "6d8f7c9b5"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent",
                "uid": DS_UID, "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"nodeName": node, "containers": [{"name": "agent", "image": "registry.local/shop/agent:1"}]},
        "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": status}, {"type": "ContainersReady", "status": status},
                {"type": "PodScheduled", "status": "True"}],
            "containerStatuses": [{"name": "agent", "image": "registry.local/shop/agent:1", "imageID": "",
                "ready": ready, "restartCount": 0, "started": true,
                "state": {"running": {"startedAt": "2025-03-04T10:15:05Z"}}}]}
    })
}

fn not_ready_node(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
        "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status."}]}
    })
}

#[tokio::test(start_paused = true)]
async fn a_pod_on_a_not_ready_node_does_not_hold_the_rollout() {
    let sim = Sim::start(
        Scenario::builder()
            .at(
                Duration::ZERO,
                vec![
                    not_ready_node("sim-node-3"),
                    daemonset(2),
                    pod("sim-node-1", true),
                    pod("sim-node-2", true),
                    pod("sim-node-3", false),
                ],
            )
            .build(),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let run = run_yaml(
        &sim,
        "agent.yaml",
        YAML,
        Mode::Watch,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    let agent = outcome(&run, "DaemonSet", "agent");
    assert_eq!(agent.verdict, Verdict::Succeeded, "{agent:#?}");
    assert!(
        agent
            .message
            .contains("1 pod not counted: 1 on NotReady node sim-node-3"),
        "{}",
        agent.message
    );
    assert!(agent.seconds < 10.0, "took {} s", agent.seconds);
}

#[tokio::test(start_paused = true)]
async fn a_pod_not_ready_on_a_healthy_node_still_holds_it() {
    let sim = Sim::start(
        Scenario::builder()
            .at(
                Duration::ZERO,
                vec![
                    daemonset(2),
                    pod("sim-node-1", true),
                    pod("sim-node-2", true),
                    pod("sim-node-3", false),
                ],
            )
            .build(),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let run = run_yaml(
        &sim,
        "agent.yaml",
        YAML,
        Mode::Watch,
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    let agent = outcome(&run, "DaemonSet", "agent");
    assert_eq!(
        (agent.verdict, agent.reason),
        (Verdict::TimedOut, Some(Reason::ReadinessFailing)),
        "{agent:#?}"
    );
}
