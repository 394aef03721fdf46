//! Applying in phases: first a server-side dry run of everything that can be checked (so a
//! rejected manifest means nothing was applied), then, wave by wave, CRDs (waited for),
//! Namespaces, priority kinds, and the rest, with bounded concurrency.

use super::context::Context;
use super::judging::Pending;
use super::outcomes::{self, Judged};
use super::pruning::Pruning;
use crate::cluster::apply::{self, Rejection};
use crate::cluster::bulk;
use crate::cluster::immutable::{self, REPLACE_ANNOTATION};
use crate::cluster::{Connection, Served};
use crate::config::Mode;
use crate::manifest::Manifest;
use crate::phases::{self, Phase, Step};
use crate::pointer::Pointer;
use crate::rules::Target;
use crate::vocab::events::RunEvent;
use crate::vocab::outcome::Outcome;
use crate::vocab::outcome::{Change, SourceSpan};
use crate::vocab::verdict::{Reason, Verdict};
use futures::StreamExt;
use kube::discovery::ApiResource;
use serde_json::Value;
use std::time::Duration;
use tokio::time::Instant;

/// Applies in flight at once.
const CONCURRENCY: usize = 8;
/// Longest wait for a CRD to be Established.
const CRD_WAIT: Duration = Duration::from_secs(60);

/// How the apply stage ended.
pub enum Applied {
    /// Server-side validation rejected manifests; nothing was applied.
    Rejected(Vec<Outcome>),
    /// A dry run: what validation said of each manifest.
    DryRun(Vec<Outcome>),
    /// Applied; `rejected` holds manifests the server refused during the apply itself.
    Ready {
        targets: Vec<Pending>,
        /// What the cluster serves after the apply (with the kinds of new CRDs).
        served: Served,
        rejected: Vec<Outcome>,
    },
}

/// The target a manifest's resource is judged as: its identity, and the annotations that
/// tune its rules.
fn target_of(m: &Manifest) -> Target {
    let mut t = Target::from_manifest(&m.object)
        .unwrap_or_else(|| Target::new(&m.api_version, &m.kind, m.namespace.as_deref(), &m.name));
    t.id = m.id();
    t
}

/// `watch` mode: every manifest is a target, as of the start.
pub fn not_applied(manifests: &[Manifest], start: Instant) -> Vec<Pending> {
    manifests
        .iter()
        .enumerate()
        .map(|(index, m)| Pending {
            index,
            target: target_of(m),
            applied_at: start,
        })
        .collect()
}

/// The refusal of `m`: for a field that cannot change in place, which one and how to
/// proceed, pointed at its line.
fn rejected(m: &Manifest, r: &Rejection, seconds: f64) -> Outcome {
    let fields = immutable::fields(&r.message);
    let Some(first) = fields.first() else {
        return outcomes::refused(m, r.message.clone(), seconds);
    };
    let message = format!(
        "{} cannot change in place (the API server keeps it as created): set the annotation {REPLACE_ANNOTATION}: \"true\" to have deploy-action delete and recreate it, or delete it before the deploy. The API server said: {}",
        fields.join(", "),
        r.message
    );
    let mut outcome = outcomes::refused(m, message, seconds);
    if let Some(line) = m
        .line_of(&immutable::pointer(first))
        .filter(|_| !m.file.is_empty())
    {
        outcome.annotation_source = Some(SourceSpan {
            file: m.file.clone(),
            line,
        });
    }
    outcome
}

/// Whether `m` asks to be deleted and created again when a change cannot be made in place.
fn replaceable(m: &Manifest) -> bool {
    m.object
        .at("/metadata/annotations")
        .and_then(|a| a.get(REPLACE_ANNOTATION))
        .and_then(Value::as_str)
        == Some("true")
}

/// The immutable fields a refusal of `m` names, when `m` may be replaced for them.
fn to_replace(m: &Manifest, r: &Rejection) -> Option<Vec<String>> {
    let fields = immutable::fields(&r.message);
    (replaceable(m) && !fields.is_empty()).then_some(fields)
}

/// (apiVersion, kind) of the custom resources whose CRD this deploy creates.
fn new_kinds(manifests: &[Manifest]) -> Vec<(String, String)> {
    let crds: Vec<(&str, &str)> = manifests.iter().filter_map(Manifest::defines).collect();
    manifests
        .iter()
        .filter(|m| crds.contains(&(m.group(), m.kind.as_str())))
        .map(|m| (m.api_version.clone(), m.kind.clone()))
        .collect()
}

/// Discovery again until every kind in `wanted` is served: an API server lists a new
/// group some time after its CRD is Established, and a custom resource applied before
/// that is refused as unknown. Bounded by `limit`, with back-off; what is still missing
/// then is refused by the apply with the server's own words.
async fn discover_new_kinds(
    conn: &Connection,
    mut kinds: Served,
    wanted: &[(String, String)],
    limit: Duration,
) -> Served {
    let give_up = Instant::now() + limit;
    let mut pause = Duration::from_millis(100);
    loop {
        if let Ok(Ok(fresh)) = tokio::time::timeout(
            crate::cluster::REQUEST_TIMEOUT,
            Served::discover(&conn.client),
        )
        .await
        {
            kinds = fresh;
        }
        let served = wanted
            .iter()
            .all(|(av, kind)| kinds.resolve(av, kind).is_some());
        if served || Instant::now() + pause > give_up {
            return kinds;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}

/// Why the server could not dry-run `m` before anything was applied: the API server can
/// only validate against what exists, and its CRD or namespace is created by this deploy.
fn not_validated_because(m: &Manifest, manifests: &[Manifest]) -> String {
    if crate::waves::delete_policy(m, Phase::Rest).is_some_and(|p| p.before_creation) {
        return "a Helm hook deleted and created again on each deploy (before-hook-creation): the server checks it when it is created".to_owned();
    }
    let crd_is_new = manifests
        .iter()
        .any(|c| c.defines() == Some((m.group(), m.kind.as_str())));
    let why = match (&m.namespace, crd_is_new) {
        (_, true) => format!(
            "its CustomResourceDefinition ({} in {}) is created by this deploy",
            m.kind,
            m.group()
        ),
        (Some(ns), false) => format!("its namespace {ns:?} is created by this deploy"),
        (None, false) => "what it needs is created by this deploy".to_owned(),
    };
    format!("{why}, so the server cannot check it before the apply")
}

/// The custom resource kinds whose CRD (in the manifests, else in the cluster) says they
/// are not predeployed. The cluster's CRDs are read only when a custom resource's CRD is
/// not among the manifests.
async fn not_predeployed(
    conn: &Connection,
    manifests: &[Manifest],
) -> std::collections::BTreeSet<(String, String)> {
    let mut late: std::collections::BTreeSet<_> = manifests
        .iter()
        .filter(|m| m.defines().is_some())
        .filter_map(|m| phases::not_predeployed(&m.object))
        .collect();
    let declared: Vec<(&str, &str)> = manifests.iter().filter_map(Manifest::defines).collect();
    let foreign = manifests.iter().any(|m| {
        !crate::rules::kinds::is_builtin_group(m.group())
            && !declared.contains(&(m.group(), m.kind.as_str()))
    });
    if foreign {
        late.extend(
            apply::crds(&conn.client)
                .await
                .iter()
                .filter_map(phases::not_predeployed),
        );
    }
    late
}

/// Applies (or dry-runs) `steps`, [`CONCURRENCY`] at a time; `keep` reduces each answer,
/// as the server's text, to what the caller reads, so a thousand applied objects are
/// neither parsed in full nor all held at once.
async fn apply_steps<T>(
    conn: &Connection,
    kinds: &Served,
    manifests: &[Manifest],
    steps: &[&Step],
    dry_run: bool,
    keep: impl Fn(&str, &ApiResource) -> Result<T, Rejection> + Copy,
) -> Vec<(usize, Result<T, Rejection>)> {
    futures::stream::iter(steps.iter().map(|s| {
        let m = &manifests[s.index];
        async move {
            let Some((ar, ns)) = kinds.address(m) else {
                let message = format!("the server does not serve {} in {}", m.kind, m.api_version);
                return (
                    s.index,
                    Err(Rejection {
                        code: None,
                        message,
                    }),
                );
            };
            let answer = bulk::apply_text(&conn.client, &ar, ns, &m.object, dry_run).await;
            (s.index, answer.and_then(|text| keep(&text, &ar)))
        }
    }))
    .buffer_unordered(CONCURRENCY)
    .collect()
    .await
}

/// The manifests in apply order (phases), with the CRDs of the cluster asked only when a
/// custom resource's CRD is not among them.
pub async fn steps(conn: &Connection, manifests: &[Manifest]) -> Vec<Step> {
    phases::order(manifests, &not_predeployed(conn, manifests).await)
}

/// Dry-run everything checkable: `Some` ends the apply stage there (a manifest the server
/// refused, so nothing is applied; or `--dry-run`, whose outcomes are the plan).
pub async fn validate(
    ctx: &mut Context<'_>,
    served: &Served,
    manifests: &[Manifest],
    steps: &[Step],
) -> Option<Applied> {
    let conn = ctx.conn;
    let dry_run = ctx.config.mode == Mode::DryRun;
    ctx.event(RunEvent::Validating);
    let checkable: Vec<&Step> = steps.iter().filter(|s| s.dry_run_first).collect();
    // A dry run compares each answer with the live object; otherwise only refusals count.
    let keep = |text: &str, ar: &ApiResource| {
        if dry_run {
            bulk::object(text, ar)
        } else {
            Ok(Value::Null)
        }
    };
    let mut checked = apply_steps(conn, served, manifests, &checkable, true, keep).await;
    checked.sort_by_key(|(i, _)| *i);
    let start = ctx.start;
    let secs = || start.elapsed().as_secs_f64();
    // A change that cannot be made in place, to an object that may be replaced, is no
    // refusal: it is deleted and created again when its wave is applied.
    let mut replaced: std::collections::HashMap<usize, Vec<String>> =
        std::collections::HashMap::new();
    let refused: Vec<Outcome> = checked
        .iter()
        .filter_map(|(i, r)| {
            let e = r.as_ref().err()?;
            if let Some(fields) = to_replace(&manifests[*i], e) {
                replaced.insert(*i, fields);
                return None;
            }
            Some(rejected(&manifests[*i], e, secs()))
        })
        .collect();
    if !refused.is_empty() {
        return Some(Applied::Rejected(refused));
    }
    if !dry_run {
        return None;
    }
    let mut changes = super::planning::changes(conn, served, manifests, &checked).await;
    let outcomes = steps
        .iter()
        .map(|s| {
            let m = &manifests[s.index];
            if s.dry_run_first {
                ctx.event(RunEvent::Applied {
                    id: m.id(),
                    dry_run: true,
                });
            }
            let judged = if let Some(fields) = replaced.get(&s.index) {
                Judged::new(
                    Verdict::Succeeded,
                    None,
                    format!(
                        "server-side dry run passed but for {}, which cannot change in place: it would be deleted and created again ({REPLACE_ANNOTATION})",
                        fields.join(", ")
                    ),
                )
            } else if s.dry_run_first {
                Judged::new(Verdict::Succeeded, None, "server-side dry run passed")
            } else {
                Judged::new(
                    Verdict::Unfinished,
                    Some(Reason::NotValidated),
                    not_validated_because(m, manifests),
                )
            };
            let mut outcome = outcomes::outcome(m, judged, secs(), Vec::new());
            outcome.change = match replaced.remove(&s.index) {
                Some(fields) => Some(Change::Replaced { fields }),
                None => changes.remove(&s.index),
            };
            outcome
        })
        .collect();
    Some(Applied::DryRun(outcomes))
}

/// Deletes `m`'s object and applies it again, because `refusal` says a change cannot be
/// made in place and `m` asks to be replaced.
async fn replace(
    ctx: &mut Context<'_>,
    served: &Served,
    m: &Manifest,
    refusal: &Rejection,
) -> Result<Option<jiff::Timestamp>, Rejection> {
    let Some((ar, ns)) = served.address(m) else {
        return Err(refusal.clone());
    };
    let conn = ctx.conn;
    let wait = CRD_WAIT.min(ctx.config.timeout);
    crate::cluster::remove::delete_and_wait(&conn.client, &ar, ns, &m.name, wait).await?;
    let applied = bulk::apply_text(&conn.client, &ar, ns, &m.object, false).await?;
    ctx.event(RunEvent::Note(format!(
        "replaced {} ({REPLACE_ANNOTATION}): {} cannot change in place",
        m.display_name(),
        immutable::fields(&refusal.message).join(", ")
    )));
    Ok(bulk::applied_at(&applied))
}

/// Applies one wave's `steps` phase by phase; with `--prune`, `prune` records its set on
/// the parent before the first member is applied (and is taken once it has).
pub async fn apply_wave(
    ctx: &mut Context<'_>,
    mut served: Served,
    manifests: &[Manifest],
    steps: &[Step],
    prune: &mut Option<&Pruning>,
) -> Applied {
    let (conn, timeout) = (ctx.conn, ctx.config.timeout);
    let start = ctx.start;
    let secs = || start.elapsed().as_secs_f64();
    let mut targets = Vec::new();
    let mut refused = Vec::new();
    for phase in [Phase::Crds, Phase::Namespaces, Phase::Priority, Phase::Rest] {
        // --prune: the ApplySet parent lists the set before any member is applied.
        if let Some(p) = prune.filter(|p| p.record_before(phase)) {
            *prune = None;
            if let Err(failed) = p.record_superset(conn, secs()).await {
                if targets.is_empty() {
                    return Applied::Rejected(vec![failed]);
                }
                refused.push(failed);
                break;
            }
        }
        let in_phase: Vec<&Step> = steps.iter().filter(|s| s.phase == phase).collect();
        if in_phase.is_empty() {
            continue;
        }
        ctx.event(RunEvent::Phase(phase.label()));
        let mut results = apply_steps(conn, &served, manifests, &in_phase, false, |text, _| {
            Ok(bulk::applied_at(text))
        })
        .await;
        results.sort_by_key(|(i, _)| *i);
        for (index, result) in results {
            let m = &manifests[index];
            let result = match result {
                Err(e) if to_replace(m, &e).is_some() => replace(ctx, &served, m, &e).await,
                other => other,
            };
            match result {
                Ok(applied_at) => {
                    ctx.event(RunEvent::Applied {
                        id: m.id(),
                        dry_run: false,
                    });
                    let mut target = target_of(m);
                    target.applied_at = applied_at;
                    targets.push(Pending {
                        index,
                        target,
                        applied_at: Instant::now(),
                    });
                }
                Err(e) => refused.push(rejected(m, &e, secs())),
            }
        }
        if phase == Phase::Crds {
            for t in &targets {
                apply::wait_established(&conn.client, &t.target.id.name, CRD_WAIT.min(timeout))
                    .await;
            }
            served = discover_new_kinds(conn, served, &new_kinds(manifests), CRD_WAIT.min(timeout))
                .await;
        }
    }
    Applied::Ready {
        targets,
        served,
        rejected: refused,
    }
}
