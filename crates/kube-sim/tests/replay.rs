//! Timeline replay as a client sees it: recorded objects stored literally (generation,
//! deletionTimestamp, finalizers), CRDs from the timeline served at once, and timelines
//! kube-sim cannot replay refused when the scenario is loaded.

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::{Discovery, Scope};
use kube_sim::{Scenario, Sim};
use serde_json::{Value, json};
use std::time::Duration;

fn deployment(generation: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "generation": generation,
                     "uid": "3f9b2c1e-7a4d-4e8b-9c2f-1d5e6a7b8c9d",
                     "creationTimestamp": "2025-11-20T10:00:00Z"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "web:1"}]}}},
        "status": {"observedGeneration": generation - 1, "replicas": 1}})
}

fn crd(established: bool) -> Value {
    let status = if established { "True" } else { "False" };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "certificates.cert.example.io", "generation": 1},
        "spec": {"group": "cert.example.io", "scope": "Namespaced",
                 "names": {"kind": "Certificate", "plural": "certificates",
                           "singular": "certificate", "listKind": "CertificateList",
                           "shortNames": ["cert"]},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}]},
        "status": {"conditions": [
                       {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                        "message": "no conflicts found",
                        "lastTransitionTime": "2025-11-20T10:00:00Z"},
                       {"type": "Established", "status": status, "reason": "InitialNamesAccepted",
                        "message": "the initial names have been accepted",
                        "lastTransitionTime": "2025-11-20T10:00:00Z"}],
                   "acceptedNames": {"kind": "Certificate", "plural": "certificates"},
                   "storedVersions": ["v1"]}})
}

fn certificate(name: &str) -> Value {
    json!({"apiVersion": "cert.example.io/v1", "kind": "Certificate",
        "metadata": {"name": name, "namespace": "default", "generation": 3},
        "spec": {"secretName": format!("{name}-tls")},
        "status": {"observedGeneration": 3, "conditions": [{"type": "Ready", "status": "True",
            "reason": "Ready", "lastTransitionTime": "2025-11-20T10:01:00Z"}]}})
}

#[tokio::test(start_paused = true)]
async fn a_replayed_object_keeps_its_recorded_generation() {
    let sim = Sim::start(
        Scenario::builder()
            .at(Duration::ZERO, vec![deployment(7)])
            .at(Duration::from_secs(5), vec![deployment(9)])
            .build(),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let api: Api<DynamicObject> = Api::namespaced_with(
        sim.client(),
        "default",
        &kube::discovery::ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&()),
    );
    let web = api.get("web").await.unwrap();
    assert_eq!(web.metadata.generation, Some(7));
    assert_eq!(
        web.metadata.uid.as_deref(),
        Some("3f9b2c1e-7a4d-4e8b-9c2f-1d5e6a7b8c9d")
    );
    assert_eq!(web.data["status"]["observedGeneration"], 6);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let web = api.get("web").await.unwrap();
    assert_eq!(
        web.metadata.generation,
        Some(9),
        "a later entry is literal too"
    );
    assert_eq!(
        web.metadata.uid.as_deref(),
        Some("3f9b2c1e-7a4d-4e8b-9c2f-1d5e6a7b8c9d")
    );
}

#[tokio::test(start_paused = true)]
async fn a_terminating_object_with_finalizers_stays_until_they_clear() {
    let terminating = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "held", "namespace": "default",
                     "deletionTimestamp": "2025-11-20T10:05:00Z",
                     "deletionGracePeriodSeconds": 0,
                     "finalizers": ["example.io/cleanup"]},
        "data": {"k": "v"}});
    let sim = Sim::start(
        Scenario::builder()
            .at(Duration::ZERO, vec![terminating.clone()])
            .build(),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let api: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(sim.client(), "default");
    let held = api.get("held").await.unwrap();
    let deleted_at = held.metadata.deletion_timestamp.as_ref().unwrap();
    assert_eq!(deleted_at.0.to_string(), "2025-11-20T10:05:00Z");
    assert_eq!(held.metadata.deletion_grace_period_seconds, Some(0));
    assert_eq!(
        held.metadata.finalizers.as_deref(),
        Some(&["example.io/cleanup".to_owned()][..])
    );
    // Still there after a while: nothing but clearing the finalizers removes it.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(api.get("held").await.is_ok());
    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    let err = api.get("held").await.unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 404),
        "{err:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_later_entry_clearing_the_finalizers_removes_a_terminating_object() {
    let with = |finalizers: Value| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "namespace": "default",
                         "deletionTimestamp": "2025-11-20T10:05:00Z",
                         "finalizers": finalizers},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Bound"}})
    };
    let sim = Sim::start(
        Scenario::builder()
            .at(
                Duration::ZERO,
                vec![with(json!(["kubernetes.io/pvc-protection"]))],
            )
            .at(Duration::from_secs(10), vec![with(json!([]))])
            .build(),
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    let pvc = sim.get("v1", "PersistentVolumeClaim", "default", "data");
    assert_eq!(
        pvc.unwrap()["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(
        sim.get("v1", "PersistentVolumeClaim", "default", "data")
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn an_established_crd_from_the_timeline_is_served_at_once() {
    // The custom resource comes first in the entry: CRDs are stored first regardless.
    let sim = Sim::start(
        Scenario::builder()
            .at(Duration::ZERO, vec![certificate("web"), crd(true)])
            .at(Duration::from_secs(3), vec![certificate("api")])
            .build(),
    );
    tokio::time::sleep(Duration::from_millis(10)).await;
    for aggregated in [false, true] {
        let discovery = Discovery::new(sim.client());
        let discovery = if aggregated {
            discovery.run_aggregated().await
        } else {
            discovery.run().await
        }
        .unwrap();
        let group = discovery
            .get("cert.example.io")
            .unwrap_or_else(|| panic!("group not discovered (aggregated: {aggregated})"));
        let (ar, caps) = group.recommended_kind("Certificate").unwrap();
        assert_eq!(
            (ar.plural.as_str(), ar.version.as_str()),
            ("certificates", "v1")
        );
        assert_eq!(caps.scope, Scope::Namespaced);
    }
    let discovery = Discovery::new(sim.client()).run().await.unwrap();
    let (ar, _) = discovery
        .get("cert.example.io")
        .unwrap()
        .recommended_kind("Certificate")
        .unwrap();
    let api: Api<DynamicObject> = Api::namespaced_with(sim.client(), "default", &ar);
    let web = api.get("web").await.unwrap();
    assert_eq!(web.metadata.generation, Some(3));
    assert_eq!(web.data["status"]["conditions"][0]["type"], "Ready");
    tokio::time::sleep(Duration::from_secs(5)).await;
    let names: Vec<String> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert_eq!(names, ["api", "web"]);
    // Stored literally: the CRD controller left the recorded status alone.
    let stored = sim
        .get(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "",
            "certificates.cert.example.io",
        )
        .unwrap();
    assert_eq!(stored["status"], crd(true)["status"]);
}

#[tokio::test(start_paused = true)]
async fn a_crd_that_is_not_established_is_stored_but_not_served() {
    let sim = Sim::start(
        Scenario::builder()
            .at(Duration::ZERO, vec![crd(false)])
            .build(),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let discovery = Discovery::new(sim.client()).run().await.unwrap();
    assert!(discovery.get("cert.example.io").is_none());
    let stored = sim.get(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "",
        "certificates.cert.example.io",
    );
    assert_eq!(
        stored.unwrap()["status"]["conditions"][1]["status"],
        "False"
    );
}

fn refusal(timeline: &str) -> String {
    let text = format!("nodes: 1\ntimeline:\n{timeline}");
    Scenario::from_yaml("s.yaml", &text)
        .expect_err("the timeline should be refused")
        .to_string()
}

#[test]
fn timelines_kube_sim_cannot_replay_are_refused_when_loaded() {
    let err = refusal(
        "  - at: 0s\n    apply:\n      - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n  \
         - at: 2s\n    apply:\n      - {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n      \
         - {apiVersion: cert.example.io/v1, kind: Certificate, metadata: {name: web, namespace: shop}}\n",
    );
    assert_eq!(
        err,
        "s.yaml:2:1: timeline entry 2 (at 2s), object 2 (Certificate shop/web): kind \
         Certificate of cert.example.io/v1 is not served: it is not built in and no \
         CustomResourceDefinition with condition Established=True earlier in the timeline \
         (or in this entry) defines it"
    );

    let err = refusal(
        "  - at: 1s\n    apply:\n      - {apiVersion: v1, kind: ConfigMap, metadata: {namespace: x}}\n",
    );
    assert!(
        err.contains(
            "timeline entry 1 (at 1s), object 1 (ConfigMap x/?): metadata.name is missing"
        ),
        "{err}"
    );
    let err = refusal(
        "  - at: 1s\n    apply:\n      - {apiVersion: v1, kind: Pod, metadata: {name: p, generation: -1}}\n",
    );
    assert!(
        err.contains("object 1 (Pod p): metadata.generation must be a non-negative integer"),
        "{err}"
    );
    let err = refusal(
        "  - at: 1s\n    apply:\n      - {apiVersion: v1, kind: Pod, metadata: {name: p, deletionTimestamp: yesterday}}\n",
    );
    assert!(
        err.contains("deletionTimestamp must be an RFC 3339 time"),
        "{err}"
    );
    let err = refusal(
        "  - at: 1s\n    apply:\n      - {apiVersion: v1, kind: Pod, metadata: {name: p}, status: Running}\n",
    );
    assert!(err.contains("(Pod p): status must be a mapping"), "{err}");
    let err = refusal("  - at: 1s\n    apply:\n      - [not, an, object]\n");
    assert!(err.contains("object 1 (? ?): not a mapping"), "{err}");
}

#[test]
fn a_crd_that_is_not_established_does_not_make_its_kind_replayable() {
    let crd = serde_json::to_string(&crd(false)).unwrap();
    let cert = serde_json::to_string(&certificate("web")).unwrap();
    let err = refusal(&format!(
        "  - at: 0s\n    apply:\n      - {crd}\n      - {cert}\n"
    ));
    assert!(
        err.contains("object 2 (Certificate default/web): kind Certificate of cert.example.io/v1 is not served"),
        "{err}"
    );
    // Established: the same entry replays.
    let crd = serde_json::to_string(&self::crd(true)).unwrap();
    let text = format!("timeline:\n  - at: 0s\n    apply:\n      - {cert}\n      - {crd}\n");
    Scenario::from_yaml("ok.yaml", &text).unwrap();
}

#[test]
#[should_panic(
    expected = "kube-sim scenario refused: timeline entry 1 (at 0s), object 1 (Widget default/w)"
)]
fn the_builder_refuses_what_it_cannot_replay() {
    let _ = Scenario::builder()
        .at(
            Duration::ZERO,
            vec![json!({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "w", "namespace": "default"}})],
        )
        .build();
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "kube-sim scenario refused: timeline entry 1 (at 0s), object 1 (? w)")]
async fn a_hand_assembled_scenario_is_checked_when_the_sim_starts() {
    let mut scenario = Scenario::default();
    scenario.timeline.push(kube_sim::scenario::TimelineStep {
        at: Duration::ZERO,
        apply: vec![json!({"apiVersion": "v1", "metadata": {"name": "w"}})],
        delete: Vec::new(),
    });
    let _sim = Sim::start(scenario);
}

#[test]
fn kube_sim_check_exits_2_naming_the_entry_and_object() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.yaml");
    std::fs::write(
        &path,
        "timeline:\n  - at: 5s\n    apply:\n      - {apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kube-sim"))
        .arg("check")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.yaml:1:1: timeline entry 1 (at 5s), object 1 (Widget w): kind Widget of example.com/v1 is not served"),
        "{stderr}"
    );
}
