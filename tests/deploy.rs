//! Deploys against kube-sim with a paused clock: each scenario the verdict rules must get
//! right, end to end through apply, watches and judging.

use crate::support::{deployment, outcome, run_yaml};
use deploy_action::config::Mode;
use deploy_action::pipeline::RunError;
use deploy_action::vocab::verdict::{Reason, RunResult, Verdict};
use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, Sim};
use serde_json::json;
use std::time::Duration;

const MINUTES_5: Duration = Duration::from_secs(300);

#[tokio::test(start_paused = true)]
async fn a_healthy_rollout_succeeds() {
    let sim = Sim::start(Scenario::default());
    let yaml = deployment("web", "registry.local/shop/web:1", "");
    let run = run_yaml(&sim, "web.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(web.verdict, Verdict::Succeeded);
    assert!(
        web.seconds < 30.0,
        "a 1 s pull took {} s to judge",
        web.seconds
    );
    let stored = sim.get("apps/v1", "Deployment", "default", "web").unwrap();
    assert_eq!(stored["status"]["availableReplicas"], 2);
}

#[tokio::test(start_paused = true)]
async fn a_crash_loop_fails_with_exit_code_and_logs() {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/api:2",
                ImageBehaviour::crashing(3, false, Duration::ZERO, &["fatal: no config"]),
            )
            .build(),
    );
    let yaml = deployment("api", "registry.local/shop/api:2", "");
    let run = run_yaml(&sim, "api.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Failure);
    let api = outcome(&run, "Deployment", "api");
    assert_eq!(api.reason, Some(Reason::CrashLoop), "{api:#?}");
    assert!(
        api.message.contains("exited with code 3"),
        "{}",
        api.message
    );
    let logs = api
        .logs
        .as_ref()
        .expect("log tail of the crashed container");
    assert_eq!(logs.lines, ["fatal: no config"]);
    assert!(api.seconds < 120.0, "crash loop took {} s", api.seconds);
}

#[tokio::test(start_paused = true)]
async fn a_crash_loop_whose_logs_are_forbidden_says_so_and_names_the_grant() {
    use kube_sim::scenario::{Fault, FaultMatch};
    let forbid_logs = Fault {
        matcher: FaultMatch {
            verb: Some("get".into()),
            resource: Some("pods/log".into()),
            ..FaultMatch::default()
        },
        status: Some(403),
        message: Some(
            "pods \"api-7d4b9c8f5d-x2x9q\" is forbidden: User \"ci\" cannot get resource \"pods/log\" in API group \"\" in the namespace \"default\"".into(),
        ),
        ..Fault::default()
    };
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/api:2",
                ImageBehaviour::crashing(3, false, Duration::ZERO, &["fatal: no config"]),
            )
            .fault(forbid_logs)
            .build(),
    );
    let yaml = deployment("api", "registry.local/shop/api:2", "");
    let run = run_yaml(&sim, "api.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    let api = outcome(&run, "Deployment", "api");
    assert_eq!(api.reason, Some(Reason::CrashLoop), "{api:#?}");
    let logs = api
        .logs
        .as_ref()
        .expect("the log tail says why it is missing");
    assert!(logs.lines.is_empty());
    let why = logs.unreadable.as_deref().unwrap_or_default();
    assert!(why.contains("cannot get resource \"pods/log\""), "{why}");
    assert!(
        why.ends_with("the deployer needs `get` on `pods/log` in namespace default"),
        "{why}"
    );
    let summary =
        deploy_action::render::summary::summary(&run, &deploy_action::render::Style::default());
    assert!(
        summary.contains("(previous instance): not read: the API server refused"),
        "{summary}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_missing_configmap_is_a_container_config_error() {
    let sim = Sim::start(Scenario::default());
    let env = "          env:
            - name: MODE
              valueFrom:
                configMapKeyRef: {name: app-config, key: mode}
";
    let yaml = deployment("web", "registry.local/shop/web:1", env);
    let run = run_yaml(&sim, "web.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(web.reason, Some(Reason::ContainerConfigError), "{web:#?}");
    assert!(
        web.message.contains("configmap \"app-config\" not found"),
        "{}",
        web.message
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_job_fails() {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/migrate:1",
                ImageBehaviour::crashing(
                    1,
                    false,
                    Duration::from_secs(2),
                    &["migration 42 failed"],
                ),
            )
            .build(),
    );
    let yaml = "apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: registry.local/shop/migrate:1
";
    let run = run_yaml(&sim, "job.yaml", yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    let job = outcome(&run, "Job", "migrate");
    assert_eq!(job.reason, Some(Reason::JobFailed), "{job:#?}");
}

#[tokio::test(start_paused = true)]
async fn a_slow_pull_times_out_blaming_the_registry() {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/worker:*",
                ImageBehaviour::pulls_in(Duration::from_secs(600)),
            )
            .build(),
    );
    let yaml = deployment("worker", "registry.local/shop/worker:7", "");
    let run = run_yaml(
        &sim,
        "worker.yaml",
        &yaml,
        Mode::Deploy,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    assert_eq!(run.result, RunResult::TimedOut);
    let worker = outcome(&run, "Deployment", "worker");
    assert_eq!(worker.verdict, Verdict::TimedOut);
    assert_eq!(worker.reason, Some(Reason::RegistrySlow), "{worker:#?}");
    assert!(
        (59.0..=61.0).contains(&worker.seconds),
        "timed out after {} s",
        worker.seconds
    );
}

#[tokio::test(start_paused = true)]
async fn progress_deadline_exceeded_ends_the_wait_early() {
    let sim = Sim::start(
        Scenario::builder()
            .image("registry.local/shop/ui:*", ImageBehaviour::never_ready())
            .build(),
    );
    let probe = "          readinessProbe:
            httpGet: {path: /healthz, port: 8080}
";
    let yaml = deployment("ui", "registry.local/shop/ui:3", probe)
        .replace("replicas: 2", "replicas: 2\n  progressDeadlineSeconds: 30");
    let run = run_yaml(&sim, "ui.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    let ui = outcome(&run, "Deployment", "ui");
    assert_eq!(ui.reason, Some(Reason::ProgressDeadlineExceeded), "{ui:#?}");
    assert!(
        ui.seconds < 120.0,
        "the 30 s progress deadline took {} s to notice",
        ui.seconds
    );
}

#[tokio::test(start_paused = true)]
async fn a_rejected_manifest_fails_and_nothing_is_applied() {
    let sim = Sim::start(Scenario::default());
    let bad = deployment("bad", "registry.local/shop/web:1", "")
        .replace("labels: {app: bad}", "labels: {app: other}");
    let yaml = format!(
        "{}---\n{bad}",
        deployment("good", "registry.local/shop/web:1", "")
    );
    let run = run_yaml(&sim, "two.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Failure);
    let bad = outcome(&run, "Deployment", "bad");
    assert_eq!(bad.reason, Some(Reason::ApplyRejected));
    assert!(
        bad.message
            .contains("`selector` does not match template `labels`"),
        "{}",
        bad.message
    );
    assert_eq!(bad.source.as_ref().unwrap().line, 17);
    assert!(
        sim.get("apps/v1", "Deployment", "default", "good")
            .is_none(),
        "good was applied despite a rejected manifest"
    );
}

#[tokio::test(start_paused = true)]
async fn invalid_yaml_applies_nothing() {
    let sim = Sim::start(Scenario::default());
    let yaml = format!(
        "{}---\nkind: [unclosed\n",
        deployment("web", "registry.local/shop/web:1", "")
    );
    let before = sim.store.current_rv();
    let err = run_yaml(&sim, "broken.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap_err();
    assert!(matches!(err, RunError::Load(_)), "{err}");
    assert!(err.to_string().contains("broken.yaml:1"), "{err}");
    assert_eq!(sim.store.current_rv(), before, "something was written");
}

#[tokio::test(start_paused = true)]
async fn a_dry_run_stores_nothing_and_reports_what_would_be_applied() {
    let sim = Sim::start(Scenario::default());
    let yaml = deployment("web", "registry.local/shop/web:1", "");
    let before = sim.store.current_rv();
    let run = run_yaml(&sim, "web.yaml", &yaml, Mode::DryRun, MINUTES_5)
        .await
        .unwrap();
    assert!(run.dry_run);
    assert_eq!(run.result, RunResult::Success);
    assert_eq!(
        outcome(&run, "Deployment", "web").message,
        "server-side dry run passed"
    );
    assert_eq!(sim.store.current_rv(), before);
    assert!(sim.get("apps/v1", "Deployment", "default", "web").is_none());
}

#[tokio::test(start_paused = true)]
async fn watch_judges_objects_that_already_exist() {
    let healthy = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "legacy", "namespace": "default", "generation": 4},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "legacy"}},
                 "template": {"metadata": {"labels": {"app": "legacy"}},
                              "spec": {"containers": [{"name": "app", "image": "legacy:1"}]}}},
        "status": {"observedGeneration": 4, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
                   "availableReplicas": 1,
                   "conditions": [
                     {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                     {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}
    });
    let sim = Sim::start(
        Scenario::builder()
            .at(Duration::ZERO, vec![healthy])
            .build(),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let yaml = deployment("legacy", "legacy:1", "").replace("replicas: 2", "replicas: 1");
    let before = sim.store.current_rv();
    let run = run_yaml(&sim, "legacy.yaml", &yaml, Mode::Watch, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(
        outcome(&run, "Deployment", "legacy").verdict,
        Verdict::Succeeded,
        "{:#?}",
        run.outcomes
    );
    assert_eq!(sim.store.current_rv(), before, "watch wrote to the cluster");
}

#[tokio::test(start_paused = true)]
async fn a_throttled_apply_is_retried_and_the_deploy_succeeds() {
    use kube_sim::scenario::{Dur, Fault, FaultMatch};
    let throttle = Fault {
        matcher: FaultMatch {
            verb: Some("patch".into()),
            resource: Some("deployments".into()),
            nth: Some(1),
            count: Some(2),
            ..FaultMatch::default()
        },
        status: Some(429),
        retry_after: Some(Dur(Duration::from_secs(1))),
        ..Fault::default()
    };
    let sim = Sim::start(Scenario::builder().fault(throttle).build());
    let yaml = deployment("web", "registry.local/shop/web:1", "");
    let run = run_yaml(&sim, "web.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    // Dry run (throttled twice, then through) and the apply itself.
    assert_eq!(sim.server.recorder.count("patch", "deployments"), 4);
}

#[tokio::test(start_paused = true)]
async fn dropped_watches_are_resumed_without_losing_the_verdict() {
    use kube_sim::scenario::{Fault, FaultMatch};
    let drop = Fault {
        matcher: FaultMatch {
            verb: Some("watch".into()),
            resource: Some("pods".into()),
            ..FaultMatch::default()
        },
        drop_after_events: Some(2),
        ..Fault::default()
    };
    let sim = Sim::start(Scenario::builder().fault(drop).build());
    let yaml = deployment("web", "registry.local/shop/web:1", "");
    let run = run_yaml(&sim, "web.yaml", &yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert!(
        sim.server.recorder.count("watch", "pods") >= 2,
        "the pod watch was never re-established"
    );
}

#[tokio::test(start_paused = true)]
async fn complete_counts_with_available_false_are_not_success() {
    let unavailable = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "legacy", "namespace": "default", "generation": 4},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "legacy"}},
                 "template": {"metadata": {"labels": {"app": "legacy"}},
                              "spec": {"containers": [{"name": "app", "image": "legacy:1"}]}}},
        "status": {"observedGeneration": 4, "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1,
                   "availableReplicas": 1,
                   "conditions": [
                     {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                      "message": "Deployment does not have minimum availability."},
                     {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}
    });
    let sim = Sim::start(
        Scenario::builder()
            .at(Duration::ZERO, vec![unavailable])
            .build(),
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let yaml = deployment("legacy", "legacy:1", "").replace("replicas: 2", "replicas: 1");
    let run = run_yaml(
        &sim,
        "legacy.yaml",
        &yaml,
        Mode::Watch,
        Duration::from_secs(60),
    )
    .await
    .unwrap();
    let legacy = outcome(&run, "Deployment", "legacy");
    assert_eq!(
        (legacy.verdict, legacy.reason),
        (Verdict::TimedOut, Some(Reason::NotReady)),
        "{legacy:#?}"
    );
    assert!(
        legacy
            .message
            .contains("Available condition is False (MinimumReplicasUnavailable"),
        "{}",
        legacy.message
    );
}

#[tokio::test(start_paused = true)]
async fn watch_reports_an_absent_resource_at_once_and_waits_for_it_when_asked() {
    let sim = Sim::start(Scenario::builder().build());
    let yaml = deployment("web", "registry.local/shop/web:1", "");
    let watch = |wait_for_creation| deploy_action::config::Config {
        wait_for_creation,
        ..crate::support::config(Mode::Watch, MINUTES_5)
    };
    let started = tokio::time::Instant::now();
    let run = crate::support::run_with(&sim, "web.yaml", &yaml, watch(false))
        .await
        .unwrap();
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        (run.result, web.verdict, web.reason),
        (RunResult::Failure, Verdict::Failed, Some(Reason::Absent)),
        "{web:#?}"
    );
    assert_eq!(
        web.message,
        "Deployment web does not exist in namespace default; --wait-for-creation waits for it"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // Asked to wait, `watch` sees the deploy that creates it through to its rollout.
    let waiting = crate::support::run_with(&sim, "web.yaml", &yaml, watch(true));
    let deploying = async {
        tokio::time::sleep(Duration::from_secs(20)).await;
        run_yaml(&sim, "web.yaml", &yaml, Mode::Deploy, MINUTES_5).await
    };
    let (watched, deployed) = tokio::join!(waiting, deploying);
    assert_eq!(deployed.unwrap().result, RunResult::Success);
    let watched = watched.unwrap();
    assert_eq!(
        watched.result,
        RunResult::Success,
        "{:#?}",
        watched.outcomes
    );
}
