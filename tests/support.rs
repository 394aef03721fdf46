//! Running deploy-action against an in-process kube-sim, and helpers the test files share.

use deploy_action::cluster::Connection;
use deploy_action::config::{Config, Mode};
use deploy_action::manifest::load_str;
use deploy_action::pipeline::{self, RegistryAccess, RunError};
use deploy_action::vocab::events::Recorder;
use deploy_action::vocab::outcome::{Outcome, RunOutcome};
use kube_sim::Sim;
use std::time::Duration;

pub fn config(mode: Mode, timeout: Duration) -> Config {
    Config {
        mode,
        files: vec!["test.yaml".into()],
        namespace: None,
        context: None,
        kubeconfig: None,
        timeout,
        // Off here so each test states the window it is about; the CLI default is 10 s.
        settle: Duration::ZERO,
        fail_fast: true,
        report: None,
        selector: std::collections::BTreeMap::default(),
        image_preflight: deploy_action::cli::Preflight::Off,
        registry_config: None,
        github: deploy_action::cli::GithubArgs {
            check_run: deploy_action::cli::CheckRunMode::Off,
            check_name: None,
            github_token: None,
            sha: None,
        },
        prune: None,
        rules: Vec::new(),
        health_rules: std::sync::Arc::default(),
        schemas: Vec::new(),
        wait_for_creation: false,
    }
}

/// Load `yaml` as `file` and run it against `sim` (registry lookups off: hermetic).
pub async fn run_yaml(
    sim: &Sim,
    file: &str,
    yaml: &str,
    mode: Mode,
    timeout: Duration,
) -> Result<RunOutcome, RunError> {
    run_with(sim, file, yaml, config(mode, timeout)).await
}

/// Load `yaml` as `file` and run it against `sim` with a given configuration.
pub async fn run_with(
    sim: &Sim,
    file: &str,
    yaml: &str,
    config: Config,
) -> Result<RunOutcome, RunError> {
    run_recorded(sim, file, yaml, config)
        .await
        .map(|(run, _)| run)
}

/// [`run_with`], with what the run told its observer (phases, applies, verdicts).
pub async fn run_recorded(
    sim: &Sim,
    file: &str,
    yaml: &str,
    config: Config,
) -> Result<(RunOutcome, Recorder), RunError> {
    let manifests = load_str(file, yaml).map_err(RunError::Load)?;
    let conn = connection(sim);
    let access = RegistryAccess::new(None, &manifests)?;
    let mut recorder = Recorder::default();
    let run = pipeline::deploy(&conn, &config, manifests, &access, &mut recorder).await?;
    Ok((run, recorder))
}

/// An in-process connection to `sim`, in namespace `default`.
pub fn connection(sim: &Sim) -> Connection {
    Connection {
        client: sim.client(),
        default_namespace: "default".into(),
        context: None,
        server: "http://kube-sim".into(),
    }
}

/// The outcome for `kind/name`.
#[track_caller]
pub fn outcome<'a>(run: &'a RunOutcome, kind: &str, name: &str) -> &'a Outcome {
    run.outcomes
        .iter()
        .find(|o| o.resource.kind == kind && o.resource.name == name)
        .unwrap_or_else(|| panic!("no outcome for {kind}/{name} in {:#?}", run.outcomes))
}

/// A two-replica Deployment of `image`; `extra_container` is appended to its container.
pub fn deployment(name: &str, image: &str, extra_container: &str) -> String {
    deployment_of(name, image, 2, extra_container)
}

/// A Deployment of `replicas` pods of `image` (its `image:` is on line 15).
pub fn deployment_of(name: &str, image: &str, replicas: u32, extra_container: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
        - name: {name}
          image: {image}
{extra_container}"
    )
}

/// Writes an executable script from another process (`install`), as a runner's tools are
/// installed: a file this multi-threaded test process held open for writing is inherited
/// by any child another test thread forks meanwhile, until that child execs, and running
/// the file then fails with "Text file busy". The text is staged next to it first.
pub fn write_executable(path: &std::path::Path, text: &str) {
    let staged = path.with_extension("staged");
    std::fs::write(&staged, text).unwrap();
    let status = std::process::Command::new("install")
        .args(["-m", "755"])
        .arg(&staged)
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "install {}: {status}", path.display());
    std::fs::remove_file(&staged).unwrap();
}
