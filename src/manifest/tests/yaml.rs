//! The YAML -> JSON converter on its own: pointer lines, anchors, merges and its errors.

use serde_json::json;

use super::super::{YamlError, parse_stream};

#[test]
fn anchors_aliases_and_merge_keys_keep_anchor_lines() {
    let text = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
  labels: &labels
    app: worker
    tier: backend
spec:
  selector:
    matchLabels: *labels
  template:
    metadata:
      labels:
        <<: *labels
        tier: jobs
    spec:
      containers:
      - &base
        name: worker
        image: registry.example.com/worker:1.0
        resources:
          limits: {cpu: "1", memory: 512Mi}
      - <<: *base
        name: worker-2
"#;
    let stream = parse_stream(text);
    assert_eq!(stream.errors, vec![]);
    let doc = &stream.documents[0];
    assert_eq!(
        doc.value["spec"]["selector"]["matchLabels"],
        json!({"app": "worker", "tier": "backend"})
    );
    assert_eq!(
        doc.value["spec"]["template"]["metadata"]["labels"],
        json!({"tier": "jobs", "app": "worker"})
    );
    let second = &doc.value["spec"]["template"]["spec"]["containers"][1];
    assert_eq!(second["name"], json!("worker-2"));
    assert_eq!(second["image"], json!("registry.example.com/worker:1.0"));
    assert_eq!(second["resources"]["limits"]["memory"], json!("512Mi"));

    let line = |p: &str| doc.lines.get(p);
    assert_eq!(line("/spec/selector/matchLabels"), Some(10), "alias site");
    assert_eq!(
        line("/spec/selector/matchLabels/tier"),
        Some(7),
        "anchor's line"
    );
    assert_eq!(
        line("/spec/template/metadata/labels/tier"),
        Some(15),
        "explicit key wins"
    );
    assert_eq!(
        line("/spec/template/metadata/labels/app"),
        Some(6),
        "merged from anchor"
    );
    assert_eq!(line("/spec/template/spec/containers/1"), Some(23));
    assert_eq!(line("/spec/template/spec/containers/1/name"), Some(24));
    assert_eq!(line("/spec/template/spec/containers/1/image"), Some(20));
    assert_eq!(
        line("/spec/template/spec/containers/1/resources/limits/cpu"),
        Some(22)
    );
}

#[test]
fn document_lines_with_markers_flow_and_end() {
    let text = "%YAML 1.2\n---\n# comment\n\n{\"kind\": \"A\",\n \"n\": 1}\n...\n--- {kind: B}\n---\n---\nkind: C\n";
    let stream = parse_stream(text);
    let docs: Vec<(usize, usize, serde_json::Value)> = stream
        .documents
        .iter()
        .map(|d| (d.index, d.line, d.value.clone()))
        .collect();
    assert_eq!(
        docs,
        vec![
            (0, 5, json!({"kind": "A", "n": 1})),
            (1, 8, json!({"kind": "B"})),
            (2, 10, json!(null)),
            (3, 11, json!({"kind": "C"})),
        ]
    );
}

#[test]
fn keys_are_stringified_and_pointers_escaped() {
    let text = "data:\n  8080: http\n  true: x\n  a/b~c: z\n";
    let stream = parse_stream(text);
    let doc = &stream.documents[0];
    assert_eq!(
        doc.value,
        json!({"data": {"8080": "http", "true": "x", "a/b~c": "z"}})
    );
    assert_eq!(doc.lines.get("/data/a~1b~0c"), Some(4));
    assert_eq!(doc.lines.get("/data/8080"), Some(2));
}

#[track_caller]
fn case(text: &str, expected: &[YamlError], documents_kept: usize) {
    let stream = parse_stream(text);
    assert_eq!(stream.errors, expected, "errors for {text:?}");
    assert_eq!(
        stream.documents.len(),
        documents_kept,
        "documents for {text:?}"
    );
}

#[test]
fn conversion_errors_carry_lines() {
    case(
        "a: 1\nb:\n  c: 2\n  c: 3\n",
        &[YamlError::DuplicateKey {
            line: 4,
            key: "c".into(),
            first: 3,
        }],
        0,
    );
    // A bad document does not hide the good ones around it.
    case(
        "kind: A\n---\nratio: .inf\n---\nkind: C\n",
        &[YamlError::NotJson {
            line: 3,
            text: ".inf".into(),
        }],
        2,
    );
    case(
        "x: &a 1\n---\ny: *a\n",
        &[YamlError::UnknownAlias { line: 3 }],
        1,
    );
    case(
        "? [a, b]\n: c\n",
        &[YamlError::UnsupportedKey { line: 1 }],
        0,
    );
    case("a:\n  <<: 5\n", &[YamlError::BadMerge { line: 2 }], 0);
    case(
        "n: !!int forty\n",
        &[YamlError::BadTag {
            line: 1,
            text: "forty".into(),
            expected: "number",
        }],
        0,
    );
    // Syntax errors end the stream; earlier documents survive.
    case(
        "kind: A\n---\nmetadata:\n  name: web\n   labels: {}\n",
        &[YamlError::Syntax {
            line: 5,
            message: "mapping values are not allowed in this context".into(),
        }],
        1,
    );
}
