//! A Job's status as the job controller holds it between API writes, in `batch/v1`
//! field order, and its conditions (`JobCondition`, with probe and transition times).

use crate::controllers::workloads::objects::{int_at, put_nonzero, str_at};
use serde_json::{Map, Value, json};

/// A terminal or interim condition the sync decided on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finish {
    pub type_: String,
    pub reason: String,
    pub message: String,
}

impl Finish {
    pub(crate) fn new(type_: &str, reason: &str, message: &str) -> Self {
        Finish {
            type_: type_.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct JobStatus {
    pub conditions: Vec<Value>,
    pub start_time: Option<String>,
    pub completion_time: Option<String>,
    pub active: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub terminating: i64,
    pub completed_indexes: Option<String>,
    pub uncounted_succeeded: Vec<String>,
    pub uncounted_failed: Vec<String>,
    pub ready: i64,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

impl JobStatus {
    pub(crate) fn read(job: &Value) -> Self {
        let opt = |p: &str| job.pointer(p).and_then(Value::as_str).map(str::to_owned);
        JobStatus {
            conditions: job
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            start_time: opt("/status/startTime"),
            completion_time: opt("/status/completionTime"),
            active: int_at(job, "/status/active").unwrap_or(0),
            succeeded: int_at(job, "/status/succeeded").unwrap_or(0),
            failed: int_at(job, "/status/failed").unwrap_or(0),
            terminating: int_at(job, "/status/terminating").unwrap_or(0),
            completed_indexes: opt("/status/completedIndexes"),
            uncounted_succeeded: strings(job.pointer("/status/uncountedTerminatedPods/succeeded")),
            uncounted_failed: strings(job.pointer("/status/uncountedTerminatedPods/failed")),
            ready: int_at(job, "/status/ready").unwrap_or(0),
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut s = Map::new();
        if !self.conditions.is_empty() {
            s.insert("conditions".into(), json!(self.conditions));
        }
        if let Some(t) = &self.start_time {
            s.insert("startTime".into(), json!(t));
        }
        if let Some(t) = &self.completion_time {
            s.insert("completionTime".into(), json!(t));
        }
        put_nonzero(&mut s, "active", self.active);
        put_nonzero(&mut s, "succeeded", self.succeeded);
        put_nonzero(&mut s, "failed", self.failed);
        s.insert("terminating".into(), json!(self.terminating));
        if let Some(c) = self.completed_indexes.as_ref().filter(|c| !c.is_empty()) {
            s.insert("completedIndexes".into(), json!(c));
        }
        let mut uncounted = Map::new();
        if !self.uncounted_succeeded.is_empty() {
            uncounted.insert("succeeded".into(), json!(self.uncounted_succeeded));
        }
        if !self.uncounted_failed.is_empty() {
            uncounted.insert("failed".into(), json!(self.uncounted_failed));
        }
        s.insert("uncountedTerminatedPods".into(), Value::Object(uncounted));
        s.insert("ready".into(), json!(self.ready));
        Value::Object(s)
    }

    pub(crate) fn condition(&self, type_: &str) -> Option<&Value> {
        self.conditions
            .iter()
            .find(|c| str_at(c, "/type") == type_ && str_at(c, "/status") == "True")
    }

    /// Append a True condition (`newCondition`).
    pub(crate) fn add_condition(&mut self, finish: &Finish, now: &str) {
        self.conditions.push(
            json!({"type": finish.type_, "status": "True", "lastProbeTime": now,
            "lastTransitionTime": now, "reason": finish.reason, "message": finish.message}),
        );
    }

    /// `ensureJobConditionStatus`: update the condition of `type_`, or append it when True.
    pub(crate) fn ensure_condition(
        &mut self,
        type_: &str,
        status: &str,
        reason: &str,
        message: &str,
        now: &str,
    ) -> bool {
        match self
            .conditions
            .iter_mut()
            .find(|c| str_at(c, "/type") == type_)
        {
            Some(c) if str_at(c, "/status") == status => false,
            Some(c) => {
                *c = json!({"type": type_, "status": status, "lastProbeTime": now, "lastTransitionTime": now,
                    "reason": reason, "message": message});
                true
            }
            None if status == "True" => {
                self.add_condition(&Finish::new(type_, reason, message), now);
                true
            }
            None => false,
        }
    }
}

/// A Job with a True Complete or Failed condition is finished for good.
pub(crate) fn is_finished(job: &Value) -> bool {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| {
            matches!(str_at(c, "/type"), "Complete" | "Failed") && str_at(c, "/status") == "True"
        })
}
