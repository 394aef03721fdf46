//! API-server defaulting, for kube-sim's server and `check` (through `refusal`): pure
//! functions that turn a submitted object into the object a real kube-apiserver 1.33
//! stores and returns.

mod apps;
mod batch;
mod container;
mod core;
mod json;
mod object;
mod pod;
mod pod_spec;
pub mod quantity;
mod service;
mod storage;

#[cfg(test)]
mod tests;

pub use batch::default_job_selector;
pub use object::default_object;
pub use pod::mount_service_account_token;
pub use service::{
    NODE_PORT_RANGE, allocate_cluster_ip, allocate_node_ports, preserve_service_allocations,
};
pub use storage::default_storage_class;
