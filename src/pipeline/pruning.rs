//! `--prune` in a run: check the ApplySet parent and the guarded namespaces before anything
//! is applied, record the set on the parent before the first apply, and once every manifest
//! was applied, delete the members that left the manifests and watch them go.

use super::context::Context;
use super::error::RunError;
use crate::cluster::apply::Rejection;
use crate::cluster::watch::{self, Seen, WatchScope};
use crate::cluster::{Connection, Served};
use crate::manifest::Manifest;
use crate::phases::Phase;
use crate::pointer::Pointer;
use crate::prune::applyset::{self, PART_OF_LABEL};
use crate::prune::members::{self, Listed, Selection};
use crate::prune::requests;
use crate::prune::{GroupKind, Members, Parent, PruneConfig, PruneRefusal};
use crate::vocab::events::RunEvent;
use crate::vocab::outcome::{Change, Outcome, ResourceId};
use crate::vocab::verdict::{Reason, Verdict};
use kube::discovery::ApiResource;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use tokio::sync::{mpsc, watch as signal};
use tokio::time::Instant;

/// The set of this run: its parent, what the parent recorded, what the manifests declare.
pub struct Pruning {
    parent: Parent,
    id: String,
    parent_resource: ApiResource,
    recorded: Members,
    declared: Members,
    /// The apply phase the parent is recorded before: the first, or the one after
    /// Namespaces when the deploy creates the parent's namespace.
    record_before: Phase,
    /// The set's kinds the cluster served before the apply.
    resolved: HashMap<GroupKind, (ApiResource, bool)>,
}

fn outcome(id: ResourceId, verdict: Verdict, reason: Option<Reason>, message: String) -> Outcome {
    Outcome {
        resource: id,
        verdict,
        reason,
        message,
        source: None,
        origin: None,
        annotation_source: None,
        container: None,
        seconds: 0.0,
        events: Vec::new(),
        logs: None,
        change: None,
        wave: None,
    }
}

fn pruned(listed: &Listed, verdict: Verdict, reason: Option<Reason>, message: String) -> Outcome {
    Outcome {
        change: Some(Change::Pruned),
        ..outcome(listed.id.clone(), verdict, reason, message)
    }
}

/// Check the set before anything is applied, and label the manifests as its members.
pub async fn prepare(
    ctx: &mut Context<'_>,
    served: &Served,
    config: &PruneConfig,
    manifests: &mut [Manifest],
) -> Result<Pruning, RunError> {
    let conn = ctx.conn;
    let parent = config.parent(&conn.default_namespace);
    let id = parent.id();
    if let Some(m) = members::declares_parent(manifests, &parent) {
        return Err(RunError::Invalid(vec![
            crate::manifest::Problem::new(
                &m.file,
                Some(m.line),
                format!(
                    "{} is the ApplySet parent that --applyset names",
                    m.display_name()
                ),
            )
            .with_hint("deploy-action writes the parent itself: choose another --applyset name"),
        ]));
    }
    members::label(manifests, &id).map_err(RunError::Invalid)?;
    let declared = members::of_manifests(manifests, &parent.namespace);
    let unreadable = |message: String| PruneRefusal::Unreadable {
        parent: parent.display(),
        message,
    };
    let (parent_resource, _) = served
        .resolve("v1", parent.kind.kind())
        .ok_or_else(|| unreadable(format!("the server does not serve {}", parent.kind.kind())))?;
    let live = requests::get(
        &conn.client,
        &parent_resource,
        &parent.namespace,
        &parent.name,
    )
    .await
    .map_err(|r| unreadable(r.message))?;
    let recorded = match live {
        None => Members::default(),
        Some(live) => {
            let found = applyset::read_parent(&parent, &live, config.adopt)
                .map_err(PruneRefusal::Parent)?;
            if !found.tooling.starts_with(&format!("{}/", applyset::TOOL)) {
                ctx.event(RunEvent::Warning(format!(
                    "--applyset-adopt: {} was managed by {}; it now names {} (that tool will refuse it from now on)",
                    parent.display(),
                    found.tooling,
                    applyset::tooling()
                )));
            }
            let mut members = found.members;
            for resource in &found.resources {
                let (plural, group) = resource.split_once('.').unwrap_or((resource, ""));
                match served.resolve_resource(group, plural) {
                    Some((ar, _)) => {
                        members.kinds.insert(GroupKind::new(&ar.group, &ar.kind));
                    }
                    None => ctx.event(RunEvent::Warning(format!(
                        "{} lists {resource}, which the cluster no longer serves",
                        parent.display()
                    ))),
                }
            }
            members
        }
    };
    let guarded: Vec<String> =
        members::guarded(&recorded.union(&declared), &config.allow_namespaces)
            .into_iter()
            .map(str::to_owned)
            .collect();
    if !guarded.is_empty() {
        return Err(PruneRefusal::GuardedNamespace(guarded).into());
    }
    let creates_namespace = manifests
        .iter()
        .any(|m| m.kind == "Namespace" && m.group().is_empty() && m.name == parent.namespace);
    let resolved = recorded
        .union(&declared)
        .kinds
        .into_iter()
        .filter_map(|gk| {
            let found = served.resolve_group_kind(&gk.group, &gk.kind)?;
            Some((gk, found))
        })
        .collect();
    Ok(Pruning {
        resolved,
        record_before: if creates_namespace {
            Phase::Priority
        } else {
            Phase::Crds
        },
        parent,
        id,
        parent_resource,
        recorded,
        declared,
    })
}

impl Pruning {
    fn selector(&self) -> String {
        format!("{PART_OF_LABEL}={}", self.id)
    }

    fn parent_id(&self) -> ResourceId {
        ResourceId {
            api_version: "v1".into(),
            kind: self.parent.kind.kind().into(),
            namespace: Some(self.parent.namespace.clone()),
            name: self.parent.name.clone(),
        }
    }

    /// Whether the parent must be recorded before applying `phase`.
    pub fn record_before(&self, phase: Phase) -> bool {
        phase >= self.record_before
    }

    /// Before the first apply: the parent records what it had and what is about to be
    /// applied, so an interrupted run leaves no member outside the set. A refusal is the
    /// parent's `apply_rejected`.
    pub async fn record_superset(&self, conn: &Connection, seconds: f64) -> Result<(), Outcome> {
        let body = self.parent.patch(&self.recorded.union(&self.declared));
        requests::record_parent(&conn.client, &self.parent_resource, &self.parent.namespace, &body)
            .await
            .map_err(|r| Outcome {
                seconds,
                ..outcome(
                    self.parent_id(),
                    Verdict::Failed,
                    Some(Reason::ApplyRejected),
                    format!(
                        "the ApplySet parent could not be recorded before the apply, so nothing was applied: {}",
                        r.message
                    ),
                )
            })
    }

    /// Where `gk` is served: as discovered before the apply, else in `served` (a CRD this
    /// deploy created).
    fn resource(&self, gk: &GroupKind, served: Option<&Served>) -> Option<(ApiResource, bool)> {
        self.resolved
            .get(gk)
            .cloned()
            .or_else(|| served?.resolve_group_kind(&gk.group, &gk.kind))
    }

    /// The set's live members, kind by kind and namespace by namespace, with its selector.
    async fn list(
        &self,
        conn: &Connection,
        served: Option<&Served>,
    ) -> Result<Vec<Listed>, String> {
        let set = self.recorded.union(&self.declared);
        let selector = self.selector();
        let mut listed = Vec::new();
        for gk in &set.kinds {
            let Some((ar, namespaced)) = self.resource(gk, served) else {
                continue;
            };
            let namespaces: Vec<Option<&str>> = if namespaced {
                set.namespaces.iter().map(|ns| Some(ns.as_str())).collect()
            } else {
                vec![None]
            };
            for ns in namespaces {
                let items = requests::list_labelled(&conn.client, &ar, ns, &selector)
                    .await
                    .map_err(|r| {
                        format!(
                            "could not list {gk} in {}: {}",
                            ns.unwrap_or("the cluster"),
                            r.message
                        )
                    })?;
                listed.extend(
                    items
                        .iter()
                        .filter_map(|o| Listed::from_object(&ar.api_version, &ar.kind, o)),
                );
            }
        }
        Ok(listed)
    }

    async fn select(
        &self,
        ctx: &mut Context<'_>,
        served: Option<&Served>,
        manifests: &[Manifest],
    ) -> Result<Selection, String> {
        let listed = self.list(ctx.conn, served).await?;
        let set = self.recorded.union(&self.declared);
        let selection = members::select(listed, &self.id, &set, manifests);
        for kept in &selection.kept {
            ctx.event(RunEvent::Warning(format!(
                "{} left the manifests but is never pruned ({} objects are protected); it stays in the cluster",
                kept.id.display(true),
                kept.id.kind
            )));
        }
        Ok(selection)
    }

    /// `--dry-run --prune`: what would be deleted. Nothing is.
    pub async fn plan(&self, ctx: &mut Context<'_>, manifests: &[Manifest]) -> Vec<Outcome> {
        match self.select(ctx, None, manifests).await {
            Ok(selection) => selection
                .prune
                .iter()
                .map(|l| pruned(l, Verdict::Succeeded, None, "would be pruned".to_owned()))
                .collect(),
            Err(message) => vec![outcome(
                self.parent_id(),
                Verdict::Unfinished,
                Some(Reason::NotValidated),
                format!("{message}; what --prune would delete is unknown"),
            )],
        }
    }

    /// After every manifest was applied: delete the members that left the manifests
    /// (background propagation) and record the set as applied. Returns what is to be
    /// watched until gone, and the outcomes already known (refused deletes).
    pub async fn delete(
        &self,
        ctx: &mut Context<'_>,
        served: &Served,
        manifests: &[Manifest],
    ) -> Deleting {
        let (conn, timeout) = (ctx.conn, ctx.config.timeout);
        let selection = match self.select(ctx, Some(served), manifests).await {
            Ok(s) => s,
            Err(message) => {
                return Deleting {
                    waiting: Vec::new(),
                    done: vec![Outcome {
                        seconds: 0.0,
                        ..outcome(
                            self.parent_id(),
                            Verdict::TimedOut,
                            Some(Reason::ApiUnavailable),
                            format!(
                                "{message}; nothing was pruned, and the set keeps every kind it had"
                            ),
                        )
                    }],
                };
            }
        };
        let run_deadline = ctx.start + timeout;
        let mut waiting = Vec::new();
        let mut done = Vec::new();
        for listed in selection.prune {
            let group = listed.id.api_version.split_once('/').map_or("", |(g, _)| g);
            let gk = GroupKind::new(group, &listed.id.kind);
            let Some((ar, namespaced)) = self.resource(&gk, Some(served)) else {
                continue;
            };
            let ns = listed.id.namespace.as_deref().filter(|_| namespaced);
            let deleted_at = Instant::now();
            match requests::delete(&conn.client, &ar, ns, &listed.id.name, &listed.uid).await {
                Ok(()) => {
                    let own = crate::rules::deadline_for(&listed.id, &listed.annotations, timeout);
                    let left = run_deadline.saturating_duration_since(deleted_at);
                    waiting.push(Waiting {
                        deadline: deleted_at + own.min(left),
                        deleted_at,
                        scope: WatchScope {
                            resource: ar,
                            namespace: ns.map(str::to_owned),
                            labels: Some(self.selector()),
                        },
                        listed,
                    });
                }
                Err(r) => done.push(refused_delete(&listed, &r)),
            }
        }
        if done.is_empty() {
            let body = self.parent.patch(&self.declared);
            if let Err(r) = requests::record_parent(
                &conn.client,
                &self.parent_resource,
                &self.parent.namespace,
                &body,
            )
            .await
            {
                ctx.event(RunEvent::Warning(format!(
                    "pruned, but {} still lists the kinds it had (the next --prune reads them again): {}",
                    self.parent.display(),
                    r.message
                )));
            }
        }
        Deleting { waiting, done }
    }
}

fn refused_delete(listed: &Listed, r: &Rejection) -> Outcome {
    let (verdict, reason) = match r.code {
        Some(code) if code < 500 && code != 429 => (Verdict::Failed, Reason::ApplyRejected),
        _ => (Verdict::TimedOut, Reason::ApiUnavailable),
    };
    pruned(
        listed,
        verdict,
        Some(reason),
        format!("the API server did not delete it: {}", r.message),
    )
}

/// A deleted member, until it is gone.
struct Waiting {
    listed: Listed,
    scope: WatchScope,
    deleted_at: Instant,
    deadline: Instant,
}

/// What [`Pruning::delete`] left to watch.
pub struct Deleting {
    waiting: Vec<Waiting>,
    done: Vec<Outcome>,
}

/// What a watch last showed of a deleted member.
#[derive(Default)]
struct LastSeen {
    gone: bool,
    finalizers: Vec<String>,
}

fn finalizers(obj: &Value) -> Vec<String> {
    obj.at("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|f| {
            f.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn uid(obj: &Value) -> &str {
    obj.at("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

impl Deleting {
    /// Watch the deleted members until each is gone (`succeeded`, "pruned"), its deadline
    /// passes (`timed_out`), or `stop` says the run ended on a failure (`unfinished`).
    /// One watch per kind and namespace, with the set's selector; never a poll.
    pub async fn wait(self, conn: &Connection, mut stop: signal::Receiver<bool>) -> Vec<Outcome> {
        let Deleting { waiting, mut done } = self;
        if waiting.is_empty() {
            return done;
        }
        let mut scopes: Vec<WatchScope> = Vec::new();
        let scope_of: Vec<usize> = waiting
            .iter()
            .map(|w| {
                if let Some(i) = scopes.iter().position(|s| *s == w.scope) {
                    i
                } else {
                    scopes.push(w.scope.clone());
                    scopes.len() - 1
                }
            })
            .collect();
        let (tx, mut rx) = mpsc::channel(256);
        let handles = watch::spawn(&conn.client, &scopes, &tx, |text, _| {
            serde_json::from_str(&text).ok()
        });
        drop(tx);
        let by_uid: HashMap<&str, usize> = waiting
            .iter()
            .enumerate()
            .map(|(i, w)| (w.listed.uid.as_str(), i))
            .collect();
        let mut seen: Vec<LastSeen> = waiting.iter().map(|_| LastSeen::default()).collect();
        let mut listed: HashSet<usize> = HashSet::new();
        // The waited-for objects each list underway has shown, by scope.
        let mut listing: HashMap<usize, HashSet<usize>> = HashMap::new();
        let mut troubles: HashMap<usize, String> = HashMap::new();
        let mut open: Vec<usize> = (0..waiting.len()).collect();
        while !open.is_empty() {
            let next = open
                .iter()
                .map(|&i| waiting[i].deadline)
                .min()
                .unwrap_or_else(Instant::now);
            tokio::select! {
                item = rx.recv() => match item {
                    Some(Seen::ListBegun { scope }) => {
                        listing.insert(scope, HashSet::new());
                    }
                    Some(Seen::Listed { scope, object }) => {
                        if let Some(&i) = by_uid.get(uid(&object)) {
                            seen[i].finalizers = finalizers(&object);
                            listing.entry(scope).or_default().insert(i);
                        }
                    }
                    Some(Seen::ListDone { scope }) => {
                        listed.insert(scope);
                        troubles.remove(&scope);
                        let present = listing.remove(&scope).unwrap_or_default();
                        for &i in open.iter().filter(|&&i| scope_of[i] == scope) {
                            if !present.contains(&i) {
                                seen[i].gone = true;
                            }
                        }
                    }
                    Some(Seen::Upsert { object, .. }) => {
                        if let Some(&i) = by_uid.get(uid(&object)) {
                            seen[i].finalizers = finalizers(&object);
                        }
                    }
                    Some(Seen::Delete { object, .. }) => {
                        if let Some(&i) = by_uid.get(uid(&object)) {
                            seen[i].gone = true;
                        }
                    }
                    Some(Seen::Trouble { scope, message, .. }) => {
                        listing.remove(&scope);
                        troubles.insert(scope, message);
                    }
                    None => break,
                },
                () = tokio::time::sleep_until(next) => {}
                changed = stop.changed() => {
                    if changed.is_err() || *stop.borrow() {
                        for &i in &open {
                            let w = &waiting[i];
                            done.push(ended(w, Verdict::Unfinished,
                                    Some(Reason::StoppedAfterFailure),
                                    "deleted, still terminating; not waited for after another resource failed".to_owned()));
                        }
                        open.clear();
                        continue;
                    }
                }
            }
            let now = Instant::now();
            open.retain(|&i| {
                let w = &waiting[i];
                let s = &seen[i];
                if s.gone && listed.contains(&scope_of[i]) {
                    done.push(ended(w, Verdict::Succeeded, None, "pruned".to_owned()));
                    return false;
                }
                if now < w.deadline {
                    return true;
                }
                let waited = crate::render::duration::elapsed(w.deadline - w.deleted_at);
                let (reason, message) = match troubles.get(&scope_of[i]) {
                    Some(trouble) if !listed.contains(&scope_of[i]) => (
                        Reason::ApiUnavailable,
                        format!("deleted, but its watch never listed it in {waited}: {trouble}"),
                    ),
                    _ if !s.finalizers.is_empty() => (
                        Reason::NotReady,
                        format!(
                            "deleted, but still there after {waited}: waiting for finalizers {}",
                            s.finalizers.join(", ")
                        ),
                    ),
                    _ => (
                        Reason::NotReady,
                        format!("deleted, but still there after {waited}"),
                    ),
                };
                done.push(ended(w, Verdict::TimedOut, Some(reason), message));
                false
            });
        }
        // Every watch ended (it never does on its own): what is left was not seen go.
        for &i in &open {
            let w = &waiting[i];
            done.push(ended(
                w,
                Verdict::TimedOut,
                Some(Reason::ApiUnavailable),
                "deleted, but its watch ended before it was seen gone".to_owned(),
            ));
        }
        for h in handles {
            h.abort();
        }
        done.sort_by(|a, b| a.resource.cmp(&b.resource));
        done
    }
}

/// The outcome of a deleted member, timed from its delete.
fn ended(w: &Waiting, verdict: Verdict, reason: Option<Reason>, message: String) -> Outcome {
    Outcome {
        seconds: secs(w.deleted_at),
        ..pruned(&w.listed, verdict, reason, message)
    }
}

fn secs(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 10.0).round() / 10.0
}
