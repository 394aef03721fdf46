//! Deploys in waves on kube-sim: a migration Pod before the code it migrates, Helm hooks
//! before and after the release, sync waves in order, and nothing after a wave that failed.

use crate::support::{config, deployment_of, outcome, run_recorded};
use deploy_action::config::Mode;
use deploy_action::vocab::events::{Recorder, RunEvent};
use deploy_action::vocab::verdict::{Reason, RunResult, Verdict};
use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, Sim};
use std::time::Duration;

const MINUTES_5: Duration = Duration::from_secs(300);

/// Images: `migrate:ok` exits 0 after 2 s, `migrate:bad` exits 1; the rest run.
fn cluster() -> Sim {
    Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/migrate:ok",
                ImageBehaviour::crashing(0, false, Duration::from_secs(2), &["migrated to 43"]),
            )
            .image(
                "registry.local/shop/migrate:ok2",
                ImageBehaviour::crashing(0, false, Duration::from_secs(2), &["migrated to 44"]),
            )
            .image(
                "registry.local/shop/migrate:bad",
                ImageBehaviour::crashing(
                    1,
                    false,
                    Duration::from_secs(2),
                    &["migration 43 failed: column exists"],
                ),
            )
            .build(),
    )
}

fn migration_pod(tag: &str) -> String {
    format!(
        "apiVersion: v1
kind: Pod
metadata:
  name: migrate
spec:
  restartPolicy: Never
  containers:
    - name: migrate
      image: registry.local/shop/migrate:{tag}
"
    )
}

fn image_of(sim: &Sim, name: &str) -> String {
    sim.get("apps/v1", "Deployment", "default", name).unwrap()["spec"]["template"]["spec"]
        ["containers"][0]["image"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Names in the order the run applied them.
fn applied(recorder: &Recorder) -> Vec<String> {
    recorder
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            RunEvent::Applied { id, .. } => Some(format!("{}/{}", id.kind, id.name)),
            _ => None,
        })
        .collect()
}

async fn deploy(sim: &Sim, yaml: &str) -> (deploy_action::vocab::outcome::RunOutcome, Recorder) {
    let config = deploy_action::config::Config {
        // The CLI's default window: a migration that exits must not be a crash.
        settle: Duration::from_secs(10),
        ..config(Mode::Deploy, MINUTES_5)
    };
    run_recorded(sim, "release.yaml", yaml, config)
        .await
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_failing_migration_pod_stops_the_deploy_before_the_deployment_changes() {
    let sim = cluster();
    let (first, _) = deploy(
        &sim,
        &deployment_of("web", "registry.local/shop/web:1", 2, ""),
    )
    .await;
    assert_eq!(first.result, RunResult::Success, "{first:#?}");

    let yaml = format!(
        "{}---\n{}",
        migration_pod("bad"),
        deployment_of("web", "registry.local/shop/web:2", 2, "")
    );
    let (run, recorder) = deploy(&sim, &yaml).await;
    assert_eq!(run.result, RunResult::Failure);
    let migrate = outcome(&run, "Pod", "migrate");
    assert_eq!(migrate.reason, Some(Reason::PodFailed), "{migrate:#?}");
    assert_eq!(
        migrate.wave.as_deref(),
        Some("wave 1 of 2: bare pods first (predeploy)")
    );
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        (web.verdict, web.reason, web.message.as_str()),
        (
            Verdict::Unfinished,
            Some(Reason::NotApplied),
            "not applied: Pod/migrate in wave 1 of 2 failed"
        )
    );
    assert_eq!(web.wave.as_deref(), Some("wave 2 of 2: the rest"));
    assert_eq!(applied(&recorder), ["Pod/migrate"]);
    assert_eq!(
        image_of(&sim, "web"),
        "registry.local/shop/web:1",
        "the Deployment changed"
    );
}

#[tokio::test(start_paused = true)]
async fn a_migration_pod_that_completes_lets_the_deployment_roll_out_after_it() {
    let sim = cluster();
    let yaml = format!(
        "{}---\n{}",
        deployment_of("web", "registry.local/shop/web:2", 2, ""),
        migration_pod("ok")
    );
    let (run, recorder) = deploy(&sim, &yaml).await;
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    // Listed after the Deployment, applied (and judged) before it.
    assert_eq!(applied(&recorder), ["Pod/migrate", "Deployment/web"]);
    let waves: Vec<String> = recorder
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            RunEvent::Wave { number, of, label } => Some(format!("{number}/{of} {label}")),
            _ => None,
        })
        .collect();
    assert_eq!(waves, ["1/2 bare pods first (predeploy)", "2/2 the rest"]);
    assert_eq!(image_of(&sim, "web"), "registry.local/shop/web:2");
}

/// `helm template` output: a migration Job hook, a test hook, a post-upgrade Job.
fn release(tag: &str) -> String {
    format!(
        "---
# Source: shop/templates/deployment.yaml
{}---
# Source: shop/templates/migrate-job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: shop-migrate
  annotations:
    \"helm.sh/hook\": pre-install,pre-upgrade
    \"helm.sh/hook-weight\": \"-5\"
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: registry.local/shop/migrate:{tag}
---
# Source: shop/templates/tests/test-connection.yaml
apiVersion: v1
kind: Pod
metadata:
  name: shop-test-connection
  annotations:
    \"helm.sh/hook\": test
spec:
  restartPolicy: Never
  containers:
    - name: wget
      image: registry.local/shop/busybox:1
",
        deployment_of("web", "registry.local/shop/web:2", 2, "")
    )
}

#[tokio::test(start_paused = true)]
async fn helm_hook_jobs_run_first_and_are_replaced_on_the_next_deploy() {
    let sim = cluster();
    let (run, recorder) = deploy(&sim, &release("ok")).await;
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert_eq!(applied(&recorder), ["Job/shop-migrate", "Deployment/web"]);
    let test = outcome(&run, "Pod", "shop-test-connection");
    assert_eq!(
        (test.verdict, test.reason, test.message.as_str()),
        (
            Verdict::Unfinished,
            Some(Reason::NotApplied),
            "a Helm test hook: not part of a deploy, so not applied"
        )
    );
    assert!(
        sim.get("v1", "Pod", "default", "shop-test-connection")
            .is_none()
    );

    // A Job's template is immutable: the next release's hook is a new Job, which only
    // works because the old one is deleted first (Helm's default before-hook-creation).
    let next = release("ok").replace("migrate:ok", "migrate:ok\n          args: [--to, \"44\"]");
    let (run, recorder) = deploy(&sim, &next).await;
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    let notes: Vec<&String> = recorder
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            RunEvent::Note(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(
        notes,
        ["deleted the previous Job/shop-migrate (Helm hook, before-hook-creation)"]
    );
    let job = sim
        .get("batch/v1", "Job", "default", "shop-migrate")
        .unwrap();
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["args"],
        serde_json::json!(["--to", "44"])
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_hook_stops_the_release_and_the_later_waves_say_why() {
    let sim = cluster();
    let (run, _) = deploy(&sim, &release("bad")).await;
    assert_eq!(run.result, RunResult::Failure);
    assert_eq!(
        outcome(&run, "Job", "shop-migrate").reason,
        Some(Reason::JobFailed)
    );
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(
        (web.reason, web.message.as_str()),
        (
            Some(Reason::NotApplied),
            "not applied: Job/shop-migrate in wave 1 of 2 failed"
        )
    );
    assert!(sim.get("apps/v1", "Deployment", "default", "web").is_none());
}

#[tokio::test(start_paused = true)]
async fn sync_waves_apply_in_order_each_judged_before_the_next() {
    let sim = cluster();
    let wave = |name: &str, n: &str| {
        deployment_of(name, "registry.local/shop/web:1", 1, "").replacen(
            &format!("  name: {name}\n"),
            &format!("  name: {name}\n  annotations: {{argocd.argoproj.io/sync-wave: \"{n}\"}}\n"),
            1,
        )
    };
    let yaml = format!(
        "{}---\n{}---\n{}",
        wave("frontend", "2"),
        wave("api", "1"),
        wave("db", "-1")
    );
    let (run, recorder) = deploy(&sim, &yaml).await;
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert_eq!(
        applied(&recorder),
        ["Deployment/db", "Deployment/api", "Deployment/frontend"]
    );
    // each wave's verdict came before the next wave's apply
    let order: Vec<String> = recorder
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            RunEvent::Applied { id, .. } => Some(format!("apply {}", id.name)),
            RunEvent::Verdict(o) => Some(format!("verdict {}", o.resource.name)),
            _ => None,
        })
        .collect();
    assert_eq!(
        order,
        [
            "apply db",
            "verdict db",
            "apply api",
            "verdict api",
            "apply frontend",
            "verdict frontend"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_plan_labels_each_resource_with_the_wave_it_would_be_applied_in() {
    let sim = cluster();
    let (run, _) = run_recorded(
        &sim,
        "release.yaml",
        &release("ok"),
        config(Mode::DryRun, MINUTES_5),
    )
    .await
    .unwrap();
    let waves: Vec<(String, Option<String>)> = run
        .outcomes
        .iter()
        .map(|o| {
            (
                format!("{}/{}", o.resource.kind, o.resource.name),
                o.wave.clone(),
            )
        })
        .collect();
    assert_eq!(
        waves,
        [
            (
                "Deployment/web".to_owned(),
                Some("wave 2 of 2: the rest".to_owned())
            ),
            (
                "Job/shop-migrate".to_owned(),
                Some("wave 1 of 2: helm pre-install/pre-upgrade hooks, weight -5".to_owned())
            ),
            ("Pod/shop-test-connection".to_owned(), None),
        ]
    );
    assert!(
        sim.get("batch/v1", "Job", "default", "shop-migrate")
            .is_none()
    );
    let summary = deploy_action::render::summary(&run, &deploy_action::render::Style::PLAIN);
    assert!(
        summary.contains(
            "Waves:\n  wave 1 of 2: helm pre-install/pre-upgrade hooks, weight -5: Job/shop-migrate"
        ),
        "{summary}"
    );
}

fn job(image: &str, replace: bool) -> String {
    let annotations = if replace {
        "  annotations: {deploy-action.io/replace: \"true\"}\n"
    } else {
        ""
    };
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
{annotations}spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: {image}
"
    )
}

#[tokio::test(start_paused = true)]
async fn a_changed_job_is_refused_at_its_template_line_unless_it_may_be_replaced() {
    let sim = cluster();
    let (first, _) = deploy(&sim, &job("registry.local/shop/migrate:ok", false)).await;
    assert_eq!(first.result, RunResult::Success, "{first:#?}");

    let next = job("registry.local/shop/migrate:ok2", false);
    let (run, recorder) = deploy(&sim, &next).await;
    let migrate = outcome(&run, "Job", "migrate");
    assert_eq!(migrate.reason, Some(Reason::ApplyRejected), "{migrate:#?}");
    assert!(
        migrate.message.starts_with(
            "spec.template cannot change in place (the API server keeps it as created): set the annotation deploy-action.io/replace: \"true\" to have deploy-action delete and recreate it, or delete it before the deploy. The API server said: Job.batch \"migrate\" is invalid: spec.template:"
        ),
        "{}",
        migrate.message
    );
    assert_eq!(migrate.annotation_source.as_ref().map(|s| s.line), Some(7));
    assert!(
        applied(&recorder).is_empty(),
        "nothing is applied after a refusal"
    );

    // Asked to be replaced: the plan says so, and the deploy deletes and recreates it.
    let replace = job("registry.local/shop/migrate:ok2", true);
    let (plan, _) = run_recorded(
        &sim,
        "release.yaml",
        &replace,
        config(Mode::DryRun, MINUTES_5),
    )
    .await
    .unwrap();
    let planned = outcome(&plan, "Job", "migrate");
    assert_eq!(
        planned.change,
        Some(deploy_action::vocab::outcome::Change::Replaced {
            fields: vec!["spec.template".to_owned()]
        }),
        "{planned:#?}"
    );
    let (run, recorder) = deploy(&sim, &replace).await;
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert!(
        recorder.events.iter().any(|(_, e)| matches!(e, RunEvent::Note(n)
            if n == "replaced Job/migrate (deploy-action.io/replace): spec.template cannot change in place")),
        "{:#?}",
        recorder.events
    );
    let live = sim.get("batch/v1", "Job", "default", "migrate").unwrap();
    assert_eq!(
        live["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.local/shop/migrate:ok2"
    );
}
