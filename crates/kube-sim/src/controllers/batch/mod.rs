//! Jobs and CronJobs.

mod backoff;
mod cron;
mod cronjob;
mod cronjob_jobs;
mod indexes;
mod job_controller;
mod job_manage;
mod job_pods;
mod job_status;
mod job_sync;
mod job_tracking;
#[cfg(test)]
mod tests;

pub use cronjob::CronJobController;
pub use job_controller::JobController;

use crate::engine::Controller;

pub fn controllers() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(JobController::default()),
        Box::new(CronJobController),
    ]
}
