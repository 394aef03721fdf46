//! How lists and maps merge under apply: keyed lists per item, sets per value, maps per key,
//! with each manager keeping what it owns.

use serde_json::{Value, json};

use super::test_fixtures::*;
use super::*;

#[test]
fn containers_merge_by_name_and_keep_another_managers_container() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let sidecar = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"template": {"spec": {"containers": [{"name": "log-shipper", "image": "fluent-bit:3.1"}]}}}
    });
    let live = applied(Some(&live), &sidecar, "deploy-action", T2);
    let bumped = deployment(
        Some(3),
        "nginx:1.28",
        &env(&[("MODE", "prod"), ("LOG", "info")]),
    );
    let live = applied(Some(&live), &bumped, "kubectl", T3);

    let names: Vec<&Value> = live["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(names, [&json!("web"), &json!("log-shipper")]);
    assert_eq!(container(&live, "web")["image"], "nginx:1.28");
    assert_eq!(container(&live, "log-shipper")["image"], "fluent-bit:3.1");

    // The sidecar goes once its only applier stops sending it.
    let mut label_only = sidecar.clone();
    label_only["spec"] = json!({"template": {"metadata": {"labels": {"sidecar": "off"}}}});
    let live = applied(Some(&live), &label_only, "deploy-action", T3);
    assert_eq!(container(&live, "log-shipper"), Value::Null);
    assert_eq!(container(&live, "web")["image"], "nginx:1.28");
}

#[test]
fn env_merges_by_name() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let region = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "env": [{"name": "REGION", "value": "eu"}]}]}}}
    });
    let live = applied(Some(&live), &region, "deploy-action", T2);
    assert_eq!(
        container(&live, "web")["env"],
        env(&[("MODE", "prod"), ("LOG", "info"), ("REGION", "eu")])
    );

    let live = applied(
        Some(&live),
        &deployment(Some(3), "nginx:1.27", &env(&[("MODE", "prod")])),
        "kubectl",
        T3,
    );
    assert_eq!(
        container(&live, "web")["env"],
        env(&[("MODE", "prod"), ("REGION", "eu")])
    );
}

#[test]
fn container_ports_key_on_port_and_defaulted_protocol() {
    let live = applied(None, &kubectl_deployment(), "kubectl", T1);
    let ports = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "ports": [
            {"containerPort": 80, "protocol": "TCP", "name": "http"},
            {"containerPort": 53, "protocol": "UDP", "name": "dns"}
        ]}]}}}
    });
    let live = applied(Some(&live), &ports, "deploy-action", T2);
    assert_eq!(
        container(&live, "web")["ports"],
        json!([{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP", "name": "dns"}])
    );
    let web = &fields(&live, "deploy-action")["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"web\"}"];
    assert_eq!(
        web["f:ports"]["k:{\"containerPort\":80,\"protocol\":\"TCP\"}"],
        json!({".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {}})
    );
    assert!(owns(
        &live,
        "kubectl",
        r#".spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]"#
    ));
}

#[test]
fn service_ports_key_on_port_and_protocol() {
    let o = |m| opts(m, "v1", T1);
    let live = apply(None, &service(8080), &o("kubectl")).unwrap();
    let mut edited = live.clone();
    edited["spec"]["ports"][0]["targetPort"] = json!(9090);
    record_update(Some(&live), &mut edited, "kubectl-edit", "v1", T2, None);
    let err = apply(Some(&edited), &service(8080), &o("kubectl")).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .spec.ports[port=80,protocol="TCP"].targetPort"#
    );
}

#[test]
fn configmap_data_keys_are_owned_one_by_one() {
    let cm = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "shop"}, "data": data});
    let o = |m| opts(m, "v1", T1);
    let live = apply(None, &cm(json!({"a": "1", "b": "2"})), &o("kubectl")).unwrap();
    let live = apply(Some(&live), &cm(json!({"c": "3"})), &o("deploy-action")).unwrap();
    let live = apply(Some(&live), &cm(json!({"a": "1"})), &o("kubectl")).unwrap();
    assert_eq!(live["data"], json!({"a": "1", "c": "3"}));
    assert_eq!(fields(&live, "kubectl"), json!({"f:data": {"f:a": {}}}));
}

#[test]
fn finalizers_are_a_set() {
    let mut body = kubectl_deployment();
    body["metadata"]["finalizers"] = json!(["example.com/protect"]);
    let live = applied(None, &body, "kubectl", T1);
    let mut finalized = live.clone();
    finalized["metadata"]["finalizers"] = json!(["example.com/protect", "example.com/cleanup"]);
    record_update(
        Some(&live),
        &mut finalized,
        "cleanup-controller",
        "apps/v1",
        T2,
        None,
    );
    assert_eq!(
        fields(&live, "kubectl")["f:metadata"]["f:finalizers"],
        json!({"v:\"example.com/protect\"": {}})
    );
    assert_eq!(
        fields(&finalized, "cleanup-controller"),
        json!({"f:metadata": {"f:finalizers": {"v:\"example.com/cleanup\"": {}}}})
    );

    let live = applied(Some(&finalized), &kubectl_deployment(), "kubectl", T3);
    assert_eq!(
        live["metadata"]["finalizers"],
        json!(["example.com/cleanup"])
    );
}
