//! When the judging loop must look at a resource though nothing it reads changed: its
//! deadline, or the end of its stability window. Kept in time order, so a pass of the loop
//! finds what is due without asking each of thousands of open resources (at 2,500
//! Deployments that asking, twice a pass, was about 3% of a profile's samples).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tokio::time::Instant;

/// Times by resource index. A time stays here after it stops mattering (the resource
/// decided, its window moved); the caller's `current` test drops it when it comes up.
#[derive(Debug, Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<(Instant, usize)>>,
}

impl Timers {
    /// Look at resource `index` at `at`.
    pub fn push(&mut self, at: Instant, index: usize) {
        self.heap.push(Reverse((at, index)));
    }

    /// The resources with a current time at or before `now`, each taken off (a resource
    /// whose time passed is looked at once for it, not on every pass after). `current`:
    /// whether a time still stands for its resource.
    pub fn take_due(
        &mut self,
        now: Instant,
        current: impl Fn(Instant, usize) -> bool,
    ) -> Vec<usize> {
        let mut due = Vec::new();
        while let Some(&Reverse((at, index))) = self.heap.peek() {
            if at > now {
                break;
            }
            self.heap.pop();
            if current(at, index) {
                due.push(index);
            }
        }
        due
    }

    /// The earliest current time, dropping the ones before it that no longer stand.
    pub fn next(&mut self, current: impl Fn(Instant, usize) -> bool) -> Option<Instant> {
        while let Some(&Reverse((at, index))) = self.heap.peek() {
            if current(at, index) {
                return Some(at);
            }
            self.heap.pop();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn due_times_come_once_in_order_and_stale_ones_are_dropped() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut timers = Timers::default();
        timers.push(at(30), 0);
        timers.push(at(10), 1);
        timers.push(at(20), 2);
        // Resource 1's window moved from 10 s to 25 s: its 10 s time no longer stands.
        timers.push(at(25), 1);
        let current = |t: Instant, i: usize| !(i == 1 && t == at(10));
        assert_eq!(timers.next(current), Some(at(20)));
        assert!(timers.take_due(at(19), current).is_empty());
        assert_eq!(timers.take_due(at(25), current), vec![2, 1]);
        // Taken once: the same moment asks for nothing more.
        assert!(timers.take_due(at(25), current).is_empty());
        assert_eq!(timers.next(current), Some(at(30)));
        // Resource 0 was decided: nothing is left to wait for.
        let decided = |_: Instant, i: usize| i != 0;
        assert_eq!(timers.next(decided), None);
        assert!(timers.take_due(at(60), decided).is_empty());
    }
}
