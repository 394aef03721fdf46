//! The words every part of deploy-action shares: the verdict vocabulary (a contract with
//! users), what a run found out (the input of every renderer), the events a run reports
//! while it works, and the durations users write.

pub mod duration;
pub mod events;
pub mod outcome;
pub mod verdict;
