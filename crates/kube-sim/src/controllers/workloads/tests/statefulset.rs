//! StatefulSets: ordered creation blocked by an unready pod, storage per ordinal,
//! Parallel creation, partitioned rolling updates and OnDelete.

use crate::Sim;
use crate::controllers::workloads::testkit::{
    edit, event_lines, eventually, names, pod, pods, run_ready, set_pod, sim, wait,
};
use crate::store::DeleteOptions;
use serde_json::{Value, json};

fn db(replicas: i64, policy: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "shop", "labels": {"app": "db"}},
        "spec": {
            "serviceName": "db",
            "replicas": replicas,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": "db"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "revisionHistoryLimit": 10,
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "terminationGracePeriodSeconds": 10,
                    "containers": [{"name": "postgres", "image": "postgres:16.4",
                                    "ports": [{"containerPort": 5432, "name": "pg"}]}]
                }
            },
            "volumeClaimTemplates": [{
                "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }]
        }
    })
}

fn sts(sim: &Sim) -> Value {
    sim.get("apps/v1", "StatefulSet", "shop", "db")
        .expect("statefulset")
}

fn revisions(sim: &Sim) -> Vec<(String, i64)> {
    let mut r: Vec<_> = sim
        .store
        .list("apps", "controllerrevisions", Some("shop"))
        .0
        .iter()
        .map(|r| {
            (
                r["metadata"]["name"].as_str().unwrap().to_owned(),
                r["revision"].as_i64().unwrap(),
            )
        })
        .collect();
    r.sort_by_key(|(_, n)| *n);
    r
}

fn label(object: &Value, key: &str) -> String {
    object["metadata"]["labels"][key]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Wait for `name` to appear and mark it Running and Ready.
async fn bring_up(sim: &Sim, name: &str, ip: &str) -> Value {
    eventually(name, || pod(sim, "shop", name)).await;
    run_ready(sim, "shop", name, "sim-node-1", ip);
    pod(sim, "shop", name).expect("pod")
}

#[tokio::test(start_paused = true)]
async fn ordered_ready_waits_for_each_pod_and_a_crashing_db0_blocks_db1() {
    let sim = sim(3);
    sim.create(db(3, "OrderedReady")).unwrap();
    let db0 = eventually("db-0", || pod(&sim, "shop", "db-0")).await;
    wait(2.0).await;
    assert_eq!(names(&pods(&sim, "shop")), ["db-0"]);

    let revs = revisions(&sim);
    assert_eq!(revs.len(), 1);
    let (rev, number) = &revs[0];
    assert_eq!(*number, 1);
    assert!(rev.starts_with("db-") && rev.len() > 8, "{rev}");
    assert_eq!(label(&db0, "controller-revision-hash"), *rev);
    assert_eq!(label(&db0, "statefulset.kubernetes.io/pod-name"), "db-0");
    assert_eq!(label(&db0, "apps.kubernetes.io/pod-index"), "0");
    assert_eq!(db0["spec"]["hostname"], "db-0");
    assert_eq!(db0["spec"]["subdomain"], "db");
    assert_eq!(
        db0["spec"]["volumes"],
        json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}])
    );
    assert_eq!(db0["metadata"]["ownerReferences"][0]["name"], "db");
    let claim = sim
        .get("v1", "PersistentVolumeClaim", "shop", "data-db-0")
        .expect("claim of db-0");
    assert_eq!(claim["metadata"]["labels"], json!({"app": "db"}));
    assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "1Gi");

    let status = sts(&sim)["status"].clone();
    assert_eq!(
        status,
        json!({"observedGeneration": 1, "replicas": 1, "currentReplicas": 1, "updatedReplicas": 1,
        "currentRevision": rev, "updateRevision": rev, "collisionCount": 0, "availableReplicas": 0})
    );

    // db-0 runs but crashes (Running, not Ready): db-1 must wait.
    set_pod(
        &sim,
        "shop",
        "db-0",
        "Running",
        false,
        "sim-node-1",
        "10.244.1.10",
    );
    wait(30.0).await;
    assert_eq!(names(&pods(&sim, "shop")), ["db-0"]);
    assert!(
        sim.get("v1", "PersistentVolumeClaim", "shop", "data-db-1")
            .is_none()
    );

    run_ready(&sim, "shop", "db-0", "sim-node-1", "10.244.1.10");
    bring_up(&sim, "db-1", "10.244.2.10").await;
    wait(1.0).await;
    assert_eq!(
        names(&pods(&sim, "shop")),
        ["db-0", "db-1", "db-2"],
        "db-2 follows a ready db-1"
    );
    bring_up(&sim, "db-2", "10.244.3.10").await;
    wait(1.0).await;

    let status = sts(&sim)["status"].clone();
    assert_eq!(
        status,
        json!({"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
        "updatedReplicas": 3, "currentRevision": rev, "updateRevision": rev, "collisionCount": 0, "availableReplicas": 3})
    );
    assert_eq!(
        event_lines(&sim, "shop", "db"),
        [
            "Normal SuccessfulCreate: create Claim data-db-0 Pod db-0 in StatefulSet db success",
            "Normal SuccessfulCreate: create Pod db-0 in StatefulSet db successful",
            "Normal SuccessfulCreate: create Claim data-db-1 Pod db-1 in StatefulSet db success",
            "Normal SuccessfulCreate: create Pod db-1 in StatefulSet db successful",
            "Normal SuccessfulCreate: create Claim data-db-2 Pod db-2 in StatefulSet db success",
            "Normal SuccessfulCreate: create Pod db-2 in StatefulSet db successful",
        ]
    );

    // Scaling down removes the highest ordinal first and keeps its claim.
    edit(&sim, "apps/v1", "StatefulSet", "shop", "db", |s| {
        s["spec"]["replicas"] = json!(2);
    });
    wait(1.0).await;
    assert_eq!(names(&pods(&sim, "shop")), ["db-0", "db-1"]);
    assert!(
        sim.get("v1", "PersistentVolumeClaim", "shop", "data-db-2")
            .is_some()
    );
    assert_eq!(sts(&sim)["status"]["replicas"], 2);
    assert_eq!(sts(&sim)["status"]["observedGeneration"], 2);
}

#[tokio::test(start_paused = true)]
async fn parallel_creates_every_ordinal_at_once() {
    let sim = sim(3);
    sim.create(db(3, "Parallel")).unwrap();
    wait(1.0).await;
    assert_eq!(names(&pods(&sim, "shop")), ["db-0", "db-1", "db-2"]);
    assert_eq!(sts(&sim)["status"]["replicas"], 3);
    assert_eq!(sts(&sim)["status"]["availableReplicas"], 0);
}

#[tokio::test(start_paused = true)]
async fn partitioned_rolling_update_replaces_from_the_top_down_to_the_partition() {
    let sim = sim(3);
    sim.create(db(3, "OrderedReady")).unwrap();
    for (i, ip) in ["10.244.1.10", "10.244.2.10", "10.244.3.10"]
        .iter()
        .enumerate()
    {
        bring_up(&sim, &format!("db-{i}"), ip).await;
    }
    wait(1.0).await;
    let old = sts(&sim)["status"]["currentRevision"]
        .as_str()
        .unwrap()
        .to_owned();

    edit(&sim, "apps/v1", "StatefulSet", "shop", "db", |s| {
        s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("postgres:17.0");
        s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(2);
    });
    // db-2 goes (it is frozen by the test, so it is gone at once) and returns updated.
    let db2 = eventually("db-2 at the new revision", || {
        pod(&sim, "shop", "db-2").filter(|p| label(p, "controller-revision-hash") != old)
    })
    .await;
    assert_eq!(db2["spec"]["containers"][0]["image"], "postgres:17.0");
    let new = label(&db2, "controller-revision-hash");
    assert_eq!(revisions(&sim), [(old.clone(), 1), (new.clone(), 2)]);
    run_ready(&sim, "shop", "db-2", "sim-node-3", "10.244.3.11");
    wait(5.0).await;
    for name in ["db-0", "db-1"] {
        assert_eq!(
            label(
                &pod(&sim, "shop", name).unwrap(),
                "controller-revision-hash"
            ),
            old,
            "{name} is below the partition"
        );
    }
    let status = sts(&sim)["status"].clone();
    assert_eq!(
        (
            status["currentRevision"].as_str(),
            status["updateRevision"].as_str()
        ),
        (Some(old.as_str()), Some(new.as_str()))
    );
    assert_eq!(
        (
            status["currentReplicas"].as_i64(),
            status["updatedReplicas"].as_i64(),
            status["readyReplicas"].as_i64()
        ),
        (Some(2), Some(1), Some(3))
    );
    assert_eq!(status["observedGeneration"], 2);

    // Lifting the partition rolls db-1 then db-0, each after its successor is ready.
    edit(&sim, "apps/v1", "StatefulSet", "shop", "db", |s| {
        s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(0);
    });
    eventually("db-1 updated", || {
        pod(&sim, "shop", "db-1").filter(|p| label(p, "controller-revision-hash") == new)
    })
    .await;
    wait(5.0).await;
    assert_eq!(
        label(
            &pod(&sim, "shop", "db-0").unwrap(),
            "controller-revision-hash"
        ),
        old,
        "db-0 waits for db-1 to be ready"
    );
    run_ready(&sim, "shop", "db-1", "sim-node-2", "10.244.2.11");
    eventually("db-0 updated", || {
        pod(&sim, "shop", "db-0").filter(|p| label(p, "controller-revision-hash") == new)
    })
    .await;
    run_ready(&sim, "shop", "db-0", "sim-node-1", "10.244.1.11");
    wait(1.0).await;

    let status = sts(&sim)["status"].clone();
    assert_eq!(
        status,
        json!({"observedGeneration": 3, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
        "updatedReplicas": 3, "currentRevision": new, "updateRevision": new, "collisionCount": 0, "availableReplicas": 3})
    );
    let deletes: Vec<_> = event_lines(&sim, "shop", "db")
        .into_iter()
        .filter(|l| l.contains("SuccessfulDelete"))
        .collect();
    assert_eq!(
        deletes,
        [
            "Normal SuccessfulDelete: delete Pod db-2 in StatefulSet db successful",
            "Normal SuccessfulDelete: delete Pod db-1 in StatefulSet db successful",
            "Normal SuccessfulDelete: delete Pod db-0 in StatefulSet db successful",
        ]
    );
    // Re-creations repeat the first creation's event, which the recorder merges.
    let creates = sim
        .store
        .list("", "events", Some("shop"))
        .0
        .iter()
        .filter(|e| {
            e["reason"] == "SuccessfulCreate"
                && e["message"].as_str().unwrap().contains("create Pod")
        })
        .map(|e| e["count"].as_i64().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(creates, [2, 2, 2]);
}

#[tokio::test(start_paused = true)]
async fn on_delete_updates_only_pods_that_are_deleted() {
    let sim = sim(3);
    let mut set = db(2, "OrderedReady");
    set["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    sim.create(set).unwrap();
    bring_up(&sim, "db-0", "10.244.1.10").await;
    bring_up(&sim, "db-1", "10.244.2.10").await;
    wait(1.0).await;
    let old = sts(&sim)["status"]["currentRevision"]
        .as_str()
        .unwrap()
        .to_owned();
    edit(&sim, "apps/v1", "StatefulSet", "shop", "db", |s| {
        s["spec"]["template"]["spec"]["containers"][0]["image"] = json!("postgres:17.0");
    });
    wait(5.0).await;
    assert!(
        pods(&sim, "shop")
            .iter()
            .all(|p| label(p, "controller-revision-hash") == old)
    );
    let new = sts(&sim)["status"]["updateRevision"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(new, old);

    sim.store
        .delete(
            &sim.key_of(&pod(&sim, "shop", "db-1").unwrap()).unwrap(),
            DeleteOptions::default(),
        )
        .unwrap();
    let db1 = eventually("db-1 recreated", || pod(&sim, "shop", "db-1")).await;
    assert_eq!(label(&db1, "controller-revision-hash"), new);
    run_ready(&sim, "shop", "db-1", "sim-node-2", "10.244.2.11");
    wait(1.0).await;
    let status = sts(&sim)["status"].clone();
    // OnDelete never completes a rollout: currentRevision stays behind.
    assert_eq!(
        (
            status["currentRevision"].as_str(),
            status["updatedReplicas"].as_i64(),
            status["currentReplicas"].as_i64()
        ),
        (Some(old.as_str()), Some(1), Some(1))
    );
}
