//! The binary's edge: read the environment, run, print the summary, write the report, and
//! map how the run ended to an exit code (`exit.rs`). Errors become one message with
//! context; nothing here decides verdicts.

mod execute;
mod interrupts;
mod rbac;
mod work;

pub use execute::main;
