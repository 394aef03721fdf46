//! Integration tests of deploy-action: the library against kube-sim in-process with a
//! paused clock, and the binary against `kube-sim serve`.

mod cli;
mod deploy;
mod images;
mod states;
mod support;
