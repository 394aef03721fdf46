//! A run's steps, from loaded manifests to verdicts: `deploy` (also `plan` and `watch`),
//! `check`, `restart` and `run` (`task`), each applying what it must and reaching its
//! verdicts through `judging::judge`. Reports progress to an observer; prints nothing.

mod access;
mod applying;
mod autoscaled;
mod check;
mod context;
mod deploy;
mod error;
mod hooks;
mod judging;
mod load;
pub mod lookups;
mod outcomes;
pub mod permissions;
mod planning;
mod preflight;
mod pruning;
pub mod restart;
pub mod scopes;
pub mod task;

pub use access::RegistryAccess;
pub use check::check;
pub use deploy::deploy;
pub use error::RunError;
pub use judging::{FIRST_LIST, Judging, LogSource, NoLogs, Pending, judge_stream};
pub use load::{load, load_rules};
