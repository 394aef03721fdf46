//! `manageJob`: create or remove pods toward parallelism and completions, honouring
//! suspension, Indexed completion and the failure back-off.

use super::backoff::BackoffRecord;
use super::indexes::pod_index;
use super::job_pods::{job_pod, only_replace_failed, removal_order};
use super::job_status::JobStatus;
use super::job_sync::{JobSync, event};
use super::job_tracking::remove_finalizer;
use crate::controllers::workloads::objects::{NameGenerator, int_at, name, namespace};
use crate::controllers::workloads::pods::{create_generated, delete_pod, pod_key};
use crate::engine::World;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;

impl JobSync<'_> {
    /// `manageJob`; returns the active count after its creates and deletes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn manage(
        &self,
        world: &mut World<'_>,
        names: &mut NameGenerator,
        st: &mut JobStatus,
        active_pods: &[Arc<Value>],
        succeeded: i64,
        succeeded_indexes: &BTreeSet<i64>,
        terminating: i64,
        backoff: &BackoffRecord,
    ) -> i64 {
        let job = self.job;
        let active = active_pods.len() as i64;
        if self.suspended() {
            if st.ensure_condition(
                "Suspended",
                "True",
                "JobSuspended",
                "Job suspended",
                &self.now_str,
            ) {
                event(world, job, "Normal", "Suspended", "Job suspended".into());
            }
            return active
                - self.remove_pods(world, active_pods.iter().map(|p| (**p).clone()).collect());
        }
        if st.ensure_condition(
            "Suspended",
            "False",
            "JobResumed",
            "Job resumed",
            &self.now_str,
        ) {
            event(world, job, "Normal", "Resumed", "Job resumed".into());
            st.start_time = Some(self.now_str.clone());
        }
        let parallelism = int_at(job, "/spec/parallelism").unwrap_or(1);
        let want = match self.completions() {
            None if succeeded > 0 => active,
            None => parallelism,
            Some(c) => (c - succeeded).min(parallelism).max(0),
        };
        // Indexed Jobs first drop pods of duplicated or invalid indexes.
        let mut surplus: Vec<Value> = Vec::new();
        let mut keep: Vec<Value> = Vec::new();
        let mut seen = BTreeSet::new();
        for pod in active_pods {
            let dup = self.indexed() && (!self.valid_index(pod) || !seen.insert(pod_index(pod)));
            if dup {
                surplus.push((**pod).clone());
            } else {
                keep.push((**pod).clone());
            }
        }
        let rm_at_least = (active - want).max(0) as usize;
        if surplus.len() < rm_at_least {
            removal_order(&mut keep);
            surplus.extend(keep.into_iter().take(rm_at_least - surplus.len()));
        }
        if !surplus.is_empty() {
            return active - self.remove_pods(world, surplus);
        }
        let replacing = if only_replace_failed(job) {
            terminating
        } else {
            0
        };
        let diff = want - replacing - active;
        if diff <= 0 {
            return active;
        }
        let wait = backoff.remaining(self.now);
        if !wait.is_zero() {
            world.requeue_after(self.key.clone(), wait);
            return active;
        }
        let to_create: Vec<Option<i64>> = if self.indexed() {
            let busy: BTreeSet<i64> = active_pods.iter().filter_map(|p| pod_index(p)).collect();
            (0..self.completions().unwrap_or(0))
                .filter(|i| !succeeded_indexes.contains(i) && !busy.contains(i))
                .take(diff as usize)
                .map(Some)
                .collect()
        } else {
            vec![None; diff as usize]
        };
        let mut created = 0;
        for index in to_create {
            let (pod, prefix) = job_pod(job, index);
            match create_generated(world, names, &prefix, pod) {
                Ok(p) => {
                    created += 1;
                    event(
                        world,
                        job,
                        "Normal",
                        "SuccessfulCreate",
                        format!("Created pod: {}", name(&p)),
                    );
                }
                Err(e) => event(
                    world,
                    job,
                    "Warning",
                    "FailedCreate",
                    format!("Error creating: {e}"),
                ),
            }
        }
        active + created
    }

    /// `deleteJobPods`: drop the tracking finalizer (the pod is not counted) and delete.
    fn remove_pods(&self, world: &mut World<'_>, pods: Vec<Value>) -> i64 {
        let mut removed = 0;
        for pod in pods {
            remove_finalizer(world, &pod);
            if let Some(current) = world.get(&pod_key(namespace(&pod), name(&pod)))
                && delete_pod(world, &current).is_err()
            {
                continue;
            }
            removed += 1;
            event(
                world,
                self.job,
                "Normal",
                "SuccessfulDelete",
                format!("Deleted pod: {}", name(&pod)),
            );
        }
        removed
    }
}
