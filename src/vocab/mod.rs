//! The words every part of deploy-action shares: the verdict vocabulary (a contract with
//! users), what a run found out (the input of every renderer), and the events a run
//! reports while it works.

pub mod events;
pub mod outcome;
pub mod verdict;
