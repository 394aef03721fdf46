//! The PATCH formats on a live Deployment, with the patches kubectl and controllers send.

use serde_json::{Value, json};

use super::*;

fn live() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web", "tier": "frontend"},
            "finalizers": ["example.com/protect"]},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.27", "args": ["-g", "daemon off;"],
             "env": [{"name": "MODE", "value": "prod"}]},
            {"name": "log-shipper", "image": "fluent-bit:3.1"}
        ]}}}
    })
}

fn containers(patch: &Value) -> Value {
    json!({"spec": {"template": {"spec": {"containers": patch}}}})
}

#[track_caller]
fn case(patch: &Value, pointer: &str, want: &Value) {
    let out = strategic_merge_patch(&live(), patch).unwrap();
    assert_eq!(out.pointer(pointer), Some(want), "{patch}");
}

#[test]
fn strategic_merge_patch_merges_lists_by_their_merge_key() {
    let c = "/spec/template/spec/containers";
    case(
        &containers(&json!([{"name": "web", "image": "nginx:1.28"}])),
        c,
        &json!([
            {"name": "web", "image": "nginx:1.28", "args": ["-g", "daemon off;"], "env": [{"name": "MODE", "value": "prod"}]},
            {"name": "log-shipper", "image": "fluent-bit:3.1"}
        ]),
    );
    case(
        &containers(&json!([{"name": "log-shipper", "$patch": "delete"}])),
        c,
        &json!([{"name": "web", "image": "nginx:1.27", "args": ["-g", "daemon off;"], "env": [{"name": "MODE", "value": "prod"}]}]),
    );
    case(
        &containers(&json!([{"name": "web", "env": [{"name": "REGION", "value": "eu"}]}])),
        "/spec/template/spec/containers/0/env",
        &json!([{"name": "MODE", "value": "prod"}, {"name": "REGION", "value": "eu"}]),
    );
    case(
        &containers(
            &json!([{"name": "web", "env": [{"$patch": "replace"}, {"name": "ONLY", "value": "1"}]}]),
        ),
        "/spec/template/spec/containers/0/env",
        &json!([{"name": "ONLY", "value": "1"}]),
    );
    case(
        &containers(&json!([{"name": "web", "args": ["-v"]}])),
        "/spec/template/spec/containers/0/args",
        &json!(["-v"]),
    );
    case(
        &json!({"$setElementOrder/containers": [{"name": "web"}], "metadata": {"labels": {"tier": null}}}),
        "/metadata/labels",
        &json!({"app": "web"}),
    );
    case(
        &json!({"metadata": {"finalizers": ["example.com/cleanup"]}}),
        "/metadata/finalizers",
        &json!(["example.com/protect", "example.com/cleanup"]),
    );
    case(
        &json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/protect"]}}),
        "/metadata/finalizers",
        &json!([]),
    );
}

#[test]
fn retain_keys_drops_unlisted_fields() {
    let out =
        strategic_merge_patch(&live(), &json!({"spec": {"$retainKeys": ["template"]}})).unwrap();
    assert!(out["spec"].get("replicas").is_none());
    assert!(out["spec"].get("template").is_some());
}

#[test]
fn strategic_merge_patch_rejects_items_without_merge_key() {
    let err = strategic_merge_patch(&live(), &containers(&json!([{"image": "x"}]))).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"map {"image":"x"} does not contain declared merge key: name"#
    );
}

#[test]
fn merge_patch_replaces_lists_and_deletes_nulls() {
    let out = merge_patch(
        &live(),
        &json!({"metadata": {"labels": {"tier": null}}, "spec": {"template": {"spec": {"containers": []}}}}),
    );
    assert_eq!(out["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(out["spec"]["template"]["spec"]["containers"], json!([]));
    assert_eq!(out["spec"]["replicas"], 3);
}

#[test]
fn json_patch_applies_all_operations_or_none() {
    let ops = json!([
        {"op": "replace", "path": "/spec/replicas", "value": 5},
        {"op": "add", "path": "/metadata/labels/track", "value": "canary"},
        {"op": "remove", "path": "/spec/template/spec/containers/1"},
        {"op": "test", "path": "/metadata/name", "value": "web"}
    ]);
    let out = json_patch(&live(), &ops).unwrap();
    assert_eq!(out["spec"]["replicas"], 5);
    assert_eq!(out["metadata"]["labels"]["track"], "canary");
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let failing = json!([{"op": "replace", "path": "/spec/replicas", "value": 5}, {"op": "test", "path": "/metadata/name", "value": "api"}]);
    assert!(matches!(
        json_patch(&live(), &failing),
        Err(PatchError::JsonPatch(_))
    ));
    assert!(matches!(
        json_patch(&live(), &json!({"op": "add"})),
        Err(PatchError::InvalidJsonPatch(_))
    ));
}
