//! The RollingUpdate step of a DaemonSet without surge (`rollingUpdate` in `update.go`):
//! old pods that are unavailable go at once; available ones go while fewer than
//! maxUnavailable nodes are unavailable.

use super::controller::NodePods;
use super::placement::{is_updated, template_generation};
use crate::controllers::workloads::objects::{int_at, is_deleting, scaled};
use crate::controllers::workloads::pods::is_available;
use jiff::Timestamp;
use serde_json::Value;
use std::sync::Arc;

/// Old pods to delete in this step.
pub(crate) fn pods_to_replace(
    ds: &Value,
    nodes: &[Arc<Value>],
    by_node: &NodePods,
    hash: &str,
    now: Timestamp,
) -> Vec<Arc<Value>> {
    let desired = nodes
        .iter()
        .filter(|n| super::placement::should_run(ds, n).0)
        .count() as i64;
    let mut max_unavailable = scaled(
        ds.pointer("/spec/updateStrategy/rollingUpdate/maxUnavailable"),
        desired,
        1,
    );
    if max_unavailable == 0 && desired > 0 {
        max_unavailable = 1;
    }
    let min_ready = int_at(ds, "/spec/minReadySeconds").unwrap_or(0);
    let generation = template_generation(ds);
    let mut unavailable = 0;
    let mut replace_now = Vec::new();
    let mut candidates = Vec::new();
    for pods in by_node.values() {
        let live: Vec<_> = pods.iter().filter(|p| !is_deleting(p)).collect();
        let new: Vec<_> = live
            .iter()
            .filter(|p| is_updated(p, hash, generation))
            .collect();
        let old: Vec<_> = live
            .iter()
            .filter(|p| !is_updated(p, hash, generation))
            .collect();
        match (new.as_slice(), old.as_slice()) {
            // Several of a kind, none at all, or both: manage sorts it out; count as unavailable.
            ([_, _, ..], _) | (_, [_, _, ..]) | ([], []) | ([_], [_]) => unavailable += 1,
            ([new], []) if !is_available(new, min_ready, now) => unavailable += 1,
            ([_], []) => {}
            (_, [old]) => {
                if !is_available(old, min_ready, now) {
                    replace_now.push((**old).clone());
                } else if unavailable < max_unavailable {
                    candidates.push((**old).clone());
                }
            }
        }
    }
    let room = (max_unavailable - unavailable).clamp(0, candidates.len() as i64) as usize;
    replace_now.extend(candidates.into_iter().take(room));
    replace_now
}
