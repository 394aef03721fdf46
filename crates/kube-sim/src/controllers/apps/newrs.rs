//! Finding the Deployment's new ReplicaSet or creating it (`getNewReplicaSet`): named
//! by the template hash, labelled and selected by it, owned by the Deployment, with the
//! next revision; its size on creation follows the strategy (`NewRSNewReplicas`).

use super::annotations::set_new_rs_annotations;
use super::hash::pod_template_hash;
use super::meta::{is_controlled_by, new_controller_ref, sorted};
use super::replicasets::{
    HASH_LABEL, REVISION, Rs, equal_ignore_hash, find_new, max_revision, sum,
};
use super::selector::with_label;
use super::spec::{Dep, DeploymentSpec, Strategy};
use super::status::Condition;
use super::sync::{
    SyncError, SyncResult, namespace_terminating, scaling_event, set_deployment_revision,
    write_status,
};
use crate::engine::{World, WriteError};
use crate::events::EventSpec;
use crate::store::{ObjectKey, StoreError};
use serde_json::{Map, Value, json};

/// `deploymentutil.NewRSNewReplicas`: how big the new ReplicaSet may be now, given the
/// spec total of all ReplicaSets (`all_replicas`, the new one included).
pub(super) fn new_rs_new_replicas(
    spec: &DeploymentSpec,
    all_replicas: i32,
    new_replicas: i32,
) -> i32 {
    match spec.strategy {
        Strategy::RollingUpdate { .. } => {
            let max_total = spec.replicas + spec.raw_max_surge();
            if all_replicas >= max_total {
                return new_replicas;
            }
            new_replicas + (max_total - all_replicas).min(spec.replicas - new_replicas)
        }
        Strategy::Recreate => spec.replicas,
    }
}

/// `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (created when asked and
/// missing) and all old ones; `rs_list` is kept up to date with what was written.
pub(super) fn all_replica_sets(
    world: &mut World<'_>,
    d: &mut Dep,
    rs_list: &mut Vec<Rs>,
    create: bool,
) -> SyncResult<(Option<Rs>, Vec<Rs>)> {
    rs_list.sort_by(super::replicasets::by_creation);
    let new_index = find_new(&d.spec.template, rs_list);
    let old: Vec<Rs> = rs_list
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != new_index)
        .map(|(_, rs)| rs.clone())
        .collect();
    let new = new_replica_set(world, d, rs_list, new_index, &old, create)?;
    Ok((new, old))
}

/// `getNewReplicaSet`.
fn new_replica_set(
    world: &mut World<'_>,
    d: &mut Dep,
    rs_list: &mut Vec<Rs>,
    existing: Option<usize>,
    old: &[Rs],
    create: bool,
) -> SyncResult<Option<Rs>> {
    let new_revision = max_revision(old) + 1;
    let now = d.now.clone();
    if let Some(i) = existing {
        let mut obj = rs_list[i].obj.clone();
        let annotations_changed =
            set_new_rs_annotations(&d.obj, &d.spec, &mut obj, new_revision, true);
        let min_ready = super::meta::int_at(&obj, "/spec/minReadySeconds").unwrap_or(0) as i32;
        if annotations_changed || min_ready != d.spec.min_ready_seconds {
            set_min_ready_seconds(&mut obj, d.spec.min_ready_seconds);
            rs_list[i] = Rs::new(&*world.update(&rs_list[i].key, obj)?);
            return Ok(Some(rs_list[i].clone()));
        }
        let revision = rs_list[i]
            .annotation(REVISION)
            .unwrap_or_default()
            .to_owned();
        let mut needs_update = set_deployment_revision(d, &revision);
        if d.spec.has_progress_deadline() && d.status.condition("Progressing").is_none() {
            let msg = format!("Found new replica set \"{}\"", rs_list[i].name());
            d.status.set_condition(Condition::new(
                "Progressing",
                "True",
                "FoundNewReplicaSet",
                msg,
                &now,
            ));
            needs_update = true;
        }
        if needs_update {
            write_status(world, d)?;
        }
        return Ok(Some(rs_list[i].clone()));
    }
    if !create {
        return Ok(None);
    }
    let namespace = d.key.namespace.clone();
    if namespace_terminating(world, &namespace) {
        return Err(SyncError::NamespaceTerminating(namespace));
    }
    let hash = pod_template_hash(&d.spec.template, d.status.collision_count);
    let name = format!("{}-{hash}", d.name());
    let new_replicas = new_rs_new_replicas(&d.spec, sum(old, Rs::replicas), 0);
    let mut rs = new_rs_object(d, &name, &hash, new_replicas);
    set_new_rs_annotations(&d.obj, &d.spec, &mut rs, new_revision, false);
    let key = ObjectKey::new("apps", "replicasets", &namespace, &name);
    let (created, already_existed) = match world.create(&key, rs) {
        Ok(created) => (Rs::new(&created), false),
        Err(WriteError::Store(StoreError::AlreadyExists(_))) => {
            let found = world.get(&key).map(|o| Rs::new(&o));
            match found {
                Some(rs)
                    if is_controlled_by(&rs.obj, "Deployment", d.uid())
                        && equal_ignore_hash(rs.template(), &d.spec.template) =>
                {
                    (rs, true)
                }
                _ => {
                    d.status.collision_count = Some(d.status.collision_count.unwrap_or(0) + 1);
                    write_status(world, d)?;
                    return Err(SyncError::Collision(name));
                }
            }
        }
        Err(e) => {
            let msg = format!("Failed to create new replica set \"{name}\": {e}");
            if d.spec.has_progress_deadline() {
                d.status.set_condition(Condition::new(
                    "Progressing",
                    "False",
                    "ReplicaSetCreateError",
                    msg.clone(),
                    &now,
                ));
                let _ = write_status(world, d);
            }
            world.event(EventSpec {
                involved: &d.obj,
                field_path: None,
                type_: "Warning",
                reason: "ReplicaSetCreateError",
                message: msg,
                component: None,
                host: None,
            });
            return Err(e.into());
        }
    };
    if !already_existed && new_replicas > 0 {
        scaling_event(world, d, &name, 0, new_replicas);
    }
    let mut needs_update = set_deployment_revision(d, &new_revision.to_string());
    if !already_existed && d.spec.has_progress_deadline() {
        let msg = format!("Created new replica set \"{name}\"");
        d.status.set_condition(Condition::new(
            "Progressing",
            "True",
            "NewReplicaSetCreated",
            msg,
            &now,
        ));
        needs_update = true;
    }
    if needs_update {
        write_status(world, d)?;
    }
    if !already_existed {
        rs_list.push(created.clone());
    }
    Ok(Some(created))
}

fn set_min_ready_seconds(rs: &mut Value, seconds: i32) {
    if let Some(spec) = rs.get_mut("spec").and_then(Value::as_object_mut) {
        if seconds == 0 {
            spec.remove("minReadySeconds");
        } else {
            spec.insert("minReadySeconds".into(), json!(seconds));
        }
    }
}

/// The ReplicaSet a Deployment creates for its current template.
fn new_rs_object(d: &Dep, name: &str, hash: &str, replicas: i32) -> Value {
    let mut template = d.spec.template.clone();
    let mut labels = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    labels.insert(HASH_LABEL.into(), json!(hash));
    let labels = Value::Object(sorted(labels));
    template["metadata"]["labels"] = labels.clone();
    let mut spec = Map::new();
    spec.insert("replicas".into(), json!(replicas));
    if d.spec.min_ready_seconds > 0 {
        spec.insert("minReadySeconds".into(), json!(d.spec.min_ready_seconds));
    }
    spec.insert(
        "selector".into(),
        with_label(&d.spec.selector, HASH_LABEL, hash),
    );
    spec.insert("template".into(), template);
    json!({
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": d.key.namespace,
            "labels": labels,
            "annotations": {},
            "ownerReferences": [new_controller_ref(&d.obj)],
        },
        "spec": spec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(strategy: &Value, replicas: i32, all: i32, new: i32, want: i32) {
        let spec = DeploymentSpec::from_object(
            &json!({"spec": {"replicas": replicas, "strategy": strategy}}),
        );
        assert_eq!(new_rs_new_replicas(&spec, all, new), want);
    }

    #[test]
    fn new_replica_set_grows_within_the_surge() {
        let surge1 =
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}});
        case(&surge1, 3, 0, 0, 3);
        case(&surge1, 3, 3, 0, 1);
        case(&surge1, 3, 4, 1, 1);
        case(&surge1, 3, 3, 1, 2);
        case(
            &json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 0}}),
            10,
            10,
            0,
            5,
        );
        case(&json!({"type": "Recreate"}), 4, 4, 0, 4);
    }
}
