//! The work queue: (controller, key) items due at simulated instants, deduplicated so a
//! key waits at most once per controller, popped in (time, insertion) order.

use crate::store::ObjectKey;
use std::collections::{BTreeMap, HashMap};
use tokio::time::Instant;

#[derive(Debug, Default)]
pub struct Queue {
    due: BTreeMap<(Instant, u64), (usize, ObjectKey)>,
    index: HashMap<(usize, ObjectKey), (Instant, u64)>,
    seq: u64,
}

impl Queue {
    /// Schedule `key` for controller `ctrl` at `at`, or earlier if it is already queued earlier.
    pub fn add(&mut self, ctrl: usize, key: ObjectKey, at: Instant) {
        let id = (ctrl, key);
        if let Some(&(existing, seq)) = self.index.get(&id) {
            if existing <= at {
                return;
            }
            self.due.remove(&(existing, seq));
        }
        self.seq += 1;
        self.due.insert((at, self.seq), id.clone());
        self.index.insert(id, (at, self.seq));
    }

    pub fn next_due(&self) -> Option<Instant> {
        self.due.keys().next().map(|(at, _)| *at)
    }

    /// The next item due at or before `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<(usize, ObjectKey)> {
        let (&(at, seq), _) = self.due.iter().next()?;
        if at > now {
            return None;
        }
        let item = self.due.remove(&(at, seq))?;
        self.index.remove(&item);
        Some(item)
    }

    pub fn len(&self) -> usize {
        self.due.len()
    }

    pub fn is_empty(&self) -> bool {
        self.due.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn keeps_the_earliest_time_per_key_and_pops_in_order() {
        let t0 = Instant::now();
        let key = |n: &str| ObjectKey::new("apps", "deployments", "ns", n);
        let mut q = Queue::default();
        q.add(0, key("a"), t0 + Duration::from_secs(5));
        q.add(0, key("b"), t0 + Duration::from_secs(2));
        q.add(0, key("a"), t0 + Duration::from_secs(1));
        q.add(0, key("a"), t0 + Duration::from_secs(9));
        q.add(1, key("a"), t0 + Duration::from_secs(2));
        assert_eq!(q.len(), 3);
        assert_eq!(q.pop_due(t0), None);
        let now = t0 + Duration::from_secs(2);
        assert_eq!(q.pop_due(now), Some((0, key("a"))));
        assert_eq!(q.pop_due(now), Some((0, key("b"))));
        assert_eq!(q.pop_due(now), Some((1, key("a"))));
        assert!(q.is_empty());
    }
}
