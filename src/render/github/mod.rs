//! What a run looks like on GitHub, as pure functions of the run's data: the check run's
//! title, summary, text and annotations, the job summary and step outputs, and the
//! workflow commands of the fork fallback; with the Actions context they are rendered
//! for and the Checks API bodies they fill. Nothing here does I/O: `github/` sends them.

pub mod check_run;
mod commands;
pub mod context;
mod evidence;
pub mod limits;
mod markdown;
mod name;
mod origins;
mod outputs;
mod paths;
mod plan;
pub mod refusal;
pub mod wire;

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;

pub use check_run::{Stage, annotations, check_output, conclusion, summary, text, title};
pub use commands::{escape_data, escape_property, mask_command, workflow_commands};
pub use context::{ActionsContext, ContextError, Repository};
pub use name::default_check_name;
pub use origins::locate;
pub use outputs::{output_lines, step_summary};
pub use wire::{
    Annotation, AnnotationLevel, CheckRunInfo, Conclusion, CreateCheckRun, Output, Status,
    UpdateCheckRun,
};
