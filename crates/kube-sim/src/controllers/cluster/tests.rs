//! Scenario tests of the cluster controllers: garbage collection of a deleted
//! Deployment's ReplicaSet and pods, namespace lifecycle, and CRD establishment.

use crate::controllers::apps::tests::harness::*;
use crate::store::{DeleteOptions, ObjectKey};
use serde_json::{Value, json};
use std::time::Duration;

fn cm(name: &str, owners: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "shop", "ownerReferences": owners},
           "data": {"app.properties": "color=blue"}})
}

#[tokio::test(start_paused = true)]
async fn deleting_a_deployment_collects_its_replica_set_and_pods() {
    let sim = sim();
    namespace(&sim, "shop");
    sim.create(deployment(
        "web",
        "registry.example.com/web:1.4.2",
        &json!({}),
    ))
    .unwrap();
    sleep_ms(1000).await;
    kubelet_tick(&sim.store, always);
    sleep_ms(1000).await;
    assert_eq!((replica_sets(&sim).len(), pods(&sim).len()), (1, 3));

    sim.store
        .delete(&deploy_key("web"), DeleteOptions::default())
        .unwrap();
    sleep_ms(150).await;
    assert!(
        replica_sets(&sim).is_empty(),
        "the ReplicaSet goes once its owner is gone"
    );
    sleep_ms(100).await;
    let terminating = pods(&sim);
    assert_eq!(terminating.len(), 3);
    assert!(
        terminating.iter().all(
            |p| p["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:02Z"
                && p["metadata"]["deletionGracePeriodSeconds"] == 30
        )
    );
    kubelet_tick(&sim.store, always);
    sleep_ms(1000).await;
    assert!(pods(&sim).is_empty());
    assert_eq!(
        events(&sim, "ReplicaSet")
            .iter()
            .filter(|e| e.starts_with("SuccessfulCreate"))
            .count(),
        3,
        "collected pods are not replaced"
    );
}

#[tokio::test(start_paused = true)]
async fn dangling_owner_references_are_dropped_or_collect_the_object() {
    let sim = sim();
    namespace(&sim, "shop");
    let owner = sim
        .create(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "owner", "namespace": "shop"}}))
        .unwrap();
    let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]});
    let gone = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "old", "uid": "0b4c1e5e-0000-4000-8000-000000000999"});
    let unknown = json!({"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "0b4c1e5e-0000-4000-8000-000000000998"});
    sim.create(cm("mixed", &json!([live.clone(), gone.clone()])))
        .unwrap();
    sim.create(cm("orphan", &json!([gone]))).unwrap();
    sim.create(cm("unresolvable", &json!([unknown.clone()])))
        .unwrap();
    sleep_ms(500).await;
    let key = |n: &str| ObjectKey::new("", "configmaps", "shop", n);
    assert_eq!(
        get(&sim, &key("mixed"))["metadata"]["ownerReferences"],
        json!([live])
    );
    assert!(sim.store.get(&key("orphan")).is_none());
    assert_eq!(
        get(&sim, &key("unresolvable"))["metadata"]["ownerReferences"],
        json!([unknown])
    );

    sim.store
        .delete(&key("owner"), DeleteOptions::default())
        .unwrap();
    sleep_ms(500).await;
    assert!(
        sim.store.get(&key("mixed")).is_none(),
        "re-checked when its owner is deleted"
    );
}

#[tokio::test(start_paused = true)]
async fn namespaces_become_active_get_a_default_service_account_and_terminate() {
    let sim = sim();
    sim.create(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "shop", "finalizers": ["example.com/hold"]}}))
        .unwrap();
    let ns_key = ObjectKey::new("", "namespaces", "", "shop");
    sleep_ms(500).await;
    let ns = get(&sim, &ns_key);
    assert_eq!(
        ns["metadata"]["labels"],
        json!({"kubernetes.io/metadata.name": "shop"})
    );
    assert_eq!(ns["spec"], json!({"finalizers": ["kubernetes"]}));
    assert_eq!(ns["status"], json!({"phase": "Active"}));
    assert!(
        sim.store
            .get(&ObjectKey::new("", "serviceaccounts", "shop", "default"))
            .is_some()
    );
    assert!(
        sim.store
            .get(&ObjectKey::new(
                "",
                "serviceaccounts",
                "kube-system",
                "default"
            ))
            .is_some()
    );

    sim.create(deployment(
        "web",
        "registry.example.com/web:1.4.2",
        &json!({"replicas": 1}),
    ))
    .unwrap();
    sim.create(cm("settings", &json!([]))).unwrap();
    sleep_ms(1000).await;
    kubelet_tick(&sim.store, always);
    sleep_ms(1000).await;
    sim.store.delete(&ns_key, DeleteOptions::default()).unwrap();
    sleep_ms(150).await;
    let ns = get(&sim, &ns_key);
    assert_eq!(ns["status"]["phase"], "Terminating");
    let t = "2026-01-01T00:00:02Z";
    assert_eq!(
        ns["status"]["conditions"],
        json!([
        {"type": "NamespaceDeletionDiscoveryFailure", "status": "False", "lastTransitionTime": t,
         "reason": "ResourcesDiscovered", "message": "All resources successfully discovered"},
        {"type": "NamespaceDeletionGroupVersionParsingFailure", "status": "False", "lastTransitionTime": t,
         "reason": "ParsedGroupVersions", "message": "All legacy kube types successfully parsed"},
        {"type": "NamespaceDeletionContentFailure", "status": "False", "lastTransitionTime": t,
         "reason": "ContentDeleted", "message": "All content successfully deleted, may be waiting on finalization"},
        {"type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": t,
         "reason": "SomeResourcesRemain", "message": "Some resources are remaining: pods. has 1 resource instances"},
        {"type": "NamespaceFinalizersRemaining", "status": "False", "lastTransitionTime": t,
         "reason": "ContentHasNoFinalizers", "message": "All content-preserving finalizers finished"}])
    );
    for (group, plural) in [
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("", "configmaps"),
        ("", "serviceaccounts"),
    ] {
        assert!(
            sim.store.list(group, plural, Some("shop")).0.is_empty(),
            "{plural} deleted"
        );
    }
    sleep_ms(2000).await;
    assert!(
        sim.store
            .get(&ObjectKey::new("", "serviceaccounts", "shop", "default"))
            .is_none(),
        "not recreated"
    );

    kubelet_tick(&sim.store, always);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ns = get(&sim, &ns_key);
    assert_eq!(ns["status"]["conditions"][3]["reason"], "ContentRemoved");
    assert_eq!(
        ns["status"]["conditions"][3]["message"],
        "All content successfully removed"
    );
    assert_eq!(ns["spec"], json!({}), "finalized");
    edit(&sim, &ns_key, |n| n["metadata"]["finalizers"] = json!([]));
    assert!(sim.store.get(&ns_key).is_none());
}

#[tokio::test(start_paused = true)]
async fn a_namespace_removed_outright_still_loses_its_content() {
    let sim = sim();
    namespace(&sim, "shop");
    sleep_ms(500).await;
    sim.create(cm("settings", &json!([]))).unwrap();
    sim.store
        .delete(
            &ObjectKey::new("", "namespaces", "", "shop"),
            DeleteOptions::default(),
        )
        .unwrap();
    sleep_ms(500).await;
    assert!(sim.store.list("", "configmaps", Some("shop")).0.is_empty());
    assert!(
        sim.store
            .list("", "serviceaccounts", Some("shop"))
            .0
            .is_empty()
    );
}

fn crd(plural: &str, singular: &str, kind: &str, short: &[&str]) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": plural, "singular": singular, "kind": kind, "listKind": format!("{kind}List"),
                           "shortNames": short},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                               "subresources": {"status": {}}}]}})
}

#[tokio::test(start_paused = true)]
async fn crds_are_established_and_served_and_conflicting_names_refused() {
    let sim = sim();
    sim.create(crd("widgets", "widget", "Widget", &["wd"]))
        .unwrap();
    let key = ObjectKey::new(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        "widgets.example.com",
    );
    sleep_ms(150).await;
    let installing = get(&sim, &key)["status"].clone();
    assert_eq!(
        installing["conditions"][1],
        json!({"type": "Established", "status": "False",
        "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Installing", "message": "the initial names have been accepted"})
    );
    assert!(
        sim.registry.by_kind("example.com/v1", "Widget").is_none(),
        "not served before Established"
    );

    sleep_ms(200).await;
    let t0 = "2026-01-01T00:00:00Z";
    assert_eq!(
        get(&sim, &key)["status"],
        json!({
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "lastTransitionTime": t0, "reason": "NoConflicts", "message": "no conflicts found"},
            {"type": "Established", "status": "True", "lastTransitionTime": t0, "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted"}],
        "acceptedNames": {"plural": "widgets", "singular": "widget", "shortNames": ["wd"], "kind": "Widget", "listKind": "WidgetList"},
        "storedVersions": ["v1"]})
    );
    let served = sim
        .registry
        .by_kind("example.com/v1", "Widget")
        .expect("served once Established");
    assert_eq!(
        (served.plural.as_str(), served.has_status()),
        ("widgets", true)
    );

    // A CRD whose plural another CRD of the group already uses as its singular.
    sim.create(crd("widget", "widgetthing", "WidgetThing", &[]))
        .unwrap();
    let conflicting = ObjectKey::new(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "",
        "widget.example.com",
    );
    sleep_ms(500).await;
    let status = get(&sim, &conflicting)["status"].clone();
    assert_eq!(
        status["conditions"],
        json!([
        {"type": "NamesAccepted", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z",
         "reason": "PluralConflict", "message": "\"widget\" is already in use"},
        {"type": "Established", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z",
         "reason": "NotAccepted", "message": "not all names are accepted"}])
    );
    assert_eq!(
        status["acceptedNames"],
        json!({"singular": "widgetthing", "kind": "WidgetThing", "listKind": "WidgetThingList"})
    );
    assert!(
        sim.registry
            .by_kind("example.com/v1", "WidgetThing")
            .is_none()
    );

    let widget = ObjectKey::new("example.com", "widgets", "default", "blue");
    sim.store
        .create(
            &widget,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "blue"}}),
        )
        .unwrap();
    sim.store.delete(&key, DeleteOptions::default()).unwrap();
    sleep_ms(500).await;
    assert!(
        sim.registry.by_kind("example.com/v1", "Widget").is_none(),
        "no longer served"
    );
    assert!(
        sim.store.get(&widget).is_none(),
        "its custom resources are deleted"
    );
    assert_eq!(
        get(&sim, &conflicting)["status"]["conditions"][1]["status"],
        "True",
        "the freed name is accepted"
    );
    assert!(
        sim.registry
            .by_kind("example.com/v1", "WidgetThing")
            .is_some()
    );
}
