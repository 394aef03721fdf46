//! Integration tests of kube-sim through real clients (kube-rs in-process, kubectl over TCP).

mod api;
mod auth;
mod decode;
mod kpt;
mod kubectl;
mod kubectl_auth;
mod kubectl_decode;
mod replay;
