//! Deleting a pod on its node: the kubelet stops the containers (`Killing`), lets them
//! exit within the grace period, writes the terminal status and removes the pod.

use super::containers::Cx;
use super::runtime::{CState, PodRuntime, Term};
use std::time::Duration;

/// How long the simulated containers take to stop after SIGTERM.
const STOP_TIME: Duration = Duration::from_secs(1);

/// The deletion was noticed: stop every running container.
pub fn begin(rt: &mut PodRuntime, cx: &mut Cx<'_, '_>) {
    let meta = &cx.pod["metadata"];
    let grace = meta["deletionGracePeriodSeconds"]
        .as_u64()
        .or_else(|| cx.pod["spec"]["terminationGracePeriodSeconds"].as_u64())
        .unwrap_or(30);
    for c in rt.ctrs.clone().iter().filter(|c| c.running().is_some()) {
        cx.event(
            Some(c),
            "Normal",
            "Killing",
            format!("Stopping container {}", c.name),
        );
    }
    for c in &mut rt.ctrs {
        if let CState::Running(r) = &mut c.state {
            r.exit = None;
            r.next_probe = None;
        }
    }
    rt.pulling = None;
    rt.next_sync = None;
    rt.remove_at = Some(cx.now + STOP_TIME.min(Duration::from_secs(grace)));
}

/// The containers have stopped (exiting 0 on SIGTERM). Returns whether any container ever
/// ran, i.e. whether there is a final status worth writing.
pub fn finish(rt: &mut PodRuntime, cx: &mut Cx<'_, '_>) -> bool {
    let now_ts = cx.world.timestamp();
    for c in &mut rt.ctrs {
        if let CState::Running(r) = &c.state {
            c.state = CState::Exited(Term {
                id: r.id.clone(),
                exit_code: 0,
                reason: "Completed".into(),
                message: None,
                started_at: r.started_at.clone(),
                finished_at: now_ts.clone(),
                finished: cx.now,
            });
        }
    }
    rt.sandbox_alive = false;
    rt.finished = true;
    rt.stopped = true;
    rt.ctrs.iter().any(super::runtime::Ctr::ever_created)
}
