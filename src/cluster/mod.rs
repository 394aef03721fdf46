//! Everything that talks to the cluster: connecting, discovery, applying, watching, logs.

pub mod apply;
pub mod bulk;
pub mod connect;
pub mod credentials;
pub mod discovery;
pub mod immutable;
pub mod logs;
pub mod raw;
pub mod remove;
pub mod transport;
pub mod watch;

pub use connect::{Connection, connect};

/// The longest any single request to the API server may take (a watch excepted): a
/// server that accepts the connection and never answers must not hold the run.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
pub use discovery::Served;

/// A failed request to the API server, in one sentence: what the server answered, or why
/// it could not be reached (`cannot reach the API server at https://...: connection refused`).
pub fn describe_failure(server: &str, error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => format!(
            "the API server at {server} answered {} {}: {}",
            status.code, status.reason, status.message
        ),
        other => format!(
            "cannot reach the API server at {server}: {}",
            connect::root_cause(other)
        ),
    }
}
