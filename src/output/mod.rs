//! The output layer: the only code that prints. It displays what the pure renderers make.

mod ci_states;
mod environment;
pub(crate) mod github;
mod redacting;
mod terminal;

pub use environment::Environment;
pub use github::{CANCELLED_FINISH_LIMIT, Published, Publisher, Tee};

pub use redacting::Redacting;
pub use terminal::{Terminal, TerminalMode};
