//! Integration tests of kube-sim through real clients (kube-rs in-process, kubectl over TCP).

mod api;
mod kpt;
mod kubectl;
mod replay;
