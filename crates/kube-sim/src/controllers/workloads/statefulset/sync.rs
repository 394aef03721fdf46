//! One pass of `updateStatefulSet`: create missing ordinals (in order, each waiting for
//! its predecessor to be Running and Ready unless the policy is Parallel), remove
//! condemned ordinals from the top, then replace out-of-date pods from the highest ordinal
//! down to the partition.

use super::identity::{claims_for, new_pod, ordinal, pod_revision, replicas, start_ordinal};
use crate::controllers::workloads::objects::{int_at, is_deleting, name, namespace, str_at};
use crate::controllers::workloads::pods::{delete_pod, is_available, is_ready, phase, pod_key};
use crate::engine::World;
use crate::events::EventSpec;
use crate::store::ObjectKey;
use jiff::Timestamp;
use serde_json::Value;
use std::sync::Arc;

/// The replica counts of `status`, before `completeRollingUpdate`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub replicas: i64,
    pub ready: i64,
    pub available: i64,
    pub current: i64,
    pub updated: i64,
}

/// The set and what this pass works from.
pub(crate) struct Pass<'a> {
    pub set: &'a Value,
    pub current: &'a Value,
    pub update: &'a Value,
    pub now: Timestamp,
}

fn running_and_ready(pod: &Value) -> bool {
    phase(pod) == "Running" && is_ready(pod)
}

fn healthy(pod: &Value) -> bool {
    running_and_ready(pod) && !is_deleting(pod)
}

impl Pass<'_> {
    fn min_ready(&self) -> i64 {
        int_at(self.set, "/spec/minReadySeconds").unwrap_or(0)
    }

    fn available(&self, pod: &Value) -> bool {
        running_and_ready(pod) && is_available(pod, self.min_ready(), self.now)
    }

    /// `computeReplicaStatus` over every pod of the set.
    pub(crate) fn counts<'p>(&self, pods: impl Iterator<Item = &'p Value>) -> Counts {
        let mut c = Counts::default();
        for pod in pods {
            c.replicas += 1;
            if running_and_ready(pod) {
                c.ready += 1;
                if self.available(pod) {
                    c.available += 1;
                }
            }
            if !is_deleting(pod) {
                c.current += i64::from(pod_revision(pod) == name(self.current));
                c.updated += i64::from(pod_revision(pod) == name(self.update));
            }
        }
        c
    }

    fn event(&self, world: &mut World<'_>, type_: &str, reason: &str, message: String) {
        world.event(EventSpec {
            involved: self.set,
            field_path: None,
            type_,
            reason,
            message,
            component: None,
            host: None,
        });
    }

    fn pod_event(&self, world: &mut World<'_>, verb: &str, pod: &str, error: Option<String>) {
        let set = name(self.set);
        match error {
            None => {
                let reason = format!("Successful{}{}", verb[..1].to_uppercase(), &verb[1..]);
                self.event(
                    world,
                    "Normal",
                    &reason,
                    format!("{verb} Pod {pod} in StatefulSet {set} successful"),
                );
            }
            Some(e) => {
                let reason = format!("Failed{}{}", verb[..1].to_uppercase(), &verb[1..]);
                self.event(
                    world,
                    "Warning",
                    &reason,
                    format!("{verb} Pod {pod} in StatefulSet {set} failed error: {e}"),
                );
            }
        }
    }

    fn delete(&self, world: &mut World<'_>, pod: &Value) {
        let error = delete_pod(world, pod).err().map(|e| e.to_string());
        self.pod_event(world, "delete", name(pod), error);
    }

    /// Create the claims of `ordinal` that do not exist yet; false when one cannot be used.
    fn ensure_claims(&self, world: &mut World<'_>, ordinal: i64, pod_name: &str) -> bool {
        let mut ok = true;
        for (_, claim) in claims_for(self.set, ordinal) {
            let key = ObjectKey::new(
                "",
                "persistentvolumeclaims",
                namespace(self.set),
                name(&claim),
            );
            if let Some(existing) = world.get(&key) {
                ok &= !is_deleting(&existing);
            } else {
                let claim_name = name(&claim).to_owned();
                let set = name(self.set).to_owned();
                match world.create(&key, claim) {
                    Ok(_) => self.event(
                        world,
                        "Normal",
                        "SuccessfulCreate",
                        format!(
                            "create Claim {claim_name} Pod {pod_name} in StatefulSet {set} success"
                        ),
                    ),
                    Err(e) => {
                        ok = false;
                        self.event(world, "Warning", "FailedCreate",
                            format!("create Claim {claim_name} for Pod {pod_name} in StatefulSet {set} failed error: failed to create PVC {claim_name}: {e}"));
                    }
                }
            }
        }
        ok
    }

    fn create(&self, world: &mut World<'_>, ordinal: i64) {
        let start = start_ordinal(self.set);
        let partition =
            int_at(self.set, "/spec/updateStrategy/rollingUpdate/partition").unwrap_or(0);
        let rolling = str_at(self.set, "/spec/updateStrategy/type") != "OnDelete";
        // Below the partition, new pods keep the current revision.
        let revision = if rolling && ordinal < start + partition {
            self.current
        } else {
            self.update
        };
        let pod = new_pod(self.set, revision, ordinal);
        let pod_name = name(&pod).to_owned();
        if !self.ensure_claims(world, ordinal, &pod_name) {
            return;
        }
        let error = world
            .create(&pod_key(namespace(self.set), &pod_name), pod)
            .err()
            .map(|e| e.to_string());
        self.pod_event(world, "create", &pod_name, error);
    }

    /// `processReplica`; true when a monotonic pass must stop here.
    fn process_replica(
        &self,
        world: &mut World<'_>,
        ordinal: i64,
        pod: Option<&Arc<Value>>,
    ) -> bool {
        let Some(pod) = pod else {
            self.create(world, ordinal);
            return true;
        };
        if matches!(phase(pod), "Failed" | "Succeeded") {
            if !is_deleting(pod) {
                self.delete(world, pod);
            }
            return true;
        }
        if phase(pod) == "Pending" {
            self.ensure_claims(world, ordinal, name(pod));
        }
        // Only a monotonic pass waits; a Parallel one ignores the answer.
        is_deleting(pod) || !self.available(pod)
    }

    /// Run the pass; returns the counts to write (adjusted for this pass's deletions).
    pub(crate) fn run(&self, world: &mut World<'_>, pods: &[Arc<Value>]) -> Counts {
        let start = start_ordinal(self.set);
        let count = replicas(self.set);
        let mut slots: Vec<Option<Arc<Value>>> = vec![None; usize::try_from(count).unwrap_or(0)];
        let mut condemned = Vec::new();
        for pod in pods {
            match ordinal(self.set, pod) {
                Some(o) if o >= start && o < start + count => {
                    slots[usize::try_from(o - start).unwrap_or(0)] = Some(pod.clone());
                }
                Some(_) => condemned.push(pod.clone()),
                None => {}
            }
        }
        condemned.sort_by_key(|p| std::cmp::Reverse(ordinal(self.set, p)));
        let mut counts = self.counts(slots.iter().flatten().chain(condemned.iter()).map(|p| &**p));
        if is_deleting(self.set) {
            return counts;
        }
        let monotonic = str_at(self.set, "/spec/podManagementPolicy") != "Parallel";
        for (i, slot) in slots.iter().enumerate() {
            let stop = self.process_replica(world, start + i as i64, slot.as_ref());
            if stop && monotonic {
                return counts;
            }
        }
        // Replicas are all healthy here in a monotonic pass, so the first unhealthy pod
        // (the one a scale-down may remove anyway) is the lowest unhealthy condemned one.
        let first_unhealthy = condemned
            .iter()
            .rev()
            .find(|p| !healthy(p))
            .map(|p| name(p).to_owned());
        for pod in &condemned {
            if is_deleting(pod) {
                if monotonic {
                    return counts;
                }
                continue;
            }
            let is_first_unhealthy = first_unhealthy.as_deref() == Some(name(pod));
            if monotonic && !self.available(pod) && !is_first_unhealthy {
                return counts;
            }
            self.delete(world, pod);
            if monotonic {
                return counts;
            }
        }
        if str_at(self.set, "/spec/updateStrategy/type") == "OnDelete" {
            return counts;
        }
        let partition = int_at(self.set, "/spec/updateStrategy/rollingUpdate/partition")
            .unwrap_or(0)
            .max(0);
        for target in (0..slots.len())
            .rev()
            .take_while(|t| *t as i64 >= partition)
        {
            let Some(pod) = &slots[target] else {
                return counts;
            };
            if pod_revision(pod) != name(self.update) && !is_deleting(pod) {
                self.delete(world, pod);
                counts.current -= 1;
                return counts;
            }
            if !healthy(pod) {
                return counts;
            }
        }
        counts
    }
}
