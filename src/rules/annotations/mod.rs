//! The annotations a manifest tunes its own verdict with (timeouts, rollout modes), and
//! the checks that reject a typo in them before anything is applied.

pub mod rollout_mode;
pub mod timeout;
pub mod validate;
