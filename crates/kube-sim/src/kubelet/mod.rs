//! The simulated kubelet.
