//! Claims bind at once (Immediate), on scheduling (WaitForFirstConsumer), never for an
//! unknown class, and are Lost when their volume goes.

use crate::Sim;
use crate::controllers::workloads::testkit::{edit, event_count, event_lines, sim, wait};
use crate::store::{DeleteOptions, ObjectKey};
use serde_json::{Value, json};

fn claim(name: &str, class: Option<&str>) -> Value {
    let mut pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "shop"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}});
    if let Some(c) = class {
        pvc["spec"]["storageClassName"] = json!(c);
    }
    pvc
}

fn pvc(sim: &Sim, name: &str) -> Value {
    sim.get("v1", "PersistentVolumeClaim", "shop", name)
        .expect("claim")
}

fn pv(sim: &Sim, name: &str) -> Option<Value> {
    sim.get("v1", "PersistentVolume", "", name)
}

#[tokio::test(start_paused = true)]
async fn immediate_claims_bind_at_once() {
    let sim = sim(2);
    let created = sim.create(claim("data", None)).unwrap();
    let pv_name = format!("pvc-{}", created["metadata"]["uid"].as_str().unwrap());
    wait(1.0).await;
    let bound = pvc(&sim, "data");
    assert_eq!(
        bound["status"],
        json!({"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}})
    );
    assert_eq!(
        bound["spec"]["storageClassName"], "standard",
        "the default class is filled in"
    );
    assert_eq!(bound["spec"]["volumeName"], pv_name.as_str());
    assert_eq!(
        bound["metadata"]["annotations"],
        json!({
        "pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
        "volume.beta.kubernetes.io/storage-provisioner": "kube-sim.io/local",
        "volume.kubernetes.io/storage-provisioner": "kube-sim.io/local"})
    );
    let volume = pv(&sim, &pv_name).expect("provisioned volume");
    assert_eq!(volume["status"]["phase"], "Bound");
    assert_eq!(volume["spec"]["claimRef"]["name"], "data");
    assert_eq!(volume["spec"]["persistentVolumeReclaimPolicy"], "Delete");
    assert_eq!(
        volume["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"],
        "kube-sim.io/local"
    );
    assert_eq!(
        event_lines(&sim, "shop", "data"),
        [
            "Normal ExternalProvisioning: Waiting for a volume to be created either by the external provisioner 'kube-sim.io/local' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
            "Normal Provisioning: External provisioner is provisioning volume for claim \"shop/data\"",
            &format!("Normal ProvisioningSucceeded: Successfully provisioned volume {pv_name}"),
        ]
    );

    // The volume vanishes (its finalizer forced away): the claim is Lost.
    sim.store
        .remove_now(&ObjectKey::new("", "persistentvolumes", "", &pv_name));
    wait(1.0).await;
    assert_eq!(pvc(&sim, "data")["status"], json!({"phase": "Lost"}));
    assert_eq!(
        event_lines(&sim, "shop", "data").last().unwrap(),
        "Warning ClaimLost: Bound claim has lost its PersistentVolume. Data on the volume is lost!"
    );
}

#[tokio::test(start_paused = true)]
async fn wait_for_first_consumer_binds_once_a_node_is_selected() {
    let sim = sim(2);
    sim.create(json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local-path"},
        "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer"})).unwrap();
    sim.create(claim("cache", Some("local-path"))).unwrap();
    wait(31.0).await;
    assert_eq!(pvc(&sim, "cache")["status"], json!({"phase": "Pending"}));
    assert_eq!(
        event_lines(&sim, "shop", "cache"),
        ["Normal WaitForFirstConsumer: waiting for first consumer to be created before binding"]
    );
    assert_eq!(
        event_count(&sim, "shop", "cache", "WaitForFirstConsumer"),
        3,
        "repeated every 15 s"
    );

    // The scheduler placed the consuming pod on sim-node-2.
    edit(&sim, "v1", "PersistentVolumeClaim", "shop", "cache", |c| {
        c["metadata"]["annotations"] = json!({"volume.kubernetes.io/selected-node": "sim-node-2"});
    });
    wait(1.0).await;
    let bound = pvc(&sim, "cache");
    assert_eq!(bound["status"]["phase"], "Bound");
    let volume = pv(&sim, bound["spec"]["volumeName"].as_str().unwrap()).unwrap();
    assert_eq!(
        volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"],
        json!(["sim-node-2"])
    );
    assert_eq!(volume["spec"]["storageClassName"], "local-path");

    // Deleting the claim releases the volume, which its reclaim policy deletes.
    let volume_name = volume["metadata"]["name"].as_str().unwrap().to_owned();
    sim.store
        .delete(
            &ObjectKey::new("", "persistentvolumeclaims", "shop", "cache"),
            DeleteOptions::default(),
        )
        .unwrap();
    wait(1.0).await;
    assert!(pv(&sim, &volume_name).is_none());
}

#[tokio::test(start_paused = true)]
async fn an_unknown_class_fails_until_it_exists_and_static_volumes_bind() {
    let sim = sim(1);
    sim.create(claim("reports", Some("fast-ssd"))).unwrap();
    wait(1.0).await;
    assert_eq!(pvc(&sim, "reports")["status"], json!({"phase": "Pending"}));
    assert_eq!(
        event_lines(&sim, "shop", "reports"),
        ["Warning ProvisioningFailed: storageclass.storage.k8s.io \"fast-ssd\" not found"]
    );
    sim.create(json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast-ssd"},
        "provisioner": "kube-sim.io/local", "volumeBindingMode": "Immediate"})).unwrap();
    wait(1.0).await;
    assert_eq!(pvc(&sim, "reports")["status"]["phase"], "Bound");

    // A pre-created volume of a class without provisioning serves a matching claim.
    sim.create(
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "nfs-archive"},
        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce", "ReadWriteMany"],
                 "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                 "nfs": {"server": "10.0.0.5", "path": "/exports/archive"}}}),
    )
    .unwrap();
    sim.create(claim("archive", Some(""))).unwrap();
    wait(1.0).await;
    let archive = pvc(&sim, "archive");
    assert_eq!(archive["spec"]["volumeName"], "nfs-archive");
    assert_eq!(
        archive["status"],
        json!({"phase": "Bound", "accessModes": ["ReadWriteOnce", "ReadWriteMany"], "capacity": {"storage": "10Gi"}})
    );
    assert_eq!(
        pv(&sim, "nfs-archive").unwrap()["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"],
        "yes"
    );
}
