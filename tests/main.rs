//! Integration tests of deploy-action: the library against kube-sim in-process with a
//! paused clock, the binary against `kube-sim serve`, and action.yml run as a runner would.

mod action;
mod action_runner;
mod agreement;
mod autoscaler;
mod blind;
mod cli;
mod connect;
mod corpus;
mod custom_resources;
mod daemonset;
mod deploy;
mod forward_proxy;
mod images;
mod plan;
mod pods;
mod prune;
mod rbac;
mod release;
mod restart_run;
mod services;
mod states;
mod support;
mod trust;
mod waves;
