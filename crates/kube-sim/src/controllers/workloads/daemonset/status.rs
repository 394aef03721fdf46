//! A DaemonSet's status (`updateDaemonSetStatus`): per node, whether it should run the
//! pod, whether it does, and whether the oldest pod there is ready, available and updated.

use super::controller::NodePods;
use super::placement::{is_updated, should_run, template_generation};
use crate::controllers::workloads::objects::{int_at, name, put_nonzero};
use crate::controllers::workloads::pods::{available_in, is_ready};
use crate::engine::World;
use crate::store::ObjectKey;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;

/// `updateDaemonSetStatus`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_status(
    world: &mut World<'_>,
    key: &ObjectKey,
    ds: &Value,
    nodes: &[Arc<Value>],
    by_node: &NodePods,
    hash: &str,
    collision_count: i64,
) {
    let now = world.store.clock().now();
    let min_ready = int_at(ds, "/spec/minReadySeconds").unwrap_or(0);
    let generation = template_generation(ds);
    let (mut desired, mut current, mut misscheduled, mut ready, mut available, mut updated) =
        (0, 0, 0, 0, 0, 0);
    let mut wait: Option<Duration> = None;
    for node in nodes {
        let (run, _) = should_run(ds, node);
        let pods = by_node.get(name(node)).filter(|p| !p.is_empty());
        match (run, pods) {
            (true, None) => desired += 1,
            (true, Some(pods)) => {
                desired += 1;
                current += 1;
                let pod = &pods[0];
                if is_ready(pod) {
                    ready += 1;
                    match available_in(pod, min_ready, now) {
                        Some(d) if d.is_zero() => available += 1,
                        Some(d) => wait = Some(wait.map_or(d, |w| w.min(d))),
                        None => {}
                    }
                }
                if is_updated(pod, hash, generation) {
                    updated += 1;
                }
            }
            (false, Some(_)) => misscheduled += 1,
            (false, None) => {}
        }
    }
    let mut s = Map::new();
    s.insert("currentNumberScheduled".into(), json!(current));
    s.insert("numberMisscheduled".into(), json!(misscheduled));
    s.insert("desiredNumberScheduled".into(), json!(desired));
    s.insert("numberReady".into(), json!(ready));
    s.insert(
        "observedGeneration".into(),
        json!(int_at(ds, "/metadata/generation").unwrap_or(1)),
    );
    put_nonzero(&mut s, "updatedNumberScheduled", updated);
    put_nonzero(&mut s, "numberAvailable", available);
    put_nonzero(&mut s, "numberUnavailable", desired - available);
    if collision_count > 0 {
        s.insert("collisionCount".into(), json!(collision_count));
    }
    if let Some(conditions) = ds.pointer("/status/conditions") {
        s.insert("conditions".into(), conditions.clone());
    }
    let mut next = ds.clone();
    next["status"] = Value::Object(s);
    let _ = world.update_status(key, next);
    if let Some(wait) = wait {
        world.requeue_after(key.clone(), wait);
    }
}
