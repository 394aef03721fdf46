//! Judging: watch what the targets' rules read and give each resource its verdict.
//! [`judge`] is the one way every command (deploy, watch, restart, run) reaches its
//! verdicts; the loop itself ([`judge_stream`]) takes any stream of watch events, so a
//! test can feed it one.

mod explain;
mod feed;
mod stream;
#[cfg(test)]
mod tests;
mod timers;
mod watched;

pub use explain::{LogSource, NoLogs};
pub use stream::{Judging, judge_stream};
pub use watched::FIRST_LIST;

use super::context::Context;
use super::pruning::Deleting;
use super::scopes;
use crate::cluster::Served;
use crate::cluster::watch;
use crate::manifest::Manifest;
use crate::rules::{Prepared, Target};
use crate::vocab::events::RunEvent;
use crate::vocab::outcome::{Outcome, RunOutcome};
use crate::vocab::verdict::RunResult;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// A resource to judge: which manifest, its identity, and when it was applied.
#[derive(Debug, Clone)]
pub struct Pending {
    pub index: usize,
    pub target: Target,
    pub applied_at: Instant,
}

/// Judge `targets` (beside `decided`, the outcomes already known), watching what their
/// rules read; with `--prune`, wait beside them for the `deleting` members to go. A
/// failure that ends the run (fail fast) stops that wait. Outcomes come in manifest order,
/// the pruned last.
pub async fn judge(
    ctx: &mut Context<'_>,
    served: &Served,
    manifests: &[Manifest],
    targets: Vec<Pending>,
    decided: Vec<Outcome>,
    deleting: Option<Deleting>,
) -> RunOutcome {
    let (conn, config) = (ctx.conn, ctx.config);
    // The watches' events gather between wakes until the verdicts are in.
    let _gathering = crate::pacing::PACING.gathering();
    let target_list: Vec<Target> = targets.iter().map(|p| p.target.clone()).collect();
    let scopes = scopes::resolve(served, &target_list, config.selector_string().as_deref());
    let (tx, mut rx) = mpsc::channel(1024);
    let handles = watch::spawn(&conn.client, &scopes, &tx, |text, head| {
        Prepared::from_parts(text, head).ok()
    });
    drop(tx);
    let judging = Judging {
        manifests,
        timeout: config.timeout,
        settle: config.settle,
        fail_fast: config.fail_fast,
        lookups: ctx.access.lookups(conn, config.image_preflight),
        logs: &conn.client,
        health_rules: config.health_rules.clone(),
        absent_fails: config.absent_fails(),
        start: ctx.start,
        observer: &mut *ctx.observer,
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let events = futures::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let judged = async {
        let outcome = judge_stream(judging, &scopes, targets, decided, events).await;
        for h in handles {
            h.abort();
        }
        if config.fail_fast && outcome.result == RunResult::Failure {
            let _ = stop.send(true);
        }
        outcome
    };
    let waiting = async {
        match deleting {
            Some(d) => d.wait(conn, stopped).await,
            None => Vec::new(),
        }
    };
    let (mut outcome, pruned) = tokio::join!(judged, waiting);
    for o in &pruned {
        ctx.event(RunEvent::Verdict(std::sync::Arc::new(o.clone())));
    }
    outcome.outcomes.extend(pruned);
    outcome.result = RunResult::from_verdicts(outcome.outcomes.iter().map(|o| o.verdict));
    outcome.seconds = ctx.seconds();
    outcome
}
