//! Apply and update ownership, checked against what a real API server does with the same
//! requests (kubectl, a deploy tool and controllers writing one object in turn).

use serde_json::{Value, json};

use super::test_fixtures::*;
use super::*;

#[test]
fn first_apply_records_managed_fields_in_the_real_format() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let want = r#"{"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:env":{"k:{\"name\":\"LOG\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"MODE\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}"#;
    let entries = live["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["fieldsV1"].to_string(), want);
    let mut header = entries[0].clone();
    header.as_object_mut().unwrap().shift_remove("fieldsV1");
    assert_eq!(
        header,
        json!({"manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1", "time": T1, "fieldsType": "FieldsV1"})
    );
    assert_eq!(live["spec"], kubectl_deployment()["spec"]);
    assert_eq!(live["metadata"]["name"], "web");
}

#[test]
fn reapplying_without_a_field_removes_it_from_the_object() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let mut smaller = deployment(None, "nginx:1.27", &env(&[("MODE", "prod")]));
    smaller["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .shift_remove("tier");
    let live = applied(Some(&live), &smaller, "kubectl", T2);

    assert_eq!(live["metadata"]["labels"], json!({"app": "web"}));
    assert!(live["spec"].get("replicas").is_none());
    assert_eq!(container(&live, "web")["env"], env(&[("MODE", "prod")]));
    assert!(!owns(&live, "kubectl", ".metadata.labels.tier"));
    assert!(!owns(&live, "kubectl", ".spec.replicas"));
    assert_eq!(live["metadata"]["managedFields"][0]["time"], T2);
}

#[test]
fn a_field_shared_with_another_applier_survives_when_one_drops_it() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let partial = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"tier": "frontend"}},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
    });
    let live = applied(Some(&live), &partial, "deploy-action", T2);
    assert!(
        owns(&live, "kubectl", ".metadata.labels.tier")
            && owns(&live, "deploy-action", ".metadata.labels.tier")
    );

    // Changing a value another applier holds is a conflict; appliers are named without a version.
    let bumped = deployment(
        Some(3),
        "nginx:1.28",
        &env(&[("MODE", "prod"), ("LOG", "info")]),
    );
    let err = apply(Some(&live), &bumped, &opts("kubectl", "apps/v1", T3)).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"Apply failed with 1 conflict: conflict with "deploy-action": .spec.template.spec.containers[name="web"].image"#
    );

    let mut without_tier = kubectl_deployment();
    without_tier["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .shift_remove("tier");
    let live = applied(Some(&live), &without_tier, "kubectl", T3);
    assert_eq!(live["metadata"]["labels"]["tier"], "frontend");
    assert!(!owns(&live, "kubectl", ".metadata.labels.tier"));
    assert!(owns(&live, "deploy-action", ".metadata.labels.tier"));
}

#[test]
fn conflict_with_an_updater_on_replicas_and_force_takes_it_over() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let mut scaled = live.clone();
    scaled["spec"]["replicas"] = json!(5);
    record_update(
        Some(&live),
        &mut scaled,
        "kubectl-edit",
        "apps/v1",
        T2,
        None,
    );
    assert!(!owns(&scaled, "kubectl", ".spec.replicas"));
    assert_eq!(
        fields(&scaled, "kubectl-edit"),
        json!({"f:spec": {"f:replicas": {}}})
    );

    let err = apply(
        Some(&scaled),
        &kubectl_deployment(),
        &opts("kubectl", "apps/v1", T3),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas"#
    );
    let ApplyError::Conflict(conflicts) = err else {
        panic!("not a conflict")
    };
    assert_eq!(
        conflicts[0].cause_message(),
        r#"conflict with "kubectl-edit" using apps/v1"#
    );

    // The same value is shared ownership, not a conflict.
    let same = deployment(
        Some(5),
        "nginx:1.27",
        &env(&[("MODE", "prod"), ("LOG", "info")]),
    );
    let shared = applied(Some(&scaled), &same, "kubectl", T3);
    assert!(
        owns(&shared, "kubectl", ".spec.replicas")
            && owns(&shared, "kubectl-edit", ".spec.replicas")
    );

    let forced = apply(
        Some(&scaled),
        &kubectl_deployment(),
        &ApplyOptions {
            force: true,
            ..opts("kubectl", "apps/v1", T3)
        },
    )
    .unwrap();
    assert_eq!(forced["spec"]["replicas"], 3);
    assert!(owns(&forced, "kubectl", ".spec.replicas"));
    let managers: Vec<&Value> = forced["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["manager"])
        .collect();
    assert_eq!(
        managers,
        [&json!("kubectl")],
        "kubectl-edit owned nothing else and is dropped"
    );
}

#[test]
fn objects_without_managed_fields_are_credited_to_before_first_apply() {
    let mut seeded = kubectl_deployment();
    seeded["spec"]["replicas"] = json!(2);
    let err = apply(
        Some(&seeded),
        &kubectl_deployment(),
        &opts("kubectl", "apps/v1", T1),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas"#
    );
    let live = applied(
        Some(&seeded),
        &deployment(Some(2), "nginx:1.27", &env(&[])),
        "kubectl",
        T1,
    );
    assert!(owns(
        &live,
        "before-first-apply",
        r#".spec.template.spec.containers[name="web"].env[name="LOG"].value"#
    ));
    assert_eq!(
        container(&live, "web")["env"],
        env(&[("MODE", "prod"), ("LOG", "info")])
    );
}

#[test]
fn several_conflicts_are_listed_per_manager() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let mut edited = live.clone();
    edited["spec"]["replicas"] = json!(1);
    edited["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:1.26");
    record_update(
        Some(&live),
        &mut edited,
        "kube-controller-manager",
        "apps/v1",
        T2,
        None,
    );
    let err = apply(
        Some(&edited),
        &kubectl_deployment(),
        &opts("kubectl", "apps/v1", T3),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Apply failed with 2 conflicts: conflicts with \"kube-controller-manager\" using apps/v1:\n\
         - .spec.replicas\n\
         - .spec.template.spec.containers[name=\"web\"].image"
    );
}

#[test]
fn status_is_ignored_when_the_kind_has_a_status_subresource() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let mut reported = live.clone();
    reported["status"] = json!({"replicas": 3, "readyReplicas": 3});
    record_update(
        Some(&live),
        &mut reported,
        "kube-controller-manager",
        "apps/v1",
        T2,
        Some("status"),
    );
    let kcm = reported["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kube-controller-manager")
        .cloned()
        .unwrap();
    assert_eq!(kcm["subresource"], "status");
    assert_eq!(
        kcm["fieldsV1"],
        json!({"f:status": {".": {}, "f:readyReplicas": {}, "f:replicas": {}}})
    );

    let mut with_status = kubectl_deployment();
    with_status["status"] = json!({"replicas": 99});
    let live = applied(Some(&reported), &with_status, "kubectl", T3);
    assert_eq!(live["status"], json!({"replicas": 3, "readyReplicas": 3}));
    assert!(fields(&live, "kubectl").get("f:status").is_none());

    let no_subresource = ApplyOptions {
        reset_status: false,
        ..opts("kubectl", "apps/v1", T3)
    };
    let err = apply(Some(&reported), &with_status, &no_subresource).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"Apply failed with 1 conflict: conflict with "kube-controller-manager" with subresource "status" using apps/v1: .status.replicas"#
    );
}

#[test]
fn create_gives_the_creator_every_field_it_sent_and_updates_transfer_them() {
    let mut cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "shop", "uid": "1f0e", "labels": {"app": "web"}},
        "data": {"a": "1"}
    });
    record_update(None, &mut cm, "kubectl-create", "v1", T1, None);
    assert_eq!(
        cm["metadata"]["managedFields"],
        json!([{"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}])
    );

    let mut edited = cm.clone();
    edited["data"] = json!({"a": "2", "b": "3"});
    record_update(Some(&cm), &mut edited, "kubectl-edit", "v1", T2, None);
    // `data` itself stays with its creator, printed `{}` now that it has no owned children.
    assert_eq!(
        fields(&edited, "kubectl-create"),
        json!({"f:data": {}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
    );
    assert_eq!(
        fields(&edited, "kubectl-edit"),
        json!({"f:data": {"f:a": {}, "f:b": {}}})
    );

    // A write that changes nothing records nothing.
    let mut again = edited.clone();
    record_update(Some(&edited), &mut again, "kubectl-replace", "v1", T3, None);
    assert_eq!(again, edited);
}

#[test]
fn updates_use_the_managed_fields_the_request_carries() {
    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "1"}});
    record_update(None, &mut cm, "kubectl-create", "v1", T1, None);
    let mut reset = cm.clone();
    reset["metadata"]["managedFields"] = json!([]);
    reset["data"]["b"] = json!("2");
    record_update(Some(&cm), &mut reset, "kubectl-edit", "v1", T2, None);
    let managers: Vec<&Value> = reset["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["manager"])
        .collect();
    assert_eq!(managers, [&json!("kubectl-edit")]);
}

#[test]
fn time_moves_only_when_the_object_changes() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let same = applied(Some(&live), &kubectl_deployment(), "kubectl", T2);
    assert_eq!(same, live);
}

#[track_caller]
fn invalid(body: &Value, want: &str) {
    let err = apply(None, body, &opts("kubectl", "apps/v1", T1)).unwrap_err();
    assert!(matches!(err, ApplyError::Invalid(_)));
    assert_eq!(
        err.to_string(),
        format!("invalid apply configuration: {want}")
    );
}

#[test]
fn configurations_that_cannot_be_typed_are_rejected() {
    let mut nameless = kubectl_deployment();
    nameless["spec"]["template"]["spec"]["containers"] = json!([{"image": "nginx"}]);
    invalid(
        &nameless,
        r#".spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn't have default value)"#,
    );
    let mut twice = kubectl_deployment();
    twice["spec"]["template"]["spec"]["containers"][0]["env"] =
        env(&[("MODE", "a"), ("MODE", "b")]);
    invalid(
        &twice,
        r#".spec.template.spec.containers[name="web"].env: duplicate entries for key [name="MODE"]"#,
    );
    invalid(
        &json!(["not", "an", "object"]),
        "the body must be a json object",
    );
}
