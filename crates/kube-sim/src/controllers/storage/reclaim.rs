//! `syncVolume`: a volume is Available without a claim, Bound to its claim, or Released
//! once the claim is gone, and then deleted when its reclaim policy is Delete.

use super::provision::{pvc_key, set_phase};
use crate::controllers::workloads::objects::{is_deleting, name, str_at, uid};
use crate::engine::World;
use crate::store::{DeleteOptions, ObjectKey};
use serde_json::{Value, json};

/// `syncVolume`: Available, Bound, or Released (and deleted under reclaimPolicy Delete).
pub(crate) fn sync_volume(world: &mut World<'_>, key: &ObjectKey, pv: &Value) {
    if is_deleting(pv) {
        return;
    }
    let Some(claim_ref) = pv.pointer("/spec/claimRef").filter(|r| !r.is_null()) else {
        if str_at(pv, "/status/phase") != "Available" {
            set_phase(world, key, pv, json!({"phase": "Available"}));
        }
        return;
    };
    let claim = world.get(&pvc_key(
        str_at(claim_ref, "/namespace"),
        str_at(claim_ref, "/name"),
    ));
    let ref_uid = str_at(claim_ref, "/uid");
    match claim {
        Some(c) if ref_uid.is_empty() || uid(&c) == ref_uid => {
            let phase = if str_at(&c, "/spec/volumeName") == name(pv) {
                "Bound"
            } else {
                "Available"
            };
            if str_at(pv, "/status/phase") != phase && phase == "Bound" {
                set_phase(world, key, pv, json!({"phase": phase}));
            }
        }
        _ => {
            if str_at(pv, "/status/phase") != "Released" {
                set_phase(world, key, pv, json!({"phase": "Released"}));
            }
            let provisioned =
                !str_at(pv, "/metadata/annotations/pv.kubernetes.io~1provisioned-by").is_empty();
            if str_at(pv, "/spec/persistentVolumeReclaimPolicy") == "Delete" && provisioned {
                let _ = world.delete(key, DeleteOptions::default());
            }
        }
    }
}
