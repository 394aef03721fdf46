use super::*;
use serde_json::json;

fn deployment(spec: &Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "default"}, "spec": spec})
}

fn json_of(obj: &Value) -> Findings {
    let kind = obj["kind"].as_str().unwrap_or_default();
    let (group, version) = match obj["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .split_once('/')
    {
        Some((g, v)) => (g.to_owned(), v.to_owned()),
        None => (
            String::new(),
            obj["apiVersion"].as_str().unwrap_or_default().to_owned(),
        ),
    };
    decode(&group, &version, kind, obj, Dialect::Json).expect("a built-in kind")
}

fn apply_of(obj: &Value) -> Vec<String> {
    decode("apps", "v1", "Deployment", obj, Dialect::Apply)
        .expect("a built-in kind")
        .errors
}

const POD_SPEC: &str =
    r#"{"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}]}"#;

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": serde_json::from_str::<Value>(POD_SPEC).unwrap()})
}

#[test]
fn a_good_deployment_has_no_findings() {
    let obj = deployment(
        &json!({"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                                "template": template(), "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}),
    );
    assert_eq!(json_of(&obj), Findings::default());
    assert!(apply_of(&obj).is_empty());
}

#[test]
fn a_string_replica_count_is_go_type_error() {
    let f = json_of(&deployment(&json!({"replicas": "two"})));
    assert_eq!(
        f.errors,
        [
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        ]
    );
}

#[test]
fn type_errors_name_the_innermost_struct_and_the_item_type() {
    let mut t = template();
    t["spec"]["containers"][0]["ports"] = json!(["80"]);
    let f = json_of(&deployment(&json!({"template": t})));
    assert_eq!(
        f.errors,
        [
            "json: cannot unmarshal string into Go struct field Container.spec.template.spec.containers.ports of type v1.ContainerPort"
        ]
    );
    let mut t = template();
    t["spec"]["containers"] = json!({"name": "web"});
    let f = json_of(&deployment(&json!({"template": t})));
    assert_eq!(
        f.errors,
        [
            "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container"
        ]
    );
}

#[test]
fn a_float_where_an_integer_goes_names_the_number() {
    let f = json_of(&deployment(&json!({"replicas": 1.5})));
    assert_eq!(
        f.errors,
        [
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32"
        ]
    );
}

#[test]
fn configmap_data_must_be_a_string_map() {
    let list = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": ["a", "b"]});
    assert_eq!(
        json_of(&list).errors,
        [
            "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"
        ]
    );
    let nested = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": {"b": 1}}});
    assert_eq!(
        json_of(&nested).errors,
        ["json: cannot unmarshal object into Go struct field ConfigMap.data of type string"]
    );
}

#[test]
fn unknown_fields_are_listed_with_indexes_and_pruned() {
    let mut t = template();
    t["spec"]["containers"][0]["imagee"] = json!("x");
    let mut obj = deployment(&json!({"replica": 3, "template": t}));
    let f = json_of(&obj);
    assert!(f.errors.is_empty());
    assert_eq!(
        f.unknown,
        [
            r#"unknown field "spec.replica""#,
            r#"unknown field "spec.template.spec.containers[0].imagee""#
        ]
    );
    f.prune(&mut obj);
    assert!(obj["spec"].get("replica").is_none());
    assert!(
        obj["spec"]["template"]["spec"]["containers"][0]
            .get("imagee")
            .is_none()
    );
    assert_eq!(
        obj["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx"
    );
}

#[test]
fn a_type_error_hides_unknown_fields() {
    let f = json_of(&deployment(&json!({"replica": 3, "replicas": "two"})));
    assert_eq!(f.errors.len(), 1);
    assert!(f.unknown.is_empty());
}

#[test]
fn null_is_the_zero_value_and_quantities_take_numbers() {
    let mut t = template();
    t["spec"]["containers"][0]["resources"] = json!({"limits": {"cpu": 1, "memory": "64Mi"}});
    t["spec"]["containers"][0]["args"] = Value::Null;
    let f = json_of(&deployment(&json!({"replicas": null, "template": t})));
    assert_eq!(f, Findings::default());
}

#[test]
fn apply_reports_every_error_in_structured_merge_diff_words() {
    assert_eq!(
        apply_of(&deployment(&json!({"replicas": "two"}))),
        [".spec.replicas: expected numeric (int or float), got string"]
    );
    assert_eq!(
        apply_of(&deployment(&json!({"replica": 3}))),
        [".spec.replica: field not declared in schema"]
    );
    let mut t = template();
    t["spec"]["containers"][0]["imagee"] = json!("x");
    assert_eq!(
        apply_of(&deployment(&json!({"replicas": "two", "template": t}))),
        [
            ".spec.replicas: expected numeric (int or float), got string",
            ".spec.template.spec.containers[name=\"web\"].imagee: field not declared in schema"
        ]
    );
}

#[test]
fn apply_takes_any_number_for_a_number() {
    assert!(apply_of(&deployment(&json!({"replicas": 1.5}))).is_empty());
}

#[test]
fn kinds_without_a_type_are_not_checked() {
    let obj = json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"x": "y"}});
    assert_eq!(
        decode("example.com", "v1", "Widget", &obj, Dialect::Json),
        None
    );
}
