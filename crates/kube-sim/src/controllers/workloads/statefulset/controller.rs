//! The `statefulset-controller`: keeps ControllerRevisions, runs a sync pass and writes
//! the StatefulSet's status as `updateStatefulSetStatus` does (completing a rolling
//! update once every replica is updated and ready).

use super::identity::ordinal;
use super::sync::{Counts, Pass};
use crate::controllers::workloads::history::{
    HashStyle, owned_revisions, sync_update_revision, truncate_history,
};
use crate::controllers::workloads::objects::{int_at, name, owner_key, str_at};
use crate::controllers::workloads::pods::{available_in, owned_pods};
use crate::engine::{Controller, World};
use crate::store::{Change, ObjectKey};
use serde_json::{Map, Value, json};
use std::time::Duration;

/// Runs StatefulSets.
#[derive(Debug, Default)]
pub struct StatefulSetController;

fn owners(change: &Change) -> Vec<ObjectKey> {
    let mut keys: Vec<_> = std::iter::once(&change.object)
        .chain(change.previous.as_ref())
        .filter_map(|o| owner_key(o, "StatefulSet", "apps", "statefulsets"))
        .collect();
    keys.dedup();
    keys
}

impl Controller for StatefulSetController {
    fn name(&self) -> &'static str {
        "statefulset-controller"
    }

    fn keys_for(&self, change: &Change, _world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("apps", "statefulsets", None) {
            vec![key.clone()]
        } else if key.in_collection("", "pods", None)
            || key.in_collection("apps", "controllerrevisions", None)
        {
            owners(change)
        } else {
            Vec::new()
        }
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("apps", "statefulsets", None)
            .iter()
            .map(|s| {
                ObjectKey::new(
                    "apps",
                    "statefulsets",
                    crate::controllers::workloads::objects::namespace(s),
                    name(s),
                )
            })
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(set) = world.get(key) else {
            return;
        };
        let revisions = owned_revisions(world, &set);
        let Ok((update, collision_count)) =
            sync_update_revision(world, &set, &revisions, HashStyle::StatefulSet)
        else {
            world.requeue_after(key.clone(), Duration::from_secs(1));
            return;
        };
        let revisions = owned_revisions(world, &set);
        let current = revisions
            .iter()
            .find(|r| name(r) == str_at(&set, "/status/currentRevision"))
            .cloned()
            .unwrap_or_else(|| update.clone());
        let pods: Vec<_> = owned_pods(world, &set)
            .into_iter()
            .filter(|p| ordinal(&set, p).is_some())
            .collect();
        let now = world.store.clock().now();
        let pass = Pass {
            set: &set,
            current: &current,
            update: &update,
            now,
        };
        let counts = pass.run(world, &pods);

        let mut status = Status {
            counts,
            current: name(&current).to_owned(),
            update: name(&update).to_owned(),
        };
        status.complete_rolling_update(&set);
        let mut next = (*set).clone();
        next["status"] = status.to_json(&set, collision_count);
        let _ = world.update_status(key, next);

        let mut live: Vec<&str> = vec![name(&current), name(&update)];
        live.extend(pods.iter().map(|p| super::identity::pod_revision(p)));
        let limit = int_at(&set, "/spec/revisionHistoryLimit").unwrap_or(10);
        truncate_history(world, &revisions, &live, limit);

        // Pods that are ready but not yet available count once minReadySeconds pass.
        let min_ready = int_at(&set, "/spec/minReadySeconds").unwrap_or(0);
        if let Some(wait) = pods
            .iter()
            .filter_map(|p| available_in(p, min_ready, now))
            .filter(|d| !d.is_zero())
            .min()
        {
            world.requeue_after(key.clone(), wait);
        }
    }
}

struct Status {
    counts: Counts,
    current: String,
    update: String,
}

impl Status {
    /// `completeRollingUpdate`: once every replica is updated and ready the update
    /// revision becomes current. Never for OnDelete, whose currentRevision stays behind.
    fn complete_rolling_update(&mut self, set: &Value) {
        let replicas = self.counts.replicas;
        if str_at(set, "/spec/updateStrategy/type") != "OnDelete"
            && self.counts.updated == replicas
            && self.counts.ready == replicas
        {
            self.counts.current = self.counts.updated;
            self.current = self.update.clone();
        }
    }

    /// The status as the API returns it: `apps/v1` field order, zero counts omitted where
    /// the type says `omitempty`.
    fn to_json(&self, set: &Value, collision_count: i64) -> Value {
        let mut s = Map::new();
        let generation = int_at(set, "/metadata/generation").unwrap_or(1);
        s.insert("observedGeneration".into(), json!(generation));
        s.insert("replicas".into(), json!(self.counts.replicas));
        let mut put = |k: &str, v: i64| {
            if v != 0 {
                s.insert(k.into(), json!(v));
            }
        };
        put("readyReplicas", self.counts.ready);
        put("currentReplicas", self.counts.current);
        put("updatedReplicas", self.counts.updated);
        s.insert("currentRevision".into(), json!(self.current));
        s.insert("updateRevision".into(), json!(self.update));
        s.insert("collisionCount".into(), json!(collision_count));
        if let Some(conditions) = set.pointer("/status/conditions") {
            s.insert("conditions".into(), conditions.clone());
        }
        s.insert("availableReplicas".into(), json!(self.counts.available));
        Value::Object(s)
    }
}
