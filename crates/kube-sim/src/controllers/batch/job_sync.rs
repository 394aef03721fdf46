//! One `syncJob`: count finished pods and decide whether the Job succeeded or failed
//! (backoffLimit, restarts under OnFailure, activeDeadlineSeconds); pods are managed in
//! `job_manage` and finished pods accounted in `job_tracking`.

use super::backoff::BackoffRecord;
use super::indexes::{self, pod_index};
use super::job_pods::{has_tracking_finalizer, is_failed, is_terminating};
use super::job_status::{Finish, JobStatus};
use crate::controllers::workloads::objects::{
    NameGenerator, int_at, is_deleting, name, parse_time, str_at, uid,
};
use crate::controllers::workloads::pods::{delete_pod, is_active, is_ready, phase};
use crate::engine::World;
use crate::events::EventSpec;
use crate::store::ObjectKey;
use jiff::Timestamp;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

const COMPLETIONS_REACHED: (&str, &str) = (
    "CompletionsReached",
    "Reached expected number of succeeded pods",
);

/// What one sync works with.
pub(crate) struct JobSync<'a> {
    pub key: &'a ObjectKey,
    pub job: &'a Value,
    pub pods: Vec<Arc<Value>>,
    pub now: Timestamp,
    pub now_str: String,
}

pub(crate) fn event(
    world: &mut World<'_>,
    job: &Value,
    type_: &str,
    reason: &str,
    message: String,
) {
    world.event(EventSpec {
        involved: job,
        field_path: None,
        type_,
        reason,
        message,
        component: None,
        host: None,
    });
}

impl JobSync<'_> {
    pub(crate) fn indexed(&self) -> bool {
        str_at(self.job, "/spec/completionMode") == "Indexed"
    }

    pub(crate) fn completions(&self) -> Option<i64> {
        int_at(self.job, "/spec/completions")
    }

    pub(crate) fn suspended(&self) -> bool {
        self.job
            .pointer("/spec/suspend")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    pub(crate) fn valid_index(&self, pod: &Value) -> bool {
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
            .flat_map(|p| {
                ["initContainerStatuses", "containerStatuses"]
                    .map(|k| p.pointer(&format!("/status/{k}")).cloned())
            })
            .flatten()
            .flat_map(|s| s.as_array().cloned().unwrap_or_default())
            .map(|s| int_at(&s, "/restartCount").unwrap_or(0))
            .sum();
        if limit == 0 {
            restarts > 0
        } else {
            restarts >= limit
        }
    }

    /// Seconds past `status.startTime`, if the Job has started.
    fn running_for(&self, status: &JobStatus) -> Option<i64> {
        let start = parse_time(status.start_time.as_deref()?)?;
        Some(self.now.as_second() - start.as_second())
    }

    /// Run the sync; returns the back-off record to keep.
    pub(crate) fn run(
        &self,
        world: &mut World<'_>,
        names: &mut NameGenerator,
        backoff: BackoffRecord,
    ) -> BackoffRecord {
        let job = self.job;
        let original = JobStatus::read(job);
        let mut st = original.clone();
        let active_pods: Vec<_> = self.pods.iter().filter(|p| is_active(p)).cloned().collect();
        let mut ready = active_pods.iter().filter(|p| is_ready(p)).count() as i64;
        let mut terminating = self.pods.iter().filter(|p| is_terminating(p)).count() as i64;
        let mut active = active_pods.len() as i64;
        let counted = |uids: &[String], p: &Value| uids.iter().any(|u| u == uid(p));
        let tracked =
            |p: &&Arc<Value>| has_tracking_finalizer(p) && (!self.indexed() || self.valid_index(p));
        let new_succeeded: Vec<&Value> = self
            .pods
            .iter()
            .filter(tracked)
            .filter(|p| phase(p) == "Succeeded" && !counted(&st.uncounted_succeeded, p))
            .map(|p| &**p)
            .collect();
        let new_failed: Vec<&Value> = self
            .pods
            .iter()
            .filter(tracked)
            .filter(|p| is_failed(p, job) && !counted(&st.uncounted_failed, p))
            .map(|p| &**p)
            .collect();
        let mut succeeded =
            st.succeeded + (new_succeeded.len() + st.uncounted_succeeded.len()) as i64;
        let failed = st.failed + (new_failed.len() + st.uncounted_failed.len()) as i64;
        if st.start_time.is_none() && !self.suspended() {
            st.start_time = Some(self.now_str.clone());
        }
        let new_backoff = backoff.with_finished(&new_succeeded, &new_failed, self.now);

        let backoff_limit = int_at(job, "/spec/backoffLimit").unwrap_or(6);
        let mut finish: Option<Finish> = None;
        if let Some(c) = st.condition("SuccessCriteriaMet") {
            finish = Some(Finish::new(
                "SuccessCriteriaMet",
                str_at(c, "/reason"),
                str_at(c, "/message"),
            ));
        } else if let Some(c) = st.condition("FailureTarget") {
            finish = Some(Finish::new(
                "Failed",
                str_at(c, "/reason"),
                str_at(c, "/message"),
            ));
        } else if failed > backoff_limit || self.past_backoff_on_failure(backoff_limit) {
            finish = Some(Finish::new(
                "FailureTarget",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            ));
        } else if let (Some(deadline), Some(ran), false) = (
            int_at(job, "/spec/activeDeadlineSeconds"),
            self.running_for(&st),
            self.suspended(),
        ) {
            if ran >= deadline {
                finish = Some(Finish::new(
                    "FailureTarget",
                    "DeadlineExceeded",
                    "Job was active longer than specified deadline",
                ));
            } else {
                world.requeue_after(
                    self.key.clone(),
                    Duration::from_secs((deadline - ran) as u64),
                );
            }
        }

        let mut succeeded_indexes = BTreeSet::new();
        if self.indexed() {
            succeeded_indexes = indexes::parse(st.completed_indexes.as_deref().unwrap_or_default());
            succeeded_indexes.extend(
                self.pods
                    .iter()
                    .filter(|p| {
                        has_tracking_finalizer(p) && phase(p) == "Succeeded" && self.valid_index(p)
                    })
                    .filter_map(|p| pod_index(p)),
            );
            succeeded = succeeded_indexes.len() as i64;
        }

        if finish.is_some() {
            // A failing Job stops its running pods; it finishes once they are gone.
            for pod in &active_pods {
                if delete_pod(world, pod).is_ok() {
                    event(
                        world,
                        job,
                        "Normal",
                        "SuccessfulDelete",
                        format!("Deleted pod: {}", name(pod)),
                    );
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
                active = self.manage(
                    world,
                    names,
                    &mut st,
                    &active_pods,
                    succeeded,
                    &succeeded_indexes,
                    terminating,
                    &new_backoff,
                );
            }
            let complete = match self.completions() {
                None => succeeded > 0 && active == 0,
                Some(c) => succeeded >= c && active == 0,
            };
            if complete {
                finish = Some(Finish::new(
                    "SuccessCriteriaMet",
                    COMPLETIONS_REACHED.0,
                    COMPLETIONS_REACHED.1,
                ));
            }
        }
        st.active = active;
        st.ready = ready.max(0);
        st.terminating = terminating;
        self.track(world, st, &succeeded_indexes, finish);
        if !new_succeeded.is_empty() || !new_failed.is_empty() {
            new_backoff
        } else {
            backoff
        }
    }
}
