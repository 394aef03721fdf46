//! The output layer: the only code that prints. It displays what the pure renderers make.

mod terminal;

pub use terminal::{Terminal, TerminalMode};
