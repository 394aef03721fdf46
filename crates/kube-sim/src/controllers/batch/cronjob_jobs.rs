//! The Jobs of a CronJob: the Job made for a scheduled time (`getJobFromTemplate2`), the
//! `active` list and `lastSuccessfulTime` kept in step with them, and the history limits.

use crate::controllers::workloads::objects::{
    controller_ref, int_at, name, namespace, str_at, uid,
};
use crate::engine::World;
use crate::events::EventSpec;
use crate::store::{DeleteOptions, ObjectKey};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Value, json};
use std::sync::Arc;

pub(crate) fn event(world: &mut World<'_>, cj: &Value, type_: &str, reason: &str, message: String) {
    world.event(EventSpec {
        involved: cj,
        field_path: None,
        type_,
        reason,
        message,
        component: None,
        host: None,
    });
}

pub(crate) fn job_key(ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new("batch", "jobs", ns, name)
}

/// The Job's terminal condition type, if finished.
pub(crate) fn finished_as(job: &Value) -> Option<&str> {
    let conditions = job.pointer("/status/conditions")?.as_array()?;
    conditions
        .iter()
        .find(|c| {
            matches!(str_at(c, "/type"), "Complete" | "Failed") && str_at(c, "/status") == "True"
        })
        .map(|c| str_at(c, "/type"))
}

pub(crate) fn job_ref(job: &Value) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "name": name(job), "namespace": namespace(job),
           "resourceVersion": str_at(job, "/metadata/resourceVersion"), "uid": uid(job)})
}

/// The Job for `scheduled` (`getJobFromTemplate2`).
pub(crate) fn job_for(cj: &Value, scheduled: Timestamp, tz: &TimeZone) -> Value {
    let template = cj.pointer("/spec/jobTemplate").cloned().unwrap_or_default();
    let mut annotations = template
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let local = scheduled.to_zoned(tz.clone());
    annotations.insert(
        "batch.kubernetes.io/cronjob-scheduled-timestamp".into(),
        json!(
            local
                .strftime("%Y-%m-%dT%H:%M:%S%:z")
                .to_string()
                .replace("+00:00", "Z")
        ),
    );
    let mut metadata = json!({"name": format!("{}-{}", name(cj), scheduled.as_second() / 60), "namespace": namespace(cj),
        "annotations": annotations, "ownerReferences": [controller_ref(cj)]});
    if let Some(labels) = template
        .pointer("/metadata/labels")
        .filter(|l| l.is_object())
    {
        metadata["labels"] = labels.clone();
    }
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
           "spec": template.get("spec").cloned().unwrap_or_else(|| json!({}))})
}

/// Keep `active` in step with the Jobs that exist; note finished ones.
pub(crate) fn track_jobs(
    world: &mut World<'_>,
    cj: &Value,
    jobs: &[Arc<Value>],
    status: &mut Value,
) {
    let mut active: Vec<Value> = status
        .get("active")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for job in jobs {
        let listed = active.iter().any(|r| str_at(r, "/uid") == uid(job));
        match finished_as(job) {
            None if !listed => active.push(job_ref(job)),
            Some(cond) if listed => {
                active.retain(|r| str_at(r, "/uid") != uid(job));
                event(
                    world,
                    cj,
                    "Normal",
                    "SawCompletedJob",
                    format!("Saw completed job: {}, condition: {cond}", name(job)),
                );
                if cond == "Complete" {
                    let done = str_at(job, "/status/completionTime");
                    let newer = status
                        .get("lastSuccessfulTime")
                        .and_then(Value::as_str)
                        .is_none_or(|t| t < done);
                    if !done.is_empty() && newer {
                        status["lastSuccessfulTime"] = json!(done);
                    }
                }
            }
            _ => {}
        }
    }
    let before = active.len();
    active.retain(|r| jobs.iter().any(|j| uid(j) == str_at(r, "/uid")));
    if active.len() != before {
        event(
            world,
            cj,
            "Warning",
            "MissingJob",
            "Active job went missing".into(),
        );
    }
    if let Some(s) = status.as_object_mut() {
        if active.is_empty() {
            s.remove("active");
        } else {
            s.insert("active".into(), json!(active));
        }
    }
}

/// Delete finished Jobs beyond the history limits, oldest first.
pub(crate) fn clean_history(world: &mut World<'_>, cj: &Value, jobs: &[Arc<Value>]) {
    for (kind, limit) in [
        (
            "Complete",
            int_at(cj, "/spec/successfulJobsHistoryLimit").unwrap_or(3),
        ),
        (
            "Failed",
            int_at(cj, "/spec/failedJobsHistoryLimit").unwrap_or(1),
        ),
    ] {
        let mut done: Vec<_> = jobs
            .iter()
            .filter(|j| finished_as(j) == Some(kind))
            .collect();
        done.sort_by(|a, b| {
            str_at(a, "/status/startTime")
                .cmp(str_at(b, "/status/startTime"))
                .then_with(|| name(a).cmp(name(b)))
        });
        let excess = done
            .len()
            .saturating_sub(usize::try_from(limit).unwrap_or(0));
        for job in done.into_iter().take(excess) {
            if world
                .delete(
                    &job_key(namespace(job), name(job)),
                    DeleteOptions::default(),
                )
                .is_ok()
            {
                event(
                    world,
                    cj,
                    "Normal",
                    "SuccessfulDelete",
                    format!("Deleted job {}", name(job)),
                );
            }
        }
    }
}
