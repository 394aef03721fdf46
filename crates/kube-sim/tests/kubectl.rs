//! Fidelity: kubectl 1.33, an independent client, driven against kube-sim over TCP.
//! If kubectl disagrees with kube-sim, kube-sim is wrong.

use kube_sim::kubeconfig::write_kubeconfig;
use kube_sim::scenario::ImageBehaviour;
use kube_sim::{Scenario, Sim};
use std::path::PathBuf;
use std::process::{Command, Output};

/// kubectl 1.33 if this machine has it (`KUBECTL` overrides).
pub fn kubectl() -> Option<PathBuf> {
    if let Ok(k) = std::env::var("KUBECTL") {
        return Some(PathBuf::from(k));
    }
    let pinned = PathBuf::from("/usr/lib/google-cloud-sdk/bin/kubectl.1.33");
    if pinned.exists() {
        return Some(pinned);
    }
    Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .ok()
        .map(|_| PathBuf::from("kubectl"))
}

/// A cluster served on loopback with a kubeconfig, and kubectl pointed at it.
pub struct Served {
    pub sim: Sim,
    kubectl: PathBuf,
    _dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl Served {
    pub async fn start(scenario: Scenario) -> Option<Served> {
        let Some(kubectl) = kubectl() else {
            #[expect(
                clippy::print_stderr,
                reason = "a skipped fidelity test must say so loudly"
            )]
            {
                eprintln!("SKIPPED: no kubectl on this machine; kube-sim fidelity is unchecked");
            }
            return None;
        };
        let mut sim = Sim::start(scenario);
        let addr = sim.serve("127.0.0.1:0").await.expect("bind loopback");
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        write_kubeconfig(&kubeconfig, addr, "default").expect("kubeconfig");
        Some(Served {
            sim,
            kubectl,
            _dir: dir,
            kubeconfig,
        })
    }

    pub async fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = tokio::process::Command::new(&self.kubectl);
        cmd.arg("--kubeconfig").arg(&self.kubeconfig).args(args);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("kubectl runs");
        if let Some(input) = stdin {
            use tokio::io::AsyncWriteExt;
            let mut pipe = child.stdin.take().expect("stdin");
            pipe.write_all(input.as_bytes()).await.expect("write stdin");
        }
        drop(child.stdin.take());
        child.wait_with_output().await.expect("kubectl output")
    }

    /// Run kubectl and insist it succeeded; returns stdout.
    pub async fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.run(args, stdin).await;
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }
}

const CONFIGMAP: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {app: web}
data:
  mode: fast
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_and_server_dry_run() {
    let Some(s) = Served::start(Scenario::default()).await else {
        return;
    };
    s.sim.settle(std::time::Duration::from_millis(300)).await;
    let before = s.sim.store.current_rv();
    let out = s
        .ok(
            &["apply", "--server-side", "--dry-run=server", "-f", "-"],
            Some(CONFIGMAP),
        )
        .await;
    assert_eq!(
        out.trim(),
        "configmap/settings serverside-applied (server dry run)"
    );
    assert_eq!(
        s.sim.store.current_rv(),
        before,
        "a server dry run stored something"
    );
    assert!(
        s.sim
            .get("v1", "ConfigMap", "default", "settings")
            .is_none()
    );

    let out = s
        .ok(&["apply", "--server-side", "-f", "-"], Some(CONFIGMAP))
        .await;
    assert_eq!(out.trim(), "configmap/settings serverside-applied");
    let stored = s
        .sim
        .get("v1", "ConfigMap", "default", "settings")
        .expect("stored");
    assert_eq!(stored["data"]["mode"], "fast");
}

/// kubectl prints every list as a `v1 List`; each item must still be its own typed object.
fn typed_items<K: serde::de::DeserializeOwned>(json: &str) -> Vec<K> {
    let list: serde_json::Value = serde_json::from_str(json).expect("json");
    assert_eq!(list["kind"], "List");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| serde_json::from_value(i.clone()).unwrap_or_else(|e| panic!("{e}: {i}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_json_deserializes_into_typed_objects() {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node};
    let Some(s) = Served::start(Scenario::default()).await else {
        return;
    };
    s.ok(&["apply", "--server-side", "-f", "-"], Some(CONFIGMAP))
        .await;
    let nodes: Vec<Node> = typed_items(&s.ok(&["get", "nodes", "-o", "json"], None).await);
    assert_eq!(nodes.len(), 3);
    let ns: Vec<Namespace> = typed_items(&s.ok(&["get", "namespaces", "-o", "json"], None).await);
    assert!(
        ns.iter()
            .any(|n| n.metadata.name.as_deref() == Some("kube-system"))
    );
    let cm: ConfigMap = serde_json::from_str(
        &s.ok(&["get", "configmap", "settings", "-o", "json"], None)
            .await,
    )
    .expect("ConfigMap");
    assert_eq!(cm.data.unwrap()["mode"], "fast");
    let _: Vec<k8s_openapi::api::storage::v1::StorageClass> =
        typed_items(&s.ok(&["get", "storageclass", "-o", "json"], None).await);
}

fn deployment(name: &str, image: &str, extra: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: 2
  progressDeadlineSeconds: 3
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
        - name: {name}
          image: {image}
{extra}"
    )
}

fn fast_scenario() -> Scenario {
    use kube_sim::scenario::ImageBehaviour;
    use std::time::Duration;
    Scenario::builder()
        .default_image(ImageBehaviour::pulls_in(Duration::from_millis(100)))
        .image("registry.local/ui:never", ImageBehaviour::never_ready())
        .image(
            "registry.local/cron:crash",
            ImageBehaviour::crashing(
                3,
                false,
                Duration::from_millis(100),
                &["starting", "fatal: no config"],
            ),
        )
        .build()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_status_succeeds_on_a_healthy_deployment() {
    let Some(s) = Served::start(fast_scenario()).await else {
        return;
    };
    s.ok(
        &["apply", "--server-side", "-f", "-"],
        Some(&deployment("web", "registry.local/web:1", "")),
    )
    .await;
    let out = s
        .ok(
            &["rollout", "status", "deployment/web", "--timeout=30s"],
            None,
        )
        .await;
    assert!(
        out.contains("deployment \"web\" successfully rolled out"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_status_fails_on_progress_deadline_exceeded() {
    let Some(s) = Served::start(fast_scenario()).await else {
        return;
    };
    let probe = "          readinessProbe:\n            httpGet: {path: /, port: 80}\n";
    s.ok(
        &["apply", "--server-side", "-f", "-"],
        Some(&deployment("ui", "registry.local/ui:never", probe)),
    )
    .await;
    let out = s
        .run(
            &["rollout", "status", "deployment/ui", "--timeout=60s"],
            None,
        )
        .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("deployment \"ui\" exceeded its progress deadline"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_and_logs_of_a_crashing_pod() {
    let Some(s) = Served::start(fast_scenario()).await else {
        return;
    };
    let pod = "apiVersion: v1
kind: Pod
metadata: {name: cron}
spec:
  containers:
    - name: cron
      image: registry.local/cron:crash
";
    s.ok(&["apply", "--server-side", "-f", "-"], Some(pod))
        .await;
    // Wait (in real time) until the kubelet has restarted it twice: the first restart is
    // immediate, back-off (and its BackOff event) starts with the second exit.
    for _ in 0..100 {
        let p = s.sim.get("v1", "Pod", "default", "cron");
        if p.as_ref()
            .and_then(|p| p.pointer("/status/containerStatuses/0/restartCount"))
            .and_then(serde_json::Value::as_i64)
            >= Some(2)
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let events = s.ok(&["events", "--for", "pod/cron"], None).await;
    for reason in [
        "Scheduled",
        "Pulling",
        "Pulled",
        "Created",
        "Started",
        "BackOff",
    ] {
        assert!(events.contains(reason), "no {reason} event in:\n{events}");
    }
    let logs = s.ok(&["logs", "cron", "--previous"], None).await;
    assert_eq!(logs, "starting\nfatal: no config\n");
    let tail = s
        .ok(&["logs", "cron", "--previous", "--tail=1"], None)
        .await;
    assert_eq!(tail, "fatal: no config\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_follow_streams_until_the_container_exits() {
    let mut once = ImageBehaviour::crashing(1, false, std::time::Duration::from_secs(3), &[]);
    once.exit.as_mut().expect("an exit").code = 0;
    once.logs = vec!["migrating 42".into(), "done".into()];
    let scenario = Scenario::builder()
        .default_image(ImageBehaviour::pulls_in(std::time::Duration::from_millis(
            100,
        )))
        .image("registry.local/task:once", once)
        .build();
    let Some(s) = Served::start(scenario).await else {
        return;
    };
    let pod = "apiVersion: v1
kind: Pod
metadata: {name: task}
spec:
  restartPolicy: Never
  containers:
    - name: task
      image: registry.local/task:once
";
    s.ok(&["apply", "--server-side", "-f", "-"], Some(pod))
        .await;
    let state = |s: &Served| {
        s.sim
            .get("v1", "Pod", "default", "task")
            .and_then(|p| p.pointer("/status/containerStatuses/0/state").cloned())
            .and_then(|st| st.as_object().and_then(|o| o.keys().next().cloned()))
    };
    // Wait (in real time) until the container runs; it exits three seconds after it starts.
    for _ in 0..100 {
        if state(&s).as_deref() == Some("running") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(state(&s).as_deref(), Some("running"));
    let logs = s.ok(&["logs", "-f", "task"], None).await;
    assert_eq!(logs, "migrating 42\ndone\n");
    // The stream was held open until the instance ended, as the kubelet holds it.
    assert_eq!(state(&s).as_deref(), Some("terminated"));
    // Following a container that has ended gives its log and returns.
    let again = s.ok(&["logs", "--follow", "task"], None).await;
    assert_eq!(again, "migrating 42\ndone\n");
}
