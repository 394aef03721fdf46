use super::*;
use serde_json::json;

/// A Deployment as the API server returns it: defaults filled in, status, managedFields.
fn live_deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "shop",
            "uid": "0b6f9b7e-5c1e-4a8e-9a55-1d6c0f3a2b10",
            "resourceVersion": "4711",
            "generation": 3,
            "creationTimestamp": "2026-12-01T10:00:00Z",
            "labels": {"app": "web"},
            "annotations": {
                "deployment.kubernetes.io/revision": "3",
                "deploy-action.io/timeout": "5m"
            },
            "managedFields": [{"manager": "deploy-action", "operation": "Apply",
                               "time": "2026-12-01T10:00:00Z"}]
        },
        "spec": {
            "replicas": 2,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst",
                    "containers": [
                        {"name": "web", "image": "ghcr.io/acme/web:1.4.0",
                         "imagePullPolicy": "IfNotPresent",
                         "args": ["--port", "8080"],
                         "env": [{"name": "LOG_LEVEL", "value": "info"},
                                 {"name": "DB_PASSWORD", "value": "hunter2-db"}],
                         "ports": [{"containerPort": 8080, "protocol": "TCP"}]},
                        {"name": "proxy", "image": "envoyproxy/envoy:v1.31.0",
                         "imagePullPolicy": "IfNotPresent"}
                    ]
                }
            }
        },
        "status": {"observedGeneration": 3, "replicas": 2, "readyReplicas": 2}
    })
}

fn fields(change: Change) -> Vec<(String, Option<String>, Option<String>)> {
    match change {
        Change::Changed { fields } => fields
            .into_iter()
            .map(|f| (f.path, f.before, f.after))
            .collect(),
        other => panic!("expected changed, got {other:?}"),
    }
}

#[expect(
    clippy::unnecessary_wraps,
    reason = "shorthand for the present sides of the expected (path, before, after) triples"
)]
fn s(text: &str) -> Option<String> {
    Some(text.to_owned())
}

#[test]
fn no_live_object_means_created() {
    assert_eq!(change(None, &live_deployment()), Change::Created);
}

#[test]
fn what_the_server_bumps_on_every_write_is_not_a_change() {
    let live = live_deployment();
    let mut planned = live.clone();
    planned["metadata"]["resourceVersion"] = json!("4712");
    planned["metadata"]["generation"] = json!(4);
    planned["metadata"]["managedFields"][0]["time"] = json!("2026-12-03T14:00:00Z");
    planned["status"] = json!({"observedGeneration": 4});
    planned["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = json!("4");
    assert_eq!(change(Some(&live), &planned), Change::Unchanged);
}

#[test]
fn containers_and_env_are_matched_by_name_not_position() {
    let live = live_deployment();
    let mut planned = live.clone();
    planned["spec"]["replicas"] = json!(3);
    let containers = planned["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap();
    containers.swap(0, 1);
    containers[1]["image"] = json!("ghcr.io/acme/web:1.5.0");
    containers[1]["env"][0]["value"] = json!("debug");
    assert_eq!(
        fields(change(Some(&live), &planned)),
        vec![
            ("spec.replicas".to_owned(), s("2"), s("3")),
            (
                "spec.template.spec.containers[name=web].image".to_owned(),
                s("\"ghcr.io/acme/web:1.4.0\""),
                s("\"ghcr.io/acme/web:1.5.0\""),
            ),
            (
                "spec.template.spec.containers[name=web].env[name=LOG_LEVEL].value".to_owned(),
                s("\"info\""),
                s("\"debug\""),
            ),
        ]
    );
}

#[test]
fn lists_without_names_compare_by_position_and_additions_show_whole_values() {
    let live = live_deployment();
    let mut planned = live.clone();
    let web = &mut planned["spec"]["template"]["spec"]["containers"][0];
    web["args"] = json!(["--port", "9090", "--verbose"]);
    web["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "FEATURE_X", "value": "on"}));
    planned["metadata"]["annotations"]
        .as_object_mut()
        .unwrap()
        .remove("deploy-action.io/timeout");
    assert_eq!(
        fields(change(Some(&live), &planned)),
        vec![
            (
                "metadata.annotations[\"deploy-action.io/timeout\"]".to_owned(),
                s("\"5m\""),
                None,
            ),
            (
                "spec.template.spec.containers[name=web].args[1]".to_owned(),
                s("\"8080\""),
                s("\"9090\""),
            ),
            (
                "spec.template.spec.containers[name=web].args[2]".to_owned(),
                None,
                s("\"--verbose\""),
            ),
            (
                "spec.template.spec.containers[name=web].env[name=FEATURE_X]".to_owned(),
                None,
                s("{\"name\":\"FEATURE_X\",\"value\":\"on\"}"),
            ),
        ]
    );
}

#[test]
fn secret_looking_env_values_never_appear_changed_or_added() {
    let live = live_deployment();
    let mut planned = live.clone();
    let web = &mut planned["spec"]["template"]["spec"]["containers"][0];
    web["env"][1]["value"] = json!("correct-horse");
    web["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "API_TOKEN", "value": "tok-123456"}));
    let changed = fields(change(Some(&live), &planned));
    assert_eq!(
        changed,
        vec![
            (
                "spec.template.spec.containers[name=web].env[name=DB_PASSWORD].value".to_owned(),
                s(HIDDEN),
                s(HIDDEN),
            ),
            (
                "spec.template.spec.containers[name=web].env[name=API_TOKEN]".to_owned(),
                None,
                s("{\"name\":\"API_TOKEN\",\"value\":\"(secret)\"}"),
            ),
        ]
    );
    let text = format!("{changed:?}");
    for secret in ["hunter2-db", "correct-horse", "tok-123456"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}

fn secret(data: &Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": "db", "namespace": "shop", "resourceVersion": "9"},
        "data": data,
    })
}

#[test]
fn a_secret_shows_which_keys_change_but_never_a_value() {
    let live = secret(&json!({"password": "aHVudGVyMg==", "user": "YXBw", "old": "eA=="}));
    let planned =
        secret(&json!({"password": "c3dvcmRmaXNo", "user": "YXBw", "url": "cG9zdGdyZXM6Ly8="}));
    assert_eq!(
        fields(change(Some(&live), &planned)),
        vec![
            ("data.password".to_owned(), s(HIDDEN), s(HIDDEN)),
            ("data.old".to_owned(), s(HIDDEN), None),
            ("data.url".to_owned(), None, s(HIDDEN)),
        ]
    );
    // All of the data appearing at once is still listed key by key.
    let bare = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                      "metadata": {"name": "db", "namespace": "shop"}});
    assert_eq!(
        fields(change(
            Some(&bare),
            &secret(&json!({"password": "aHVudGVyMg=="}))
        )),
        vec![("data.password".to_owned(), None, s(HIDDEN))]
    );
}

#[test]
fn configmap_keys_and_annotations_that_look_secret_are_hidden_references_are_not() {
    let cm = |data: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "app"}, "data": data})
    };
    let changed = fields(change(
        Some(&cm(json!({"api-key": "k1-long-value", "url": "https://a"}))),
        &cm(json!({"api-key": "k2-long-value", "url": "https://b"})),
    ));
    assert_eq!(
        changed[0],
        ("data.api-key".to_owned(), s(HIDDEN), s(HIDDEN))
    );
    assert_eq!(changed[1].1, s("\"https://a\""));

    let live = live_deployment();
    let mut planned = live.clone();
    planned["spec"]["template"]["spec"]["containers"][0]["env"][0] = json!({
        "name": "LOG_LEVEL",
        "valueFrom": {"secretKeyRef": {"name": "logging", "key": "level"}}
    });
    let changed = fields(change(Some(&live), &planned));
    let paths: Vec<&str> = changed.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        paths,
        [
            "spec.template.spec.containers[name=web].env[name=LOG_LEVEL].value",
            "spec.template.spec.containers[name=web].env[name=LOG_LEVEL].valueFrom",
        ]
    );
    assert_eq!(
        changed[1].2,
        s("{\"secretKeyRef\":{\"name\":\"logging\",\"key\":\"level\"}}")
    );
}

#[test]
fn kubectls_last_applied_copy_is_never_compared_or_shown() {
    let mut live = secret(&json!({"password": "aHVudGVyMg=="}));
    live["metadata"]["annotations"] = json!({
        "kubectl.kubernetes.io/last-applied-configuration":
            "{\"data\":{\"password\":\"aHVudGVyMg==\"}}"
    });
    let planned = secret(&json!({"password": "aHVudGVyMg=="}));
    assert_eq!(change(Some(&live), &planned), Change::Unchanged);
}

#[test]
fn long_values_are_cut() {
    let cm = |v: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "app"}, "data": {"script": v}})
    };
    let long = "x".repeat(1000);
    let changed = fields(change(Some(&cm("short")), &cm(&long)));
    let after = changed[0].2.as_deref().unwrap();
    assert_eq!(after.chars().count(), MAX_VALUE_CHARS);
    assert!(after.ends_with('…'));
}
