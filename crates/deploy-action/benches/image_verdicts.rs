//! Placeholder: the image-verdict benchmark is being written.
fn main() {}
