//! Lets watch events gather while a deploy is judged. The judging loop waits on watch
//! streams that bring a few events every millisecond at thousands of pods; woken for each
//! as it came, the process slept and woke 4,400 times a run at 2,000 pods and 22,000 at
//! 10,000, and on the 2-core virtual machine it was measured on those context switches
//! cost a tenth of its CPU (the runtime's park, in a profile at 10,000 pods). While a
//! judging loop runs, the runtime's thread pauses [`GATHER`] before each wait for I/O, so
//! that what arrives meanwhile is read, decoded and judged in one wake: 1,400 and 7,300
//! wakes, and 17% and 6% less CPU (docs/benchmark.md).
//!
//! Only idle time is lengthened: a thread with work never pauses, and a verdict comes at
//! most [`GATHER`] later. Applying is never paced: each of its round trips would wait too
//! (3 ms tripled the wall time of an apply of 2,000 ConfigMaps).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// How long the thread sleeps before each wait for I/O while a deploy is judged: little
/// beside the second within which a verdict must follow the event that decides it, and
/// half the judging loop's own batch window (20 ms). 3 ms saved less (3-5% of the CPU).
pub const GATHER: Duration = Duration::from_millis(10);

/// The process's pacing, read by the runtime [`Pacing::runtime`] builds.
pub static PACING: Pacing = Pacing::new();

/// Whether the runtime pauses before waiting for I/O, and how often it has.
#[derive(Debug, Default)]
pub struct Pacing {
    /// Judging loops underway, one [`Gathering`] each: the thread pauses while any is.
    judging: AtomicU32,
    pauses: AtomicU64,
}

impl Pacing {
    pub const fn new() -> Pacing {
        Pacing {
            judging: AtomicU32::new(0),
            pauses: AtomicU64::new(0),
        }
    }

    /// A single-threaded runtime (the binary's: one judging loop fed by watch streams
    /// gains nothing from a pool, docs/benchmark.md) that pauses before waiting for I/O
    /// while `self` has a [`Gathering`] underway.
    pub fn runtime(&'static self) -> std::io::Result<tokio::runtime::Runtime> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_park(|| self.before_idle_wait())
            .build()
    }

    /// Pacing on until the guard is dropped (nested guards count).
    pub fn gathering(&'static self) -> Gathering {
        self.judging.fetch_add(1, Ordering::Relaxed);
        Gathering(self)
    }

    /// How long the thread pauses before its next wait for I/O, if at all.
    pub fn pause(&self) -> Option<Duration> {
        (self.judging.load(Ordering::Relaxed) > 0).then_some(GATHER)
    }

    /// How many times the thread has paused.
    pub fn pauses(&self) -> u64 {
        self.pauses.load(Ordering::Relaxed)
    }

    /// The runtime's hook, called when it has nothing to run and is about to wait for I/O
    /// or a timer: a blocking sleep, on purpose, during which the kernel gathers what
    /// arrives.
    fn before_idle_wait(&self) {
        if let Some(pause) = self.pause() {
            self.pauses.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(pause);
        }
    }
}

/// Pacing on for as long as it lives: a judging loop holds one.
#[must_use = "pacing ends when the guard is dropped"]
#[derive(Debug)]
pub struct Gathering(&'static Pacing);

impl Drop for Gathering {
    fn drop(&mut self) {
        self.0.judging.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pacing of its own, so tests running beside a judging loop do not see its guard.
    fn own() -> &'static Pacing {
        Box::leak(Box::new(Pacing::new()))
    }

    #[test]
    fn the_thread_pauses_only_while_a_judging_loop_runs() {
        let pacing = own();
        assert_eq!(pacing.pause(), None);
        let outer = pacing.gathering();
        let inner = pacing.gathering();
        assert_eq!(pacing.pause(), Some(GATHER));
        drop(inner);
        assert_eq!(pacing.pause(), Some(GATHER), "the outer loop still runs");
        drop(outer);
        assert_eq!(pacing.pause(), None);
    }

    #[test]
    fn its_runtime_pauses_before_waiting_while_gathering_and_never_otherwise() {
        let pacing = own();
        let rt = pacing.runtime().unwrap();
        // Waiting on a timer with nothing else to run parks the thread.
        let idle = || async { tokio::time::sleep(Duration::from_millis(1)).await };
        rt.block_on(idle());
        assert_eq!(pacing.pauses(), 0);
        rt.block_on(async {
            let _gathering = pacing.gathering();
            idle().await;
        });
        assert!(pacing.pauses() >= 1, "{}", pacing.pauses());
        let after = pacing.pauses();
        rt.block_on(idle());
        assert_eq!(pacing.pauses(), after);
    }
}
