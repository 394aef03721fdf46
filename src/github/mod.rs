//! Reporting a run to GitHub: the check run on the head commit, and, where the token may
//! not write checks (fork pull requests), workflow commands and the job summary instead.
//! Nothing here changes a verdict or an exit code: every GitHub failure is a value.

mod client;
mod commands;
mod context;
mod error;
mod evidence;
mod lifecycle;
pub mod limits;
mod markdown;
mod origins;
mod outputs;
mod paths;
mod plan;
mod render;
mod retry;
mod wire;

#[cfg(test)]
mod lifecycle_tests;
#[cfg(test)]
mod render_tests;
#[cfg(test)]
mod testing;

pub use client::{ClientOptions, GithubClient};
pub use commands::{escape_data, escape_property, mask_command, workflow_commands};
pub use context::{ActionsContext, ContextError, Repository};
pub use error::GithubError;
pub use lifecycle::{CheckRun, Finished, UPDATE_INTERVAL, Update};
pub use origins::locate;
pub use outputs::{output_lines, step_summary};
pub use render::{Stage, annotations, check_output, conclusion, redact_run, summary, text, title};
pub use retry::RetryPolicy;
pub use wire::{
    Annotation, AnnotationLevel, CheckRunInfo, Conclusion, CreateCheckRun, Output, Status,
    UpdateCheckRun,
};
