//! The judging loop: feed what the watches deliver into the snapshot, re-assess the
//! undecided resources the change can affect (found through `rules::affected`), and stop
//! when each has a verdict, or as soon as one has failed (fail fast: the result cannot
//! improve). Event-driven: it wakes on a watch event (and gathers what follows within
//! 20 ms), on the next deadline or at the end of a stability window, never on a polling
//! tick. No resource is judged before every watch it depends on has delivered its first
//! complete list.

use super::Pending;
use super::explain::{LogSource, explain};
use super::feed::Feed;
use super::timers::Timers;
use super::watched::Watched;
use crate::cluster::watch::{Seen, WatchScope};
use crate::manifest::Manifest;
use crate::pipeline::lookups::Lookups;
use crate::pipeline::outcomes::Judged;
use crate::rules::{self, Affected, Prepared, Snapshot};
use crate::vocab::events::{Observer, RunEvent, STATUS_EVERY};
use crate::vocab::outcome::{Outcome, RunOutcome};
use crate::vocab::verdict::{Reason, Verdict};
use futures::{Stream, StreamExt};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// What the judging loop works with besides its targets and its watch events.
pub struct Judging<'a> {
    /// The manifests the targets index into (for outcomes and their order).
    pub manifests: &'a [Manifest],
    /// The whole run's `--timeout`, from `start`: no resource's deadline is later.
    pub timeout: Duration,
    /// The default stability window (`--settle`).
    pub settle: Duration,
    pub fail_fast: bool,
    /// The runner's registry lookups for images in pull trouble (`None`: never).
    pub lookups: Option<Lookups>,
    pub logs: &'a dyn LogSource,
    /// The run's `--rules`, asked before a CRD's own and the bundled ones.
    pub health_rules: std::sync::Arc<crate::rules::health::rule::HealthRules>,
    /// A resource missing from its kind's first complete list fails as `absent` (`watch`).
    pub absent_fails: bool,
    pub start: Instant,
    pub observer: &'a mut dyn Observer,
}

impl Judging<'_> {
    fn event(&mut self, event: RunEvent) {
        self.observer.event(self.start.elapsed(), event);
    }
}

/// Judge `targets` on what `events` (from a watch per scope of `scopes`) show, beside the
/// outcomes already `decided`. Outcomes come in manifest order.
pub async fn judge_stream(
    mut j: Judging<'_>,
    scopes: &[WatchScope],
    targets: Vec<Pending>,
    mut outcomes: Vec<Outcome>,
    events: impl Stream<Item = Seen<Prepared>> + Unpin,
) -> RunOutcome {
    let mut events = events.fuse();
    let run_deadline = j.start + j.timeout;
    let mut watched: Vec<Watched> = targets
        .into_iter()
        .map(|pending| {
            let own =
                rules::deadline_for(&pending.target.id, &pending.target.annotations, j.timeout);
            let left = run_deadline.saturating_duration_since(pending.applied_at);
            Watched::new(pending, own.min(left), scopes, j.absent_fails)
        })
        .collect();
    // The loop's verdicts, shared with the output layer (which keeps them too); room for
    // one per target, not a doubled capacity.
    let mut verdicts: Vec<Arc<Outcome>> = Vec::with_capacity(watched.len());
    // Undecided resources, by index into `watched`, and what can affect each.
    let mut open: BTreeSet<usize> = (0..watched.len()).collect();
    // The first failure, among the outcomes given and the verdicts as they come (for
    // `--fail-fast`): kept as they come, not searched for after every pass.
    let mut first_failure = outcomes
        .iter()
        .find(|o| o.verdict == Verdict::Failed)
        .map(|o| o.resource.clone());
    let mut affected = Affected::new();
    let mut timers = Timers::default();
    for (i, w) in watched.iter().enumerate() {
        affected.add(i, &w.pending.target, None);
        timers.push(w.due(), i);
    }
    let mut snapshot = Snapshot::with_health_rules(j.health_rules.clone());
    snapshot.keep_events_about(watched.iter().map(|w| w.key.clone()));
    let optional: HashSet<usize> = scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.resource.kind.as_str(), "Event" | "Node"))
        .map(|(i, _)| i)
        .collect();
    let crds: HashSet<usize> = scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.resource.kind == "CustomResourceDefinition")
        .map(|(i, _)| i)
        .collect();
    let mut feed = Feed::new(optional, crds);
    let mut watchers_alive = true;
    let (view_tx, mut view_rx) = mpsc::channel(64);
    let mut next_status = Instant::now() + STATUS_EVERY;
    let mut first_pass = true;
    loop {
        let touched = snapshot.take_touched();
        if let Some(l) = j.lookups.as_mut() {
            l.request(&snapshot, &touched, &view_tx).await;
        }
        let now = Instant::now();
        let mut candidates = affected.of(&touched, |k| snapshot.get_raw(k));
        // A list arriving or failing changes what the rules reading it may say; every
        // resource is asked once at the start (one whose kind is not served reads none).
        let lists = feed.take_changed();
        if std::mem::take(&mut first_pass) {
            candidates.extend(open.iter().copied());
        } else if !lists.is_empty() {
            candidates.extend(
                open.iter()
                    .copied()
                    .filter(|&i| watched[i].reads_any(&lists)),
            );
        }
        // A deadline or the end of a stability window come from the timers, in order.
        candidates.extend(timers.take_due(now, |t, i| stands(&watched, &open, t, i)));
        for i in candidates {
            if !open.contains(&i) {
                continue;
            }
            let w = &mut watched[i];
            let elapsed = now.saturating_duration_since(w.pending.applied_at);
            let wake = w.wake;
            let assessment = w.assess(&snapshot, scopes, &feed, j.settle, elapsed);
            if let Some(t) = w.wake.filter(|_| w.wake != wake) {
                timers.push(t, i);
            }
            let state = assessment.message().to_owned();
            let container = assessment.container().cloned();
            let verdict = rules::judge(assessment, elapsed, w.deadline);
            // A node's "not found" or "denied" is final only once the runner's registry
            // lookup has answered: the registry may have the image (replication lag, a
            // mirror).
            let mut awaiting_registry = false;
            if let (
                Some((_, Some(Reason::ImageNotFound | Reason::ImageUnauthorized), _)),
                Some(l),
                Some(c),
            ) = (&verdict, j.lookups.as_mut(), container.as_ref())
                && let Some(image) = c.image.as_deref().filter(|_| elapsed < w.deadline)
            {
                let ns = w.pending.target.id.namespace.clone().unwrap_or_default();
                l.request_image(image, &ns, &snapshot, &c.pod, &view_tx)
                    .await;
                awaiting_registry = l.in_flight(image, &snapshot);
            }
            match verdict.filter(|_| !awaiting_registry) {
                Some((verdict, reason, message)) => {
                    let judged = Judged::new(verdict, reason, message).blaming(container);
                    let manifest = &j.manifests[w.pending.index];
                    let outcome = explain(j.logs, &snapshot, manifest, w, judged).await;
                    let outcome = Arc::new(outcome);
                    if outcome.verdict == Verdict::Failed && first_failure.is_none() {
                        first_failure = Some(outcome.resource.clone());
                    }
                    j.event(RunEvent::Verdict(outcome.clone()));
                    verdicts.push(outcome);
                    open.remove(&i);
                    affected.remove(i);
                }
                None => {
                    if w.last_state.as_deref() != Some(state.as_str()) {
                        let id = w.pending.target.id.clone();
                        w.last_state = Some(state.clone());
                        j.event(RunEvent::Waiting { id, state });
                    }
                }
            }
        }
        // The pass is over: the texts that have held for eight passes are packed.
        snapshot.pack_settled();
        if open.is_empty() {
            break;
        }
        if j.fail_fast
            && let Some(failed) = first_failure.take()
        {
            let name = failed.display(true);
            j.event(RunEvent::FailFast {
                failed,
                unfinished: open.len(),
            });
            for i in std::mem::take(&mut open) {
                let w = &watched[i];
                let outcome = Arc::new(w.unfinished(&j.manifests[w.pending.index], &name));
                j.event(RunEvent::Verdict(outcome.clone()));
                verdicts.push(outcome);
            }
            break;
        }
        let next = timers
            .next(|t, i| stands(&watched, &open, t, i))
            .unwrap_or(run_deadline);
        tokio::select! {
            seen = events.next(), if watchers_alive => match seen {
                Some(seen) => {
                    watchers_alive =
                        feed.batch(&mut snapshot, seen, &mut events, j.observer, j.start).await;
                }
                None => watchers_alive = false,
            },
            // Every registry answer waiting is taken at once: each asks every open
            // resource again, so answers arriving together are judged in one pass.
            Some(first) = view_rx.recv() => {
                let waiting = std::iter::from_fn(|| view_rx.try_recv().ok());
                snapshot.set_registry_views(std::iter::once(first).chain(waiting));
            }
            () = tokio::time::sleep_until(next_status) => {
                next_status += STATUS_EVERY;
                let pending = open
                    .iter()
                    .map(|&i| &watched[i])
                    .map(|w| {
                        let state = w.last_state.clone().unwrap_or_default();
                        (w.pending.target.id.clone(), state)
                    })
                    .collect();
                j.event(RunEvent::Status(pending));
            }
            () = tokio::time::sleep_until(next) => {}
        }
    }
    // What the verdicts were read from goes before they are put in order: at 10,000 pods
    // the snapshot is the larger part of the run's memory, and ordering used to add to
    // its peak.
    drop((snapshot, watched, affected, feed));
    // Copied out of their sharing (the output layer keeps its references) only now.
    outcomes.reserve_exact(verdicts.len());
    outcomes.extend(verdicts.into_iter().map(Arc::unwrap_or_clone));
    in_manifest_order(j.manifests, &mut outcomes);
    RunOutcome::new(false, j.start.elapsed().as_secs_f64(), outcomes)
}

/// Whether time `at` still calls for a look at resource `i`: it is undecided, and `at` is
/// its deadline or the end of its current stability window.
fn stands(watched: &[Watched], open: &BTreeSet<usize>, at: Instant, i: usize) -> bool {
    let w = &watched[i];
    open.contains(&i) && (w.due() == at || w.wake == Some(at))
}

/// Puts `outcomes` in the order of the manifests naming their resources (the rest last),
/// sorting their positions rather than the outcomes (a sort of 5,000 outcomes copied
/// 2.3 MB aside).
fn in_manifest_order(manifests: &[Manifest], outcomes: &mut [Outcome]) {
    let order: HashMap<(&str, Option<&str>, &str), usize> = manifests
        .iter()
        .enumerate()
        .map(|(i, m)| {
            (
                (m.kind.as_str(), m.namespace.as_deref(), m.name.as_str()),
                i,
            )
        })
        .collect();
    outcomes.sort_by_cached_key(|o| {
        let r = &o.resource;
        order
            .get(&(r.kind.as_str(), r.namespace.as_deref(), r.name.as_str()))
            .copied()
            .unwrap_or(usize::MAX)
    });
}
