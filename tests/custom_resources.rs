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

/// A CRD for `kind` in `group` (version v1), with a status subresource; `annotations` as
/// YAML flow.
fn crd(group: &str, kind: &str, annotations: &str) -> String {
    crd_version(group, "v1", kind, annotations)
}

fn crd_version(group: &str, version: &str, kind: &str, annotations: &str) -> String {
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
    - name: {version}
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
    controller_of(sim, (group, "v1", kind), name, after, status);
}

fn controller_of(
    sim: &Sim,
    (group, version, kind): (&str, &str, &str),
    name: &str,
    after: Duration,
    status: Value,
) {
    let plural = format!("{}s", kind.to_ascii_lowercase());
    let resource = ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: format!("{group}/{version}"),
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

/// Deploys `yaml` as `file` on `sim` and returns `kind/name`'s verdict, reason and
/// message, with the run's length in seconds.
async fn judged(
    sim: &Sim,
    file: &str,
    yaml: &str,
    timeout: Duration,
    (kind, name): (&str, &str),
) -> ((Verdict, Option<Reason>, String), f64) {
    let run = run_with(sim, file, yaml, config(Mode::Deploy, timeout))
        .await
        .unwrap();
    let o = outcome(&run, kind, name);
    ((o.verdict, o.reason, o.message.clone()), run.seconds)
}

const MINUTES_5: Duration = Duration::from_secs(300);

const WIDGET: &str =
    "apiVersion: acme.io/v1\nkind: Widget\nmetadata: {name: blue}\nspec: {size: 3}\n";

#[tokio::test(start_paused = true)]
async fn a_resource_no_controller_reports_on_is_not_reconciled_not_done() {
    let sim = Sim::start(Scenario::default());
    let yaml = format!("{}---\n{WIDGET}", crd("acme.io", "Widget", "{}"));
    let (got, _) = judged(
        &sim,
        "widgets.yaml",
        &yaml,
        Duration::from_secs(60),
        ("Widget", "blue"),
    )
    .await;
    assert_eq!(
        got,
        (
            Verdict::TimedOut,
            Some(Reason::NotReconciled),
            "no controller has reported on it yet (its CRD declares a status, and it has none)"
                .to_owned()
        )
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

#[tokio::test(start_paused = true)]
async fn a_certificate_is_done_when_cert_manager_says_ready_for_its_generation() {
    let certificate = "apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: shop-tls}
spec:
  secretName: shop-tls
  dnsNames: [shop.example.com]
  issuerRef: {name: letsencrypt, kind: ClusterIssuer}
";
    let yaml = format!(
        "{}---\n{certificate}",
        crd("cert-manager.io", "Certificate", "{}")
    );
    // cert-manager's words: issuing first, ready a while later
    let sim = Sim::start(Scenario::default());
    controller(
        &sim,
        "cert-manager.io",
        "Certificate",
        "shop-tls",
        Duration::from_secs(2),
        json!({
        "conditions": [{"type": "Issuing", "status": "True", "reason": "DoesNotExist", "observedGeneration": 1,
            "message": "Issuing certificate as Secret does not exist"},
            {"type": "Ready", "status": "False", "reason": "DoesNotExist", "observedGeneration": 1,
            "message": "Issuing certificate as Secret does not exist"}]}),
    );
    controller(
        &sim,
        "cert-manager.io",
        "Certificate",
        "shop-tls",
        Duration::from_secs(40),
        json!({
        "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "observedGeneration": 1,
            "message": "Certificate is up to date and has not expired"}],
        "notAfter": "2027-03-01T00:00:00Z"}),
    );
    let run = run_with(&sim, "tls.yaml", &yaml, config(Mode::Deploy, MINUTES_5))
        .await
        .unwrap();
    let tls = outcome(&run, "Certificate", "shop-tls");
    assert_eq!(
        (tls.verdict, tls.message.as_str()),
        (
            Verdict::Succeeded,
            "Ready=True (Ready): Certificate is up to date and has not expired"
        ),
        "{tls:#?}"
    );
    assert!(
        run.seconds >= 40.0,
        "done at {}s, before cert-manager said Ready",
        run.seconds
    );
    // The same, with nothing ever issued: a timeout that names cert-manager's words.
    let sim = Sim::start(Scenario::default());
    controller(
        &sim,
        "cert-manager.io",
        "Certificate",
        "shop-tls",
        Duration::from_secs(2),
        json!({
        "conditions": [{"type": "Issuing", "status": "True", "reason": "DoesNotExist", "observedGeneration": 1,
            "message": "Issuing certificate as Secret does not exist"}]}),
    );
    let (got, _) = judged(
        &sim,
        "tls.yaml",
        &yaml,
        Duration::from_secs(60),
        ("Certificate", "shop-tls"),
    )
    .await;
    assert_eq!(
        got,
        (
            Verdict::TimedOut,
            Some(Reason::NotReady),
            "Issuing=True (DoesNotExist): Issuing certificate as Secret does not exist".to_owned()
        )
    );
}

fn rollout(paused: bool) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {{name: storefront}}
spec:
  replicas: 4
  paused: {paused}
  selector: {{matchLabels: {{app: storefront}}}}
  template:
    metadata: {{labels: {{app: storefront}}}}
    spec: {{containers: [{{name: web, image: registry.local/shop/web:2}}]}}
  strategy:
    canary:
      steps: [{{setWeight: 25}}, {{pause: {{}}}}, {{setWeight: 50}}, {{pause: {{duration: 1m}}}}]
"
    )
}

#[tokio::test(start_paused = true)]
async fn a_rollout_paused_at_a_canary_step_waits_for_promotion_one_paused_as_declared_is_done() {
    let paused_at_step = |declared: bool| {
        json!({"phase": "Paused", "message": "CanaryPauseStep", "observedGeneration": "1",
            "controllerPause": true, "currentStepIndex": 1,
            "pauseConditions": [{"reason": if declared { "PausedByUser" } else { "CanaryPauseStep" },
                "startTime": "2026-12-05T10:00:00Z"}],
            "conditions": [{"type": "Progressing", "status": "Unknown", "reason": "RolloutPaused",
                "message": "Rollout is paused"}]})
    };
    for (declared, expected) in [
        (
            false,
            (
                Verdict::TimedOut,
                Some(Reason::NotReady),
                "paused at canary step 2 of 4 (CanaryPauseStep): waiting for promotion",
            ),
        ),
        (
            true,
            (
                Verdict::Succeeded,
                None,
                "paused as declared (spec.paused: true)",
            ),
        ),
    ] {
        let sim = Sim::start(Scenario::default());
        let yaml = format!(
            "{}---\n{}",
            crd_version("argoproj.io", "v1alpha1", "Rollout", "{}"),
            rollout(declared)
        );
        controller_of(
            &sim,
            ("argoproj.io", "v1alpha1", "Rollout"),
            "storefront",
            Duration::from_secs(3),
            paused_at_step(declared),
        );
        let (got, _) = judged(
            &sim,
            "rollout.yaml",
            &yaml,
            Duration::from_secs(60),
            ("Rollout", "storefront"),
        )
        .await;
        let expected = (expected.0, expected.1, expected.2.to_owned());
        assert_eq!(got, expected, "declared: {declared}");
    }
}

/// A fault that refuses every list and watch of `resource` as RBAC would.
fn forbid(resource: &str) -> Vec<kube_sim::scenario::Fault> {
    use kube_sim::scenario::{Fault, FaultMatch};
    ["list", "watch"]
        .into_iter()
        .map(|verb| Fault {
            matcher: FaultMatch {
                verb: Some(verb.into()),
                resource: Some(resource.into()),
                ..FaultMatch::default()
            },
            status: Some(403),
            message: Some(format!(
                "{resource} is forbidden: User \"ci\" cannot {verb} resource \"{resource}\" in API group \"\" at the cluster scope"
            )),
            ..Fault::default()
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_deployer_that_may_not_list_crds_judges_custom_resources_by_their_status() {
    let sim = Sim::start(Scenario {
        faults: forbid("customresourcedefinitions"),
        ..Scenario::default()
    });
    let crd: Value = serde_yaml_ng::from_str(&crd("acme.io", "Widget", "{}")).unwrap();
    sim.create(crd).unwrap();
    // Established (and served) by kube-sim's CRD controller, as an API server would.
    tokio::time::sleep(Duration::from_secs(1)).await;
    controller(
        &sim,
        "acme.io",
        "Widget",
        "blue",
        Duration::from_secs(5),
        json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Synced", "message": "3 shards"}]}),
    );
    let (got, seconds) = judged(&sim, "widget.yaml", WIDGET, MINUTES_5, ("Widget", "blue")).await;
    assert_eq!(
        got,
        (
            Verdict::Succeeded,
            None,
            "Ready=True (Synced): 3 shards; its CRD could not be read (the deployer may not list \
             CustomResourceDefinitions), so a health rule the CRD declares was not checked"
                .to_owned()
        )
    );
    assert!(
        seconds < 60.0,
        "decided on the controller's write, not the timeout: {seconds}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_deployer_that_may_not_list_pods_fails_forbidden_at_once_naming_the_grant() {
    let sim = Sim::start(Scenario {
        faults: forbid("pods"),
        ..Scenario::default()
    });
    let yaml = crate::support::deployment("web", "registry.local/shop/web:1", "");
    let run = run_with(&sim, "web.yaml", &yaml, config(Mode::Deploy, MINUTES_5))
        .await
        .unwrap();
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        (run.result, web.verdict, web.reason),
        (RunResult::Failure, Verdict::Failed, Some(Reason::Forbidden)),
        "{web:#?}"
    );
    assert!(
        web.message.starts_with(
            "the deployer may not list and watch pods in namespace default, which its verdict needs"
        ),
        "{}",
        web.message
    );
    assert!(
        web.message.contains("cannot list resource \"pods\""),
        "{}",
        web.message
    );
    assert!(web.seconds < 10.0, "{}", web.seconds);
}

#[tokio::test(start_paused = true)]
async fn a_deployer_that_may_list_pods_but_not_watch_them_fails_forbidden_too() {
    let watch_only = forbid("pods")
        .into_iter()
        .filter(|f| f.matcher.verb.as_deref() == Some("watch"));
    let sim = Sim::start(Scenario {
        faults: watch_only.collect(),
        ..Scenario::default()
    });
    let yaml = crate::support::deployment("web", "registry.local/shop/web:1", "");
    let run = run_with(&sim, "web.yaml", &yaml, config(Mode::Deploy, MINUTES_5))
        .await
        .unwrap();
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        (web.verdict, web.reason),
        (Verdict::Failed, Some(Reason::Forbidden)),
        "{web:#?}"
    );
    assert!(
        web.message.contains("cannot watch resource \"pods\""),
        "{}",
        web.message
    );
}
