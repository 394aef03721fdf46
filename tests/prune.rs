//! `deploy --prune` against kube-sim with a paused clock: what leaves the manifests is
//! deleted and reported, and nothing outside the set, in a guarded namespace, in a dry run
//! or after a rejected manifest ever is. kubectl 1.33 agrees on the set over TCP.

use crate::support::config;
use deploy_action::cluster::Connection;
use deploy_action::config::Mode;
use deploy_action::manifest::load_str;
use deploy_action::pipeline::{self, RegistryAccess, RunError};
use deploy_action::prune::{ParentKind, PruneConfig, PruneRefusal};
use deploy_action::vocab::events::{Recorder, RunEvent};
use deploy_action::vocab::outcome::{Change, RunOutcome};
use deploy_action::vocab::verdict::{Reason, RunResult, Verdict};
use kube_sim::{Scenario, Sim};
use serde_json::{Value, json};
use std::time::Duration;

const MINUTES_5: Duration = Duration::from_secs(300);
/// The id kubectl 1.33 computes for `--applyset=web -n shop`.
const WEB_ID: &str = "applyset-ZhFTnyMOfABWycOd1915Uf0UKi6elg7a8lTmmXNRgSQ-v1";
const PART_OF: &str = "applyset.kubernetes.io/part-of";

fn prune(name: &str) -> PruneConfig {
    PruneConfig {
        parent_kind: ParentKind::Secret,
        parent_name: name.to_owned(),
        allow_namespaces: std::collections::BTreeSet::default(),
        adopt: false,
    }
}

/// Run `yaml` with `--prune` (as `prune` says) in namespace `ns`.
async fn deploy_in(
    sim: &Sim,
    ns: &str,
    yaml: &str,
    mode: Mode,
    prune: PruneConfig,
) -> Result<(RunOutcome, Recorder), RunError> {
    let manifests = load_str("k8s/app.yaml", yaml).map_err(RunError::Load)?;
    let conn = Connection {
        client: sim.client(),
        default_namespace: ns.into(),
        context: None,
        server: "http://kube-sim".into(),
    };
    let mut config = config(mode, MINUTES_5);
    config.prune = Some(prune);
    let access = RegistryAccess::new(None, &manifests)?;
    let mut recorder = Recorder::default();
    let outcome = pipeline::deploy(&conn, &config, manifests, &access, &mut recorder).await?;
    Ok((outcome, recorder))
}

/// Deploy only ConfigMap `a` in `shop`, with `prune`.
async fn deploy_a_only(sim: &Sim, prune: PruneConfig) -> Result<(RunOutcome, Recorder), RunError> {
    deploy_in(sim, "shop", &configmap("a", ""), Mode::Deploy, prune).await
}

/// Deploy ConfigMap `a` and `other` in `shop`, with the set `web`.
async fn deploy_a_and(sim: &Sim, other: &str) -> RunOutcome {
    let yaml = format!("{}---\n{other}", configmap("a", ""));
    deploy(sim, &yaml, Mode::Deploy).await
}

async fn deploy(sim: &Sim, yaml: &str, mode: Mode) -> RunOutcome {
    deploy_in(sim, "shop", yaml, mode, prune("web"))
        .await
        .unwrap()
        .0
}

fn namespace(sim: &Sim, name: &str) {
    sim.create(json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}))
        .unwrap();
}

fn configmap(name: &str, extra_metadata: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{extra_metadata}data: {{mode: fast}}\n"
    )
}

const DEPLOYMENT_B: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: b
spec:
  replicas: 1
  selector: {matchLabels: {app: b}}
  template:
    metadata: {labels: {app: b}}
    spec: {containers: [{name: b, image: registry.local/shop/b:1}]}
";

fn both() -> String {
    format!("{}---\n{DEPLOYMENT_B}", configmap("a", ""))
}

#[track_caller]
fn named<'a>(run: &'a RunOutcome, name: &str) -> &'a deploy_action::vocab::outcome::Outcome {
    run.outcomes
        .iter()
        .find(|o| o.resource.name == name)
        .unwrap_or_else(|| panic!("no outcome for {name} in {:#?}", run.outcomes))
}

fn nothing_pruned(run: &RunOutcome) -> bool {
    run.outcomes
        .iter()
        .all(|o| o.change != Some(Change::Pruned))
}

fn parent(sim: &Sim) -> Value {
    sim.get("v1", "Secret", "shop", "web")
        .expect("the ApplySet parent")
}

fn annotation<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj["metadata"]["annotations"][key]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn what_left_the_manifests_is_pruned_and_nothing_else() {
    let sim = Sim::start(Scenario::default());
    namespace(&sim, "shop");
    // Not ours: unlabelled, and another set's member.
    sim.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "manual", "namespace": "shop"}}))
        .unwrap();
    sim.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "theirs", "namespace": "shop",
                     "labels": {PART_OF: "applyset-other-v1"}}}))
        .unwrap();

    let first = deploy(&sim, &both(), Mode::Deploy).await;
    assert_eq!(first.result, RunResult::Success, "{:#?}", first.outcomes);
    let p = parent(&sim);
    assert_eq!(p["metadata"]["labels"]["applyset.kubernetes.io/id"], WEB_ID);
    assert_eq!(
        annotation(&p, "applyset.kubernetes.io/contains-group-kinds"),
        "ConfigMap,Deployment.apps"
    );
    assert_eq!(
        annotation(&p, "applyset.kubernetes.io/additional-namespaces"),
        ""
    );
    assert!(annotation(&p, "applyset.kubernetes.io/tooling").starts_with("deploy-action/v"));
    let b = sim.get("apps/v1", "Deployment", "shop", "b").unwrap();
    assert_eq!(b["metadata"]["labels"][PART_OF], WEB_ID);
    assert!(nothing_pruned(&first));

    let second = deploy(&sim, &configmap("a", ""), Mode::Deploy).await;
    assert_eq!(second.result, RunResult::Success, "{:#?}", second.outcomes);
    let pruned: Vec<_> = second
        .outcomes
        .iter()
        .filter(|o| o.change == Some(Change::Pruned))
        .collect();
    assert_eq!(pruned.len(), 1, "{:#?}", second.outcomes);
    let b = pruned[0];
    assert_eq!(b.resource.display(true), "Deployment/shop/b");
    assert_eq!(
        (b.verdict, b.reason, b.message.as_str()),
        (Verdict::Succeeded, None, "pruned")
    );
    assert_eq!(b.source, None);
    assert!(sim.get("apps/v1", "Deployment", "shop", "b").is_none());
    assert!(sim.get("v1", "ConfigMap", "shop", "a").is_some());
    assert!(sim.get("v1", "ConfigMap", "shop", "manual").is_some());
    assert!(sim.get("v1", "ConfigMap", "shop", "theirs").is_some());
    assert_eq!(
        annotation(&parent(&sim), "applyset.kubernetes.io/contains-group-kinds"),
        "ConfigMap"
    );
    // Its ReplicaSet and pods follow it (background propagation).
    tokio::time::sleep(Duration::from_secs(5)).await;
    let rs: kube::Api<k8s_openapi::api::apps::v1::ReplicaSet> =
        kube::Api::namespaced(sim.client(), "shop");
    assert!(
        rs.list(&kube::api::ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test(start_paused = true)]
async fn guarded_namespaces_are_refused_before_anything_is_applied() {
    let sim = Sim::start(Scenario::default());
    let refused = deploy_in(&sim, "default", &both(), Mode::Deploy, prune("web"))
        .await
        .unwrap_err();
    match &refused {
        RunError::Prune(PruneRefusal::GuardedNamespace(ns)) => assert_eq!(ns, &["default"]),
        other => panic!("{other:?}"),
    }
    let text = refused.to_string();
    assert!(text.contains("--prune-allow-namespace default"), "{text}");
    assert!(sim.get("v1", "ConfigMap", "default", "a").is_none());
    assert!(sim.get("v1", "Secret", "default", "web").is_none());
    // A member in kube-system is refused too, though the deploy's namespace is not guarded.
    namespace(&sim, "shop");
    let system = configmap("a", "  namespace: kube-system\n");
    let refused = deploy_in(&sim, "shop", &system, Mode::Deploy, prune("web")).await;
    assert!(
        matches!(refused, Err(RunError::Prune(PruneRefusal::GuardedNamespace(ns))) if ns == ["kube-system"])
    );
    assert!(sim.get("v1", "Secret", "shop", "web").is_none());

    let mut allowed = prune("web");
    allowed.allow_namespaces.insert("default".into());
    let (run, _) = deploy_in(&sim, "default", &both(), Mode::Deploy, allowed)
        .await
        .unwrap();
    assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
    assert!(sim.get("v1", "Secret", "default", "web").is_some());
}

#[tokio::test(start_paused = true)]
async fn a_dry_run_lists_what_would_be_pruned_and_deletes_nothing() {
    let sim = Sim::start(Scenario::default());
    namespace(&sim, "shop");
    deploy(&sim, &both(), Mode::Deploy).await;
    let before = parent(&sim);
    let run = deploy(&sim, &configmap("a", ""), Mode::DryRun).await;
    assert!(run.dry_run);
    let b = named(&run, "b");
    assert_eq!(
        (b.verdict, b.message.as_str(), &b.change),
        (Verdict::Succeeded, "would be pruned", &Some(Change::Pruned))
    );
    assert!(sim.get("apps/v1", "Deployment", "shop", "b").is_some());
    assert_eq!(
        parent(&sim)["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"],
        "a dry run changed the parent"
    );
}

#[tokio::test(start_paused = true)]
async fn a_rejected_manifest_means_nothing_is_pruned() {
    let sim = Sim::start(Scenario::default());
    namespace(&sim, "shop");
    deploy(&sim, &both(), Mode::Deploy).await;
    let refused = format!(
        "{}---\napiVersion: v1\nkind: Service\nmetadata: {{name: broken}}\nspec:\n  ports: [{{port: 99999}}]\n",
        configmap("a", "")
    );
    let run = deploy(&sim, &refused, Mode::Deploy).await;
    assert_eq!(run.result, RunResult::Failure);
    let broken = named(&run, "broken");
    assert_eq!(broken.reason, Some(Reason::ApplyRejected), "{broken:#?}");
    assert!(nothing_pruned(&run));
    assert!(sim.get("apps/v1", "Deployment", "shop", "b").is_some());
    assert_eq!(
        annotation(&parent(&sim), "applyset.kubernetes.io/contains-group-kinds"),
        "ConfigMap,Deployment.apps",
        "the refused deploy changed the set"
    );
    // Refused during the apply itself (its namespace is new, so no dry run could check it
    // first): the rest is applied and judged, and still nothing is pruned.
    let late = format!(
        "{}---
apiVersion: v1
kind: Namespace
metadata: {{name: fresh}}
---
apiVersion: v1
kind: Service
metadata: {{name: broken, namespace: fresh}}
spec:
  ports: [{{port: 99999}}]
",
        configmap("a", "")
    );
    let run = deploy(&sim, &late, Mode::Deploy).await;
    let broken = named(&run, "broken");
    assert_eq!(broken.reason, Some(Reason::ApplyRejected), "{broken:#?}");
    assert!(
        sim.get("v1", "Namespace", "", "fresh").is_some(),
        "the rest was applied"
    );
    assert!(nothing_pruned(&run));
    assert!(sim.get("apps/v1", "Deployment", "shop", "b").is_some());
}

#[tokio::test(start_paused = true)]
async fn a_member_held_by_a_finalizer_times_out_naming_it() {
    let sim = Sim::start(Scenario::default());
    namespace(&sim, "shop");
    let held = configmap("held", "  finalizers: [example.com/hold]\n");
    deploy_a_and(&sim, &held).await;
    let run = deploy(&sim, &configmap("a", ""), Mode::Deploy).await;
    assert_eq!(run.result, RunResult::TimedOut, "{:#?}", run.outcomes);
    let held = named(&run, "held");
    assert_eq!(
        (held.verdict, held.reason),
        (Verdict::TimedOut, Some(Reason::NotReady))
    );
    assert_eq!(held.change, Some(Change::Pruned));
    assert!(
        held.message
            .contains("waiting for finalizers example.com/hold"),
        "{}",
        held.message
    );
    // ConfigMaps get 30 s, as they do when applied.
    assert!((29.0..=31.0).contains(&held.seconds), "{}", held.seconds);
    let live = sim.get("v1", "ConfigMap", "shop", "held").unwrap();
    assert!(live["metadata"]["deletionTimestamp"].is_string());
}

#[tokio::test(start_paused = true)]
async fn members_in_other_namespaces_are_recorded_and_pruned_there() {
    let sim = Sim::start(Scenario::default());
    namespace(&sim, "shop");
    namespace(&sim, "zeta");
    let elsewhere = configmap("far", "  namespace: zeta\n");
    deploy_a_and(&sim, &elsewhere).await;
    assert_eq!(
        annotation(
            &parent(&sim),
            "applyset.kubernetes.io/additional-namespaces"
        ),
        "zeta"
    );
    let run = deploy(&sim, &configmap("a", ""), Mode::Deploy).await;
    let far = named(&run, "far");
    assert_eq!(far.resource.display(true), "ConfigMap/zeta/far");
    assert_eq!(
        (far.verdict, far.message.as_str()),
        (Verdict::Succeeded, "pruned")
    );
    assert!(sim.get("v1", "ConfigMap", "zeta", "far").is_none());
    assert_eq!(
        annotation(
            &parent(&sim),
            "applyset.kubernetes.io/additional-namespaces"
        ),
        ""
    );
}

#[tokio::test(start_paused = true)]
async fn a_failure_that_ends_the_run_stops_the_wait_for_pruned_members() {
    let sim = Sim::start(
        Scenario::builder()
            .image(
                "registry.local/shop/crash:1",
                kube_sim::scenario::ImageBehaviour::crashing(3, false, Duration::ZERO, &["boom"]),
            )
            .build(),
    );
    namespace(&sim, "shop");
    let held = configmap("held", "  finalizers: [example.com/hold]\n");
    deploy_a_and(&sim, &held).await;
    let crashing = crate::support::deployment("api", "registry.local/shop/crash:1", "");
    let run = deploy_a_and(&sim, &crashing).await;
    assert_eq!(run.result, RunResult::Failure, "{:#?}", run.outcomes);
    assert_eq!(named(&run, "api").reason, Some(Reason::CrashLoop));
    let held = named(&run, "held");
    assert_eq!(
        (held.verdict, held.reason),
        (Verdict::Unfinished, Some(Reason::StoppedAfterFailure)),
        "{held:#?}"
    );
    assert_eq!(held.change, Some(Change::Pruned));
}

#[tokio::test(start_paused = true)]
async fn namespaces_are_labelled_but_never_pruned() {
    let sim = Sim::start(Scenario::default());
    let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n";
    let first = deploy(&sim, &format!("{ns}{}", configmap("a", "")), Mode::Deploy).await;
    assert_eq!(first.result, RunResult::Success, "{:#?}", first.outcomes);
    let live = sim.get("v1", "Namespace", "", "shop").unwrap();
    assert_eq!(live["metadata"]["labels"][PART_OF], WEB_ID);
    let (run, events) = deploy_a_only(&sim, prune("web")).await.unwrap();
    assert!(nothing_pruned(&run), "{:#?}", run.outcomes);
    assert!(
        sim.get("v1", "Namespace", "", "shop").unwrap()["metadata"]["deletionTimestamp"].is_null()
    );
    assert!(events.events.iter().any(|(_, e)| matches!(e,
        RunEvent::Warning(w) if w.contains("Namespace/shop left the manifests but is never pruned"))));
}

#[tokio::test(start_paused = true)]
async fn a_parent_deploy_action_did_not_write_is_left_alone() {
    let sim = Sim::start(Scenario::default());
    namespace(&sim, "shop");
    sim.create(json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "web", "namespace": "shop"}, "data": {"token": "czNjcjN0"}}))
        .unwrap();
    let refused = deploy_in(&sim, "shop", &both(), Mode::Deploy, prune("web"))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("is not an ApplySet parent"),
        "{refused}"
    );
    assert!(sim.get("v1", "ConfigMap", "shop", "a").is_none());
}

/// kubectl 1.33 over TCP: it sees the members deploy-action labelled, refuses a set another
/// tool manages (as deploy-action does), and a set kubectl wrote is pruned by
/// deploy-action once adopted.
mod kubectl {
    use super::*;
    use std::path::PathBuf;

    fn kubectl() -> Option<PathBuf> {
        if let Ok(k) = std::env::var("KUBECTL") {
            return Some(PathBuf::from(k));
        }
        let pinned = PathBuf::from("/usr/lib/google-cloud-sdk/bin/kubectl.1.33");
        pinned.exists().then_some(pinned)
    }

    struct Kubectl {
        bin: PathBuf,
        kubeconfig: PathBuf,
        dir: tempfile::TempDir,
    }

    impl Kubectl {
        /// Runs kubectl with `KUBECTL_APPLYSET=true`; returns (success, stdout + stderr).
        fn run(&self, args: &[&str], manifests: Option<&str>) -> (bool, String) {
            let mut cmd = std::process::Command::new(&self.bin);
            cmd.env("KUBECTL_APPLYSET", "true")
                .arg("--kubeconfig")
                .arg(&self.kubeconfig)
                .args(args);
            if let Some(yaml) = manifests {
                let file = self.dir.path().join("manifests.yaml");
                std::fs::write(&file, yaml).unwrap();
                cmd.arg("-f").arg(file);
            }
            let out = cmd.output().expect("kubectl runs");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            (out.status.success(), text)
        }
    }

    async fn served() -> Option<(Sim, Kubectl)> {
        let Some(bin) = kubectl() else {
            #[expect(clippy::print_stderr, reason = "a skipped agreement test must say so")]
            {
                eprintln!("SKIPPED: no kubectl 1.33 on this machine; ApplySet agreement unchecked");
            }
            return None;
        };
        let mut sim = Sim::start(Scenario::default());
        let addr = sim.serve("127.0.0.1:0").await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        kube_sim::kubeconfig::write_kubeconfig(&kubeconfig, addr, "shop").unwrap();
        namespace(&sim, "shop");
        Some((
            sim,
            Kubectl {
                bin,
                kubeconfig,
                dir,
            },
        ))
    }

    /// kubectl's own prune of the set `web`, as a server dry run.
    const PRUNE_WEB_SERVER_DRY_RUN: [&str; 7] = [
        "apply",
        "-n",
        "shop",
        "--server-side",
        "--prune",
        "--applyset=web",
        "--dry-run=server",
    ];

    const SA_B: &str = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: b}\n";

    fn members(k: &Kubectl, id: &str) -> Vec<String> {
        let selector = format!("{PART_OF}={id}");
        let (ok, out) = k.run(
            &[
                "get",
                "configmaps,serviceaccounts",
                "-n",
                "shop",
                "-l",
                &selector,
                "-o",
                "name",
            ],
            None,
        );
        assert!(ok, "{out}");
        let mut names: Vec<String> = out.lines().map(str::to_owned).collect();
        names.sort();
        names
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kubectl_sees_the_set_deploy_action_keeps() {
        let Some((sim, k)) = served().await else {
            return;
        };
        let ab = format!("{}---\n{SA_B}", configmap("a", ""));
        let (run, _) = deploy_in(&sim, "shop", &ab, Mode::Deploy, prune("web"))
            .await
            .unwrap();
        assert_eq!(run.result, RunResult::Success, "{:#?}", run.outcomes);
        assert_eq!(members(&k, WEB_ID), ["configmap/a", "serviceaccount/b"]);

        // kubectl refuses a set of another tool, as the KEP asks; nothing changes.
        let a_only = configmap("a", "");
        let (ok, out) = k.run(&PRUNE_WEB_SERVER_DRY_RUN, Some(&a_only));
        assert!(!ok);
        assert!(
            out.contains(r#"is managed by tooling "deploy-action" instead of "kubectl""#),
            "{out}"
        );
        // Handed to kubectl, its server dry run would prune exactly what deploy-action would.
        let (ok, out) = k.run(
            &[
                "annotate",
                "-n",
                "shop",
                "secret",
                "web",
                "--overwrite",
                "applyset.kubernetes.io/tooling=kubectl/v1.33.1",
            ],
            None,
        );
        assert!(ok, "{out}");
        let (ok, out) = k.run(&PRUNE_WEB_SERVER_DRY_RUN, Some(&a_only));
        assert!(ok, "{out}");
        assert!(
            out.contains("serviceaccount/b pruned (server dry run)"),
            "{out}"
        );
        assert!(!out.contains("configmap/a pruned"), "{out}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_set_kubectl_wrote_is_pruned_by_deploy_action_once_adopted() {
        let Some((sim, k)) = served().await else {
            return;
        };
        let ab = format!("{}---\n{SA_B}", configmap("a", ""));
        let (ok, out) = k.run(
            &[
                "apply",
                "-n",
                "shop",
                "--server-side",
                "--prune",
                "--applyset=legacy",
            ],
            Some(&ab),
        );
        assert!(ok, "{out}");
        let legacy = sim.get("v1", "Secret", "shop", "legacy").unwrap();
        let id = legacy["metadata"]["labels"]["applyset.kubernetes.io/id"]
            .as_str()
            .unwrap()
            .to_owned();
        let ours = deploy_action::prune::Parent {
            kind: ParentKind::Secret,
            name: "legacy".into(),
            namespace: "shop".into(),
        };
        assert_eq!(id, ours.id(), "deploy-action computes kubectl's id");

        let refused = deploy_a_only(&sim, prune("legacy")).await.unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("managed by tooling \"kubectl\""),
            "{refused}"
        );
        assert!(sim.get("v1", "ServiceAccount", "shop", "b").is_some());

        let mut adopt = prune("legacy");
        adopt.adopt = true;
        let (run, _) = deploy_a_only(&sim, adopt).await.unwrap();
        let b = named(&run, "b");
        assert_eq!(
            (b.verdict, b.message.as_str()),
            (Verdict::Succeeded, "pruned")
        );
        assert!(sim.get("v1", "ServiceAccount", "shop", "b").is_none());
        assert_eq!(members(&k, &id), ["configmap/a"]);
        let legacy = sim.get("v1", "Secret", "shop", "legacy").unwrap();
        assert!(
            annotation(&legacy, "applyset.kubernetes.io/tooling").starts_with("deploy-action/")
        );
    }
}
