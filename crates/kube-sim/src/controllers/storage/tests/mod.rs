//! Scenario tests of volume binding and provisioning.

mod claims;
