//! `restart`: a rollout restart exactly as `kubectl rollout restart` makes it (a strategic
//! merge patch of the pod template's `kubectl.kubernetes.io/restartedAt` annotation, field
//! manager `kubectl-rollout`), then the restarted workloads judged as a deploy judges them.
//! Every name is looked up before anything is patched, so a typo restarts nothing.

use super::context::Context;
use super::deploy::discover;
use super::judging::{Pending, judge};
use super::{RegistryAccess, RunError, outcomes, preflight};
use crate::cli::RestartArgs;
use crate::cluster::{Connection, apply};
use crate::config::Config;
use crate::manifest::Manifest;
use crate::pointer::Pointer;
use crate::rules::Target;
use crate::rules::kinds::{self, Kind};
use crate::vocab::events::{Observer, RunEvent};
use crate::vocab::outcome::RunOutcome;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::time::Instant;

/// The annotation kubectl sets on the pod template; a new value is a new revision.
pub const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";
/// kubectl's field manager for the restart, so the cluster records the same owner.
pub const FIELD_MANAGER: &str = "kubectl-rollout";

/// What `kubectl rollout restart` can restart: a kind whose row in `rules::kinds` says how
/// kubectl spells it.
#[derive(Debug, Clone, Copy)]
pub struct Workload(&'static Kind);

impl PartialEq for Workload {
    fn eq(&self, other: &Self) -> bool {
        (self.0.group, self.0.kind) == (other.0.group, other.0.kind)
    }
}

impl Eq for Workload {}

impl Workload {
    /// kubectl's spellings: the kind, its plural, its short name, optionally `.apps`.
    pub fn parse(word: &str) -> Option<Workload> {
        kinds::restartable(word).map(Workload)
    }

    pub fn kind(self) -> &'static str {
        self.0.kind
    }

    fn restart(self) -> kinds::Restart {
        self.0.restart.expect("only restartable kinds are parsed")
    }

    fn plural(self) -> &'static str {
        self.restart().plural
    }

    fn api_version(self) -> &'static str {
        self.restart().api_version
    }
}

/// A restart that cannot be made; each exits 2 with nothing restarted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RestartError {
    #[error(
        "cannot restart {0:?}: kubectl rollout restart restarts deployment, statefulset or daemonset"
    )]
    UnknownKind(String),
    #[error("restart one kind at a time: got {0} and {1}")]
    MixedKinds(&'static str, &'static str),
    #[error("name the {0} to restart, or select them with -l KEY=VALUE")]
    NothingNamed(&'static str),
    #[error("give names or -l, not both")]
    NamesAndSelector,
    #[error("{}", not_found(.kind, .namespace, .names))]
    NotFound {
        kind: &'static str,
        namespace: String,
        names: Vec<String>,
    },
    #[error("no {kind} in namespace {namespace:?} match -l {selector}")]
    NoMatch {
        kind: &'static str,
        namespace: String,
        selector: String,
    },
    #[error("can't restart paused deployment {0:?} (run kubectl rollout resume first)")]
    Paused(String),
    #[error("the server does not serve {0} in apps/v1")]
    NotServed(&'static str),
    #[error("failed to look up the {kind} to restart: {message}")]
    Lookup { kind: &'static str, message: String },
}

fn not_found(kind: &str, namespace: &str, names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    let (what, verb) = if names.len() == 1 {
        (kind.trim_end_matches('s'), "does")
    } else {
        (kind, "do")
    };
    format!(
        "{what} {} {verb} not exist in namespace {namespace:?}",
        quoted.join(", ")
    )
}

/// Which workloads to restart, as the command line names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub workload: Workload,
    /// Empty when a selector picks them (the config's selector).
    pub names: Vec<String>,
}

impl Request {
    /// `KIND NAME...`, `KIND/NAME...`, or `KIND -l k=v`; checked before any I/O.
    pub fn from_args(args: &RestartArgs) -> Result<Request, RestartError> {
        let words = std::iter::once(&args.kind).chain(&args.names);
        let mut workload = None;
        let mut names = Vec::new();
        for (i, word) in words.enumerate() {
            let (kind, name) = match word.split_once('/') {
                Some((k, n)) => (Some(k), Some(n)),
                None if i == 0 => (Some(word.as_str()), None),
                None => (None, Some(word.as_str())),
            };
            if let Some(kind) = kind {
                let parsed =
                    Workload::parse(kind).ok_or_else(|| RestartError::UnknownKind(kind.into()))?;
                match workload {
                    Some(w) if w != parsed => {
                        return Err(RestartError::MixedKinds(Workload::kind(w), parsed.kind()));
                    }
                    _ => workload = Some(parsed),
                }
            }
            if let Some(name) = name.filter(|n| !names.iter().any(|m| m == n)) {
                names.push(name.to_owned());
            }
        }
        let workload = workload.ok_or_else(|| RestartError::UnknownKind(args.kind.clone()))?;
        match (names.is_empty(), args.selector.is_some()) {
            (true, false) => Err(RestartError::NothingNamed(workload.plural())),
            (false, true) => Err(RestartError::NamesAndSelector),
            _ => Ok(Request { workload, names }),
        }
    }
}

/// The restart's annotation value: now, as kubectl writes it (RFC 3339, whole seconds;
/// kubectl uses the local zone, which is UTC on CI runners).
pub fn restarted_at(now: jiff::Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The patch `kubectl rollout restart` sends (as `application/strategic-merge-patch+json`).
pub fn restart_patch(at: &str) -> Value {
    json!({"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: at}}}}})
}

fn as_value(obj: DynamicObject, api_version: &str, kind: &str) -> Value {
    let mut v = serde_json::to_value(obj).unwrap_or_default();
    v["apiVersion"] = Value::String(api_version.to_owned());
    v["kind"] = Value::String(kind.to_owned());
    v
}

/// Every workload the request names, or why not one will be restarted.
async fn find(
    api: &Api<DynamicObject>,
    request: &Request,
    config: &Config,
    namespace: &str,
    server: &str,
) -> Result<Vec<Value>, RestartError> {
    let kind = request.workload.plural();
    let failed = |e: &kube::Error| RestartError::Lookup {
        kind,
        message: crate::cluster::describe_failure(server, e),
    };
    let timed_out = || RestartError::Lookup {
        kind,
        message: format!(
            "the API server at {server} did not answer within {}s",
            crate::cluster::REQUEST_TIMEOUT.as_secs()
        ),
    };
    let limit = crate::cluster::REQUEST_TIMEOUT;
    let found: Vec<DynamicObject> = if let Some(selector) = config.selector_string() {
        let params = ListParams::default().labels(&selector);
        let list = tokio::time::timeout(limit, api.list(&params))
            .await
            .map_err(|_| timed_out())?
            .map_err(|e| failed(&e))?;
        if list.items.is_empty() {
            return Err(RestartError::NoMatch {
                kind,
                namespace: namespace.to_owned(),
                selector,
            });
        }
        list.items
    } else {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for name in &request.names {
            match tokio::time::timeout(limit, api.get_opt(name))
                .await
                .map_err(|_| timed_out())?
            {
                Ok(Some(obj)) => found.push(obj),
                Ok(None) => missing.push(name.clone()),
                Err(e) => return Err(failed(&e)),
            }
        }
        if !missing.is_empty() {
            return Err(RestartError::NotFound {
                kind,
                namespace: namespace.to_owned(),
                names: missing,
            });
        }
        found
    };
    let objects: Vec<Value> = found
        .into_iter()
        .map(|o| as_value(o, request.workload.api_version(), request.workload.kind()))
        .collect();
    if let Some(paused) = objects
        .iter()
        .find(|o| o.at("/spec/paused") == Some(&Value::Bool(true)))
    {
        let name = paused["metadata"]["name"].as_str().unwrap_or_default();
        return Err(RestartError::Paused(name.to_owned()));
    }
    Ok(objects)
}

/// Restart what `request` names in the connection's namespace, then judge it.
pub async fn restart(
    conn: &Connection,
    config: &Config,
    request: &Request,
    access: &RegistryAccess,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let mut ctx = Context::new(conn, config, access, observer);
    let served = discover(conn, config.timeout).await?;
    let kind = request.workload.kind();
    let api_version = request.workload.api_version();
    let (ar, _) = served
        .resolve(api_version, kind)
        .ok_or(RestartError::NotServed(kind))?;
    let namespace = conn.default_namespace.as_str();
    let api: Api<DynamicObject> = Api::namespaced_with(conn.client.clone(), namespace, &ar);
    let objects = find(&api, request, config, namespace, &conn.server).await?;
    let manifests: Vec<Manifest> = objects.into_iter().map(Manifest::from_cluster).collect();
    ctx.event(RunEvent::Loaded {
        resources: manifests.len(),
    });
    if let Some(stopped) = preflight::stop_before_apply(&mut ctx, &manifests).await? {
        return Ok(stopped);
    }
    let at = restarted_at(jiff::Timestamp::now());
    let patch = Patch::Strategic(restart_patch(&at));
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    let mut targets = Vec::new();
    let mut refused = Vec::new();
    for (index, m) in manifests.iter().enumerate() {
        let sent = apply::retrying("restart", || api.patch(&m.name, &params, &patch)).await;
        match sent {
            Ok(obj) => {
                let obj = as_value(obj, api_version, kind);
                let Some(target) = Target::from_manifest(&obj) else {
                    continue;
                };
                ctx.event(RunEvent::Started {
                    id: target.id.clone(),
                    how: "restarted",
                });
                targets.push(Pending {
                    index,
                    target,
                    applied_at: Instant::now(),
                });
            }
            Err(e) => {
                let message = format!("the API server refused the restart: {}", e.message);
                refused.push(outcomes::refused(m, message, ctx.seconds()));
            }
        }
    }
    Ok(judge(&mut ctx, &served, &manifests, targets, refused, None).await)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn request(args: &[&str]) -> Result<Request, RestartError> {
        let cli = Cli::try_parse_from(
            ["deploy-action", "restart"]
                .into_iter()
                .chain(args.iter().copied()),
        )
        .unwrap();
        let Command::Restart(r) = cli.command else {
            unreachable!()
        };
        Request::from_args(&r)
    }

    #[test]
    fn kinds_and_names_are_read_as_kubectl_reads_them() {
        let workload = |kind: &str| Workload::parse(kind).unwrap();
        let web_api = Request {
            workload: workload("Deployment"),
            names: vec!["web".into(), "api".into()],
        };
        assert_eq!(request(&["deployment", "web", "api"]), Ok(web_api.clone()));
        assert_eq!(
            request(&["deploy", "web", "api", "web"]),
            Ok(web_api.clone())
        );
        assert_eq!(
            request(&["deployment/web", "deployments.apps/api"]),
            Ok(web_api)
        );
        assert_eq!(
            request(&["sts", "-l", "app=db"]).map(|r| (r.workload, r.names.len())),
            Ok((workload("StatefulSet"), 0))
        );
        assert_eq!(
            request(&["DaemonSets", "agent"]).map(|r| r.workload),
            Ok(workload("DaemonSet"))
        );
    }

    #[test]
    fn what_cannot_be_restarted_is_refused_before_any_io() {
        assert_eq!(
            request(&["cronjob", "nightly"]),
            Err(RestartError::UnknownKind("cronjob".into()))
        );
        assert_eq!(
            request(&["deployment"]),
            Err(RestartError::NothingNamed("deployments"))
        );
        assert_eq!(
            request(&["deployment/web", "statefulset/db"]),
            Err(RestartError::MixedKinds("Deployment", "StatefulSet"))
        );
        assert_eq!(
            request(&["deployment/web", "-l", "app=web"]),
            Err(RestartError::NamesAndSelector)
        );
        let missing = RestartError::NotFound {
            kind: "deployments",
            namespace: "shop".into(),
            names: vec!["wbe".into()],
        };
        assert_eq!(
            missing.to_string(),
            "deployment \"wbe\" does not exist in namespace \"shop\""
        );
    }

    #[test]
    fn the_patch_is_the_one_kubectl_sends() {
        // Captured from `kubectl -v=8 rollout restart deployment/web` (kubectl 1.33.1):
        // PATCH .../deployments/web?fieldManager=kubectl-rollout,
        // Content-Type: application/strategic-merge-patch+json.
        let kubectl = r#"{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-12-03T14:26:17Z"}}}}}"#;
        let at = restarted_at("2026-12-03T14:26:17.52Z".parse().unwrap());
        assert_eq!(serde_json::to_string(&restart_patch(&at)).unwrap(), kubectl);
    }
}
