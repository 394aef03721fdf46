//! The `job-controller`: syncs each Job (see `job_sync`), keeps the failure back-off of
//! each Job in memory as the real controller does, and frees orphaned pods of their
//! tracking finalizer once their Job is gone or finished.

use super::backoff::BackoffRecord;
use super::job_pods::has_tracking_finalizer;
use super::job_status::is_finished;
use super::job_sync::JobSync;
use super::job_tracking::remove_finalizer;
use crate::controllers::workloads::objects::{
    NameGenerator, controller_of, is_controlled_by, name, namespace, owner_key, str_at,
};
use crate::controllers::workloads::pods::owned_pods;
use crate::engine::{Controller, World};
use crate::store::{Change, ChangeType, ObjectKey};
use std::collections::HashMap;

/// Runs Jobs.
#[derive(Debug)]
pub struct JobController {
    names: NameGenerator,
    backoff: HashMap<ObjectKey, BackoffRecord>,
}

impl Default for JobController {
    fn default() -> Self {
        JobController {
            names: NameGenerator::new("job-controller"),
            backoff: HashMap::new(),
        }
    }
}

fn job_key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new("batch", "jobs", namespace, name)
}

impl Controller for JobController {
    fn name(&self) -> &'static str {
        "job-controller"
    }

    fn keys_for(&self, change: &Change, world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("batch", "jobs", None) {
            let mut keys = vec![key.clone()];
            if change.kind == ChangeType::Deleted {
                // Its pods may still hold the tracking finalizer.
                keys.extend(
                    world
                        .list("", "pods", Some(&key.namespace))
                        .iter()
                        .filter(|p| {
                            has_tracking_finalizer(p) && is_controlled_by(p, &change.object)
                        })
                        .map(|p| ObjectKey::new("", "pods", namespace(p), name(p))),
                );
            }
            return keys;
        }
        if !key.in_collection("", "pods", None) {
            return Vec::new();
        }
        let mut keys: Vec<_> = std::iter::once(&change.object)
            .chain(change.previous.as_ref())
            .filter_map(|o| owner_key(o, "Job", "batch", "jobs"))
            .collect();
        keys.dedup();
        let orphaned = has_tracking_finalizer(&change.object)
            && keys.first().is_none_or(|k| {
                world
                    .get(k)
                    .is_none_or(|job| !is_controlled_by(&change.object, &job))
            });
        if orphaned {
            keys.push(key.clone());
        }
        keys
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("batch", "jobs", None)
            .iter()
            .map(|j| job_key(namespace(j), name(j)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        if key.plural == "pods" {
            sync_orphan_pod(key, world);
            return;
        }
        let Some(job) = world.get(key) else {
            self.backoff.remove(key);
            return;
        };
        if is_finished(&job) {
            self.backoff.remove(key);
            return;
        }
        let sync = JobSync {
            key,
            job: &job,
            pods: owned_pods(world, &job),
            now: world.store.clock().now(),
            now_str: world.timestamp(),
        };
        let record = self.backoff.get(key).copied().unwrap_or_default();
        let record = sync.run(world, &mut self.names, record);
        self.backoff.insert(key.clone(), record);
    }
}

/// `syncOrphanPod`: a pod whose Job is gone (or finished) no longer needs tracking.
fn sync_orphan_pod(key: &ObjectKey, world: &mut World<'_>) {
    let Some(pod) = world.get(key) else {
        return;
    };
    if !has_tracking_finalizer(&pod) {
        return;
    }
    let job = controller_of(&pod)
        .filter(|o| str_at(o, "/kind") == "Job")
        .and_then(|o| world.get(&job_key(&key.namespace, str_at(o, "/name"))))
        .filter(|job| is_controlled_by(&pod, job));
    if job.is_none_or(|j| is_finished(&j)) {
        remove_finalizer(world, &pod);
    }
}
