//! `deploy`, `plan` (a dry run) and `watch`: discover what the cluster serves, validate the
//! manifests against it, look up their images, apply them in phases (or dry-run them, or
//! nothing for `watch`), then judge every resource, pruning beside with `--prune`.

use super::access::RegistryAccess;
use super::applying::{self, Applied};
use super::autoscaled;
use super::context::Context;
use super::error::RunError;
use super::hooks;
use super::judging::judge;
use super::outcomes;
use super::preflight;
use super::pruning;
use crate::cluster::{Connection, Served};
use crate::config::{Config, Mode};
use crate::manifest::{self, Manifest};
use crate::vocab::events::{Observer, RunEvent};
use crate::vocab::outcome::{Outcome, ResourceId, RunOutcome};
use crate::vocab::verdict::{RunResult, Verdict};
use crate::waves;

/// Discovery, the run's first request, bounded: a server that never answers ends the run
/// with a sentence saying so instead of holding it past its timeout.
pub async fn discover(conn: &Connection, timeout: std::time::Duration) -> Result<Served, RunError> {
    let limit = crate::cluster::REQUEST_TIMEOUT.min(timeout);
    match tokio::time::timeout(limit, Served::discover(&conn.client)).await {
        Ok(Ok(served)) => Ok(served),
        Ok(Err(e)) => Err(RunError::Discovery(crate::cluster::describe_failure(
            &conn.server,
            &e,
        ))),
        Err(_) => Err(RunError::Discovery(format!(
            "the API server at {} accepted the connection but did not answer discovery within {}s",
            conn.server,
            limit.as_secs()
        ))),
    }
}

/// Deploy, dry-run or watch `manifests` on a connected cluster, as `config.mode` says.
pub async fn deploy(
    conn: &Connection,
    config: &Config,
    mut manifests: Vec<Manifest>,
    access: &RegistryAccess,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let mut ctx = Context::new(conn, config, access, observer);
    ctx.event(RunEvent::Target {
        context: conn.context.clone(),
        server: conn.server.clone(),
        namespace: conn.default_namespace.clone(),
    });
    let served = discover(conn, config.timeout).await?;
    let lookup = |av: &str, kind: &str| served.scope(av, kind);
    let problems = manifest::validate_against(&manifests, &conn.default_namespace, lookup);
    if !problems.is_empty() {
        return Err(RunError::Invalid(problems));
    }
    manifest::resolve_namespaces(&mut manifests, &conn.default_namespace, lookup);
    let applies = matches!(config.mode, Mode::Deploy | Mode::DryRun);
    let prune = match &config.prune {
        Some(p) if applies => Some(pruning::prepare(&mut ctx, &served, p, &mut manifests).await?),
        _ => None,
    };
    ctx.event(RunEvent::Loaded {
        resources: manifests.len(),
    });
    if !applies {
        // `restart` and `run` have their own entry points; judged as they stand here.
        let targets = applying::not_applied(&manifests, ctx.start);
        return Ok(judge(&mut ctx, &served, &manifests, targets, Vec::new(), None).await);
    }
    let dry_run = config.mode == Mode::DryRun;
    if let Some(mut stopped) = preflight::stop_before_apply(&mut ctx, &manifests).await? {
        stopped.dry_run = dry_run;
        return Ok(stopped);
    }
    let (autoscaled, notices) = autoscaled::prepare(&mut ctx, &served, &mut manifests).await;
    let mut steps = applying::steps(conn, &manifests).await;
    // A hook deleted before it is created again cannot be checked against its old
    // object (a Job's template is immutable): the server checks it when it is created.
    for s in &mut steps {
        let recreated =
            waves::delete_policy(&manifests[s.index], s.phase).is_some_and(|p| p.before_creation);
        s.dry_run_first &= !recreated;
    }
    let (waves, skipped) = waves::plan(&manifests, &steps);
    let labels = wave_labels(&manifests, &waves);
    // What is not part of a deploy (a Helm test hook) is not even dry-run.
    steps.retain(|s| !skipped.iter().any(|(i, _)| *i == s.index));
    let skipped: Vec<Outcome> = skipped
        .into_iter()
        .map(|(i, why)| outcomes::not_applied(&manifests[i], why, ctx.seconds()))
        .collect();
    match applying::validate(&mut ctx, &served, &manifests, &steps).await {
        Some(Applied::DryRun(mut outcomes)) => {
            for a in &autoscaled {
                let id = manifests[a.index].id();
                if let Some(o) = outcomes.iter_mut().find(|o| o.resource == id) {
                    o.message
                        .push_str(&format!("; replicas left to the autoscaler ({})", a.by));
                }
            }
            outcomes.extend(skipped);
            if let Some(p) = &prune {
                outcomes.extend(p.plan(&mut ctx, &manifests).await);
            }
            let mut run = RunOutcome::new(dry_run, ctx.seconds(), outcomes);
            label(&mut run, &labels);
            run.notices = notices;
            return Ok(run);
        }
        Some(
            Applied::Rejected(outcomes)
            | Applied::Ready {
                rejected: outcomes, ..
            },
        ) => {
            return Ok(RunOutcome::new(dry_run, ctx.seconds(), outcomes));
        }
        None => {}
    }
    let mut outcomes = Vec::new();
    let mut served = Some(served);
    let mut record = prune.as_ref();
    let mut stopped: Option<String> = None;
    let count = waves.len();
    for (n, wave) in waves.iter().enumerate() {
        if let Some(why) = &stopped {
            outcomes.extend(
                wave.steps.iter().map(|s| {
                    outcomes::not_applied(&manifests[s.index], why.clone(), ctx.seconds())
                }),
            );
            continue;
        }
        if count > 1 {
            ctx.event(RunEvent::Wave {
                number: n + 1,
                of: count,
                label: wave.key.to_string(),
            });
        }
        let Some(now) = served.take() else {
            break;
        };
        let (steps, refused_hooks) =
            hooks::before_creation(&mut ctx, &now, &manifests, &wave.steps).await;
        autoscaled::hand_over(&mut ctx, &now, &manifests, &steps, &autoscaled).await;
        let (targets, now, mut rejected) =
            match applying::apply_wave(&mut ctx, now, &manifests, &steps, &mut record).await {
                Applied::Ready {
                    targets,
                    served,
                    rejected,
                } => (targets, served, rejected),
                // Only the ApplySet parent's refusal ends the apply before any member.
                Applied::Rejected(r) | Applied::DryRun(r) => {
                    outcomes.extend(r);
                    let rest = waves[n + 1..].iter().flat_map(|w| &w.steps);
                    let why = "not applied: the ApplySet parent could not record the set";
                    outcomes.extend(rest.map(|s| {
                        outcomes::not_applied(&manifests[s.index], why.to_owned(), ctx.seconds())
                    }));
                    break;
                }
            };
        rejected.extend(refused_hooks);
        // Applied (or refused): only their identity, lines and annotations are read again.
        for s in &wave.steps {
            manifests[s.index].release_applied();
        }
        let last = n + 1 == count;
        // The members that left the manifests are deleted once every wave was applied,
        // never after a rejection.
        let deleting = match &prune {
            Some(p) if last && rejected.is_empty() && !outcomes.iter().any(is_rejection) => {
                Some(p.delete(&mut ctx, &now, &manifests).await)
            }
            Some(_) if last => {
                ctx.event(RunEvent::Warning(
                    "nothing was pruned: some of the manifests were refused by the API server"
                        .to_owned(),
                ));
                None
            }
            _ => None,
        };
        let run = judge(&mut ctx, &now, &manifests, targets, rejected, deleting).await;
        hooks::after_verdict(&mut ctx, &now, &manifests, &steps, &run.outcomes).await;
        served = Some(now);
        if !last {
            stopped = stop_after(&run, n + 1, count, config.fail_fast);
        }
        outcomes.extend(run.outcomes);
    }
    outcomes.extend(skipped);
    if count > 1 {
        // Reported in manifest order, as a deploy in one wave is (the pruned last).
        let order: std::collections::HashMap<ResourceId, usize> = manifests
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id(), i))
            .collect();
        outcomes.sort_by_key(|o| order.get(&o.resource).copied().unwrap_or(usize::MAX));
    }
    let mut run = RunOutcome::new(false, ctx.seconds(), outcomes);
    label(&mut run, &labels);
    run.notices = notices;
    Ok(run)
}

/// Why the waves after wave `number` are not applied, if they are not: a resource in it
/// failed, or (with fail-fast) timed out.
fn stop_after(run: &RunOutcome, number: usize, count: usize, fail_fast: bool) -> Option<String> {
    let culprit = |verdict: Verdict| {
        run.outcomes
            .iter()
            .find(|o| o.verdict == verdict)
            .map_or_else(String::new, |o| {
                format!("{}/{} ", o.resource.kind, o.resource.name)
            })
    };
    match run.result {
        RunResult::Failure => Some(format!(
            "not applied: {}in wave {number} of {count} failed",
            culprit(Verdict::Failed)
        )),
        RunResult::TimedOut if fail_fast => Some(format!(
            "not applied: {}in wave {number} of {count} timed out (--no-fail-fast applies the later waves anyway)",
            culprit(Verdict::TimedOut)
        )),
        _ => None,
    }
}

fn is_rejection(o: &Outcome) -> bool {
    o.reason == Some(crate::vocab::verdict::Reason::ApplyRejected)
}

/// `wave 2 of 3: helm pre-install/pre-upgrade hooks` for each manifest, when there is
/// more than one wave.
fn wave_labels(manifests: &[Manifest], waves: &[waves::Wave]) -> Vec<(ResourceId, String)> {
    if waves.len() < 2 {
        return Vec::new();
    }
    waves
        .iter()
        .enumerate()
        .flat_map(|(n, w)| {
            let label = format!("wave {} of {}: {}", n + 1, waves.len(), w.key);
            w.steps
                .iter()
                .map(move |s| (manifests[s.index].id(), label.clone()))
        })
        .collect()
}

fn label(run: &mut RunOutcome, labels: &[(ResourceId, String)]) {
    if labels.is_empty() {
        return;
    }
    let by_id: std::collections::HashMap<&ResourceId, &String> =
        labels.iter().map(|(id, l)| (id, l)).collect();
    for o in &mut run.outcomes {
        o.wave = by_id.get(&o.resource).map(|l| (*l).clone());
    }
}
