//! Fidelity: kubectl 1.33 shows kube-sim's decoding errors exactly as it shows the real
//! API server's (texts from kube-apiserver 1.33 reports), and its typed `create` and
//! `run` commands, which send protobuf bodies, work.

use super::kubectl::Served;
use kube_sim::Scenario;

const BAD_REPLICAS: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: \"two\"
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: nginx
";

const LIST_DATA: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: listy
data: [a, b]
";

const ALIASED_CRONJOB: &str = "apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: '0 3 * * *'
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          hostAliases:
            - ip: 10.0.0.1
              hostnames: [db]
          containers:
            - name: run
              image: busybox
";

async fn refused(s: &Served, args: &[&str], manifest: &str) -> String {
    let out = s.run(args, Some(manifest)).await;
    assert!(!out.status.success(), "kubectl {args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_shows_decoding_errors_as_from_a_real_server() {
    let Some(s) = Served::start(Scenario::default()).await else {
        return;
    };
    let ssa = "Error from server: failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replicas: expected numeric (int or float), got string";
    for args in [
        &["apply", "--server-side", "--dry-run=server", "-f", "-"][..],
        &["apply", "--server-side", "-f", "-"][..],
    ] {
        assert_eq!(refused(&s, args, BAD_REPLICAS).await, ssa, "{args:?}");
    }
    let create = "Error from server (BadRequest): error when creating \"STDIN\": Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32";
    for args in [
        &["create", "-f", "-"][..],
        &["create", "--dry-run=server", "-f", "-"][..],
    ] {
        assert_eq!(refused(&s, args, BAD_REPLICAS).await, create, "{args:?}");
    }
    assert_eq!(
        refused(&s, &["create", "-f", "-"], LIST_DATA).await,
        "Error from server (BadRequest): error when creating \"STDIN\": ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"
    );
    assert!(
        s.sim
            .get("apps/v1", "Deployment", "default", "web")
            .is_none()
    );
    assert!(s.sim.get("v1", "ConfigMap", "default", "listy").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_validate_modes_meet_field_validation() {
    let Some(s) = Served::start(Scenario::default()).await else {
        return;
    };
    let typo = BAD_REPLICAS.replace("replicas: \"two\"", "replica: 2");
    // kubectl's --validate=strict (its default) sends fieldValidation=Strict.
    assert_eq!(
        refused(&s, &["create", "-f", "-"], &typo).await,
        "Error from server (BadRequest): error when creating \"STDIN\": Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replica\""
    );
    let out = s
        .run(
            &["create", "--validate=warn", "--dry-run=server", "-f", "-"],
            Some(&typo),
        )
        .await;
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Warning: unknown field \"spec.replica\""
    );
    let out = s
        .ok(&["create", "--validate=false", "-f", "-"], Some(&typo))
        .await;
    assert_eq!(out.trim(), "deployment.apps/web created");
    let stored = s
        .sim
        .get("apps/v1", "Deployment", "default", "web")
        .unwrap();
    assert!(stored["spec"].get("replica").is_none(), "{stored}");
    assert_eq!(
        refused(
            &s,
            &["apply", "--server-side", "--dry-run=server", "-f", "-"],
            &typo
        )
        .await,
        "Error from server: failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.replica: field not declared in schema"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_commands_send_protobuf_and_it_decodes() {
    use serde_json::json;
    let Some(s) = Served::start(Scenario::default()).await else {
        return;
    };
    let cases = [
        (
            &["create", "namespace", "foo"][..],
            "namespace/foo created",
            ("Namespace", "", "foo"),
            ("/status/phase", json!("Active")),
        ),
        (
            &["create", "configmap", "x", "--from-literal=a=b"][..],
            "configmap/x created",
            ("ConfigMap", "default", "x"),
            ("/data", json!({"a": "b"})),
        ),
        (
            &["create", "secret", "generic", "s", "--from-literal=k=v"][..],
            "secret/s created",
            ("Secret", "default", "s"),
            ("/data", json!({"k": "dg=="})),
        ),
    ];
    for (args, printed, (kind, ns, name), (pointer, want)) in cases {
        assert_eq!(s.ok(args, None).await.trim(), printed);
        let stored = s.sim.get("v1", kind, ns, name).expect("stored");
        assert_eq!(stored.pointer(pointer), Some(&want), "{stored}");
    }
    let secret = s.sim.get("v1", "Secret", "default", "s").expect("stored");
    assert_eq!(secret["type"], "Opaque");
    assert_eq!(
        s.ok(&["delete", "namespace", "foo"], None).await.trim(),
        "namespace \"foo\" deleted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_and_run_workloads_send_protobuf_and_it_decodes() {
    use serde_json::json;
    let Some(s) = Served::start(Scenario::default()).await else {
        return;
    };
    let cases = [
        (
            &[
                "create",
                "deployment",
                "web",
                "--image=nginx",
                "--port=8080",
                "--replicas=2",
            ][..],
            "deployment.apps/web created",
            ("apps/v1", "Deployment", "web"),
            vec![
                ("/spec/replicas", json!(2)),
                ("/spec/selector", json!({"matchLabels": {"app": "web"}})),
                ("/spec/template/spec/containers/0/image", json!("nginx")),
                (
                    "/spec/template/spec/containers/0/ports/0/containerPort",
                    json!(8080),
                ),
            ],
        ),
        (
            &[
                "create",
                "deployment",
                "idle",
                "--image=nginx",
                "--replicas=0",
            ][..],
            "deployment.apps/idle created",
            ("apps/v1", "Deployment", "idle"),
            vec![("/spec/replicas", json!(0))],
        ),
        (
            &["create", "service", "clusterip", "web", "--tcp=80:8080"][..],
            "service/web created",
            ("v1", "Service", "web"),
            vec![
                ("/spec/ports/0/port", json!(80)),
                ("/spec/ports/0/targetPort", json!(8080)),
                ("/spec/selector", json!({"app": "web"})),
                ("/spec/type", json!("ClusterIP")),
            ],
        ),
        (
            &[
                "create",
                "job",
                "pi",
                "--image=perl",
                "--",
                "perl",
                "-e",
                "print 1",
            ][..],
            "job.batch/pi created",
            ("batch/v1", "Job", "pi"),
            vec![
                (
                    "/spec/template/spec/containers/0/command",
                    json!(["perl", "-e", "print 1"]),
                ),
                ("/spec/template/spec/restartPolicy", json!("Never")),
            ],
        ),
        (
            &[
                "run",
                "one",
                "--image=nginx",
                "--labels=app=one",
                "--env=MODE=fast",
                "--port=80",
            ][..],
            "pod/one created",
            ("v1", "Pod", "one"),
            vec![
                ("/metadata/labels", json!({"app": "one"})),
                (
                    "/spec/containers/0/env",
                    json!([{"name": "MODE", "value": "fast"}]),
                ),
                ("/spec/containers/0/ports/0/containerPort", json!(80)),
                ("/spec/restartPolicy", json!("Always")),
            ],
        ),
        (
            &["create", "serviceaccount", "bot"][..],
            "serviceaccount/bot created",
            ("v1", "ServiceAccount", "bot"),
            vec![("/metadata/name", json!("bot"))],
        ),
    ];
    for (args, printed, (api_version, kind, name), want) in cases {
        assert_eq!(s.ok(args, None).await.trim(), printed);
        let stored = s
            .sim
            .get(api_version, kind, "default", name)
            .expect("stored");
        for (pointer, value) in want {
            assert_eq!(
                stored.pointer(pointer),
                Some(&value),
                "{pointer} in {stored}"
            );
        }
    }
    // A field kube-sim does not decode is refused, not dropped: a Job from a CronJob
    // whose pods have host aliases.
    s.ok(
        &["apply", "--server-side", "-f", "-"],
        Some(ALIASED_CRONJOB),
    )
    .await;
    let err = refused(&s, &["create", "job", "now", "--from=cronjob/nightly"], "").await;
    assert_eq!(
        err,
        "error: failed to create job: the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (field 23 of Job.spec.template.spec is not decoded from protobuf by kube-sim)"
    );
    assert!(s.sim.get("batch/v1", "Job", "default", "now").is_none());
}
