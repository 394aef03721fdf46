//! `action.yml` run as GitHub runs it (see `action_runner`), against kube-sim served over
//! TCP: outputs, job summary and exit code for a success, a missing image and a timeout;
//! and where the binary comes from (given, built from source, downloaded and verified),
//! with fake `cargo` and `curl` so no network or release build is needed.

use crate::action_runner::Runner;
use kube_sim::kubeconfig::write_kubeconfig;
use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, Sim};
use std::path::{Path, PathBuf};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_deploy-action");

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

async fn cluster() -> (Sim, String) {
    let mut sim = Sim::start(
        Scenario::builder()
            .default_image(ImageBehaviour::pulls_in(Duration::from_millis(200)))
            .image(
                "registry.local/shop/api:missing",
                ImageBehaviour::not_found(),
            )
            .image(
                "registry.local/shop/worker:slow",
                ImageBehaviour::pulls_in(Duration::from_secs(600)),
            )
            .build(),
    );
    let addr = sim.serve("127.0.0.1:0").await.expect("bind");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    write_kubeconfig(&path, addr, "default").expect("kubeconfig");
    (sim, std::fs::read_to_string(path).unwrap())
}

fn write_manifest(runner: &Runner, name: &str, image: &str) {
    let dir = runner.workspace().join("k8s");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{name}.yaml")),
        crate::support::deployment_of(name, image, 1, ""),
    )
    .unwrap();
}

/// Runs the action in a blocking thread (it runs processes) while kube-sim serves.
async fn run_action(
    runner: Runner,
    inputs: Vec<(&'static str, String)>,
) -> (Runner, crate::action_runner::Run) {
    tokio::task::spawn_blocking(move || {
        let inputs: Vec<(&str, &str)> = inputs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let run = runner.run(&inputs);
        (runner, run)
    })
    .await
    .unwrap()
}

fn deploy_inputs(kubeconfig: &str, extra: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut inputs = vec![
        ("kubeconfig", kubeconfig.to_owned()),
        ("binary", BIN.to_owned()),
        ("settle", "1s".to_owned()),
        ("image-preflight", "off".to_owned()),
    ];
    inputs.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
    if !inputs.iter().any(|(k, _)| *k == "manifests") {
        inputs.push(("manifests", "k8s/".to_owned()));
    }
    inputs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_successful_deploy_sets_outputs_and_the_job_summary_and_exits_0() {
    let (_sim, kubeconfig) = cluster().await;
    let runner = Runner::new(&repo_root());
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    std::fs::write(runner.workspace().join("k8s/notes.txt"), "not a manifest").unwrap();
    // A glob picks the YAML files only.
    let inputs = deploy_inputs(&kubeconfig, &[("manifests", "k8s/**/*.yaml")]);
    let (_runner, run) = run_action(runner, inputs).await;
    assert_eq!(run.exit, 0, "{}", run.log);
    assert_eq!(run.outputs["result"], "success");
    assert_eq!(run.outputs["succeeded"], "1");
    assert_eq!(run.outputs["failed"], "0");
    let report: serde_json::Value = serde_json::from_str(&run.outputs["report"]).unwrap();
    assert_eq!(report["resources"][0]["verdict"], "succeeded");
    assert!(
        run.summary.contains("1 resource deployed"),
        "{}",
        run.summary
    );
    // The kubeconfig was given as content: masked (the runner shows its values as ***
    // from then on, the server's URL among them), and removed with the work directory.
    let server = kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .unwrap()
        .trim_matches('"');
    assert!(!run.log.contains(server), "{}", run.log);
    assert!(run.log.contains("server ***"), "{}", run.log);
    assert!(
        run.ran
            .contains(&"Remove the kubeconfig and binary".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_files_reach_the_binary_and_a_bad_one_stops_the_run_before_apply() {
    let (sim, kubeconfig) = cluster().await;
    let runner = Runner::new(&repo_root());
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    std::fs::write(
        runner.workspace().join("ok.yaml"),
        "rules:\n  - group: acme.io\n    kind: Widget\n    done:\n      - when: status.phase == 'Running'\n",
    )
    .unwrap();
    std::fs::write(
        runner.workspace().join("bad.yaml"),
        "rules:\n  - group: acme.io\n    kind: Gadget\n    done:\n      - when: status.phase = 'Running'\n",
    )
    .unwrap();
    let inputs = deploy_inputs(&kubeconfig, &[("rules", "ok.yaml\nbad.yaml")]);
    let (_runner, run) = run_action(runner, inputs).await;
    assert_eq!(run.exit, 2, "{}", run.log);
    assert!(run.log.contains("bad.yaml:5: invalid CEL"), "{}", run.log);
    assert!(!run.log.contains("ok.yaml:"), "{}", run.log);
    assert!(
        sim.get("apps/v1", "Deployment", "default", "web").is_none(),
        "applied despite a bad rules file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_plan_puts_what_would_change_in_the_job_summary_and_changes_nothing() {
    let (sim, kubeconfig) = cluster().await;
    let runner = Runner::new(&repo_root());
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    let (_runner, run) =
        run_action(runner, deploy_inputs(&kubeconfig, &[("command", "plan")])).await;
    assert_eq!(run.exit, 0, "{}", run.log);
    assert!(
        sim.get("apps/v1", "Deployment", "default", "web").is_none(),
        "plan applied"
    );
    assert!(
        run.summary.contains("### Plan: 1 created"),
        "{}",
        run.summary
    );
    assert!(
        run.summary.contains("- `Deployment/web`: created"),
        "{}",
        run.summary
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_applyset_prunes_what_the_manifests_no_longer_declare() {
    let (sim, kubeconfig) = cluster().await;
    let runner = Runner::new(&repo_root());
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    write_manifest(&runner, "old", "registry.local/shop/web:1");
    let prune = [("applyset", "shop"), ("prune-allow-namespaces", "default")];
    let (runner, run) = run_action(runner, deploy_inputs(&kubeconfig, &prune)).await;
    assert_eq!(run.exit, 0, "{}", run.log);
    assert!(sim.get("apps/v1", "Deployment", "default", "old").is_some());

    std::fs::remove_file(runner.workspace().join("k8s/old.yaml")).unwrap();
    let (runner, run) = run_action(runner, deploy_inputs(&kubeconfig, &prune)).await;
    assert_eq!(run.exit, 0, "{}", run.log);
    let report: serde_json::Value = serde_json::from_str(&run.outputs["report"]).unwrap();
    let pruned: Vec<&str> = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["change"]["action"] == "pruned")
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(pruned, ["old"], "{report:#}");
    assert!(sim.get("apps/v1", "Deployment", "default", "old").is_none());
    assert!(sim.get("apps/v1", "Deployment", "default", "web").is_some());

    // `default` is guarded: without the allowance nothing is applied or pruned.
    let (_runner, run) =
        run_action(runner, deploy_inputs(&kubeconfig, &[("applyset", "shop")])).await;
    assert_eq!(run.exit, 2, "{}", run.log);
    assert!(
        run.log.contains("--prune would prune in namespace default"),
        "{}",
        run.log
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_image_fails_with_exit_1_and_an_error_at_its_image_line() {
    let (_sim, kubeconfig) = cluster().await;
    let runner = Runner::new(&repo_root());
    write_manifest(&runner, "api", "registry.local/shop/api:missing");
    let (_runner, run) = run_action(runner, deploy_inputs(&kubeconfig, &[])).await;
    assert_eq!(run.exit, 1, "{}", run.log);
    assert_eq!(run.outputs["result"], "failure");
    assert_eq!(run.outputs["failed"], "1");
    assert!(run.summary.contains("image not found"), "{}", run.summary);
    assert!(
        run.log.contains("::error file=k8s/api.yaml,line=15,"),
        "{}",
        run.log
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_pull_times_out_with_exit_70() {
    let (_sim, kubeconfig) = cluster().await;
    let runner = Runner::new(&repo_root());
    write_manifest(&runner, "worker", "registry.local/shop/worker:slow");
    let (_runner, run) = run_action(runner, deploy_inputs(&kubeconfig, &[("timeout", "4s")])).await;
    assert_eq!(run.exit, 70, "{}", run.log);
    assert_eq!(run.outputs["result"], "timed_out");
    assert_eq!(run.outputs["timed-out"], "1");
    assert!(run.summary.contains("timed out"), "{}", run.summary);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_fails_an_absent_resource_and_wait_for_creation_belongs_to_watch() {
    let (_sim, kubeconfig) = cluster().await;
    let runner = Runner::new(&repo_root());
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    // Nothing was deployed: `watch` says so instead of waiting out its 5 minutes.
    let watch = deploy_inputs(&kubeconfig, &[("command", "watch")]);
    let (runner, run) = run_action(runner, watch).await;
    assert_eq!(run.exit, 1, "{}", run.log);
    let report: serde_json::Value = serde_json::from_str(&run.outputs["report"]).unwrap();
    assert_eq!(report["resources"][0]["reason"], "absent", "{report:#}");

    let misplaced = deploy_inputs(&kubeconfig, &[("wait-for-creation", "true")]);
    let (_runner, run) = run_action(runner, misplaced).await;
    assert_eq!(run.exit, 2, "{}", run.log);
    assert!(
        run.log.contains(
            "::error title=deploy-action::wait-for-creation applies to the watch command only"
        ),
        "{}",
        run.log
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemas_reach_check_and_belong_to_it() {
    let (_sim, kubeconfig) = cluster().await;
    let runner = Runner::new(&repo_root());
    let ws = runner.workspace();
    std::fs::create_dir_all(ws.join("crds")).unwrap();
    std::fs::create_dir_all(ws.join("k8s")).unwrap();
    std::fs::write(
        ws.join("crds/widgets.yaml"),
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.acme.io}\nspec:\n  group: acme.io\n  scope: Namespaced\n  names: {plural: widgets, kind: Widget}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, required: [size]}}}}\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("k8s/w.yaml"),
        "apiVersion: acme.io/v1\nkind: Widget\nmetadata: {name: w}\nspec: {}\n",
    )
    .unwrap();
    let check = deploy_inputs(&kubeconfig, &[("command", "check"), ("schemas", "crds")]);
    let (runner, run) = run_action(runner, check).await;
    assert_eq!(run.exit, 2, "{}", run.log);
    assert!(run.log.contains("spec.size: Required value"), "{}", run.log);

    let misplaced = deploy_inputs(&kubeconfig, &[("schemas", "crds")]);
    let (_runner, run) = run_action(runner, misplaced).await;
    assert_eq!(run.exit, 2, "{}", run.log);
    assert!(
        run.log
            .contains("::error title=deploy-action::schemas applies to the check command only"),
        "{}",
        run.log
    );
}

fn fake_tool(dir: &Path, name: &str, script: &str) {
    std::fs::create_dir_all(dir).unwrap();
    crate::support::write_executable(
        &dir.join(name),
        &format!("#!/usr/bin/env bash\nset -euo pipefail\n{script}"),
    );
}

fn with_fakes(runner: &mut Runner, fakes: &Path) {
    let path = format!("{}:{}", fakes.display(), std::env::var("PATH").unwrap());
    runner.env.insert("PATH".into(), path);
}

/// A cargo on the runner's PATH that "builds" by copying the test binary, logging each call
/// to the file returned.
fn fake_cargo(runner: &mut Runner) -> PathBuf {
    let fakes = runner.workspace().join("..").join("fakes");
    let calls = fakes.join("cargo-calls");
    fake_tool(
        &fakes,
        "cargo",
        &format!(
            "echo \"$*\" >>{calls}\nmkdir -p \"$CARGO_TARGET_DIR/release\"\ncp {BIN} \"$CARGO_TARGET_DIR/release/deploy-action\"\n",
            calls = calls.display()
        ),
    );
    with_fakes(runner, &fakes);
    calls
}

/// The inputs of a run that obtains the binary itself (no `binary` input).
fn source_inputs(kubeconfig: &str) -> Vec<(&'static str, String)> {
    let mut inputs = deploy_inputs(kubeconfig, &[]);
    inputs.retain(|(k, _)| *k != "binary");
    inputs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreleased_commit_is_built_from_source_once_then_taken_from_the_cache() {
    let (_sim, kubeconfig) = cluster().await;
    let mut runner = Runner::new(&repo_root());
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    let calls = fake_cargo(&mut runner);
    let inputs = source_inputs(&kubeconfig);
    let (runner, first) = run_action(runner, inputs.clone()).await;
    assert_eq!(first.exit, 0, "{}", first.log);
    assert!(
        first
            .log
            .contains("::notice title=deploy-action::no release checksums for v0.1.0"),
        "{}",
        first.log
    );
    let args = std::fs::read_to_string(&calls).unwrap();
    assert!(
        args.starts_with("build --release --locked --manifest-path ")
            && args.trim_end().ends_with("Cargo.toml --bin deploy-action"),
        "{args}"
    );
    let (_runner, second) = run_action(runner, inputs).await;
    assert_eq!(second.exit, 0, "{}", second.log);
    assert!(
        second
            .log
            .contains("using the cached deploy-action (source build"),
        "{}",
        second.log
    );
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap(),
        args,
        "built twice"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_named_without_its_checksums_is_an_error_not_a_build_of_something_else() {
    let (sim, kubeconfig) = cluster().await;
    let mut runner = Runner::new(&repo_root());
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    let fakes = runner.workspace().join("..").join("fakes");
    let calls = fakes.join("cargo-calls");
    fake_tool(
        &fakes,
        "cargo",
        &format!("echo \"$*\" >>{}\nexit 1\n", calls.display()),
    );
    with_fakes(&mut runner, &fakes);
    let mut inputs = deploy_inputs(&kubeconfig, &[("version", "0.2.0")]);
    inputs.retain(|(k, _)| *k != "binary");
    let (_runner, run) = run_action(runner, inputs).await;
    assert_eq!(run.exit, 2, "{}", run.log);
    assert!(
        run.log.contains("::error title=deploy-action::version 0.2.0 has no checksums in this revision of the action (.github/checksums/v0.2.0.txt): use the action revision released with it (uses: acme/deploy-action@v0.2.0), or leave version empty to run this revision's own"),
        "{}",
        run.log
    );
    assert!(!calls.exists(), "built from source anyway");
    assert!(sim.get("apps/v1", "Deployment", "default", "web").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_build_is_cached_even_when_the_deploy_fails() {
    let (_sim, kubeconfig) = cluster().await;
    let mut runner = Runner::new(&repo_root());
    write_manifest(&runner, "api", "registry.local/shop/api:missing");
    let calls = fake_cargo(&mut runner);
    let inputs = source_inputs(&kubeconfig);
    let (runner, first) = run_action(runner, inputs.clone()).await;
    assert_eq!(first.exit, 1, "{}", first.log);
    assert!(
        first
            .ran
            .contains(&"Save deploy-action in the cache".to_owned())
    );
    // Keyed on what was built: the runner's own platform, not the musl release target.
    let keys: Vec<String> = std::fs::read_dir(runner.root.path().join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        keys.len() == 1 && keys[0].starts_with("deploy-action-source-Linux-X64-"),
        "{keys:?}"
    );
    let (_runner, second) = run_action(runner, inputs).await;
    assert_eq!(second.exit, 1, "{}", second.log);
    assert!(
        second
            .log
            .contains("using the cached deploy-action (source build"),
        "{}",
        second.log
    );
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap().lines().count(),
        1,
        "built twice"
    );
}

/// An action revision with release checksums (and no source), in its own folder.
fn released_action(dir: &Path, sha256: &str) -> PathBuf {
    let action = dir.join("action");
    std::fs::create_dir_all(action.join(".github/checksums")).unwrap();
    std::fs::copy(repo_root().join("action.yml"), action.join("action.yml")).unwrap();
    std::fs::write(
        action.join(".github/checksums/v0.1.0.txt"),
        format!("{sha256}  deploy-action-x86_64-unknown-linux-musl\n"),
    )
    .unwrap();
    action
}

fn sha256_of(path: &str) -> String {
    use sha2::Digest;
    use std::fmt::Write as _;
    let bytes = std::fs::read(path).unwrap();
    let mut hex = String::new();
    for b in &sha2::Sha256::digest(&bytes) {
        write!(hex, "{b:02x}").expect("writing to a String cannot fail");
    }
    hex
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_is_downloaded_verified_and_cached_and_a_bad_checksum_stops_the_run() {
    let (_sim, kubeconfig) = cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let fakes = dir.path().join("fakes");
    let calls = fakes.join("curl-calls");
    // curl that "downloads" the test binary to --output, and logs the URL.
    fake_tool(
        &fakes,
        "curl",
        &format!(
            "out=\"\"; url=\"\"\nwhile [ $# -gt 0 ]; do case \"$1\" in --output) out=\"$2\"; shift;; https://*) url=\"$1\";; esac; shift; done\necho \"$url\" >>{calls}\ncp {BIN} \"$out\"\n",
            calls = calls.display()
        ),
    );
    let good = released_action(dir.path(), &sha256_of(BIN));
    let mut runner = Runner::new(&good);
    with_fakes(&mut runner, &fakes);
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    let mut inputs = deploy_inputs(&kubeconfig, &[]);
    inputs.retain(|(k, _)| *k != "binary");
    let (runner, first) = run_action(runner, inputs.clone()).await;
    assert_eq!(first.exit, 0, "{}", first.log);
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap(),
        "https://github.com/acme/deploy-action/releases/download/v0.1.0/deploy-action-x86_64-unknown-linux-musl\n"
    );
    let (_runner, second) = run_action(runner, inputs.clone()).await;
    assert_eq!(second.exit, 0, "{}", second.log);
    assert!(
        second
            .log
            .contains("using the cached deploy-action (release"),
        "{}",
        second.log
    );
    assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), 1);

    let bad_dir = tempfile::tempdir().unwrap();
    let bad = released_action(bad_dir.path(), &"0".repeat(64));
    let mut runner = Runner::new(&bad);
    with_fakes(&mut runner, &fakes);
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    let (_runner, run) = run_action(runner, inputs).await;
    assert_eq!(run.exit, 2, "{}", run.log);
    assert!(
        run.log
            .contains("::error title=deploy-action::checksum mismatch"),
        "{}",
        run.log
    );
    assert!(
        !run.ran.contains(&"Run deploy-action".to_owned()),
        "{:?}",
        run.ran
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_posts_a_check_run_on_the_pull_requests_head_and_never_shows_the_token() {
    use wiremock::matchers::{body_partial_json, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let (_sim, kubeconfig) = cluster().await;
    let head = "feedfacefeedfacefeedfacefeedfacefeedface";
    let github = MockServer::start().await;
    let run_body = serde_json::json!({"id": 77, "status": "in_progress",
        "html_url": "https://github.com/acme/shop/runs/77"});
    Mock::given(method("POST"))
        .and(path("/repos/acme/shop/check-runs"))
        .and(body_partial_json(serde_json::json!({"head_sha": head})))
        .respond_with(ResponseTemplate::new(201).set_body_json(&run_body))
        .expect(1)
        .mount(&github)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/acme/shop/check-runs/77"))
        .respond_with(ResponseTemplate::new(200).set_body_json(&run_body))
        .mount(&github)
        .await;
    let mut runner = Runner::new(&repo_root());
    write_manifest(&runner, "web", "registry.local/shop/web:1");
    let payload = runner.workspace().join("..").join("event.json");
    std::fs::write(
        &payload,
        serde_json::json!({"number": 7, "pull_request": {"number": 7, "head": {"sha": head}}})
            .to_string(),
    )
    .unwrap();
    for (k, v) in [
        ("GITHUB_API_URL", github.uri()),
        ("GITHUB_EVENT_NAME", "pull_request".to_owned()),
        ("GITHUB_EVENT_PATH", payload.display().to_string()),
        ("GITHUB_RUN_ID", "42".to_owned()),
        ("GITHUB_RUN_ATTEMPT", "1".to_owned()),
        ("GITHUB_JOB", "deploy".to_owned()),
    ] {
        runner.env.insert(k.to_owned(), v);
    }
    let token = "ghs_0123456789abcdefghijklmnopqrstuvwx";
    let inputs = deploy_inputs(&kubeconfig, &[("token", token), ("check-run", "on")]);
    let (_runner, run) = run_action(runner, inputs).await;
    assert_eq!(run.exit, 0, "{}", run.log);
    assert_eq!(
        run.outputs["check-run-url"],
        "https://github.com/acme/shop/runs/77"
    );
    assert!(!run.log.contains(token), "{}", run.log);
    github.verify().await;
}
