//! The binary, black-box: exit codes, the JSON report and the summary, against kube-sim
//! served over TCP with real time.

use kube_sim::kubeconfig::write_kubeconfig;
use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, Sim};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_deploy-action");

struct Cluster {
    sim: Sim,
    dir: tempfile::TempDir,
}

impl Cluster {
    async fn start(scenario: Scenario) -> Cluster {
        let mut sim = Sim::start(scenario);
        let addr = sim.serve("127.0.0.1:0").await.expect("bind");
        let dir = tempfile::tempdir().expect("tempdir");
        write_kubeconfig(&dir.path().join("kubeconfig"), addr, "default").expect("kubeconfig");
        Cluster { sim, dir }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.path(name);
        std::fs::write(&p, text).expect("write manifest");
        p.display().to_string()
    }

    async fn deploy(&self, args: &[&str]) -> Output {
        self.deploy_with_env(args, &[]).await
    }

    /// Run `deploy` outside GitHub Actions unless `env` says otherwise.
    async fn deploy_with_env(&self, args: &[&str], env: &[(&str, String)]) -> Output {
        self.invoke("deploy", args, env).await
    }

    /// Run the subcommand `command` against this cluster, in its directory.
    async fn invoke(&self, command: &str, args: &[&str], env: &[(&str, String)]) -> Output {
        let kubeconfig = self.path("kubeconfig");
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.arg(command)
            .args(args)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_TOKEN")
            .env_remove("GITHUB_OUTPUT")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env("NO_COLOR", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        // Manifests may be named relative to the cluster's directory, as in a checkout.
        cmd.current_dir(self.dir.path());
        cmd.output().await.expect("deploy-action runs")
    }
}

fn fast() -> Scenario {
    Scenario::builder()
        .default_image(ImageBehaviour::pulls_in(Duration::from_millis(200)))
        .image(
            "registry.local/shop/api:2",
            ImageBehaviour::crashing(3, false, Duration::ZERO, &["fatal: no config"]),
        )
        .image(
            "registry.local/shop/worker:*",
            ImageBehaviour::pulls_in(Duration::from_secs(600)),
        )
        .build()
}

fn deployment(name: &str, image: &str) -> String {
    crate::support::deployment_of(name, image, 1, "")
}

/// The process ended with `code`; otherwise show everything it printed.
#[track_caller]
pub(crate) fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn report(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("report written"))
        .expect("report is JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_manifests_exit_2_with_file_and_line_and_touch_nothing() {
    let c = Cluster::start(fast()).await;
    let f = c.write(
        "bad.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\n",
    );
    c.sim.settle(Duration::from_millis(300)).await;
    let before = c.sim.store.current_rv();
    let out = c.deploy(&["-f", &f]).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("bad.yaml:3: missing metadata.name"), "{err}");
    assert!(err.contains("nothing was applied"), "{err}");
    assert_eq!(c.sim.store.current_rv(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_timeout_is_a_usage_error() {
    let c = Cluster::start(fast()).await;
    let f = c.write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    );
    let out = c.deploy(&["-f", &f, "--timeout", "soon"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("invalid --timeout \"soon\""),
        "{}",
        text(&out.stderr)
    );
    let out = c.deploy(&["-f", &f, "--timeout", "5"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--timeout 5 has no unit: write 5s or 5m"),
        "{}",
        text(&out.stderr)
    );
    // And a good one: one resource is "1 resource", not "1 resources".
    let out = c.deploy(&["-f", &f, "--timeout", "30s"]).await;
    assert_exit(&out, 0);
    let err = text(&out.stderr);
    let target = err
        .find("deploy-action: context ")
        .expect("the target is said");
    let loaded = err
        .find("deploy-action: 1 resource loaded")
        .expect("one resource");
    assert!(target < loaded, "{err}");
    assert!(
        err[target..]
            .lines()
            .next()
            .unwrap()
            .contains(", namespace default"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_path_that_cannot_be_written_is_refused_before_anything_is_applied() {
    let c = Cluster::start(fast()).await;
    let f = c.write(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    );
    let out = c
        .deploy(&[
            "-f",
            &f,
            "--timeout",
            "30s",
            "--report",
            "missing/dir/report.json",
        ])
        .await;
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "cannot write the report to missing/dir/report.json: No such file or directory"
        ) && err.contains("nothing was applied"),
        "{err}"
    );
    assert!(
        c.sim.get("v1", "ConfigMap", "default", "x").is_none(),
        "applied anyway"
    );
    assert!(!c.path("missing").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_actions_a_refused_run_leaves_errors_a_job_summary_and_result_invalid() {
    let c = Cluster::start(fast()).await;
    let f = c.write(
        "web.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n",
    );
    let (outputs, summary) = (c.path("outputs"), c.path("summary.md"));
    let env = [
        ("GITHUB_ACTIONS", "true".to_owned()),
        ("GITHUB_OUTPUT", outputs.display().to_string()),
        ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
    ];
    let out = c
        .deploy_with_env(&["-f", "web.yaml", "--timeout", "30s"], &env)
        .await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(
            "::error file=web.yaml,line=4,title=deploy-action%3A nothing was applied::"
        ),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&outputs).unwrap(),
        "result=invalid\n"
    );
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary.starts_with("## deploy-action: invalid input, nothing was applied\n\n```text\nfound 1 problem in the manifests:\nweb.yaml:4:"),
        "{summary}"
    );
    let _ = f;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn success_exits_0_and_writes_the_report() {
    let c = Cluster::start(fast()).await;
    let f = c.write(
        "web.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: web}}\ndata: {{a: b}}\n---\n{}",
            deployment("web", "registry.local/shop/web:1")
        ),
    );
    let rep = c.path("report.json");
    let out = c
        .deploy(&[
            "-f",
            &f,
            "--timeout",
            "30s",
            "--report",
            rep.to_str().unwrap(),
        ])
        .await;
    assert_exit(&out, 0);
    let r = report(&rep);
    assert_eq!(r["result"], "success");
    assert_eq!(r["dry_run"], false);
    // What the binary writes meets the published schema, with where and when it ran.
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../docs/report.schema.json")).unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&r)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(r["cluster"]["namespace"], "default");
    assert!(
        r["cluster"]["server"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    let started: jiff::Timestamp = r["started_at"].as_str().unwrap().parse().unwrap();
    let finished: jiff::Timestamp = r["finished_at"].as_str().unwrap().parse().unwrap();
    assert!(started <= finished);
    let kinds: Vec<_> = r["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["kind"].clone(), x["verdict"].clone(), x["line"].clone()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("ConfigMap".into(), "succeeded".into(), 1.into()),
            ("Deployment".into(), "succeeded".into(), 6.into())
        ]
    );
    assert!(
        text(&out.stdout).starts_with("SUCCESS"),
        "{}",
        text(&out.stdout)
    );
    // The log says what changed, not that every resource waited for its first list.
    let log = text(&out.stderr);
    assert!(
        !log.contains("waiting for the first complete list"),
        "{log}"
    );
    assert!(log.contains("Deployment/web: "), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_loop_exits_1_with_reason_and_logs_in_the_summary() {
    let c = Cluster::start(fast()).await;
    let f = c.write("api.yaml", &deployment("api", "registry.local/shop/api:2"));
    let rep = c.path("report.json");
    let out = c
        .deploy(&[
            "-f",
            &f,
            "--timeout",
            "30s",
            "--report",
            rep.to_str().unwrap(),
        ])
        .await;
    assert_exit(&out, 1);
    let summary = text(&out.stdout);
    assert!(summary.contains("crash_loop"), "{summary}");
    assert!(summary.contains("fatal: no config"), "{summary}");
    assert!(!summary.contains('\u{1b}'), "NO_COLOR output has escapes");
    assert_eq!(report(&rep)["resources"][0]["reason"], "crash_loop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_registry_exits_70() {
    let c = Cluster::start(fast()).await;
    let f = c.write(
        "worker.yaml",
        &deployment("worker", "registry.local/shop/worker:7"),
    );
    let rep = c.path("report.json");
    let out = c
        .deploy(&[
            "-f",
            &f,
            "--timeout",
            "3s",
            // A 3 s run leaves no room for the 10 s stability window.
            "--settle",
            "1s",
            "--report",
            rep.to_str().unwrap(),
        ])
        .await;
    assert_exit(&out, 70);
    let r = report(&rep);
    assert_eq!(r["result"], "timed_out");
    assert_eq!(r["resources"][0]["reason"], "registry_slow");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_changes_nothing() {
    let c = Cluster::start(fast()).await;
    let f = c.write("web.yaml", &deployment("web", "registry.local/shop/web:1"));
    c.sim.settle(Duration::from_millis(300)).await;
    let before = c.sim.store.current_rv();
    let out = c
        .deploy(&["-f", &f, "--dry-run", "--image-preflight", "off"])
        .await;
    assert_exit(&out, 0);
    assert!(
        text(&out.stdout).starts_with("DRY RUN"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(c.sim.store.current_rv(), before);
}

/// A GitHub API that creates check run `id` once and accepts its updates.
async fn checks_github(id: u64) -> wiremock::MockServer {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let github = MockServer::start().await;
    let run = serde_json::json!({"id": id, "status": "in_progress",
        "html_url": format!("https://github.com/shop/platform/runs/{id}")});
    Mock::given(method("POST"))
        .and(path("/repos/shop/platform/check-runs"))
        .respond_with(ResponseTemplate::new(201).set_body_json(&run))
        .expect(1)
        .mount(&github)
        .await;
    Mock::given(method("PATCH"))
        .and(path(format!("/repos/shop/platform/check-runs/{id}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(&run))
        .mount(&github)
        .await;
    github
}

/// A GitHub API that answers a check-run create as it does for a fork PR's read-only token.
async fn fork_github() -> wiremock::MockServer {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let github = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(403).set_body_json(
            serde_json::json!({"message": "Resource not accessible by integration"}),
        ))
        .mount(&github)
        .await;
    github
}

/// The variables a GitHub runner sets, pointing the API at `api`.
fn actions_env(c: &Cluster, api: &str) -> Vec<(&'static str, String)> {
    vec![
        ("GITHUB_ACTIONS", "true".into()),
        ("GITHUB_REPOSITORY", "shop/platform".into()),
        (
            "GITHUB_SHA",
            "0123456789abcdef0123456789abcdef01234567".into(),
        ),
        ("GITHUB_EVENT_NAME", "push".into()),
        ("GITHUB_API_URL", api.into()),
        ("GITHUB_RUN_ID", "42".into()),
        ("GITHUB_RUN_ATTEMPT", "1".into()),
        ("GITHUB_JOB", "deploy".into()),
        ("GITHUB_TOKEN", "ghs_secretsecretsecret".into()),
        (
            "GITHUB_OUTPUT",
            c.path("github_output").display().to_string(),
        ),
        (
            "GITHUB_STEP_SUMMARY",
            c.path("step_summary").display().to_string(),
        ),
        ("GITHUB_WORKSPACE", c.dir.path().display().to_string()),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_actions_a_check_run_is_created_and_completed_and_outputs_written() {
    let github = checks_github(7).await;
    let c = Cluster::start(fast()).await;
    c.write("api.yaml", &deployment("api", "registry.local/shop/api:2"));
    let out = c
        .deploy_with_env(
            &[
                "-f",
                "api.yaml",
                "--timeout",
                "30s",
                "--image-preflight",
                "off",
            ],
            &actions_env(&c, &github.uri()),
        )
        .await;
    assert_exit(&out, 1);
    let everything = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        !everything
            .replace("::add-mask::ghs_secretsecretsecret", "")
            .contains("ghs_secretsecretsecret"),
        "the token leaked:\n{everything}"
    );
    let requests = github.received_requests().await.unwrap();
    let bodies: Vec<serde_json::Value> = requests
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap_or_default())
        .collect();
    let last = bodies
        .iter()
        .rev()
        .find(|b| b["status"] == "completed")
        .unwrap_or_else(|| panic!("never completed: {bodies:#?}"));
    assert_eq!(
        requests
            .iter()
            .filter(|r| r.method.as_str() == "POST")
            .count(),
        1
    );
    assert_eq!(last["conclusion"], "failure");
    assert_eq!(
        last["output"]["annotations"][0]["annotation_level"],
        "failure"
    );
    let outputs = std::fs::read_to_string(c.path("github_output")).unwrap();
    assert!(outputs.contains("result=failure"), "{outputs}");
    assert!(
        outputs.contains("check-run-url=https://github.com/shop/platform/runs/7"),
        "{outputs}"
    );
    assert!(
        std::fs::read_to_string(c.path("step_summary"))
            .unwrap()
            .contains("crash")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_token_falls_back_to_annotations_and_never_changes_the_verdict() {
    let github = fork_github().await;
    let c = Cluster::start(fast()).await;
    let f = c.write("web.yaml", &deployment("web", "registry.local/shop/web:1"));
    let out = c
        .deploy_with_env(
            &["-f", &f, "--timeout", "30s", "--image-preflight", "off"],
            &actions_env(&c, &github.uri()),
        )
        .await;
    assert_exit(&out, 0);
    assert!(
        text(&out.stderr).contains("may not write checks"),
        "{}",
        text(&out.stderr)
    );
    let outputs = std::fs::read_to_string(c.path("github_output")).unwrap();
    assert!(outputs.contains("result=success"), "{outputs}");
    // No check run was written, so its URL output is present but empty.
    assert!(outputs.lines().any(|l| l == "check-run-url="), "{outputs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_failure_is_annotated_with_workflow_commands() {
    let github = fork_github().await;
    let c = Cluster::start(fast()).await;
    c.write("api.yaml", &deployment("api", "registry.local/shop/api:2"));
    let out = c
        .deploy_with_env(
            &[
                "-f",
                "api.yaml",
                "--timeout",
                "30s",
                "--image-preflight",
                "off",
            ],
            &actions_env(&c, &github.uri()),
        )
        .await;
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::error file=") && l.contains("line=")),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_completes_the_check_run_as_cancelled() {
    let github = checks_github(9).await;
    let c = Cluster::start(fast()).await;
    let (child, pid) = spawn_slow_deploy(&c, &github);
    // Wait until the run is under way (the check run exists), then stop it as a runner would.
    first_request(&github).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    send("-TERM", &pid).await;
    let out = exited(child).await;
    assert_exit(&out, 143);
    let requests = github.received_requests().await.unwrap();
    let completed: Vec<serde_json::Value> = requests
        .iter()
        .filter_map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).ok())
        .filter(|b| b["status"] == "completed")
        .collect();
    assert_eq!(completed.len(), 1, "{requests:?}");
    assert_eq!(completed[0]["conclusion"], "cancelled");
    // The report says cancelled, and lists what had been applied, as it stood.
    let r = report(&c.path("report.json"));
    assert_eq!(r["result"], "cancelled", "{r:#}");
    let worker = &r["resources"][0];
    assert_eq!(
        (&worker["name"], &worker["verdict"], &worker["reason"]),
        (&"worker".into(), &"unfinished".into(), &"cancelled".into()),
        "{r:#}"
    );
    assert!(
        worker["message"]
            .as_str()
            .unwrap()
            .starts_with("interrupted while: "),
        "{r:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_needs_no_cluster_and_fails_a_never_pushed_image() {
    use wiremock::matchers::{method, path_regex};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let registry = MockServer::start().await;
    let unknown = r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#;
    Mock::given(method("HEAD"))
        .and(path_regex("^/v2/.+/manifests/.+$"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&registry)
        .await;
    Mock::given(method("GET"))
        .and(path_regex("^/v2/.+$"))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_string(unknown)
                .insert_header("Content-Type", "application/json"),
        )
        .mount(&registry)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let image = format!("{}/shop/web:never-pushed", registry.address());
    std::fs::write(dir.path().join("web.yaml"), deployment("web", &image)).unwrap();
    let out = tokio::process::Command::new(BIN)
        .args(["check", "-f", "web.yaml", "--report", "report.json"])
        .current_dir(dir.path())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_TOKEN")
        .env("KUBECONFIG", "/nonexistent")
        .env("NO_COLOR", "1")
        .output()
        .await
        .unwrap();
    assert_exit(&out, 1);
    let r = report(&dir.path().join("report.json"));
    assert_eq!(r["resources"][0]["reason"], "image_not_found");
    assert_eq!(r["resources"][0]["annotation"]["line"], 15);
}

#[test]
fn check_holds_custom_resources_to_the_crds_schemas_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("crds/acme")).unwrap();
    std::fs::write(
        d.join("crds/acme/widgets.yml"),
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.acme.io}
spec:
  group: acme.io
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer}
",
    )
    .unwrap();
    // Not a CRD: ignored.
    std::fs::write(
        d.join("crds/README.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    )
    .unwrap();
    let widget = |size: &str| {
        format!(
            "apiVersion: acme.io/v1\nkind: Widget\nmetadata: {{name: w}}\nspec:\n  size: {size}\n"
        )
    };
    let check = |schemas: &[&str]| {
        let mut cmd = std::process::Command::new(BIN);
        cmd.args(["check", "-f", "w.yaml", "--image-preflight", "off"]);
        for s in schemas {
            cmd.args(["--schemas", s]);
        }
        let out = cmd
            .current_dir(d)
            .env_remove("GITHUB_ACTIONS")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (out.status.code(), text(&out.stderr))
    };
    std::fs::write(d.join("w.yaml"), widget("three")).unwrap();
    // Without the schema, the kind is only said unchecked.
    let (code, err) = check(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("no CRD in the manifests defines it"), "{err}");
    let (code, err) = check(&["crds"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "w.yaml:5: spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
        ),
        "{err}"
    );
    // A field the schema does not declare: a warning, as the server prunes it.
    std::fs::write(d.join("w.yaml"), widget("3\n  sise: 4")).unwrap();
    let (code, err) = check(&["crds/acme/widgets.yml"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("no CRD"), "{err}");
    assert!(
        err.contains("w.yaml:6: Widget/w: unknown field \"spec.sise\" (did you mean \"size\"?)"),
        "{err}"
    );
    assert!(
        err.contains("the CRDs in the manifests and --schemas"),
        "{err}"
    );
}

/// stderr of `deploy-action ARGS` with `env`, paths and ports made stable for a snapshot.
fn first_contact(args: &[&str], env: &[(&str, &str)], dir: &Path) -> String {
    let mut cmd = std::process::Command::new(BIN);
    cmd.args(args)
        .env_remove("KUBECONFIG")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("NO_COLOR", "1")
        .current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("deploy-action runs");
    assert_exit(&out, 2);
    let port = regex_free_port(&text(&out.stderr));
    port.replace(&dir.display().to_string(), "DIR")
}

/// `127.0.0.1:43567` -> `127.0.0.1:PORT`.
fn regex_free_port(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("127.0.0.1:") {
        out.push_str(&rest[..at + "127.0.0.1:".len()]);
        rest = rest[at + "127.0.0.1:".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push_str("PORT");
    }
    out.push_str(rest);
    out
}

#[test]
fn first_errors_name_the_file_the_context_or_the_server_in_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    )
    .unwrap();
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(
        d.join("kubeconfig"),
        format!(
            "apiVersion: v1
kind: Config
clusters:
- {{name: a, cluster: {{server: 'http://127.0.0.1:{port}'}}}}
contexts:
- {{name: staging, context: {{cluster: a, user: u}}}}
- {{name: preview, context: {{cluster: a, user: u}}}}
current-context: staging
users:
- {{name: u, user: {{token: garbage-token-that-must-not-print}}}}
"
        ),
    )
    .unwrap();
    let home = d.join("home");
    let home = home.to_str().unwrap();
    let cases = [
        first_contact(
            &[
                "deploy",
                "-f",
                "cm.yaml",
                "--kubeconfig",
                "kubeconfig",
                "--context",
                "prod",
            ],
            &[],
            d,
        ),
        first_contact(&["deploy", "-f", "cm.yaml"], &[("HOME", home)], d),
        first_contact(
            &["deploy", "-f", "cm.yaml"],
            &[("KUBECONFIG", "kubeconfig")],
            d,
        ),
        first_contact(
            &["deploy", "-f", "cm.yaml", "--kubeconfig", "missing.yaml"],
            &[],
            d,
        ),
    ];
    let all = cases.join("---\n");
    assert!(!all.contains("garbage-token"), "{all}");
    assert!(!all.contains("Some("), "{all}");
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("cli_first_errors", all));
}

#[test]
fn help_shows_examples_exit_codes_and_the_annotations_read() {
    for args in [&["--help"][..], &["deploy", "--help"]] {
        let out = std::process::Command::new(BIN).args(args).output().unwrap();
        assert_exit(&out, 0);
        let help = text(&out.stdout);
        for needle in [
            "Examples:",
            "-f web.yaml,api.yaml",
            "Exit codes:",
            "70  nothing failed, but a resource timed out",
            "deploy-action.io/settle",
            "krane.shopify.io/timeout-override",
        ] {
            assert!(help.contains(needle), "{args:?} lacks {needle:?}:\n{help}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_asks_the_docker_credential_helper_named_by_the_registry_config() {
    use base64::Engine as _;
    use wiremock::matchers::{header, method, path_regex};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    // Only the helper's credentials see that the image is missing; anonymously it is denied,
    // which `check` merely warns about.
    let registry = MockServer::start().await;
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode("ci:s3cret")
    );
    let unknown = r#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#;
    Mock::given(path_regex("^/v2/.+$"))
        .and(header("authorization", basic.as_str()))
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_string(unknown)
                .insert_header("Content-Type", "application/json"),
        )
        .with_priority(1)
        .mount(&registry)
        .await;
    Mock::given(method("HEAD"))
        .and(path_regex("^/v2/.+$"))
        .respond_with(
            ResponseTemplate::new(401).insert_header("www-authenticate", r#"Basic realm="test""#),
        )
        .with_priority(10)
        .mount(&registry)
        .await;

    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let helper = bin.join("docker-credential-fake");
    crate::support::write_executable(
        &helper,
        &format!(
            "#!/bin/sh\nread -r url\n[ \"$url\" = \"{}\" ] || {{ echo 'credentials not found in native keychain'; exit 1; }}\nprintf '{{\"ServerURL\":\"%s\",\"Username\":\"ci\",\"Secret\":\"s3cret\"}}' \"$url\"\n",
            registry.address()
        ),
    );
    std::fs::write(dir.path().join("config.json"), r#"{"credsStore": "fake"}"#).unwrap();
    let image = format!("{}/shop/web:never-pushed", registry.address());
    std::fs::write(dir.path().join("web.yaml"), deployment("web", &image)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = tokio::process::Command::new(BIN)
        .args([
            "check",
            "-f",
            "web.yaml",
            "--registry-config",
            "config.json",
        ])
        .args(["--report", "report.json"])
        .current_dir(dir.path())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_TOKEN")
        .env("KUBECONFIG", "/nonexistent")
        .env("NO_COLOR", "1")
        .env("PATH", path)
        .output()
        .await
        .unwrap();
    assert_exit(&out, 1);
    let r = report(&dir.path().join("report.json"));
    assert_eq!(r["resources"][0]["reason"], "image_not_found");
    assert!(!text(&out.stderr).contains("s3cret"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_accepts_and_never_answers_ends_the_run_saying_so() {
    // Accepts every connection and holds it open without a byte in reply.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    write_kubeconfig(&dir.path().join("kubeconfig"), addr, "default").unwrap();
    std::fs::write(
        dir.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    )
    .unwrap();
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args([
        "deploy",
        "-f",
        "cm.yaml",
        "--kubeconfig",
        "kubeconfig",
        "--timeout",
        "5s",
    ])
    .env_remove("GITHUB_ACTIONS")
    .env("NO_COLOR", "1")
    .current_dir(dir.path());
    // A liveness bound, not a timing claim: without request deadlines this never ends.
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("the run ended")
        .unwrap();
    held.abort();
    assert_exit(&out, 2);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("accepted the connection but did not answer discovery within 5s"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_value_a_container_logs_is_masked_everywhere() {
    const SECRET: &str = "s3cr3t-db-password-9731";
    let github = checks_github(11).await;
    let c = Cluster::start(
        Scenario::builder()
            .image(
                "registry.local/shop/leaky:1",
                ImageBehaviour::crashing(
                    1,
                    false,
                    Duration::ZERO,
                    &[
                        "connecting with password s3cr3t-db-password-9731",
                        "::error title=pwned::a log line posing as a workflow command",
                        "fatal: refused",
                    ],
                ),
            )
            .build(),
    )
    .await;
    c.write(
        "app.yaml",
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: db}}\nstringData: {{password: {SECRET}}}\n---\n{}",
            deployment("leaky", "registry.local/shop/leaky:1")
        ),
    );
    let mut env = actions_env(&c, &github.uri());
    env.push(("NO_COLOR", "1".into()));
    let out = c
        .deploy_with_env(
            &[
                "-f",
                "app.yaml",
                "--image-preflight",
                "off",
                "--report",
                "report.json",
            ],
            &env,
        )
        .await;
    assert_exit(&out, 1);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("::add-mask::{SECRET}")),
        "{stdout}"
    );
    // The crash is reported with its log tail, the secret masked in it.
    assert!(stdout.contains("connecting with password ***"), "{stdout}");
    // Inside the summary, workflow commands are stopped: the log line stays text.
    let posing = stdout
        .find("::error title=pwned::")
        .expect("the log tail is in the summary");
    let stop = stdout[..posing]
        .rfind("::stop-commands::")
        .expect("commands stopped before the summary");
    let token = stdout[stop + "::stop-commands::".len()..]
        .lines()
        .next()
        .unwrap();
    assert!(
        stdout[posing..].contains(&format!("::{token}::")),
        "commands resumed after the summary: {stdout}"
    );
    assert!(
        !stdout[stop..posing].contains(&format!("::{token}::")),
        "{stdout}"
    );
    let elsewhere = [
        stdout.replace(&format!("::add-mask::{SECRET}"), ""),
        text(&out.stderr),
        std::fs::read_to_string(c.path("report.json")).unwrap(),
        std::fs::read_to_string(c.path("step_summary")).unwrap(),
        std::fs::read_to_string(c.path("github_output")).unwrap(),
    ];
    for (i, place) in elsewhere.iter().enumerate() {
        assert!(
            !place.contains(SECRET),
            "place {i} leaks the secret:\n{place}"
        );
    }
    for request in github.received_requests().await.unwrap() {
        let body = String::from_utf8_lossy(&request.body);
        assert!(!body.contains(SECRET), "GitHub was sent the secret: {body}");
    }
}

/// A GitHub that creates check runs at once and answers updates only after a minute.
async fn slow_github(id: u64) -> wiremock::MockServer {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let github = MockServer::start().await;
    let run = serde_json::json!({"id": id, "status": "in_progress",
        "html_url": format!("https://github.com/shop/platform/runs/{id}")});
    Mock::given(method("POST"))
        .and(path("/repos/shop/platform/check-runs"))
        .respond_with(ResponseTemplate::new(201).set_body_json(&run))
        .mount(&github)
        .await;
    Mock::given(method("PATCH"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(&run)
                .set_delay(Duration::from_secs(60)),
        )
        .mount(&github)
        .await;
    github
}

/// Deploy a slow worker under Actions against `github`, interrupt it with SIGINT once
/// its check run exists (and again after `again`, if given); what it printed.
async fn interrupt(github: &wiremock::MockServer, again: Option<Duration>) -> Output {
    let c = Cluster::start(fast()).await;
    let (child, pid) = spawn_slow_deploy(&c, github);
    first_request(github).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    send("-INT", &pid).await;
    if let Some(pause) = again {
        tokio::time::sleep(pause).await;
        send("-INT", &pid).await;
    }
    exited(child).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_slow_github_an_interrupted_run_gives_up_on_its_check_run_and_says_so() {
    let github = slow_github(12).await;
    let out = interrupt(&github, None).await;
    assert_exit(&out, 130);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("gave up on completing the check run 5 s after the interruption"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_signal_exits_at_once() {
    let github = slow_github(13).await;
    let out = interrupt(&github, Some(Duration::from_millis(500))).await;
    assert_exit(&out, 130);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("interrupted again: exiting without completing the check run"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_while_the_check_run_is_being_created_still_completes_it() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let github = MockServer::start().await;
    let run = serde_json::json!({"id": 14, "status": "in_progress",
        "html_url": "https://github.com/shop/platform/runs/14"});
    Mock::given(method("POST"))
        .and(path("/repos/shop/platform/check-runs"))
        .respond_with(
            ResponseTemplate::new(201)
                .set_body_json(&run)
                .set_delay(Duration::from_secs(2)),
        )
        .expect(1)
        .mount(&github)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/shop/platform/check-runs/14"))
        .respond_with(ResponseTemplate::new(200).set_body_json(&run))
        .mount(&github)
        .await;
    let c = Cluster::start(fast()).await;
    let (child, pid) = spawn_slow_deploy(&c, &github);
    // The create has been sent and is not answered yet.
    first_request(&github).await;
    send("-TERM", &pid).await;
    let out = exited(child).await;
    assert_exit(&out, 143);
    let completed: Vec<serde_json::Value> = github
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter_map(|r| serde_json::from_slice::<serde_json::Value>(&r.body).ok())
        .filter(|b| b["status"] == "completed")
        .collect();
    assert_eq!(completed.len(), 1, "{}", text(&out.stderr));
    assert_eq!(completed[0]["conclusion"], "cancelled");
}

/// A TCP front for `upstream` on a port of its own that, `after` its start, closes every
/// connection, stops listening for `down`, and listens again on the same port: what a
/// client sees when the API server restarts.
async fn restarting_front(
    upstream: std::net::SocketAddr,
    after: Duration,
    down: Duration,
) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serve = move |listener: tokio::net::TcpListener| {
        tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return conns;
                };
                conns.spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        })
    };
    tokio::spawn(async move {
        let first = serve(listener);
        tokio::time::sleep(after).await;
        first.abort(); // drops the listener and, with the JoinSet, every open connection
        tokio::time::sleep(down).await;
        let again = tokio::net::TcpListener::bind(addr).await.unwrap();
        let _ = serve(again).await;
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_server_restart_mid_watch_leaves_the_verdicts_unchanged() {
    let mut sim = Sim::start(
        Scenario::builder()
            .default_image(ImageBehaviour::pulls_in(Duration::from_secs(3)))
            .image(
                "registry.local/shop/api:missing",
                ImageBehaviour::not_found(),
            )
            .build(),
    );
    let upstream = sim.serve("127.0.0.1:0").await.unwrap();
    let front = restarting_front(upstream, Duration::from_secs(2), Duration::from_secs(1)).await;
    let dir = tempfile::tempdir().unwrap();
    write_kubeconfig(&dir.path().join("kubeconfig"), front, "default").unwrap();
    std::fs::write(
        dir.path().join("app.yaml"),
        format!(
            "{}---\n{}",
            deployment("web", "registry.local/shop/web:1"),
            deployment("api", "registry.local/shop/api:missing")
        ),
    )
    .unwrap();
    let out = tokio::process::Command::new(BIN)
        .args([
            "deploy",
            "-f",
            "app.yaml",
            "--kubeconfig",
            "kubeconfig",
            "--settle",
            "2s",
        ])
        .args([
            "--image-preflight",
            "off",
            "--no-fail-fast",
            "--report",
            "report.json",
        ])
        .args(["--timeout", "60s"])
        .env_remove("GITHUB_ACTIONS")
        .env("NO_COLOR", "1")
        .current_dir(dir.path())
        .output()
        .await
        .unwrap();
    assert_exit(&out, 1);
    let r = report(&dir.path().join("report.json"));
    let verdicts: Vec<_> = r["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["name"].clone(), o["verdict"].clone(), o["reason"].clone()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("web".into(), "succeeded".into(), serde_json::Value::Null),
            ("api".into(), "failed".into(), "image_not_found".into()),
        ],
        "{}",
        text(&out.stderr)
    );
    // The restart did hit the watches, and they came back.
    assert!(
        text(&out.stderr).contains("warning: watch interrupted, retrying"),
        "{}",
        text(&out.stderr)
    );
    drop(sim);
}

/// deploy-action deploying a slow worker under Actions against `github`, started: the
/// child and its pid.
fn spawn_slow_deploy(
    c: &Cluster,
    github: &wiremock::MockServer,
) -> (tokio::process::Child, String) {
    c.write(
        "worker.yaml",
        &deployment("worker", "registry.local/shop/worker:7"),
    );
    let mut cmd = tokio::process::Command::new(BIN);
    cmd.args(["deploy", "-f", "worker.yaml", "--timeout", "60s"])
        .args([
            "--image-preflight",
            "off",
            "--report",
            "report.json",
            "--kubeconfig",
        ])
        .arg(c.path("kubeconfig"))
        .current_dir(c.dir.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in actions_env(c, &github.uri()) {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("deploy-action runs");
    let pid = child.id().expect("pid").to_string();
    (child, pid)
}

/// Until `github` has received its first request (the check run's create was sent).
async fn first_request(github: &wiremock::MockServer) {
    for _ in 0..250 {
        if !github
            .received_requests()
            .await
            .unwrap_or_default()
            .is_empty()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `kill -SIG pid`, as a runner stops a step.
async fn send(signal: &str, pid: &str) {
    let sent = tokio::process::Command::new("kill")
        .args([signal, pid])
        .status()
        .await
        .expect("kill");
    assert!(sent.success());
}

/// The child's output, within a liveness bound (not a timing claim).
async fn exited(child: tokio::process::Child) -> Output {
    tokio::time::timeout(Duration::from_secs(45), child.wait_with_output())
        .await
        .expect("exited in time")
        .expect("exit")
}

/// kubectl 1.33 when this machine has it (`KUBECTL` overrides): the independent client.
fn kubectl() -> Option<std::path::PathBuf> {
    if let Ok(k) = std::env::var("KUBECTL") {
        return Some(k.into());
    }
    let pinned = std::path::PathBuf::from("/usr/lib/google-cloud-sdk/bin/kubectl.1.33");
    if pinned.exists() {
        return Some(pinned);
    }
    std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .ok()
        .map(|_| "kubectl".into())
}

/// What `kubectl diff` says would change: `Kind/name` of each object with a diff, whether it
/// is new, and the lines its diff adds (trimmed).
fn kubectl_diff(out: &str) -> BTreeMap<String, (bool, Vec<String>)> {
    let mut objects: BTreeMap<String, (bool, Vec<String>)> = BTreeMap::new();
    let mut current = None;
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("diff -u -N ") {
            // `/tmp/LIVE-1/apps.v1.Deployment.default.web /tmp/MERGED-2/...`
            let file = rest.split(' ').next().unwrap_or_default();
            let parts: Vec<&str> = file
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .split('.')
                .collect();
            let key = format!("{}/{}", parts[parts.len() - 3], parts[parts.len() - 1]);
            objects.insert(key.clone(), (false, Vec::new()));
            current = Some(key);
        } else if let Some(key) = &current {
            let entry = objects.get_mut(key).unwrap();
            if line.starts_with("@@ -0,0 ") {
                entry.0 = true;
            } else if let Some(added) = line.strip_prefix('+').filter(|_| !line.starts_with("+++"))
            {
                entry.1.push(added.trim().to_owned());
            }
        }
    }
    objects
}

#[tokio::test]
async fn plan_agrees_with_kubectl_diff_on_what_changes() {
    let Some(kubectl) = kubectl() else {
        #[expect(clippy::print_stderr, reason = "a skipped fidelity test must say so")]
        {
            eprintln!("SKIPPED: kubectl not found");
        }
        return;
    };
    let c = Cluster::start(fast()).await;
    let settings =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  level: info\n";
    let web = |image: &str, replicas: u32| {
        format!(
            "{}          env:\n            - {{name: LEVEL, value: info}}\n",
            crate::support::deployment_of("web", image, replicas, "")
        )
    };
    let first = c.write(
        "app.yaml",
        &format!("{settings}---\n{}", web("registry.local/shop/web:1", 1)),
    );
    let out = c
        .deploy(&["-f", &first, "--image-preflight", "off", "--settle", "0"])
        .await;
    assert_exit(&out, 0);

    let flags = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  x: \"1\"\n";
    let second = c.write(
        "app.yaml",
        &format!(
            "{settings}---\n{}---\n{flags}",
            web("registry.local/shop/web:2", 2)
        ),
    );
    // Async: the cluster answers on this same runtime.
    let diff = tokio::process::Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(c.path("kubeconfig"))
        .args([
            "diff",
            "--server-side",
            "--field-manager",
            "deploy-action",
            "--force-conflicts",
            "-f",
        ])
        .arg(&second)
        .output()
        .await
        .expect("kubectl runs");
    // 1: differences found.
    assert_eq!(diff.status.code(), Some(1), "{}", text(&diff.stderr));
    let kubectl_says = kubectl_diff(&text(&diff.stdout));

    let before = c.sim.store.current_rv();
    let report_path = c.path("plan.json");
    let out = c
        .invoke(
            "plan",
            &[
                "-f",
                &second,
                "--image-preflight",
                "off",
                "--report",
                report_path.to_str().unwrap(),
            ],
            &[],
        )
        .await;
    assert_exit(&out, 0);
    assert_eq!(c.sim.store.current_rv(), before, "plan wrote something");
    insta::assert_snapshot!("cli_plan_stdout", text(&out.stdout));

    let report = report(&report_path);
    let mut we_say = BTreeMap::new();
    for r in report["resources"].as_array().unwrap() {
        let action = r["change"]["action"].as_str().unwrap();
        if action == "unchanged" {
            continue;
        }
        let key = format!(
            "{}/{}",
            r["kind"].as_str().unwrap(),
            r["name"].as_str().unwrap()
        );
        let added: Vec<String> = r["change"]["fields"]
            .as_array()
            .map(|fields| {
                fields
                    .iter()
                    .map(|f| {
                        let path = f["path"].as_str().unwrap();
                        let field = path.rsplit('.').next().unwrap();
                        let value: serde_json::Value =
                            serde_json::from_str(f["after"].as_str().unwrap()).unwrap();
                        let value = value
                            .as_str()
                            .map(str::to_owned)
                            .unwrap_or(value.to_string());
                        format!("{field}: {value}")
                    })
                    .collect()
            })
            .unwrap_or_default();
        we_say.insert(key, (action == "created", added));
    }
    assert_eq!(
        we_say.keys().collect::<Vec<_>>(),
        kubectl_says.keys().collect::<Vec<_>>(),
        "kubectl diff:\n{}",
        text(&diff.stdout)
    );
    for (key, (created, lines)) in &we_say {
        let (kubectl_created, kubectl_lines) = &kubectl_says[key];
        assert_eq!(created, kubectl_created, "{key}");
        for line in lines {
            assert!(
                kubectl_lines.contains(line),
                "{key}: {line:?} not in {kubectl_lines:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_run_without_a_check_run_does_not_claim_one() {
    let c = Cluster::start(fast()).await;
    c.write(
        "worker.yaml",
        &deployment("worker", "registry.local/shop/worker:7"),
    );
    let child = tokio::process::Command::new(BIN)
        .args([
            "deploy",
            "-f",
            "worker.yaml",
            "--timeout",
            "60s",
            "--image-preflight",
            "off",
        ])
        .arg("--kubeconfig")
        .arg(c.path("kubeconfig"))
        .current_dir(c.dir.path())
        .env_remove("GITHUB_ACTIONS")
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("deploy-action runs");
    let pid = child.id().expect("pid").to_string();
    tokio::time::sleep(Duration::from_secs(2)).await;
    send("-INT", &pid).await;
    let out = exited(child).await;
    assert_exit(&out, 130);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("interrupted: the run was cancelled"),
        "{stderr}"
    );
    assert!(!stderr.contains("check run"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_prints_the_roles_a_deploy_of_the_manifests_needs() {
    let c = Cluster::start(fast()).await;
    c.write(
        "app.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: web-config}}\ndata: {{MODE: a}}\n---\n{}---\n{}",
            deployment("web", "registry.local/shop/web:1"),
            "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.acme.io}
spec:
  group: acme.io
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
---
apiVersion: acme.io/v1
kind: Widget
metadata: {name: blue}
"
        ),
    );
    let out = c.invoke("rbac", &["-f", "app.yaml"], &[]).await;
    assert_exit(&out, 0);
    let yaml = text(&out.stdout);
    let docs: Vec<serde_json::Value> = yaml
        .split("---\n")
        .map(|d| serde_yaml_ng::from_str(d).expect("YAML"))
        .collect();
    let kinds: Vec<(&str, Option<&str>)> = docs
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap(),
                d["metadata"]["namespace"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [("ClusterRole", None), ("Role", Some("default"))],
        "{yaml}"
    );
    // The CRD is cluster-scoped and read by the rules of its Widgets; Widgets come from
    // the CRD in the manifests, which the cluster does not serve yet.
    let rules = |i: usize| -> Vec<String> {
        docs[i]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("{} {} {}", r["apiGroups"][0], r["resources"], r["verbs"]))
            .collect()
    };
    assert_eq!(
        rules(0),
        [
            r#""apiextensions.k8s.io" ["customresourcedefinitions"] ["create","get","list","patch","watch"]"#
        ],
        "{yaml}"
    );
    let role = rules(1);
    for expected in [
        r#""" ["pods/log"] ["get"]"#,
        r#""acme.io" ["widgets"] ["create","get","list","patch","watch"]"#,
        r#""apps" ["deployments"] ["create","get","list","patch","watch"]"#,
        r#""autoscaling" ["horizontalpodautoscalers"] ["list"]"#,
    ] {
        assert!(
            role.contains(&expected.to_owned()),
            "{expected} not in {role:#?}"
        );
    }
    // kubectl sends it as RBAC objects, and the API server takes them.
    let path = c.write("rbac.yaml", &yaml);
    let kubeconfig = c.path("kubeconfig");
    let kubectl = std::process::Command::new("kubectl")
        .args([
            "create",
            "--dry-run=server",
            "-o",
            "name",
            "-f",
            &path,
            "--kubeconfig",
        ])
        .arg(&kubeconfig)
        .output();
    if let Ok(k) = kubectl {
        assert!(k.status.success(), "{}", String::from_utf8_lossy(&k.stderr));
        assert_eq!(
            String::from_utf8_lossy(&k.stdout),
            "clusterrole.rbac.authorization.k8s.io/deploy-action\nrole.rbac.authorization.k8s.io/deploy-action\n"
        );
    }
}
