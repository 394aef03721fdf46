//! Reporting a run to GitHub: the Checks API client and the check run's lifecycle on the
//! head commit (created in progress, updated, always completed). What is sent is rendered
//! by `render::github`. Nothing here changes a verdict or an exit code: every GitHub
//! failure is a value.

mod client;
mod error;
mod lifecycle;
mod retry;

#[cfg(test)]
mod lifecycle_tests;

pub use client::{ClientOptions, GithubClient};
pub use error::GithubError;
pub use lifecycle::{CheckRun, Finished, UPDATE_INTERVAL, Update};
pub use retry::RetryPolicy;
