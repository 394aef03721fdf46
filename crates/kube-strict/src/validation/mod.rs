//! API-server validation, for kube-sim's server and `check` (through `refusal`): pure
//! checks that reject an object with the exact 422 Invalid error kube-apiserver 1.33
//! returns (causes, message and Status body).

mod batch;
mod claim_update;
mod config;
mod container;
mod cron;
mod daemonset;
mod deployment;
mod error;
mod gofmt;
mod meta;
mod names;
mod object;
mod path;
mod pod;
mod probes;
mod resources;
mod selector;
mod service;
mod statefulset;
mod update;
mod workload;

#[cfg(test)]
mod tests;

pub use error::{Cause, CauseReason, Invalid};
pub use object::validate;
pub use update::validate_update;
