//! The `cronjob-controller` (v2): creates a Job named `<cronjob>-<minutes since epoch>` at
//! each scheduled time, honours suspend, startingDeadlineSeconds and the concurrency
//! policy, tracks active Jobs and the history limits, and writes `lastScheduleTime` and
//! `lastSuccessfulTime`.

use super::cron::Schedule;
use super::job_status::is_finished;
use crate::controllers::workloads::objects::{
    controller_ref, format_time, int_at, is_controlled_by, is_deleting, name, namespace, owner_key,
    parse_time, str_at, uid,
};
use crate::engine::{Controller, World};
use crate::events::EventSpec;
use crate::store::{Change, ObjectKey};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Runs CronJobs.
#[derive(Debug, Default)]
pub struct CronJobController;

fn event(world: &mut World<'_>, cj: &Value, type_: &str, reason: &str, message: String) {
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

fn job_key(ns: &str, name: &str) -> ObjectKey {
    ObjectKey::new("batch", "jobs", ns, name)
}

/// The Job's terminal condition type, if finished.
fn finished_as(job: &Value) -> Option<&str> {
    let conditions = job.pointer("/status/conditions")?.as_array()?;
    conditions
        .iter()
        .find(|c| {
            matches!(str_at(c, "/type"), "Complete" | "Failed") && str_at(c, "/status") == "True"
        })
        .map(|c| str_at(c, "/type"))
}

fn job_ref(job: &Value) -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "name": name(job), "namespace": namespace(job),
           "resourceVersion": str_at(job, "/metadata/resourceVersion"), "uid": uid(job)})
}

impl CronJobController {
    /// The Job for `scheduled` (`getJobFromTemplate2`).
    fn job_for(cj: &Value, scheduled: Timestamp, tz: &TimeZone) -> Value {
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
    fn track_jobs(world: &mut World<'_>, cj: &Value, jobs: &[Arc<Value>], status: &mut Value) {
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
        match active.is_empty() {
            true => status.as_object_mut().map(|s| s.remove("active")),
            false => status
                .as_object_mut()
                .map(|s| s.insert("active".into(), json!(active))),
        };
    }

    /// Delete finished Jobs beyond the history limits, oldest first.
    fn clean_history(world: &mut World<'_>, cj: &Value, jobs: &[Arc<Value>]) {
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
                    .delete(&job_key(namespace(job), name(job)), Default::default())
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

    fn sync(world: &mut World<'_>, key: &ObjectKey, cj: &Value) {
        let jobs: Vec<_> = world
            .list("batch", "jobs", Some(namespace(cj)))
            .into_iter()
            .filter(|j| is_controlled_by(j, cj))
            .collect();
        let mut status = cj
            .get("status")
            .cloned()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        Self::track_jobs(world, cj, &jobs, &mut status);
        let write = |world: &mut World<'_>, status: &Value| {
            let mut next = cj.clone();
            next["status"] = status.clone();
            let _ = world.update_status(key, next);
        };
        if is_deleting(cj) {
            write(world, &status);
            return;
        }
        let tz_name = str_at(cj, "/spec/timeZone");
        let tz = match tz_name {
            "" | "UTC" | "Etc/UTC" => TimeZone::UTC,
            zone => match TimeZone::get(zone) {
                Ok(tz) => tz,
                Err(e) => {
                    event(
                        world,
                        cj,
                        "Warning",
                        "UnknownTimeZone",
                        format!("invalid timeZone: {zone:?}: {e}"),
                    );
                    write(world, &status);
                    return;
                }
            },
        };
        let schedule = match Schedule::parse(str_at(cj, "/spec/schedule")) {
            Ok(s) => s,
            Err(e) => {
                event(
                    world,
                    cj,
                    "Warning",
                    "UnparseableSchedule",
                    format!(
                        "unparseable schedule: {:?} : {e}",
                        str_at(cj, "/spec/schedule")
                    ),
                );
                write(world, &status);
                return;
            }
        };
        let now = world.store.clock().now();
        let created = parse_time(str_at(cj, "/metadata/creationTimestamp")).unwrap_or(now);
        let mut earliest = status
            .get("lastScheduleTime")
            .and_then(Value::as_str)
            .and_then(parse_time)
            .unwrap_or(created);
        let deadline = int_at(cj, "/spec/startingDeadlineSeconds");
        if let Some(d) = deadline {
            earliest = earliest.max(Timestamp::from_second(now.as_second() - d).unwrap_or(now));
        }
        // The most recent missed time (`mostRecentScheduleTime`), if any.
        let mut scheduled = None;
        let mut t = earliest;
        let mut missed = 0;
        while let Some(next) = schedule.next(t, &tz).filter(|n| *n <= now) {
            scheduled = Some(next);
            t = next;
            missed += 1;
            if missed > 100_000 {
                break;
            }
        }
        if missed > 100 {
            event(world, cj, "Warning", "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew".into());
        }
        let suspended = cj
            .pointer("/spec/suspend")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if let Some(at) = scheduled.filter(|_| !suspended) {
            Self::start_job(world, cj, &jobs, &mut status, at, &tz, now);
        }
        write(world, &status);
        let jobs: Vec<_> = world
            .list("batch", "jobs", Some(namespace(cj)))
            .into_iter()
            .filter(|j| is_controlled_by(j, cj))
            .collect();
        Self::clean_history(world, cj, &jobs);
        if let Some(next) = schedule.next(now, &tz).filter(|_| !suspended) {
            let wait =
                Duration::from_secs(u64::try_from(next.as_second() - now.as_second()).unwrap_or(0))
                    + Duration::from_millis(100);
            world.requeue_after(key.clone(), wait);
        }
    }

    fn start_job(
        world: &mut World<'_>,
        cj: &Value,
        jobs: &[Arc<Value>],
        status: &mut Value,
        at: Timestamp,
        tz: &TimeZone,
        now: Timestamp,
    ) {
        if let Some(d) = int_at(cj, "/spec/startingDeadlineSeconds")
            && at.as_second() + d < now.as_second()
        {
            event(
                world,
                cj,
                "Warning",
                "MissSchedule",
                format!(
                    "Missed scheduled time to start a job: {}",
                    at.to_zoned(tz.clone()).strftime("%Y-%m-%dT%H:%M:%S%:z")
                ),
            );
            return;
        }
        let running: Vec<_> = jobs.iter().filter(|j| !is_finished(j)).collect();
        match str_at(cj, "/spec/concurrencyPolicy") {
            "Forbid" if !running.is_empty() => {
                event(world, cj, "Normal", "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid".into());
                return;
            }
            "Replace" => {
                for job in running {
                    if world
                        .delete(&job_key(namespace(job), name(job)), Default::default())
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
                status.as_object_mut().map(|s| s.remove("active"));
            }
            _ => {}
        }
        let job = Self::job_for(cj, at, tz);
        let job_name = name(&job).to_owned();
        match world.create(&job_key(namespace(cj), &job_name), job) {
            Ok(created) => {
                event(
                    world,
                    cj,
                    "Normal",
                    "SuccessfulCreate",
                    format!("Created job {job_name}"),
                );
                let mut active = status
                    .get("active")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                active.push(job_ref(&created));
                status["active"] = json!(active);
            }
            Err(crate::engine::WriteError::Store(crate::store::StoreError::AlreadyExists(_))) => {}
            Err(e) => {
                event(
                    world,
                    cj,
                    "Warning",
                    "FailedCreate",
                    format!("Error creating job: {e}"),
                );
                return;
            }
        }
        status["lastScheduleTime"] = json!(format_time(at));
    }
}

impl Controller for CronJobController {
    fn name(&self) -> &'static str {
        "cronjob-controller"
    }

    fn keys_for(&self, change: &Change, _world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        if key.in_collection("batch", "cronjobs", None) {
            let spec_changed = change
                .previous
                .as_ref()
                .is_none_or(|p| p.get("spec") != change.object.get("spec"));
            return if spec_changed {
                vec![key.clone()]
            } else {
                Vec::new()
            };
        }
        if key.in_collection("batch", "jobs", None) {
            let mut keys: Vec<_> = std::iter::once(&change.object)
                .chain(change.previous.as_ref())
                .filter_map(|o| owner_key(o, "CronJob", "batch", "cronjobs"))
                .collect();
            keys.dedup();
            return keys;
        }
        Vec::new()
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("batch", "cronjobs", None)
            .iter()
            .map(|c| ObjectKey::new("batch", "cronjobs", namespace(c), name(c)))
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        if let Some(cj) = world.get(key) {
            Self::sync(world, key, &cj);
        }
    }
}
