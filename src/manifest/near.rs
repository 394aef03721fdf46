//! The name someone probably meant: kube-strict's, shared with kube-sim's messages.

pub use kube_strict::near::nearest;
