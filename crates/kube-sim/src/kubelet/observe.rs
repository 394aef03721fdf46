//! What the container runtime reports between syncs: containers exiting by themselves
//! and readiness probe results, plus the retry timing that follows from them.

use super::containers::{Cx, RELIST};
use super::probes;
use super::runtime::{CState, Ctr, PodRuntime, Term};
use super::status::should_restart;
use serde_json::Value;
use tokio::time::Instant;

/// When an exited container may be restarted again.
pub fn crash_release(rt: &PodRuntime, c: &Ctr) -> Option<Instant> {
    match &c.state {
        CState::Exited(t) => Some(t.finished + rt.crash_backoff.get(&c.name)),
        _ => None,
    }
}

/// Container exits and readiness probes due by now. Returns whether anything happened.
pub fn runtime_events(rt: &mut PodRuntime, cx: &mut Cx<'_, '_>) -> bool {
    let mut any = false;
    let now_ts = cx.world.timestamp();
    for pos in 0..rt.ctrs.len() {
        let c = rt.ctrs[pos].clone();
        let Some(run) = c.running() else { continue };
        if let Some((at, code, oom)) = run.exit.filter(|e| e.0 <= cx.now) {
            let spec = c.spec(cx.pod);
            let logs = cx
                .behaviour(spec["image"].as_str().unwrap_or_default())
                .logs;
            let fallback = spec["terminationMessagePolicy"] == "FallbackToLogsOnError"
                && code != 0
                && !logs.is_empty();
            rt.ctrs[pos].state = CState::Exited(Term {
                id: run.id.clone(),
                exit_code: code,
                reason: match (oom, code) {
                    (true, _) => "OOMKilled",
                    (false, 0) => "Completed",
                    _ => "Error",
                }
                .into(),
                message: fallback.then(|| format!("{}\n", logs.join("\n"))),
                started_at: run.started_at.clone(),
                finished_at: now_ts.clone(),
                finished: at,
            });
            rt.ctrs[pos].waiting = None;
            let relist = cx.now + RELIST;
            rt.next_sync = Some(rt.next_sync.map_or(relist, |s| s.min(relist)));
            any = true;
            continue;
        }
        if run.next_probe.is_some_and(|p| p <= cx.now) {
            let probe = probes::readiness(c.spec(cx.pod));
            let listening = run
                .ready_after
                .is_some_and(|d| cx.now.duration_since(run.since) >= d);
            let CState::Running(r) = &mut rt.ctrs[pos].state else {
                continue;
            };
            match probe {
                Some(p) if !listening => {
                    r.next_probe = Some(cx.now + p.period);
                    let ip = rt.ip.clone().unwrap_or_default();
                    cx.event(
                        Some(&c),
                        "Warning",
                        "Unhealthy",
                        p.failure(&ip, run.ready_after.is_none()),
                    );
                }
                _ => {
                    r.ready = true;
                    r.next_probe = None;
                }
            }
            any = true;
        }
    }
    any
}

/// Whether a container waits to be (re)started after a failure, so the worker retries.
pub fn needs_retry(pod: &Value, c: &Ctr) -> bool {
    c.waiting.is_some()
        && match &c.state {
            CState::Fresh => true,
            CState::Exited(t) => should_restart(pod, c, t.exit_code),
            CState::Running(_) => false,
        }
}
