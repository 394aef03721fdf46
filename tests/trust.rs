//! Deploys that used to come out green while broken, or that held CI until the timeout
//! after their result was already certain: each test here failed before the change it
//! names, on kube-sim with a paused clock.

use crate::support::{config, deployment, outcome, run_with, run_yaml};
use deploy_action::config::Mode;
use deploy_action::vocab::verdict::{Reason, RunResult, Verdict};
use kube_sim::scenario::{Dur, Fault, FaultMatch, ImageBehaviour};
use kube_sim::{Scenario, Sim};
use std::time::Duration;

const MINUTES_5: Duration = Duration::from_secs(300);
const SETTLE: Duration = Duration::from_secs(10);

fn service(name: &str) -> String {
    format!(
        "apiVersion: v1
kind: Service
metadata:
  name: {name}
spec:
  selector: {{app: {name}}}
  ports: [{{port: 80}}]
"
    )
}

/// A Deployment whose image was never pushed, and the Service in front of it.
fn missing_image_behind_a_service() -> (Sim, String) {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/api:missing",
                ImageBehaviour::not_found(),
            )
            .build(),
    );
    let yaml = format!(
        "{}---\n{}",
        deployment("api", "registry.local/shop/api:missing", ""),
        service("api")
    );
    (sim, yaml)
}

async fn deploy_settled(sim: &Sim, yaml: &str) -> deploy_action::vocab::outcome::RunOutcome {
    let mut c = config(Mode::Deploy, MINUTES_5);
    c.settle = SETTLE;
    run_with(sim, "app.yaml", yaml, c).await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_container_that_crashes_a_second_after_start_is_a_crash_loop_not_a_success() {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/api:2",
                ImageBehaviour::crashing(1, false, Duration::from_secs(1), &["panic: nil map"]),
            )
            .build(),
    );
    let run = deploy_settled(&sim, &deployment("api", "registry.local/shop/api:2", "")).await;
    assert_eq!(run.result, RunResult::Failure, "{:#?}", run.outcomes);
    let api = outcome(&run, "Deployment", "api");
    assert_eq!(api.reason, Some(Reason::CrashLoop), "{api:#?}");
    assert!(
        api.message.contains("exited with code 1"),
        "{}",
        api.message
    );
    let logs = api.logs.as_ref().expect("the crashed container's log tail");
    assert_eq!(logs.lines, ["panic: nil map"]);
}

#[tokio::test(start_paused = true)]
async fn an_oom_a_second_after_start_is_a_crash_loop_naming_oomkilled() {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/db:9",
                ImageBehaviour::crashing(137, true, Duration::from_secs(1), &[]),
            )
            .build(),
    );
    let run = deploy_settled(&sim, &deployment("db", "registry.local/shop/db:9", "")).await;
    let db = outcome(&run, "Deployment", "db");
    assert_eq!(db.reason, Some(Reason::CrashLoop), "{db:#?}");
    assert!(db.message.contains("OOMKilled"), "{}", db.message);
}

/// Deploys `yaml` (Deployment `web`) with a 10 s default window and checks it succeeded
/// after `window`, saying so.
async fn succeeds_after_its_window(yaml: &str, window: u64) {
    let sim = Sim::start(Scenario::default());
    let run = deploy_settled(&sim, yaml).await;
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    let web = outcome(&run, "Deployment", "web");
    let said = format!("2 pods ran {window}s without a restart");
    assert!(web.message.ends_with(&said), "{}", web.message);
    assert!(
        web.seconds >= window as f64,
        "judged after {} s",
        web.seconds
    );
}

#[tokio::test(start_paused = true)]
async fn a_healthy_rollout_succeeds_after_its_window_and_says_how_long_it_was_stable() {
    let plain = deployment("web", "registry.local/shop/web:1", "");
    succeeds_after_its_window(&plain, 10).await;
    let annotated = plain.replace(
        "  name: web\n",
        "  name: web\n  annotations: {deploy-action.io/settle: 40s}\n",
    );
    succeeds_after_its_window(&annotated, 40).await;
    // The controller already held each pod ready for minReadySeconds.
    let min_ready = plain.replace("  replicas: 2\n", "  replicas: 2\n  minReadySeconds: 4\n");
    succeeds_after_its_window(&min_ready, 6).await;
}

#[tokio::test(start_paused = true)]
async fn a_custom_resource_is_not_judged_before_its_crd_list_arrives() {
    // The CRD list is slow; the CRD declares that a Widget is done only once Ready=True.
    let slow_crds = Fault {
        matcher: FaultMatch {
            verb: Some("list".into()),
            resource: Some("customresourcedefinitions".into()),
            ..FaultMatch::default()
        },
        latency: Some(Dur(Duration::from_secs(3))),
        ..Fault::default()
    };
    let sim = Sim::start(Scenario::builder().fault(slow_crds).build());
    let crd = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.acme.io
  annotations: {krane.shopify.io/instance-rollout-conditions: \"true\"}
spec:
  group: acme.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
";
    let yaml = format!(
        "{crd}---
apiVersion: acme.io/v1
kind: Widget
metadata: {{name: blue}}
spec: {{size: 3}}
"
    );
    let run = run_yaml(
        &sim,
        "widgets.yaml",
        &yaml,
        Mode::Deploy,
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    let widget = outcome(&run, "Widget", "blue");
    assert_eq!(widget.verdict, Verdict::TimedOut, "{widget:#?}");
    assert!(
        widget.message.contains("Ready"),
        "judged without its CRD's rollout conditions: {}",
        widget.message
    );
}

#[tokio::test(start_paused = true)]
async fn a_failure_ends_the_run_at_once_and_the_rest_is_reported_unfinished() {
    let (sim, yaml) = missing_image_behind_a_service();
    let run = run_yaml(&sim, "api.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Failure);
    assert_eq!(
        outcome(&run, "Deployment", "api").reason,
        Some(Reason::ImageNotFound)
    );
    let svc = outcome(&run, "Service", "api");
    assert_eq!(svc.verdict, Verdict::Unfinished, "{svc:#?}");
    assert_eq!(svc.reason, Some(Reason::StoppedAfterFailure));
    assert!(
        svc.message
            .ends_with("; not waited for after Deployment/default/api failed"),
        "{}",
        svc.message
    );
    assert!(run.seconds < 60.0, "the run held on for {} s", run.seconds);
}

#[tokio::test(start_paused = true)]
async fn no_fail_fast_waits_for_every_resource() {
    let (sim, yaml) = missing_image_behind_a_service();
    let mut c = config(Mode::Deploy, Duration::from_secs(60));
    c.fail_fast = false;
    let run = run_with(&sim, "api.yaml", &yaml, c).await.unwrap();
    let svc = outcome(&run, "Service", "api");
    assert_eq!(svc.verdict, Verdict::TimedOut, "{svc:#?}");
    assert!(run.seconds >= 60.0, "ended after {} s", run.seconds);
}

#[tokio::test(start_paused = true)]
async fn a_bare_pod_deleted_during_the_deploy_is_a_failure() {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/task:1",
                ImageBehaviour::crashing(0, false, Duration::from_secs(120), &[]),
            )
            .build(),
    );
    let yaml = "apiVersion: v1
kind: Pod
metadata: {name: task}
spec:
  restartPolicy: Never
  containers: [{name: task, image: registry.local/shop/task:1}]
";
    let client = sim.client();
    let deleter = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(20)).await;
        let pods: kube::Api<k8s_openapi::api::core::v1::Pod> =
            kube::Api::namespaced(client, "default");
        pods.delete("task", &kube::api::DeleteParams::default())
            .await
            .map(|_| ())
    });
    let run = run_yaml(&sim, "task.yaml", yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    deleter.await.unwrap().unwrap();
    let task = outcome(&run, "Pod", "task");
    assert_eq!(task.reason, Some(Reason::PodFailed), "{task:#?}");
    assert!(task.seconds < 120.0, "judged after {} s", task.seconds);
}

#[tokio::test(start_paused = true)]
async fn a_dry_run_reports_what_the_server_could_not_validate() {
    let sim = Sim::start(Scenario::default());
    let yaml = format!(
        "apiVersion: v1
kind: Namespace
metadata: {{name: shop}}
---
{}---
{}",
        deployment("web", "registry.local/shop/web:1", "")
            .replace("  name: web\n", "  name: web\n  namespace: shop\n"),
        service("web").replace("  name: web\n", "  name: web\n  namespace: shop\n"),
    );
    let run = run_yaml(&sim, "shop.yaml", &yaml, Mode::DryRun, MINUTES_5)
        .await
        .unwrap();
    assert!(run.dry_run);
    assert_eq!(
        outcome(&run, "Namespace", "shop").verdict,
        Verdict::Succeeded
    );
    for kind in ["Deployment", "Service"] {
        let o = outcome(&run, kind, "web");
        assert_eq!(o.verdict, Verdict::Unfinished, "{o:#?}");
        assert_eq!(o.reason, Some(Reason::NotValidated));
        assert!(o.message.contains("namespace \"shop\""), "{}", o.message);
        // Not checked, yet certain: nothing exists yet in a namespace that does not.
        assert_eq!(
            o.change,
            Some(deploy_action::vocab::outcome::Change::Created)
        );
    }
    let summary = deploy_action::render::summary(&run, &deploy_action::render::Style::PLAIN);
    assert!(
        summary.starts_with(
            "DRY RUN: 3 resources (3 created) would be applied; server validation passed for 1, 2 not validated by the server"
        ),
        "{summary}"
    );
}

#[tokio::test(start_paused = true)]
async fn crds_and_their_custom_resources_deploy_together_on_a_fresh_cluster() {
    let sim = Sim::start(Scenario::default());
    let yaml = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.acme.io}
spec:
  group: acme.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: acme.io/v1
kind: Widget
metadata: {name: blue}
spec: {size: 3}
";
    let run = run_yaml(&sim, "widgets.yaml", yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert!(sim.get("acme.io/v1", "Widget", "default", "blue").is_some());
}

/// The phase each resource was applied in, by name.
fn applied_in(recorder: &deploy_action::vocab::events::Recorder) -> Vec<(String, &'static str)> {
    use deploy_action::vocab::events::RunEvent;
    let mut phase = "";
    let mut out = Vec::new();
    for (_, event) in &recorder.events {
        match event {
            RunEvent::Phase(p) => phase = p,
            RunEvent::Applied { id, .. } => out.push((id.name.clone(), phase)),
            _ => {}
        }
    }
    out
}

#[tokio::test(start_paused = true)]
async fn a_crd_that_says_not_predeployed_has_its_resources_applied_with_the_rest() {
    let sim = Sim::start(Scenario::default());
    let crd = |predeployed: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.acme.io
  annotations: {{krane.shopify.io/predeployed: \"{predeployed}\"}}
spec:
  group: acme.io
  scope: Namespaced
  names: {{plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
"
        )
    };
    let widget = "apiVersion: acme.io/v1\nkind: Widget\nmetadata: {name: blue}\nspec: {size: 3}\n";
    let mut config = crate::support::config(Mode::Deploy, MINUTES_5);
    for (predeployed, phase) in [
        ("true", "configuration and policy"),
        ("false", "workloads and the rest"),
    ] {
        // The CRD is in the cluster already; only the Widget is deployed.
        let installed = run_yaml(&sim, "crd.yaml", &crd(predeployed), Mode::Deploy, MINUTES_5)
            .await
            .unwrap();
        assert_eq!(installed.result, RunResult::Success, "{installed:#?}");
        // Served some time after it is Established, as an API server does.
        sim.settle(Duration::from_secs(10)).await;
        config.files = vec!["widget.yaml".into()];
        let (run, recorder) =
            crate::support::run_recorded(&sim, "widget.yaml", widget, config.clone())
                .await
                .unwrap();
        assert_eq!(run.result, RunResult::Success, "{run:#?}");
        assert_eq!(
            applied_in(&recorder),
            [("blue".to_owned(), phase)],
            "predeployed: {predeployed}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn lists_that_fail_forever_time_out_naming_the_api_error_and_how_often() {
    let failing_pods = Fault {
        matcher: FaultMatch {
            verb: Some("list".into()),
            resource: Some("pods".into()),
            ..FaultMatch::default()
        },
        status: Some(503),
        message: Some("etcd cluster is unavailable or misconfigured".into()),
        ..Fault::default()
    };
    let sim = Sim::start(Scenario::builder().fault(failing_pods).build());
    let yaml = deployment("web", "registry.local/shop/web:1", "");
    let run = run_yaml(
        &sim,
        "web.yaml",
        &yaml,
        Mode::Deploy,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(web.verdict, Verdict::TimedOut, "{web:#?}");
    assert_eq!(web.reason, Some(Reason::ApiUnavailable), "{web:#?}");
    assert!(
        web.message.starts_with("the API server failed the list of Pod ")
            && web.message.ends_with(
                "; last error: list failed: 503 ServiceUnavailable: etcd cluster is unavailable or misconfigured"
            ),
        "{}",
        web.message
    );
}

#[tokio::test(start_paused = true)]
async fn a_watch_expired_mid_stream_is_relisted_and_the_verdict_holds() {
    let expired = Fault {
        matcher: FaultMatch {
            verb: Some("watch".into()),
            resource: Some("pods".into()),
            nth: Some(1),
            ..FaultMatch::default()
        },
        expired: true,
        ..Fault::default()
    };
    let sim = Sim::start(Scenario::builder().fault(expired).build());
    let yaml = deployment("web", "registry.local/shop/web:1", "");
    let run = run_yaml(&sim, "web.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert!(
        sim.server.recorder.count("list", "pods") >= 2,
        "the 410 did not lead to a re-list"
    );
}

#[tokio::test(start_paused = true)]
async fn discovery_takes_two_requests_where_the_server_aggregates_it() {
    let sim = Sim::start(Scenario::default());
    let yaml = deployment("web", "registry.local/shop/web:1", "");
    let run = run_yaml(&sim, "web.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    let mut discovery: Vec<String> = sim
        .server
        .recorder
        .calls()
        .into_iter()
        .filter(|c| c.verb == "discover")
        .map(|c| c.resource)
        .collect();
    discovery.sort();
    // One discovery per run: /api and /apis, aggregated (legacy discovery took 16).
    assert_eq!(discovery, ["/api", "/apis"]);
}

#[tokio::test(start_paused = true)]
async fn evidence_the_deployer_may_not_read_does_not_hold_the_verdict() {
    // A namespaced deployer: listing Nodes (cluster-wide) and Events is forbidden.
    let forbid = |resource: &str| Fault {
        matcher: FaultMatch {
            verb: Some("list".into()),
            resource: Some(resource.into()),
            ..FaultMatch::default()
        },
        status: Some(403),
        message: Some(format!(
            "{resource} is forbidden: User \"ci\" cannot list {resource}"
        )),
        ..Fault::default()
    };
    let sim = Sim::start(
        Scenario::builder()
            .fault(forbid("events"))
            .fault(forbid("nodes"))
            .build(),
    );
    let yaml = format!(
        "{}---
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  selector: {{matchLabels: {{app: agent}}}}
  template:
    metadata: {{labels: {{app: agent}}}}
    spec: {{containers: [{{name: agent, image: registry.local/shop/agent:1}}]}}
",
        deployment("web", "registry.local/shop/web:1", "")
    );
    let run = run_yaml(&sim, "app.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
}

#[tokio::test(start_paused = true)]
async fn a_manifest_the_server_cannot_decode_fails_the_dry_run_and_nothing_is_applied() {
    let sim = Sim::start(Scenario::default());
    let yaml = format!(
        "apiVersion: v1
kind: ConfigMap
metadata: {{name: settings}}
data: {{mode: fast}}
---
{}",
        deployment("web", "registry.local/shop/web:1", "")
            .replace("replicas: 2", "replicas: \"two\"")
    );
    let run = run_yaml(&sim, "web.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Failure, "{:#?}", run.outcomes);
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(web.verdict, Verdict::Failed, "{web:#?}");
    assert_eq!(web.reason, Some(Reason::ApplyRejected));
    assert!(
        web.message
            .contains(".spec.replicas: expected numeric (int or float), got string"),
        "{}",
        web.message
    );
    assert!(
        sim.get("v1", "ConfigMap", "default", "settings").is_none(),
        "the good ConfigMap was applied although the dry run refused the Deployment"
    );
    assert!(sim.get("apps/v1", "Deployment", "default", "web").is_none());
}

/// The writes kube-sim saw, in order: (whether a dry run, resource/name).
fn patches(sim: &Sim) -> Vec<(bool, String)> {
    sim.server
        .recorder
        .calls()
        .into_iter()
        .filter(|c| c.verb == "patch")
        .map(|c| {
            let path = c.path_and_query.split('?').next().unwrap_or_default();
            let name = path.rsplit('/').next().unwrap_or_default();
            (
                c.path_and_query.contains("dryRun=All"),
                format!("{}/{name}", c.resource),
            )
        })
        .collect()
}

fn configmaps(count: usize) -> String {
    let mut yaml = String::new();
    for i in 0..count {
        yaml.push_str(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i:03}}}\ndata: {{n: \"{i}\"}}\n---\n"
        ));
    }
    yaml
}

#[tokio::test(start_paused = true)]
async fn a_refusal_in_the_last_phase_means_not_one_earlier_phase_object_was_written() {
    // Forty ConfigMaps (the priority phase, applied first) and a Deployment the server
    // refuses (the last phase): more manifests than requests in flight, so the refusal is
    // answered while other dry runs are still going.
    let sim = Sim::start(Scenario::default());
    let yaml = format!(
        "{}{}",
        configmaps(40),
        deployment("web", "registry.local/shop/web:1", "")
            .replace("replicas: 2", "replicas: \"two\"")
    );
    let run = run_yaml(&sim, "many.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Failure, "{:#?}", run.outcomes);
    assert_eq!(
        outcome(&run, "Deployment", "web").reason,
        Some(Reason::ApplyRejected)
    );
    let patches = patches(&sim);
    assert_eq!(
        patches.len(),
        41,
        "every manifest dry-run once: {patches:?}"
    );
    let written: Vec<_> = patches.iter().filter(|(dry, _)| !dry).collect();
    assert!(written.is_empty(), "written despite a refusal: {written:?}");
    assert!(sim.get("v1", "ConfigMap", "default", "cm-000").is_none());
}

#[tokio::test(start_paused = true)]
async fn every_dry_run_is_answered_before_the_first_write() {
    let sim = Sim::start(Scenario::default());
    let yaml = format!(
        "{}{}---\n{}",
        configmaps(30),
        deployment("web", "registry.local/shop/web:1", ""),
        service("web")
    );
    let run = run_yaml(&sim, "app.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    let patches = patches(&sim);
    let first_write = patches.iter().position(|(dry, _)| !dry).unwrap();
    assert_eq!(
        first_write, 32,
        "a write before the last dry run: {patches:?}"
    );
    assert!(patches[first_write..].iter().all(|(dry, _)| !dry));
    let mut dry: Vec<&str> = patches[..first_write]
        .iter()
        .map(|(_, n)| n.as_str())
        .collect();
    let mut written: Vec<&str> = patches[first_write..]
        .iter()
        .map(|(_, n)| n.as_str())
        .collect();
    dry.sort_unstable();
    written.sort_unstable();
    assert_eq!(dry, written, "each manifest dry-run, then applied, once");
    // Phases: the ConfigMaps (priority) are all written before the Deployment and Service.
    let last_configmap = patches
        .iter()
        .rposition(|(_, n)| n.starts_with("configmaps/"));
    let first_rest = patches[first_write..]
        .iter()
        .position(|(_, n)| !n.starts_with("configmaps/"))
        .map(|p| p + first_write);
    assert!(last_configmap < first_rest, "{patches:?}");
}
