//! PersistentVolumeClaims and PersistentVolumes: binding, provisioning and protection.

mod binder;
mod protection;
mod provision;
mod reclaim;
#[cfg(test)]
mod tests;
mod volumes;

pub use binder::VolumeBinder;
pub use protection::{PvProtectionController, PvcProtectionController};

use crate::engine::Controller;

pub fn controllers() -> Vec<Box<dyn Controller>> {
    vec![
        Box::new(VolumeBinder),
        Box::new(PvcProtectionController),
        Box::new(PvProtectionController),
    ]
}
