//! Placeholder until this group of controllers lands.

use crate::engine::Controller;

pub fn controllers() -> Vec<Box<dyn Controller>> {
    Vec::new()
}
