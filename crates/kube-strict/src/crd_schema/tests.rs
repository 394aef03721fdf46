use super::*;
use serde_json::json;

/// A Widget's schema as a CRD would give it, every keyword on a field of its own.
fn widget() -> Value {
    serde_json::from_str(
        r#"{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["name", "size"],
      "properties": {
        "name": {"type": "string", "minLength": 3, "maxLength": 8, "pattern": "^[a-z]+$"},
        "size": {"type": "integer", "minimum": 1, "maximum": 5},
        "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1, "exclusiveMaximum": true},
        "mode": {"type": "string", "enum": ["safe", "careful"]},
        "replicas": {"type": "integer", "format": "int32", "default": 1},
        "paused": {"type": "boolean"},
        "note": {"type": "string", "nullable": true},
        "port": {"x-kubernetes-int-or-string": true},
        "since": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true, "items": {"type": "string"}},
        "ports": {"type": "array", "items": {"type": "object", "required": ["port"],
          "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
          "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
      }
    },
    "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
  }
}"#,
    )
    .unwrap()
}

fn widget_with(spec: &Value) -> Value {
    json!({"apiVersion": "acme.io/v1", "kind": "Widget",
        "metadata": {"name": "w", "labels": {"any": "thing"}}, "spec": spec})
}

/// The findings on a Widget with `spec`, as `pointer message [hint]` lines; warnings marked.
fn findings(spec: &Value) -> Vec<String> {
    validate(&widget(), &widget_with(spec))
        .into_iter()
        .map(|f| {
            let mark = if f.severity == Severity::Warning {
                "warning "
            } else {
                ""
            };
            match f.hint {
                Some(h) => format!("{} {mark}{} [{h}]", f.pointer, f.message),
                None => format!("{} {mark}{}", f.pointer, f.message),
            }
        })
        .collect()
}

#[test]
fn a_valid_widget_has_no_findings() {
    let spec = json!({"name": "web", "size": 3, "ratio": 0.5, "mode": "safe", "replicas": 2,
        "paused": false, "note": null, "port": "http", "since": "2024-05-01T10:00:00Z",
        "tags": ["a", "b"], "ports": [{"name": "http", "port": 80}],
        "labels": {"team": "a"}, "extra": {"any": {"thing": 1}},
        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": []}}});
    assert_eq!(findings(&spec), Vec::<String>::new());
}

#[test]
fn types_are_held_as_the_server_words_them() {
    assert_eq!(
        findings(
            &json!({"name": 7, "size": "three", "paused": "no", "ratio": 1, "port": true,
            "tags": "a", "labels": []})
        ),
        [
            "/spec/name spec.name: Invalid value: \"integer\": spec.name in body must be of type string: \"integer\"",
            "/spec/size spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
            "/spec/paused spec.paused: Invalid value: \"string\": spec.paused in body must be of type boolean: \"string\"",
            "/spec/ratio spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1",
            "/spec/port spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
            "/spec/tags spec.tags: Invalid value: \"string\": spec.tags in body must be of type array: \"string\"",
            "/spec/labels spec.labels: Invalid value: \"array\": spec.labels in body must be of type object: \"array\"",
        ]
    );
    // A number with nothing after the point is an integer, as JSON decoding reads it.
    assert_eq!(
        findings(&json!({"name": "web", "size": 3.0})),
        Vec::<String>::new()
    );
    assert_eq!(
        findings(&json!({"name": "web", "size": 2.5})),
        [
            "/spec/size spec.size: Invalid value: \"number\": spec.size in body must be of type integer: \"number\""
        ]
    );
}

#[test]
fn required_fields_are_required_unless_defaulted_and_nulls_are_pruned() {
    assert_eq!(
        findings(&json!({"size": null, "note": null})),
        [
            "/spec/name spec.name: Required value",
            "/spec/size spec.size: Required value",
        ]
    );
    // `replicas` is not required, and would be defaulted if it were.
    assert!(findings(&json!({"name": "web", "size": 1})).is_empty());
    assert_eq!(
        validate(
            &widget(),
            &json!({"apiVersion": "acme.io/v1", "kind": "Widget", "metadata": {}})
        )
        .len(),
        0,
        "spec itself is not required"
    );
}

#[test]
fn enums_bounds_lengths_and_patterns() {
    assert_eq!(
        findings(&json!({"name": "ab", "size": 0, "mode": "fast", "ratio": 0})),
        [
            "/spec/name spec.name: Invalid value: \"ab\": spec.name in body should be at least 3 chars long",
            "/spec/size spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
            "/spec/mode spec.mode: Unsupported value: \"fast\": supported values: \"safe\", \"careful\"",
            "/spec/ratio spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0",
        ]
    );
    assert_eq!(
        findings(&json!({"name": "Web-Server-1", "size": 6})),
        [
            "/spec/name spec.name: Too long: may not be more than 8 bytes",
            "/spec/name spec.name: Invalid value: \"Web-Server-1\": spec.name in body should match '^[a-z]+$'",
            "/spec/size spec.size: Invalid value: 6: spec.size in body should be less than or equal to 5",
        ]
    );
}

#[test]
fn formats_int32_and_date_time() {
    assert_eq!(
        findings(
            &json!({"name": "web", "size": 1, "replicas": 3_000_000_000_u64,
            "since": "yesterday"})
        ),
        [
            "/spec/replicas spec.replicas: Invalid value: 3000000000: spec.replicas in body must be of type int32: \"3000000000\"",
            "/spec/since spec.since: Invalid value: \"yesterday\": spec.since in body must be of type date-time: \"yesterday\"",
        ]
    );
}

#[test]
fn arrays_hold_their_counts_uniqueness_and_items() {
    assert_eq!(
        findings(&json!({"name": "web", "size": 1, "tags": [],
            "ports": [{"name": "http", "port": "80"}, {"name": "metrics"}]})),
        [
            "/spec/tags spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items",
            "/spec/ports/0/port spec.ports[0].port: Invalid value: \"string\": spec.ports[0].port in body must be of type integer: \"string\"",
            "/spec/ports/1/port spec.ports[1].port: Required value",
        ]
    );
    assert_eq!(
        findings(&json!({"name": "web", "size": 1, "tags": ["a", "a", "b"]})),
        [
            "/spec/tags spec.tags: Too many: 3: must have at most 2 items",
            "/spec/tags spec.tags[1]: Duplicate value: \"a\"",
        ]
    );
}

#[test]
fn unknown_fields_are_warnings_with_the_near_name_unless_kept() {
    assert_eq!(
        findings(
            &json!({"name": "web", "sise": 3, "size": 1, "colour": "red",
            "labels": {"team": 5}, "extra": {"anything": true},
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"x": 1}, "spek": {}}})
        ),
        [
            "/spec/sise warning unknown field \"spec.sise\" [did you mean \"size\"?]",
            "/spec/colour warning unknown field \"spec.colour\"",
            "/spec/labels/team spec.labels.team: Invalid value: \"integer\": spec.labels.team in body must be of type string: \"integer\"",
            "/spec/template/spek warning unknown field \"spec.template.spek\" [did you mean \"spec\"?]",
        ]
    );
    let mut top = widget_with(&json!({"name": "web", "size": 1}));
    top["sepc"] = json!({});
    assert_eq!(
        validate(&widget(), &top)
            .iter()
            .map(|f| (f.severity, f.message.as_str(), f.hint.as_deref()))
            .collect::<Vec<_>>(),
        [(
            Severity::Warning,
            "unknown field \"sepc\"",
            Some("did you mean \"spec\"?")
        )]
    );
}

#[test]
fn an_embedded_resource_names_its_kind() {
    assert_eq!(
        findings(&json!({"name": "web", "size": 1, "template": {"kind": "", "spec": {}}})),
        [
            "/spec/template/apiVersion spec.template.apiVersion: Required value: must not be empty",
            "/spec/template/kind spec.template.kind: Required value: must not be empty",
        ]
    );
}

#[test]
fn cel_rules_hold_with_self_and_say_their_message() {
    let schema = json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.min <= self.max", "message": "min must not exceed max"},
            {"rule": "self.max < 100", "messageExpression": "'max is ' + string(self.max)"},
            {"rule": "self.min > 0"},
            {"rule": "self.min == oldSelf.min", "message": "immutable"},
            {"rule": "isSorted(self.list)", "message": "never evaluated here"}
        ],
        "properties": {"min": {"type": "integer"}, "max": {"type": "integer"},
            "name": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self.startsWith('w-')", "message": "must start with w-"}]}}}}});
    let obj = json!({"apiVersion": "acme.io/v1", "kind": "Widget", "metadata": {"name": "a"},
        "spec": {"min": 0, "max": 200, "name": "x"}});
    let got: Vec<(Severity, String)> = validate(&schema, &obj)
        .into_iter()
        .map(|f| (f.severity, f.message))
        .collect();
    assert_eq!(
        got[..3],
        [
            (
                Severity::Error,
                "spec.name: Invalid value: \"string\": must start with w-".to_owned()
            ),
            (
                Severity::Error,
                "spec: Invalid value: \"object\": max is 200".to_owned()
            ),
            (
                Severity::Error,
                "spec: Invalid value: \"object\": failed rule: self.min > 0".to_owned()
            ),
        ]
    );
    // The transition rule is not a create's; the unknown function is only a warning.
    assert_eq!(got.len(), 4);
    assert_eq!(got[3].0, Severity::Warning);
    assert!(
        got[3].1.starts_with(
            "spec: rule \"isSorted(self.list)\" not checked: unknown function isSorted()"
        ),
        "{}",
        got[3].1
    );
    let crossed = json!({"apiVersion": "acme.io/v1", "kind": "Widget", "metadata": {"name": "a"},
        "spec": {"min": 50, "max": 20, "name": "w-x"}});
    assert_eq!(
        validate(&schema, &crossed)[0].message,
        "spec: Invalid value: \"object\": min must not exceed max"
    );
    let fine = json!({"apiVersion": "acme.io/v1", "kind": "Widget", "metadata": {"name": "a"},
        "spec": {"min": 1, "max": 20, "name": "w-x"}});
    assert_eq!(
        validate(&schema, &fine).len(),
        1,
        "only the unknown function's warning"
    );
}
