//! The door every event of a run comes through on its way to the outputs: the run's
//! [`Redactor`] masks it once, so the terminal and GitHub never see an unmasked one.

use crate::render::Redactor;
use crate::vocab::events::{Observer, RunEvent};
use std::time::Duration;

/// Masks each event, then passes it on.
pub struct Redacting<'a> {
    redactor: &'a Redactor,
    inner: &'a mut dyn Observer,
}

impl<'a> Redacting<'a> {
    pub fn new(redactor: &'a Redactor, inner: &'a mut dyn Observer) -> Self {
        Redacting { redactor, inner }
    }
}

impl Observer for Redacting<'_> {
    fn event(&mut self, at: Duration, event: RunEvent) {
        self.inner.event(at, self.redactor.event(event));
    }
}
