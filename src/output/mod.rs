//! The output layer: the only code that prints. It displays what the pure renderers make.

mod github;
mod terminal;

pub use github::{Published, Publisher, Tee};

pub use terminal::{Terminal, TerminalMode};
