//! Loading real-world streams: objects, their lines, images, lists and input handling.

use std::fs;

use serde_json::json;

use super::super::{ImageLine, Manifest, load, load_str};
use super::fixtures::{HELM, KUSTOMIZE, LIST, POD_JSON, WEB};
use super::{load_stdin, problems};

fn image(container: &str, image: &str, line: usize, init: bool) -> ImageLine {
    ImageLine {
        container: container.to_string(),
        image: image.to_string(),
        line,
        init,
    }
}

/// (file, line, doc_index, kind, name, namespace) of each manifest.
fn summary(manifests: &[Manifest]) -> Vec<(String, usize, usize, String, String, Option<String>)> {
    manifests
        .iter()
        .map(|m| {
            let m = m.clone();
            (m.file, m.line, m.doc_index, m.kind, m.name, m.namespace)
        })
        .collect()
}

fn write(dir: &std::path::Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

#[test]
fn deployment_and_service_file_with_images_and_lines() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "web.yaml", WEB);
    let input = dir.path().join("web.yaml").display().to_string();
    let manifests = load(std::slice::from_ref(&input), None).unwrap();

    let deploy = &manifests[0];
    assert_eq!(deploy.file, input);
    assert_eq!(
        (deploy.line, deploy.doc_index),
        (2, 0),
        "first content line, after the comment"
    );
    assert_eq!(deploy.api_version, "apps/v1");
    assert_eq!(deploy.kind, "Deployment");
    assert_eq!(deploy.name, "web");
    assert_eq!(deploy.namespace.as_deref(), Some("shop"));
    assert_eq!(
        deploy.images,
        vec![
            image("migrate", "registry.example.com/shop/web:2.4.1", 24, true),
            image("web", "registry.example.com/shop/web:2.4.1", 28, false),
            image("metrics-sidecar", "prom/statsd-exporter:v0.26.0", 37, false),
        ]
    );
    assert_eq!(deploy.line_of("/spec/replicas"), Some(13));
    assert_eq!(deploy.line_of("/spec/template/spec/containers/1"), Some(36));
    assert_eq!(
        deploy.line_of("/spec/template/spec/containers/0/ports/0/name"),
        Some(31)
    );
    assert_eq!(
        deploy.line_of("/metadata/annotations/deploy-action.io~1timeout"),
        Some(10)
    );
    assert_eq!(deploy.line_of("/spec/nope"), None);
    assert_eq!(deploy.object["spec"]["replicas"], json!(3));
    assert_eq!(
        deploy.object["spec"]["template"]["spec"]["initContainers"][0]["command"],
        json!(["bin/migrate"])
    );

    let service = &manifests[1];
    assert_eq!(
        (service.line, service.doc_index),
        (41, 1),
        "line after the `---`"
    );
    assert_eq!(service.kind, "Service");
    assert!(service.images.is_empty());
    assert_eq!(service.line_of("/spec/ports/0"), Some(50));
    assert_eq!(service.object["spec"]["ports"][0]["port"], json!(80));
}

#[test]
fn helm_template_output_skips_empty_documents() {
    let manifests = load_stdin(HELM);
    assert_eq!(
        summary(&manifests),
        vec![
            (
                "<stdin>".into(),
                3,
                0,
                "ServiceAccount".into(),
                "shop".into(),
                None
            ),
            (
                "<stdin>".into(),
                13,
                2,
                "ConfigMap".into(),
                "shop-config".into(),
                None
            ),
            (
                "<stdin>".into(),
                26,
                3,
                "CronJob".into(),
                "shop-cleanup".into(),
                None
            ),
        ]
    );
    let config = &manifests[1];
    assert_eq!(
        config.object["data"]["nginx.conf"],
        json!("server {\n  listen 8080;\n}\n")
    );
    assert_eq!(
        config.object["data"]["FEATURE_FLAGS"],
        json!("true"),
        "quoted stays a string"
    );
    assert_eq!(
        config.line_of("/data/nginx.conf"),
        Some(19),
        "block scalars sit at their key"
    );
    assert_eq!(config.line_of("/data/FEATURE_FLAGS"), Some(23));

    let cron = &manifests[2];
    assert_eq!(
        cron.images,
        vec![image(
            "cleanup",
            "registry.example.com/shop/cleanup:1.0.3",
            39,
            false
        )]
    );
    assert_eq!(cron.object["spec"]["schedule"], json!("*/15 * * * *"));
}

#[test]
fn kustomize_stream_on_stdin() {
    let manifests = load_stdin(KUSTOMIZE);
    assert_eq!(
        summary(&manifests),
        vec![
            (
                "<stdin>".into(),
                1,
                0,
                "Namespace".into(),
                "shop".into(),
                None
            ),
            (
                "<stdin>".into(),
                6,
                1,
                "ConfigMap".into(),
                "web-config-7g8h9k2m4t".into(),
                Some("shop".into())
            ),
            (
                "<stdin>".into(),
                14,
                2,
                "Deployment".into(),
                "web".into(),
                Some("shop".into())
            ),
        ]
    );
    assert_eq!(
        manifests[2].images,
        vec![image(
            "web",
            "registry.example.com/shop/web:2.4.1",
            34,
            false
        )]
    );
    assert_eq!(
        manifests[2].line_of("/spec/template/spec/containers/0"),
        Some(31)
    );
}

#[test]
fn json_file_gets_lines_too() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "debug-pod.json", POD_JSON);
    let input = dir.path().join("debug-pod.json").display().to_string();
    let manifests = load(&[input], None).unwrap();
    assert_eq!(manifests.len(), 1);
    let pod = &manifests[0];
    assert_eq!(
        (pod.kind.as_str(), pod.name.as_str(), pod.line),
        ("Pod", "debug", 1)
    );
    assert_eq!(pod.images, vec![image("shell", "busybox:1.36", 12, false)]);
    assert_eq!(pod.line_of("/metadata/namespace"), Some(6));
    assert_eq!(
        pod.object["spec"]["containers"][0]["command"],
        json!(["sleep", "3600"])
    );
}

#[test]
fn concatenated_json_falls_back_to_start_lines() {
    let text = "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}\n\
                {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"b\"}}\n";
    let manifests = load_stdin(text);
    let found: Vec<(usize, &str)> = manifests
        .iter()
        .map(|m| (m.line, m.name.as_str()))
        .collect();
    assert_eq!(found, vec![(1, "a"), (2, "b")]);
    assert_eq!(
        manifests[1].line_of("/metadata/name"),
        None,
        "only the start line is known"
    );

    // A duplicate key is still an error, not papered over by the JSON reader.
    let dup = "{\"apiVersion\": \"v1\", \"apiVersion\": \"v2\"}";
    let found = problems(load(&["-".into()], Some(dup)));
    assert_eq!(
        found[0].to_string().lines().next(),
        Some("<stdin>:1: duplicate key \"apiVersion\" (first set at line 1)")
    );
}

#[test]
fn lists_are_expanded_with_item_lines() {
    let manifests = load_stdin(LIST);
    assert_eq!(
        summary(&manifests),
        vec![
            (
                "<stdin>".into(),
                3,
                0,
                "ConfigMap".into(),
                "settings".into(),
                Some("shop".into())
            ),
            (
                "<stdin>".into(),
                10,
                0,
                "Service".into(),
                "api".into(),
                Some("shop".into())
            ),
        ]
    );
    // Pointers are relative to the item, lines stay those of the file.
    assert_eq!(manifests[1].line_of("/spec/ports/0/port"), Some(17));
    assert_eq!(manifests[1].line_of("/metadata/name"), Some(13));
    assert_eq!(manifests[0].object["data"], json!({"ENV": "production"}));
}

#[test]
fn typed_list_items_inherit_kind_and_api_version() {
    let text = r"apiVersion: apps/v1
kind: DeploymentList
items:
- metadata:
    name: api
    namespace: shop
  spec:
    template:
      spec:
        containers:
        - name: api
          image: registry.example.com/shop/api:3.0.0
";
    let manifests = load_stdin(text);
    assert_eq!(manifests.len(), 1);
    let api = &manifests[0];
    assert_eq!(
        (api.api_version.as_str(), api.kind.as_str(), api.line),
        ("apps/v1", "Deployment", 4)
    );
    assert_eq!(api.object["kind"], json!("Deployment"));
    assert_eq!(
        api.images,
        vec![image(
            "api",
            "registry.example.com/shop/api:3.0.0",
            12,
            false
        )]
    );
}

#[test]
fn directories_are_walked_recursively_in_path_order() {
    let dir = tempfile::tempdir().unwrap();
    let cm = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    write(dir.path(), "b.yaml", &cm("b"));
    write(dir.path(), "2-y.yml", &cm("two"));
    write(dir.path(), "10-x.yaml", &cm("ten"));
    write(dir.path(), "a/z.yml", &cm("a-z"));
    write(
        dir.path(),
        "a/b.json",
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a-b"}}"#,
    );
    write(dir.path(), "a.yaml", &cm("a"));
    write(dir.path(), ".hidden.yaml", &cm("hidden"));
    write(dir.path(), ".git/config.yaml", &cm("git"));
    write(dir.path(), "README.md", "# not a manifest\n");
    write(dir.path(), "b.yaml.bak", &cm("backup"));
    let root = dir.path().display().to_string();

    let manifests = load(std::slice::from_ref(&root), None).unwrap();
    let found: Vec<(String, &str)> = manifests
        .iter()
        .map(|m| {
            (
                m.file.strip_prefix(&root).unwrap().to_string(),
                m.name.as_str(),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![
            ("/10-x.yaml".to_string(), "ten"),
            ("/2-y.yml".to_string(), "two"),
            ("/a/b.json".to_string(), "a-b"),
            ("/a/z.yml".to_string(), "a-z"),
            ("/a.yaml".to_string(), "a"),
            ("/b.yaml".to_string(), "b"),
        ]
    );
}

#[test]
fn inputs_keep_their_order_and_names() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "manifests/web.yaml", WEB);
    write(
        dir.path(),
        "extra.txt",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
    );
    // A trailing slash is kept as given, and an explicitly named file needs no extension.
    let manifests_dir = format!("{}/manifests/", dir.path().display());
    let extra = dir.path().join("extra.txt").display().to_string();
    let inputs = vec![extra.clone(), "-".to_string(), manifests_dir.clone()];
    let manifests = load(&inputs, Some(HELM)).unwrap();
    let files: Vec<(&str, &str)> = manifests
        .iter()
        .map(|m| (m.file.as_str(), m.name.as_str()))
        .collect();
    let web = format!("{manifests_dir}web.yaml");
    assert_eq!(
        files,
        vec![
            (extra.as_str(), "extra"),
            ("<stdin>", "shop"),
            ("<stdin>", "shop-config"),
            ("<stdin>", "shop-cleanup"),
            (&web, "web"),
            (&web, "web"),
        ]
    );
}

#[test]
fn yes_and_on_are_booleans_like_kubectl() {
    let text = r#"apiVersion: v1
kind: Pod
metadata:
  name: flags
spec:
  hostNetwork: yes
  enableServiceLinks: off
  containers:
  - name: app
    image: app:1
    tty: on
    env:
    - name: MODE
      value: "yes"
"#;
    let pod = &load_stdin(text)[0];
    assert_eq!(pod.object["spec"]["hostNetwork"], json!(true));
    assert_eq!(pod.object["spec"]["enableServiceLinks"], json!(false));
    assert_eq!(pod.object["spec"]["containers"][0]["tty"], json!(true));
    assert_eq!(
        pod.object["spec"]["containers"][0]["env"][0]["value"],
        json!("yes")
    );
}

#[test]
fn missing_inputs_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.yaml").display().to_string();
    let found = problems(load(&[missing.clone(), "-".into()], None));
    let rendered: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert_eq!(
        rendered,
        vec![
            format!("{missing}: no such file or directory"),
            "<stdin>: stdin is not available".to_string()
        ]
    );

    let twice = problems(load(&["-".into(), "-".into()], Some(KUSTOMIZE)));
    assert_eq!(twice.len(), 1);
    assert_eq!(twice[0].message, "stdin is given more than once");

    let none = problems(load(&[], None));
    assert_eq!(
        none[0].to_string().lines().next(),
        Some("no manifests given")
    );

    let only_comments = problems(load(&["-".into()], Some("# nothing\n---\n")));
    assert_eq!(only_comments[0].message, "no objects found in the inputs");
}

#[test]
fn an_applied_manifest_keeps_what_is_read_after_the_apply() {
    let text = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: shop
  annotations:
    helm.sh/hook: pre-upgrade
    helm.sh/hook-delete-policy: hook-succeeded
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: ghcr.io/acme/migrate:v2
";
    let mut m = load_str("hooks.yaml", text).unwrap().remove(0);
    let before = m.clone();
    assert_eq!(m.line_of("/spec/template/spec/restartPolicy"), Some(12));
    m.release_applied();
    assert_eq!(
        m.object,
        serde_json::json!({"metadata": {"annotations": before.object["metadata"]["annotations"].clone()}})
    );
    assert_eq!(
        (m.id(), m.line, &m.file),
        (before.id(), before.line, &before.file)
    );
    assert_eq!(m.images, before.images);
    assert_eq!(m.line_of("/spec/template/spec/restartPolicy"), None);
    let phase = crate::phases::order(
        std::slice::from_ref(&before),
        &std::collections::BTreeSet::new(),
    )[0]
    .phase;
    let policy = crate::waves::delete_policy(&m, phase);
    assert_eq!(policy, crate::waves::delete_policy(&before, phase));
    assert!(policy.is_some_and(|p| p.on_success), "{policy:?}");
}

#[test]
fn loaded_list_holds_no_spare_room() {
    // Five objects grow the list to room for eight; the run holds it to the end.
    let mut text = String::new();
    for i in 0..5 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n"
        ));
    }
    let manifests = load_str("five.yaml", &text).unwrap();
    assert_eq!(manifests.len(), 5);
    assert_eq!(manifests.capacity(), 5);
}

#[test]
fn an_applied_manifest_without_annotations_keeps_none_of_its_object() {
    let text = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  template:
    spec:
      containers: [{name: web, image: ghcr.io/acme/web:1}]
";
    let mut m = load_str("web.yaml", text).unwrap().remove(0);
    let before = m.clone();
    m.release_applied();
    assert_eq!(m.object, serde_json::json!({}));
    assert_eq!(
        (m.id(), m.line, &m.images),
        (before.id(), before.line, &before.images)
    );
    assert_eq!(m.display_name(), "Deployment/web");
}
