//! Workload controllers (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs,
//! CronJobs) and what scales or guards them (HPAs, PDBs): rollouts judged from status.

pub mod cronjob;
pub mod daemonset;
pub mod daemonset_nodes;
pub mod deployment;
pub mod generation;
pub mod hpa;
pub mod job;
pub mod pdb;
pub mod replicaset;
pub mod rollout_views;
pub mod statefulset;
