//! kube-sim: a simulated Kubernetes cluster (API server, controllers, kubelet) in memory,
//! deterministic under tokio's paused clock, for testing deploy tools without a cluster.

pub mod cli;
pub mod clock;
pub mod resources;
pub mod scenario;
pub mod store;
pub mod apply;
pub mod engine;
pub mod events;
pub mod kubeconfig;
pub mod logs;
pub mod controllers;
pub mod defaults;
pub mod kubelet;
pub mod server;
pub mod sim;
pub mod validation;

pub use scenario::Scenario;
pub use sim::Sim;
