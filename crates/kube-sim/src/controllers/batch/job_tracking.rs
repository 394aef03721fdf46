//! `trackJobStatusAndRemoveFinalizers`: finished pods go to `uncountedTerminatedPods`,
//! lose the tracking finalizer, then move into the counters; the terminal condition waits
//! until every pod is counted and none is terminating.

use super::indexes::{self, pod_index};
use super::job_pods::{TRACKING_FINALIZER, has_tracking_finalizer, is_failed};
use super::job_status::{Finish, JobStatus};
use super::job_sync::{JobSync, event};
use crate::controllers::workloads::objects::{is_deleting, name, namespace, uid};
use crate::controllers::workloads::pods::{phase, pod_key};
use crate::engine::World;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;

impl JobSync<'_> {
    /// `trackJobStatusAndRemoveFinalizers`.
    pub(crate) fn track(
        &self,
        world: &mut World<'_>,
        mut st: JobStatus,
        prev_succeeded_indexes: &BTreeSet<i64>,
        mut finish: Option<Finish>,
    ) {
        let job = self.job;
        let with_finalizer: Vec<&Arc<Value>> = self
            .pods
            .iter()
            .filter(|p| has_tracking_finalizer(p))
            .collect();
        let mut remaining: BTreeSet<String> =
            with_finalizer.iter().map(|p| uid(p).to_owned()).collect();
        clean_uncounted(&mut st, &remaining);
        let mut to_remove = Vec::new();
        let mut new_indexes = BTreeSet::new();
        let terminal_failure = finish
            .as_ref()
            .is_some_and(|f| f.type_ != "SuccessCriteriaMet");
        for pod in &with_finalizer {
            let failed = is_failed(pod, job);
            if !(is_deleting(job) || finish.is_some() || phase(pod) == "Succeeded" || failed) {
                continue;
            }
            to_remove.push((**pod).clone());
            let pod_uid = uid(pod).to_owned();
            if phase(pod) == "Succeeded" && !st.uncounted_failed.contains(&pod_uid) {
                if self.indexed() {
                    new_indexes.extend(pod_index(pod).filter(|_| self.valid_index(pod)));
                } else if !st.uncounted_succeeded.contains(&pod_uid) {
                    st.uncounted_succeeded.push(pod_uid);
                }
            } else if (failed || terminal_failure)
                && !st.uncounted_failed.contains(&pod_uid)
                && (!self.indexed() || self.valid_index(pod))
            {
                st.uncounted_failed.push(pod_uid);
            }
        }
        if self.indexed() {
            let mut all = indexes::parse(st.completed_indexes.as_deref().unwrap_or_default());
            all.extend(prev_succeeded_indexes.iter().copied());
            all.extend(new_indexes);
            st.succeeded = all.len() as i64;
            st.completed_indexes = Some(indexes::format(&all));
        }
        if let Some(f) = finish.as_ref().filter(|f| f.type_ == "FailureTarget") {
            st.add_condition(f, &self.now_str);
            finish = Some(Finish::new("Failed", &f.reason, &f.message));
        }
        if let Some(f) = finish.as_ref().filter(|f| f.type_ == "SuccessCriteriaMet") {
            if st.condition("SuccessCriteriaMet").is_none() {
                st.add_condition(f, &self.now_str);
            }
            finish = Some(Finish::new("Complete", &f.reason, &f.message));
        }
        self.flush(world, &st);
        for pod in &to_remove {
            if remove_finalizer(world, pod) {
                remaining.remove(uid(pod));
            }
        }
        clean_uncounted(&mut st, &remaining);
        let mut finished = None;
        // Terminal only once every pod is counted and none is still terminating.
        if let Some(f) = finish
            && st.uncounted_succeeded.is_empty()
            && st.uncounted_failed.is_empty()
            && st.terminating == 0
        {
            st.ensure_condition(&f.type_, "True", &f.reason, &f.message, &self.now_str);
            if f.type_ == "Complete" {
                st.completion_time = Some(self.now_str.clone());
            }
            finished = Some(f);
        }
        self.flush(world, &st);
        match finished {
            Some(f) if f.type_ == "Complete" => {
                if self.completions().is_some_and(|c| st.succeeded > c) {
                    event(
                        world,
                        job,
                        "Warning",
                        "TooManySucceededPods",
                        "Too many succeeded pods running after completion count reached".into(),
                    );
                }
                event(world, job, "Normal", "Completed", "Job completed".into());
            }
            Some(f) => event(world, job, "Warning", &f.reason, f.message),
            None => {}
        }
    }

    fn flush(&self, world: &mut World<'_>, st: &JobStatus) {
        let Some(current) = world.get(self.key) else {
            return;
        };
        let mut next = (*current).clone();
        next["status"] = st.to_json();
        let _ = world.update_status(self.key, next);
    }
}

/// Move uncounted pods whose finalizer is gone into the counters
/// (`cleanUncountedPodsWithoutFinalizers`).
fn clean_uncounted(st: &mut JobStatus, with_finalizer: &BTreeSet<String>) {
    let before = (st.uncounted_succeeded.len(), st.uncounted_failed.len());
    st.uncounted_succeeded
        .retain(|u| with_finalizer.contains(u));
    st.uncounted_failed.retain(|u| with_finalizer.contains(u));
    st.succeeded += (before.0 - st.uncounted_succeeded.len()) as i64;
    st.failed += (before.1 - st.uncounted_failed.len()) as i64;
}

/// Remove the tracking finalizer from the current version of `pod`; true when it is gone.
pub(crate) fn remove_finalizer(world: &mut World<'_>, pod: &Value) -> bool {
    let key = pod_key(namespace(pod), name(pod));
    let Some(current) = world.get(&key) else {
        return true;
    };
    if !has_tracking_finalizer(&current) {
        return true;
    }
    let mut next = (*current).clone();
    if let Some(f) = next
        .pointer_mut("/metadata/finalizers")
        .and_then(Value::as_array_mut)
    {
        f.retain(|f| f != TRACKING_FINALIZER);
    }
    if next
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        next["metadata"]
            .as_object_mut()
            .map(|m| m.remove("finalizers"));
    }
    world.update(&key, next).is_ok()
}
