//! `run` (krane's `run`): a one-off Pod built from a template (a Pod, a PodTemplate, or
//! any manifest with a pod template), with the chosen container's command and env set and
//! restartPolicy Never; its logs streamed as they come while the judging loop gives its
//! verdict from its phase, as a deploy of that one Pod would.

use super::context::Context;
use super::deploy::discover;
use super::judging::{Pending, judge};
use super::{RegistryAccess, RunError, outcomes, preflight};
use crate::cli::RunArgs;
use crate::cluster::{Connection, apply, logs};
use crate::config::Config;
use crate::manifest::{Manifest, Problem};
use crate::pointer::Pointer;
use crate::rules::{Target, kinds};
use crate::vocab::events::{Observer, RunEvent};
use crate::vocab::outcome::{LogTail, Outcome, RunOutcome};
use crate::vocab::verdict::{Reason, Verdict};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{Map, Value, json};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The label every `run` pod carries, valued with its template's name.
pub const RUN_LABEL: &str = "deploy-action.io/run";
/// How long the log stream may take to end after the pod's verdict (the API server ends it
/// when the container exits, which the kubelet reports before the pod's phase).
const LOG_GRACE: Duration = Duration::from_secs(5);
/// Names tried when a generated name is taken.
const NAME_ATTEMPTS: usize = 3;

/// A command line `run` cannot use; exits 2 before any pod is started.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TaskError {
    #[error("invalid --env {0:?}: use NAME=VALUE")]
    Env(String),
}

/// What to change in the template's pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub container: Option<String>,
    /// Empty: keep the template's command and args.
    pub command: Vec<String>,
    pub env: Vec<(String, String)>,
}

impl Request {
    pub fn from_args(args: &RunArgs) -> Result<Request, TaskError> {
        let env = args
            .env
            .iter()
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
                _ => Err(TaskError::Env(kv.clone())),
            })
            .collect::<Result<_, _>>()?;
        Ok(Request {
            container: args.container.clone(),
            command: args.command.clone(),
            env,
        })
    }
}

/// The pod to start, built from the template before any I/O.
#[derive(Debug, Clone)]
pub struct Task {
    /// The Pod, still pointing at the template's file and lines.
    pub manifest: Manifest,
    /// The container whose logs are streamed.
    pub container: String,
}

/// A pod name of `base` and `suffix` within 63 characters, as `generateName` cuts it.
fn pod_name(base: &str, suffix: &str) -> String {
    let cut: String = base.chars().take(63 - 5 - suffix.len()).collect();
    format!("{}-run-{suffix}", cut.trim_end_matches(['-', '.']))
}

/// A random suffix in the alphabet Kubernetes uses for generated names (no vowels).
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = crate::random::bits();
    (0..5)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize];
            n /= ALPHABET.len() as u64;
            char::from(c)
        })
        .collect()
}

/// The one template in `manifests`, made into the pod to start (name from a random suffix).
pub fn prepare(manifests: &[Manifest], request: &Request) -> Result<Task, RunError> {
    let problem = |m: Option<&Manifest>, message: String, hint: &str| {
        let (file, line) = m.map_or((String::new(), None), |m| (m.file.clone(), Some(m.line)));
        RunError::Invalid(vec![Problem::new(file, line, message).with_hint(hint)])
    };
    let [template] = manifests else {
        return Err(problem(
            manifests.get(1),
            format!(
                "--template must hold one manifest, found {}",
                manifests.len()
            ),
            "put the Pod, PodTemplate or workload to run from in a file of its own",
        ));
    };
    pod_from(template, request, &random_suffix()).map_err(|p| RunError::Invalid(vec![p]))
}

/// The pod `run` starts from `template`, named with `suffix`: the template's pod spec with
/// restartPolicy Never and the request's command and env in the chosen container. Labels
/// are kept from a Pod or PodTemplate; a workload's are dropped, so that its controller
/// does not adopt the pod nor its Services send it traffic.
pub fn pod_from(template: &Manifest, request: &Request, suffix: &str) -> Result<Task, Problem> {
    let at = |pointer: &str| Some(template.line_near(pointer));
    let Some(base) = kinds::pod_template(template.group(), &template.kind, &template.object) else {
        return Err(Problem::new(
            &template.file,
            Some(template.line),
            format!("{} has no pod template", template.display_name()),
        )
        .with_hint(
            "give a Pod, a PodTemplate, or a workload with spec.template (Deployment, Job, ...)",
        ));
    };
    let meta = template
        .object
        .at(&format!("{base}/metadata"))
        .cloned()
        .unwrap_or_default();
    let mut spec = template
        .object
        .at(&format!("{base}/spec"))
        .cloned()
        .unwrap_or_default();
    let containers_at = format!("{base}/spec/containers");
    let names: Vec<String> = spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_owned))
        .collect();
    let container = match &request.container {
        Some(c) if names.contains(c) => c.clone(),
        Some(c) => {
            return Err(Problem::new(
                &template.file,
                at(&containers_at),
                format!(
                    "container {c:?} is not in the template (containers: {})",
                    names.join(", ")
                ),
            )
            .with_hint("--container names one of the template's containers"));
        }
        None => names.first().cloned().ok_or_else(|| {
            Problem::new(
                &template.file,
                at(&containers_at),
                "the template has no containers",
            )
            .with_hint("a pod template needs at least one container")
        })?,
    };
    spec["restartPolicy"] = json!("Never");
    if let Some(c) = spec["containers"]
        .as_array_mut()
        .and_then(|cs| cs.iter_mut().find(|c| c["name"] == container.as_str()))
    {
        override_container(c, request);
    }
    let name = pod_name(&template.name, suffix);
    let mut labels = match template.kind.as_str() {
        "Pod" | "PodTemplate" => meta["labels"].as_object().cloned().unwrap_or_default(),
        _ => Map::new(),
    };
    let label: String = template.name.chars().take(63).collect();
    labels.insert(RUN_LABEL.into(), json!(label.trim_end_matches(['-', '.'])));
    let mut metadata = json!({"name": name, "labels": labels});
    if let Some(a) = meta.get("annotations").filter(|a| a.is_object()) {
        metadata["annotations"] = a.clone();
    }
    let namespace = template
        .namespace
        .clone()
        .or_else(|| meta["namespace"].as_str().map(str::to_owned));
    if let Some(ns) = &namespace {
        metadata["namespace"] = json!(ns);
    }
    let mut manifest = template.clone();
    manifest.object =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec});
    manifest.api_version = "v1".into();
    manifest.kind = "Pod".into();
    manifest.name = name;
    manifest.namespace = namespace;
    Ok(Task {
        manifest,
        container,
    })
}

/// `--command` replaces the entrypoint and the args; `--env` sets (or replaces) variables.
fn override_container(c: &mut Value, request: &Request) {
    let Some(c) = c.as_object_mut() else {
        return;
    };
    if !request.command.is_empty() {
        c.insert("command".into(), json!(request.command));
        c.remove("args");
    }
    if request.env.is_empty() {
        return;
    }
    let env = c.entry("env").or_insert_with(|| json!([]));
    if !env.is_array() {
        *env = json!([]);
    }
    let Some(env) = env.as_array_mut() else {
        return;
    };
    for (k, v) in &request.env {
        let var = json!({"name": k, "value": v});
        match env.iter_mut().find(|e| e["name"] == k.as_str()) {
            Some(existing) => *existing = var,
            None => env.push(var),
        }
    }
}

/// Passes the judging loop's events on through a channel, so that the log stream and the
/// loop can report to one observer while both run.
struct Forward(mpsc::UnboundedSender<(Duration, RunEvent)>);

impl Observer for Forward {
    fn event(&mut self, at: Duration, event: RunEvent) {
        let _ = self.0.send((at, event));
    }
}

/// Start the pod, stream its logs, and judge it.
pub async fn execute(
    conn: &Connection,
    config: &Config,
    task: Task,
    access: &RegistryAccess,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let mut ctx = Context::new(conn, config, access, observer);
    let start = ctx.start;
    let served = discover(conn, config.timeout).await?;
    let Task {
        mut manifest,
        container,
    } = task;
    if manifest.namespace.is_none() {
        manifest.set_namespace(&conn.default_namespace);
    }
    let namespace = manifest.namespace.clone().unwrap_or_default();
    ctx.event(RunEvent::Loaded { resources: 1 });
    if let Some(stopped) =
        preflight::stop_before_apply(&mut ctx, std::slice::from_ref(&manifest)).await?
    {
        return Ok(stopped);
    }
    let api: Api<DynamicObject> = Api::namespaced_with(
        conn.client.clone(),
        &namespace,
        &kube::discovery::ApiResource::erase::<Pod>(&()),
    );
    let created = match create(&api, &mut manifest).await {
        Ok(pod) => pod,
        Err(message) => {
            let message = format!("the API server refused the pod: {message}");
            let outcome = outcomes::refused(&manifest, message, ctx.seconds());
            return Ok(RunOutcome::new(false, ctx.seconds(), vec![outcome]));
        }
    };
    let mut target = Target::from_manifest(&created)
        .unwrap_or_else(|| Target::new("v1", "Pod", Some(&namespace), &manifest.name));
    target.id.namespace = Some(namespace.clone());
    ctx.event(RunEvent::Started {
        id: target.id.clone(),
        how: "created",
    });
    let pod = manifest.name.clone();
    let manifests = std::slice::from_ref(&manifest);
    let targets = vec![Pending {
        index: 0,
        target,
        applied_at: Instant::now(),
    }];

    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut forward = Forward(tx.clone());
    // The verdicts come through the channel too, so they interleave with the log lines.
    let mut judging = Context {
        observer: &mut forward,
        ..ctx
    };
    let judged = judge(&mut judging, &served, manifests, targets, Vec::new(), None);
    let pods: Api<Pod> = Api::namespaced(conn.client.clone(), &namespace);
    let follow = logs::follow(&pods, &pod, &container, |line| {
        let event = RunEvent::Log {
            pod: pod.clone(),
            container: container.clone(),
            line,
        };
        let _ = tx.send((start.elapsed(), event));
    });
    tokio::pin!(judged);
    tokio::pin!(follow);
    let mut outcome: Option<RunOutcome> = None;
    let mut followed: Option<Result<(), String>> = None;
    let mut grace = None;
    let mut streamed = Streamed::default();
    loop {
        tokio::select! {
            Some((at, event)) = rx.recv() => streamed.pass(ctx.observer, at, event),
            o = &mut judged, if outcome.is_none() => {
                // A pod that ended has ended its log stream too; one still running (or never
                // started) is not waited for.
                let ended = o.outcomes.iter().any(|o| {
                    o.verdict == Verdict::Succeeded || o.reason == Some(Reason::PodFailed)
                });
                grace = Some(Instant::now() + if ended { LOG_GRACE } else { Duration::ZERO });
                outcome = Some(o);
            }
            f = &mut follow, if followed.is_none() => followed = Some(f),
            () = sleep_until(grace), if followed.is_none() => followed = Some(Ok(())),
        }
        if outcome.is_some() && followed.is_some() {
            break;
        }
    }
    while let Ok((at, event)) = rx.try_recv() {
        streamed.pass(ctx.observer, at, event);
    }
    let mut outcome = outcome.unwrap_or_else(|| RunOutcome::new(false, 0.0, Vec::new()));
    if let Some(Err(message)) = followed {
        ctx.event(RunEvent::Warning(format!(
            "could not stream the logs of pod {pod}: {message}"
        )));
    }
    let lines: Vec<String> = streamed.tail.into();
    for o in &mut outcome.outcomes {
        attach_logs(o, &pod, &container, lines.clone(), &namespace, conn).await;
    }
    Ok(outcome)
}

/// The last log lines streamed, kept while events pass to the observer.
#[derive(Default)]
struct Streamed {
    tail: std::collections::VecDeque<String>,
}

impl Streamed {
    fn pass(&mut self, observer: &mut dyn Observer, at: Duration, event: RunEvent) {
        if let RunEvent::Log { line, .. } = &event {
            if self.tail.len() == logs::TAIL_LINES as usize {
                self.tail.pop_front();
            }
            self.tail.push_back(line.clone());
        }
        observer.event(at, event);
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The log tail in the report: what was streamed, else what the API server still has.
async fn attach_logs(
    o: &mut Outcome,
    pod: &str,
    container: &str,
    streamed: Vec<String>,
    namespace: &str,
    conn: &Connection,
) {
    if o.logs.is_some() {
        return;
    }
    let ended = o.verdict == Verdict::Succeeded || o.reason == Some(Reason::PodFailed);
    if !streamed.is_empty() {
        let skip = streamed.len().saturating_sub(logs::TAIL_LINES as usize);
        o.logs = Some(LogTail {
            pod: pod.to_owned(),
            container: container.to_owned(),
            previous: false,
            lines: streamed.into_iter().skip(skip).collect(),
            unreadable: None,
        });
    } else if ended {
        o.logs = logs::tail(&conn.client, namespace, pod, container, false).await;
    }
}

/// Create the pod, under a fresh name if the generated one is taken.
async fn create(api: &Api<DynamicObject>, manifest: &mut Manifest) -> Result<Value, String> {
    let params = PostParams {
        field_manager: Some(apply::FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    };
    let base = manifest
        .name
        .rsplit_once("-run-")
        .map_or(manifest.name.clone(), |(b, _)| b.to_owned());
    let mut attempt = 1;
    loop {
        let pod: DynamicObject =
            serde_json::from_value(manifest.object.clone()).map_err(|e| e.to_string())?;
        match apply::retrying("create", || api.create(&params, &pod)).await {
            Ok(pod) => {
                let mut v = serde_json::to_value(pod).unwrap_or_default();
                v["apiVersion"] = json!("v1");
                v["kind"] = json!("Pod");
                return Ok(v);
            }
            Err(e) if e.code == Some(409) && attempt < NAME_ATTEMPTS => {
                attempt += 1;
                let name = pod_name(&base, &random_suffix());
                manifest.object["metadata"]["name"] = json!(name);
                manifest.name = name;
            }
            Err(e) => return Err(e.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    const TEMPLATE: &str = "apiVersion: v1
kind: PodTemplate
metadata:
  name: task-runner
  namespace: shop
template:
  metadata:
    labels: {app: task-runner}
  spec:
    containers:
      - name: task
        image: registry.local/shop/app:2
        args: [serve]
        env:
          - name: MODE
            valueFrom: {configMapKeyRef: {name: app, key: mode}}
      - name: sidecar
        image: registry.local/shop/proxy:1
";

    fn request(container: Option<&str>, command: &[&str], env: &[(&str, &str)]) -> Request {
        Request {
            container: container.map(str::to_owned),
            command: command.iter().map(|s| (*s).to_owned()).collect(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    #[test]
    fn a_pod_template_becomes_a_named_task_pod_with_the_overrides() {
        let template = &load_str("task.yaml", TEMPLATE).unwrap()[0];
        let req = request(
            None,
            &["rake", "db:migrate"],
            &[("MODE", "once"), ("LEVEL", "2")],
        );
        let p = pod_from(template, &req, "x7k2p").unwrap();
        assert_eq!(p.container, "task");
        assert_eq!(p.manifest.name, "task-runner-run-x7k2p");
        assert_eq!(p.manifest.namespace.as_deref(), Some("shop"));
        let pod = &p.manifest.object;
        assert_eq!(pod["kind"], "Pod");
        assert_eq!(pod["spec"]["restartPolicy"], "Never");
        assert_eq!(
            pod["metadata"]["labels"],
            json!({"app": "task-runner", RUN_LABEL: "task-runner"})
        );
        let task = &pod["spec"]["containers"][0];
        assert_eq!(task["command"], json!(["rake", "db:migrate"]));
        assert!(task.get("args").is_none(), "{task}");
        assert_eq!(
            task["env"],
            json!([{"name": "MODE", "value": "once"}, {"name": "LEVEL", "value": "2"}])
        );
        // The other container is left alone; failures still point into the template.
        assert_eq!(pod["spec"]["containers"][1].get("command"), None);
        assert_eq!(
            (p.manifest.file.as_str(), p.manifest.line),
            ("task.yaml", 1)
        );
        assert_eq!(p.manifest.images[0].line, 12);
    }

    #[test]
    fn a_workload_lends_its_pod_template_but_not_its_labels() {
        let yaml = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: a-very-long-deployment-name-that-goes-on-and-on-and-on-forever
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - {name: web, image: registry.local/shop/web:1}
        - {name: worker, image: registry.local/shop/web:1}
";
        let template = &load_str("web.yaml", yaml).unwrap()[0];
        let p = pod_from(template, &request(Some("worker"), &[], &[]), "b2c4d").unwrap();
        assert!(p.manifest.name.len() <= 63, "{}", p.manifest.name);
        assert!(p.manifest.name.ends_with("-run-b2c4d"));
        let labels = &p.manifest.object["metadata"]["labels"];
        assert!(labels.get("app").is_none(), "{labels}");
        assert_eq!(p.container, "worker");
        assert_eq!(p.manifest.namespace, None);
    }

    #[test]
    fn templates_without_the_container_or_any_pod_are_refused_at_their_line() {
        let template = &load_str("task.yaml", TEMPLATE).unwrap()[0];
        let err = pod_from(template, &request(Some("migrate"), &[], &[]), "x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "task.yaml:10: container \"migrate\" is not in the template (containers: task, sidecar)\n  hint: --container names one of the template's containers"
        );
        let cm = &load_str(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n",
        )
        .unwrap()[0];
        let err = pod_from(cm, &request(None, &[], &[]), "x").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cm.yaml:1: ConfigMap/app has no pod template"),
            "{err}"
        );
    }

    #[test]
    fn generated_suffixes_look_like_the_api_servers() {
        let s = random_suffix();
        assert_eq!(s.len(), 5);
        assert!(
            s.bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b)),
            "{s}"
        );
    }
}
