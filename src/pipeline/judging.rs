//! The judging loop: feed what the watchers see into the snapshot, re-assess the undecided
//! resources the change can affect (found through `rules::affected`), and stop when each
//! has a verdict, or as soon as one has failed (fail fast: the result cannot improve).
//! Event-driven: it wakes on a watch event (and gathers what follows within 20 ms), on the
//! next deadline or at the end of a stability window, never on a polling tick. No resource
//! is judged before every watch it depends on has delivered its first complete list.

use super::applying::Pending;
use super::lookups::Lookups;
use super::{outcomes, scopes};
use crate::cluster::watch::{self, Seen, WatchScope};
use crate::cluster::{Connection, Served, logs};
use crate::config::Config;
use crate::manifest::Manifest;
use crate::rules::settle::{self, Settling};
use crate::rules::{self, Affected, Assessment, ObjectKey, Prepared, Snapshot, Target};
use crate::vocab::events::{Observer, RunEvent, STATUS_EVERY};
use crate::vocab::outcome::{Outcome, RunOutcome};
use crate::vocab::verdict::{Reason, Verdict};
use k8s_openapi::api::core::v1::Pod;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How long the loop keeps gathering watch events after the first of a batch before it
/// judges: short against the verdict's latency, long enough that a burst of changes (a
/// Deployment's pods becoming ready together) is judged once instead of once per event.
const BATCH_WINDOW: Duration = Duration::from_millis(20);

struct Watched {
    pending: Pending,
    /// The target's key in the snapshot, kept to look it up without allocating.
    key: ObjectKey,
    deadline: Duration,
    last_state: Option<String>,
    /// The watch scopes whose first list this resource's rule reads.
    depends_on: Vec<usize>,
    settling: Settling,
    /// When to look again though nothing changed: the end of its stability window.
    wake: Option<Instant>,
}

/// The scopes (by index) that hold what `target`'s rule reads. Kinds the cluster does not
/// serve have no scope and cannot be waited for.
fn depends_on(scopes: &[WatchScope], target: &Target) -> Vec<usize> {
    super::scopes::needed(std::slice::from_ref(target))
        .into_iter()
        .filter_map(|(av, kind, ns)| {
            scopes.iter().position(|s| {
                s.resource.api_version == av
                    && s.resource.kind == kind
                    && (s.namespace.is_none() || s.namespace == ns)
            })
        })
        .collect()
}

/// What the rule says of `w`, or why it may not say anything yet.
fn assess(
    w: &mut Watched,
    snapshot: &Snapshot,
    scopes: &[WatchScope],
    (listed, troubles): (&HashSet<usize>, &Troubles),
    settle_default: Duration,
    elapsed: Duration,
) -> Assessment {
    let unlisted: Vec<usize> = w
        .depends_on
        .iter()
        .copied()
        .filter(|i| !listed.contains(i))
        .collect();
    // The API server failing the lists is the cause, and the verdict must say so.
    if let Some((scope, (times, error))) = unlisted
        .iter()
        .filter_map(|i| troubles.get(i).map(|t| (*i, t)))
        .max_by_key(|(_, (times, _))| *times)
    {
        let kind = &scopes[scope].resource.kind;
        let times = crate::rules::pods::pod_failure::count(*times as i64, "time");
        return Assessment::pending(
            Reason::ApiUnavailable,
            format!("the API server failed the list of {kind} {times}; last error: {error}"),
        );
    }
    let unlisted: Vec<&str> = unlisted
        .iter()
        .map(|&i| scopes[i].resource.kind.as_str())
        .collect();
    if !unlisted.is_empty() {
        return Assessment::not_ready(format!(
            "waiting for the first complete list of {} from the API server",
            unlisted.join(", ")
        ));
    }
    let target = &w.pending.target;
    // Not seen, or deleted since (the rules tell the two apart).
    let Some(obj) = snapshot.get_raw(&w.key) else {
        return rules::assess(target, snapshot);
    };
    let window = settle::window(target, &obj, settle_default);
    let assessment = rules::assess_seen(target, Some(&obj), snapshot);
    let pods = || settle::pods_of(target, snapshot);
    let (assessment, wake) =
        settle::settle_with(&mut w.settling, assessment, pods, window, elapsed);
    w.wake = wake.map(|d| w.pending.applied_at + d);
    assessment
}

/// The outcome of a resource left without a verdict because another one failed.
fn unfinished(w: &Watched, manifest: &Manifest, failed: &str) -> Outcome {
    let state = w
        .last_state
        .as_deref()
        .unwrap_or("not seen in the cluster yet");
    outcomes::outcome(
        w.pending.target.id.clone(),
        manifest,
        Verdict::Unfinished,
        Some(Reason::StoppedAfterFailure),
        format!("{state}; not waited for after {failed} failed"),
        None,
        w.pending.applied_at.elapsed().as_secs_f64(),
        Vec::new(),
    )
}

/// The objects each watch scope last listed, to drop what a relist no longer shows.
type Members = HashMap<usize, BTreeSet<ObjectKey>>;

/// How often each watch scope's list or watch failed, and the last error.
type Troubles = HashMap<usize, (usize, String)>;

/// Apply one watch observation to the snapshot.
fn observe(
    snapshot: &mut Snapshot,
    members: &mut Members,
    (listed, troubles, optional): (&mut HashSet<usize>, &mut Troubles, &HashSet<usize>),
    seen: Seen<Prepared>,
    observer: &mut dyn Observer,
    at: Duration,
) {
    match seen {
        Seen::Upsert(prepared) => {
            snapshot.insert(prepared);
        }
        Seen::Delete(v) => {
            if let Some(key) = ObjectKey::of(&v) {
                snapshot.remove_key(key);
            }
        }
        Seen::Relisted { scope, objects } => {
            // Inserted first so that the members keep the snapshot's shared keys; what the
            // relist no longer shows is removed after, which comes to the same.
            let fresh: BTreeSet<ObjectKey> =
                objects.into_iter().map(|p| snapshot.insert(p)).collect();
            if let Some(old) = members.get(&scope) {
                for key in old.difference(&fresh) {
                    snapshot.remove_key(key.clone());
                }
            }
            members.insert(scope, fresh);
            listed.insert(scope);
        }
        Seen::Trouble {
            scope,
            message,
            forbidden,
        } => {
            // Evidence the rules can do without (events, nodes) that the deployer may not
            // read counts as listed and empty: the rules then judge more strictly, never
            // more leniently. Anything else refused keeps its resources waiting.
            if forbidden && optional.contains(&scope) {
                listed.insert(scope);
            }
            let seen = troubles.entry(scope).or_insert((0, String::new()));
            seen.0 += 1;
            seen.1.clone_from(&message);
            observer.event(at, RunEvent::WatchTrouble(message));
        }
    }
}

fn uid(snapshot: &Snapshot, key: &ObjectKey) -> Option<String> {
    snapshot
        .get_raw(key)?
        .pointer("/metadata/uid")?
        .as_str()
        .map(str::to_owned)
}

/// Build the explained outcome of a verdict, fetching a log tail when a container failed.
async fn explain(
    conn: &Connection,
    snapshot: &Snapshot,
    manifest: &Manifest,
    w: &Watched,
    verdict: (crate::vocab::verdict::Verdict, Option<Reason>, String),
    container: Option<crate::vocab::outcome::ContainerRef>,
) -> Outcome {
    let id = w.pending.target.id.clone();
    let target_uid = uid(
        snapshot,
        &ObjectKey::new(&id.api_version, &id.kind, id.namespace.as_deref(), &id.name),
    );
    let ns = id.namespace.clone().unwrap_or_default();
    let pod_uid = container
        .as_ref()
        .and_then(|c| snapshot.get::<Pod>(Some(&ns), &c.pod))
        .and_then(|p| p.metadata.uid);
    let events = outcomes::events(snapshot, target_uid.as_deref(), pod_uid.as_deref());
    let (v, reason, message) = verdict;
    let seconds = w.pending.applied_at.elapsed().as_secs_f64();
    let mut outcome = outcomes::outcome(
        id,
        manifest,
        v,
        reason,
        message,
        container.clone(),
        seconds,
        events,
    );
    if let (
        Some(c),
        Some(Reason::CrashLoop | Reason::ContainerCannotRun | Reason::ReadinessFailing),
    ) = (&container, reason)
    {
        let previous = reason == Some(Reason::CrashLoop);
        outcome.logs = match logs::tail(&conn.client, &ns, &c.pod, &c.container, previous).await {
            Some(t) => Some(t),
            None if previous => logs::tail(&conn.client, &ns, &c.pod, &c.container, false).await,
            None => None,
        };
    }
    outcome
}

#[allow(clippy::too_many_arguments)]
pub async fn judge_all(
    conn: &Connection,
    kinds: &Served,
    manifests: &[Manifest],
    targets: Vec<Pending>,
    mut outcomes: Vec<Outcome>,
    config: &Config,
    mut lookups: Option<Lookups>,
    start: Instant,
    observer: &mut dyn Observer,
) -> RunOutcome {
    let order: HashMap<_, usize> = manifests
        .iter()
        .enumerate()
        .map(|(i, m)| ((m.kind.clone(), m.namespace.clone(), m.name.clone()), i))
        .collect();
    let run_deadline = start + config.timeout;
    let target_list: Vec<_> = targets.iter().map(|p| p.target.clone()).collect();
    let scopes = scopes::resolve(kinds, &target_list, config.selector_string().as_deref());
    let (tx, mut rx) = mpsc::channel(1024);
    let handles = watch::spawn(&conn.client, &scopes, &tx, |v| Prepared::of(v).ok());
    drop(tx);
    let mut watched: Vec<Watched> = targets
        .into_iter()
        .map(|pending| {
            let own = rules::deadline_for(
                &pending.target.id,
                &pending.target.annotations,
                config.timeout,
            );
            let left = run_deadline.saturating_duration_since(pending.applied_at);
            Watched {
                key: pending.target.key(),
                deadline: own.min(left),
                depends_on: depends_on(&scopes, &pending.target),
                pending,
                last_state: None,
                settling: Settling::default(),
                wake: None,
            }
        })
        .collect();
    // Undecided resources, by index into `watched`, and what can affect each.
    let mut open: BTreeSet<usize> = (0..watched.len()).collect();
    let mut affected = Affected::new();
    for (i, w) in watched.iter().enumerate() {
        affected.add(i, &w.pending.target, None);
    }
    let mut snapshot = Snapshot::new();
    let mut members = HashMap::new();
    let mut listed = HashSet::new();
    let mut troubles = Troubles::new();
    let optional: HashSet<usize> = scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.resource.kind.as_str(), "Event" | "Node"))
        .map(|(i, _)| i)
        .collect();
    let mut watchers_alive = true;
    let (view_tx, mut view_rx) = mpsc::channel(64);
    let mut next_status = Instant::now() + STATUS_EVERY;
    let mut last_listing = None;
    loop {
        let touched = snapshot.take_touched();
        if let Some(l) = lookups.as_mut() {
            l.request(&snapshot, &touched, &view_tx).await;
        }
        let now = Instant::now();
        let listing = (listed.len(), troubles.values().map(|t| t.0).sum::<usize>());
        // Which lists have arrived or failed changes what every rule may say.
        let everything = last_listing.replace(listing) != Some(listing);
        let mut candidates: BTreeSet<usize> = if everything {
            open.clone()
        } else {
            affected.of(&touched, |k| snapshot.get_raw(k))
        };
        // No clock of a resource runs out unless it is due: cheap to ask every one.
        candidates.extend(open.iter().copied().filter(|&i| {
            let w = &watched[i];
            w.wake.is_some_and(|t| now >= t) || now >= w.pending.applied_at + w.deadline
        }));
        for i in candidates {
            if !open.contains(&i) {
                continue;
            }
            let w = &mut watched[i];
            let elapsed = now.saturating_duration_since(w.pending.applied_at);
            let assessment = assess(
                w,
                &snapshot,
                &scopes,
                (&listed, &troubles),
                config.settle,
                elapsed,
            );
            let state = assessment.message().to_owned();
            let container = assessment.container().cloned();
            let verdict = rules::judge(assessment, elapsed, w.deadline);
            // A node's "not found" or "denied" is final only once the runner's registry lookup
            // has answered: the registry may have the image (replication lag, a mirror).
            let mut awaiting_registry = false;
            if let (
                Some((_, Some(Reason::ImageNotFound | Reason::ImageUnauthorized), _)),
                Some(l),
                Some(c),
            ) = (&verdict, lookups.as_mut(), container.as_ref())
                && let Some(image) = c.image.as_deref().filter(|_| elapsed < w.deadline)
            {
                let ns = w.pending.target.id.namespace.clone().unwrap_or_default();
                l.request_image(image, &ns, &snapshot, &c.pod, &view_tx)
                    .await;
                awaiting_registry = l.in_flight(image, &snapshot);
            }
            match verdict.filter(|_| !awaiting_registry) {
                Some(verdict) => {
                    let outcome = explain(
                        conn,
                        &snapshot,
                        &manifests[w.pending.index],
                        w,
                        verdict,
                        container,
                    )
                    .await;
                    observer.event(
                        start.elapsed(),
                        RunEvent::Verdict(Box::new(outcome.clone())),
                    );
                    outcomes.push(outcome);
                    open.remove(&i);
                    affected.remove(i);
                }
                None => {
                    if w.last_state.as_deref() != Some(state.as_str()) {
                        observer.event(
                            start.elapsed(),
                            RunEvent::Waiting {
                                id: w.pending.target.id.clone(),
                                state: state.clone(),
                            },
                        );
                        w.last_state = Some(state);
                    }
                }
            }
        }
        if open.is_empty() {
            break;
        }
        let first_failure = outcomes
            .iter()
            .find(|o| o.verdict == Verdict::Failed)
            .map(|o| o.resource.clone());
        if config.fail_fast
            && let Some(failed) = first_failure
        {
            let name = failed.display(true);
            observer.event(
                start.elapsed(),
                RunEvent::FailFast {
                    failed,
                    unfinished: open.len(),
                },
            );
            for i in std::mem::take(&mut open) {
                let w = &watched[i];
                let outcome = unfinished(w, &manifests[w.pending.index], &name);
                observer.event(
                    start.elapsed(),
                    RunEvent::Verdict(Box::new(outcome.clone())),
                );
                outcomes.push(outcome);
            }
            break;
        }
        let next = open
            .iter()
            .map(|&i| &watched[i])
            .flat_map(|w| [Some(w.pending.applied_at + w.deadline), w.wake])
            .flatten()
            .min()
            .unwrap_or(run_deadline);
        tokio::select! {
            seen = rx.recv(), if watchers_alive => match seen {
                Some(seen) => {
                    observe(&mut snapshot, &mut members, (&mut listed, &mut troubles, &optional), seen, observer, start.elapsed());
                    // What arrives within the batch window is judged together: a rollout's
                    // pods change in bursts, and each resource is then judged once per burst.
                    let until = Instant::now() + BATCH_WINDOW;
                    loop {
                        match tokio::time::timeout_at(until, rx.recv()).await {
                            Ok(Some(more)) => observe(&mut snapshot, &mut members, (&mut listed, &mut troubles, &optional), more, observer, start.elapsed()),
                            Ok(None) => {
                                watchers_alive = false;
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                }
                None => watchers_alive = false,
            },
            Some((image, view)) = view_rx.recv() => snapshot.set_registry_view(&image, view),
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
                observer.event(start.elapsed(), RunEvent::Status(pending));
            }
            () = tokio::time::sleep_until(next) => {}
        }
    }
    for h in handles {
        h.abort();
    }
    outcomes.sort_by_key(|o| {
        order
            .get(&(
                o.resource.kind.clone(),
                o.resource.namespace.clone(),
                o.resource.name.clone(),
            ))
            .copied()
            .unwrap_or(usize::MAX)
    });
    RunOutcome::new(false, start.elapsed().as_secs_f64(), outcomes)
}
