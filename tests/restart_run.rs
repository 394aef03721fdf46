//! `restart` and `run` against kube-sim with a paused clock (the library), and the binary
//! next to kubectl over TCP: a restart kubectl cannot tell from its own.

use crate::support::{config, connection, deployment, outcome, run_yaml};
use deploy_action::config::Mode;
use deploy_action::exit::{self, Ended};
use deploy_action::manifest::load_str;
use deploy_action::pipeline::restart::{self, RESTARTED_AT, RestartError, Workload};
use deploy_action::pipeline::task::{self, RUN_LABEL};
use deploy_action::pipeline::{RegistryAccess, RunError};
use deploy_action::vocab::events::{Recorder, RunEvent};
use deploy_action::vocab::outcome::RunOutcome;
use deploy_action::vocab::verdict::{Reason, RunResult, Verdict};
use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, Sim};
use std::time::Duration;

const MINUTES_5: Duration = Duration::from_secs(300);

async fn restart(sim: &Sim, names: &[&str], settle: Duration) -> Result<RunOutcome, RunError> {
    let mut config = config(Mode::Restart, MINUTES_5);
    config.settle = settle;
    let request = restart::Request {
        workload: Workload::parse("deployment").unwrap(),
        names: names.iter().map(|n| (*n).to_owned()).collect(),
    };
    let access = RegistryAccess::new(None, &[])?;
    let mut recorder = Recorder::default();
    restart::restart(&connection(sim), &config, &request, &access, &mut recorder).await
}

/// The Deployment's pod template annotation `restartedAt`, if set.
fn restarted_at(sim: &Sim, name: &str) -> Option<String> {
    let d = sim.get("apps/v1", "Deployment", "default", name)?;
    d["spec"]["template"]["metadata"]["annotations"][RESTARTED_AT]
        .as_str()
        .map(str::to_owned)
}

async fn deployed(sim: &Sim, name: &str, image: &str) {
    let run = run_yaml(
        sim,
        "web.yaml",
        &deployment(name, image, ""),
        Mode::Deploy,
        MINUTES_5,
    )
    .await
    .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
}

fn replica_sets(sim: &Sim) -> usize {
    sim.store
        .list("apps", "replicasets", Some("default"))
        .0
        .len()
}

#[tokio::test(start_paused = true)]
async fn a_restart_rolls_out_new_pods_and_succeeds() {
    let sim = Sim::start(Scenario::default());
    deployed(&sim, "web", "registry.local/shop/web:1").await;
    assert_eq!(replica_sets(&sim), 1);
    let run = restart(&sim, &["web"], Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    let web = outcome(&run, "Deployment", "web");
    assert_eq!(web.verdict, Verdict::Succeeded);
    // Read from the cluster, not a file: nothing to point an annotation at.
    assert_eq!((&web.source, &web.annotation_source), (&None, &None));
    let at = restarted_at(&sim, "web").expect("the template carries restartedAt");
    assert!(at.parse::<jiff::Timestamp>().is_ok(), "{at}");
    assert_eq!(replica_sets(&sim), 2, "a restart is a new revision");
    let d = sim.get("apps/v1", "Deployment", "default", "web").unwrap();
    assert_eq!(d["status"]["updatedReplicas"], 2, "{}", d["status"]);
}

#[tokio::test(start_paused = true)]
async fn a_statefulset_restart_replaces_its_pods_and_succeeds() {
    let sim = Sim::start(Scenario::default());
    let yaml = "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 2
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
        - name: db
          image: registry.local/shop/db:1
";
    let run = run_yaml(&sim, "db.yaml", yaml, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    let revision = |sim: &Sim| {
        let s = sim.get("apps/v1", "StatefulSet", "default", "db").unwrap();
        s["status"]["updateRevision"].as_str().map(str::to_owned)
    };
    let before = revision(&sim);
    let mut config = config(Mode::Restart, MINUTES_5);
    config.settle = Duration::from_secs(10);
    let request = restart::Request {
        workload: Workload::parse("statefulset").unwrap(),
        names: vec!["db".into()],
    };
    let access = RegistryAccess::new(None, &[]).unwrap();
    let mut recorder = Recorder::default();
    let run = restart::restart(&connection(&sim), &config, &request, &access, &mut recorder)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert_ne!(revision(&sim), before, "a restart is a new revision");
    let s = sim.get("apps/v1", "StatefulSet", "default", "db").unwrap();
    assert!(s["spec"]["template"]["metadata"]["annotations"][RESTARTED_AT].is_string());
    assert_eq!(s["status"]["updatedReplicas"], 2, "{}", s["status"]);
}

#[tokio::test(start_paused = true)]
async fn a_restart_whose_new_pods_crash_fails_as_a_deploy_would() {
    // The image under the same tag crashes for containers started from 10 minutes on.
    let crashing = ImageBehaviour::crashing(3, false, Duration::ZERO, &["fatal: no config"])
        .from(Duration::from_secs(600));
    let sim = Sim::start(
        Scenario::builder()
            .image("registry.local/shop/api:1", crashing)
            .build(),
    );
    deployed(&sim, "api", "registry.local/shop/api:1").await;
    tokio::time::sleep(Duration::from_secs(600)).await;
    let run = restart(&sim, &["api"], Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Failure, "{:#?}", run.outcomes);
    assert_eq!(exit::code(Ended::Judged(run.result)), 1);
    let api = outcome(&run, "Deployment", "api");
    assert_eq!(api.reason, Some(Reason::CrashLoop), "{api:#?}");
    assert!(
        api.message.contains("exited with code 3"),
        "{}",
        api.message
    );
    let logs = api.logs.as_ref().expect("the crashed container's log tail");
    assert_eq!(logs.lines, ["fatal: no config"]);
}

#[tokio::test(start_paused = true)]
async fn a_restart_naming_a_missing_deployment_restarts_nothing() {
    let sim = Sim::start(Scenario::default());
    deployed(&sim, "web", "registry.local/shop/web:1").await;
    let patches = sim.server.recorder.count("patch", "deployments");
    let err = restart(&sim, &["web", "wbe"], Duration::ZERO)
        .await
        .unwrap_err();
    let RunError::Restart(e) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        e,
        &RestartError::NotFound {
            kind: "deployments",
            namespace: "default".into(),
            names: vec!["wbe".into()],
        }
    );
    assert_eq!(
        err.to_string(),
        "deployment \"wbe\" does not exist in namespace \"default\""
    );
    assert_eq!(restarted_at(&sim, "web"), None, "web was restarted");
    assert_eq!(sim.server.recorder.count("patch", "deployments"), patches);
}

#[tokio::test(start_paused = true)]
async fn a_selector_that_matches_nothing_restarts_nothing() {
    let sim = Sim::start(Scenario::default());
    let labelled = deployment("web", "registry.local/shop/web:1", "").replacen(
        "  name: web\n",
        "  name: web\n  labels: {app: web}\n",
        1,
    );
    let run = run_yaml(&sim, "web.yaml", &labelled, Mode::Deploy, MINUTES_5)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    let mut config = config(Mode::Restart, MINUTES_5);
    config.selector.insert("app".into(), "nope".into());
    let request = restart::Request {
        workload: Workload::parse("deployment").unwrap(),
        names: Vec::new(),
    };
    let access = RegistryAccess::new(None, &[]).unwrap();
    let mut recorder = Recorder::default();
    let err = restart::restart(&connection(&sim), &config, &request, &access, &mut recorder)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no deployments in namespace \"default\" match -l app=nope"
    );
    // The same selector that matches restarts it.
    config.selector.insert("app".into(), "web".into());
    let run = restart::restart(&connection(&sim), &config, &request, &access, &mut recorder)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert!(restarted_at(&sim, "web").is_some());
}

const TASK: &str = "apiVersion: v1
kind: PodTemplate
metadata:
  name: task
template:
  metadata:
    labels: {app: task}
  spec:
    containers:
      - name: task
        image: registry.local/shop/task:1
        args: [serve]
";

/// `run` from `template` with `--command rake db:migrate --env MODE=once`; returns the run
/// and every log line the observer was handed.
async fn run_task(
    sim: &Sim,
    template: &str,
    timeout: Duration,
) -> (Result<RunOutcome, RunError>, Vec<String>) {
    let config = config(Mode::Run, timeout);
    let manifests = load_str("task.yaml", template).unwrap();
    let request = task::Request {
        container: None,
        command: vec!["rake".into(), "db:migrate".into()],
        env: vec![("MODE".into(), "once".into())],
    };
    let prepared = task::prepare(&manifests, &request).unwrap();
    let access = RegistryAccess::new(None, &manifests).unwrap();
    let mut recorder = Recorder::default();
    let run = Box::pin(task::execute(
        &connection(sim),
        &config,
        prepared,
        &access,
        &mut recorder,
    ))
    .await;
    let lines = recorder
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            RunEvent::Log { line, .. } => Some(line.clone()),
            _ => None,
        })
        .collect();
    (run, lines)
}

fn task_scenario(behaviour: ImageBehaviour) -> Scenario {
    Scenario::builder()
        .image("registry.local/shop/task:1", behaviour)
        .build()
}

#[tokio::test(start_paused = true)]
async fn a_run_that_completes_succeeds_with_its_logs_streamed() {
    let mut done = ImageBehaviour::crashing(1, false, Duration::from_secs(20), &[]);
    done.exit.as_mut().unwrap().code = 0;
    done.logs = vec!["migrating 42".into(), "done".into()];
    let sim = Sim::start(task_scenario(done));
    let (run, lines) = run_task(&sim, TASK, MINUTES_5).await;
    let run = run.unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert_eq!(lines, ["migrating 42", "done"], "streamed as they came");
    let pod = &run.outcomes[0];
    assert_eq!(pod.resource.kind, "Pod");
    assert!(
        pod.resource.name.starts_with("task-run-"),
        "{}",
        pod.resource.name
    );
    assert_eq!(pod.logs.as_ref().unwrap().lines, ["migrating 42", "done"]);
    // The pod stays, recognisable, with the overrides.
    let stored = sim
        .get("v1", "Pod", "default", &pod.resource.name)
        .expect("the pod is not deleted");
    assert_eq!(stored["metadata"]["labels"][RUN_LABEL], "task");
    assert_eq!(stored["spec"]["restartPolicy"], "Never");
    let c = &stored["spec"]["containers"][0];
    assert_eq!(c["command"], serde_json::json!(["rake", "db:migrate"]));
    assert_eq!(
        c["env"],
        serde_json::json!([{"name": "MODE", "value": "once"}])
    );
    assert_eq!(stored["status"]["phase"], "Succeeded");
}

#[tokio::test(start_paused = true)]
async fn a_run_that_fails_carries_its_exit_code_and_log_tail() {
    let sim = Sim::start(task_scenario(ImageBehaviour::crashing(
        3,
        false,
        Duration::from_secs(2),
        &["migration 42 failed"],
    )));
    let (run, lines) = run_task(&sim, TASK, MINUTES_5).await;
    let run = run.unwrap();
    assert_eq!(run.result, RunResult::Failure, "{:#?}", run.outcomes);
    assert_eq!(exit::code(Ended::Judged(run.result)), 1);
    let pod = &run.outcomes[0];
    assert_eq!(pod.reason, Some(Reason::PodFailed), "{pod:#?}");
    assert_eq!(
        pod.message, "container task exited with code 3 (Error)",
        "{pod:#?}"
    );
    assert_eq!(lines, ["migration 42 failed"]);
    assert_eq!(pod.logs.as_ref().unwrap().lines, ["migration 42 failed"]);
    // Points at the template it came from.
    let source = pod.source.as_ref().unwrap();
    assert_eq!((source.file.as_str(), source.line), ("task.yaml", 1));
}

#[tokio::test(start_paused = true)]
async fn a_run_whose_image_is_missing_fails_fast() {
    let sim = Sim::start(task_scenario(ImageBehaviour::not_found()));
    let (run, lines) = run_task(&sim, TASK, MINUTES_5).await;
    let run = run.unwrap();
    let pod = &run.outcomes[0];
    assert_eq!(pod.reason, Some(Reason::ImageNotFound), "{pod:#?}");
    assert!(pod.seconds < 30.0, "took {} s", pod.seconds);
    assert!(lines.is_empty());
    // The annotation points at the template's image line.
    let at = pod.annotation_source.as_ref().unwrap();
    assert_eq!((at.file.as_str(), at.line), ("task.yaml", 11));
}

#[tokio::test(start_paused = true)]
async fn a_run_still_going_at_the_timeout_times_out() {
    let waits = ImageBehaviour {
        logs: vec!["waiting for the database".into()],
        ..ImageBehaviour::default()
    };
    let sim = Sim::start(task_scenario(waits));
    let (run, lines) = run_task(&sim, TASK, Duration::from_secs(90)).await;
    let run = run.unwrap();
    assert_eq!(run.result, RunResult::TimedOut, "{:#?}", run.outcomes);
    assert_eq!(exit::code(Ended::Judged(run.result)), 70);
    let pod = &run.outcomes[0];
    assert_eq!(pod.verdict, Verdict::TimedOut);
    // What it wrote before the timeout is in the report, as it was streamed.
    assert_eq!(lines, ["waiting for the database"]);
    assert_eq!(pod.logs.as_ref().unwrap().lines, lines);
}

/// kubectl 1.33 on PATH, or `None` (the test says it was skipped).
fn kubectl() -> Option<&'static str> {
    let found = std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        #[expect(clippy::print_stderr, reason = "a skipped fidelity test must say so")]
        {
            eprintln!("SKIPPED: no kubectl on this machine; restart fidelity is unchecked");
        }
    }
    found.then_some("kubectl")
}

/// What a restart leaves that kubectl reads: the annotation and who manages it.
fn restart_marks(sim: &Sim, name: &str) -> (Vec<String>, serde_json::Value) {
    let d = sim.get("apps/v1", "Deployment", "default", name).unwrap();
    let annotations = d["spec"]["template"]["metadata"]["annotations"]
        .as_object()
        .map(|a| a.keys().cloned().collect())
        .unwrap_or_default();
    let entry = d["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == restart::FIELD_MANAGER)
        .map(|e| {
            serde_json::json!({"operation": e["operation"], "fieldsV1": e["fieldsV1"],
                "apiVersion": e["apiVersion"]})
        })
        .unwrap_or_default();
    (annotations, entry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_sees_the_restart_as_its_own() {
    let Some(kubectl) = kubectl() else {
        return;
    };
    let mut sim = Sim::start(
        Scenario::builder()
            .default_image(ImageBehaviour::pulls_in(Duration::from_millis(100)))
            .build(),
    );
    let addr = sim.serve("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    kube_sim::kubeconfig::write_kubeconfig(&kubeconfig, addr, "default").unwrap();
    let manifest = dir.path().join("web.yaml");
    let yaml = deployment("web", "registry.local/shop/web:1", "")
        + "---\n"
        + &deployment("api", "registry.local/shop/web:1", "");
    std::fs::write(&manifest, yaml).unwrap();
    let run = |cmd: &str, args: &[&str]| {
        std::process::Command::new(cmd)
            .args(args)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_TOKEN")
            .output()
            .unwrap()
    };
    let bin = env!("CARGO_BIN_EXE_deploy-action");
    let manifest = manifest.display().to_string();
    let out = run(bin, &["deploy", "-f", &manifest, "--settle", "0"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = run(kubectl, &["rollout", "restart", "deployment/web"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(bin, &["restart", "deployment", "api", "--settle", "0"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (by_kubectl, by_us) = (restart_marks(&sim, "web"), restart_marks(&sim, "api"));
    assert_eq!(by_kubectl.0, [RESTARTED_AT]);
    assert_eq!(
        by_us, by_kubectl,
        "deploy-action's restart differs from kubectl's"
    );
    // And kubectl's own view of the rollout agrees that it finished.
    let out = run(
        kubectl,
        &["rollout", "status", "deployment/api", "--timeout=30s"],
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("successfully rolled out"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let history = run(kubectl, &["rollout", "history", "deployment/api"]);
    assert!(history.status.success());
    assert_eq!(
        String::from_utf8_lossy(&history.stdout)
            .lines()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .count(),
        2,
        "a restart is a revision: {}",
        String::from_utf8_lossy(&history.stdout)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_streams_run_logs_fenced_from_the_runner_and_reports_them() {
    let mut done = ImageBehaviour::crashing(1, false, Duration::from_millis(500), &[]);
    done.exit.as_mut().unwrap().code = 0;
    done.logs = vec!["::error::not a workflow command".into(), "done".into()];
    let mut sim = Sim::start(
        Scenario::builder()
            .default_image(ImageBehaviour::pulls_in(Duration::from_millis(100)))
            .image("registry.local/shop/task:1", done)
            .build(),
    );
    let addr = sim.serve("127.0.0.1:0").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    kube_sim::kubeconfig::write_kubeconfig(&kubeconfig, addr, "default").unwrap();
    std::fs::write(dir.path().join("task.yaml"), TASK).unwrap();
    let report = dir.path().join("report.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_deploy-action"))
        .args(["run", "--template", "task.yaml", "--image-preflight", "off"])
        .arg("--report")
        .arg(&report)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["--command", "rake", "db:migrate"])
        .current_dir(dir.path())
        .env("GITHUB_ACTIONS", "true")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    let at = |text: &str| lines.iter().position(|l| *l == text);
    let stop = lines
        .iter()
        .find_map(|l| l.strip_prefix("::stop-commands::"))
        .unwrap_or_else(|| panic!("no ::stop-commands:: in\n{stderr}"));
    let (fence, log, resume) = (
        at(&format!("::stop-commands::{stop}")),
        at("::error::not a workflow command"),
        at(&format!("::{stop}::")),
    );
    assert!(fence < log && log < resume, "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["result"], "success");
    assert_eq!(report["resources"][0]["kind"], "Pod");
    assert_eq!(report["resources"][0]["file"], "task.yaml");
}
