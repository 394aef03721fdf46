//! The process's exit code, from one match over every way a run can end (documented in
//! `--help` and the README: 0, 1, 70, 2, and 128 + the signal).

use crate::vocab::verdict::RunResult;

/// How a run ended, as its exit code tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The resources got their verdicts (or the run stopped on a failure): its result.
    Judged(RunResult),
    /// Nothing was applied: the input, the configuration or the cluster refused the run
    /// before it started (what and why is printed).
    Refused,
    /// Interrupted by signal `n` (2 SIGINT, 15 SIGTERM), its check run completed as
    /// cancelled.
    Interrupted(u8),
}

/// The documented exit code of `ended`.
pub fn code(ended: Ended) -> u8 {
    match ended {
        Ended::Judged(RunResult::Success) => 0,
        Ended::Judged(RunResult::Failure) => 1,
        Ended::Judged(RunResult::TimedOut) => 70,
        Ended::Refused => 2,
        // As shells report a process ended by the signal; a cancelled result without one
        // counts as SIGINT.
        Ended::Interrupted(signal) => 128 + signal,
        Ended::Judged(RunResult::Cancelled) => 128 + 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ending_has_its_documented_code() {
        let codes: Vec<u8> = [
            Ended::Judged(RunResult::Success),
            Ended::Judged(RunResult::Failure),
            Ended::Judged(RunResult::TimedOut),
            Ended::Refused,
            Ended::Interrupted(2),
            Ended::Interrupted(15),
            Ended::Judged(RunResult::Cancelled),
        ]
        .into_iter()
        .map(code)
        .collect();
        assert_eq!(codes, [0, 1, 70, 2, 130, 143, 130]);
    }
}
