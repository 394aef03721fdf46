//! DaemonSets: a pod per eligible node, nodeSelector changes, rolling updates bounded by
//! maxUnavailable.

use crate::controllers::workloads::testkit::{
    edit, event_lines, eventually, manual, pods, run_ready, wait,
};
use crate::scenario::NodeSpec;
use crate::{Scenario, Sim};
use serde_json::{Value, json};

fn exporter(node_selector: Option<Value>) -> Value {
    let mut ds = json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "node-exporter", "namespace": "monitoring"},
        "spec": {
            "selector": {"matchLabels": {"app": "node-exporter"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
            "template": {
                "metadata": {"labels": {"app": "node-exporter"}},
                "spec": {"hostNetwork": true,
                         "containers": [{"name": "node-exporter", "image": "quay.io/prometheus/node-exporter:v1.8.2",
                                         "ports": [{"containerPort": 9100, "name": "metrics"}]}]}
            }
        }
    });
    if let Some(sel) = node_selector {
        ds["spec"]["template"]["spec"]["nodeSelector"] = sel;
    }
    ds
}

fn cluster() -> Sim {
    let ssd = NodeSpec {
        name: "sim-node-3".into(),
        labels: [("disktype".to_owned(), "ssd".to_owned())].into(),
        unschedulable: false,
    };
    manual(Scenario::builder().nodes(2).node(ssd).build())
}

fn status(sim: &Sim) -> Value {
    sim.get("apps/v1", "DaemonSet", "monitoring", "node-exporter")
        .expect("daemonset")["status"]
        .clone()
}

/// (pod name, node it is pinned to, image) of live pods, by node.
fn placement(sim: &Sim) -> Vec<(String, String, String)> {
    let mut out: Vec<_> = pods(sim, "monitoring").iter().filter(|p| p["metadata"]["deletionTimestamp"].is_null()).map(|p| {
        let node = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0].as_str().unwrap_or_default();
        (p["metadata"]["name"].as_str().unwrap().to_owned(), node.to_owned(), p["spec"]["containers"][0]["image"].as_str().unwrap().to_owned())
    }).collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

fn nodes_of(sim: &Sim) -> Vec<String> {
    placement(sim).into_iter().map(|(_, n, _)| n).collect()
}

#[tokio::test(start_paused = true)]
async fn runs_one_pinned_pod_per_node_and_reports_readiness() {
    let sim = cluster();
    sim.create(exporter(None)).unwrap();
    wait(1.0).await;
    let placed = placement(&sim);
    assert_eq!(nodes_of(&sim), ["sim-node-1", "sim-node-2", "sim-node-3"]);
    let pod = sim.get("v1", "Pod", "monitoring", &placed[0].0).unwrap();
    assert!(
        placed[0].0.starts_with("node-exporter-")
            && placed[0].0.len() == "node-exporter-".len() + 5
    );
    assert_eq!(pod["metadata"]["labels"]["pod-template-generation"], "1");
    assert!(
        pod["metadata"]["labels"]["controller-revision-hash"]
            .as_str()
            .is_some_and(|h| !h.is_empty())
    );
    assert!(
        pod["spec"]["nodeName"].is_null(),
        "binding is left to the scheduler"
    );
    let tolerations = pod["spec"]["tolerations"].as_array().unwrap();
    assert!(
        tolerations
            .iter()
            .any(|t| t["key"] == "node.kubernetes.io/network-unavailable"),
        "hostNetwork pods tolerate it"
    );
    assert_eq!(
        status(&sim),
        json!({"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
        "numberReady": 0, "observedGeneration": 1, "updatedNumberScheduled": 3, "numberUnavailable": 3})
    );
    let created: Vec<_> = placed
        .iter()
        .map(|(n, _, _)| format!("Normal SuccessfulCreate: Created pod: {n}"))
        .collect();
    let mut lines = event_lines(&sim, "monitoring", "node-exporter");
    lines.sort();
    let mut created_sorted = created.clone();
    created_sorted.sort();
    assert_eq!(lines, created_sorted);

    for (i, (name, node, _)) in placed.iter().enumerate() {
        run_ready(
            &sim,
            "monitoring",
            name,
            node,
            &format!("172.18.0.{}", i + 2),
        );
    }
    wait(1.0).await;
    assert_eq!(
        status(&sim),
        json!({"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
        "numberReady": 3, "observedGeneration": 1, "updatedNumberScheduled": 3, "numberAvailable": 3})
    );
}

#[tokio::test(start_paused = true)]
async fn node_selector_follows_node_labels() {
    let sim = cluster();
    sim.create(exporter(Some(json!({"disktype": "ssd"}))))
        .unwrap();
    wait(1.0).await;
    assert_eq!(nodes_of(&sim), ["sim-node-3"]);
    assert_eq!(status(&sim)["desiredNumberScheduled"], 1);

    edit(&sim, "v1", "Node", "", "sim-node-1", |n| {
        n["metadata"]["labels"]["disktype"] = json!("ssd");
    });
    wait(1.0).await;
    assert_eq!(nodes_of(&sim), ["sim-node-1", "sim-node-3"]);

    // sim-node-3 loses the label: its pod is misscheduled and removed.
    let (name, _, _) = placement(&sim).pop().unwrap();
    run_ready(&sim, "monitoring", &name, "sim-node-3", "172.18.0.4");
    edit(&sim, "v1", "Node", "", "sim-node-3", |n| {
        n["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove("disktype");
    });
    wait(1.0).await;
    assert_eq!(nodes_of(&sim), ["sim-node-1"]);
    assert!(
        event_lines(&sim, "monitoring", "node-exporter")
            .contains(&format!("Normal SuccessfulDelete: Deleted pod: {name}"))
    );
    assert_eq!(status(&sim)["desiredNumberScheduled"], 1);
    assert_eq!(status(&sim)["numberMisscheduled"], 0);
}

#[tokio::test(start_paused = true)]
async fn rolling_update_replaces_one_node_at_a_time() {
    let sim = cluster();
    sim.create(exporter(None)).unwrap();
    wait(1.0).await;
    for (i, (name, node, _)) in placement(&sim).iter().enumerate() {
        run_ready(
            &sim,
            "monitoring",
            name,
            node,
            &format!("172.18.0.{}", i + 2),
        );
    }
    wait(1.0).await;
    edit(
        &sim,
        "apps/v1",
        "DaemonSet",
        "monitoring",
        "node-exporter",
        |d| {
            d["spec"]["template"]["spec"]["containers"][0]["image"] =
                json!("quay.io/prometheus/node-exporter:v1.9.0");
        },
    );
    let new_image = "quay.io/prometheus/node-exporter:v1.9.0";
    for round in 1..=3 {
        // Exactly one more node gets a new pod; the others keep their old, available pod.
        let updated = eventually("a new pod", || {
            let p = placement(&sim);
            let fresh: Vec<_> = p
                .iter()
                .filter(|(_, _, img)| img == new_image)
                .cloned()
                .collect();
            (fresh.len() == round && p.len() == 3).then_some(fresh)
        })
        .await;
        wait(3.0).await;
        assert_eq!(
            placement(&sim)
                .iter()
                .filter(|(_, _, img)| img == new_image)
                .count(),
            round,
            "waits for readiness"
        );
        for (name, node, _) in updated {
            run_ready(&sim, "monitoring", &name, &node, "172.18.0.9");
        }
    }
    wait(1.0).await;
    let s = status(&sim);
    assert_eq!(
        (
            s["updatedNumberScheduled"].as_i64(),
            s["numberAvailable"].as_i64(),
            s["observedGeneration"].as_i64()
        ),
        (Some(3), Some(3), Some(2))
    );
    let revisions = sim
        .store
        .list("apps", "controllerrevisions", Some("monitoring"))
        .0;
    assert_eq!(revisions.len(), 2);
    let deleted = event_lines(&sim, "monitoring", "node-exporter")
        .iter()
        .filter(|l| l.contains("Deleted pod"))
        .count();
    assert_eq!(deleted, 3);
}
