//! Scenario tests of Jobs and CronJobs against a running simulated cluster.

mod cronjob;
mod jobs;
