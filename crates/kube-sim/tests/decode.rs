//! Strict decoding of built-in kinds, and custom resources held to their CRD's schema, over
//! HTTP: status codes, Status bodies and Warning headers as kube-apiserver 1.33 answers
//! them, for create, update, patch and apply, in dry run too.

use http_body_util::BodyExt;
use kube_sim::{Scenario, Sim};
use serde_json::{Value, json};

struct Answer {
    code: u16,
    body: Value,
    warnings: Vec<String>,
}

async fn send(sim: &Sim, method: &str, uri: &str, content_type: &str, body: &Value) -> Answer {
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(serde_json::to_vec(body).unwrap())
        .unwrap();
    let resp = sim.client().send(request.map(Into::into)).await.unwrap();
    let code = resp.status().as_u16();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    Answer {
        code,
        body: serde_json::from_slice(&bytes).unwrap(),
        warnings,
    }
}

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn deployment(spec_extra: &Value) -> Value {
    let mut spec = json!({
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "web", "image": "nginx"}]}}
    });
    for (k, v) in spec_extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "default"}, "spec": spec})
}

#[track_caller]
fn assert_status(a: &Answer, code: u16, reason: Option<&str>, message: &str) {
    assert_eq!(a.code, code, "{}", a.body);
    assert_eq!(a.body["kind"], "Status");
    assert_eq!(a.body["apiVersion"], "v1");
    assert_eq!(a.body["status"], "Failure");
    assert_eq!(a.body["code"], code);
    assert_eq!(a.body.get("reason").and_then(Value::as_str), reason);
    assert_eq!(a.body["message"], message);
}

const REPLICAS_TYPE_ERROR: &str = "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32";

#[tokio::test(start_paused = true)]
async fn create_and_update_refuse_a_type_error_with_400() {
    let sim = Sim::start(Scenario::default());
    let bad = deployment(&json!({"replicas": "two"}));
    for uri in [DEPLOYMENTS.to_owned(), format!("{DEPLOYMENTS}?dryRun=All")] {
        let a = send(&sim, "POST", &uri, "application/json", &bad).await;
        assert_status(&a, 400, Some("BadRequest"), REPLICAS_TYPE_ERROR);
    }
    assert!(sim.get("apps/v1", "Deployment", "default", "web").is_none());

    let good = deployment(&json!({"replicas": 2}));
    let a = send(&sim, "POST", DEPLOYMENTS, "application/json", &good).await;
    assert_eq!(a.code, 201, "{}", a.body);
    let a = send(
        &sim,
        "PUT",
        &format!("{DEPLOYMENTS}/web"),
        "application/json",
        &bad,
    )
    .await;
    assert_status(&a, 400, Some("BadRequest"), REPLICAS_TYPE_ERROR);
    let stored = sim.get("apps/v1", "Deployment", "default", "web").unwrap();
    assert_eq!(stored["spec"]["replicas"], 2);
}

#[tokio::test(start_paused = true)]
async fn configmap_data_as_a_list_is_refused() {
    let sim = Sim::start(Scenario::default());
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "listy"}, "data": ["a", "b"]});
    let a = send(
        &sim,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        &cm,
    )
    .await;
    assert_status(
        &a,
        400,
        Some("BadRequest"),
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string",
    );
    assert!(sim.get("v1", "ConfigMap", "default", "listy").is_none());
}

#[tokio::test(start_paused = true)]
async fn server_side_apply_refuses_type_errors_and_unknown_fields_with_500() {
    let sim = Sim::start(Scenario::default());
    let before = sim.store.current_rv();
    let apply = format!("{DEPLOYMENTS}/web?fieldManager=test");
    let dry = format!("{apply}&dryRun=All");
    for uri in [&dry, &apply] {
        let a = send(
            &sim,
            "PATCH",
            uri,
            "application/apply-patch+yaml",
            &deployment(&json!({"replicas": "two"})),
        )
        .await;
        assert_status(
            &a,
            500,
            None,
            "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or float), got string",
        );
        // Undeclared fields fail the typed conversion whatever fieldValidation says.
        let ignore = format!("{uri}&fieldValidation=Ignore");
        let a = send(
            &sim,
            "PATCH",
            &ignore,
            "application/apply-patch+yaml",
            &deployment(&json!({"replica": 2})),
        )
        .await;
        assert_status(
            &a,
            500,
            None,
            "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replica: field not declared in schema",
        );
    }
    let both = deployment(&json!({"replicas": "two", "paused": "yes"}));
    let a = send(&sim, "PATCH", &dry, "application/apply-patch+yaml", &both).await;
    // Every error is listed (how structured-merge-diff prints the bad value is not checked).
    let message = a.body["message"].as_str().unwrap();
    assert!(
        message.starts_with("failed to create typed patch object (default/web; apps/v1, Kind=Deployment): errors:\n  .spec.replicas: expected numeric (int or float), got string\n  .spec.paused: expected boolean, got "),
        "{message}"
    );
    assert_eq!(
        sim.store.current_rv(),
        before,
        "a refused apply stored something"
    );
}

#[tokio::test(start_paused = true)]
async fn field_validation_decides_what_unknown_fields_do_on_create() {
    let sim = Sim::start(Scenario::default());
    let typo = deployment(&json!({"replica": 3}));

    let a = send(
        &sim,
        "POST",
        &format!("{DEPLOYMENTS}?fieldValidation=Strict"),
        "application/json",
        &typo,
    )
    .await;
    assert_status(
        &a,
        400,
        Some("BadRequest"),
        "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replica\"",
    );

    // No fieldValidation is Warn: accepted, the field dropped, one warning per field.
    let a = send(
        &sim,
        "POST",
        &format!("{DEPLOYMENTS}?dryRun=All"),
        "application/json",
        &typo,
    )
    .await;
    assert_eq!(a.code, 201, "{}", a.body);
    assert_eq!(a.warnings, [r#"299 - "unknown field \"spec.replica\"""#]);
    assert!(a.body["spec"].get("replica").is_none());

    let a = send(
        &sim,
        "POST",
        &format!("{DEPLOYMENTS}?fieldValidation=Ignore"),
        "application/json",
        &typo,
    )
    .await;
    assert_eq!(a.code, 201, "{}", a.body);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    let stored = sim.get("apps/v1", "Deployment", "default", "web").unwrap();
    assert!(stored["spec"].get("replica").is_none(), "{stored}");
}

#[tokio::test(start_paused = true)]
async fn a_merge_patch_that_breaks_the_type_is_invalid() {
    let sim = Sim::start(Scenario::default());
    let a = send(
        &sim,
        "POST",
        DEPLOYMENTS,
        "application/json",
        &deployment(&json!({"replicas": 1})),
    )
    .await;
    assert_eq!(a.code, 201, "{}", a.body);
    let a = send(
        &sim,
        "PATCH",
        &format!("{DEPLOYMENTS}/web"),
        "application/merge-patch+json",
        &json!({"spec": {"replicas": "two"}}),
    )
    .await;
    assert_eq!(a.code, 422, "{}", a.body);
    assert_eq!(a.body["reason"], "Invalid");
    let message = a.body["message"].as_str().unwrap();
    assert!(
        message.starts_with(" \"\" is invalid: patch: Invalid value: \"{"),
        "{message}"
    );
    assert!(
        message.ends_with("json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"),
        "{message}"
    );
    assert_eq!(a.body["details"]["causes"][0]["field"], "patch");
    let stored = sim.get("apps/v1", "Deployment", "default", "web").unwrap();
    assert_eq!(stored["spec"]["replicas"], 1);
}

#[tokio::test(start_paused = true)]
async fn custom_resources_are_not_decoded_against_a_built_in_type() {
    let sim = Sim::start(Scenario::default());
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    });
    let a = send(
        &sim,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "application/json",
        &crd,
    )
    .await;
    assert_eq!(a.code, 201, "{}", a.body);
    sim.settle(std::time::Duration::from_secs(1)).await;
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                        "metadata": {"name": "w"}, "spec": {"replicas": "two"}});
    let a = send(
        &sim,
        "POST",
        "/apis/example.com/v1/namespaces/default/widgets",
        "application/json",
        &widget,
    )
    .await;
    assert_eq!(a.code, 201, "{}", a.body);
}

/// A CRD whose Widgets have a typed, required, enumerated and ruled spec, and a status
/// subresource.
fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.acme.io"},
        "spec": {"group": "acme.io", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                   "subresources": {"status": {}},
                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                     "spec": {"type": "object", "required": ["name"],
                       "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "too big"}],
                       "properties": {"name": {"type": "string"}, "size": {"type": "integer"},
                                      "mode": {"type": "string", "enum": ["safe", "fast"]}}},
                     "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]}
    })
}

const WIDGETS: &str = "/apis/acme.io/v1/namespaces/default/widgets";

#[tokio::test(start_paused = true)]
async fn custom_resources_are_held_to_their_crd_schema() {
    let sim = Sim::start(Scenario::default());
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let a = send(&sim, "POST", crds, "application/json", &widget_crd()).await;
    assert_eq!(a.code, 201, "{}", a.body);
    sim.settle(std::time::Duration::from_secs(1)).await;
    let widget = |spec: Value| {
        json!({"apiVersion": "acme.io/v1", "kind": "Widget",
               "metadata": {"name": "blue"}, "spec": spec, "status": {"ready": "no"}})
    };
    let bad = widget(json!({"size": "string"}));
    let apply = format!("{WIDGETS}/blue?fieldManager=test&dryRun=All");
    for (method, uri, content_type) in [
        ("POST", WIDGETS.to_owned(), "application/json"),
        ("POST", format!("{WIDGETS}?dryRun=All"), "application/json"),
        ("PATCH", apply, "application/apply-patch+yaml"),
    ] {
        let a = send(&sim, method, &uri, content_type, &bad).await;
        assert_status(
            &a,
            422,
            Some("Invalid"),
            "Widget.acme.io \"blue\" is invalid: [spec.name: Required value, spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"]",
        );
        assert_eq!(
            a.body["details"],
            json!({"name": "blue", "group": "acme.io", "kind": "Widget", "causes": [
                {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.name"},
                {"reason": "FieldValueInvalid", "field": "spec.size",
                 "message": "Invalid value: \"string\": spec.size in body must be of type integer: \"string\""}]}),
            "{method} {uri}"
        );
    }
    assert!(sim.get("acme.io/v1", "Widget", "default", "blue").is_none());

    // The status is the server's to set: dropped, not validated. An unknown field is pruned
    // with a warning.
    let good = widget(json!({"name": "b", "size": 3, "sise": 4}));
    let a = send(&sim, "POST", WIDGETS, "application/json", &good).await;
    assert_eq!(a.code, 201, "{}", a.body);
    assert_eq!(a.warnings, ["299 - \"unknown field \\\"spec.sise\\\"\""]);
    assert_eq!(a.body["spec"], json!({"name": "b", "size": 3}));
    assert!(a.body.get("status").is_none(), "{}", a.body);

    // A merge patch is held to the schema as the object it makes: one cause, no brackets.
    let patch = json!({"spec": {"mode": "wild"}});
    let uri = format!("{WIDGETS}/blue");
    let a = send(&sim, "PATCH", &uri, "application/merge-patch+json", &patch).await;
    assert_status(
        &a,
        422,
        Some("Invalid"),
        "Widget.acme.io \"blue\" is invalid: spec.mode: Unsupported value: \"wild\": supported values: \"safe\", \"fast\"",
    );
    assert_eq!(
        a.body["details"]["causes"][0]["reason"],
        "FieldValueNotSupported"
    );
    let patch = json!({"spec": {"size": 11}});
    let a = send(&sim, "PATCH", &uri, "application/merge-patch+json", &patch).await;
    assert_status(
        &a,
        422,
        Some("Invalid"),
        "Widget.acme.io \"blue\" is invalid: spec: Invalid value: \"object\": too big",
    );
    let status = format!("{uri}/status");
    let a = send(
        &sim,
        "PATCH",
        &status,
        "application/merge-patch+json",
        &json!({"status": {"ready": "no"}}),
    )
    .await;
    assert_eq!(
        a.code, 422,
        "the status subresource validates status: {}",
        a.body
    );
    let a = send(
        &sim,
        "PATCH",
        &status,
        "application/merge-patch+json",
        &json!({"status": {"ready": true}}),
    )
    .await;
    assert_eq!(a.code, 200, "{}", a.body);
}
