//! The `disruption-controller`: a PodDisruptionBudget's status (how many selected pods are
//! healthy, how many must stay, how many may be disrupted) and its DisruptionAllowed
//! condition (`pkg/controller/disruption`).

use super::objects::{
    controller_of, int_at, is_deleting, labels, name, namespace, scaled, set_condition, str_at,
};
use super::pods::is_ready;
use super::selectors::selector_matches;
use crate::engine::{Controller, World};
use crate::events::EventSpec;
use crate::store::{Change, ObjectKey};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Writes PodDisruptionBudget status.
#[derive(Debug, Default)]
pub struct DisruptionController;

fn pdb_key(pdb: &Value) -> ObjectKey {
    ObjectKey::new("policy", "poddisruptionbudgets", namespace(pdb), name(pdb))
}

fn event(world: &mut World<'_>, pdb: &Value, type_: &str, reason: &str, message: String) {
    world.event(EventSpec {
        involved: pdb,
        field_path: None,
        type_,
        reason,
        message,
        component: Some("controllermanager"),
        host: None,
    });
}

/// The replicas a pod's controller wants, following a ReplicaSet up to its Deployment.
/// `Err` names the pod when its controller is not a scalable workload.
fn controller_scale(world: &World<'_>, pod: &Value) -> Option<Result<(String, i64), String>> {
    let owner = controller_of(pod)?;
    let ns = namespace(pod);
    let found =
        |group: &str, plural: &str, n: &str| world.get(&ObjectKey::new(group, plural, ns, n));
    let replicas = |o: &Value| int_at(o, "/spec/replicas").unwrap_or(1);
    let not_found = || format!("found no controllers for pod {:?}", name(pod));
    let result = match str_at(owner, "/kind") {
        "ReplicaSet" => match found("apps", "replicasets", str_at(owner, "/name")) {
            Some(rs) => match controller_of(&rs).filter(|o| str_at(o, "/kind") == "Deployment") {
                Some(d) => found("apps", "deployments", str_at(d, "/name"))
                    .map(|d| (super::objects::uid(&d).to_owned(), replicas(&d)))
                    .ok_or_else(not_found),
                None => Ok((super::objects::uid(&rs).to_owned(), replicas(&rs))),
            },
            None => Err(not_found()),
        },
        "StatefulSet" => found("apps", "statefulsets", str_at(owner, "/name"))
            .map(|s| (super::objects::uid(&s).to_owned(), replicas(&s)))
            .ok_or_else(not_found),
        "ReplicationController" => found("", "replicationcontrollers", str_at(owner, "/name"))
            .map(|s| (super::objects::uid(&s).to_owned(), replicas(&s)))
            .ok_or_else(not_found),
        _ => Err(not_found()),
    };
    Some(result)
}

/// (expected pods, desired healthy), or the error the controller reports.
fn expected(world: &World<'_>, pdb: &Value, pods: &[Arc<Value>]) -> Result<(i64, i64), String> {
    let expected_scale = || -> Result<i64, String> {
        let mut controllers = BTreeMap::new();
        for pod in pods {
            // Pods without a controller are "unmanaged" and not counted.
            if let Some(found) = controller_scale(world, pod) {
                let (uid, replicas) = found?;
                controllers.insert(uid, replicas);
            }
        }
        Ok(controllers.values().sum())
    };
    if let Some(max) = pdb.pointer("/spec/maxUnavailable") {
        let count = expected_scale()?;
        return Ok((count, (count - scaled(Some(max), count, 0)).max(0)));
    }
    match pdb.pointer("/spec/minAvailable") {
        Some(Value::String(_)) => {
            let count = expected_scale()?;
            Ok((count, scaled(pdb.pointer("/spec/minAvailable"), count, 0)))
        }
        Some(min) => Ok((pods.len() as i64, min.as_i64().unwrap_or(0))),
        None => Ok((pods.len() as i64, 0)),
    }
}

impl Controller for DisruptionController {
    fn name(&self) -> &'static str {
        "disruption-controller"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("policy", "poddisruptionbudgets", None) {
            return vec![key.clone()];
        }
        let pod = key.in_collection("", "pods", None);
        let scalable = ["deployments", "replicasets", "statefulsets"]
            .iter()
            .any(|p| key.in_collection("apps", p, None));
        if !pod && !scalable {
            return Vec::new();
        }
        let objects: Vec<_> = std::iter::once(&change.object)
            .chain(change.previous.as_ref())
            .collect();
        world
            .list("policy", "poddisruptionbudgets", Some(&key.namespace))
            .iter()
            .filter(|pdb| {
                scalable
                    || objects
                        .iter()
                        .any(|o| selector_matches(pdb.pointer("/spec/selector"), &labels(o)))
            })
            .map(|pdb| pdb_key(pdb))
            .collect()
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("policy", "poddisruptionbudgets", None)
            .iter()
            .map(|p| pdb_key(p))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(pdb) = world.get(key) else {
            return;
        };
        let pods: Vec<_> = world
            .list("", "pods", Some(&key.namespace))
            .into_iter()
            .filter(|p| selector_matches(pdb.pointer("/spec/selector"), &labels(p)))
            .collect();
        if pods.is_empty() {
            event(
                world,
                &pdb,
                "Normal",
                "NoPods",
                "No matching pods found".into(),
            );
        }
        let generation = int_at(&pdb, "/metadata/generation").unwrap_or(1);
        let mut status = pdb
            .get("status")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut conditions = status
            .get("conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let now = world.timestamp();
        let condition = match expected(world, &pdb, &pods) {
            Ok((expected, desired)) => {
                let healthy = pods
                    .iter()
                    .filter(|p| !is_deleting(p) && is_ready(p))
                    .count() as i64;
                let allowed = if expected <= 0 {
                    0
                } else {
                    (healthy - desired).max(0)
                };
                let mut s = Map::new();
                s.insert("observedGeneration".into(), json!(generation));
                if let Some(d) = status.get("disruptedPods") {
                    s.insert("disruptedPods".into(), d.clone());
                }
                s.insert("disruptionsAllowed".into(), json!(allowed));
                s.insert("currentHealthy".into(), json!(healthy));
                s.insert("desiredHealthy".into(), json!(desired));
                s.insert("expectedPods".into(), json!(expected));
                status = s;
                let (state, reason) = if allowed > 0 {
                    ("True", "SufficientPods")
                } else {
                    ("False", "InsufficientPods")
                };
                json!({"type": "DisruptionAllowed", "status": state, "observedGeneration": generation, "reason": reason, "message": ""})
            }
            Err(error) => {
                event(
                    world,
                    &pdb,
                    "Warning",
                    "CalculateExpectedPodCountFailed",
                    format!("Failed to calculate the number of expected pods: {error}"),
                );
                status.insert("disruptionsAllowed".into(), json!(0));
                let observed = status
                    .get("observedGeneration")
                    .cloned()
                    .unwrap_or(json!(0));
                json!({"type": "DisruptionAllowed", "status": "False", "observedGeneration": observed, "reason": "SyncFailed", "message": error})
            }
        };
        set_condition(&mut conditions, condition, &now);
        // metav1.Condition field order, with lastTransitionTime after observedGeneration.
        let conditions: Vec<Value> = conditions
            .into_iter()
            .map(|c| {
                let mut ordered = Map::new();
                for k in [
                    "type",
                    "status",
                    "observedGeneration",
                    "lastTransitionTime",
                    "reason",
                    "message",
                ] {
                    if let Some(v) = c.get(k) {
                        ordered.insert(k.into(), v.clone());
                    }
                }
                Value::Object(ordered)
            })
            .collect();
        status.insert("conditions".into(), json!(conditions));
        let mut next = (*pdb).clone();
        next["status"] = Value::Object(status);
        let _ = world.update_status(key, next);
    }
}
