//! Everything that talks to the cluster: connecting, discovery, applying, watching, logs.

pub mod apply;
pub mod connect;
pub mod kinds;
pub mod logs;
pub mod watch;

pub use connect::{Connection, connect};
pub use kinds::Kinds;
