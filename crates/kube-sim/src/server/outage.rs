//! An outage a test starts at the moment it cares about (say, when a client's stability
//! window begins): every open watch is cut, and every resource request is answered with one
//! status (429, 401, 503) until the outage ends on the sim's clock. Scenario faults match
//! calls by number; this matches a moment.

use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The current outage, if any, and the signal that cuts open watches.
#[derive(Debug)]
pub struct Outage {
    until: Mutex<Option<(Instant, u16)>>,
    cuts: watch::Sender<u64>,
}

impl Default for Outage {
    fn default() -> Self {
        Outage {
            until: Mutex::new(None),
            cuts: watch::channel(0).0,
        }
    }
}

impl Outage {
    /// From now for `lasting`: cut every open watch and answer every resource request with
    /// `status`.
    pub fn start(&self, status: u16, lasting: Duration) {
        *self.until.lock().expect("outage lock") = Some((Instant::now() + lasting, status));
        self.cuts.send_modify(|n| *n += 1);
    }

    /// The status to answer with now, while an outage lasts.
    pub fn status(&self) -> Option<u16> {
        let mut until = self.until.lock().expect("outage lock");
        match *until {
            Some((end, status)) if Instant::now() < end => Some(status),
            Some(_) => {
                *until = None;
                None
            }
            None => None,
        }
    }

    /// A receiver whose `changed()` fires when the next outage cuts the watches.
    pub fn cuts(&self) -> watch::Receiver<u64> {
        self.cuts.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_outage_answers_its_status_until_it_ends_and_cuts_watches_once() {
        let outage = Outage::default();
        let mut cut = outage.cuts();
        assert_eq!(outage.status(), None);
        outage.start(429, Duration::from_secs(20));
        assert!(cut.has_changed().unwrap());
        cut.mark_unchanged();
        assert_eq!(outage.status(), Some(429));
        tokio::time::sleep(Duration::from_secs(19)).await;
        assert_eq!(outage.status(), Some(429));
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(outage.status(), None);
        assert!(!cut.has_changed().unwrap());
    }
}
