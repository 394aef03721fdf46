//! Scenario tests of the workload controllers against a running simulated cluster.

mod daemonset;
mod statefulset;
mod status_writers;
