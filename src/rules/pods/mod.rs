//! Pods one at a time and as the set of one workload revision: ready, finished, doomed,
//! or held by something time may fix.

pub mod pod;
pub mod pod_failure;
pub mod pod_set;
pub mod pod_state;
