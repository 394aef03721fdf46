//! One `syncJob`: count finished pods, decide whether the Job succeeded or failed
//! (backoffLimit, restarts under OnFailure, activeDeadlineSeconds), create or remove pods
//! toward parallelism and completions with the failure back-off, then account finished
//! pods through `uncountedTerminatedPods` and the tracking finalizer.

use super::backoff::BackoffRecord;
use super::indexes::{self, pod_index};
use super::job_pods::{TRACKING_FINALIZER, has_tracking_finalizer, is_failed, is_terminating, job_pod, only_replace_failed, removal_order};
use super::job_status::{Finish, JobStatus};
use crate::controllers::workloads::objects::{NameGenerator, int_at, is_deleting, name, namespace, parse_time, str_at, uid};
use crate::controllers::workloads::pods::{create_generated, delete_pod, is_active, is_ready, phase, pod_key};
use crate::engine::World;
use crate::events::EventSpec;
use crate::store::ObjectKey;
use jiff::Timestamp;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

const COMPLETIONS_REACHED: (&str, &str) = ("CompletionsReached", "Reached expected number of succeeded pods");

/// What one sync works with.
pub(crate) struct JobSync<'a> {
    pub key: &'a ObjectKey,
    pub job: &'a Value,
    pub pods: Vec<Arc<Value>>,
    pub now: Timestamp,
    pub now_str: String,
}

fn event(world: &mut World<'_>, job: &Value, type_: &str, reason: &str, message: String) {
    world.event(EventSpec { involved: job, field_path: None, type_, reason, message, component: None, host: None });
}

impl JobSync<'_> {
    fn indexed(&self) -> bool {
        str_at(self.job, "/spec/completionMode") == "Indexed"
    }

    fn completions(&self) -> Option<i64> {
        int_at(self.job, "/spec/completions")
    }

    fn suspended(&self) -> bool {
        self.job.pointer("/spec/suspend").and_then(Value::as_bool).unwrap_or(false)
    }

    fn valid_index(&self, pod: &Value) -> bool {
        pod_index(pod).is_some_and(|i| self.completions().is_none_or(|c| i < c))
    }

    /// `pastBackoffLimitOnFailure`: container restarts of running pods under OnFailure.
    fn past_backoff_on_failure(&self, limit: i64) -> bool {
        if str_at(self.job, "/spec/template/spec/restartPolicy") != "OnFailure" {
            return false;
        }
        let restarts: i64 = self
            .pods
            .iter()
            .filter(|p| matches!(phase(p), "Running" | "Pending"))
            .flat_map(|p| ["initContainerStatuses", "containerStatuses"].map(|k| p.pointer(&format!("/status/{k}")).cloned()))
            .flatten()
            .flat_map(|s| s.as_array().cloned().unwrap_or_default())
            .map(|s| int_at(&s, "/restartCount").unwrap_or(0))
            .sum();
        if limit == 0 { restarts > 0 } else { restarts >= limit }
    }

    /// Seconds past `status.startTime`, if the Job has started.
    fn running_for(&self, status: &JobStatus) -> Option<i64> {
        let start = parse_time(status.start_time.as_deref()?)?;
        Some(self.now.as_second() - start.as_second())
    }

    /// Run the sync; returns the back-off record to keep.
    pub(crate) fn run(&self, world: &mut World<'_>, names: &mut NameGenerator, backoff: BackoffRecord) -> BackoffRecord {
        let job = self.job;
        let original = JobStatus::read(job);
        let mut st = original.clone();
        let active_pods: Vec<_> = self.pods.iter().filter(|p| is_active(p)).cloned().collect();
        let mut ready = active_pods.iter().filter(|p| is_ready(p)).count() as i64;
        let mut terminating = self.pods.iter().filter(|p| is_terminating(p)).count() as i64;
        let mut active = active_pods.len() as i64;
        let counted = |uids: &[String], p: &Value| uids.iter().any(|u| u == uid(p));
        let tracked = |p: &&Arc<Value>| has_tracking_finalizer(p) && (!self.indexed() || self.valid_index(p));
        let new_succeeded: Vec<&Value> = self.pods.iter().filter(tracked)
            .filter(|p| phase(p) == "Succeeded" && !counted(&st.uncounted_succeeded, p)).map(|p| &**p).collect();
        let new_failed: Vec<&Value> = self.pods.iter().filter(tracked)
            .filter(|p| is_failed(p, job) && !counted(&st.uncounted_failed, p)).map(|p| &**p).collect();
        let mut succeeded = st.succeeded + (new_succeeded.len() + st.uncounted_succeeded.len()) as i64;
        let failed = st.failed + (new_failed.len() + st.uncounted_failed.len()) as i64;
        if st.start_time.is_none() && !self.suspended() {
            st.start_time = Some(self.now_str.clone());
        }
        let new_backoff = backoff.with_finished(&new_succeeded, &new_failed, self.now);

        let backoff_limit = int_at(job, "/spec/backoffLimit").unwrap_or(6);
        let mut finish: Option<Finish> = None;
        if let Some(c) = st.condition("SuccessCriteriaMet") {
            finish = Some(Finish::new("SuccessCriteriaMet", str_at(c, "/reason"), str_at(c, "/message")));
        } else if let Some(c) = st.condition("FailureTarget") {
            finish = Some(Finish::new("Failed", str_at(c, "/reason"), str_at(c, "/message")));
        } else if failed > backoff_limit || self.past_backoff_on_failure(backoff_limit) {
            finish = Some(Finish::new("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit"));
        } else if let (Some(deadline), Some(ran), false) = (int_at(job, "/spec/activeDeadlineSeconds"), self.running_for(&st), self.suspended()) {
            if ran >= deadline {
                finish = Some(Finish::new("FailureTarget", "DeadlineExceeded", "Job was active longer than specified deadline"));
            } else {
                world.requeue_after(self.key.clone(), Duration::from_secs((deadline - ran) as u64));
            }
        }

        let mut succeeded_indexes = BTreeSet::new();
        if self.indexed() {
            succeeded_indexes = indexes::parse(st.completed_indexes.as_deref().unwrap_or_default());
            succeeded_indexes.extend(self.pods.iter().filter(|p| has_tracking_finalizer(p) && phase(p) == "Succeeded" && self.valid_index(p)).filter_map(|p| pod_index(p)));
            succeeded = succeeded_indexes.len() as i64;
        }

        if finish.is_some() {
            // A failing Job stops its running pods; it finishes once they are gone.
            for pod in &active_pods {
                if delete_pod(world, pod).is_ok() {
                    event(world, job, "Normal", "SuccessfulDelete", format!("Deleted pod: {}", name(pod)));
                    ready -= i64::from(is_ready(pod));
                    active -= 1;
                    terminating += 1;
                }
            }
            if active != 0 {
                finish = None;
            }
        } else {
            if !is_deleting(job) {
                active = self.manage(world, names, &mut st, &active_pods, succeeded, &succeeded_indexes, terminating, &new_backoff);
            }
            let complete = match self.completions() {
                None => succeeded > 0 && active == 0,
                Some(c) => succeeded >= c && active == 0,
            };
            if complete {
                finish = Some(Finish::new("SuccessCriteriaMet", COMPLETIONS_REACHED.0, COMPLETIONS_REACHED.1));
            }
        }
        st.active = active;
        st.ready = ready.max(0);
        st.terminating = terminating;
        self.track(world, st, &succeeded_indexes, finish);
        if !new_succeeded.is_empty() || !new_failed.is_empty() { new_backoff } else { backoff }
    }

    /// `manageJob`; returns the active count after its creates and deletes.
    #[allow(clippy::too_many_arguments)]
    fn manage(&self, world: &mut World<'_>, names: &mut NameGenerator, st: &mut JobStatus, active_pods: &[Arc<Value>],
              succeeded: i64, succeeded_indexes: &BTreeSet<i64>, terminating: i64, backoff: &BackoffRecord) -> i64 {
        let job = self.job;
        let active = active_pods.len() as i64;
        if self.suspended() {
            if st.ensure_condition("Suspended", "True", "JobSuspended", "Job suspended", &self.now_str) {
                event(world, job, "Normal", "Suspended", "Job suspended".into());
            }
            return active - self.remove_pods(world, active_pods.iter().map(|p| (**p).clone()).collect());
        }
        if st.ensure_condition("Suspended", "False", "JobResumed", "Job resumed", &self.now_str) {
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
            if dup { surplus.push((**pod).clone()) } else { keep.push((**pod).clone()) }
        }
        let rm_at_least = (active - want).max(0) as usize;
        if surplus.len() < rm_at_least {
            removal_order(&mut keep);
            surplus.extend(keep.into_iter().take(rm_at_least - surplus.len()));
        }
        if !surplus.is_empty() {
            return active - self.remove_pods(world, surplus);
        }
        let replacing = if only_replace_failed(job) { terminating } else { 0 };
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
                    event(world, job, "Normal", "SuccessfulCreate", format!("Created pod: {}", name(&p)));
                }
                Err(e) => event(world, job, "Warning", "FailedCreate", format!("Error creating: {e}")),
            }
        }
        active + created
    }

    /// `deleteJobPods`: drop the tracking finalizer (the pod is not counted) and delete.
    fn remove_pods(&self, world: &mut World<'_>, pods: Vec<Value>) -> i64 {
        let mut removed = 0;
        for pod in pods {
            remove_finalizer(world, &pod);
            if let Some(current) = world.get(&pod_key(namespace(&pod), name(&pod))) {
                if delete_pod(world, &current).is_err() {
                    continue;
                }
            }
            removed += 1;
            event(world, self.job, "Normal", "SuccessfulDelete", format!("Deleted pod: {}", name(&pod)));
        }
        removed
    }

    /// `trackJobStatusAndRemoveFinalizers`.
    fn track(&self, world: &mut World<'_>, mut st: JobStatus, prev_succeeded_indexes: &BTreeSet<i64>, mut finish: Option<Finish>) {
        let job = self.job;
        let with_finalizer: Vec<&Arc<Value>> = self.pods.iter().filter(|p| has_tracking_finalizer(p)).collect();
        let mut remaining: BTreeSet<String> = with_finalizer.iter().map(|p| uid(p).to_owned()).collect();
        clean_uncounted(&mut st, &remaining);
        let mut to_remove = Vec::new();
        let mut new_indexes = BTreeSet::new();
        let terminal_failure = finish.as_ref().is_some_and(|f| f.type_ != "SuccessCriteriaMet");
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
            } else if (failed || terminal_failure) && !st.uncounted_failed.contains(&pod_uid) && (!self.indexed() || self.valid_index(pod)) {
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
        if let Some(f) = finish {
            if st.uncounted_succeeded.is_empty() && st.uncounted_failed.is_empty() && st.terminating == 0 {
                st.ensure_condition(&f.type_, "True", &f.reason, &f.message, &self.now_str);
                if f.type_ == "Complete" {
                    st.completion_time = Some(self.now_str.clone());
                }
                finished = Some(f);
            }
        }
        self.flush(world, &st);
        match finished {
            Some(f) if f.type_ == "Complete" => {
                if self.completions().is_some_and(|c| st.succeeded > c) {
                    event(world, job, "Warning", "TooManySucceededPods", "Too many succeeded pods running after completion count reached".into());
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
    st.uncounted_succeeded.retain(|u| with_finalizer.contains(u));
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
    if let Some(f) = next.pointer_mut("/metadata/finalizers").and_then(Value::as_array_mut) {
        f.retain(|f| f != TRACKING_FINALIZER);
    }
    if next.pointer("/metadata/finalizers").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        next["metadata"].as_object_mut().map(|m| m.remove("finalizers"));
    }
    world.update(&key, next).is_ok()
}
