//! Every problem class, reported together with its file and line.

use std::fs;

use super::super::{LoadError, load, load_str, render_problems};
use super::problems;

const BAD_WEB: &str = r"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations:
    deploy-action.io/timeout: soon
    krane.shopify.io/required-rollout: 120%
    krane.shopify.io/timeout-override: PT90S
    prometheus.io/scrape: true
spec:
  template:
    spec:
      containers:
      - name: web
        image: registry.example.com/shop/web:2.4.1
      - name: sidecar
        ports:
        - containerPort: 9125
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  ports:
  - port: 80
    port: 8080
";

const BAD_JOBS: &str = r"apiVersion: batch/v1
kind: Job
metadata:
  generateName: db-migrate-
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: registry.example.com/shop/web:2.4.1
---
apiVersion: v1
metadata:
  name: orphan
---
- just
- a list
---
kind: ConfigMap
metadata:
  name: settings
data:
  PORT: 8080
---
apiVersion: v1
kind: ConfigMap
metadata: {}
";

const BROKEN: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n    namespace: shop\n";

const COPY: &str = r"# copy-pasted by mistake
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
      - name: web
        image: registry.example.com/shop/web:2.4.0
";

#[test]
fn all_problems_are_collected_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("manifests");
    fs::create_dir_all(&root).unwrap();
    for (name, text) in [
        ("web.yaml", BAD_WEB),
        ("jobs.yaml", BAD_JOBS),
        ("broken.yaml", BROKEN),
        ("copy.yaml", COPY),
    ] {
        fs::write(root.join(name), text).unwrap();
    }
    let at = |name: &str| root.join(name).display().to_string();
    let inputs = vec![
        at("web.yaml"),
        at("jobs.yaml"),
        at("broken.yaml"),
        at("missing.yaml"),
        at("copy.yaml"),
    ];
    let err = load(&inputs, None).unwrap_err();
    let rendered = err
        .to_string()
        .replace(&format!("{}/", dir.path().display()), "");
    insta::assert_snapshot!(rendered, @r#"
found 14 problems in the manifests:
manifests/web.yaml:7: invalid duration "soon" in annotation deploy-action.io/timeout
  hint: use a positive duration like 90s, 5m, 1h30m, or plain seconds like 30
manifests/web.yaml:8: invalid value "120%" in annotation krane.shopify.io/required-rollout
  hint: use full, none, maxUnavailable, or a percentage from 0% to 100%
manifests/web.yaml:10: annotation prometheus.io/scrape must be a string, found true
  hint: quote the value; unquoted true/yes/on, numbers and null are not strings in YAML
manifests/web.yaml:17: container "sidecar" has no image
  hint: every container needs an image
manifests/web.yaml:29: duplicate key "port" (first set at line 28)
  hint: a key may appear only once in a mapping
manifests/jobs.yaml:4: metadata.generateName is not supported
  hint: apply needs a fixed metadata.name; a generated name would create a new object on every deploy
manifests/jobs.yaml:13: missing kind
  hint: set kind, e.g. Deployment
manifests/jobs.yaml:17: document is not an object (found a list)
  hint: each document must be one Kubernetes object with apiVersion, kind and metadata
manifests/jobs.yaml:20: missing apiVersion
  hint: set apiVersion, e.g. apps/v1 for a Deployment
manifests/jobs.yaml:24: data.PORT must be a string, found 8080
  hint: quote the value; unquoted true/yes/on, numbers and null are not strings in YAML
manifests/jobs.yaml:28: missing metadata.name
  hint: every resource needs a name
manifests/broken.yaml:10: invalid YAML: mapping values are not allowed in this context
  hint: check indentation and quoting around this line
manifests/missing.yaml: no such file or directory
manifests/copy.yaml:2: duplicate resource Deployment/web in namespace shop (also defined at manifests/web.yaml:1)
  hint: each object may appear only once; remove or rename one of them
"#);
}

#[test]
fn valid_annotations_pass() {
    let text = |timeout: &str, rollout: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  annotations:\n    \
             krane.shopify.io/timeout-override: {timeout:?}\n    deploy-action.io/required-rollout: {rollout:?}\n"
        )
    };
    for (timeout, rollout) in [
        ("30", "full"),
        ("90s", "none"),
        ("PT1M", "maxUnavailable"),
        ("1h 30m", "0%"),
        ("5m", "100%"),
    ] {
        let loaded = load_str("web.yaml", &text(timeout, rollout));
        assert!(loaded.is_ok(), "{timeout} / {rollout}: {:?}", loaded.err());
    }
    for (timeout, rollout, message) in [
        (
            "0s",
            "full",
            "invalid duration \"0s\" in annotation krane.shopify.io/timeout-override",
        ),
        (
            "",
            "full",
            "invalid duration \"\" in annotation krane.shopify.io/timeout-override",
        ),
        (
            "90s",
            "50",
            "invalid value \"50\" in annotation deploy-action.io/required-rollout",
        ),
        (
            "90s",
            "-5%",
            "invalid value \"-5%\" in annotation deploy-action.io/required-rollout",
        ),
        (
            "90s",
            "Full",
            "invalid value \"Full\" in annotation deploy-action.io/required-rollout",
        ),
    ] {
        let found = problems(load_str("web.yaml", &text(timeout, rollout)));
        let messages: Vec<&str> = found.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(messages, vec![message], "{timeout} / {rollout}");
    }
    let service = |value: &str| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  annotations:\n    \
             krane.shopify.io/skip-endpoint-validation: {value:?}\nspec: {{ports: [{{port: 80}}]}}\n"
        )
    };
    assert!(load_str("svc.yaml", &service("true")).is_ok());
    let found = problems(load_str("svc.yaml", &service("yes")));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].line, found[0].message.as_str()),
        (
            Some(6),
            "invalid value \"yes\" in annotation krane.shopify.io/skip-endpoint-validation"
        )
    );
}

#[test]
fn load_error_lists_every_problem() {
    let err = load_str(
        "<stdin>",
        "kind: ConfigMap\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: x-\n",
    )
    .unwrap_err();
    let LoadError::Invalid(found) = &err;
    assert_eq!(found.len(), 3);
    assert_eq!(
        err.to_string(),
        format!(
            "found 3 problems in the manifests:\n{}",
            render_problems(found)
        )
    );
}

#[test]
fn json_is_checked_as_json_up_to_a_yaml_separator() {
    let json_then_yaml = "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\"}}\n---\n{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"b\"}}\n";
    assert_eq!(load_str("s.yaml", json_then_yaml).unwrap().len(), 2);
    let broken =
        "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": }}\n";
    let problems = problems(load_str("b.json", broken));
    assert_eq!(
        problems.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "b.json:2: invalid JSON: expected value\n  hint: files that start with `{` are read as JSON, as kubectl does"
        ]
    );
}
