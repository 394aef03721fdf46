//! The `cronjob-controller` (v2): creates a Job named `<cronjob>-<minutes since epoch>` at
//! each scheduled time, honours suspend, startingDeadlineSeconds and the concurrency
//! policy, tracks active Jobs and the history limits, and writes `lastScheduleTime` and
//! `lastSuccessfulTime`.

use super::cron::Schedule;
use super::cronjob_jobs::{clean_history, event, job_for, job_key, job_ref, track_jobs};
use super::job_status::is_finished;
use crate::controllers::workloads::objects::{
    format_time, int_at, is_controlled_by, is_deleting, name, namespace, owner_key, parse_time,
    str_at,
};
use crate::engine::{Controller, World};
use crate::store::{Change, DeleteOptions, ObjectKey};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// Runs CronJobs.
#[derive(Debug, Default)]
pub struct CronJobController;

impl CronJobController {
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
        track_jobs(world, cj, &jobs, &mut status);
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
        clean_history(world, cj, &jobs);
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
                status.as_object_mut().map(|s| s.remove("active"));
            }
            _ => {}
        }
        let job = job_for(cj, at, tz);
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
