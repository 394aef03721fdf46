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

/// What every reconcile shares; kept apart from the controllers so one can be borrowed
/// mutably while a controller runs.
struct Shared {
    store: Arc<Store>,
    registry: Arc<Registry>,
    scenario: Arc<Scenario>,
    logs: Arc<LogStore>,
    recorder: EventRecorder,
    queue: Queue,
}

impl Shared {
    fn world(&mut self, current: usize, manager: &'static str) -> World<'_> {
        World {
            store: &self.store,
            registry: &self.registry,
            scenario: &self.scenario,
            logs: &self.logs,
            recorder: &mut self.recorder,
            queue: &mut self.queue,
            current,
            manager,
        }
    }

    fn enqueue(&mut self, current: usize, keys: Vec<ObjectKey>) {
        let at = Instant::now() + self.scenario.controller_delay;
        for key in keys {
            self.queue.add(current, key, at);
        }
    }
}

/// Owns the controllers and drives them from store changes and timers.
pub struct Engine {
    shared: Shared,
    controllers: Vec<Box<dyn Controller>>,
}

impl Engine {
    pub fn new(
        store: Arc<Store>,
        registry: Arc<Registry>,
        scenario: Arc<Scenario>,
        logs: Arc<LogStore>,
    ) -> Self {
        Engine {
            shared: Shared {
                store,
                registry,
                scenario,
                logs,
                recorder: EventRecorder::default(),
                queue: Queue::default(),
            },
            controllers: Vec::new(),
        }
    }

    pub fn add(&mut self, controller: Box<dyn Controller>) {
        self.controllers.push(controller);
    }

    /// Run until the store is dropped.
    pub async fn run(mut self) {
        let mut rx = self.shared.store.subscribe();
        self.resync_all();
        loop {
            self.process_due();
            let next = self.shared.queue.next_due();
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

    fn route(&mut self, change: &Change) {
        for (i, ctrl) in self.controllers.iter().enumerate() {
            let keys = ctrl.keys_for(change, &self.shared.world(i, ctrl.name()));
            self.shared.enqueue(i, keys);
        }
    }

    fn resync_all(&mut self) {
        for (i, ctrl) in self.controllers.iter().enumerate() {
            let keys = ctrl.resync(&self.shared.world(i, ctrl.name()));
            self.shared.enqueue(i, keys);
        }
    }

    fn process_due(&mut self) {
        while let Some((i, key)) = self.shared.queue.pop_due(Instant::now()) {
            if self.shared.store.is_frozen(&key) {
                continue;
            }
            let ctrl = &mut self.controllers[i];
            let name = ctrl.name();
            ctrl.reconcile(&key, &mut self.shared.world(i, name));
        }
    }
}
