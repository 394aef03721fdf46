//! Custom resources through a whole deploy on kube-sim: judged by what a controller
//! writes (the test plays the controller, writing the status subresource as one would),
//! through the bundled library, a `--rules` file and a CRD's own annotation.

use crate::support::{config, outcome, run_with};
use deploy_action::config::Mode;
use deploy_action::vocab::verdict::{Reason, RunResult, Verdict};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube_sim::{Scenario, Sim};
use serde_json::{Value, json};
use std::time::Duration;

/// A CRD for `kind` in `group`, with a status subresource; `annotations` as YAML flow.
fn crd(group: &str, kind: &str, annotations: &str) -> String {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.{group}
  annotations: {annotations}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: {plural}, singular: {singular}, kind: {kind}, listKind: {kind}List}}
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {{status: {{}}}}
      schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
",
        singular = kind.to_ascii_lowercase()
    )
}

/// Plays `group`'s controller: after `after`, writes `status` on `kind/name` in `default`.
fn controller(sim: &Sim, group: &str, kind: &str, name: &str, after: Duration, status: Value) {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    let resource = ApiResource {
        group: group.to_owned(),
        version: "v1".to_owned(),
        api_version: format!("{group}/v1"),
        kind: kind.to_owned(),
        plural,
    };
    let api: Api<DynamicObject> = Api::namespaced_with(sim.client(), "default", &resource);
    let name = name.to_owned();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        let patch = json!({"status": status});
        api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("the status subresource takes the controller's write");
    });
}

const MINUTES_5: Duration = Duration::from_secs(300);

const WIDGET: &str =
    "apiVersion: acme.io/v1\nkind: Widget\nmetadata: {name: blue}\nspec: {size: 3}\n";

#[tokio::test(start_paused = true)]
async fn a_resource_no_controller_reports_on_is_not_reconciled_not_done() {
    let sim = Sim::start(Scenario::default());
    let yaml = format!("{}---\n{WIDGET}", crd("acme.io", "Widget", "{}"));
    let run = run_with(
        &sim,
        "widgets.yaml",
        &yaml,
        config(Mode::Deploy, Duration::from_secs(60)),
    )
    .await
    .unwrap();
    let blue = outcome(&run, "Widget", "blue");
    assert_eq!(
        (blue.verdict, blue.reason, blue.message.as_str()),
        (
            Verdict::TimedOut,
            Some(Reason::NotReconciled),
            "no controller has reported on it yet (its CRD declares a status, and it has none)"
        ),
        "{blue:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_crd_annotation_rule_decides_as_its_controller_writes() {
    let rule = "\"deploy-action.io/health-rules\": |
      rules:
        - failed:
            - when: status.phase == 'Failed'
              message: \"'widget failed: ' + status.message\"
          done:
            - when: status.phase == 'Running'
              message: \"'running with ' + string(status.size) + ' shards'\"";
    let annotations = format!("\n    {rule}");
    for (status, expected) in [
        (
            json!({"phase": "Running", "size": 3}),
            (Verdict::Succeeded, None, "running with 3 shards"),
        ),
        (
            json!({"phase": "Failed", "message": "size must be odd"}),
            (
                Verdict::Failed,
                Some(Reason::ConditionFailed),
                "widget failed: size must be odd",
            ),
        ),
    ] {
        let sim = Sim::start(Scenario::default());
        let yaml = format!("{}---\n{WIDGET}", crd("acme.io", "Widget", &annotations));
        controller(
            &sim,
            "acme.io",
            "Widget",
            "blue",
            Duration::from_secs(5),
            status,
        );
        let run = run_with(&sim, "widgets.yaml", &yaml, config(Mode::Deploy, MINUTES_5))
            .await
            .unwrap();
        let blue = outcome(&run, "Widget", "blue");
        assert_eq!(
            (blue.verdict, blue.reason, blue.message.as_str()),
            expected,
            "{blue:#?}"
        );
        assert!(
            run.seconds < 60.0,
            "decided when the controller wrote, not at the deadline"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_bad_rule_in_a_crd_annotation_is_refused_before_apply_with_its_line() {
    let sim = Sim::start(Scenario::default());
    let annotations = "\n    deploy-action.io/health-rules: |\n      rules:\n        - done:\n            - when: status.phase ==";
    let yaml = format!("{}---\n{WIDGET}", crd("acme.io", "Widget", annotations));
    let err = run_with(&sim, "widgets.yaml", &yaml, config(Mode::Deploy, MINUTES_5))
        .await
        .unwrap_err();
    assert!(err.is_input(), "{err:?}");
    // Line 9 of the file: the `when:` inside the annotation's text.
    let text = err.to_string();
    assert!(
        text.contains(
            "widgets.yaml:9: invalid CEL \"status.phase ==\": <input>:1:16: Syntax error"
        ),
        "{text}"
    );
    assert!(
        sim.get(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "",
            "widgets.acme.io"
        )
        .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn a_rules_file_comes_before_the_crds_own_rule() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rules.yaml");
    std::fs::write(
        &path,
        "rules:\n  - group: acme.io\n    kind: Widget\n    done:\n      - when: manifest.spec.size == 3 && status.phase == 'Sized'\n        message: \"'sized as declared'\"\n",
    )
    .unwrap();
    let config = deploy_action::pipeline::load_rules(deploy_action::config::Config {
        rules: vec![path],
        ..config(Mode::Deploy, MINUTES_5)
    })
    .unwrap();
    let sim = Sim::start(Scenario::default());
    let own = "\n    deploy-action.io/health-rules: |\n      rules:\n        - done:\n            - when: status.phase == 'Never'";
    let yaml = format!("{}---\n{WIDGET}", crd("acme.io", "Widget", own));
    controller(
        &sim,
        "acme.io",
        "Widget",
        "blue",
        Duration::from_secs(3),
        json!({"phase": "Sized"}),
    );
    let run = run_with(&sim, "widgets.yaml", &yaml, config).await.unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert_eq!(outcome(&run, "Widget", "blue").message, "sized as declared");
}
