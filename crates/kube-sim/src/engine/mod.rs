//! The control plane loop: routes store changes to controllers and the kubelet, and runs
//! their reconciles one at a time, in a deterministic order, at simulated times.

mod controller;
mod queue;
mod run;
pub(crate) mod world;

pub use controller::Controller;
pub use queue::Queue;
pub use run::Engine;
pub use world::{World, WriteError};
