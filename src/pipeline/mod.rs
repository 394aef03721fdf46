//! A whole run: load and validate the manifests, connect, validate against the cluster,
//! apply in phases (or dry-run, or nothing for `watch`), then judge every resource.
//! Reports progress to an [`Observer`]; prints nothing itself.

mod applying;
mod judging;
pub mod lookups;
mod outcomes;
mod planning;
mod pruning;
pub mod restart;
pub mod scopes;
pub mod task;

use crate::cluster::{Connection, Served};
use crate::config::{Config, Mode};
use crate::manifest::{self, Manifest, Problem};
use crate::vocab::events::{Observer, RunEvent};
use crate::vocab::outcome::{Outcome, RunOutcome};
use tokio::time::Instant;

/// Why a run could not start. All of these exit 2: nothing was applied.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Load(#[from] manifest::LoadError),
    #[error("{}", manifest::render_problems(.0))]
    Invalid(Vec<Problem>),
    #[error(transparent)]
    Connect(#[from] crate::cluster::connect::ConnectError),
    /// Discovery, the first request a run makes, failed: `cannot reach the API server at
    /// https://...: connection refused`, or what the server answered.
    #[error("{0}")]
    Discovery(String),
    #[error("--image-preflight require: could not confirm {}", .0.join("; "))]
    Unconfirmed(Vec<String>),
    #[error("failed to set up registry lookups")]
    Registry(#[from] crate::registry::RegistryError),
    #[error(transparent)]
    Restart(#[from] restart::RestartError),
    #[error(transparent)]
    Task(#[from] task::TaskError),
    #[error(transparent)]
    Prune(#[from] crate::prune::PruneRefusal),
}

/// Registry access for a run: the client and the credentials it may use.
pub struct RegistryAccess {
    pub registry: std::sync::Arc<crate::registry::Registry>,
    pub credentials: Option<crate::registry::Credentials>,
}

impl RegistryAccess {
    /// Credentials from `--registry-config` (read by the caller) merged with
    /// dockerconfigjson Secrets found in the manifests.
    pub fn new(
        config_credentials: Option<crate::registry::Credentials>,
        manifests: &[Manifest],
    ) -> Result<Self, RunError> {
        let registry = crate::registry::Registry::new(crate::registry::RegistryOptions::default())?;
        let mut credentials = config_credentials;
        if let Some(found) = lookups::credentials_in(manifests) {
            match &mut credentials {
                Some(c) => c.merge(found),
                None => credentials = Some(found),
            }
        }
        Ok(RegistryAccess {
            registry: std::sync::Arc::new(registry),
            credentials,
        })
    }
}

impl RegistryAccess {
    /// The registry lookups the judging loop makes while it watches (none with `off`).
    fn lookups(&self, conn: &Connection, mode: lookups::Preflight) -> Option<lookups::Lookups> {
        (mode != lookups::Preflight::Off).then(|| {
            lookups::Lookups::new(
                self.registry.clone(),
                conn.client.clone(),
                self.credentials.clone(),
            )
        })
    }
}

/// The image preflight: outcomes that stop the run before anything is applied.
async fn preflight(
    manifests: &[Manifest],
    access: &RegistryAccess,
    mode: lookups::Preflight,
    start: Instant,
    observer: &mut dyn Observer,
) -> Result<Option<RunOutcome>, RunError> {
    if mode == lookups::Preflight::Off {
        return Ok(None);
    }
    let report = lookups::preflight(
        manifests,
        &access.registry,
        access.credentials.as_ref(),
        mode,
    )
    .await;
    observer.event(start.elapsed(), RunEvent::ImagesChecked(report.checked));
    for w in &report.warnings {
        observer.event(start.elapsed(), RunEvent::Warning(w.clone()));
    }
    if !report.unconfirmed.is_empty() {
        return Err(RunError::Unconfirmed(report.unconfirmed));
    }
    if report.failures.is_empty() {
        return Ok(None);
    }
    Ok(Some(RunOutcome::new(
        false,
        start.elapsed().as_secs_f64(),
        report.failures,
    )))
}

/// `check`: local validation plus the image preflight; no cluster.
pub async fn check(
    config: &Config,
    manifests: &[Manifest],
    access: &RegistryAccess,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let start = Instant::now();
    observer.event(
        start.elapsed(),
        RunEvent::Loaded {
            resources: manifests.len(),
        },
    );
    let mode = config.image_preflight;
    let report = lookups::preflight(
        manifests,
        &access.registry,
        access.credentials.as_ref(),
        mode,
    )
    .await;
    if mode != lookups::Preflight::Off {
        observer.event(start.elapsed(), RunEvent::ImagesChecked(report.checked));
    }
    for w in &report.warnings {
        observer.event(start.elapsed(), RunEvent::Warning(w.clone()));
    }
    if !report.unconfirmed.is_empty() {
        return Err(RunError::Unconfirmed(report.unconfirmed));
    }
    let distinct: std::collections::BTreeSet<&str> = manifests
        .iter()
        .flat_map(|m| m.images.iter().map(|i| i.image.as_str()))
        .collect();
    let tally = crate::vocab::outcome::ImageTally {
        images: distinct.len(),
        missing: report.missing,
        unconfirmed: report.doubtful.len(),
        looked_up: mode != lookups::Preflight::Off,
    };
    let outcomes = manifests
        .iter()
        .map(|m| check_outcome(m, &report, tally.looked_up))
        .collect();
    // Not a dry run of the apply: nothing was sent to a cluster, so the summary must not
    // claim server validation; it speaks of images instead.
    Ok(RunOutcome::new(false, start.elapsed().as_secs_f64(), outcomes).with_images(tally))
}

/// One manifest's `check` outcome: failed on a missing image, unfinished (`not_validated`)
/// when its registry would not confirm an image, else valid with its images found.
fn check_outcome(m: &Manifest, report: &lookups::PreflightReport, looked_up: bool) -> Outcome {
    let id = crate::vocab::outcome::ResourceId {
        api_version: m.api_version.clone(),
        kind: m.kind.clone(),
        namespace: m.namespace.clone(),
        name: m.name.clone(),
    };
    if let Some(failed) = report.failures.iter().find(|o| o.resource == id) {
        return failed.clone();
    }
    let mut images: Vec<&str> = m.images.iter().map(|i| i.image.as_str()).collect();
    images.dedup();
    let doubtful: Vec<String> = images
        .iter()
        .filter_map(|i| report.doubtful.get(*i).map(|why| format!("{i} ({why})")))
        .collect();
    let (verdict, reason, message) = if !doubtful.is_empty() {
        (
            crate::vocab::verdict::Verdict::Unfinished,
            Some(crate::vocab::verdict::Reason::NotValidated),
            format!(
                "manifest valid; the registry could not confirm {}: the nodes may still pull it",
                doubtful.join(", ")
            ),
        )
    } else if images.is_empty() {
        (
            crate::vocab::verdict::Verdict::Succeeded,
            None,
            "manifest valid".to_owned(),
        )
    } else if !looked_up {
        (
            crate::vocab::verdict::Verdict::Succeeded,
            None,
            "manifest valid; images not looked up (--image-preflight off)".to_owned(),
        )
    } else {
        (
            crate::vocab::verdict::Verdict::Succeeded,
            None,
            format!("manifest valid; found {}", images.join(", ")),
        )
    };
    let container = m
        .images
        .iter()
        .find(|i| report.doubtful.contains_key(&i.image))
        .map(|i| crate::vocab::outcome::ContainerRef {
            pod: String::new(),
            container: i.container.clone(),
            image: Some(i.image.clone()),
        });
    outcomes::outcome(id, m, verdict, reason, message, container, 0.0, Vec::new())
}

/// Load the manifests named by the config (stdin given as text).
pub fn load(config: &Config, stdin: Option<&str>) -> Result<Vec<Manifest>, RunError> {
    let manifests = manifest::load(&config.files, stdin)?;
    let problems: Vec<Problem> = manifests
        .iter()
        .filter(|_| !config.selector.is_empty())
        .filter_map(|m| {
            let missing: Vec<String> = config
                .selector
                .iter()
                .filter(|(k, v)| {
                    m.object
                        .pointer(&format!("/metadata/labels/{}", manifest::escape_pointer(k)))
                        .and_then(|x| x.as_str())
                        != Some(v.as_str())
                })
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            (!missing.is_empty()).then(|| {
                Problem::new(
                    &m.file,
                    Some(m.line),
                    format!(
                        "{} lacks the --selector labels {}",
                        m.display_name(),
                        missing.join(",")
                    ),
                )
                .with_hint("every resource of a deploy must carry the selector's labels")
            })
        })
        .collect();
    if problems.is_empty() {
        Ok(manifests)
    } else {
        Err(RunError::Invalid(problems))
    }
}

/// Discovery, the run's first request, bounded: a server that never answers ends the run
/// with a sentence saying so instead of holding it past its timeout.
async fn discover(conn: &Connection, timeout: std::time::Duration) -> Result<Served, RunError> {
    let limit = crate::cluster::REQUEST_TIMEOUT.min(timeout);
    match tokio::time::timeout(limit, Served::discover(&conn.client)).await {
        Ok(Ok(kinds)) => Ok(kinds),
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

/// Run against a connected cluster.
pub async fn deploy(
    conn: &Connection,
    config: &Config,
    mut manifests: Vec<Manifest>,
    access: &RegistryAccess,
    observer: &mut dyn Observer,
) -> Result<RunOutcome, RunError> {
    let start = Instant::now();
    let kinds = discover(conn, config.timeout).await?;
    let lookup = |av: &str, kind: &str| kinds.scope(av, kind);
    let problems = manifest::validate_against(&manifests, &conn.default_namespace, lookup);
    if !problems.is_empty() {
        return Err(RunError::Invalid(problems));
    }
    manifest::resolve_namespaces(&mut manifests, &conn.default_namespace, lookup);
    let prune = match (&config.prune, config.mode) {
        (Some(p), Mode::Deploy | Mode::DryRun) => {
            Some(pruning::prepare(conn, &kinds, p, &mut manifests, start, observer).await?)
        }
        _ => None,
    };
    observer.event(
        start.elapsed(),
        RunEvent::Loaded {
            resources: manifests.len(),
        },
    );
    let lookups = access.lookups(conn, config.image_preflight);
    if matches!(config.mode, Mode::Deploy | Mode::DryRun)
        && let Some(mut stopped) =
            preflight(&manifests, access, config.image_preflight, start, observer).await?
    {
        stopped.dry_run = config.mode == Mode::DryRun;
        return Ok(stopped);
    }

    let applied = match config.mode {
        // `restart` and `run` have their own entry points; judged as they stand here.
        Mode::Watch | Mode::Check | Mode::Restart | Mode::Run => {
            applying::not_applied(&manifests, start)
        }
        Mode::DryRun | Mode::Deploy => {
            let dry_run = config.mode == Mode::DryRun;
            match applying::apply_all(
                conn,
                kinds,
                &manifests,
                dry_run,
                config.timeout,
                prune.as_ref(),
                start,
                observer,
            )
            .await
            {
                applying::Applied::Rejected(outcomes) => {
                    let outcome = RunOutcome::new(dry_run, start.elapsed().as_secs_f64(), outcomes);
                    return Ok(outcome);
                }
                applying::Applied::DryRun(mut outcomes) => {
                    if let Some(p) = &prune {
                        outcomes.extend(p.plan(conn, &manifests, start, observer).await);
                    }
                    let outcome = RunOutcome::new(dry_run, start.elapsed().as_secs_f64(), outcomes);
                    return Ok(outcome);
                }
                applying::Applied::Ready {
                    targets,
                    kinds,
                    rejected,
                } => {
                    let Some(p) = prune else {
                        return Ok(judging::judge_all(
                            conn, &kinds, &manifests, targets, rejected, config, lookups, start,
                            observer,
                        )
                        .await);
                    };
                    return Ok(judge_and_prune(
                        conn, &kinds, &manifests, targets, rejected, config, lookups, &p, start,
                        observer,
                    )
                    .await);
                }
            }
        }
    };
    let kinds = discover(conn, config.timeout).await?;
    Ok(judging::judge_all(
        conn,
        &kinds,
        &manifests,
        applied,
        Vec::new(),
        config,
        lookups,
        start,
        observer,
    )
    .await)
}

/// Judging with `--prune`: the members that left the manifests are deleted once every
/// manifest was applied (never after a rejection), then watched until gone while the
/// applied resources are judged. A failure that ends the run (fail fast) stops the wait.
#[allow(clippy::too_many_arguments)]
async fn judge_and_prune(
    conn: &Connection,
    kinds: &Served,
    manifests: &[Manifest],
    targets: Vec<applying::Pending>,
    rejected: Vec<Outcome>,
    config: &Config,
    lookups: Option<lookups::Lookups>,
    prune: &pruning::Pruning,
    start: Instant,
    observer: &mut dyn Observer,
) -> RunOutcome {
    let deleting = if rejected.is_empty() {
        Some(
            prune
                .delete(conn, kinds, manifests, config.timeout, start, observer)
                .await,
        )
    } else {
        observer.event(
            start.elapsed(),
            RunEvent::Warning(format!(
                "nothing was pruned: {} of the manifests were refused by the API server",
                rejected.len()
            )),
        );
        None
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let judging = async {
        let outcome = judging::judge_all(
            conn, kinds, manifests, targets, rejected, config, lookups, start, observer,
        )
        .await;
        if config.fail_fast && outcome.result == crate::vocab::verdict::RunResult::Failure {
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
    let (mut outcome, pruned) = tokio::join!(judging, waiting);
    for o in &pruned {
        observer.event(start.elapsed(), RunEvent::Verdict(Box::new(o.clone())));
    }
    outcome.outcomes.extend(pruned);
    outcome.result =
        crate::vocab::verdict::RunResult::from_verdicts(outcome.outcomes.iter().map(|o| o.verdict));
    outcome.seconds = start.elapsed().as_secs_f64();
    outcome
}
