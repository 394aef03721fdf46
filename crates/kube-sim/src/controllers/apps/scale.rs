//! Scaling a Deployment without rolling it (`DeploymentController.scale`): the single
//! active ReplicaSet takes the new size; during a rollout the change is shared out in
//! proportion to each ReplicaSet's size (`deploymentutil.GetProportion`).

use super::replicasets::{MAX_REPLICAS, Rs, by_creation, by_size_newer, by_size_older, sum};
use super::spec::Dep;
use super::sync::{scale_and_record, scale_replica_set};
use crate::engine::{World, WriteError};

/// `deploymentutil.FindActiveOrLatest`: the one ReplicaSet with replicas, or the newest
/// when none has any; `None` when several are active.
fn active_or_latest<'a>(new: Option<&'a Rs>, old: &'a [Rs]) -> Option<&'a Rs> {
    let mut newest_first: Vec<&Rs> = old.iter().collect();
    newest_first.sort_by(|a, b| by_creation(b, a));
    let active: Vec<&Rs> = newest_first
        .iter()
        .copied()
        .chain(new)
        .filter(|rs| rs.replicas() > 0)
        .collect();
    match active.len() {
        0 => new.or_else(|| newest_first.first().copied()),
        1 => Some(active[0]),
        _ => None,
    }
}

/// `deploymentutil.IsSaturated`: the new ReplicaSet has all the replicas and all are available.
fn is_saturated(d: &Dep, rs: Option<&Rs>) -> bool {
    rs.is_some_and(|rs| {
        rs.replicas() == d.spec.replicas
            && rs.desired_annotation() == Some(d.spec.replicas)
            && rs.available() == d.spec.replicas
    })
}

/// `getReplicaSetFraction`: this ReplicaSet's share of the size change.
fn fraction(rs: &Rs, d: &Dep) -> i32 {
    if d.spec.replicas == 0 {
        return -rs.replicas();
    }
    let max_now = d.spec.replicas + d.spec.max_surge();
    let mut max_before = rs
        .annotation(MAX_REPLICAS)
        .and_then(|m| m.parse::<i32>().ok())
        .unwrap_or(0);
    if max_before == 0 {
        max_before = if d.status.replicas != 0 {
            d.status.replicas
        } else {
            max_now
        };
    }
    let scaled = f64::from(rs.replicas() * max_now) / f64::from(max_before);
    scaled.round() as i32 - rs.replicas()
}

/// `deploymentutil.GetProportion`.
fn proportion(rs: &Rs, d: &Dep, to_add: i32, added: i32) -> i32 {
    if rs.replicas() == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let f = fraction(rs, d);
    let allowed = to_add - added;
    if to_add > 0 {
        f.min(allowed)
    } else {
        f.max(allowed)
    }
}

pub(super) fn scale(
    world: &mut World<'_>,
    d: &Dep,
    new: Option<&Rs>,
    old: &[Rs],
) -> Result<(), WriteError> {
    if let Some(rs) = active_or_latest(new, old) {
        if rs.replicas() != d.spec.replicas {
            scale_and_record(world, d, rs, d.spec.replicas)?;
        }
        return Ok(());
    }
    if is_saturated(d, new) {
        for rs in old.iter().filter(|rs| rs.replicas() > 0) {
            scale_and_record(world, d, rs, 0)?;
        }
        return Ok(());
    }
    if !d.spec.is_rolling() {
        return Ok(());
    }
    let mut all: Vec<&Rs> = old
        .iter()
        .chain(new)
        .filter(|rs| rs.replicas() > 0)
        .collect();
    let allowed = if d.spec.replicas > 0 {
        d.spec.replicas + d.spec.max_surge()
    } else {
        0
    };
    let to_add = allowed - sum(all.iter().copied(), Rs::replicas);
    match to_add.signum() {
        1 => all.sort_by(|a, b| by_size_newer(a, b)),
        -1 => all.sort_by(|a, b| by_size_older(a, b)),
        _ => {}
    }
    let mut added = 0;
    let mut sizes: Vec<i32> = Vec::with_capacity(all.len());
    for rs in &all {
        let p = proportion(rs, d, to_add, added);
        sizes.push(rs.replicas() + p);
        added += p;
    }
    for (i, rs) in all.iter().enumerate() {
        if i == 0 && to_add != 0 {
            sizes[0] = (sizes[0] + to_add - added).max(0);
        }
        scale_replica_set(world, d, rs, sizes[i])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ObjectKey;
    use serde_json::json;

    fn rs(name: &str, created: &str, replicas: i32, max: &str) -> Rs {
        Rs::new(
            &json!({"metadata": {"name": name, "namespace": "shop", "creationTimestamp": created,
            "annotations": {MAX_REPLICAS: max}}, "spec": {"replicas": replicas}}),
        )
    }

    #[test]
    fn shares_a_resize_in_proportion() {
        // 10 replicas, surge 3 (25%): a rollout at old 8 / new 5 then scaled to 20 (surge 5).
        let d = Dep::new(
            ObjectKey::new("apps", "deployments", "shop", "web"),
            json!({"metadata": {"name": "web"}, "spec": {"replicas": 20}, "status": {"replicas": 13}}),
            "2026-01-01T00:00:00Z",
        );
        let (old, new) = (
            rs("web-old", "2026-01-01T00:00:00Z", 8, "13"),
            rs("web-new", "2026-01-01T00:01:00Z", 5, "13"),
        );
        assert_eq!(fraction(&old, &d), 7);
        assert_eq!(fraction(&new, &d), 5);
        assert_eq!(proportion(&old, &d, 12, 0), 7);
        assert_eq!(proportion(&new, &d, 12, 7), 5);
        assert!(active_or_latest(Some(&new), std::slice::from_ref(&old)).is_none());
        let idle = rs("web-idle", "2026-01-01T00:02:00Z", 0, "13");
        assert_eq!(
            active_or_latest(None, &[old.clone(), idle.clone()])
                .unwrap()
                .name(),
            "web-old"
        );
        assert_eq!(
            active_or_latest(Some(&idle), &[]).unwrap().name(),
            "web-idle"
        );
    }
}
