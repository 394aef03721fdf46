//! What every step of a run works with, passed as one value: the cluster, the settings,
//! the registry access, the clock the run started on, and where its progress goes.

use super::access::RegistryAccess;
use crate::cluster::Connection;
use crate::config::Config;
use crate::vocab::events::{Observer, RunEvent};
use tokio::time::Instant;

pub struct Context<'a> {
    pub conn: &'a Connection,
    pub config: &'a Config,
    pub access: &'a RegistryAccess,
    /// When the run started: every event's time and every outcome's duration count from it.
    pub start: Instant,
    pub observer: &'a mut dyn Observer,
}

impl<'a> Context<'a> {
    /// A run starting now.
    pub fn new(
        conn: &'a Connection,
        config: &'a Config,
        access: &'a RegistryAccess,
        observer: &'a mut dyn Observer,
    ) -> Self {
        Context {
            conn,
            config,
            access,
            start: Instant::now(),
            observer,
        }
    }

    /// Seconds since the start, as outcomes and the run's total carry them.
    pub fn seconds(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Report `event`, timed from the start.
    pub fn event(&mut self, event: RunEvent) {
        self.observer.event(self.start.elapsed(), event);
    }
}
