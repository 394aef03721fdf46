//! Scenario tests of the workload controllers against a running simulated cluster.

mod daemonset;
mod end_to_end;
mod statefulset;
mod status_writers;
