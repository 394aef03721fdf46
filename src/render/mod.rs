//! Pure renderers: functions from run data to Strings, so the terminal, CI logs and
//! the check run only display text and every layout is snapshot-testable. `github/`
//! holds what GitHub shows: the check run, the job summary, the workflow commands.

pub(crate) mod duration;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod github;
pub mod plan;
pub mod progress;
pub mod rbac;
pub mod redact;
pub mod report;
pub mod sanitize;
pub mod style;
pub mod summary;

pub use progress::{
    ci_line, commands_stopped, group_end, group_start, progress_line, status_table, stop_token,
    verdict_line,
};
pub use redact::{Redactor, redact, redact_json};
pub use sanitize::sanitize;
pub use style::Style;
pub use summary::summary;
