//! Strict decoding of built-in kinds: the API server turns a body into its Go type before
//! anything else happens to it, so a wrong JSON type or an undeclared field is found
//! there. kube-sim stores `serde_json::Value`s, so it walks each one into the kind's
//! k8s-openapi type to find the same things. Kinds it has no type for (custom resources)
//! are not checked here.

mod gotype;
mod location;
mod walker;

use k8s_openapi::api;
use location::Location;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Mutex;
use walker::{WalkError, Walker};

/// Whose rules a body is decoded by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Go's `encoding/json` into the typed object (create, update, and the result of a
    /// merge, JSON or strategic patch): the first type error, then every unknown field.
    Json,
    /// structured-merge-diff's typed conversion of a server-side apply patch: every type
    /// error, and any undeclared field is an error.
    Apply,
}

/// One thing decoding found, with its place in the object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// A JSON pointer to the value (`/spec/template/spec/containers/0/imagePullPolcy`).
    pub pointer: String,
    /// The API server's words for it, in the dialect decoded (the same as in `errors` or
    /// `unknown`).
    pub message: String,
    /// For an undeclared field, the fields its Go struct does declare (the place to look for
    /// the name that was meant); empty for a type error.
    pub declared: &'static [&'static str],
}

/// What decoding found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// `Json`: at most one, Go's message. `Apply`: structured-merge-diff's, one per path.
    pub errors: Vec<String>,
    /// `Json` only: undeclared fields, as the strict decoder spells them
    /// (`spec.template.spec.containers[0].imagee`).
    pub unknown: Vec<String>,
    /// Each finding with its place: under `Apply`, every error; under `Json`, the unknown
    /// fields only (Go's single type error names no index, so it is not placed).
    pub located: Vec<Finding>,
    unknown_at: Vec<Vec<location::Step>>,
}

impl Findings {
    /// Drop the undeclared fields from `obj`, as decoding into the Go type does.
    pub fn prune(&self, obj: &mut Value) {
        for steps in &self.unknown_at {
            location::remove(obj, steps);
        }
    }
}

/// State shared by one walk.
pub(crate) struct Shared {
    dialect: Dialect,
    /// The Go package of the kind's own types (`v1`, `v2`).
    package: String,
    found: Mutex<Findings>,
}

impl Shared {
    /// Record an `Apply` error at `at`.
    fn error(&self, at: &Location, message: String, declared: &'static [&'static str]) {
        if let Ok(mut f) = self.found.lock() {
            f.located.push(Finding {
                pointer: at.pointer(),
                message: message.clone(),
                declared,
            });
            f.errors.push(message);
        }
    }

    /// Record an undeclared field of a struct declaring `declared`; `true` if the rest of
    /// its object is not to be read.
    fn unknown(&self, at: Location, declared: &'static [&'static str]) -> bool {
        match self.dialect {
            Dialect::Json => {
                if let Ok(mut f) = self.found.lock() {
                    let message = format!("unknown field {:?}", at.strict());
                    f.located.push(Finding {
                        pointer: at.pointer(),
                        message: message.clone(),
                        declared,
                    });
                    f.unknown.push(message);
                    f.unknown_at.push(at.steps);
                }
                false
            }
            Dialect::Apply => {
                let message = format!("{}: field not declared in schema", at.smd());
                self.error(&at, message, declared);
                true
            }
        }
    }
}

fn walk<T: DeserializeOwned>(obj: &Value, dialect: Dialect, package: &str) -> Findings {
    // apiVersion and kind were checked against the URL already; k8s-openapi would insist
    // on its own spelling of them.
    let mut body = obj.clone();
    if let Some(map) = body.as_object_mut() {
        map.shift_remove("apiVersion");
        map.shift_remove("kind");
    }
    let shared = Shared {
        dialect,
        package: package.to_owned(),
        found: Mutex::new(Findings::default()),
    };
    let outcome = T::deserialize(Walker {
        value: &body,
        at: Location::default(),
        owner: "",
        shared: &shared,
    });
    let mut found = shared.found.into_inner().unwrap_or_default();
    if let Err(WalkError::Mismatch(message)) = outcome {
        // Go's decoder reports a type error alone.
        found = Findings {
            errors: vec![message],
            ..Findings::default()
        };
    }
    found
}

type Check = fn(&Value, Dialect, &str) -> Findings;

macro_rules! kinds {
    ($group:expr, $version:expr, $kind:expr; $($t:ty),* $(,)?) => {{
        use k8s_openapi::Resource;
        $(
            if <$t>::GROUP == $group && <$t>::VERSION == $version && <$t>::KIND == $kind {
                return Some(walk::<$t> as Check);
            }
        )*
        None
    }};
}

fn check_for(group: &str, version: &str, kind: &str) -> Option<Check> {
    kinds!(group, version, kind;
        api::core::v1::Binding,
        api::core::v1::ConfigMap,
        api::core::v1::Endpoints,
        api::core::v1::Event,
        api::core::v1::LimitRange,
        api::core::v1::Namespace,
        api::core::v1::Node,
        api::core::v1::PersistentVolumeClaim,
        api::core::v1::PersistentVolume,
        api::core::v1::Pod,
        api::core::v1::ReplicationController,
        api::core::v1::ResourceQuota,
        api::core::v1::Secret,
        api::core::v1::ServiceAccount,
        api::core::v1::Service,
        api::apps::v1::ControllerRevision,
        api::apps::v1::DaemonSet,
        api::apps::v1::Deployment,
        api::apps::v1::ReplicaSet,
        api::apps::v1::StatefulSet,
        api::batch::v1::CronJob,
        api::batch::v1::Job,
        api::autoscaling::v2::HorizontalPodAutoscaler,
        api::autoscaling::v1::HorizontalPodAutoscaler,
        api::networking::v1::Ingress,
        api::networking::v1::IngressClass,
        api::networking::v1::NetworkPolicy,
        api::policy::v1::PodDisruptionBudget,
        api::rbac::v1::ClusterRoleBinding,
        api::rbac::v1::ClusterRole,
        api::rbac::v1::RoleBinding,
        api::rbac::v1::Role,
        api::storage::v1::StorageClass,
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        api::events::v1::Event,
        api::discovery::v1::EndpointSlice,
        api::coordination::v1::Lease,
        api::scheduling::v1::PriorityClass,
    )
}

/// Decode `obj` as the built-in kind `group/version, Kind=kind`; `None` for a kind
/// kube-sim has no type for.
pub fn decode(
    group: &str,
    version: &str,
    kind: &str,
    obj: &Value,
    dialect: Dialect,
) -> Option<Findings> {
    check_for(group, version, kind).map(|check| check(obj, dialect, version))
}

#[cfg(test)]
mod tests;
