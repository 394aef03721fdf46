//! One pod-worker sync: mount volumes, set up the sandbox, then walk the containers as
//! `SyncPod` does (init containers one at a time to completion, then every regular
//! container), and decide when the worker syncs again.

use super::config_refs::{env_error, missing_volumes, mount_failed_message};
use super::containers::{self, Cx, Flags, RELIST};
use super::observe::{crash_release, needs_retry};
use super::runtime::{CState, PodRuntime};
use super::status::should_restart;
use std::time::Duration;
use tokio::time::Instant;

/// A pod worker that hit an error syncs the pod again after this long.
const ERROR_RESYNC: Duration = Duration::from_secs(10);

const VOLUMES: &str = "volumes";

/// Whether the pod has reached a terminal phase and will never run anything again.
fn terminal(rt: &PodRuntime, cx: &Cx<'_, '_>) -> bool {
    let pod = cx.pod;
    let policy = pod["spec"]["restartPolicy"].as_str().unwrap_or("Always");
    let init_failed = rt.ctrs.iter().any(|c| {
        c.init
            && !c.sidecar
            && matches!(&c.state, CState::Exited(t) if t.exit_code != 0)
            && !should_restart(pod, c, 1)
    });
    if init_failed {
        return true;
    }
    let main: Vec<_> = rt.ctrs.iter().filter(|c| !c.init).collect();
    !main.is_empty()
        && policy != "Always"
        && main
            .iter()
            .all(|c| matches!(&c.state, CState::Exited(t) if !should_restart(pod, c, t.exit_code)))
}

/// A sync of the pod by its worker.
pub fn sync(rt: &mut PodRuntime, cx: &mut Cx<'_, '_>) {
    rt.next_sync = None;
    if terminal(rt, cx) {
        rt.finished = true;
        rt.sandbox_alive = false;
        return;
    }
    if !rt.mounted && !mount(rt, cx) {
        return;
    }
    let mut flags = Flags::default();
    if rt.ip.is_none() {
        rt.ip = Some(cx.node.allocate_ip());
        flags.runtime_changed = true;
    }
    rt.sandbox_alive = true;
    walk(rt, cx, 0, &mut flags);
    schedule(rt, cx, flags);
}

/// The pull the worker was blocked on has ended: finish that container, go on with the rest.
pub fn complete_pull(rt: &mut PodRuntime, cx: &mut Cx<'_, '_>) {
    let mut flags = Flags::default();
    let pos = containers::finish_pull(rt, cx, &mut flags);
    let c = &rt.ctrs[pos];
    let go_on = !c.init || (c.sidecar && c.running().is_some());
    if go_on {
        walk(rt, cx, pos + 1, &mut flags);
    }
    schedule(rt, cx, flags);
}

/// Whether a container stuck on CreateContainerConfigError would now get its environment.
pub fn config_unblocked(rt: &PodRuntime, cx: &Cx<'_, '_>) -> bool {
    rt.ctrs.iter().any(|c| {
        c.waiting
            .as_ref()
            .is_some_and(|w| w.reason == "CreateContainerConfigError")
            && env_error(cx.world, cx.namespace(), c.spec(cx.pod)).is_none()
    })
}

/// Wait for ConfigMap and Secret volumes; each failed attempt records `FailedMount`.
fn mount(rt: &mut PodRuntime, cx: &mut Cx<'_, '_>) -> bool {
    let missing = missing_volumes(cx.world, cx.namespace(), cx.pod);
    if missing.is_empty() {
        rt.mounted = true;
        return true;
    }
    if !rt.mount_backoff.in_backoff_since_update(VOLUMES, cx.now) {
        for (volume, error) in &missing {
            cx.event(
                None,
                "Warning",
                "FailedMount",
                mount_failed_message(volume, error),
            );
        }
        rt.mount_backoff.next(VOLUMES, cx.now);
    }
    rt.next_sync = rt.mount_backoff.release_after_update(VOLUMES);
    false
}

/// Start or restart what needs it, from container `from` on; stops where the worker
/// would block (a pull, an init container still running or failing).
fn walk(rt: &mut PodRuntime, cx: &mut Cx<'_, '_>, from: usize, flags: &mut Flags) {
    for pos in from..rt.ctrs.len() {
        if rt.pulling.is_some() {
            return;
        }
        let c = &rt.ctrs[pos];
        let blocking_init = c.init && !c.sidecar;
        match &c.state {
            CState::Running(_) if blocking_init => return,
            CState::Running(_) => continue,
            CState::Exited(t) if blocking_init && t.exit_code == 0 => continue,
            CState::Exited(t) => {
                if should_restart(cx.pod, c, t.exit_code) {
                    containers::restart_or_back_off(rt, pos, cx, flags);
                }
                if blocking_init {
                    return;
                }
            }
            CState::Fresh => {
                containers::start(rt, pos, cx, flags);
                if blocking_init {
                    return;
                }
            }
        }
        let c = &rt.ctrs[pos];
        if c.sidecar && c.running().is_none() {
            return;
        }
    }
}

/// When the worker syncs next: right after a runtime change or a fresh failure (the PLEG
/// relist), every ten seconds while something keeps failing, and when a back-off ends.
fn schedule(rt: &mut PodRuntime, cx: &Cx<'_, '_>, flags: Flags) {
    rt.next_sync = None;
    if rt.pulling.is_some() {
        return;
    }
    rt.ip_published = rt.ip.is_some();
    let now = cx.now;
    let mut due: Vec<Instant> = Vec::new();
    if flags.runtime_changed || flags.new_failure {
        due.push(now + RELIST);
    }
    for c in rt.ctrs.iter().filter(|c| needs_retry(cx.pod, c)) {
        due.push(now + ERROR_RESYNC);
        let image = c.spec(cx.pod)["image"].as_str().unwrap_or_default();
        due.extend(
            rt.image_backoff
                .release_after_update(image)
                .filter(|t| *t > now),
        );
        due.extend(crash_release(rt, c).filter(|t| *t > now));
    }
    rt.next_sync = due.into_iter().min();
}
