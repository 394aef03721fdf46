//! kube-sim: a simulated Kubernetes cluster (API server, controllers, kubelet) in memory,
//! deterministic under tokio's paused clock, for testing deploy tools without a cluster.

pub mod apply;
pub mod cli;
pub mod clock;
pub mod controllers;
pub mod engine;
pub mod events;
pub mod kubeconfig;
pub mod kubelet;
pub mod logs;
pub mod resources;
pub mod scenario;
pub mod serve;
pub mod server;
pub mod sim;
pub mod store;
pub mod tls;

// Shared with deploy-action's offline `check`, so the two cannot disagree.
pub use kube_strict::{decode, defaults, validation};

pub use kubeconfig::Kubeconfig;
pub use scenario::{Scenario, TokenSpec};
pub use serve::{ServeOptions, Served};
pub use server::UserInfo;
pub use sim::Sim;
