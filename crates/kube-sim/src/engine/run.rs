//! The loop itself: one task owns every controller, so reconciles never race and a run
//! under tokio's paused clock is reproducible.

use super::controller::Controller;
use super::queue::Queue;
use super::world::World;
use crate::events::EventRecorder;
use crate::logs::LogStore;
use crate::resources::Registry;
use crate::scenario::Scenario;
use crate::store::{Change, ObjectKey, Store};
use std::sync::Arc;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::{Instant, sleep_until};

/// Owns the controllers and drives them from store changes and timers.
pub struct Engine {
    store: Arc<Store>,
    registry: Arc<Registry>,
    scenario: Arc<Scenario>,
    logs: Arc<LogStore>,
    controllers: Vec<Box<dyn Controller>>,
    recorder: EventRecorder,
    queue: Queue,
}

impl Engine {
    pub fn new(
        store: Arc<Store>,
        registry: Arc<Registry>,
        scenario: Arc<Scenario>,
        logs: Arc<LogStore>,
    ) -> Self {
        Engine {
            store,
            registry,
            scenario,
            logs,
            controllers: Vec::new(),
            recorder: EventRecorder::default(),
            queue: Queue::default(),
        }
    }

    pub fn add(&mut self, controller: Box<dyn Controller>) {
        self.controllers.push(controller);
    }

    /// Run until the store is dropped.
    pub async fn run(mut self) {
        let mut rx = self.store.subscribe();
        self.resync_all();
        loop {
            self.process_due();
            let next = self.queue.next_due();
            tokio::select! {
                biased;
                msg = rx.recv() => match msg {
                    Ok(change) => self.route(&change),
                    Err(RecvError::Lagged(_)) => self.resync_all(),
                    Err(RecvError::Closed) => return,
                },
                () = sleep_until(next.unwrap_or_else(Instant::now)), if next.is_some() => {}
            }
        }
    }

    fn enqueue(&mut self, current: usize, keys: Vec<ObjectKey>) {
        let at = Instant::now() + self.scenario.controller_delay;
        for key in keys {
            self.queue.add(current, key, at);
        }
    }

    fn route(&mut self, change: &Change) {
        for i in 0..self.controllers.len() {
            let keys = {
                let ctrl = &self.controllers[i];
                let world = World {
                    store: &self.store,
                    registry: &self.registry,
                    scenario: &self.scenario,
                    logs: &self.logs,
                    recorder: &mut self.recorder,
                    queue: &mut self.queue,
                    current: i,
                    manager: ctrl.name(),
                };
                ctrl.keys_for(change, &world)
            };
            self.enqueue(i, keys);
        }
    }

    fn resync_all(&mut self) {
        for i in 0..self.controllers.len() {
            let keys = {
                let ctrl = &self.controllers[i];
                let world = World {
                    store: &self.store,
                    registry: &self.registry,
                    scenario: &self.scenario,
                    logs: &self.logs,
                    recorder: &mut self.recorder,
                    queue: &mut self.queue,
                    current: i,
                    manager: ctrl.name(),
                };
                ctrl.resync(&world)
            };
            self.enqueue(i, keys);
        }
    }

    fn process_due(&mut self) {
        while let Some((i, key)) = self.queue.pop_due(Instant::now()) {
            if self.store.is_frozen(&key) {
                continue;
            }
            let ctrl = &mut self.controllers[i];
            let mut world = World {
                store: &self.store,
                registry: &self.registry,
                scenario: &self.scenario,
                logs: &self.logs,
                recorder: &mut self.recorder,
                queue: &mut self.queue,
                current: i,
                manager: ctrl.name(),
            };
            ctrl.reconcile(&key, &mut world);
        }
    }
}
