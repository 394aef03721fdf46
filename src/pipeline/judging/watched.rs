//! One resource in the judging loop: what it waits for, and what its rule may say of it
//! given what the watches have delivered so far.

use super::Pending;
use super::feed::Feed;
use crate::cluster::watch::WatchScope;
use crate::manifest::Manifest;
use crate::pipeline::outcomes::{self, Judged};
use crate::pipeline::scopes;
use crate::rules::settle::{self, Settling};
use crate::rules::{self, Assessment, ObjectKey, Snapshot, Target};
use crate::vocab::outcome::Outcome;
use crate::vocab::verdict::{Reason, Verdict};
use std::collections::BTreeSet;
use std::time::Duration;
use tokio::time::Instant;

/// How a resource's state begins while its watches have not listed yet: said by the
/// status table if it lasts, not line by line in a CI log (every resource starts there).
pub const FIRST_LIST: &str = "waiting for the first complete list of";

pub struct Watched {
    pub pending: Pending,
    /// The target's key in the snapshot, kept to look it up without allocating.
    pub key: ObjectKey,
    pub deadline: Duration,
    pub last_state: Option<String>,
    /// The watch scopes whose first list this resource's rule reads.
    depends_on: Vec<usize>,
    settling: Settling,
    /// When to look again though nothing changed: the end of its stability window.
    pub wake: Option<Instant>,
    /// Not being in the cluster once its kind has listed is a verdict (`watch`), not a
    /// wait for the object to appear.
    absent_fails: bool,
}

impl Watched {
    /// `pending`, to be judged by `deadline` after its apply, on what `scopes` deliver.
    pub fn new(
        pending: Pending,
        deadline: Duration,
        scopes: &[WatchScope],
        absent_fails: bool,
    ) -> Watched {
        Watched {
            absent_fails,
            key: pending.target.key(),
            deadline,
            depends_on: depends_on(scopes, &pending.target),
            pending,
            last_state: None,
            settling: Settling::default(),
            wake: None,
        }
    }

    /// Whether its rule reads any of `scopes`.
    pub fn reads_any(&self, scopes: &BTreeSet<usize>) -> bool {
        self.depends_on.iter().any(|i| scopes.contains(i))
    }

    /// When its deadline passes.
    pub fn due(&self) -> Instant {
        self.pending.applied_at + self.deadline
    }

    /// What the rule says of it, or why it may not say anything yet.
    pub fn assess(
        &mut self,
        snapshot: &Snapshot,
        scopes: &[WatchScope],
        feed: &Feed,
        settle_default: Duration,
        elapsed: Duration,
    ) -> Assessment {
        let (listed, troubles) = (&feed.listed, &feed.troubles);
        if let Some((scope, refusal)) = self
            .depends_on
            .iter()
            .find_map(|i| feed.forbidden.get(i).map(|r| (*i, r)))
        {
            return forbidden(&scopes[scope], refusal);
        }
        let unlisted: Vec<usize> = self
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
                "{FIRST_LIST} {} from the API server",
                unlisted.join(", ")
            ));
        }
        let target = &self.pending.target;
        if let Some(blind) = self.blind(feed, scopes) {
            // A failure seen before the gap happened; anything else would be decided on
            // time that passed unseen, so the stability window starts again once the
            // scope has listed (the restarts it missed are in that list).
            self.settling.interrupted();
            self.wake = None;
            let seen = rules::assess(target, snapshot);
            return match seen {
                Assessment::Failed { .. } => seen,
                _ => blind,
            };
        }
        // Not seen, or deleted since (the rules tell the two apart).
        let Some(obj) = snapshot.live(&self.key) else {
            if self.absent_fails && !snapshot.was_deleted(&self.key) {
                return absent(target);
            }
            return rules::assess(target, snapshot);
        };
        let assessment = rules::assess_seen(target, Some(&obj), snapshot);
        // After the rule: the window reads the object's `Value` if the rule parsed one.
        let window = settle::live_window(target, &obj, settle_default);
        let pods = || settle::pods_of(target, &obj, snapshot);
        let (assessment, wake) =
            settle::settle_with(&mut self.settling, assessment, pods, window, elapsed);
        self.wake = wake.map(|d| self.pending.applied_at + d);
        assessment
    }

    /// Why it cannot be judged now, if a watch its rule reads has failed since its last
    /// complete list: which kind, since when, and the last error.
    fn blind(&self, feed: &Feed, scopes: &[WatchScope]) -> Option<Assessment> {
        let (scope, since) = self
            .depends_on
            .iter()
            .filter_map(|&i| feed.blind_since(i).map(|since| (i, since)))
            .min_by_key(|(_, since)| *since)?;
        let kind = &scopes[scope].resource.kind;
        let error = feed
            .troubles
            .get(&scope)
            .map_or("", |(_, error)| error.as_str());
        Some(Assessment::pending(
            Reason::ApiUnavailable,
            format!(
                "not seen since {:.1}s, when the watch of {kind} failed ({error}); waiting to \
                 see the cluster again (time unseen does not count)",
                since.as_secs_f64()
            ),
        ))
    }

    /// Its outcome when left without a verdict because `failed` failed (fail fast).
    pub fn unfinished(&self, manifest: &Manifest, failed: &str) -> Outcome {
        let state = self
            .last_state
            .as_deref()
            .unwrap_or("not seen in the cluster yet");
        let judged = Judged::new(
            Verdict::Unfinished,
            Some(Reason::StoppedAfterFailure),
            format!("{state}; not waited for after {failed} failed"),
        );
        let seconds = self.pending.applied_at.elapsed().as_secs_f64();
        outcomes::outcome(manifest, judged, seconds, Vec::new())
    }
}

/// A resource whose verdict needs a list the deployer may not make: waiting will not
/// bring it, and no verdict can be taken without it.
fn forbidden(scope: &WatchScope, refusal: &str) -> Assessment {
    let resource = &scope.resource;
    let group = if resource.group.is_empty() {
        String::new()
    } else {
        format!(".{}", resource.group)
    };
    let place = match &scope.namespace {
        Some(ns) => format!("in namespace {ns}"),
        None => "cluster-wide".to_owned(),
    };
    Assessment::failed(
        Reason::Forbidden,
        format!(
            "the deployer may not list and watch {}{group} {place}, which its verdict needs \
             ({refusal}); grant list and watch on {}{group} (deploy-action rbac prints the \
             Role a deploy needs)",
            resource.plural, resource.plural
        ),
    )
}

/// A resource its kind's complete list lacks, when nothing is going to create it.
fn absent(target: &Target) -> Assessment {
    let place = match &target.id.namespace {
        Some(ns) => format!(" in namespace {ns}"),
        None => String::new(),
    };
    Assessment::failed(
        Reason::Absent,
        format!(
            "{} {} does not exist{place}; --wait-for-creation waits for it",
            target.kind(),
            target.id.name
        ),
    )
}

/// The scopes (by index) that hold what `target`'s rule reads. Kinds the cluster does not
/// serve have no scope and cannot be waited for.
fn depends_on(scopes: &[WatchScope], target: &Target) -> Vec<usize> {
    scopes::needed(std::slice::from_ref(target))
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
