//! deploy-action: apply Kubernetes manifests, watch every resource to a verdict, and
//! tell a fast, certain failure from a slow one.

pub mod app;
pub mod autoscale;
pub mod cli;
pub mod cluster;
pub mod config;
pub mod exit;
#[cfg(test)]
mod fuzz;
pub mod github;
pub mod manifest;
pub mod output;
pub mod pacing;
pub mod phases;
pub mod pipeline;
pub mod plan;
pub mod pointer;
pub mod proxy;
pub mod prune;
pub mod random;
pub mod registry;
pub mod render;
pub mod rules;
pub(crate) mod shrink;
pub mod vocab;
pub mod waves;
