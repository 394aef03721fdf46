//! Dispatch of validation by apiVersion/kind, and the wrapping of field errors into the
//! Invalid error the API server returns. Kinds it does not know are accepted as they are.

use serde_json::{Map, Value};

use super::batch::{validate_cron_job, validate_job, validate_job_name};
use super::config::{validate_claim_spec, validate_config_map, validate_secret};
use super::daemonset::validate_daemon_set_spec;
use super::deployment::{validate_deployment_spec, validate_replica_set_spec};
use super::error::{Cause, Invalid};
use super::meta::{NameRule, validate_object_meta};
use super::path::Path;
use super::pod::validate_pod_spec;
use super::service::validate_service;
use super::statefulset::validate_stateful_set_spec;

/// The kinds validation knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Pod,
    Service,
    ConfigMap,
    Secret,
    Namespace,
    PersistentVolumeClaim,
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    Job,
    CronJob,
}

impl Kind {
    pub(crate) fn of(object: &Value) -> Option<Kind> {
        let api_version = object.get("apiVersion").and_then(Value::as_str)?;
        let kind = object.get("kind").and_then(Value::as_str)?;
        Some(match (api_version, kind) {
            ("v1", "Pod") => Kind::Pod,
            ("v1", "Service") => Kind::Service,
            ("v1", "ConfigMap") => Kind::ConfigMap,
            ("v1", "Secret") => Kind::Secret,
            ("v1", "Namespace") => Kind::Namespace,
            ("v1", "PersistentVolumeClaim") => Kind::PersistentVolumeClaim,
            ("apps/v1", "Deployment") => Kind::Deployment,
            ("apps/v1", "ReplicaSet") => Kind::ReplicaSet,
            ("apps/v1", "StatefulSet") => Kind::StatefulSet,
            ("apps/v1", "DaemonSet") => Kind::DaemonSet,
            ("batch/v1", "Job") => Kind::Job,
            ("batch/v1", "CronJob") => Kind::CronJob,
            _ => return None,
        })
    }

    fn name_rule(self) -> NameRule {
        match self {
            Kind::Namespace => NameRule::Label,
            Kind::Service => NameRule::Dns1035,
            _ => NameRule::Subdomain,
        }
    }
}

/// Validates an object about to be created, as kube-apiserver 1.33 would after defaulting
/// (call `default_object`, and for Jobs `default_job_selector`, first).
pub fn validate(object: &Value) -> Result<(), Invalid> {
    let Some(kind) = Kind::of(object) else {
        return Ok(());
    };
    into_result(object, validation_causes(object, kind))
}

/// The field errors of an object of a known kind, in the order Go reports them.
pub(crate) fn validation_causes(object: &Value, kind: Kind) -> Vec<Cause> {
    let mut errs = Vec::new();
    validate_object_meta(object, kind.name_rule(), &mut errs);
    let empty = Value::Object(Map::new());
    let spec = object.get("spec").unwrap_or(&empty);
    match kind {
        Kind::Pod => validate_pod_spec(spec, &Path::root("spec"), &mut errs),
        Kind::Service => validate_service(spec, &mut errs),
        Kind::ConfigMap => validate_config_map(object, &mut errs),
        Kind::Secret => validate_secret(object, &mut errs),
        Kind::Namespace => {}
        Kind::PersistentVolumeClaim => validate_claim_spec(spec, &Path::root("spec"), &mut errs),
        Kind::Deployment => validate_deployment_spec(spec, &mut errs),
        Kind::ReplicaSet => validate_replica_set_spec(spec, &mut errs),
        Kind::StatefulSet => validate_stateful_set_spec(spec, &mut errs),
        Kind::DaemonSet => validate_daemon_set_spec(spec, &mut errs),
        Kind::Job => {
            validate_job_name(object, &mut errs);
            validate_job(spec, &mut errs);
        }
        Kind::CronJob => validate_cron_job(object, &mut errs),
    }
    errs
}

/// `Ok` when there are no causes, else the Invalid error for this object.
pub(crate) fn into_result(object: &Value, causes: Vec<Cause>) -> Result<(), Invalid> {
    if causes.is_empty() {
        return Ok(());
    }
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let api_version = text(object.get("apiVersion"));
    let group = api_version
        .split_once('/')
        .map(|(group, _)| group.to_string())
        .unwrap_or_default();
    Err(Invalid {
        kind: text(object.get("kind")),
        group,
        name: text(object.get("metadata").and_then(|m| m.get("name"))),
        causes,
    })
}
